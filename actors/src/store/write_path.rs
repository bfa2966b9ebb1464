//! The durable write path: two threads of the store's own, so that no async worker ever
//! waits on sled's batch lock or on the disk.
//!
//! - The **applier** takes queued batches in order, merges everything waiting into one
//!   sled batch (sled's `apply_batch` takes a database-wide lock, so one call for many
//!   writers beats many calls racing for it), applies it, counts its writes as applied
//!   (releasing the reads that wait for them), and hands the writers' "when durable"
//!   callbacks to the flusher. It starts an apply no sooner than [`APPLY_GATHER`] after
//!   the previous one started: while it sleeps, writers queue without waking it (each
//!   wake is a system call on the writer's async worker and a switch of threads), and
//!   each apply carries more writes.
//! - The **flusher** flushes back to back, but starts a flush no sooner than
//!   [`GATHER`] after the previous one started: under load, writes gather into fewer
//!   flushes (each flush costs sled a log write and wakes its I/O threads), while a write
//!   after a quiet spell is flushed at once. Every callback handed over before a flush
//!   began is answered by it, in order, on the flusher thread itself: no task per write.
//!
//! On PostgreSQL the same two threads apply to the rows in memory and commit one
//! transaction per flush; a writer whose workspace another node took meanwhile hears so
//! (`StoreError::Fenced`) instead of an acknowledgement.
//!
//! A writer therefore waits for nothing before its next write (pipelining): reads wait
//! instead, until every write of their workspace submitted before them is applied
//! ([`Progress`]), so a writer still reads its own writes. Acknowledgements follow the disk and stay in write
//! order. A barrier (`Store::durable`) goes through the same queue, so it covers every
//! write submitted before it.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicU64, Ordering::SeqCst};
use std::sync::mpsc::{Receiver, Sender};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use super::engine::Engine;
use super::mirror::Owner;
use super::{
    health::Health, record_flush, shared, Batch, Gate, StoreError, StoreResult, StoreStats,
};

/// Runs once the write (or barrier) it was given with is on disk, or failed.
pub type AfterDurable = Box<dyn FnOnce(StoreResult<()>) + Send>;

/// Most writes merged into one sled batch; bounds the time the batch lock is held.
const MOST_PER_APPLY: usize = 1024;

/// The shortest time from one flush's start to the next's. Adds at most this much to a
/// write's latency, and only when the flusher was busy just before.
const GATHER: Duration = Duration::from_micros(1000);

/// The shortest time from one apply's start to the next's; like [`GATHER`], it delays
/// only a write that follows closely on another, and reads wait at most this much more.
const APPLY_GATHER: Duration = Duration::from_micros(500);

/// Keeps rounds of work (applies, flushes) at least `gap` apart, start to start.
struct Pace {
    gap: Duration,
    last_start: Option<Instant>,
}

impl Pace {
    fn new(gap: Duration) -> Self {
        Self {
            gap,
            last_start: None,
        }
    }

    /// Sleeps out what is left of the gap since the last round started.
    fn wait(&self) {
        if let Some(left) = self
            .last_start
            .and_then(|t| self.gap.checked_sub(t.elapsed()))
        {
            std::thread::sleep(left);
        }
    }

    /// A round starts now.
    fn start(&mut self) -> Instant {
        let now = Instant::now();
        self.last_start = Some(now);
        now
    }
}

pub(super) enum Job {
    Write {
        batch: Batch,
        durable: AfterDurable,
        /// The workspace of the handle that wrote it.
        scope: Option<Owner>,
    },
    Barrier(AfterDurable),
}

impl Job {
    /// The callback of a job that will not run, to tell its writer.
    pub(super) fn into_durable(self) -> AfterDurable {
        match self {
            Job::Write { durable, .. } | Job::Barrier(durable) => durable,
        }
    }
}

/// What both threads share.
pub(super) struct Shared {
    pub engine: Engine,
    /// sled's log file, synced after each flush: sled's flush ends with
    /// `sync_file_range`, which survives kill -9 but not a power cut (it neither flushes
    /// the disk's cache nor the file's metadata); `fdatasync` does both.
    pub log: Option<Arc<std::fs::File>>,
    pub stats: Arc<StoreStats>,
    pub health: Arc<Health>,
    pub gate: Gate,
    pub progress: Arc<Progress>,
}

/// How far the applier has come, per workspace: writes count in as they are queued and
/// out as they are applied, and a read waits until every write queued before it is
/// applied, but only the writes of its own workspace (and unscoped ones): a workspace's
/// reads never wait for another workspace's writes. Workspaces share [`SHARDS`] counters
/// by a hash of their id, so a read may now and then wait for a neighbour's write too.
/// Two atomic loads when the applier has caught up, which is almost always.
pub(super) struct Progress {
    /// Per shard of workspaces, and last the writes of no workspace.
    counts: [Counts; SHARDS + 1],
    waiters: AtomicU64,
    lock: Mutex<()>,
    advanced: Condvar,
    /// Makes the applier refuse every batch, for tests of a write that fails after its
    /// writer moved on.
    #[cfg(test)]
    pub refuse_applies: std::sync::atomic::AtomicBool,
}

/// How many counters the workspaces' writes are spread over.
const SHARDS: usize = 64;

/// Every counter, for a reader of no workspace.
const EVERY_SHARD: [usize; SHARDS + 1] = {
    let mut all = [0; SHARDS + 1];
    let mut i = 0;
    while i <= SHARDS {
        all[i] = i;
        i += 1;
    }
    all
};

#[derive(Default)]
struct Counts {
    submitted: AtomicU64,
    applied: AtomicU64,
}

impl Default for Progress {
    fn default() -> Self {
        Self {
            counts: std::array::from_fn(|_| Counts::default()),
            waiters: AtomicU64::new(0),
            lock: Mutex::new(()),
            advanced: Condvar::new(),
            #[cfg(test)]
            refuse_applies: Default::default(),
        }
    }
}

/// The counter of the writes of `scope`.
fn shard(scope: Option<&Owner>) -> usize {
    use std::hash::{BuildHasher, BuildHasherDefault, DefaultHasher};
    match scope {
        Some(ws) => {
            let hash = BuildHasherDefault::<DefaultHasher>::default().hash_one(ws);
            (hash % SHARDS as u64) as usize
        }
        None => SHARDS,
    }
}

/// A read gives up waiting after this long (a stuck applier is a bug, not a reason to
/// hang every reader) and reads what is there.
const LONGEST_READ_WAIT: Duration = Duration::from_secs(5);

impl Progress {
    /// Counts a write of `scope` in; call before queueing it, so that the queue order and
    /// the count agree for every reader that starts after the queueing.
    pub(super) fn queued(&self, scope: Option<&Owner>) {
        self.counts[shard(scope)].submitted.fetch_add(1, SeqCst);
    }

    /// Counts writes out once applied (or refused: a write that will never be applied
    /// must not keep readers waiting), by the workspace each was for.
    pub(super) fn done<'a>(&self, scopes: impl IntoIterator<Item = Option<&'a Owner>>) {
        for scope in scopes {
            self.counts[shard(scope)].applied.fetch_add(1, SeqCst);
        }
        if self.waiters.load(SeqCst) > 0 {
            let _held = self.lock.lock().unwrap_or_else(|p| p.into_inner());
            self.advanced.notify_all();
        }
    }

    /// Returns once every write queued before this call is applied: the writes of
    /// `scope` and unscoped ones, or every write for an unscoped reader.
    pub(super) fn caught_up(&self, scope: Option<&Owner>) {
        let own = [shard(scope), SHARDS];
        let watched: &[usize] = match scope {
            Some(_) => &own,
            None => &EVERY_SHARD,
        };
        let mut targets = [0u64; SHARDS + 1];
        for &i in watched {
            targets[i] = self.counts[i].submitted.load(SeqCst);
        }
        let behind = || {
            watched
                .iter()
                .any(|&i| self.counts[i].applied.load(SeqCst) < targets[i])
        };
        if !behind() {
            return;
        }
        let deadline = Instant::now() + LONGEST_READ_WAIT;
        let mut held = self.lock.lock().unwrap_or_else(|p| p.into_inner());
        self.waiters.fetch_add(1, SeqCst);
        while behind() {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                tracing::error!("a read stopped waiting for the store's applier");
                break;
            }
            held = match self.advanced.wait_timeout(held, left) {
                Ok((held, _)) => held,
                Err(p) => p.into_inner().0,
            };
        }
        self.waiters.fetch_sub(1, SeqCst);
    }
}

/// Starts both threads; the returned sender is the queue. They stop (and let go of the
/// database) once every sender is dropped and the queue is drained.
pub(super) fn start(shared: Shared) -> std::io::Result<Sender<Job>> {
    let (jobs_tx, jobs_rx) = std::sync::mpsc::channel::<Job>();
    let (flush_tx, flush_rx) = std::sync::mpsc::channel::<Vec<Waiting>>();
    let runtime = tokio::runtime::Handle::try_current().ok();
    let shared = Arc::new(shared);
    let for_flusher = shared.clone();
    std::thread::Builder::new()
        .name("store-flusher".into())
        .spawn(move || {
            // Callbacks wake actors and may spawn tasks: give them the runtime.
            let _runtime = runtime.as_ref().map(|h| h.enter());
            run_flusher(&for_flusher, flush_rx)
        })?;
    std::thread::Builder::new()
        .name("store-applier".into())
        .spawn(move || run_applier(&shared, jobs_rx, flush_tx))?;
    Ok(jobs_tx)
}

/// A writer waiting for the flush, with the workspace it wrote for.
type Waiting = (Option<Owner>, AfterDurable);

fn run_applier(shared: &Shared, jobs: Receiver<Job>, flusher: Sender<Vec<Waiting>>) {
    let mut pace = Pace::new(APPLY_GATHER);
    loop {
        pace.wait();
        let Ok(first) = jobs.recv() else { break };
        pace.start();
        let mut group = vec![first];
        while group.len() < MOST_PER_APPLY {
            match jobs.try_recv() {
                Ok(job) => group.push(job),
                Err(_) => break,
            }
        }
        let mut batches = Vec::with_capacity(group.len());
        let mut writes = 0;
        for job in &mut group {
            if let Job::Write { batch, scope, .. } = job {
                writes += batch.len();
                batches.push((scope.clone(), std::mem::take(batch)));
            }
        }
        let outcome = if writes == 0 {
            Ok(())
        } else {
            apply(shared, batches)
        };
        shared
            .progress
            .done(group.iter().filter_map(|job| match job {
                Job::Write { scope, .. } => Some(scope.as_ref()),
                Job::Barrier(_) => None,
            }));
        let mut waiting = Vec::with_capacity(group.len());
        for job in group {
            match job {
                Job::Write { durable, scope, .. } => match &outcome {
                    Ok(()) => waiting.push((scope, durable)),
                    Err(_) => answer(durable, copy(&outcome)),
                },
                Job::Barrier(durable) => waiting.push((None, durable)),
            }
        }
        if !waiting.is_empty() {
            if let Err(lost) = flusher.send(waiting) {
                for (_, durable) in lost.0 {
                    answer(durable, Err(StoreError::FlusherGone));
                }
            }
        }
    }
}

fn apply(on: &Shared, batches: Vec<(Option<Owner>, Batch)>) -> StoreResult<()> {
    on.health.writable()?;
    #[cfg(test)]
    if on.progress.refuse_applies.load(SeqCst) {
        return Err(StoreError::Unavailable("refused for a test".into()));
    }
    let _writing = shared(&on.gate);
    on.engine.apply(batches, &on.health)
}

fn run_flusher(shared: &Shared, requests: Receiver<Vec<Waiting>>) {
    let mut pace = Pace::new(GATHER);
    while let Ok(mut waiting) = requests.recv() {
        pace.wait();
        while let Ok(more) = requests.try_recv() {
            waiting.extend(more);
        }
        let started = pace.start();
        let outcome = shared
            .health
            .writable()
            .and_then(|_| shared.engine.flush(&shared.health))
            .and_then(|fenced| match &shared.log {
                Some(log) => {
                    let synced = log.sync_data();
                    shared.stats.log_syncs.fetch_add(1, SeqCst);
                    synced
                        .map(|_| fenced)
                        .map_err(|e| StoreError::Unavailable(format!("syncing the log: {e}")))
                }
                None => Ok(fenced),
            });
        record_flush(&shared.stats, waiting.len(), started.elapsed());
        if let Err(e) = &outcome {
            shared.health.fail(&e.to_string());
        }
        for (scope, durable) in waiting {
            let fenced = match (&outcome, &scope) {
                (Ok(fenced), Some(ws)) if fenced.contains(ws) => Some(ws.to_string()),
                _ => None,
            };
            answer(
                durable,
                match fenced {
                    Some(ws) => Err(StoreError::Fenced(ws)),
                    None => copy(&outcome.as_ref().map(|_| ()).map_err(clone_error)),
                },
            );
        }
    }
}

/// Runs a callback; one that panics is logged and does not take the thread down.
fn answer(durable: AfterDurable, outcome: StoreResult<()>) {
    if catch_unwind(AssertUnwindSafe(|| durable(outcome))).is_err() {
        tracing::error!("a callback run after a durable write panicked");
    }
}

fn clone_error(e: &StoreError) -> StoreError {
    match e {
        StoreError::FlusherGone => StoreError::FlusherGone,
        e => StoreError::Unavailable(e.to_string()),
    }
}

/// One outcome, handed to many writers.
fn copy(outcome: &StoreResult<()>) -> StoreResult<()> {
    match outcome {
        Ok(()) => Ok(()),
        Err(StoreError::FlusherGone) => Err(StoreError::FlusherGone),
        Err(e) => Err(StoreError::Unavailable(e.to_string())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Starts `read` on a thread of its own; `name` arrives on the channel once it returns.
    fn reader(
        progress: &Arc<Progress>,
        scope: Option<Owner>,
        name: &'static str,
        done: &std::sync::mpsc::Sender<&'static str>,
    ) {
        let (progress, done) = (progress.clone(), done.clone());
        std::thread::spawn(move || {
            progress.caught_up(scope.as_ref());
            let _ = done.send(name);
        });
    }

    #[test]
    fn a_read_waits_for_the_writes_of_its_own_workspace_and_unscoped_ones_only() {
        let progress = Arc::new(Progress::default());
        let a: Owner = "ws_a".into();
        let b: Owner = (0..)
            .map(|n| Owner::from(format!("ws_b{n}").as_str()))
            .find(|b| shard(Some(b)) != shard(Some(&a)))
            .unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        let soon = Duration::from_secs(2);

        progress.queued(Some(&a));
        reader(&progress, Some(b.clone()), "b", &tx);
        assert_eq!(
            rx.recv_timeout(soon),
            Ok("b"),
            "b never waits for a's write"
        );
        reader(&progress, Some(a.clone()), "a", &tx);
        reader(&progress, None, "unscoped", &tx);
        assert!(
            rx.recv_timeout(Duration::from_millis(100)).is_err(),
            "a's reader and an unscoped one wait for a's write"
        );
        progress.done([Some(&a)]);
        let mut woke = [rx.recv_timeout(soon), rx.recv_timeout(soon)].map(Result::ok);
        woke.sort();
        assert_eq!(woke, [Some("a"), Some("unscoped")]);

        progress.queued(None);
        reader(&progress, Some(b), "b", &tx);
        assert!(
            rx.recv_timeout(Duration::from_millis(100)).is_err(),
            "an unscoped write holds every reader"
        );
        progress.done([None]);
        assert_eq!(rx.recv_timeout(soon), Ok("b"));
    }

    #[test]
    fn a_round_waits_out_what_is_left_of_the_gap_since_the_previous_start() {
        let pace = Pace::new(Duration::from_secs(10));
        let before = Instant::now();
        pace.wait();
        assert!(before.elapsed() < Duration::from_secs(5), "no round yet");

        let mut pace = Pace::new(Duration::from_millis(30));
        let started = pace.start();
        pace.wait();
        assert!(started.elapsed() >= Duration::from_millis(30));

        let mut pace = Pace::new(Duration::from_secs(10));
        pace.last_start = Instant::now().checked_sub(Duration::from_secs(20));
        assert!(pace.last_start.is_some());
        let before = Instant::now();
        pace.wait();
        assert!(
            before.elapsed() < Duration::from_secs(5),
            "a gap already over waits for nothing"
        );
    }
}
