//! The report: built once from what the run recorded, printed as text or as JSON.

use std::fmt::Write as _;

use serde::Serialize;

use super::args::{Class, LoadtestArgs, Mix, Mode};
use super::deliveries::DeliverySummary;
use super::outcome::{OpenLoopStats, PhaseKind, PhaseOutput, RunOutput};
use super::plan::Plan;
use super::schedule::LATE_AFTER;
use super::stats::{Latency, Series, StatusCounts};

/// The object `switchboard loadtest --json` prints. Field names are stable; figures are
/// numbers (seconds, requests per second, milliseconds, microseconds of CPU), and a
/// figure or ratio that cannot be computed (nothing of that class ran, the server gave
/// no CPU figures) is `null`.
///
/// Counting: `requests` is every request sent, transport errors (no answer: connect,
/// timeout, reset) included; `answered` is those that got an HTTP answer, whatever its
/// status. Every rate (`per_second`) and every ratio to `/health` counts answered
/// requests only, so a server that stops answering shows as slower, never as faster;
/// the `status` objects show the transport errors.
///
/// - `config`: what ran. `api_url`; `mode` (`health_then_mix`, `phases` or `open_loop`);
///   `phases` (the classes of `--phases`, else `null`); `rounds` (`--rounds`, 1 without);
///   `workspaces`; `noisy_workspaces`; `contacts_per_workspace`; `connections` (not used
///   by an open loop, which keeps at most `max_in_flight` in flight); `duration_s` (all
///   phases of all rounds; not used by an open loop given `--requests`);
///   `mix` `{reads, writes, searches, webhook_writes, messages}` as run (webhook writes are folded
///   into writes when the server refused the receiver); `rate_budget_per_minute` (what
///   quiet workspaces paced to, `null` = unpaced); `server_rate_budget_per_minute` (the
///   server's `RateLimit-Limit`, `null` = its limit is off); `drain_limit_s` (the
///   longest wait for webhook deliveries after the last answer); `bootstrap_s` (creating
///   workspaces, endpoints and seeding, not part of the timed run).
/// - `phases`: the phases in the order they ran, each `{phase, seconds, requests,
///   answered, round, per_second, latency, status, server_cpu_s,
///   server_cpu_per_request_us, client_cpu_per_request_us, server_resident_memory_bytes,
///   throughput_vs_health, server_cpu_per_request_vs_health}`. `phase` is `health`, a
///   class name (with `--phases`), `mixed` or `open_loop`. CPU time is user plus system,
///   read from the server's `GET /admin/process` just before and just after the phase
///   (after the drain, for the last phase, so it includes finishing the webhook
///   deliveries), divided by the requests answered in the phase;
///   `client_cpu_per_request_us` is the load tester's own. Both readings move in steps of
///   10 ms, so a phase in which neither moved is not measured (`null`), not free. The
///   two ratios compare with the `health` phase of the same run (of the same round, with
///   `--rounds`; `round` counts from 1).
/// - `rounds` (only with `--rounds` above 1): per class, in the order the phases ran,
///   `{phase, rounds, throughput_vs_health, server_cpu_per_request_vs_health, p99_ms}`,
///   each `{median, min, max}` over the rounds whose phase measured it (a phase with
///   nothing answered has no p99 and is left out; `null` when no round measured it).
/// - `total`, `health_phase`, `mixed_phase`: `{requests, answered, seconds,
///   per_second}`. The health phase is GET /health from every connection (by default the
///   first 20% of the duration); the mixed phase is every other phase together. `total`
///   spans all.
/// - `classes`: `{health, reads, writes, searches, webhook_writes, messages}`, each
///   `{requests, answered, per_second, latency: {p50_ms, p90_ms, p99_ms, max_ms},
///   status}`; a class's rate is over the phases that sent it.
/// - `workspaces`: `{quiet, noisy}`, the same shape, over the API traffic.
/// - `status`: all phases: `{ok_200, created_201, accepted_202, rate_limited_429,
///   other_4xx, server_5xx, transport_errors, other}`. Latencies cover answered requests
///   only.
/// - `ratios`: `reads_vs_health_throughput` (answered reads/s over answered health/s),
///   `writes_vs_health_throughput`, `mixed_vs_health_throughput` (all answered API
///   requests/s over health/s), `messages_vs_health_throughput`, `reads_vs_health_p99`,
///   `writes_vs_health_p99` and `messages_vs_health_p99` (p99 over health's p99).
///   With the default mix, reads get only part of the connections: use `--phases
///   health,reads,writes` to compare each class alone with the bare handler.
/// - `isolation`: `{quiet_429, noisy_429, quiet_p99_ms, noisy_p99_ms, holds}`; `holds` is
///   true when no quiet workspace got a 429.
/// - `open_loop` (`null` unless `--rate`): `{offered_per_second, scheduled, sent,
///   skipped, late, late_after_ms, worst_lag_ms, max_in_flight, peak_in_flight,
///   schedule_s}`: requests skipped because `max_in_flight` were unanswered, and those
///   sent more than `late_after_ms` behind their due time. Noisy workspaces get ten
///   times a quiet one's share of the offered rate.
/// - `webhook_deliveries` (`null` without the receiver): `{received, writes_accepted,
///   delivered, undelivered, duplicates, unmatched, rejected, latency, drain_s}`. Only a
///   POST signed (`X-Service-Signature`) with the secret of the endpoint it came for
///   counts as received; `rejected` are those unsigned or badly signed, counted nowhere
///   else. Each delivery is matched to its write by the tag name in its `data` (which
///   carries the run's marker); `latency` runs from the write's send time to the
///   delivery's arrival; an event id received again counts once, as a duplicate;
///   `undelivered` are accepted writes whose event had not arrived when the run ended,
///   after `drain_s` of waiting.
/// - `webhook_deliveries_received`: every signed POST our receiver got by the end of the
///   run, duplicates included (`null` without webhook writes).
/// - `first_transport_error`: the first connection-level error, if any.
/// - `notes`: what the load tester changed or wants the operator to know.
#[derive(Debug, Serialize)]
pub struct Report {
    pub config: ConfigReport,
    pub phases: Vec<PhaseReport>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub rounds: Vec<RoundSummary>,
    pub total: Throughput,
    pub health_phase: Throughput,
    pub mixed_phase: Throughput,
    pub classes: Classes,
    pub workspaces: Groups,
    pub status: StatusCounts,
    pub ratios: Ratios,
    pub isolation: Isolation,
    pub open_loop: Option<OpenLoopReport>,
    pub webhook_deliveries: Option<DeliveriesReport>,
    pub webhook_deliveries_received: Option<u64>,
    pub first_transport_error: Option<String>,
    pub notes: Vec<String>,
}

#[derive(Debug, Serialize)]
pub struct ConfigReport {
    pub api_url: String,
    pub mode: &'static str,
    pub phases: Option<Vec<&'static str>>,
    pub rounds: u32,
    pub workspaces: u32,
    pub noisy_workspaces: u32,
    pub contacts_per_workspace: u32,
    pub connections: u32,
    pub duration_s: f64,
    pub mix: MixReport,
    pub rate_budget_per_minute: Option<u32>,
    pub server_rate_budget_per_minute: Option<u32>,
    pub drain_limit_s: f64,
    pub bootstrap_s: f64,
}

#[derive(Debug, Serialize)]
pub struct MixReport {
    pub reads: u32,
    pub writes: u32,
    pub searches: u32,
    pub webhook_writes: u32,
    pub messages: u32,
}

impl From<Mix> for MixReport {
    fn from(m: Mix) -> Self {
        Self {
            reads: m.reads,
            writes: m.writes,
            searches: m.searches,
            webhook_writes: m.webhook_writes,
            messages: m.messages,
        }
    }
}

#[derive(Debug, Clone, Copy, Serialize)]
pub struct Throughput {
    /// Sent, transport errors included.
    pub requests: u64,
    /// Got an HTTP answer.
    pub answered: u64,
    pub seconds: f64,
    /// Answered requests per second.
    pub per_second: f64,
}

impl Throughput {
    fn new(requests: u64, answered: u64, seconds: f64) -> Self {
        Self {
            requests,
            answered,
            seconds,
            per_second: per_second(answered, seconds),
        }
    }
}

#[derive(Debug, Clone, Copy, Serialize)]
pub struct ClassReport {
    /// Sent, transport errors included.
    pub requests: u64,
    /// Got an HTTP answer.
    pub answered: u64,
    /// Answered requests per second.
    pub per_second: f64,
    pub latency: Latency,
    pub status: StatusCounts,
}

impl ClassReport {
    fn new(s: &Series, seconds: f64) -> Self {
        Self {
            requests: s.requests(),
            answered: s.answered(),
            per_second: per_second(s.answered(), seconds),
            latency: s.latency(),
            status: s.status,
        }
    }
}

#[derive(Debug, Serialize)]
pub struct Classes {
    pub health: ClassReport,
    pub reads: ClassReport,
    pub writes: ClassReport,
    pub searches: ClassReport,
    pub webhook_writes: ClassReport,
    pub messages: ClassReport,
}

impl Classes {
    fn get(&self, class: Class) -> &ClassReport {
        match class {
            Class::Health => &self.health,
            Class::Reads => &self.reads,
            Class::Writes => &self.writes,
            Class::Searches => &self.searches,
            Class::WebhookWrites => &self.webhook_writes,
            Class::Messages => &self.messages,
        }
    }
}

#[derive(Debug, Serialize)]
pub struct Groups {
    pub quiet: ClassReport,
    pub noisy: ClassReport,
}

#[derive(Debug, Serialize)]
pub struct Ratios {
    pub reads_vs_health_throughput: Option<f64>,
    pub writes_vs_health_throughput: Option<f64>,
    pub messages_vs_health_throughput: Option<f64>,
    pub mixed_vs_health_throughput: Option<f64>,
    pub reads_vs_health_p99: Option<f64>,
    pub writes_vs_health_p99: Option<f64>,
    pub messages_vs_health_p99: Option<f64>,
}

#[derive(Debug, Serialize)]
pub struct Isolation {
    pub quiet_429: u64,
    pub noisy_429: u64,
    pub quiet_p99_ms: f64,
    pub noisy_p99_ms: f64,
    pub holds: bool,
}

/// One phase: what it sent and what each request cost the server.
#[derive(Debug, Clone, Serialize)]
pub struct PhaseReport {
    pub phase: &'static str,
    #[serde(skip)]
    pub label: &'static str,
    pub seconds: f64,
    /// Sent, transport errors included.
    pub requests: u64,
    /// Got an HTTP answer.
    pub answered: u64,
    pub round: u32,
    /// Answered requests per second.
    pub per_second: f64,
    pub latency: Latency,
    pub status: StatusCounts,
    pub server_cpu_s: Option<f64>,
    pub server_cpu_per_request_us: Option<f64>,
    pub client_cpu_per_request_us: Option<f64>,
    pub server_resident_memory_bytes: Option<u64>,
    pub throughput_vs_health: Option<f64>,
    pub server_cpu_per_request_vs_health: Option<f64>,
}

impl PhaseReport {
    fn new(p: &PhaseOutput) -> Self {
        let all = p.recorder.all();
        let answered = all.answered();
        let server_cpu_s = measured(p.consumed.server_cpu_s);
        let per_request_us = |cpu_s: Option<f64>| {
            cpu_s
                .filter(|_| answered > 0)
                .map(|s| s * 1e6 / answered as f64)
        };
        Self {
            phase: p.kind.key(),
            label: p.kind.label(),
            seconds: p.secs,
            requests: all.requests(),
            answered,
            round: 1,
            per_second: per_second(answered, p.secs),
            latency: all.latency(),
            status: all.status,
            server_cpu_s,
            server_cpu_per_request_us: per_request_us(server_cpu_s),
            client_cpu_per_request_us: per_request_us(measured(p.consumed.client_cpu_s)),
            server_resident_memory_bytes: p.consumed.server_resident_memory_bytes,
            throughput_vs_health: None,
            server_cpu_per_request_vs_health: None,
        }
    }

    /// Fills in the ratios to the health phase of the same run.
    fn compare_with(&mut self, health: &PhaseReport) {
        self.throughput_vs_health = ratio(self.per_second, health.per_second);
        self.server_cpu_per_request_vs_health = self
            .server_cpu_per_request_us
            .zip(health.server_cpu_per_request_us)
            .and_then(|(mine, theirs)| ratio(mine, theirs));
    }
}

/// A class's figures over the rounds of `--rounds`.
#[derive(Debug, Clone, Serialize)]
pub struct RoundSummary {
    pub phase: &'static str,
    #[serde(skip)]
    pub label: &'static str,
    pub rounds: usize,
    pub throughput_vs_health: Option<Spread>,
    pub server_cpu_per_request_vs_health: Option<Spread>,
    pub p99_ms: Option<Spread>,
}

/// The median of some measurements, and their extremes.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Spread {
    pub median: f64,
    pub min: f64,
    pub max: f64,
}

impl Spread {
    /// `None` when nothing was measured.
    fn of(values: impl IntoIterator<Item = f64>) -> Option<Self> {
        let mut v: Vec<f64> = values.into_iter().filter(|x| x.is_finite()).collect();
        v.sort_by(f64::total_cmp);
        let n = v.len();
        let median = match n {
            0 => return None,
            _ if n % 2 == 1 => v[n / 2],
            _ => (v[n / 2 - 1] + v[n / 2]) / 2.0,
        };
        Some(Self {
            median,
            min: v[0],
            max: v[n - 1],
        })
    }
}

/// Numbers each phase's round (its class's 1st, 2nd... phase), compares it with the
/// health phase of its round, and sums up every class that ran more than once.
fn by_round(phases: &mut [PhaseReport]) -> Vec<RoundSummary> {
    for i in 0..phases.len() {
        let before = phases[..i].iter().filter(|p| p.phase == phases[i].phase);
        phases[i].round = before.count() as u32 + 1;
    }
    let healths: Vec<PhaseReport> = phases
        .iter()
        .filter(|p| p.phase == PhaseKind::Alone(Class::Health).key())
        .cloned()
        .collect();
    for p in phases.iter_mut() {
        if let Some(health) = healths.iter().find(|h| h.round == p.round) {
            p.compare_with(health);
        }
    }
    if phases.iter().all(|p| p.round == 1) {
        return Vec::new();
    }
    let mut summaries: Vec<RoundSummary> = Vec::new();
    for p in phases.iter().filter(|p| p.round == 1) {
        let of_class: Vec<&PhaseReport> = phases.iter().filter(|q| q.phase == p.phase).collect();
        summaries.push(RoundSummary {
            phase: p.phase,
            label: p.label,
            rounds: of_class.len(),
            throughput_vs_health: Spread::of(
                of_class.iter().filter_map(|q| q.throughput_vs_health),
            ),
            server_cpu_per_request_vs_health: Spread::of(
                of_class
                    .iter()
                    .filter_map(|q| q.server_cpu_per_request_vs_health),
            ),
            // A phase that got no answer has no p99 (its 0 is not a latency).
            p99_ms: Spread::of(
                of_class
                    .iter()
                    .filter(|q| q.answered > 0)
                    .map(|q| q.latency.p99_ms),
            ),
        });
    }
    summaries
}

#[derive(Debug, Clone, Copy, Serialize)]
pub struct OpenLoopReport {
    pub offered_per_second: u32,
    pub scheduled: u64,
    pub sent: u64,
    pub skipped: u64,
    pub late: u64,
    pub late_after_ms: f64,
    pub worst_lag_ms: f64,
    pub max_in_flight: u32,
    pub peak_in_flight: u32,
    pub schedule_s: f64,
}

impl From<OpenLoopStats> for OpenLoopReport {
    fn from(o: OpenLoopStats) -> Self {
        Self {
            offered_per_second: o.rate,
            scheduled: o.scheduled,
            sent: o.sent,
            skipped: o.skipped,
            late: o.late,
            late_after_ms: LATE_AFTER.as_secs_f64() * 1000.0,
            worst_lag_ms: o.worst_lag_ms,
            max_in_flight: o.max_in_flight,
            peak_in_flight: o.peak_in_flight,
            schedule_s: o.schedule_secs,
        }
    }
}

#[derive(Debug, Clone, Copy, Serialize)]
pub struct DeliveriesReport {
    #[serde(flatten)]
    pub summary: DeliverySummary,
    pub drain_s: f64,
}

fn per_second(requests: u64, seconds: f64) -> f64 {
    if seconds > 0.0 {
        requests as f64 / seconds
    } else {
        0.0
    }
}

/// A CPU time consumed, or `None` when it is 0: the readings move in steps of 10 ms, so
/// 0 means the phase was too short to see, not that it cost nothing.
fn measured(cpu_s: Option<f64>) -> Option<f64> {
    cpu_s.filter(|s| *s > 0.0)
}

/// Sub-second spans in milliseconds ("0s" says nothing of a 500 ms run), longer ones in
/// seconds.
fn span(seconds: f64) -> String {
    if seconds < 1.0 {
        format!("{:.0}ms", seconds * 1000.0)
    } else if seconds.fract() == 0.0 {
        format!("{seconds:.0}s")
    } else {
        format!("{seconds:.1}s")
    }
}

/// `a / b`, or `None` when either side measured nothing.
fn ratio(a: f64, b: f64) -> Option<f64> {
    (a > 0.0 && b > 0.0).then(|| a / b)
}

impl Report {
    pub fn build(args: &LoadtestArgs, plan: &Plan, out: &RunOutput, notes: Vec<String>) -> Self {
        let rec = out.recorder();
        let is_health = |p: &PhaseOutput| p.kind == PhaseKind::Alone(Class::Health);
        // A stream's rate is over the phases in which it sent anything.
        let seconds_of = |sent: &dyn Fn(&PhaseOutput) -> u64| -> f64 {
            out.phases
                .iter()
                .filter(|p| sent(p) > 0)
                .map(|p| p.secs)
                .sum()
        };
        let in_phase = |class: Class| {
            let secs = seconds_of(&|p| p.recorder.class(class).requests());
            ClassReport::new(rec.class(class), secs)
        };
        let classes = Classes {
            health: in_phase(Class::Health),
            reads: in_phase(Class::Reads),
            writes: in_phase(Class::Writes),
            searches: in_phase(Class::Searches),
            webhook_writes: in_phase(Class::WebhookWrites),
            messages: in_phase(Class::Messages),
        };
        let workspaces = Groups {
            quiet: ClassReport::new(&rec.quiet, seconds_of(&|p| p.recorder.quiet.requests())),
            noisy: ClassReport::new(&rec.noisy, seconds_of(&|p| p.recorder.noisy.requests())),
        };
        let all = rec.all();
        let status = all.status;
        let health_secs: f64 = out
            .phases
            .iter()
            .filter(|p| is_health(p))
            .map(|p| p.secs)
            .sum();
        let mixed_secs: f64 = out
            .phases
            .iter()
            .filter(|p| !is_health(p))
            .map(|p| p.secs)
            .sum();
        let health_requests = classes.health.requests;
        let mixed_requests = status.total() - health_requests;
        let mixed_answered = all.answered() - classes.health.answered;
        let health = &classes.health;
        let ratios = Ratios {
            reads_vs_health_throughput: ratio(classes.reads.per_second, health.per_second),
            writes_vs_health_throughput: ratio(classes.writes.per_second, health.per_second),
            messages_vs_health_throughput: ratio(classes.messages.per_second, health.per_second),
            mixed_vs_health_throughput: ratio(
                per_second(mixed_answered, mixed_secs),
                health.per_second,
            ),
            reads_vs_health_p99: ratio(classes.reads.latency.p99_ms, health.latency.p99_ms),
            writes_vs_health_p99: ratio(classes.writes.latency.p99_ms, health.latency.p99_ms),
            messages_vs_health_p99: ratio(classes.messages.latency.p99_ms, health.latency.p99_ms),
        };
        let isolation = Isolation {
            quiet_429: workspaces.quiet.status.rate_limited_429,
            noisy_429: workspaces.noisy.status.rate_limited_429,
            quiet_p99_ms: workspaces.quiet.latency.p99_ms,
            noisy_p99_ms: workspaces.noisy.latency.p99_ms,
            holds: workspaces.quiet.status.rate_limited_429 == 0,
        };
        let mut phases: Vec<PhaseReport> = out.phases.iter().map(PhaseReport::new).collect();
        let rounds = by_round(&mut phases);
        let mut all_notes = plan.notes.clone();
        all_notes.extend(notes);
        if status.transport_errors > 0 {
            all_notes.push(format!(
                "{} of {} requests got no answer (transport errors); every req/s and ratio \
                 counts answered requests only",
                status.transport_errors,
                status.total()
            ));
        }
        let unseen: Vec<String> = out
            .phases
            .iter()
            .zip(&phases)
            .filter(|(p, r)| p.consumed.server_cpu_s == Some(0.0) && r.answered > 0)
            .map(|(_, r)| match rounds.is_empty() {
                true => r.label.to_string(),
                false => format!("{} #{}", r.label, r.round),
            })
            .collect();
        if !unseen.is_empty() {
            all_notes.push(format!(
                "the server's CPU time did not move during {} (it is read in 10 ms steps): \
                 too short to measure, so CPU per request is n/a there",
                unseen.join(", ")
            ));
        }
        if let Some(o) = &out.open_loop {
            if o.skipped > 0 {
                all_notes.push(format!(
                    "{} requests were skipped: their time came while {} were unanswered \
                     (--max-in-flight)",
                    o.skipped, o.max_in_flight
                ));
            }
        }
        let mode = args.mode();
        Report {
            config: ConfigReport {
                api_url: args.api_url.clone(),
                mode: match mode {
                    Mode::HealthThenMix => "health_then_mix",
                    Mode::Phases(_) => "phases",
                    Mode::OpenLoop(_) => "open_loop",
                },
                phases: match &mode {
                    Mode::Phases(classes) => Some(classes.iter().map(|c| c.key()).collect()),
                    _ => None,
                },
                rounds: args.rounds.max(1),
                workspaces: args.workspaces,
                noisy_workspaces: args.noisy,
                contacts_per_workspace: args.contacts_per_workspace,
                connections: args.connections,
                duration_s: args.duration.as_secs_f64(),
                mix: plan.mix.into(),
                rate_budget_per_minute: plan.budget,
                server_rate_budget_per_minute: plan.server_budget,
                drain_limit_s: args.drain().as_secs_f64(),
                bootstrap_s: plan.bootstrap_secs,
            },
            phases,
            rounds,
            total: Throughput::new(status.total(), all.answered(), health_secs + mixed_secs),
            health_phase: Throughput::new(health_requests, health.answered, health_secs),
            mixed_phase: Throughput::new(mixed_requests, mixed_answered, mixed_secs),
            classes,
            workspaces,
            status,
            ratios,
            isolation,
            open_loop: out.open_loop.map(OpenLoopReport::from),
            webhook_deliveries: out.deliveries.map(|summary| DeliveriesReport {
                summary,
                drain_s: out.drain_secs,
            }),
            webhook_deliveries_received: out.deliveries.map(|d| d.received),
            first_transport_error: out.first_transport_error.clone(),
            notes: all_notes,
        }
    }

    /// The human-readable report.
    pub fn text(&self) -> String {
        let c = &self.config;
        let mut s = String::new();
        let pacing = match (c.rate_budget_per_minute, c.server_rate_budget_per_minute) {
            (None, None) => "unpaced (server rate limit off)".to_string(),
            (None, Some(n)) => format!("unpaced (server budget {n}/min)"),
            (Some(n), server) => format!(
                "quiet {n}/min, noisy {}/min per workspace (server budget: {})",
                n.saturating_mul(10),
                server.map_or("off".to_string(), |s| format!("{s}/min"))
            ),
        };
        // An open loop has no connections of its own: its bound is on the next line.
        let connections = match self.open_loop {
            Some(_) => String::new(),
            None => format!("{} connections, ", c.connections),
        };
        let _ = writeln!(
            s,
            "switchboard loadtest against {}\n  {} workspaces ({} noisy), {} contacts each, \
             {connections}bootstrap {:.1}s",
            c.api_url, c.workspaces, c.noisy_workspaces, c.contacts_per_workspace, c.bootstrap_s
        );
        let mix = format!(
            "reads {}%, writes {}%, searches {}%, webhook writes {}%, messages {}%",
            c.mix.reads, c.mix.writes, c.mix.searches, c.mix.webhook_writes, c.mix.messages
        );
        let _ = match (&c.phases, &self.open_loop) {
            (_, Some(o)) => writeln!(
                s,
                "  open loop: {} requests offered at {}/s ({:.1}s), at most {} in flight; mix: {mix}",
                o.scheduled, o.offered_per_second, o.schedule_s, o.max_in_flight
            ),
            (Some(phases), None) => {
                let rounds = match c.rounds {
                    1 => String::new(),
                    n => format!(", {n} rounds"),
                };
                writeln!(
                    s,
                    "  phases, each class alone for {}{rounds}: {}; pacing: {pacing}",
                    span(c.duration_s / (phases.len().max(1) as f64 * f64::from(c.rounds.max(1)))),
                    phases.join(", ")
                )
            }
            (None, None) => writeln!(
                s,
                "  {}: health baseline {}, then the mixed run {}; mix: {mix}; pacing: {pacing}",
                span(c.duration_s),
                span(self.health_phase.seconds),
                span(self.mixed_phase.seconds)
            ),
        };
        let _ = writeln!(s);
        let _ = writeln!(
            s,
            "{:<22}{:>10}{:>10}{:>11}{:>10}{:>10}{:>10}{:>10}",
            "", "requests", "answered", "req/s", "p50 ms", "p90 ms", "p99 ms", "max ms"
        );
        let row = |s: &mut String, name: &str, r: &ClassReport| {
            let l = &r.latency;
            let _ = writeln!(
                s,
                "{name:<22}{:>10}{:>10}{:>11.1}{:>10.2}{:>10.2}{:>10.2}{:>10.2}",
                r.requests, r.answered, r.per_second, l.p50_ms, l.p90_ms, l.p99_ms, l.max_ms
            );
        };
        for class in Class::ALL {
            let name = if class == Class::Health {
                "GET /health".to_string()
            } else {
                format!("  {}", class.label())
            };
            if class == Class::Reads {
                let api = match c.mode {
                    "phases" => "other phases",
                    "open_loop" => "open loop",
                    _ => "mixed run",
                };
                let m = &self.mixed_phase;
                let _ = writeln!(
                    s,
                    "{api:<22}{:>10}{:>10}{:>11.1}",
                    m.requests, m.answered, m.per_second
                );
            }
            row(&mut s, &name, self.classes.get(class));
        }
        row(&mut s, "  quiet workspaces", &self.workspaces.quiet);
        row(&mut s, "  noisy workspaces", &self.workspaces.noisy);
        let t = &self.total;
        let _ = writeln!(
            s,
            "{:<22}{:>10}{:>10}{:>11.1}",
            "total (all phases)", t.requests, t.answered, t.per_second
        );
        let _ = writeln!(s);
        let st = &self.status;
        let _ = writeln!(
            s,
            "status: 200 {}, 201 {}, 202 {}, 429 {}, other 4xx {}, 5xx {}, transport errors {}{}",
            st.ok_200,
            st.created_201,
            st.accepted_202,
            st.rate_limited_429,
            st.other_4xx,
            st.server_5xx,
            st.transport_errors,
            if st.other > 0 {
                format!(", other {}", st.other)
            } else {
                String::new()
            }
        );
        let x = |r: Option<f64>| r.map_or("n/a".to_string(), |r| format!("{r:.2}x"));
        let r = &self.ratios;
        let _ = writeln!(
            s,
            "vs GET /health: throughput reads {}, writes {}, messages {}, whole mix {}; p99 reads {}, writes {}, messages {}",
            x(r.reads_vs_health_throughput),
            x(r.writes_vs_health_throughput),
            x(r.messages_vs_health_throughput),
            x(r.mixed_vs_health_throughput),
            x(r.reads_vs_health_p99),
            x(r.writes_vs_health_p99),
            x(r.messages_vs_health_p99)
        );
        let i = &self.isolation;
        let _ = writeln!(
            s,
            "isolation: 429s quiet {} / noisy {}; p99 quiet {:.2} ms / noisy {:.2} ms ({})",
            i.quiet_429,
            i.noisy_429,
            i.quiet_p99_ms,
            i.noisy_p99_ms,
            if i.holds {
                "quiet workspaces were never refused"
            } else {
                "QUIET WORKSPACES GOT 429s"
            }
        );
        self.phases_text(&mut s);
        if let Some(o) = &self.open_loop {
            let _ = writeln!(
                s,
                "open loop: {} scheduled, {} sent, {} skipped (at most {} in flight; peak {}), \
                 {} late (over {:.0} ms behind; worst {:.1} ms)",
                o.scheduled,
                o.sent,
                o.skipped,
                o.max_in_flight,
                o.peak_in_flight,
                o.late,
                o.late_after_ms,
                o.worst_lag_ms
            );
        }
        if let Some(d) = &self.webhook_deliveries {
            let w = &d.summary;
            let l = &w.latency;
            let _ = writeln!(
                s,
                "webhook deliveries: {} of {} accepted writes delivered, {} undelivered after \
                 a {:.1}s drain (limit {:.0}s); {} duplicates, {} unmatched, {} received in all; \
                 rejected: bad signature {}",
                w.delivered,
                w.writes_accepted,
                w.undelivered,
                d.drain_s,
                c.drain_limit_s,
                w.duplicates,
                w.unmatched,
                w.received,
                w.rejected
            );
            let _ = writeln!(
                s,
                "write-to-delivery latency: p50 {:.2} ms, p90 {:.2} ms, p99 {:.2} ms, max {:.2} ms",
                l.p50_ms, l.p90_ms, l.p99_ms, l.max_ms
            );
        }
        if let Some(e) = &self.first_transport_error {
            let _ = writeln!(s, "first transport error: {e}");
        }
        for note in &self.notes {
            let _ = writeln!(s, "note: {note}");
        }
        s
    }

    /// The medians over the rounds, with their extremes.
    fn rounds_text(&self, s: &mut String) {
        let Some(first) = self.rounds.first() else {
            return;
        };
        let shown = |spread: Option<Spread>, unit: &str| {
            spread.map_or("n/a".to_string(), |r| {
                format!("{:.2}{unit} ({:.2}-{:.2})", r.median, r.min, r.max)
            })
        };
        let _ = writeln!(
            s,
            "\n{:<30}{:>22}{:>22}{:>22}",
            format!("over {} rounds", first.rounds),
            "x health req/s",
            "x health CPU/req",
            "p99 ms"
        );
        let _ = writeln!(
            s,
            "{:<30}{:>22}{:>22}{:>22}",
            "", "median (min-max)", "median (min-max)", "median (min-max)"
        );
        for r in &self.rounds {
            let _ = writeln!(
                s,
                "{:<30}{:>22}{:>22}{:>22}",
                r.label,
                shown(r.throughput_vs_health, "x"),
                shown(r.server_cpu_per_request_vs_health, "x"),
                shown(r.p99_ms, "")
            );
        }
    }

    /// The table of phases: rate, latency and the server's CPU per request.
    fn phases_text(&self, s: &mut String) {
        let _ = writeln!(
            s,
            "\n{:<22}{:>9}{:>10}{:>10}{:>11}{:>9}{:>9}{:>13}{:>12}{:>12}",
            "phase",
            "seconds",
            "requests",
            "answered",
            "req/s",
            "p50 ms",
            "p99 ms",
            "server CPU",
            "x health",
            "x health"
        );
        let _ = writeln!(
            s,
            "{:<22}{:>9}{:>10}{:>10}{:>11}{:>9}{:>9}{:>13}{:>12}{:>12}",
            "", "", "", "", "", "", "", "per request", "req/s", "CPU/req"
        );
        let x = |r: Option<f64>| r.map_or("n/a".to_string(), |r| format!("{r:.2}x"));
        for p in &self.phases {
            let cpu = p
                .server_cpu_per_request_us
                .map_or("n/a".to_string(), |us| format!("{us:.1} us"));
            let label = match self.rounds.is_empty() {
                true => p.label.to_string(),
                false => format!("{} #{}", p.label, p.round),
            };
            let _ = writeln!(
                s,
                "{:<22}{:>9.1}{:>10}{:>10}{:>11.1}{:>9.2}{:>9.2}{:>13}{:>12}{:>12}",
                label,
                p.seconds,
                p.requests,
                p.answered,
                p.per_second,
                p.latency.p50_ms,
                p.latency.p99_ms,
                cpu,
                x(p.throughput_vs_health),
                x(p.server_cpu_per_request_vs_health)
            );
        }
        let client: Vec<String> = self
            .phases
            .iter()
            .filter_map(|p| {
                let round = match self.rounds.is_empty() {
                    true => String::new(),
                    false => format!(" #{}", p.round),
                };
                p.client_cpu_per_request_us
                    .map(|us| format!("{}{round} {us:.1} us", p.label))
            })
            .collect();
        if !client.is_empty() {
            let _ = writeln!(
                s,
                "load tester's own CPU per request: {}",
                client.join(", ")
            );
        }
        self.rounds_text(s);
        if let Some(bytes) = self
            .phases
            .last()
            .and_then(|p| p.server_resident_memory_bytes)
        {
            let _ = writeln!(
                s,
                "server resident memory at the end: {:.1} MiB",
                bytes as f64 / (1024.0 * 1024.0)
            );
        }
        let _ = writeln!(s);
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::super::stats::{Outcome, Recorder};
    use super::super::usage::Consumed;
    use super::*;

    #[test]
    fn a_spread_is_the_median_and_the_extremes_of_what_was_measured() {
        let odd = Spread::of([0.3, 0.1, 0.2]).unwrap();
        assert_eq!(
            odd,
            Spread {
                median: 0.2,
                min: 0.1,
                max: 0.3
            }
        );
        assert_eq!(Spread::of([4.0, 1.0, 2.0, 3.0]).unwrap().median, 2.5);
        assert_eq!(Spread::of([f64::NAN, 1.0]).unwrap().median, 1.0);
        assert_eq!(Spread::of([]), None);
    }

    fn alone(class: Class, answered: u64, p99_ms: f64) -> PhaseReport {
        let mut recorder = Recorder::new(1);
        for _ in 0..answered {
            let latency = Duration::from_secs_f64(p99_ms / 1000.0);
            recorder.record(class, None, Outcome::Status(200), latency);
        }
        recorder.record(class, None, Outcome::Transport, Duration::ZERO);
        PhaseReport::new(&PhaseOutput {
            kind: PhaseKind::Alone(class),
            secs: 1.0,
            recorder,
            consumed: Consumed::default(),
        })
    }

    #[test]
    fn a_phase_that_got_no_answer_stays_out_of_the_medians() {
        let mut phases = [
            alone(Class::Health, 10, 1.0),
            alone(Class::Writes, 10, 3.0),
            alone(Class::Health, 10, 1.0),
            alone(Class::Writes, 0, 0.0),
        ];
        assert_eq!((phases[3].requests, phases[3].answered), (1, 0));
        let rounds = by_round(&mut phases);
        let writes = &rounds[1];
        assert_eq!(writes.rounds, 2);
        let p99 = writes.p99_ms.expect("one round measured it");
        assert_eq!((p99.median, p99.min, p99.max), (3.0, 3.0, 3.0));
        let throughput = writes.throughput_vs_health.expect("measured");
        assert_eq!(
            (throughput.min, throughput.max),
            (1.0, 1.0),
            "{throughput:?}"
        );
    }

    #[test]
    fn rates_count_answered_requests_and_no_cpu_movement_is_not_measured() {
        let mut recorder = Recorder::new(1);
        recorder.record(
            Class::Reads,
            None,
            Outcome::Status(200),
            Duration::from_millis(1),
        );
        for _ in 0..3 {
            recorder.record(Class::Reads, None, Outcome::Transport, Duration::ZERO);
        }
        let still = Consumed {
            server_cpu_s: Some(0.0),
            client_cpu_s: Some(0.0),
            server_resident_memory_bytes: None,
        };
        let p = PhaseReport::new(&PhaseOutput {
            kind: PhaseKind::Alone(Class::Reads),
            secs: 2.0,
            recorder,
            consumed: still,
        });
        assert_eq!((p.requests, p.answered, p.per_second), (4, 1, 0.5));
        assert_eq!(p.server_cpu_s, None);
        assert_eq!(p.server_cpu_per_request_us, None);
        assert_eq!(p.client_cpu_per_request_us, None);
    }

    #[test]
    fn spans_under_a_second_are_stated_in_milliseconds() {
        assert_eq!(span(0.5), "500ms");
        assert_eq!(span(0.002), "2ms");
        assert_eq!(span(30.0), "30s");
        assert_eq!(span(7.5), "7.5s");
    }
}
