//! The only module that touches sled or PostgreSQL.
//!
//! - Engines: sled in a local folder (the default) or PostgreSQL (cluster mode); both sit
//!   behind the same few operations ([`engine`]), so everything below is written once.
//! - Keys: a short ASCII prefix naming the record kind, then big-endian ids so that a
//!   prefix scan yields records in id order (reverse it for newest first).
//! - Values: one format byte, then bincode, so that a record can be migrated later.
//! - Durability: a write is acknowledged only after a flush. Writes go through
//!   [`write_path`]: one thread applies whatever is queued as one batch, another flushes
//!   back to back, so every writer waiting at the same time shares one apply and one
//!   flush (group commit), and no async worker waits on either. A read waits until the
//!   writes queued before it are applied, so a writer reads its own writes.

pub mod backup;
mod engine;
pub mod health;
mod ids;
mod mirror;
mod postgres;
mod span;
#[cfg(any(test, feature = "test-postgres"))]
pub mod test_postgres;
mod write_path;

pub use postgres::{
    holds_store as postgres_holds_store, Holder, LeaseView, NodeConfig, NodeView,
    Postgres as Cluster, Taken,
};
pub use write_path::AfterDurable;

pub use ids::BLOCK as ID_BLOCK;

use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use serde::{de::DeserializeOwned, Serialize};
use tokio::sync::oneshot;

use engine::Engine;
use span::Span;
use std::ops::Bound;
use write_path::Progress;

/// The leading byte of every stored value.
const FORMAT_V1: u8 = 1;

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("store i/o: {0}")]
    Sled(#[from] sled::Error),
    /// The store stopped taking writes after an I/O failure (see [`health`]).
    #[error("store unavailable: {0}")]
    Unavailable(String),
    #[error("store codec: {0}")]
    Codec(String),
    #[error("store flusher stopped")]
    FlusherGone,
    #[error("database: {0}")]
    Database(String),
    /// The write's workspace is owned by another node now (cluster mode).
    #[error("workspace {0} moved to another node")]
    Fenced(String),
}

impl StoreError {
    /// Whether the store could not take the write at all (an I/O failure, or refusing
    /// writes since one), as opposed to a record it could not read or write.
    pub fn is_unavailable(&self) -> bool {
        matches!(
            self,
            StoreError::Unavailable(_)
                | StoreError::Database(_)
                | StoreError::Fenced(_)
                | StoreError::Sled(sled::Error::Io(_))
        )
    }
}

pub type StoreResult<T> = Result<T, StoreError>;

/// Counters an operator reads to see how group commit behaves.
#[derive(Debug, Default)]
pub struct StoreStats {
    pub flushes: AtomicU64,
    pub flushed_writes: AtomicU64,
    pub flush_micros_total: AtomicU64,
    /// `fdatasync`s of sled's log, one per flush (see `write_path::Shared::log`).
    pub log_syncs: AtomicU64,
}

/// Handle to the database; cheap to clone.
#[derive(Clone)]
pub struct Store {
    engine: Engine,
    /// The queue of the write path.
    jobs: std::sync::mpsc::Sender<write_path::Job>,
    stats: Arc<StoreStats>,
    ids: Arc<ids::IdAllocator>,
    health: Arc<health::Health>,
    /// Writers share it; a backup takes it alone, so that it sees whole batches only.
    gate: Gate,
    /// Queued and applied writes, so that reads see every write queued before them.
    progress: Arc<Progress>,
    /// The workspace whose writes this handle makes (see [`Store::scoped`]).
    scope: Option<mirror::Owner>,
}

/// Held shared by every write, alone by a backup.
type Gate = Arc<std::sync::RwLock<()>>;

fn shared(gate: &Gate) -> std::sync::RwLockReadGuard<'_, ()> {
    gate.read().unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl Store {
    /// Opens (or creates) the database in `dir` and starts its write path; callbacks run
    /// after a flush can spawn tasks on the current tokio runtime, if there is one.
    pub fn open(dir: &Path) -> StoreResult<Self> {
        // A restore cut short: serving a fresh store here would keep the next restore out.
        if dir.join(RESTORING).exists() {
            return Err(StoreError::Codec(format!(
                "a restore into {} was cut short: run `switchboard restore` again (it starts over) or remove {}",
                dir.display(),
                dir.join(RESTORING).display()
            )));
        }
        let db = sled::Config::new()
            .path(dir.join("db"))
            .mode(sled::Mode::HighThroughput)
            // Workspace actors hold their state in memory; sled's cache only speeds up the
            // scan that loads them, so a small one is enough.
            .cache_capacity(64 * 1024 * 1024)
            .open()?;
        Self::start(Engine::Sled(db), dir)
    }

    /// Opens the PostgreSQL database at `url` as the cluster node `node` (migrating it and
    /// loading the rows of no workspace; a workspace's rows come with its lease, see
    /// [`Cluster::take`]) and starts its write path. `dir` keeps only local files. Blocking.
    pub fn open_postgres(url: &str, dir: &Path, node: NodeConfig) -> StoreResult<Self> {
        Self::start(Engine::Postgres(postgres::Postgres::open(url, node)?), dir)
    }

    /// The cluster this node belongs to: Some on the PostgreSQL engine.
    pub fn cluster(&self) -> Option<Arc<Cluster>> {
        match &self.engine {
            Engine::Postgres(pg) => Some(pg.clone()),
            Engine::Sled(_) => None,
        }
    }

    /// The same store, for the writer of one workspace's data: rows it writes whose keys do
    /// not name their workspace (deliveries, pending sends, timers) belong to it, and a
    /// write it makes after another node took the workspace fails ([`StoreError::Fenced`]).
    pub fn scoped(&self, workspace: &str) -> Store {
        Store {
            scope: Some(mirror::Owner::from(workspace)),
            ..self.clone()
        }
    }

    /// Which engine holds the data: "sled" or "postgres".
    pub fn engine_name(&self) -> &'static str {
        match self.engine {
            Engine::Sled(_) => "sled",
            Engine::Postgres(_) => "postgres",
        }
    }

    fn start(engine: Engine, dir: &Path) -> StoreResult<Self> {
        let ids = Arc::new(ids::IdAllocator::open(&engine)?);
        let health = Arc::new(health::Health::new(dir));
        let stats = Arc::new(StoreStats::default());
        let gate = Gate::default();
        let progress = Arc::new(Progress::default());
        // sled keeps its log in `db/db`; PostgreSQL commits durably on its own.
        let log = match &engine {
            Engine::Sled(_) => Some(Arc::new(
                std::fs::File::open(dir.join("db").join("db")).map_err(|e| {
                    StoreError::Unavailable(format!("cannot open sled's log to sync it: {e}"))
                })?,
            )),
            Engine::Postgres(_) => None,
        };
        let jobs = write_path::start(write_path::Shared {
            engine: engine.clone(),
            log,
            stats: stats.clone(),
            health: health.clone(),
            gate: gate.clone(),
            progress: progress.clone(),
        })
        .map_err(|e| StoreError::Unavailable(format!("cannot start the write path: {e}")))?;
        Ok(Self {
            engine,
            jobs,
            stats,
            ids,
            health,
            gate,
            progress,
            scope: None,
        })
    }

    pub fn stats(&self) -> &StoreStats {
        &self.stats
    }

    /// Whether the store takes writes.
    pub fn health(&self) -> &health::Health {
        &self.health
    }

    /// Whether a failing store can take writes again (see [`health::Probe`]). Blocking.
    pub fn probe(&self) -> health::Probe {
        match &self.engine {
            Engine::Sled(_) => self.health.probe(),
            Engine::Postgres(_) if !self.health.is_failing() => health::Probe::Healthy,
            // The rows in memory may hold writes the database never took: start over from it.
            Engine::Postgres(pg) if pg.ping() => health::Probe::RestartNeeded,
            Engine::Postgres(_) => health::Probe::StillFailing,
        }
    }

    pub fn size_on_disk(&self) -> u64 {
        self.engine.size()
    }

    /// A fresh id: integers, unique across every workspace, never reused (also after a
    /// crash, which skips at most [`ID_BLOCK`] of them).
    pub fn next_id(&self) -> StoreResult<u64> {
        self.health.writable()?;
        let _writing = shared(&self.gate);
        match &self.engine {
            Engine::Sled(_) => self.ids.next(&self.engine, &self.health),
            Engine::Postgres(pg) => pg.next_id(),
        }
    }

    pub fn get<T: DeserializeOwned>(&self, key: &[u8]) -> StoreResult<Option<T>> {
        self.get_read(key, decode)
    }

    /// The record under `key` as `read` makes it (a record that has an earlier shape).
    pub fn get_read<T>(
        &self,
        key: &[u8],
        read: impl FnOnce(&[u8]) -> StoreResult<T>,
    ) -> StoreResult<Option<T>> {
        self.progress.caught_up(self.scope.as_ref());
        self.engine.get(key, read)
    }

    /// Entries of `span` in its order, up to `limit`, each made by `make`.
    fn collect<T>(
        &self,
        span: Span,
        limit: usize,
        mut make: impl FnMut(&[u8], &[u8]) -> StoreResult<T>,
    ) -> StoreResult<Vec<T>> {
        self.progress.caught_up(self.scope.as_ref());
        let mut out = Vec::new();
        if limit == 0 {
            return Ok(out);
        }
        self.engine.walk(span, &mut |k, v| {
            out.push(make(k, v)?);
            Ok(out.len() < limit)
        })?;
        Ok(out)
    }

    /// Every record under `prefix`, in key order.
    pub fn scan<T: DeserializeOwned>(&self, prefix: &[u8]) -> StoreResult<Vec<(Vec<u8>, T)>> {
        self.scan_read(prefix, decode)
    }

    /// Every record under `prefix`, in key order, as `read` makes it.
    pub fn scan_read<T>(
        &self,
        prefix: &[u8],
        read: impl Fn(&[u8]) -> StoreResult<T>,
    ) -> StoreResult<Vec<(Vec<u8>, T)>> {
        self.collect(Span::prefix(prefix), usize::MAX, |k, v| {
            Ok((k.to_vec(), read(v)?))
        })
    }

    /// Records under `prefix` whose trailing id is greater than `after`, in id order.
    pub fn scan_after<T: DeserializeOwned>(
        &self,
        prefix: &[u8],
        after: u64,
    ) -> StoreResult<Vec<(u64, T)>> {
        self.scan_after_read(prefix, after, decode)
    }

    /// As [`Self::scan_after`], each record as `read` makes it.
    pub fn scan_after_read<T>(
        &self,
        prefix: &[u8],
        after: u64,
        read: impl Fn(&[u8]) -> StoreResult<T>,
    ) -> StoreResult<Vec<(u64, T)>> {
        let mut from = prefix.to_vec();
        from.extend_from_slice(&after.saturating_add(1).to_be_bytes());
        let span = Span {
            from: Bound::Included(from),
            ..Span::prefix(prefix)
        };
        self.collect(span, usize::MAX, |k, v| {
            Ok((trailing_id(k).unwrap_or(0), read(v)?))
        })
    }

    /// Up to `limit` entries under `prefix` whose keys come after `after` (from the first
    /// if None), in key order and undecoded: a long walk in pages, never all of it in
    /// memory, that one unreadable value does not stop.
    pub fn scan_page(
        &self,
        prefix: &[u8],
        after: Option<&[u8]>,
        limit: usize,
    ) -> StoreResult<Vec<(Vec<u8>, Vec<u8>)>> {
        let mut span = Span::prefix(prefix);
        if let Some(k) = after {
            span.from = Bound::Excluded(k.to_vec());
        }
        self.collect(span, limit, |k, v| Ok((k.to_vec(), v.to_vec())))
    }

    /// Up to `limit` records under `prefix`, highest id first, below `before` if given.
    pub fn newest<T: DeserializeOwned>(
        &self,
        prefix: &[u8],
        before: Option<u64>,
        limit: usize,
    ) -> StoreResult<Vec<(u64, T)>> {
        let mut end = prefix.to_vec();
        end.extend_from_slice(&before.unwrap_or(u64::MAX).to_be_bytes());
        let span = Span {
            from: Bound::Included(prefix.to_vec()),
            to: Bound::Excluded(end),
            backwards: true,
        };
        self.collect(span, limit, |k, v| {
            Ok((trailing_id(k).unwrap_or(0), decode(v)?))
        })
    }

    /// A stored value as bytes.
    pub fn get_raw(&self, key: &[u8]) -> StoreResult<Option<Vec<u8>>> {
        self.progress.caught_up(self.scope.as_ref());
        self.engine.get(key, |v| Ok(v.to_vec()))
    }

    /// Every entry of every keyspace as (keyspace name, key, value); the main keyspace's
    /// name is empty. For the offline check.
    pub fn raw_entries(&self) -> StoreResult<Vec<RawEntry>> {
        self.progress.caught_up(self.scope.as_ref());
        let mut out = Vec::new();
        for space in self.engine.spaces()? {
            self.engine.walk_space(&space, &mut |k, v| {
                out.push((space.clone(), k.to_vec(), v.to_vec()));
                Ok(true)
            })?;
        }
        Ok(out)
    }

    /// Keys from `start` (inclusive) to `end` (exclusive), in order.
    pub fn keys_between(&self, start: &[u8], end: &[u8]) -> StoreResult<Vec<Vec<u8>>> {
        let span = Span {
            from: Bound::Included(start.to_vec()),
            to: Bound::Excluded(end.to_vec()),
            backwards: false,
        };
        self.collect(span, usize::MAX, |k, _| Ok(k.to_vec()))
    }

    /// Keys under `prefix`, for clean-up.
    pub fn keys(&self, prefix: &[u8]) -> StoreResult<Vec<Vec<u8>>> {
        self.collect(Span::prefix(prefix), usize::MAX, |k, _| Ok(k.to_vec()))
    }

    /// Applies a batch atomically (in memory and the write-ahead log, not yet flushed),
    /// right here. For rare writes outside the workspace actors; a hot path uses
    /// [`Store::submit`], which keeps the calling thread off sled's batch lock.
    pub fn apply(&self, batch: Batch) -> StoreResult<()> {
        self.health.writable()?;
        let _writing = shared(&self.gate);
        self.engine
            .apply(vec![(self.scope.clone(), batch)], &self.health)
    }

    /// Queues a batch and returns at once: reads made after this call see it, and
    /// `durable` runs, on the store's own thread and in submission order, once it is on
    /// disk (or failed). A writer answers its caller from `durable`, so its next write is
    /// applied while this one waits for the disk.
    pub fn submit(&self, batch: Batch, durable: AfterDurable) {
        if let Err(e) = self.health.writable() {
            return durable(Err(e));
        }
        self.progress.queued(self.scope.as_ref());
        let job = write_path::Job::Write {
            batch,
            durable,
            scope: self.scope.clone(),
        };
        if let Err(lost) = self.jobs.send(job) {
            self.progress.done([self.scope.as_ref()]);
            (lost.0.into_durable())(Err(StoreError::FlusherGone));
        }
    }

    /// A named tree for data with its own life cycle (idempotency records, ...). Its
    /// writes are made durable by the same flushes as everything else.
    pub fn tree(&self, name: &str) -> StoreResult<Tree> {
        let keyspace = match &self.engine {
            Engine::Sled(db) => Keyspace::Sled(db.open_tree(name)?),
            Engine::Postgres(pg) => Keyspace::Mirror(pg.clone(), name.as_bytes().to_vec()),
        };
        Ok(Tree {
            keyspace,
            health: self.health.clone(),
            gate: self.gate.clone(),
        })
    }

    /// Resolves once everything written (applied or submitted) before this call is on disk.
    pub fn durable(&self) -> impl std::future::Future<Output = StoreResult<()>> + Send + 'static {
        let (tx, rx) = oneshot::channel();
        self.after_durable(Box::new(move |outcome| {
            let _ = tx.send(outcome);
        }));
        async move { rx.await.map_err(|_| StoreError::FlusherGone)? }
    }

    /// Runs `then` once everything written before this call is on disk (or failed).
    pub fn after_durable(&self, then: AfterDurable) {
        if let Err(e) = self.health.writable() {
            return then(Err(e));
        }
        if let Err(lost) = self.jobs.send(write_path::Job::Barrier(then)) {
            (lost.0.into_durable())(Err(StoreError::FlusherGone));
        }
    }

    /// Applies and waits until durable.
    pub async fn commit(&self, batch: Batch) -> StoreResult<()> {
        let (tx, rx) = oneshot::channel();
        self.submit(
            batch,
            Box::new(move |outcome| {
                let _ = tx.send(outcome);
            }),
        );
        rx.await.map_err(|_| StoreError::FlusherGone)?
    }

    /// Writes a backup of every tree to `out` while writes wait (reads go on), so that it
    /// holds whole batches and everything acknowledged before it began. Blocking: call it
    /// off the async workers.
    pub fn backup(&self, out: impl std::io::Write) -> StoreResult<backup::Summary> {
        let _alone = self
            .gate
            .write()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        self.progress.caught_up(self.scope.as_ref());
        match &self.engine {
            Engine::Sled(_) => backup::write(&self.engine, out),
            // This node holds only its own workspaces: the backup reads the whole database,
            // as one consistent snapshot, after this node's own changes are committed.
            // After a refused commit the refused changes are still pending, and their
            // writers were answered 503: committing them now would store them after all.
            Engine::Postgres(pg) => {
                self.health.writable()?;
                pg.commit()?;
                backup::write(&pg.snapshot()?, out)
            }
        }
    }

    /// Restores a backup file into `data_dir`, which must hold no store yet. The store is
    /// written beside (`db.restoring`) and renamed into place once flushed, so a restore
    /// cut short leaves no store behind, only a folder the next restore starts over in.
    pub fn restore(file: &Path, data_dir: &Path) -> StoreResult<backup::Summary> {
        let db_dir = data_dir.join("db");
        if db_dir.exists() {
            return Err(StoreError::Codec(format!(
                "{} already holds a store; restore into an empty folder",
                data_dir.display()
            )));
        }
        let partial = data_dir.join(RESTORING);
        let io = |e: std::io::Error| StoreError::Codec(format!("restore: {e}"));
        if partial.exists() {
            std::fs::remove_dir_all(&partial).map_err(io)?;
        }
        let summary = backup::restore(file, &partial)?;
        std::fs::rename(&partial, &db_dir).map_err(io)?;
        // The rename itself is durable once the folder holding it is synced.
        std::fs::File::open(data_dir)
            .and_then(|d| d.sync_all())
            .map_err(io)?;
        Ok(summary)
    }

    /// Restores a backup file into the empty PostgreSQL database at `url`. Blocking.
    pub fn restore_postgres(file: &Path, url: &str) -> StoreResult<backup::Summary> {
        // Verified before the database is touched (opening it creates the tables).
        backup::verify(file)?;
        let node = NodeConfig {
            id: format!("restore-{}", std::process::id()),
            addr: String::new(),
            admin_addr: String::new(),
            lease_ttl: Duration::from_secs(10),
            offline: true,
        };
        backup::restore_into(file, &*postgres::Postgres::open(url, node)?)
    }

    /// Makes the applier refuse every queued batch from now on (the store stays healthy
    /// otherwise), for tests of a write that fails after its writer moved on.
    #[cfg(test)]
    pub(crate) fn refuse_applies_for_test(&self) {
        self.progress.refuse_applies.store(true, Ordering::SeqCst);
    }

    /// Flushes synchronously; for shutdown. Every write submitted before is applied and
    /// durable first: one still queued would otherwise be applied after the final flush,
    /// and on PostgreSQL after the leases are let go, when it can no longer commit (a
    /// delivery's last outcome, for instance, so that the next start tries it again). The
    /// id counter is settled then, so the next start continues with the very next id.
    /// Blocking: call it off the async workers, never from an after-durable callback.
    pub fn flush_now(&self) -> StoreResult<()> {
        self.health.writable()?;
        let (tx, rx) = std::sync::mpsc::channel();
        self.after_durable(Box::new(move |outcome| {
            let _ = tx.send(outcome);
        }));
        match rx.recv_timeout(LONGEST_FINAL_WAIT) {
            Ok(outcome) => outcome?,
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
                return Err(StoreError::FlusherGone)
            }
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
                return Err(StoreError::Unavailable(format!(
                    "the writes queued before the final flush were not durable within {LONGEST_FINAL_WAIT:?}"
                )))
            }
        }
        match &self.engine {
            Engine::Sled(_) => {
                self.ids.settle(&self.engine, &self.health)?;
                self.engine.flush(&self.health)?;
            }
            Engine::Postgres(pg) => {
                pg.commit()?;
                pg.settle_ids()?;
                pg.release_all()?;
            }
        }
        Ok(())
    }
}

/// How long a final flush waits for the writes queued before it: a stuck store must not
/// hold a stopping service for ever.
const LONGEST_FINAL_WAIT: Duration = Duration::from_secs(60);

fn record_flush(stats: &StoreStats, writes: usize, took: Duration) {
    metrics::histogram!("switchboard_store_flush_seconds").record(took.as_secs_f64());
    metrics::histogram!("switchboard_store_writes_per_flush").record(writes as f64);
    stats.flushes.fetch_add(1, Ordering::Relaxed);
    stats
        .flushed_writes
        .fetch_add(writes as u64, Ordering::Relaxed);
    stats
        .flush_micros_total
        .fetch_add(took.as_micros() as u64, Ordering::Relaxed);
}

/// A named keyspace with compare-and-swap, for records that are claimed by racing callers.
#[derive(Clone)]
pub struct Tree {
    keyspace: Keyspace,
    health: Arc<health::Health>,
    gate: Gate,
}

#[derive(Clone)]
enum Keyspace {
    Sled(sled::Tree),
    /// The PostgreSQL engine's rows of this keyspace, by name.
    Mirror(Arc<postgres::Postgres>, Vec<u8>),
}

impl Tree {
    pub fn get_raw(&self, key: &[u8]) -> StoreResult<Option<Vec<u8>>> {
        match &self.keyspace {
            Keyspace::Sled(tree) => Ok(tree.get(key)?.map(|v| v.to_vec())),
            Keyspace::Mirror(pg, name) => pg.mirror().get(name, key, |v| Ok(v.to_vec())),
        }
    }

    /// Replaces `old` (None: absent) with `new` only if the value is still `old`; false when
    /// another writer got there first.
    pub fn compare_and_swap(
        &self,
        key: &[u8],
        old: Option<&[u8]>,
        new: Vec<u8>,
    ) -> StoreResult<bool> {
        self.swap(key, old, Some(new))
    }

    fn swap(&self, key: &[u8], old: Option<&[u8]>, new: Option<Vec<u8>>) -> StoreResult<bool> {
        self.health.writable()?;
        let _writing = shared(&self.gate);
        match &self.keyspace {
            Keyspace::Sled(tree) => {
                let swapped = self.health.watch(tree.compare_and_swap(key, old, new))?;
                Ok(swapped.is_ok())
            }
            Keyspace::Mirror(pg, name) => Ok(pg.mirror().compare_and_swap(name, key, old, new)),
        }
    }

    pub fn insert<T: Serialize>(&self, key: &[u8], value: &T) -> StoreResult<()> {
        self.set(key, Some(encode(value)?))
    }

    pub fn remove(&self, key: &[u8]) -> StoreResult<()> {
        self.set(key, None)
    }

    fn set(&self, key: &[u8], value: Option<Vec<u8>>) -> StoreResult<()> {
        self.health.writable()?;
        let _writing = shared(&self.gate);
        match &self.keyspace {
            Keyspace::Sled(tree) => {
                match value {
                    Some(v) => self.health.watch(tree.insert(key, v))?,
                    None => self.health.watch(tree.remove(key))?,
                };
            }
            Keyspace::Mirror(pg, name) => pg.mirror().apply(name, None, [(key.to_vec(), value)]),
        }
        Ok(())
    }

    /// Every record, decoded; undecodable ones are skipped.
    pub fn iter<'a, T: DeserializeOwned + 'a>(
        &'a self,
    ) -> Box<dyn Iterator<Item = (Vec<u8>, T)> + 'a> {
        match &self.keyspace {
            Keyspace::Sled(tree) => Box::new(
                tree.iter()
                    .filter_map(|item| item.ok())
                    .filter_map(|(k, v)| decode(&v).ok().map(|v| (k.to_vec(), v))),
            ),
            Keyspace::Mirror(pg, name) => {
                let mut records = Vec::new();
                let everything = Span {
                    from: Bound::Unbounded,
                    to: Bound::Unbounded,
                    backwards: false,
                };
                let _ = pg.mirror().walk(name, everything, &mut |k, v| {
                    if let Ok(v) = decode(v) {
                        records.push((k.to_vec(), v));
                    }
                    Ok(true)
                });
                Box::new(records.into_iter())
            }
        }
    }

    pub fn len(&self) -> usize {
        match &self.keyspace {
            Keyspace::Sled(tree) => tree.len(),
            Keyspace::Mirror(pg, name) => pg.mirror().len(name),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// An atomic set of writes, applied in order.
#[derive(Default)]
pub struct Batch(Vec<(Vec<u8>, Option<Vec<u8>>)>);

impl Batch {
    pub fn put<T: Serialize>(&mut self, key: Vec<u8>, value: &T) -> StoreResult<()> {
        self.0.push((key, Some(encode(value)?)));
        Ok(())
    }

    pub fn delete(&mut self, key: Vec<u8>) {
        self.0.push((key, None));
    }

    /// Appends another batch's writes after this one's.
    pub fn extend(&mut self, other: Batch) {
        self.0.extend(other.0);
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// The folder a restore writes before renaming it to `db`.
const RESTORING: &str = "db.restoring";

/// Where the id ceiling lives (outside every record prefix): sled's own counter, and in a
/// backup of either engine the counter it was taken at.
const ID_CEILING_KEY: &[u8] = b"meta/id_ceiling";

/// Format byte + bincode.
pub fn encode<T: Serialize>(value: &T) -> StoreResult<Vec<u8>> {
    let mut out = vec![FORMAT_V1];
    let body = bincode::serde::encode_to_vec(value, bincode::config::standard())
        .map_err(|e| StoreError::Codec(e.to_string()))?;
    out.extend_from_slice(&body);
    Ok(out)
}

pub fn decode<T: DeserializeOwned>(bytes: &[u8]) -> StoreResult<T> {
    match bytes.split_first() {
        Some((&FORMAT_V1, body)) => {
            bincode::serde::decode_from_slice(body, bincode::config::standard())
                .map(|(v, _)| v)
                .map_err(|e| StoreError::Codec(e.to_string()))
        }
        Some((other, _)) => Err(StoreError::Codec(format!("unknown format byte {other}"))),
        None => Err(StoreError::Codec("empty value".into())),
    }
}

/// A field appended to the end of a stored record after records of the older shape were
/// written: those end before it, and read it as its default. Only the record's last field
/// may be one, since it is read where the older record's bytes run out.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub struct Appended<T>(pub T);

impl<'de, T: serde::Deserialize<'de> + Default> serde::Deserialize<'de> for Appended<T> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        // bincode has no "end of record" to ask for: reading past the end is the signal.
        Ok(Appended(T::deserialize(d).unwrap_or_default()))
    }
}

/// One stored entry: (keyspace name, key, value); the main keyspace's name is empty.
pub type RawEntry = (Vec<u8>, Vec<u8>, Vec<u8>);

/// Whether a stored value starts with a known format byte.
pub fn check_format(bytes: &[u8]) -> Result<(), String> {
    match bytes.first() {
        Some(&FORMAT_V1) => Ok(()),
        Some(other) => Err(format!("unknown format byte {other}")),
        None => Err("empty value".into()),
    }
}

/// Builds keys: `prefix/part/part...` with ids as 8 big-endian bytes.
pub struct Key(Vec<u8>);

impl Key {
    pub fn new(kind: &str) -> Self {
        Self(kind.as_bytes().to_vec())
    }

    pub fn str(mut self, part: &str) -> Self {
        self.0.push(b'/');
        self.0.extend_from_slice(part.as_bytes());
        self
    }

    pub fn id(mut self, id: u64) -> Self {
        self.0.push(b'/');
        self.0.extend_from_slice(&id.to_be_bytes());
        self
    }

    /// The prefix form, ending in the separator, for scans.
    pub fn prefix(mut self) -> Vec<u8> {
        self.0.push(b'/');
        self.0
    }

    pub fn build(self) -> Vec<u8> {
        self.0
    }
}

/// The id stored in the last 8 bytes of a key built with [`Key::id`].
pub fn trailing_id(key: &[u8]) -> Option<u64> {
    let tail: [u8; 8] = key.get(key.len().checked_sub(8)?..)?.try_into().ok()?;
    Some(u64::from_be_bytes(tail))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    #[derive(Debug, PartialEq, Serialize, Deserialize)]
    struct Sample {
        id: u64,
        name: String,
        note: Option<String>,
    }

    #[derive(Debug, PartialEq, Serialize, Deserialize)]
    struct SampleWithNotes {
        id: u64,
        name: String,
        note: Option<String>,
        notes: Appended<Vec<String>>,
    }

    #[test]
    fn an_appended_field_reads_as_its_default_in_a_record_of_the_older_shape() {
        let old = encode(&Sample {
            id: 7,
            name: "Ann".into(),
            note: Some("hi".into()),
        })
        .unwrap();
        let read: SampleWithNotes = decode(&old).unwrap();
        assert_eq!((read.id, read.note.as_deref()), (7, Some("hi")));
        assert_eq!(read.notes, Appended(Vec::new()));

        let new = SampleWithNotes {
            id: 8,
            name: "Bea".into(),
            note: None,
            notes: Appended(vec!["bea@example.com".into()]),
        };
        assert_eq!(
            decode::<SampleWithNotes>(&encode(&new).unwrap()).unwrap(),
            new
        );
        // The older shape still reads a newer record: the appended bytes are left over.
        assert_eq!(decode::<Sample>(&encode(&new).unwrap()).unwrap().id, 8);
    }

    #[test]
    fn codec_round_trips_with_a_format_byte() {
        let s = Sample {
            id: 7,
            name: "x".into(),
            note: None,
        };
        let bytes = encode(&s).unwrap();
        assert_eq!(bytes[0], FORMAT_V1);
        assert_eq!(decode::<Sample>(&bytes).unwrap(), s);
    }

    #[test]
    fn unknown_format_byte_is_an_error_not_garbage() {
        assert!(decode::<Sample>(&[9, 1, 2]).is_err());
        assert!(decode::<Sample>(&[]).is_err());
    }

    #[test]
    fn ids_in_keys_sort_numerically() {
        let a = Key::new("w").str("ws_1").id(2).build();
        let b = Key::new("w").str("ws_1").id(256).build();
        assert!(a < b);
        assert_eq!(trailing_id(&b), Some(256));
    }

    #[tokio::test]
    async fn a_paged_scan_walks_one_prefix_in_key_order_and_stops_at_its_end() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        let mut b = Batch::default();
        for i in 0..5u64 {
            b.put(Key::new("p").str("a").id(i).build(), &i).unwrap();
        }
        b.put(Key::new("p").str("b").id(0).build(), &9u64).unwrap();
        store.apply(b).unwrap();
        let prefix = Key::new("p").str("a").prefix();
        let first = store.scan_page(&prefix, None, 2).unwrap();
        assert_eq!(first.len(), 2);
        let rest = store.scan_page(&prefix, Some(&first[1].0), 10).unwrap();
        let ids: Vec<u64> = first
            .iter()
            .chain(&rest)
            .map(|(k, v)| {
                assert_eq!(trailing_id(k), Some(decode::<u64>(v).unwrap()));
                decode::<u64>(v).unwrap()
            })
            .collect();
        assert_eq!(ids, vec![0, 1, 2, 3, 4], "nothing of the next prefix");
    }

    /// The previous handle's flusher lets go of the file lock once it sees its channel close.
    async fn reopen(dir: &Path) -> Store {
        for _ in 0..100 {
            if let Ok(store) = Store::open(dir) {
                return store;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        panic!("store did not reopen");
    }

    #[tokio::test]
    async fn concurrent_writers_share_flushes_and_data_survives_reopen() {
        let dir = tempfile::tempdir().unwrap();
        {
            let store = Store::open(dir.path()).unwrap();
            let mut waits = Vec::new();
            for i in 0..200u64 {
                let mut b = Batch::default();
                b.put(Key::new("t").id(i).build(), &i).unwrap();
                store.apply(b).unwrap();
                waits.push(store.durable());
            }
            for w in waits {
                w.await.unwrap();
            }
            let flushes = store.stats().flushes.load(Ordering::Relaxed);
            assert!(
                flushes < 200,
                "group commit should batch, got {flushes} flushes"
            );
            // Durable as a power cut needs it: each flush ends with an fdatasync.
            let syncs = store.stats().log_syncs.load(Ordering::Relaxed);
            assert_eq!(syncs, flushes);
        }
        let store = reopen(dir.path()).await;
        let all: Vec<(Vec<u8>, u64)> = store.scan(&Key::new("t").prefix()).unwrap();
        assert_eq!(all.len(), 200);
        assert_eq!(all[199].1, 199);
    }

    #[test]
    fn a_final_flush_returns_once_every_write_submitted_before_it_is_durable() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        let answered = Arc::new(AtomicU64::new(0));
        for i in 0..500u64 {
            let mut b = Batch::default();
            b.put(Key::new("f").id(i).build(), &i).unwrap();
            let answered = answered.clone();
            store.submit(
                b,
                Box::new(move |outcome| {
                    assert!(outcome.is_ok());
                    answered.fetch_add(1, Ordering::SeqCst);
                }),
            );
        }
        store.flush_now().unwrap();
        assert_eq!(
            answered.load(Ordering::SeqCst),
            500,
            "no write submitted before the final flush is left for after it"
        );
    }

    #[tokio::test]
    async fn submitted_writes_are_read_back_at_once_and_answered_in_order_once_durable() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        let answered = Arc::new(std::sync::Mutex::new(Vec::new()));
        for i in 0..500u64 {
            let mut b = Batch::default();
            // Every write also overwrites one shared key: the last one submitted must win.
            b.put(Key::new("t").id(i).build(), &i).unwrap();
            b.put(Key::new("last").build(), &i).unwrap();
            let seen = answered.clone();
            store.submit(
                b,
                Box::new(move |outcome| {
                    outcome.unwrap();
                    seen.lock().unwrap().push(i);
                }),
            );
            // The writer's next read sees its write, applied or not when it asked.
            assert_eq!(
                store.get::<u64>(&Key::new("last").build()).unwrap(),
                Some(i)
            );
        }
        assert_eq!(
            store.get::<u64>(&Key::new("t").id(499).build()).unwrap(),
            Some(499)
        );
        assert_eq!(
            store.get::<u64>(&Key::new("last").build()).unwrap(),
            Some(499)
        );
        store.durable().await.unwrap();
        let order = answered.lock().unwrap().clone();
        assert_eq!(
            order,
            (0..500).collect::<Vec<_>>(),
            "acknowledged out of order"
        );
        let flushes = store.stats().flushes.load(Ordering::Relaxed);
        assert!(
            flushes < 500,
            "group commit should batch, got {flushes} flushes"
        );
    }

    fn node(id: &str, ttl: Duration, offline: bool) -> NodeConfig {
        NodeConfig {
            id: id.into(),
            addr: format!("http://{id}.test"),
            admin_addr: format!("http://{id}-admin.test"),
            lease_ttl: ttl,
            offline,
        }
    }

    /// The PostgreSQL engine on the schema `url` names, as an offline tool (no leases).
    async fn reopen_postgres(url: &str, dir: &Path) -> Store {
        let mut last = None;
        for _ in 0..250 {
            match Store::open_postgres(url, dir, node("tool", Duration::from_secs(10), true)) {
                Ok(store) => return store,
                Err(e) => last = Some(e),
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        panic!("postgres store did not reopen: {last:?}");
    }

    #[tokio::test]
    async fn the_postgres_engine_reads_its_writes_at_once_and_keeps_them_across_a_reopen() {
        let url = test_postgres::fresh_url();
        let dir = tempfile::tempdir().unwrap();
        {
            let store = reopen_postgres(&url, dir.path()).await;
            assert_eq!(store.engine_name(), "postgres");
            for i in 0..300u64 {
                let mut b = Batch::default();
                b.put(Key::new("w").str("ws_a").id(i).build(), &i).unwrap();
                b.put(Key::new("last").build(), &i).unwrap();
                if i % 3 == 0 {
                    b.delete(Key::new("w").str("ws_a").id(i).build());
                }
                store.submit(b, Box::new(|outcome| outcome.unwrap()));
            }
            assert_eq!(
                store.get::<u64>(&Key::new("last").build()).unwrap(),
                Some(299)
            );
            store.durable().await.unwrap();
            let flushes = store.stats().flushes.load(Ordering::Relaxed);
            assert!(flushes < 300, "group commit should batch, got {flushes}");
            let idem = store.tree("idempotency").unwrap();
            assert!(idem.compare_and_swap(b"k", None, b"v1".to_vec()).unwrap());
            assert!(!idem.compare_and_swap(b"k", None, b"v2".to_vec()).unwrap());
            store.durable().await.unwrap();
        }
        let store = reopen_postgres(&url, dir.path()).await;
        let kept: Vec<(u64, u64)> = store
            .scan_after(&Key::new("w").str("ws_a").prefix(), 0)
            .unwrap();
        assert_eq!(kept.len(), 200, "ids 1..299 without the multiples of 3");
        assert!(kept.iter().all(|(id, v)| id == v && id % 3 != 0));
        let newest: Vec<(u64, u64)> = store
            .newest(&Key::new("w").str("ws_a").prefix(), Some(299), 2)
            .unwrap();
        assert_eq!(
            newest.iter().map(|(id, _)| *id).collect::<Vec<_>>(),
            vec![298, 296]
        );
        assert_eq!(
            store.tree("idempotency").unwrap().get_raw(b"k").unwrap(),
            Some(b"v1".to_vec())
        );
    }

    fn put(
        store: &Store,
        key: Vec<u8>,
        value: u64,
    ) -> impl std::future::Future<Output = StoreResult<()>> {
        let mut b = Batch::default();
        b.put(key, &value).unwrap();
        let store = store.clone();
        async move { store.commit(b).await }
    }

    #[tokio::test]
    async fn a_workspace_has_one_owner_and_a_writer_on_another_node_is_fenced() {
        let url = test_postgres::fresh_url();
        let dir = tempfile::tempdir().unwrap();
        let ttl = Duration::from_secs(10);
        let a = Store::open_postgres(&url, dir.path(), node("a", ttl, false)).unwrap();
        let b = Store::open_postgres(&url, dir.path(), node("b", ttl, false)).unwrap();
        let (ca, cb) = (a.cluster().unwrap(), b.cluster().unwrap());
        assert_eq!(ca.take("ws_x").unwrap(), Taken::Now);
        assert_eq!(ca.take("ws_x").unwrap(), Taken::Held);
        let holder = match cb.take("ws_x").unwrap() {
            Taken::Elsewhere(h) => h,
            other => panic!("b took a held workspace: {other:?}"),
        };
        assert_eq!(holder.node, "a");
        assert_eq!(holder.addr.as_deref(), Some("http://a.test"));

        let key = Key::new("w").str("ws_x").id(1).build();
        put(&a, key.clone(), 1).await.unwrap();
        let refused = put(&b.scoped("ws_x"), key.clone(), 2).await;
        assert!(
            matches!(refused, Err(StoreError::Fenced(ref ws)) if ws == "ws_x"),
            "{refused:?}"
        );
        // Rows of no workspace are anyone's.
        put(&b, Key::new("d").str("note").build(), 3).await.unwrap();

        // What a node that starts now sees of ws_x once it may: a's write only.
        drop(a);
        tokio::time::sleep(Duration::from_millis(100)).await;
        let c = Store::open_postgres(&url, dir.path(), node("a", ttl, false)).unwrap();
        assert_eq!(
            c.cluster().unwrap().take("ws_x").unwrap(),
            Taken::Now,
            "a restart under the same name takes its lease back"
        );
        assert_eq!(c.get::<u64>(&key).unwrap(), Some(1));
        assert_eq!(
            c.get::<u64>(&Key::new("d").str("note").build()).unwrap(),
            Some(3)
        );
    }

    #[tokio::test]
    async fn a_deposed_owner_is_fenced_and_the_next_owner_loads_what_it_committed() {
        let url = test_postgres::fresh_url();
        let dir = tempfile::tempdir().unwrap();
        let ttl = Duration::from_secs(1);
        let a = Store::open_postgres(&url, dir.path(), node("a", ttl, false)).unwrap();
        let b = Store::open_postgres(&url, dir.path(), node("b", ttl, false)).unwrap();
        let (ca, cb) = (a.cluster().unwrap(), b.cluster().unwrap());
        let lost = Arc::new(std::sync::Mutex::new(Vec::new()));
        let told = lost.clone();
        ca.on_lost(Box::new(move |ws| {
            told.lock().unwrap().push(ws.to_string())
        }));
        assert_eq!(ca.take("ws_y").unwrap(), Taken::Now);
        let (one, two) = (
            Key::new("w").str("ws_y").id(1).build(),
            Key::new("w").str("ws_y").id(2).build(),
        );
        put(&a, one.clone(), 1).await.unwrap();
        // a stops renewing (cut off, paused...): its lease runs out and b takes over.
        tokio::time::sleep(ttl + Duration::from_millis(200)).await;
        assert!(
            !ca.holds("ws_y"),
            "a stops acting on a lease it could not renew"
        );
        assert_eq!(cb.take("ws_y").unwrap(), Taken::Now);
        assert_eq!(
            b.get::<u64>(&one).unwrap(),
            Some(1),
            "b loads what a committed"
        );
        // a still believes in its old epoch: its write is dropped, and it lets go.
        let refused = put(&a.scoped("ws_y"), two.clone(), 2).await;
        assert!(matches!(refused, Err(StoreError::Fenced(_))), "{refused:?}");
        assert_eq!(lost.lock().unwrap().as_slice(), ["ws_y".to_string()]);
        assert_eq!(
            ca.fenced_commits.load(Ordering::Relaxed),
            1,
            "counted for operators"
        );
        assert_eq!(a.get::<u64>(&one).unwrap(), None, "a dropped the lost rows");
        put(&b, two.clone(), 22).await.unwrap();
        let reader = Store::open_postgres(&url, dir.path(), node("reader", ttl, true)).unwrap();
        assert_eq!(reader.get::<u64>(&two).unwrap(), Some(22));
        assert_eq!(
            ca.renew().unwrap(),
            Vec::<String>::new(),
            "nothing left to lose"
        );
    }

    #[tokio::test]
    async fn nodes_never_hand_out_the_same_id() {
        let url = test_postgres::fresh_url();
        let dir = tempfile::tempdir().unwrap();
        let ttl = Duration::from_secs(10);
        let a = Store::open_postgres(&url, dir.path(), node("a", ttl, false)).unwrap();
        let b = Store::open_postgres(&url, dir.path(), node("b", ttl, false)).unwrap();
        let mut seen = std::collections::HashSet::new();
        for _ in 0..2500 {
            assert!(seen.insert(a.next_id().unwrap()));
            assert!(seen.insert(b.next_id().unwrap()));
        }
    }

    #[tokio::test]
    async fn postgres_ids_continue_after_a_clean_stop_and_never_repeat_after_a_crash() {
        let url = test_postgres::fresh_url();
        let dir = tempfile::tempdir().unwrap();
        {
            let store = reopen_postgres(&url, dir.path()).await;
            for i in 1..=6 {
                assert_eq!(store.next_id().unwrap(), i);
            }
            store.flush_now().unwrap();
        }
        let last = {
            let store = reopen_postgres(&url, dir.path()).await;
            assert_eq!(store.next_id().unwrap(), 7, "no gap after a clean stop");
            let mut last = 7;
            for _ in 0..250 {
                last = store.next_id().unwrap();
            }
            // Committed, but the counter is not settled: what a kill -9 leaves.
            store.engine.flush(&store.health).unwrap();
            last
        };
        let store = reopen_postgres(&url, dir.path()).await;
        let first = store.next_id().unwrap();
        assert!(
            first > last && first <= last + ids::BLOCK + 1,
            "{last} -> {first}"
        );
    }

    /// A write the database refused was answered 503: no later commit (a backup's) may
    /// store it after the database answers again.
    #[tokio::test]
    async fn a_backup_after_a_refused_commit_is_refused_and_stores_nothing_refused() {
        let url = test_postgres::fresh_url();
        let dir = tempfile::tempdir().unwrap();
        let store = reopen_postgres(&url, dir.path()).await;
        let mut b = Batch::default();
        b.put(Key::new("kept").build(), &1u64).unwrap();
        store.commit(b).await.unwrap();
        test_postgres::execute(
            &url,
            "CREATE TABLE refuse_now (x int);
             INSERT INTO refuse_now VALUES (1);
             CREATE FUNCTION refuse() RETURNS trigger AS $$
               BEGIN
                 IF EXISTS (SELECT 1 FROM refuse_now) THEN RAISE EXCEPTION 'refused'; END IF;
                 RETURN NEW;
               END $$ LANGUAGE plpgsql;
             CREATE TRIGGER refuse BEFORE INSERT OR UPDATE ON switchboard_kv
               FOR EACH ROW EXECUTE FUNCTION refuse();",
        );
        let phantom = Key::new("phantom").build();
        let mut b = Batch::default();
        b.put(phantom.clone(), &2u64).unwrap();
        assert!(store.commit(b).await.is_err(), "the database refused it");
        test_postgres::execute(&url, "DELETE FROM refuse_now;");

        let store_for_backup = store.clone();
        let backup = tokio::task::spawn_blocking(move || store_for_backup.backup(Vec::new()))
            .await
            .unwrap();
        assert!(backup.is_err(), "a failing store takes no backup");
        assert_eq!(test_postgres::rows_with_key(&url, &phantom), 0);
        assert_eq!(
            test_postgres::rows_with_key(&url, &Key::new("kept").build()),
            1
        );
    }

    #[tokio::test]
    async fn a_backup_of_the_postgres_engine_restores_into_a_sled_folder() {
        let url = test_postgres::fresh_url();
        let dir = tempfile::tempdir().unwrap();
        let store = reopen_postgres(&url, dir.path()).await;
        let mut b = Batch::default();
        b.put(Key::new("w").str("ws_b").id(1).build(), &"one".to_string())
            .unwrap();
        store.commit(b).await.unwrap();
        store
            .tree("idempotency")
            .unwrap()
            .insert(b"k", &7u64)
            .unwrap();
        let handed_out = store.next_id().unwrap();
        let file = dir.path().join("pg.bak");
        let summary = store.backup(std::fs::File::create(&file).unwrap()).unwrap();
        assert_eq!(
            summary.entries, 3,
            "the record, the id counter and the keyspace entry"
        );
        let restored = dir.path().join("restored");
        Store::restore(&file, &restored).unwrap();
        let sled = Store::open(&restored).unwrap();
        assert!(
            sled.next_id().unwrap() > handed_out,
            "ids go on above the backup's"
        );
        let v: Option<String> = sled.get(&Key::new("w").str("ws_b").id(1).build()).unwrap();
        assert_eq!(v.as_deref(), Some("one"));
        let kept: Vec<(Vec<u8>, u64)> = sled.tree("idempotency").unwrap().iter().collect();
        assert_eq!(kept, vec![(b"k".to_vec(), 7)]);
    }

    #[tokio::test]
    async fn commit_waits_for_the_disk_and_a_reopen_sees_it() {
        let dir = tempfile::tempdir().unwrap();
        {
            let store = Store::open(dir.path()).unwrap();
            let mut b = Batch::default();
            b.put(Key::new("c").id(1).build(), &"kept".to_string())
                .unwrap();
            store.commit(b).await.unwrap();
        }
        let store = reopen(dir.path()).await;
        let v: Option<String> = store.get(&Key::new("c").id(1).build()).unwrap();
        assert_eq!(v.as_deref(), Some("kept"));
    }

    #[tokio::test]
    async fn a_clean_stop_continues_ids_without_a_gap() {
        let dir = tempfile::tempdir().unwrap();
        for round in 0..3u64 {
            let store = if round == 0 {
                Store::open(dir.path()).unwrap()
            } else {
                reopen(dir.path()).await
            };
            for i in 1..=6 {
                assert_eq!(store.next_id().unwrap(), round * 6 + i);
            }
            store.flush_now().unwrap();
        }
    }

    #[tokio::test]
    async fn a_crash_skips_at_most_one_block_and_never_reuses_an_id() {
        let dir = tempfile::tempdir().unwrap();
        let mut last = 0;
        for _ in 0..3 {
            let store = reopen(dir.path()).await;
            let first = store.next_id().unwrap();
            assert!(first > last, "id {first} reused after {last}");
            assert!(
                first <= last + ids::BLOCK + 1,
                "gap too large: {last} -> {first}"
            );
            for _ in 0..250 {
                last = store.next_id().unwrap();
            }
            // Everything written reaches the disk, but the counter is not settled: the next
            // open sees what a kill -9 after the last flush would leave.
            store.engine.flush(&store.health).unwrap();
        }
    }
}
