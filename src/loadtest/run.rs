//! The timed part: a health baseline, then the mixed run.
//!
//! - Health baseline: `--connections` workers send GET /health back to back, so the bare
//!   handler's throughput and latency are measured by the same client, on the same
//!   machine, in the same run as the API traffic they are compared with.
//! - Mixed run, unpaced (no budget): `--connections` workers each pick a random workspace
//!   and a class from the mix, send, and go again: a closed loop that finds the server's
//!   throughput.
//! - Mixed run, paced (a budget): one client per workspace with one request in flight,
//!   ticking at budget/60 per second (quiet) or 10x that (noisy), and a semaphore of
//!   `--connections` permits bounding what is in flight overall. A quiet workspace never
//!   sends faster than its budget refills, so any 429 it gets is the server's fault.
//!
//! Every loop checks a deadline and stops by itself; a request in flight at the deadline
//! finishes (the client's timeout bounds it) and is counted.

use std::sync::atomic::{AtomicU64, AtomicU8, Ordering};
use std::sync::Arc;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};
use reqwest::{Client, RequestBuilder};
use serde_json::json;
use tokio::sync::Semaphore;
use tokio::time::{Instant, MissedTickBehavior};

use super::args::{Class, Mix};
use super::plan::{Plan, Workspace, FIRST_NAMES};
use super::stats::{Dice, Group, Outcome, Recorder};

/// Measured phase lengths and everything recorded.
pub struct RunOutput {
    pub recorder: Recorder,
    pub health_secs: f64,
    pub mixed_secs: f64,
    /// The first transport error seen, to say why they happened.
    pub first_transport_error: Option<String>,
}

/// What every worker shares.
struct Shared {
    client: Client,
    api: String,
    workspaces: Vec<Workspace>,
    mix: Mix,
    seeded_names: usize,
    /// Requests answered or failed so far (the progress bar shows it).
    requests: AtomicU64,
    /// Makes every written email and tag name unique.
    sequence: AtomicU64,
    first_error: std::sync::Mutex<Option<String>>,
}

impl Shared {
    /// Sends and reads the whole body (latency is time to the last byte).
    async fn send(&self, req: RequestBuilder) -> Outcome {
        let outcome = match req.send().await {
            Ok(r) => {
                let status = r.status().as_u16();
                match r.bytes().await {
                    Ok(_) => Outcome::Status(status),
                    Err(e) => self.transport(e),
                }
            }
            Err(e) => self.transport(e),
        };
        self.requests.fetch_add(1, Ordering::Relaxed);
        outcome
    }

    fn transport(&self, e: reqwest::Error) -> Outcome {
        if let Ok(mut first) = self.first_error.lock() {
            if first.is_none() {
                *first = Some(e.to_string());
            }
        }
        Outcome::Transport
    }

    /// The request of `class` against workspace `w`.
    fn request(&self, w: &Workspace, class: Class, dice: &mut Dice) -> RequestBuilder {
        let api = &self.api;
        let req = match class {
            Class::Health => return self.client.get(format!("{api}/health")),
            Class::Reads => {
                let id = w.contacts.get(dice.index(w.contacts.len())).copied();
                // Without seeded contacts a read asks for an id that does not exist (404).
                let id = id.unwrap_or(u64::MAX >> 1);
                self.client.get(format!("{api}/api/v1/contacts/{id}"))
            }
            Class::Writes => {
                let n = self.sequence.fetch_add(1, Ordering::Relaxed);
                self.client
                    .post(format!("{api}/api/v1/contacts"))
                    .json(&json!({
                        "first_name": FIRST_NAMES[(n as usize) % FIRST_NAMES.len()],
                        "last_name": "Writer",
                        "email": format!("w{n}@loadtest.example"),
                    }))
            }
            Class::Searches => {
                let name = FIRST_NAMES[dice.index(self.seeded_names)];
                self.client
                    .get(format!("{api}/api/v1/contacts"))
                    .query(&[("q", name)])
            }
            Class::WebhookWrites => {
                let n = self.sequence.fetch_add(1, Ordering::Relaxed);
                self.client
                    .post(format!("{api}/api/v1/tags"))
                    .json(&json!({ "name": format!("load {n}") }))
            }
            Class::Messages => {
                let n = self.sequence.fetch_add(1, Ordering::Relaxed);
                // A pool of customers, so that messages land in existing conversations too.
                let customer = dice.below(CUSTOMERS_PER_WORKSPACE);
                self.client
                    .post(format!("{api}/api/v1/messages"))
                    .json(&json!({
                        "contact": {"phone": format!("+1555{customer:07}"), "name": "Load Customer"},
                        "text": format!("Hello, is order {n} on its way?"),
                    }))
            }
        };
        req.bearer_auth(&w.key)
    }

    /// One request of the mix against workspace `w`, recorded.
    async fn mixed_request(&self, w: &Workspace, rec: &mut Recorder) {
        let roll = rec.dice().below(u64::from(self.mix.total())) as u32;
        let class = self.mix.pick(roll);
        let req = self.request(w, class, rec.dice());
        let group = if w.noisy { Group::Noisy } else { Group::Quiet };
        let t = Instant::now();
        let outcome = self.send(req).await;
        rec.record(class, Some(group), outcome, t.elapsed());
    }
}

/// Customers per workspace that the messages class writes as.
const CUSTOMERS_PER_WORKSPACE: u64 = 200;

/// The phases' progress bar: elapsed against the whole duration, and requests so far.
struct Progress {
    bar: ProgressBar,
    phase: Arc<AtomicU8>,
    ticker: tokio::task::JoinHandle<()>,
}

impl Progress {
    fn start(show: bool, total: Duration, shared: Arc<Shared>) -> Self {
        let phase = Arc::new(AtomicU8::new(0));
        let bar = if show {
            let bar = ProgressBar::new(total.as_millis() as u64);
            if let Ok(style) = ProgressStyle::with_template("{spinner} [{bar:40}] {msg}") {
                bar.set_style(style.progress_chars("=> "));
            }
            bar
        } else {
            ProgressBar::hidden()
        };
        let ticker = {
            let (bar, phase) = (bar.clone(), phase.clone());
            tokio::spawn(async move {
                let start = Instant::now();
                let mut every = tokio::time::interval(Duration::from_millis(100));
                loop {
                    every.tick().await;
                    let elapsed = start.elapsed().min(total);
                    let name = if phase.load(Ordering::Relaxed) == 0 {
                        "health baseline"
                    } else {
                        "mixed run"
                    };
                    bar.set_position(elapsed.as_millis() as u64);
                    bar.set_message(format!(
                        "{:>5.1}s / {:.0}s  {name}  {} requests",
                        elapsed.as_secs_f64(),
                        total.as_secs_f64(),
                        shared.requests.load(Ordering::Relaxed)
                    ));
                }
            })
        };
        Self { bar, phase, ticker }
    }

    fn mixed(&self) {
        self.phase.store(1, Ordering::Relaxed);
    }

    fn finish(self) {
        self.ticker.abort();
        self.bar.finish_and_clear();
    }
}

/// Runs both phases; `duration` is split 20% health, 80% mixed.
pub async fn run(
    plan: &Plan,
    client: Client,
    api: &str,
    connections: usize,
    duration: Duration,
    show_progress: bool,
) -> RunOutput {
    let shared = Arc::new(Shared {
        client,
        api: api.trim_end_matches('/').to_string(),
        workspaces: plan.workspaces.clone(),
        mix: plan.mix,
        seeded_names: plan.seeded_names,
        requests: AtomicU64::new(0),
        sequence: AtomicU64::new(0),
        first_error: std::sync::Mutex::new(None),
    });
    let health_len = duration / 5;
    let mixed_len = duration.saturating_sub(health_len);
    let progress = Progress::start(show_progress, duration, shared.clone());

    let started = Instant::now();
    let mut recorder = health_phase(&shared, connections, started + health_len).await;
    let health_secs = started.elapsed().as_secs_f64();

    progress.mixed();
    let started = Instant::now();
    let deadline = started + mixed_len;
    let mixed = match plan.budget {
        None => unpaced(&shared, connections, deadline).await,
        Some(budget) => paced(&shared, connections, budget, deadline).await,
    };
    let mixed_secs = started.elapsed().as_secs_f64();
    progress.finish();

    recorder.merge(mixed);
    let first_transport_error = shared.first_error.lock().ok().and_then(|e| e.clone());
    RunOutput {
        recorder,
        health_secs,
        mixed_secs,
        first_transport_error,
    }
}

/// Merges what the workers recorded. A worker that panicked loses its records, which the
/// counts then show, rather than stopping the report.
async fn gather(tasks: Vec<tokio::task::JoinHandle<Recorder>>) -> Recorder {
    let mut all = Recorder::new(0);
    for t in tasks {
        if let Ok(r) = t.await {
            all.merge(r);
        }
    }
    all
}

async fn health_phase(shared: &Arc<Shared>, connections: usize, deadline: Instant) -> Recorder {
    let tasks = (0..connections)
        .map(|i| {
            let shared = shared.clone();
            tokio::spawn(async move {
                let mut rec = Recorder::new(seed(i));
                let url = format!("{}/health", shared.api);
                while Instant::now() < deadline {
                    let req = shared.client.get(&url);
                    let t = Instant::now();
                    let outcome = shared.send(req).await;
                    rec.record(Class::Health, None, outcome, t.elapsed());
                }
                rec
            })
        })
        .collect();
    gather(tasks).await
}

async fn unpaced(shared: &Arc<Shared>, connections: usize, deadline: Instant) -> Recorder {
    let tasks = (0..connections)
        .map(|i| {
            let shared = shared.clone();
            tokio::spawn(async move {
                let mut rec = Recorder::new(seed(1000 + i));
                while Instant::now() < deadline {
                    let w = rec.dice().index(shared.workspaces.len());
                    shared.mixed_request(&shared.workspaces[w], &mut rec).await;
                }
                rec
            })
        })
        .collect();
    gather(tasks).await
}

async fn paced(
    shared: &Arc<Shared>,
    connections: usize,
    budget: u32,
    deadline: Instant,
) -> Recorder {
    let permits = Arc::new(Semaphore::new(connections));
    let count = shared.workspaces.len();
    let mut spread = Dice::new(seed(2000));
    let tasks = (0..count)
        .map(|w| {
            let (shared, permits) = (shared.clone(), permits.clone());
            let per_minute = if shared.workspaces[w].noisy {
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
                let ws = &shared.workspaces[w];
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
                    shared.mixed_request(ws, &mut rec).await;
                    drop(permit);
                }
                rec
            })
        })
        .collect();
    gather(tasks).await
}

/// A distinct seed per worker and per run.
fn seed(worker: usize) -> u64 {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0);
    now ^ (worker as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)
}
