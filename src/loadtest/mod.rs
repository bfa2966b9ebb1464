//! `switchboard loadtest`: drives any running server with many workspaces at once and
//! reports throughput, latency, per-workspace isolation, the server's CPU time per
//! request and, for webhook-producing writes, write-to-delivery latency.
//!
//! It never starts a server: it measures what is deployed. The steps, one module each:
//! - [`args`]: the command line, the request mix and the mode;
//! - [`plan`]: bootstrap through the operator API (workspaces), then the public API
//!   (webhook endpoints pointing at [`receiver`], seeded contacts); the endpoints are
//!   deleted again at the end;
//! - [`traffic`]: how each request class is built and sent;
//! - [`run`]: closed-loop phases: a GET /health baseline then the mixed run, or with
//!   `--phases` each class alone; paced per workspace when the server has a budget, as
//!   fast as the connections allow when it has none;
//! - [`open_loop`] with [`schedule`]: `--rate`, requests offered on a fixed timetable;
//! - [`deliveries`]: each webhook delivery matched to the write that caused it;
//! - [`usage`]: the server's CPU time (its `GET /admin/process`) around each phase;
//! - [`outcome`], [`stats`] and [`report`]: what was recorded, merged into one report,
//!   text or JSON; [`progress`] draws the bar meanwhile.

pub mod args;
pub mod deliveries;
pub mod open_loop;
pub mod outcome;
pub mod plan;
pub mod progress;
pub mod receiver;
pub mod report;
pub mod run;
pub mod schedule;
pub mod stats;
pub mod traffic;
pub mod usage;

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

pub use args::LoadtestArgs;
pub use report::Report;

use args::{Class, Mode};
use open_loop::OpenLoopRun;
use outcome::RunOutput;
use run::ClosedLoop;
use schedule::Schedule;
use traffic::Traffic;
use usage::UsageProbe;

/// Why a load test could not run (the report itself never fails).
#[derive(Debug, Clone)]
pub struct LoadtestError(String);

impl LoadtestError {
    pub fn new(message: impl Into<String>) -> Self {
        Self(message.into())
    }
}

impl fmt::Display for LoadtestError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for LoadtestError {}

/// How long one request may take before it counts as a transport error; this also bounds
/// how far past the deadline a run can go.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(10);

/// The shortest phase of `--phases` that measures anything: less, and the server's CPU
/// reading (10 ms steps) and a handful of requests say nothing.
const MIN_PHASE: Duration = Duration::from_millis(200);

/// Bootstraps, runs, and prints the report on stdout (notes and progress on stderr).
pub async fn run(args: LoadtestArgs) -> Result<(), LoadtestError> {
    let report = execute(&args).await?;
    if args.json {
        let json = serde_json::to_string_pretty(&report)
            .map_err(|e| LoadtestError::new(format!("cannot write the report: {e}")))?;
        println!("{json}");
    } else {
        print!("{}", report.text());
    }
    Ok(())
}

/// Everything but printing: the report of one run.
pub async fn execute(args: &LoadtestArgs) -> Result<Report, LoadtestError> {
    check(args)?;
    let progress = !args.json && !args.no_progress;
    let mode = args.mode();
    let in_flight = match &mode {
        Mode::OpenLoop(o) => o.max_in_flight,
        _ => args.connections,
    };
    let client = reqwest::Client::builder()
        .no_proxy()
        .tcp_nodelay(true)
        .pool_max_idle_per_host(in_flight as usize)
        .timeout(REQUEST_TIMEOUT)
        .build()
        .map_err(|e| LoadtestError::new(format!("cannot build the HTTP client: {e}")))?;
    let say = |note: &str| eprintln!("switchboard loadtest: {note}");
    let plan = plan::bootstrap(args, &client, progress, &say).await?;
    let traffic = Arc::new(Traffic::new(&plan, client.clone(), &args.api_url));
    let probe = UsageProbe::new(
        client.clone(),
        &args.operator.admin_url,
        &args.operator.admin_token,
    );
    let deliveries = plan.receiver.as_ref().map(|r| r.deliveries.as_ref());
    let drain = args.drain();
    let (phases, open_loop, drain_secs) = match &mode {
        Mode::OpenLoop(settings) => {
            let schedule = match settings.requests {
                Some(n) => Schedule::for_count(settings.rate, n),
                None => Schedule::for_duration(settings.rate, args.duration),
            };
            if progress {
                say(&format!(
                    "{} workspaces ready in {:.1}s; offering {} requests at {}/s",
                    plan.workspaces.len(),
                    plan.bootstrap_secs,
                    schedule.len(),
                    schedule.rate()
                ));
            }
            let (phase, stats, drained) = OpenLoopRun {
                traffic: &traffic,
                probe: &probe,
                settings: *settings,
                schedule,
                mix: plan.mix,
                deliveries,
                drain,
                show_progress: progress,
            }
            .run()
            .await;
            (vec![phase], Some(stats), drained)
        }
        Mode::HealthThenMix | Mode::Phases(_) => {
            let phases = match &mode {
                Mode::Phases(classes) => run::each_alone(classes, args.duration, args.rounds),
                _ => run::health_then_mix(args.duration),
            };
            if progress {
                say(&format!(
                    "{} workspaces ready in {:.1}s; running for {}",
                    plan.workspaces.len(),
                    plan.bootstrap_secs,
                    humantime::format_duration(args.duration)
                ));
            }
            let closed = ClosedLoop {
                traffic: &traffic,
                probe: &probe,
                connections: args.connections as usize,
                budget: plan.budget,
                mix: plan.mix,
                show_progress: progress,
            };
            let (phases, drained) = closed.run(&phases, deliveries, drain).await;
            (phases, None, drained)
        }
    };
    let out = RunOutput {
        phases,
        open_loop,
        deliveries: deliveries.map(|d| d.summary()),
        drain_secs,
        first_transport_error: traffic.first_error(),
    };
    let mut notes = Vec::new();
    if out.phases.iter().any(|p| p.consumed.server_cpu_s.is_none()) {
        notes.push(probe.note());
    }
    // After the drain and the last CPU reading: the run's endpoints go, their receiver
    // with them.
    let api = args.api_url.trim_end_matches('/');
    if let Some(note) = plan::remove_endpoints(&client, api, &plan.workspaces).await {
        say(&note);
        notes.push(note);
    }
    Ok(Report::build(args, &plan, &out, notes))
}

/// Refuses settings that cannot make a meaningful run, before anything is created.
fn check(args: &LoadtestArgs) -> Result<(), LoadtestError> {
    if args.noisy > args.workspaces {
        return Err(LoadtestError::new(format!(
            "--noisy {} is more than --workspaces {}",
            args.noisy, args.workspaces
        )));
    }
    let mode = args.mode();
    match &mode {
        Mode::HealthThenMix if args.duration < Duration::from_millis(500) => {
            return Err(LoadtestError::new(
                "--duration must be at least 500ms (the first 20% is the health baseline)",
            ));
        }
        Mode::Phases(classes) => {
            let phases = classes.len() as u32 * args.rounds.max(1);
            let each = args.duration / phases.max(1);
            if each < MIN_PHASE {
                return Err(LoadtestError::new(format!(
                    "--duration {} gives each of the {phases} phases ({} classes x {} \
                     rounds) {}; each needs at least {}: give --duration {} or more, or \
                     fewer --rounds",
                    humantime::format_duration(args.duration),
                    classes.len(),
                    args.rounds.max(1),
                    humantime::format_duration(Duration::from_millis(each.as_millis() as u64)),
                    humantime::format_duration(MIN_PHASE),
                    humantime::format_duration(MIN_PHASE * phases)
                )));
            }
        }
        Mode::OpenLoop(o) if o.requests.is_none() && args.duration.is_zero() => {
            return Err(LoadtestError::new(
                "an open loop needs --requests or a --duration above zero",
            ));
        }
        _ => {}
    }
    if args.contacts_per_workspace == 0 && args.classes().contains(&Class::Reads) {
        return Err(LoadtestError::new(
            "reads need seeded contacts: give --contacts-per-workspace 1 or more, or leave \
             reads out",
        ));
    }
    for (flag, url) in [
        ("--api-url", &args.api_url),
        ("--admin-url", &args.operator.admin_url),
    ] {
        if !(url.starts_with("http://") || url.starts_with("https://")) {
            return Err(LoadtestError::new(format!(
                "{flag} must start with http:// or https://, not `{url}`"
            )));
        }
    }
    Ok(())
}
