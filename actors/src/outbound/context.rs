//! What every relay actor shares: the store, the clock, the rules, the HTTP sender, the
//! counters and the report channel.

use std::sync::atomic::{AtomicU64, Ordering};

use chrono::{DateTime, Utc};
use tokio::sync::mpsc;

use super::{OutboundSettings, SendReport};
use crate::clock::SharedClock;
use crate::delivery::sender::Sender;
use crate::store::Store;

/// Relay counters for operators.
#[derive(Debug, Default)]
pub struct RelayStats {
    pub sent: AtomicU64,
    pub failed_attempts: AtomicU64,
    pub retries_scheduled: AtomicU64,
    pub failed_messages: AtomicU64,
}

pub struct RelayContext {
    pub(crate) store: Store,
    clock: SharedClock,
    pub(crate) settings: OutboundSettings,
    pub(crate) sender: Sender,
    reports: mpsc::UnboundedSender<SendReport>,
    pub(crate) stats: RelayStats,
}

impl RelayContext {
    pub(crate) fn new(
        store: Store,
        clock: SharedClock,
        settings: OutboundSettings,
        sender: Sender,
        reports: mpsc::UnboundedSender<SendReport>,
    ) -> Self {
        Self {
            store,
            clock,
            settings,
            sender,
            reports,
            stats: RelayStats::default(),
        }
    }

    pub(crate) fn now(&self) -> DateTime<Utc> {
        self.clock.now()
    }

    /// Passes a final outcome to whoever holds the [`SendReports`] end.
    pub(crate) fn report(&self, report: SendReport) {
        let counter = match report.result {
            Ok(()) => &self.stats.sent,
            Err(_) => &self.stats.failed_messages,
        };
        counter.fetch_add(1, Ordering::Relaxed);
        if self.reports.send(report).is_err() {
            tracing::warn!("a send outcome found no one to report to");
        }
    }
}
