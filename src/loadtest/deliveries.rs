//! Write-to-delivery correlation. Every webhook write (POST /tags) carries a tag name
//! made unique by the run's marker and a number ([`tag_name`]); the server copies the
//! tag into the event's `data`, so each delivery names the write that caused it, and a
//! late event of an earlier run names no write of this one. The ledger keeps each
//! write's send time, whether the server accepted it, and whether its event arrived:
//! write-to-delivery latency runs from the write's send time to the delivery's arrival.
//! An event id seen again (a redelivery) counts once. Requests whose signature does not
//! verify are only counted, as rejected.

use std::collections::{HashMap, HashSet};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde::Serialize;

use super::stats::{Latencies, Latency};

/// Tag names written by the load tester start with this.
const TAG_PREFIX: &str = "load ";

/// The tag name of webhook write number `n` of the run marked `run`.
pub fn tag_name(run: &str, n: u64) -> String {
    format!("{TAG_PREFIX}{run} {n}")
}

/// The write number a tag name carries, if the run marked `run` wrote it.
pub fn write_number(run: &str, tag_name: &str) -> Option<u64> {
    tag_name
        .strip_prefix(TAG_PREFIX)?
        .strip_prefix(run)?
        .strip_prefix(' ')?
        .parse()
        .ok()
}

/// One webhook write as far as it went.
#[derive(Debug, Clone, Copy)]
struct Write {
    sent: Instant,
    /// The server answered 201: an event is owed.
    accepted: bool,
    delivered: bool,
}

/// The ledger itself, without the lock (and so testable with made-up times).
#[derive(Debug, Default)]
pub struct Ledger {
    writes: HashMap<u64, Write>,
    event_ids: HashSet<String>,
    latencies: Latencies,
    /// Every correctly signed POST the receiver got, duplicates and strangers included.
    received: u64,
    /// POSTs without a valid signature: counted here and nowhere else.
    rejected: u64,
    accepted: u64,
    delivered: u64,
    /// Accepted and not yet delivered.
    owed: u64,
    duplicates: u64,
    unmatched: u64,
}

impl Ledger {
    /// Write `n` is being sent now (before the request leaves, so that no delivery can
    /// arrive before its write is known).
    pub fn sent(&mut self, n: u64, at: Instant) {
        self.writes.insert(
            n,
            Write {
                sent: at,
                accepted: false,
                delivered: false,
            },
        );
    }

    /// The server accepted write `n` (201): its event is expected.
    pub fn accepted(&mut self, n: u64) {
        if let Some(w) = self.writes.get_mut(&n) {
            if !w.accepted {
                w.accepted = true;
                self.accepted += 1;
                if !w.delivered {
                    self.owed += 1;
                }
            }
        }
    }

    /// A delivery of event `event_id` naming write `n` (if its tag name carried one)
    /// arrived at `at`.
    pub fn delivered(&mut self, event_id: Option<&str>, n: Option<u64>, at: Instant) {
        self.received += 1;
        if let Some(id) = event_id {
            if !self.event_ids.insert(id.to_string()) {
                self.duplicates += 1;
                return;
            }
        }
        match n.and_then(|n| self.writes.get_mut(&n)) {
            Some(w) if w.delivered => self.duplicates += 1,
            Some(w) => {
                w.delivered = true;
                self.delivered += 1;
                if w.accepted {
                    self.owed -= 1;
                }
                self.latencies.record(at.saturating_duration_since(w.sent));
            }
            None => self.unmatched += 1,
        }
    }

    /// A POST whose signature is missing or does not verify arrived.
    pub fn rejected(&mut self) {
        self.rejected += 1;
    }

    /// Accepted writes whose event has not arrived.
    pub fn undelivered(&self) -> u64 {
        self.owed
    }

    pub fn summary(&self) -> DeliverySummary {
        DeliverySummary {
            received: self.received,
            writes_accepted: self.accepted,
            delivered: self.delivered,
            undelivered: self.undelivered(),
            duplicates: self.duplicates,
            unmatched: self.unmatched,
            rejected: self.rejected,
            latency: self.latencies.summary(),
        }
    }
}

/// What the deliveries came to.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct DeliverySummary {
    /// Every correctly signed POST the receiver got, duplicates included.
    pub received: u64,
    /// Webhook writes the server answered 201.
    pub writes_accepted: u64,
    /// Distinct events that arrived for the load tester's writes.
    pub delivered: u64,
    /// Accepted writes whose event had not arrived when the report was made.
    pub undelivered: u64,
    /// Deliveries of an event already received.
    pub duplicates: u64,
    /// Signed deliveries that named no write of this run.
    pub unmatched: u64,
    /// POSTs refused for a missing or bad signature (or an endpoint this run did not
    /// make); not deliveries, duplicates or unmatched.
    pub rejected: u64,
    /// From the write's send time to the delivery's arrival.
    pub latency: Latency,
}

/// The ledger shared by the workers (who send) and the receiver (who is delivered to).
#[derive(Debug, Default)]
pub struct Deliveries(Mutex<Ledger>);

impl Deliveries {
    fn with<T>(&self, f: impl FnOnce(&mut Ledger) -> T) -> T {
        // A panic elsewhere while holding the lock leaves figures that are still counts.
        let mut ledger = self.0.lock().unwrap_or_else(|e| e.into_inner());
        f(&mut ledger)
    }

    pub fn sent(&self, n: u64, at: Instant) {
        self.with(|l| l.sent(n, at));
    }

    pub fn accepted(&self, n: u64) {
        self.with(|l| l.accepted(n));
    }

    pub fn delivered(&self, event_id: Option<&str>, n: Option<u64>, at: Instant) {
        self.with(|l| l.delivered(event_id, n, at));
    }

    pub fn rejected(&self) {
        self.with(|l| l.rejected());
    }

    pub fn undelivered(&self) -> u64 {
        self.with(|l| l.undelivered())
    }

    pub fn summary(&self) -> DeliverySummary {
        self.with(|l| l.summary())
    }

    /// Waits until every accepted write was delivered, or `limit` passed; answers how
    /// long it waited.
    pub async fn drain(&self, limit: Duration) -> Duration {
        let started = tokio::time::Instant::now();
        while self.undelivered() > 0 && started.elapsed() < limit {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        started.elapsed()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tag_names_carry_their_write_number_for_their_own_run_only() {
        assert_eq!(write_number("a1b2", &tag_name("a1b2", 42)), Some(42));
        assert_eq!(write_number("a1b2", &tag_name("ffff", 42)), None);
        assert_eq!(write_number("a1b2", "load 42"), None);
        assert_eq!(write_number("a1b2", "load a1b2 x"), None);
        assert_eq!(write_number("a1b2", "VIP"), None);
    }

    #[test]
    fn each_delivery_is_matched_to_its_write_and_timed_from_the_send() {
        let t0 = Instant::now();
        let ms = |n: u64| t0 + Duration::from_millis(n);
        let mut l = Ledger::default();
        for n in 0..4 {
            l.sent(n, ms(n * 10));
        }
        for n in 0..3 {
            l.accepted(n);
        }
        // Write 3 failed: no event owed. Write 2's event has not come yet.
        l.delivered(Some("evt_a"), Some(0), ms(5));
        l.delivered(Some("evt_b"), Some(1), ms(30));
        assert_eq!(l.undelivered(), 1);
        l.delivered(Some("evt_c"), Some(2), ms(60));
        let s = l.summary();
        assert_eq!(
            (s.received, s.writes_accepted, s.delivered, s.undelivered),
            (3, 3, 3, 0)
        );
        // Latencies 5, 20 and 40 ms.
        assert_eq!(s.latency.max_ms, 40.0);
        assert!((s.latency.p50_ms - 20.0).abs() < 0.05, "{s:?}");
    }

    #[test]
    fn a_redelivered_event_counts_once_and_strangers_are_set_apart() {
        let t0 = Instant::now();
        let mut l = Ledger::default();
        l.sent(7, t0);
        l.accepted(7);
        l.accepted(7);
        l.delivered(Some("evt_x"), Some(7), t0 + Duration::from_millis(3));
        l.delivered(Some("evt_x"), Some(7), t0 + Duration::from_secs(9));
        // Another event for the same write (no id to tell them apart): still once.
        l.delivered(None, Some(7), t0 + Duration::from_secs(9));
        l.delivered(Some("evt_y"), None, t0);
        l.delivered(Some("evt_z"), Some(999), t0);
        l.rejected();
        let s = l.summary();
        assert_eq!(s.received, 5);
        assert_eq!(s.rejected, 1);
        assert_eq!((s.writes_accepted, s.delivered, s.undelivered), (1, 1, 0));
        assert_eq!((s.duplicates, s.unmatched), (2, 2));
        assert_eq!(s.latency.max_ms, 3.0);
    }

    #[test]
    fn an_event_that_arrives_before_its_write_is_answered_still_counts() {
        let t0 = Instant::now();
        let mut l = Ledger::default();
        l.sent(1, t0);
        l.delivered(Some("evt_early"), Some(1), t0 + Duration::from_millis(1));
        l.accepted(1);
        let s = l.summary();
        assert_eq!((s.delivered, s.undelivered), (1, 0));
    }

    #[tokio::test]
    async fn the_drain_ends_once_the_last_owed_event_arrives() {
        let d = std::sync::Arc::new(Deliveries::default());
        let limit = Duration::from_secs(60);
        // Nothing owed: no wait at all.
        assert!(d.drain(limit).await < limit);
        d.sent(1, Instant::now());
        d.accepted(1);
        let late = d.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(30)).await;
            late.delivered(Some("evt_1"), Some(1), Instant::now());
        });
        assert!(d.drain(limit).await < limit);
        assert_eq!(d.undelivered(), 0);
        assert_eq!(d.summary().delivered, 1);
    }
}
