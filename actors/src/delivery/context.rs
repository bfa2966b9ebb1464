//! What every delivery actor shares: the store, the clock, the rules, the idle time, the
//! HTTP sender, the counters and the report channel. The dispatcher owns one and hands it
//! to each endpoint actor, so the actors never need the dispatcher itself.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

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
    /// How long an endpoint actor with nothing to do waits before it stops, in ms.
    idle_after_ms: AtomicU64,
}

/// The idle time of endpoint actors until the registry sets its own (the workspace actors').
const IDLE_AFTER: Duration = Duration::from_secs(300);

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
            idle_after_ms: AtomicU64::new(IDLE_AFTER.as_millis() as u64),
        }
    }

    /// How long an endpoint actor with nothing to do waits before it stops.
    pub fn idle_after(&self) -> Duration {
        Duration::from_millis(self.idle_after_ms.load(Ordering::Relaxed))
    }

    pub(crate) fn set_idle_after(&self, idle: Duration) {
        self.idle_after_ms
            .store(idle.as_millis() as u64, Ordering::Relaxed);
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

    /// Passes a wave's outcomes, in order, to whoever holds the [`Reports`] end; see
    /// [`coalesce`].
    pub(crate) fn report(
        &self,
        ws: &WorkspaceId,
        endpoint: &EndpointId,
        outcomes: Vec<(LastDelivery, Outcome)>,
    ) {
        for (last, outcome) in coalesce(outcomes) {
            let report = Report {
                workspace: ws.clone(),
                endpoint: endpoint.clone(),
                last,
                outcome,
            };
            if self.reports.send(report).is_err() {
                tracing::warn!("a delivery outcome found no one to report to");
                return;
            }
        }
    }
}

/// Drops every success followed at once by another: the workspace keeps the same health
/// either way (a success clears the failure window and replaces `last_delivery`), so a
/// backlog that drains costs the workspace one message per wave, not one per delivery.
fn coalesce(outcomes: Vec<(LastDelivery, Outcome)>) -> Vec<(LastDelivery, Outcome)> {
    let mut kept: Vec<(LastDelivery, Outcome)> = Vec::with_capacity(outcomes.len());
    for (last, outcome) in outcomes {
        if outcome == Outcome::Delivered
            && kept
                .last()
                .is_some_and(|(_, before)| *before == Outcome::Delivered)
        {
            kept.pop();
        }
        kept.push((last, outcome));
    }
    kept
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::Timestamp;
    use crate::ids::{DeliveryId, EventId};

    fn outcome(id: u64, outcome: Outcome) -> (LastDelivery, Outcome) {
        let last = LastDelivery {
            delivery_id: DeliveryId(id),
            event_id: EventId::parse("evt_1").unwrap(),
            event_type: "tag.created".into(),
            delivered: outcome == Outcome::Delivered,
            status_code: None,
            error: None,
            attempted_at: Timestamp(chrono::Utc::now()),
        };
        (last, outcome)
    }

    #[test]
    fn only_the_last_of_consecutive_successes_is_reported_and_failures_all_are() {
        use Outcome::*;
        let wave = vec![
            outcome(1, Delivered),
            outcome(2, Delivered),
            outcome(3, Failed),
            outcome(4, Failed),
            outcome(5, Delivered),
            outcome(6, Delivered),
            outcome(7, Delivered),
            outcome(8, Gone),
        ];
        let kept: Vec<(u64, Outcome)> = coalesce(wave)
            .into_iter()
            .map(|(l, o)| (l.delivery_id.get(), o))
            .collect();
        assert_eq!(
            kept,
            vec![
                (2, Delivered),
                (3, Failed),
                (4, Failed),
                (7, Delivered),
                (8, Gone)
            ]
        );
    }
}
