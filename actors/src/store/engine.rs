//! The two storage engines behind [`super::Store`]: sled, a folder on this machine (the
//! default), and PostgreSQL, for several machines over one database (see [`super::postgres`]).
//!
//! Both offer the same few operations the store is built on: read one key, walk a key
//! range in either direction, apply batches atomically (visible to reads at once), and
//! flush (everything applied so far becomes durable). Everything else in the store is
//! written once, over these.

use std::collections::HashSet;
use std::ops::Bound;
use std::sync::Arc;

use super::health::Health;
use super::mirror::Owner;
use super::postgres::Postgres;
use super::span::{Span, Visit};
use super::{Batch, StoreResult};

/// Workspaces whose writes a flush dropped: this node no longer owns them.
pub(super) type Fenced = HashSet<Owner>;

#[derive(Clone)]
pub(super) enum Engine {
    Sled(sled::Db),
    Postgres(Arc<Postgres>),
}

impl Engine {
    /// Hands the value under `key`, if any, to `read`.
    pub fn get<R>(
        &self,
        key: &[u8],
        read: impl FnOnce(&[u8]) -> StoreResult<R>,
    ) -> StoreResult<Option<R>> {
        match self {
            Engine::Sled(db) => db.get(key)?.map(|v| read(&v)).transpose(),
            Engine::Postgres(pg) => pg.mirror().get(b"", key, read),
        }
    }

    /// Hands every entry of `span` to `visit`, in order, until it says stop.
    pub fn walk(&self, span: Span, visit: Visit<'_>) -> StoreResult<()> {
        match self {
            Engine::Sled(db) => {
                let range = db.range::<Vec<u8>, _>((span.from, span.to));
                let entries: Box<dyn Iterator<Item = sled::Result<(sled::IVec, sled::IVec)>>> =
                    if span.backwards {
                        Box::new(range.rev())
                    } else {
                        Box::new(range)
                    };
                for entry in entries {
                    let (k, v) = entry?;
                    if !visit(&k, &v)? {
                        break;
                    }
                }
                Ok(())
            }
            Engine::Postgres(pg) => pg.mirror().walk(b"", span, visit),
        }
    }

    /// Applies `batches` (each with the workspace of the handle that wrote it) in order as
    /// one atomic write, visible to reads once this returns.
    pub fn apply(&self, batches: Vec<(Option<Owner>, Batch)>, health: &Health) -> StoreResult<()> {
        match self {
            Engine::Sled(db) => {
                let mut merged = sled::Batch::default();
                for (_, batch) in batches {
                    // A later write to the same key replaces an earlier one, as applying the
                    // batches one after the other would.
                    for (k, v) in batch.0 {
                        match v {
                            Some(v) => merged.insert(k, v),
                            None => merged.remove(k),
                        }
                    }
                }
                health.watch(db.apply_batch(merged))
            }
            Engine::Postgres(pg) => {
                for (scope, batch) in batches {
                    pg.mirror().apply(b"", scope.as_ref(), batch.0);
                }
                Ok(())
            }
        }
    }

    /// Makes everything applied before this call durable, but the writes of workspaces this
    /// node no longer owns (cluster mode), which it returns.
    pub fn flush(&self, health: &Health) -> StoreResult<Fenced> {
        match self {
            Engine::Sled(db) => health.watch(db.flush()).map(|_| Fenced::new()),
            Engine::Postgres(pg) => pg.commit_for_writers(),
        }
    }

    /// One write outside any batch, applied at once (durable with the next flush).
    pub fn insert(&self, key: &[u8], value: Vec<u8>, health: &Health) -> StoreResult<()> {
        match self {
            Engine::Sled(db) => health.watch(db.insert(key, value)).map(|_| ()),
            Engine::Postgres(pg) => {
                pg.mirror().apply(b"", None, [(key.to_vec(), Some(value))]);
                Ok(())
            }
        }
    }

    /// The names of every keyspace; the main one's is empty.
    pub fn spaces(&self) -> StoreResult<Vec<Vec<u8>>> {
        match self {
            Engine::Sled(db) => {
                let main = db.name();
                Ok(db
                    .tree_names()
                    .into_iter()
                    .map(|n| if n == main { Vec::new() } else { n.to_vec() })
                    .collect())
            }
            Engine::Postgres(pg) => Ok(pg.mirror().spaces()),
        }
    }

    /// Every entry of the keyspace `space` (empty: the main one), in key order.
    pub fn walk_space(&self, space: &[u8], visit: Visit<'_>) -> StoreResult<()> {
        let everything = Span {
            from: Bound::Unbounded,
            to: Bound::Unbounded,
            backwards: false,
        };
        match self {
            Engine::Sled(_) if space.is_empty() => self.walk(everything, visit),
            Engine::Sled(db) => {
                for entry in db.open_tree(space)?.iter() {
                    let (k, v) = entry?;
                    if !visit(&k, &v)? {
                        break;
                    }
                }
                Ok(())
            }
            Engine::Postgres(pg) => pg.mirror().walk(space, everything, visit),
        }
    }

    /// Bytes the data takes: sled's files, or the stored keys and values in PostgreSQL.
    pub fn size(&self) -> u64 {
        match self {
            Engine::Sled(db) => db.size_on_disk().unwrap_or(0),
            Engine::Postgres(pg) => pg.mirror().bytes(),
        }
    }
}
