//! What a run produced, before it is turned into a report: its phases in order (each
//! with its own records and the CPU time consumed during it), the open loop's sending
//! figures, and the webhook deliveries.

use super::args::Class;
use super::deliveries::DeliverySummary;
use super::stats::Recorder;
use super::usage::Consumed;

/// What a phase sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PhaseKind {
    /// One class alone (the health baseline is `Alone(Class::Health)`).
    Alone(Class),
    /// The mix of `--mix`, closed loop.
    Mixed,
    /// The mix of `--mix`, offered at `--rate`.
    OpenLoop,
}

impl PhaseKind {
    /// The name in the JSON report.
    pub fn key(self) -> &'static str {
        match self {
            PhaseKind::Alone(class) => class.key(),
            PhaseKind::Mixed => "mixed",
            PhaseKind::OpenLoop => "open_loop",
        }
    }

    /// The name in the text report and on the progress bar.
    pub fn label(self) -> &'static str {
        match self {
            PhaseKind::Alone(Class::Health) => "GET /health",
            PhaseKind::Alone(class) => class.label(),
            PhaseKind::Mixed => "mixed run",
            PhaseKind::OpenLoop => "open loop",
        }
    }
}

/// One phase as it ran.
#[derive(Debug, Clone)]
pub struct PhaseOutput {
    pub kind: PhaseKind,
    /// From its first request to its last answer.
    pub secs: f64,
    pub recorder: Recorder,
    /// CPU consumed from just before the phase to just after it (after the drain, for
    /// the last phase).
    pub consumed: Consumed,
}

/// The sending side of an open loop.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct OpenLoopStats {
    pub rate: u32,
    /// Requests in the schedule.
    pub scheduled: u64,
    pub sent: u64,
    /// Due while `max_in_flight` requests were unanswered, so not sent.
    pub skipped: u64,
    /// Sent more than `schedule::LATE_AFTER` after their due time.
    pub late: u64,
    /// The furthest behind its due time a request was sent.
    pub worst_lag_ms: f64,
    pub max_in_flight: u32,
    /// The most requests that were unanswered at once.
    pub peak_in_flight: u32,
    /// The schedule's length: scheduled / rate.
    pub schedule_secs: f64,
}

/// Everything the report is built from.
#[derive(Debug, Clone)]
pub struct RunOutput {
    pub phases: Vec<PhaseOutput>,
    pub open_loop: Option<OpenLoopStats>,
    /// The webhook deliveries (when the receiver ran), as they stood at the end.
    pub deliveries: Option<DeliverySummary>,
    /// How long the run waited for deliveries after its last answer.
    pub drain_secs: f64,
    /// The first transport error seen, to say why they happened.
    pub first_transport_error: Option<String>,
}

impl RunOutput {
    /// Every phase's records together.
    pub fn recorder(&self) -> Recorder {
        let mut all = Recorder::new(0);
        for p in &self.phases {
            all.merge(&p.recorder);
        }
        all
    }
}
