//! What operators see of the actors. ractor mailboxes are unbounded and expose no length,
//! so each actor's depth is counted here: +1 when a message is sent through the registry
//! or dispatcher, -1 when the actor starts handling it. Aggregates go to the `metrics`
//! facade (no per-workspace labels); per-actor figures are read from an [`ActorBook`].

use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Instant;

use metrics::{Counter, Gauge, Histogram};

use dashmap::DashMap;
use serde::Serialize;

/// One live actor's counters.
#[derive(Debug)]
pub struct ActorStats {
    pub kind: &'static str,
    pub key: String,
    depth: AtomicI64,
    handled: AtomicU64,
    last_active_ms: AtomicI64,
    metrics: Arc<KindMetrics>,
}

/// Whether the service's metrics recorder is installed: a handle taken before is a no-op
/// for good, so none is kept until then.
static RECORDER_INSTALLED: AtomicBool = AtomicBool::new(false);

/// The service installed its metrics recorder: handles taken from now on may be kept.
pub fn recorder_installed() {
    RECORDER_INSTALLED.store(true, Ordering::Release);
}

/// The metric handles of one kind of actor, looked up once: a lookup by name and labels
/// on every message cost more than the update itself.
#[derive(Debug)]
struct KindMetrics {
    kind: &'static str,
    /// Kept from the first use after the recorder was installed.
    fixed: OnceLock<(Gauge, Histogram)>,
    /// `switchboard_actor_messages_total` per message kind (a dozen at most).
    messages: Mutex<Vec<(&'static str, Counter)>>,
}

impl KindMetrics {
    fn new(kind: &'static str) -> Self {
        Self {
            kind,
            fixed: OnceLock::new(),
            messages: Mutex::default(),
        }
    }

    fn depth(&self, change: f64) {
        self.with_fixed(|(gauge, _)| gauge.increment(change));
    }

    fn handled_in(&self, seconds: f64) {
        self.with_fixed(|(_, histogram)| histogram.record(seconds));
    }

    fn with_fixed(&self, update: impl FnOnce(&(Gauge, Histogram))) {
        let lookup = || {
            (
                metrics::gauge!("switchboard_actor_mailbox_depth", "kind" => self.kind),
                metrics::histogram!("switchboard_actor_handle_seconds", "kind" => self.kind),
            )
        };
        match RECORDER_INSTALLED.load(Ordering::Acquire) {
            true => update(self.fixed.get_or_init(lookup)),
            false => update(&lookup()),
        }
    }

    fn count_message(&self, message: &'static str) {
        let lookup = || metrics::counter!("switchboard_actor_messages_total", "kind" => self.kind, "message" => message);
        if !RECORDER_INSTALLED.load(Ordering::Acquire) {
            lookup().increment(1);
            return;
        }
        let mut counters = self.messages.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((_, c)) = counters.iter().find(|(m, _)| *m == message) {
            c.increment(1);
            return;
        }
        let c = lookup();
        c.increment(1);
        counters.push((message, c));
    }
}

/// The depth of figures that left their book: the messages still in the mailbox were
/// taken off the gauge when they left, so none is counted on it again (the actor still
/// takes them, and a message told after the removal was never put on it).
const LEFT: i64 = i64::MIN / 2;

impl ActorStats {
    /// A message was put in the mailbox.
    pub fn sent(&self) {
        if self.depth.fetch_add(1, Ordering::AcqRel) >= 0 {
            self.metrics.depth(1.0);
        }
    }

    /// The actor took a counted message out of its mailbox.
    pub fn received(&self) {
        if self.depth.fetch_sub(1, Ordering::AcqRel) > 0 {
            self.metrics.depth(-1.0);
        }
    }

    /// These figures leave their book: the messages still waiting come off the gauge
    /// now, once, and later sends and takes leave it alone.
    fn leave_gauge(&self) {
        let left = self.depth.swap(LEFT, Ordering::AcqRel);
        if left > 0 {
            self.metrics.depth(-(left as f64));
        }
    }

    fn depth(&self) -> i64 {
        self.depth.load(Ordering::Relaxed).max(0)
    }

    /// A message was handled; `message` names its kind.
    pub fn handled(&self, message: &'static str, started: Instant) {
        self.handled.fetch_add(1, Ordering::Relaxed);
        self.last_active_ms
            .store(chrono::Utc::now().timestamp_millis(), Ordering::Relaxed);
        self.metrics.count_message(message);
        self.metrics.handled_in(started.elapsed().as_secs_f64());
    }

    pub fn snapshot(&self) -> ActorSnapshot {
        let last = self.last_active_ms.load(Ordering::Relaxed);
        ActorSnapshot {
            kind: self.kind,
            key: self.key.clone(),
            mailbox_depth: self.depth(),
            messages_handled: self.handled.load(Ordering::Relaxed),
            last_active: chrono::DateTime::from_timestamp_millis(last)
                .map(|t| crate::clock::rfc3339_millis::format(&t)),
            last_active_ms: last,
        }
    }
}

/// A live actor as the operator API shows it.
#[derive(Debug, Clone, Serialize)]
pub struct ActorSnapshot {
    pub kind: &'static str,
    pub key: String,
    pub mailbox_depth: i64,
    pub messages_handled: u64,
    pub last_active: Option<String>,
    /// `last_active` in Unix milliseconds, to order by.
    #[serde(skip)]
    pub last_active_ms: i64,
}

/// The live actors of one kind, and how many of them started and stopped on their own.
#[derive(Debug, Clone)]
pub struct ActorBook {
    kind: &'static str,
    actors: Arc<DashMap<String, Arc<ActorStats>>>,
    lifecycle: Arc<Lifecycle>,
    metrics: Arc<KindMetrics>,
}

/// Starts and stops of one kind of actor since the process started.
#[derive(Debug, Default)]
pub struct Lifecycle {
    pub spawned: AtomicU64,
    /// Stopped idle, to start again on next use.
    pub passivations: AtomicU64,
    /// Stopped by a failure, to start again from the store on next use.
    pub restarts: AtomicU64,
}

impl ActorBook {
    pub fn new(kind: &'static str) -> Self {
        Self {
            kind,
            actors: Arc::default(),
            lifecycle: Arc::default(),
            metrics: Arc::new(KindMetrics::new(kind)),
        }
    }

    pub fn lifecycle(&self) -> &Lifecycle {
        &self.lifecycle
    }

    pub fn kind(&self) -> &'static str {
        self.kind
    }

    /// Registers a new actor under `key` (replacing a previous one's figures).
    pub fn enter(&self, key: &str) -> Arc<ActorStats> {
        let stats = Arc::new(ActorStats {
            kind: self.kind,
            key: key.to_string(),
            depth: AtomicI64::new(0),
            handled: AtomicU64::new(0),
            last_active_ms: AtomicI64::new(chrono::Utc::now().timestamp_millis()),
            metrics: self.metrics.clone(),
        });
        if let Some(old) = self.actors.insert(key.to_string(), stats.clone()) {
            old.leave_gauge();
        }
        stats
    }

    /// Removes an actor that stopped, if `stats` are still its figures.
    pub fn leave(&self, key: &str, stats: &Arc<ActorStats>) {
        let removed = self.actors.remove_if(key, |_, s| Arc::ptr_eq(s, stats));
        if let Some((_, s)) = removed {
            s.leave_gauge();
        }
    }

    pub fn get(&self, key: &str) -> Option<Arc<ActorStats>> {
        self.actors.get(key).map(|s| s.clone())
    }

    pub fn live(&self) -> usize {
        self.actors.len()
    }

    pub fn snapshot(&self) -> Vec<ActorSnapshot> {
        self.actors.iter().map(|s| s.snapshot()).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A recorder that counts the updates it receives, whatever the metric.
    struct Counting(Arc<AtomicU64>);

    impl metrics::CounterFn for Counting {
        fn increment(&self, _: u64) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
        fn absolute(&self, _: u64) {}
    }

    impl metrics::GaugeFn for Counting {
        fn increment(&self, _: f64) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
        fn decrement(&self, _: f64) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
        fn set(&self, _: f64) {}
    }

    impl metrics::HistogramFn for Counting {
        fn record(&self, _: f64) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    impl metrics::Recorder for Counting {
        fn describe_counter(
            &self,
            _: metrics::KeyName,
            _: Option<metrics::Unit>,
            _: metrics::SharedString,
        ) {
        }
        fn describe_gauge(
            &self,
            _: metrics::KeyName,
            _: Option<metrics::Unit>,
            _: metrics::SharedString,
        ) {
        }
        fn describe_histogram(
            &self,
            _: metrics::KeyName,
            _: Option<metrics::Unit>,
            _: metrics::SharedString,
        ) {
        }
        fn register_counter(&self, _: &metrics::Key, _: &metrics::Metadata<'_>) -> Counter {
            Counter::from_arc(Arc::new(Counting(self.0.clone())))
        }
        fn register_gauge(&self, _: &metrics::Key, _: &metrics::Metadata<'_>) -> Gauge {
            Gauge::from_arc(Arc::new(Counting(self.0.clone())))
        }
        fn register_histogram(&self, _: &metrics::Key, _: &metrics::Metadata<'_>) -> Histogram {
            Histogram::from_arc(Arc::new(Counting(self.0.clone())))
        }
    }

    #[test]
    fn no_handle_is_kept_before_the_recorder_is_installed() {
        let book = ActorBook::new("test");
        let stats = book.enter("a");
        let use_all = || {
            stats.sent();
            stats.received();
            stats.handled("wake", Instant::now());
        };
        // Before the service installs its recorder (endpoint actors resume at start).
        use_all();
        let updates = Arc::new(AtomicU64::new(0));
        let recorder = Counting(updates.clone());
        metrics::with_local_recorder(&recorder, use_all);
        assert_eq!(updates.load(Ordering::SeqCst), 4, "updates that reached it");
        // Installed: the handles taken now are kept and still reach it.
        recorder_installed();
        metrics::with_local_recorder(&recorder, use_all);
        use_all();
        assert_eq!(updates.load(Ordering::SeqCst), 12);
    }

    #[test]
    fn depth_counts_sent_minus_received_and_handled_counts_up() {
        let book = ActorBook::new("test");
        let s = book.enter("a");
        s.sent();
        s.sent();
        s.received();
        s.handled("ping", Instant::now());
        let snap = book.snapshot();
        assert_eq!(snap.len(), 1);
        assert_eq!(snap[0].mailbox_depth, 1);
        assert_eq!(snap[0].messages_handled, 1);
        book.leave("a", &s);
        assert_eq!(book.live(), 0);
    }

    #[test]
    fn figures_that_left_their_book_count_nothing_more() {
        let book = ActorBook::new("test");
        let s = book.enter("a");
        s.sent();
        s.sent();
        book.leave("a", &s);
        // Taken after leaving (already off the gauge), and one more told afterwards.
        s.received();
        s.sent();
        s.received();
        s.received();
        assert!(s.depth.load(Ordering::Relaxed) < 0, "marked as left");
        assert_eq!(s.snapshot().mailbox_depth, 0);
    }

    #[test]
    fn a_stale_actor_does_not_remove_its_successor() {
        let book = ActorBook::new("test");
        let old = book.enter("a");
        let _new = book.enter("a");
        book.leave("a", &old);
        assert_eq!(book.live(), 1);
    }
}
