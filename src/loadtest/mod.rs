//! `switchboard loadtest`: drives any running server with many workspaces at once and
//! reports throughput, latency and per-workspace isolation.
//!
//! It never starts a server: it measures what is deployed. The steps, one module each:
//! - [`args`]: the command line and the request mix;
//! - [`plan`]: bootstrap through the operator API (workspaces), then the public API
//!   (webhook endpoints pointing at [`receiver`], seeded contacts);
//! - [`run`]: a GET /health baseline, then the mixed run, paced per workspace when the
//!   server has a budget, as fast as the connections allow when it has none;
//! - [`stats`] and [`report`]: per-worker records merged into one report, text or JSON.

pub mod args;
pub mod plan;
pub mod receiver;
pub mod report;
pub mod run;
pub mod stats;

use std::fmt;
use std::time::Duration;

pub use args::LoadtestArgs;
pub use report::Report;

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
    let client = reqwest::Client::builder()
        .no_proxy()
        .tcp_nodelay(true)
        .pool_max_idle_per_host(args.connections as usize)
        .timeout(REQUEST_TIMEOUT)
        .build()
        .map_err(|e| LoadtestError::new(format!("cannot build the HTTP client: {e}")))?;
    let say = |note: &str| eprintln!("switchboard loadtest: {note}");
    let plan = plan::bootstrap(args, &client, progress, &say).await?;
    if progress {
        eprintln!(
            "switchboard loadtest: {} workspaces ready in {:.1}s; running for {}",
            plan.workspaces.len(),
            plan.bootstrap_secs,
            humantime::format_duration(args.duration)
        );
    }
    let out = run::run(
        &plan,
        client,
        &args.api_url,
        args.connections as usize,
        args.duration,
        progress,
    )
    .await;
    Ok(Report::build(args, &plan, &out))
}

/// Refuses settings that cannot make a meaningful run, before anything is created.
fn check(args: &LoadtestArgs) -> Result<(), LoadtestError> {
    if args.noisy > args.workspaces {
        return Err(LoadtestError::new(format!(
            "--noisy {} is more than --workspaces {}",
            args.noisy, args.workspaces
        )));
    }
    if args.duration < Duration::from_millis(500) {
        return Err(LoadtestError::new(
            "--duration must be at least 500ms (the first 20% is the health baseline)",
        ));
    }
    if args.contacts_per_workspace == 0 && args.mix.reads > 0 {
        return Err(LoadtestError::new(
            "reads need seeded contacts: give --contacts-per-workspace 1 or more, or a \
             --mix without reads",
        ));
    }
    for (flag, url) in [
        ("--api-url", &args.api_url),
        ("--admin-url", &args.admin_url),
    ] {
        if !(url.starts_with("http://") || url.starts_with("https://")) {
            return Err(LoadtestError::new(format!(
                "{flag} must start with http:// or https://, not `{url}`"
            )));
        }
    }
    Ok(())
}
