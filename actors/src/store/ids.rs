//! Integer ids: one counter for the whole service, never reused, with at most a small gap
//! after a crash and none after a clean stop.
//!
//! The store keeps a *ceiling*: every id handed out is at or below it. Ids are handed out
//! from memory; when the counter nears the ceiling, a new ceiling one block higher is
//! written into the log. Because the log is recovered as a prefix, a record that carries an
//! id can only survive a crash together with a ceiling at or above that id, so a restart
//! that starts above the stored ceiling never reuses one. A clean stop stores the exact
//! last id, so the next start continues without a gap.

use std::sync::Mutex;

use super::engine::Engine;
use super::health::Health;
use super::{decode, encode, StoreError, StoreResult, ID_CEILING_KEY as CEILING_KEY};

/// Ids reserved per ceiling write; the most a crash can skip.
pub const BLOCK: u64 = 100;

pub(super) struct IdAllocator {
    state: Mutex<Counter>,
}

struct Counter {
    /// The last id handed out.
    last: u64,
    /// The highest id covered by a ceiling written to the log.
    ceiling: u64,
}

impl IdAllocator {
    /// Starts above everything a previous run may have handed out. A store written before
    /// ceilings existed continues above sled's own generator, which has the same guarantee.
    pub(super) fn open(engine: &Engine) -> StoreResult<Self> {
        let last = match (engine.get(CEILING_KEY, decode::<u64>)?, engine) {
            (Some(last), _) => last,
            (None, Engine::Sled(db)) if db.was_recovered() => db.generate_id()?,
            (None, _) => 0,
        };
        Ok(Self {
            state: Mutex::new(Counter {
                last,
                ceiling: last,
            }),
        })
    }

    /// The next id. Writes a new ceiling when the counter is half a block below it, so the
    /// ceiling normally reaches the disk with an earlier flush, long before it is needed.
    pub(super) fn next(&self, engine: &Engine, health: &Health) -> StoreResult<u64> {
        let mut c = self
            .state
            .lock()
            .map_err(|_| StoreError::Codec("id counter poisoned".into()))?;
        let id = c.last + 1;
        if id + BLOCK / 2 > c.ceiling {
            let ceiling = id + BLOCK;
            engine.insert(CEILING_KEY, encode(&ceiling)?, health)?;
            c.ceiling = ceiling;
        }
        c.last = id;
        Ok(id)
    }

    /// Lowers the ceiling to the last id handed out, for a clean stop: the next start then
    /// continues with the very next id.
    pub(super) fn settle(&self, engine: &Engine, health: &Health) -> StoreResult<()> {
        let mut c = self
            .state
            .lock()
            .map_err(|_| StoreError::Codec("id counter poisoned".into()))?;
        engine.insert(CEILING_KEY, encode(&c.last)?, health)?;
        c.ceiling = c.last;
        Ok(())
    }
}
