//! Durable timers: follow-ups, auto-close, reminders, appointment reminders, scheduled
//! campaigns. They fire after a restart and for passivated workspaces, exactly once.
//!
//! - A timer is one key in the store, `tq/<due ms>/<workspace>/<name>`, written and
//!   deleted in the same atomic batch as the change that arms or disarms it; the owning
//!   record keeps the due time, so it can name the key to delete.
//! - One [`Scheduler`] walks the keys that are due (the queue is ordered by due time, so a
//!   look reads only those) and hands each to a [`TimerSink`] (the registry, which wakes or
//!   respawns the workspace actor). It reads time from the injectable clock.
//! - Exactly once: the workspace actor applies a timer's effect and deletes its key in one
//!   batch, and ignores a timer whose record no longer expects it. A timer handed over but
//!   not yet deleted (the actor is slow, or the process died) is handed over again later,
//!   which is harmless for the same reason.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use chrono::{DateTime, TimeZone, Utc};

use crate::clock::SharedClock;
use crate::ids::WorkspaceId;
use crate::store::{Batch, Store};

const QUEUE: &[u8] = b"tq/";

/// One due timer as the owner sees it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Timer {
    pub workspace: WorkspaceId,
    /// Names the timer within its workspace, e.g. `conversation/12/followup`.
    pub name: String,
    pub due_at: DateTime<Utc>,
}

impl Timer {
    pub fn new(workspace: &WorkspaceId, name: impl Into<String>, due_at: DateTime<Utc>) -> Self {
        Self {
            workspace: workspace.clone(),
            name: name.into(),
            due_at,
        }
    }

    fn key(&self) -> Vec<u8> {
        let mut k = QUEUE.to_vec();
        k.extend_from_slice(&due_millis(self.due_at).to_be_bytes());
        k.push(b'/');
        k.extend_from_slice(self.workspace.as_str().as_bytes());
        k.push(b'/');
        k.extend_from_slice(self.name.as_bytes());
        k
    }

    fn from_key(key: &[u8]) -> Option<Self> {
        let rest = key.strip_prefix(QUEUE)?;
        let (due, rest) = rest.split_at_checked(8)?;
        let due = u64::from_be_bytes(due.try_into().ok()?);
        let rest = std::str::from_utf8(rest.strip_prefix(b"/")?).ok()?;
        let (ws, name) = rest.split_once('/')?;
        Some(Self {
            workspace: WorkspaceId::parse(ws)?,
            name: name.to_string(),
            due_at: Utc
                .timestamp_millis_opt(i64::try_from(due).ok()?)
                .single()?,
        })
    }

    /// Arms the timer in `batch`, with the change that needs it.
    pub fn arm(&self, batch: &mut Batch) -> crate::store::StoreResult<()> {
        batch.put(self.key(), &())
    }

    /// Disarms the timer in `batch` (it fired, or its reason went away).
    pub fn disarm(&self, batch: &mut Batch) {
        batch.delete(self.key());
    }
}

fn due_millis(t: DateTime<Utc>) -> u64 {
    u64::try_from(t.timestamp_millis()).unwrap_or(0)
}

/// Where due timers go: the registry, which hands each to its workspace actor.
pub trait TimerSink: Send + Sync + 'static {
    /// The timers one look found due, earliest first. Their order is kept for each
    /// workspace: after a stop, a conversation's overdue follow-up must come before its
    /// later auto-close, or the close would find no follow-up sent.
    fn due(&self, timers: Vec<Timer>);
}

/// How the scheduler looks for due timers.
#[derive(Debug, Clone)]
pub struct ScheduleSettings {
    /// How often it looks.
    pub tick: Duration,
    /// How long a timer handed over may stay armed before it is handed over again.
    pub redeliver_after: Duration,
}

impl Default for ScheduleSettings {
    fn default() -> Self {
        Self {
            tick: Duration::from_millis(250),
            redeliver_after: Duration::from_secs(30),
        }
    }
}

/// Hands due timers to the sink until `stop` resolves.
pub struct Scheduler {
    store: Store,
    clock: SharedClock,
    sink: Arc<dyn TimerSink>,
    settings: ScheduleSettings,
    /// Timers handed over and not yet seen deleted, with when they were handed over.
    handed: HashMap<Timer, Instant>,
}

impl Scheduler {
    pub fn new(
        store: Store,
        clock: SharedClock,
        sink: Arc<dyn TimerSink>,
        settings: ScheduleSettings,
    ) -> Self {
        Self {
            store,
            clock,
            sink,
            settings,
            handed: HashMap::new(),
        }
    }

    /// Runs until `stop` resolves.
    pub async fn run(mut self, stop: impl std::future::Future<Output = ()>) {
        let mut tick = tokio::time::interval(self.settings.tick);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        tokio::pin!(stop);
        loop {
            tokio::select! {
                _ = tick.tick() => self.look(),
                _ = &mut stop => return,
            }
        }
    }

    /// One look: hands over every due timer not handed over recently.
    pub fn look(&mut self) {
        let now = self.clock.now();
        let due = match self.due(now) {
            Ok(due) => due,
            Err(e) => {
                tracing::error!(error = %e, "could not read due timers");
                return;
            }
        };
        let still_armed: std::collections::HashSet<&Timer> = due.iter().collect();
        self.handed.retain(|t, _| still_armed.contains(t));
        let again = self.settings.redeliver_after;
        let mut fresh = Vec::new();
        for timer in due {
            let is_fresh = match self.handed.get(&timer) {
                Some(at) => at.elapsed() >= again,
                None => true,
            };
            if is_fresh {
                self.handed.insert(timer.clone(), Instant::now());
                fresh.push(timer);
            }
        }
        if !fresh.is_empty() {
            self.sink.due(fresh);
        }
    }

    /// Every armed timer due at or before `now`, earliest first.
    fn due(&self, now: DateTime<Utc>) -> crate::store::StoreResult<Vec<Timer>> {
        let mut end = QUEUE.to_vec();
        end.extend_from_slice(&due_millis(now).saturating_add(1).to_be_bytes());
        Ok(self
            .store
            .keys_between(QUEUE, &end)?
            .iter()
            .filter_map(|k| Timer::from_key(k))
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use super::*;
    use crate::clock::ManualClock;

    #[derive(Default)]
    struct Collect(Mutex<Vec<Timer>>);

    impl TimerSink for Collect {
        fn due(&self, timers: Vec<Timer>) {
            self.0.lock().unwrap().extend(timers);
        }
    }

    fn start() -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2026, 1, 1, 0, 0, 0).unwrap()
    }

    /// Opens the store, waiting for a previous handle's flusher to let go of it.
    async fn open(dir: &std::path::Path) -> Store {
        for _ in 0..100 {
            if let Ok(store) = Store::open(dir) {
                return store;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        panic!("store did not open");
    }

    async fn setup(dir: &std::path::Path) -> (Store, ManualClock, Arc<Collect>, Scheduler) {
        let store = open(dir).await;
        let clock = ManualClock::new(start());
        let sink = Arc::new(Collect::default());
        let scheduler = Scheduler::new(
            store.clone(),
            Arc::new(clock.clone()),
            sink.clone(),
            ScheduleSettings {
                tick: Duration::from_millis(10),
                redeliver_after: Duration::from_millis(50),
            },
        );
        (store, clock, sink, scheduler)
    }

    fn ws() -> WorkspaceId {
        WorkspaceId::parse("ws_one").unwrap()
    }

    #[test]
    fn a_key_round_trips_with_its_name_and_due_time() {
        let t = Timer::new(&ws(), "conversation/12/followup", start());
        assert_eq!(Timer::from_key(&t.key()), Some(t));
    }

    #[tokio::test]
    async fn timers_fire_when_due_in_due_order_and_not_before() {
        let dir = tempfile::tempdir().unwrap();
        let (store, clock, sink, mut scheduler) = setup(dir.path()).await;
        let later = Timer::new(&ws(), "b", start() + chrono::Duration::minutes(10));
        let sooner = Timer::new(&ws(), "a", start() + chrono::Duration::minutes(5));
        let mut batch = Batch::default();
        later.arm(&mut batch).unwrap();
        sooner.arm(&mut batch).unwrap();
        store.commit(batch).await.unwrap();

        scheduler.look();
        assert!(sink.0.lock().unwrap().is_empty(), "nothing is due yet");
        clock.advance(Duration::from_secs(600));
        scheduler.look();
        assert_eq!(*sink.0.lock().unwrap(), vec![sooner, later]);
    }

    #[tokio::test]
    async fn a_timer_handed_over_is_not_repeated_until_the_redelivery_wait_and_stops_once_disarmed()
    {
        let dir = tempfile::tempdir().unwrap();
        let (store, _clock, sink, mut scheduler) = setup(dir.path()).await;
        let t = Timer::new(&ws(), "a", start());
        let mut batch = Batch::default();
        t.arm(&mut batch).unwrap();
        store.commit(batch).await.unwrap();

        scheduler.look();
        scheduler.look();
        assert_eq!(sink.0.lock().unwrap().len(), 1, "handed over once");
        tokio::time::sleep(Duration::from_millis(60)).await;
        scheduler.look();
        assert_eq!(
            sink.0.lock().unwrap().len(),
            2,
            "handed over again while armed"
        );

        let mut batch = Batch::default();
        t.disarm(&mut batch);
        store.commit(batch).await.unwrap();
        tokio::time::sleep(Duration::from_millis(60)).await;
        scheduler.look();
        assert_eq!(sink.0.lock().unwrap().len(), 2, "a disarmed timer is done");
    }

    #[tokio::test]
    async fn armed_timers_survive_a_reopen() {
        let dir = tempfile::tempdir().unwrap();
        {
            let (store, _, _, _) = setup(dir.path()).await;
            let mut batch = Batch::default();
            Timer::new(&ws(), "a", start()).arm(&mut batch).unwrap();
            store.commit(batch).await.unwrap();
        }
        let (_, _, sink, mut scheduler) = setup(dir.path()).await;
        scheduler.look();
        assert_eq!(sink.0.lock().unwrap().len(), 1);
    }
}
