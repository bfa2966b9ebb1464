//! What every delivery actor shares: the store, the clock, the rules, the HTTP sender, the
//! counters and the report channel. The dispatcher owns one and hands it to each endpoint
//! actor, so the actors never need the dispatcher itself.

use std::sync::atomic::{AtomicU64, Ordering};

use chrono::{DateTime, Utc};
use dashmap::DashMap;
use tokio::sync::mpsc;

use super::sender::{Outcome, Sender};
use super::DeliverySettings;
use crate::clock::SharedClock;
use crate::domain::webhook::LastDelivery;
use crate::ids::{EndpointId, WorkspaceId};
use crate::store::Store;

/// Delivery counters for operators.
#[derive(Debug, Default)]
pub struct DeliveryStats {
    pub delivered: AtomicU64,
    pub failed_attempts: AtomicU64,
    pub gone: AtomicU64,
    pub retries_scheduled: AtomicU64,
    pub endpoints_disabled: AtomicU64,
}

/// An attempt's outcome, for the endpoint's workspace (which keeps the endpoint's health).
#[derive(Debug, Clone)]
pub struct Report {
    pub workspace: WorkspaceId,
    pub endpoint: EndpointId,
    pub last: LastDelivery,
    pub outcome: Outcome,
}

/// The receiving end of the dispatcher's reports; it closes when the dispatcher is gone.
pub type Reports = mpsc::UnboundedReceiver<Report>;

pub struct DeliveryContext {
    store: Store,
    clock: SharedClock,
    settings: DeliverySettings,
    sender: Sender,
    /// Deliveries waiting, per endpoint.
    pending: DashMap<String, usize>,
    reports: mpsc::UnboundedSender<Report>,
    stats: DeliveryStats,
}

impl DeliveryContext {
    pub(crate) fn new(
        store: Store,
        clock: SharedClock,
        settings: DeliverySettings,
        sender: Sender,
        reports: mpsc::UnboundedSender<Report>,
    ) -> Self {
        Self {
            store,
            clock,
            settings,
            sender,
            pending: DashMap::new(),
            reports,
            stats: DeliveryStats::default(),
        }
    }

    pub fn settings(&self) -> &DeliverySettings {
        &self.settings
    }

    pub fn stats(&self) -> &DeliveryStats {
        &self.stats
    }

    pub fn now(&self) -> DateTime<Utc> {
        self.clock.now()
    }

    pub(crate) fn store(&self) -> &Store {
        &self.store
    }

    pub(crate) fn sender(&self) -> &Sender {
        &self.sender
    }

    /// Deliveries waiting, over every endpoint (or one).
    pub fn pending(&self, endpoint: Option<&str>) -> usize {
        match endpoint {
            Some(id) => self.pending.get(id).map_or(0, |n| *n),
            None => self.pending.iter().map(|n| *n).sum(),
        }
    }

    pub(crate) fn set_pending(&self, endpoint: &str, n: usize) {
        self.pending.insert(endpoint.to_string(), n);
    }

    /// An endpoint was deleted: it has nothing waiting any more.
    pub(crate) fn forget(&self, endpoint: &str) {
        self.pending.remove(endpoint);
    }

    pub(crate) fn count_attempt(&self, outcome: Outcome) {
        let s = &self.stats;
        match outcome {
            Outcome::Delivered => s.delivered.fetch_add(1, Ordering::Relaxed),
            Outcome::Failed => s.failed_attempts.fetch_add(1, Ordering::Relaxed),
            Outcome::Gone => s.gone.fetch_add(1, Ordering::Relaxed),
        };
    }

    pub(crate) fn count_retry(&self) {
        self.stats.retries_scheduled.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn count_disabled(&self) {
        self.stats
            .endpoints_disabled
            .fetch_add(1, Ordering::Relaxed);
    }

    /// Passes an attempt's outcome to whoever holds the [`Reports`] end.
    pub(crate) fn report(
        &self,
        ws: &WorkspaceId,
        endpoint: &EndpointId,
        last: LastDelivery,
        outcome: Outcome,
    ) {
        let report = Report {
            workspace: ws.clone(),
            endpoint: endpoint.clone(),
            last,
            outcome,
        };
        if self.reports.send(report).is_err() {
            tracing::warn!("a delivery outcome found no one to report to");
        }
    }
}
