//! The open loop (`--rate`): one dispatcher walks the [`Schedule`] and starts each
//! request at its due time in a task of its own, whether or not earlier requests were
//! answered, so a slow server meets the same offered load instead of slowing the load
//! tester down. Workspaces take turns ([`Turns`]: a noisy one ten times as many as a
//! quiet one); classes come from `--mix`.
//!
//! At most `--max-in-flight` requests are unanswered at once: a request whose time
//! comes while that many are out is skipped and counted, so the load tester never runs
//! away from a server that stalls. A request sent more than [`LATE_AFTER`] after its due
//! time (the load tester fell behind, not the server) is counted as late, and sent.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::Semaphore;
use tokio::task::JoinSet;
use tokio::time::Instant;

use super::args::{Mix, OpenLoop};
use super::deliveries::Deliveries;
use super::outcome::{OpenLoopStats, PhaseKind, PhaseOutput};
use super::progress::Progress;

use super::schedule::{Schedule, Turns, LATE_AFTER};
use super::stats::{seed, Dice, Recorder};
use super::traffic::{Load, Sent, Traffic};
use super::usage::{Consumed, UsageProbe};

/// An open-loop run and what it needs.
pub struct OpenLoopRun<'a> {
    pub traffic: &'a Arc<Traffic>,
    pub probe: &'a UsageProbe,
    pub settings: OpenLoop,
    pub schedule: Schedule,
    pub mix: Mix,
    /// The webhook ledger to drain, when the receiver runs.
    pub deliveries: Option<&'a Deliveries>,
    /// The longest wait for owed deliveries after the last answer.
    pub drain: Duration,
    pub show_progress: bool,
}

impl OpenLoopRun<'_> {
    /// Runs the schedule, waits for every answer, then up to `drain` for owed
    /// deliveries. Answers the phase, the sending figures, and how long the drain took.
    pub async fn run(&self) -> (PhaseOutput, OpenLoopStats, f64) {
        let Self {
            traffic,
            probe,
            settings,
            schedule,
            mix,
            deliveries,
            drain,
            show_progress,
        } = *self;
        let names = vec![PhaseKind::OpenLoop.label().to_string()];
        let progress = Progress::start(show_progress, schedule.span(), names, traffic.clone());
        let before = probe.read().await;

        let permits = Arc::new(Semaphore::new(settings.max_in_flight as usize));
        let mut stats = OpenLoopStats {
            rate: schedule.rate(),
            scheduled: schedule.len(),
            max_in_flight: settings.max_in_flight,
            schedule_secs: schedule.span().as_secs_f64(),
            ..OpenLoopStats::default()
        };
        let mut recorder = Recorder::new(seed(4000));
        let mut tasks: JoinSet<Sent> = JoinSet::new();
        let load = Load::Mix(mix);
        let noisy = traffic.workspaces.iter().filter(|w| w.noisy).count();
        let turns = Turns::new(traffic.workspaces.len(), noisy);
        let mut worst_lag = Duration::ZERO;
        let started = Instant::now();
        let mut next = 0u64;
        while next < schedule.len() {
            tokio::time::sleep_until(started + schedule.due_at(next)).await;
            let elapsed = started.elapsed();
            let due = schedule.due_by(elapsed);
            while next < due {
                let lag = elapsed.saturating_sub(schedule.due_at(next));
                worst_lag = worst_lag.max(lag);
                if lag > LATE_AFTER {
                    stats.late += 1;
                }
                match permits.clone().try_acquire_owned() {
                    Ok(permit) => {
                        stats.sent += 1;
                        let out = settings.max_in_flight as usize - permits.available_permits();
                        stats.peak_in_flight = stats.peak_in_flight.max(out as u32);
                        let class = load.pick(recorder.dice());
                        let traffic = traffic.clone();
                        let w = turns.workspace(next);
                        let mut dice = Dice::new(recorder.dice().next_u64());
                        tasks.spawn(async move {
                            let sent = traffic.send(&traffic.workspaces[w], class, &mut dice).await;
                            drop(permit);
                            sent
                        });
                    }
                    Err(_) => stats.skipped += 1,
                }
                next += 1;
            }
            // Record what has finished, so the set holds only what is in flight.
            while let Some(done) = tasks.try_join_next() {
                record(&mut recorder, done);
            }
        }
        while let Some(done) = tasks.join_next().await {
            record(&mut recorder, done);
        }
        let secs = started.elapsed().as_secs_f64();
        progress.finish();
        stats.worst_lag_ms = worst_lag.as_secs_f64() * 1000.0;

        let drained = match deliveries {
            Some(d) if !drain.is_zero() => {
                if show_progress && d.undelivered() > 0 {
                    eprintln!(
                        "switchboard loadtest: waiting up to {} for {} webhook deliveries",
                        humantime::format_duration(drain),
                        d.undelivered()
                    );
                }
                d.drain(drain).await.as_secs_f64()
            }
            _ => 0.0,
        };
        let after = probe.read().await;
        let phase = PhaseOutput {
            kind: PhaseKind::OpenLoop,
            secs,
            recorder,
            consumed: Consumed::between(&before, &after),
        };
        (phase, stats, drained)
    }
}

/// A request task that panicked loses its record, which the counts then show.
fn record(recorder: &mut Recorder, done: Result<Sent, tokio::task::JoinError>) {
    if let Ok(s) = done {
        recorder.record(s.class, s.group, s.outcome, s.latency);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn turns_of(turns: Turns, requests: u64, workspaces: usize) -> Vec<u64> {
        let mut got = vec![0; workspaces];
        for i in 0..requests {
            got[turns.workspace(i)] += 1;
        }
        got
    }

    #[test]
    fn a_noisy_workspace_gets_ten_turns_for_a_quiet_ones_one() {
        assert_eq!(turns_of(Turns::new(2, 1), 110, 2), [100, 10]);
        assert_eq!(turns_of(Turns::new(4, 2), 220, 4), [100, 100, 10, 10]);
        assert_eq!(turns_of(Turns::new(3, 0), 9, 3), [3, 3, 3], "round robin");
        assert_eq!(turns_of(Turns::new(1, 1), 5, 1), [5]);
        assert_eq!(Turns::new(2, 1).quiet_share(110), 10.0);
    }
}
