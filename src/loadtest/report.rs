//! The report: built once from what the run recorded, printed as text or as JSON.

use std::fmt::Write as _;

use serde::Serialize;

use super::args::{Class, LoadtestArgs, Mix};
use super::plan::Plan;
use super::run::RunOutput;
use super::stats::{Latency, Series, StatusCounts};

/// The object `switchboard loadtest --json` prints. Field names are stable; figures are
/// numbers (seconds, requests per second, milliseconds), and a ratio that cannot be
/// computed (nothing of that class ran) is `null`.
///
/// - `config`: what ran. `api_url`; `workspaces`; `noisy_workspaces`;
///   `contacts_per_workspace`; `connections`; `duration_s` (both phases);
///   `mix` `{reads, writes, searches, webhook_writes, messages}` as run (webhook writes are folded
///   into writes when the server refused the receiver); `rate_budget_per_minute` (what
///   quiet workspaces paced to, `null` = unpaced); `server_rate_budget_per_minute` (the
///   server's `RateLimit-Limit`, `null` = its limit is off); `bootstrap_s` (creating
///   workspaces, endpoints and seeding, not part of the timed run).
/// - `total`, `health_phase`, `mixed_phase`: `{requests, seconds, per_second}`. The health
///   phase is GET /health from every connection for the first 20% of the duration; the
///   mixed phase is the API traffic for the rest. `total` spans both.
/// - `classes`: `{health, reads, writes, searches, webhook_writes, messages}`, each
///   `{requests, per_second, latency: {p50_ms, p90_ms, p99_ms, max_ms}, status}`.
/// - `workspaces`: `{quiet, noisy}`, the same shape, over the mixed phase.
/// - `status`: both phases: `{ok_200, created_201, accepted_202, rate_limited_429,
///   other_4xx, server_5xx, transport_errors, other}`. Latencies cover answered requests
///   only.
/// - `ratios`: `reads_vs_health_throughput` (reads/s over health/s),
///   `writes_vs_health_throughput`, `mixed_vs_health_throughput` (all API requests/s over
///   health/s), `messages_vs_health_throughput`, `reads_vs_health_p99`,
///   `writes_vs_health_p99` and `messages_vs_health_p99` (p99 over health's p99).
///   With the default mix, reads get only part of the connections: use `--mix reads=100`
///   or `--mix writes=100` to compare one class with the bare handler.
/// - `isolation`: `{quiet_429, noisy_429, quiet_p99_ms, noisy_p99_ms, holds}`; `holds` is
///   true when no quiet workspace got a 429.
/// - `webhook_deliveries_received`: deliveries our receiver got by the end of the run
///   (`null` without webhook writes).
/// - `first_transport_error`: the first connection-level error, if any.
/// - `notes`: what the load tester changed or wants the operator to know.
#[derive(Debug, Serialize)]
pub struct Report {
    pub config: ConfigReport,
    pub total: Throughput,
    pub health_phase: Throughput,
    pub mixed_phase: Throughput,
    pub classes: Classes,
    pub workspaces: Groups,
    pub status: StatusCounts,
    pub ratios: Ratios,
    pub isolation: Isolation,
    pub webhook_deliveries_received: Option<u64>,
    pub first_transport_error: Option<String>,
    pub notes: Vec<String>,
}

#[derive(Debug, Serialize)]
pub struct ConfigReport {
    pub api_url: String,
    pub workspaces: u32,
    pub noisy_workspaces: u32,
    pub contacts_per_workspace: u32,
    pub connections: u32,
    pub duration_s: f64,
    pub mix: MixReport,
    pub rate_budget_per_minute: Option<u32>,
    pub server_rate_budget_per_minute: Option<u32>,
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
    pub requests: u64,
    pub seconds: f64,
    pub per_second: f64,
}

impl Throughput {
    fn new(requests: u64, seconds: f64) -> Self {
        Self {
            requests,
            seconds,
            per_second: per_second(requests, seconds),
        }
    }
}

#[derive(Debug, Clone, Copy, Serialize)]
pub struct ClassReport {
    pub requests: u64,
    pub per_second: f64,
    pub latency: Latency,
    pub status: StatusCounts,
}

impl ClassReport {
    fn new(s: &Series, seconds: f64) -> Self {
        Self {
            requests: s.requests(),
            per_second: per_second(s.requests(), seconds),
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

fn per_second(requests: u64, seconds: f64) -> f64 {
    if seconds > 0.0 {
        requests as f64 / seconds
    } else {
        0.0
    }
}

/// `a / b`, or `None` when either side measured nothing.
fn ratio(a: f64, b: f64) -> Option<f64> {
    (a > 0.0 && b > 0.0).then(|| a / b)
}

impl Report {
    pub fn build(args: &LoadtestArgs, plan: &Plan, out: &RunOutput) -> Self {
        let rec = &out.recorder;
        let in_phase = |class: Class| {
            let secs = if class == Class::Health {
                out.health_secs
            } else {
                out.mixed_secs
            };
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
            quiet: ClassReport::new(&rec.quiet, out.mixed_secs),
            noisy: ClassReport::new(&rec.noisy, out.mixed_secs),
        };
        let mut status = StatusCounts::default();
        for class in Class::ALL {
            status.merge(&rec.class(class).status);
        }
        let health_requests = classes.health.requests;
        let mixed_requests = status.total() - health_requests;
        let health = &classes.health;
        let ratios = Ratios {
            reads_vs_health_throughput: ratio(classes.reads.per_second, health.per_second),
            writes_vs_health_throughput: ratio(classes.writes.per_second, health.per_second),
            messages_vs_health_throughput: ratio(classes.messages.per_second, health.per_second),
            mixed_vs_health_throughput: ratio(
                per_second(mixed_requests, out.mixed_secs),
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
        let mut notes = plan.notes.clone();
        if status.transport_errors > 0 {
            notes.push(format!(
                "{} requests got no answer (transport errors)",
                status.transport_errors
            ));
        }
        Report {
            config: ConfigReport {
                api_url: args.api_url.clone(),
                workspaces: args.workspaces,
                noisy_workspaces: args.noisy,
                contacts_per_workspace: args.contacts_per_workspace,
                connections: args.connections,
                duration_s: args.duration.as_secs_f64(),
                mix: plan.mix.into(),
                rate_budget_per_minute: plan.budget,
                server_rate_budget_per_minute: plan.server_budget,
                bootstrap_s: plan.bootstrap_secs,
            },
            total: Throughput::new(status.total(), out.health_secs + out.mixed_secs),
            health_phase: Throughput::new(health_requests, out.health_secs),
            mixed_phase: Throughput::new(mixed_requests, out.mixed_secs),
            classes,
            workspaces,
            status,
            ratios,
            isolation,
            webhook_deliveries_received: plan.receiver.as_ref().map(|r| r.received()),
            first_transport_error: out.first_transport_error.clone(),
            notes,
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
        let _ = writeln!(
            s,
            "switchboard loadtest against {}\n  {} workspaces ({} noisy), {} contacts each, \
             {} connections, {:.0}s (health {:.1}s + mixed {:.1}s), bootstrap {:.1}s",
            c.api_url,
            c.workspaces,
            c.noisy_workspaces,
            c.contacts_per_workspace,
            c.connections,
            c.duration_s,
            self.health_phase.seconds,
            self.mixed_phase.seconds,
            c.bootstrap_s
        );
        let _ = writeln!(
            s,
            "  mix: reads {}%, writes {}%, searches {}%, webhook writes {}%, messages {}%; pacing: {pacing}",
            c.mix.reads, c.mix.writes, c.mix.searches, c.mix.webhook_writes, c.mix.messages
        );
        let _ = writeln!(s);
        let _ = writeln!(
            s,
            "{:<22}{:>10}{:>11}{:>10}{:>10}{:>10}{:>10}",
            "", "requests", "req/s", "p50 ms", "p90 ms", "p99 ms", "max ms"
        );
        let row = |s: &mut String, name: &str, r: &ClassReport| {
            let l = &r.latency;
            let _ = writeln!(
                s,
                "{name:<22}{:>10}{:>11.1}{:>10.2}{:>10.2}{:>10.2}{:>10.2}",
                r.requests, r.per_second, l.p50_ms, l.p90_ms, l.p99_ms, l.max_ms
            );
        };
        for class in Class::ALL {
            let name = if class == Class::Health {
                "GET /health".to_string()
            } else {
                format!("  {}", class.label())
            };
            if class == Class::Reads {
                let _ = writeln!(
                    s,
                    "{:<22}{:>10}{:>11.1}",
                    "mixed run", self.mixed_phase.requests, self.mixed_phase.per_second
                );
            }
            row(&mut s, &name, self.classes.get(class));
        }
        row(&mut s, "  quiet workspaces", &self.workspaces.quiet);
        row(&mut s, "  noisy workspaces", &self.workspaces.noisy);
        let _ = writeln!(
            s,
            "{:<22}{:>10}{:>11.1}",
            "total (both phases)", self.total.requests, self.total.per_second
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
        if let Some(n) = self.webhook_deliveries_received {
            let _ = writeln!(s, "webhook deliveries received during the run: {n}");
        }
        if let Some(e) = &self.first_transport_error {
            let _ = writeln!(s, "first transport error: {e}");
        }
        for note in &self.notes {
            let _ = writeln!(s, "note: {note}");
        }
        s
    }
}
