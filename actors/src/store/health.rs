//! Whether the store can take writes. sled stops accepting writes for the rest of the
//! process after an I/O failure (a full disk, for instance), even once the cause is gone,
//! so the first failure is remembered here: the edge answers writes with 503 instead of
//! trying, `/health` reports it, and [`Health::probe`] tells the process when the disk
//! takes writes again so that it can restart on a fresh store.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

use chrono::{DateTime, Utc};

use super::{StoreError, StoreResult};

/// Why the store stopped taking writes, and since when.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    pub reason: String,
    pub since: DateTime<Utc>,
}

/// What a probe of a failing store found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Probe {
    /// The store takes writes.
    Healthy,
    /// The data folder still refuses writes.
    StillFailing,
    /// The data folder takes writes again, but this process's store cannot: restart.
    RestartNeeded,
}

/// Bytes the probe writes: enough that a nearly full disk does not pass by luck.
const PROBE_BYTES: usize = 1 << 20;

#[derive(Debug)]
pub struct Health {
    failing: AtomicBool,
    failure: Mutex<Option<Failure>>,
    dir: PathBuf,
}

impl Health {
    pub(super) fn new(dir: &Path) -> Self {
        Self {
            failing: AtomicBool::new(false),
            failure: Mutex::new(None),
            dir: dir.to_path_buf(),
        }
    }

    /// Cheap enough for every request.
    pub fn is_failing(&self) -> bool {
        self.failing.load(Ordering::Acquire)
    }

    pub fn failure(&self) -> Option<Failure> {
        self.failure.lock().ok().and_then(|f| f.clone())
    }

    /// Remembers the first failure; later ones keep its time.
    pub(super) fn fail(&self, reason: &str) {
        if let Ok(mut f) = self.failure.lock() {
            if f.is_none() {
                tracing::error!(%reason, "the store stopped taking writes");
                *f = Some(Failure {
                    reason: reason.to_string(),
                    since: Utc::now(),
                });
            }
        }
        self.failing.store(true, Ordering::Release);
    }

    /// Refuses at once while the store is failing: sled would refuse anyway.
    pub(super) fn writable(&self) -> StoreResult<()> {
        if !self.is_failing() {
            return Ok(());
        }
        let reason = self.failure().map(|f| f.reason).unwrap_or_default();
        Err(StoreError::Unavailable(reason))
    }

    /// Passes a sled result through, remembering an I/O failure.
    pub(super) fn watch<T>(&self, result: Result<T, sled::Error>) -> StoreResult<T> {
        result.map_err(|e| {
            if matches!(e, sled::Error::Io(_) | sled::Error::Corruption { .. }) {
                self.fail(&e.to_string());
            }
            StoreError::Sled(e)
        })
    }

    /// Whether the data folder takes a synced write of [`PROBE_BYTES`] again. A failing
    /// sled does not recover in process, so a folder that takes writes means a restart.
    pub fn probe(&self) -> Probe {
        if !self.is_failing() {
            return Probe::Healthy;
        }
        let path = self.dir.join(".space-probe");
        let wrote = std::fs::File::create(&path).and_then(|mut f| {
            f.write_all(&vec![0u8; PROBE_BYTES])?;
            f.sync_all()
        });
        let _ = std::fs::remove_file(&path);
        match wrote {
            Ok(()) => Probe::RestartNeeded,
            Err(_) => Probe::StillFailing,
        }
    }
}
