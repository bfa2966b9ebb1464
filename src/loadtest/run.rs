//! The closed-loop phases, one after another: by default a health baseline then the mixed
//! run; with `--phases`, each named class alone.
//!
//! - GET /health (the bare handler): `--connections` workers send back to back, so its
//!   throughput and latency are measured by the same client, on the same machine, in the
//!   same run as the API traffic they are compared with.
//! - API traffic, unpaced (no budget): `--connections` workers each pick a random
//!   workspace and a class, send, and go again: a closed loop that finds the server's
//!   throughput.
//! - API traffic, paced (a budget): one client per workspace with one request in flight,
//!   ticking at budget/60 per second (quiet) or 10x that (noisy), and a semaphore of
//!   `--connections` permits bounding what is in flight overall. A quiet workspace never
//!   sends faster than its budget refills, so any 429 it gets is the server's fault.
//!
//! Every loop checks a deadline and stops by itself; a request in flight at the deadline
//! finishes (the client's timeout bounds it) and is counted. The server's and the load
//! tester's CPU time are read just before and just after each phase.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::Semaphore;
use tokio::time::{Instant, MissedTickBehavior};

use super::args::{Class, Mix};
use super::deliveries::Deliveries;
use super::outcome::{PhaseKind, PhaseOutput};
use super::progress::Progress;
use super::stats::{seed, Dice, Recorder};
use super::traffic::{Load, Traffic};
use super::usage::{Consumed, UsageProbe};

/// How the closed-loop phases are driven.
pub struct ClosedLoop<'a> {
    pub traffic: &'a Arc<Traffic>,
    pub probe: &'a UsageProbe,
    pub connections: usize,
    /// Per-workspace budget per minute; `None`: unpaced.
    pub budget: Option<u32>,
    /// The mix of a [`PhaseKind::Mixed`] phase.
    pub mix: Mix,
    pub show_progress: bool,
}

/// The default: GET /health for the first 20% of `duration`, the mix for the rest.
pub fn health_then_mix(duration: Duration) -> Vec<(PhaseKind, Duration)> {
    let health = duration / 5;
    vec![
        (PhaseKind::Alone(Class::Health), health),
        (PhaseKind::Mixed, duration.saturating_sub(health)),
    ]
}

/// `--phases`: each class alone, in order, `rounds` times over, every phase for an equal
/// share of `duration`.
pub fn each_alone(
    classes: &[Class],
    duration: Duration,
    rounds: u32,
) -> Vec<(PhaseKind, Duration)> {
    let rounds = rounds.max(1);
    let share = duration / (classes.len().max(1) as u32 * rounds);
    (0..rounds)
        .flat_map(|_| classes.iter().map(move |&c| (PhaseKind::Alone(c), share)))
        .collect()
}

impl ClosedLoop<'_> {
    /// Runs `phases` in order. After the last one's traffic, waits up to `drain` for
    /// owed webhook deliveries (answers how long), so the last CPU reading includes them.
    pub async fn run(
        &self,
        phases: &[(PhaseKind, Duration)],
        deliveries: Option<&Deliveries>,
        drain: Duration,
    ) -> (Vec<PhaseOutput>, f64) {
        let total = phases.iter().map(|(_, d)| *d).sum();
        let names = phases.iter().map(|(k, _)| k.label().to_string()).collect();
        let progress = Progress::start(self.show_progress, total, names, self.traffic.clone());
        let mut out = Vec::with_capacity(phases.len());
        let mut drained = 0.0;
        for (i, &(kind, length)) in phases.iter().enumerate() {
            progress.phase(i);
            let before = self.probe.read().await;
            let started = Instant::now();
            let deadline = started + length;
            let recorder = match (kind, self.budget) {
                // The health route is never rate limited, so never paced.
                (PhaseKind::Alone(Class::Health), _) | (_, None) => {
                    unpaced(self.traffic, self.load(kind), self.connections, deadline).await
                }
                (_, Some(budget)) => {
                    let load = self.load(kind);
                    paced(self.traffic, load, self.connections, budget, deadline).await
                }
            };
            let secs = started.elapsed().as_secs_f64();
            if i + 1 == phases.len() {
                if let Some(d) = deliveries.filter(|_| !drain.is_zero()) {
                    drained = d.drain(drain).await.as_secs_f64();
                }
            }
            let after = self.probe.read().await;
            out.push(PhaseOutput {
                kind,
                secs,
                recorder,
                consumed: Consumed::between(&before, &after),
            });
        }
        progress.finish();
        (out, drained)
    }

    fn load(&self, kind: PhaseKind) -> Load {
        match kind {
            PhaseKind::Alone(class) => Load::Only(class),
            PhaseKind::Mixed | PhaseKind::OpenLoop => Load::Mix(self.mix),
        }
    }
}

/// Merges what the workers recorded. A worker that panicked loses its records, which the
/// counts then show, rather than stopping the report.
async fn gather(tasks: Vec<tokio::task::JoinHandle<Recorder>>) -> Recorder {
    let mut all = Recorder::new(0);
    for t in tasks {
        if let Ok(r) = t.await {
            all.merge(&r);
        }
    }
    all
}

async fn unpaced(
    traffic: &Arc<Traffic>,
    load: Load,
    connections: usize,
    deadline: Instant,
) -> Recorder {
    let tasks = (0..connections)
        .map(|i| {
            let traffic = traffic.clone();
            tokio::spawn(async move {
                let mut rec = Recorder::new(seed(1000 + i));
                while Instant::now() < deadline {
                    let w = rec.dice().index(traffic.workspaces.len());
                    let class = load.pick(rec.dice());
                    let sent = traffic
                        .send(&traffic.workspaces[w], class, rec.dice())
                        .await;
                    rec.record(sent.class, sent.group, sent.outcome, sent.latency);
                }
                rec
            })
        })
        .collect();
    gather(tasks).await
}

async fn paced(
    traffic: &Arc<Traffic>,
    load: Load,
    connections: usize,
    budget: u32,
    deadline: Instant,
) -> Recorder {
    let permits = Arc::new(Semaphore::new(connections));
    let count = traffic.workspaces.len();
    let mut spread = Dice::new(seed(2000));
    let tasks = (0..count)
        .map(|w| {
            let (traffic, permits) = (traffic.clone(), permits.clone());
            let per_minute = if traffic.workspaces[w].noisy {
                budget.saturating_mul(10)
            } else {
                budget
            };
            let period = Duration::from_secs(60) / per_minute.max(1);
            // Start each workspace at a random point of its period, so they do not tick
            // in step.
            let offset = period.mul_f64(spread.below(1000) as f64 / 1000.0);
            tokio::spawn(async move {
                let mut rec = Recorder::new(seed(3000 + w));
                let mut ticks = tokio::time::interval_at(Instant::now() + offset, period);
                // After a slow request, wait a whole period again: never catch up in a
                // burst, so a quiet workspace stays within its budget.
                ticks.set_missed_tick_behavior(MissedTickBehavior::Delay);
                let ws = &traffic.workspaces[w];
                loop {
                    tokio::select! {
                        _ = ticks.tick() => {}
                        _ = tokio::time::sleep_until(deadline) => break,
                    }
                    if Instant::now() >= deadline {
                        break;
                    }
                    let permit = match tokio::time::timeout_at(deadline, permits.acquire()).await {
                        Ok(Ok(p)) => p,
                        _ => break,
                    };
                    let class = load.pick(rec.dice());
                    let sent = traffic.send(ws, class, rec.dice()).await;
                    rec.record(sent.class, sent.group, sent.outcome, sent.latency);
                    drop(permit);
                }
                rec
            })
        })
        .collect();
    gather(tasks).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_gives_health_a_fifth_and_phases_share_the_duration_equally() {
        let d = Duration::from_secs(30);
        assert_eq!(
            health_then_mix(d),
            [
                (PhaseKind::Alone(Class::Health), Duration::from_secs(6)),
                (PhaseKind::Mixed, Duration::from_secs(24))
            ]
        );
        let p = each_alone(&[Class::Health, Class::Reads, Class::Writes], d, 1);
        assert_eq!(p.len(), 3);
        assert!(p.iter().all(|(_, len)| *len == Duration::from_secs(10)));
        assert_eq!(p[1].0, PhaseKind::Alone(Class::Reads));
        let twice = each_alone(&[Class::Health, Class::Writes], d, 2);
        let kinds: Vec<PhaseKind> = twice.iter().map(|(k, _)| *k).collect();
        let (health, writes) = (
            PhaseKind::Alone(Class::Health),
            PhaseKind::Alone(Class::Writes),
        );
        assert_eq!(kinds, [health, writes, health, writes], "rounds alternate");
        assert!(twice
            .iter()
            .all(|(_, len)| *len == Duration::from_millis(7500)));
    }
}
