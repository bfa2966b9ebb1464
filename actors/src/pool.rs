//! A keyed set of actors of one kind (a webhook endpoint's delivery actor, a channel
//! connection's relay actor): started on first use, counted in the operators' actor book
//! while they live, removed one by one (or forgotten once they stop on their own), stopped
//! together at shutdown.

use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;

use dashmap::DashMap;
use ractor::{Actor, ActorId, ActorRef};

use crate::telemetry::{ActorBook, ActorStats};

pub struct Pool<M: ractor::Message> {
    actors: DashMap<String, ActorRef<M>>,
    book: ActorBook,
    spawning: tokio::sync::Mutex<()>,
}

impl<M: ractor::Message> Pool<M> {
    pub fn new(kind: &'static str) -> Self {
        Self {
            actors: DashMap::new(),
            book: ActorBook::new(kind),
            spawning: tokio::sync::Mutex::new(()),
        }
    }

    /// The live actors' figures.
    pub fn book(&self) -> &ActorBook {
        &self.book
    }

    pub fn live(&self) -> usize {
        self.actors.len()
    }

    pub fn get(&self, key: &str) -> Option<ActorRef<M>> {
        self.actors.get(key).map(|a| a.clone())
    }

    /// Sends to an actor, counting the message into its mailbox depth.
    pub fn tell(&self, key: &str, actor: &ActorRef<M>, msg: M) -> bool {
        let stats = self.book.get(key);
        if let Some(s) = &stats {
            s.sent();
        }
        let ok = actor.send_message(msg).is_ok();
        if let (false, Some(s)) = (ok, &stats) {
            s.received();
        }
        ok
    }

    /// Counts a call (an ask with a reply) into the actor's mailbox depth.
    pub fn count_call(&self, key: &str) {
        if let Some(s) = self.book.get(key) {
            s.sent();
        }
    }

    /// The running actor of `key`, told `refresh()` (its latest configuration); or a new
    /// one, started with `args`.
    pub async fn ensure<A>(
        &self,
        key: &str,
        actor: A,
        args: impl FnOnce(Arc<ActorStats>) -> A::Arguments,
        refresh: impl Fn() -> M,
    ) -> Result<ActorRef<M>, String>
    where
        A: Actor<Msg = M>,
    {
        if let Some(found) = self.get(key) {
            if self.tell(key, &found, refresh()) {
                return Ok(found);
            }
        }
        let _guard = self.spawning.lock().await;
        if let Some(found) = self.get(key) {
            if self.tell(key, &found, refresh()) {
                return Ok(found);
            }
        }
        let stats = self.book.enter(key);
        let (started, _) = Actor::spawn(None, actor, args(stats))
            .await
            .map_err(|e| format!("{} actor start: {e}", self.book.kind()))?;
        self.actors.insert(key.to_string(), started.clone());
        self.book.lifecycle().spawned.fetch_add(1, Relaxed);
        Ok(started)
    }

    /// Forgets the actor of `key` and answers it, to be told its last message.
    pub fn remove(&self, key: &str) -> Option<ActorRef<M>> {
        let (_, actor) = self.actors.remove(key)?;
        if let Some(stats) = self.book.get(key) {
            self.book.leave(key, &stats);
        }
        Some(actor)
    }

    /// Forgets the actor of `key` if it is still actor `id` with figures `stats`: it is
    /// stopping on its own (idle, or `failed`), and the next use starts a fresh one.
    pub fn forget(&self, key: &str, id: ActorId, stats: &Arc<ActorStats>, failed: bool) {
        if self
            .actors
            .remove_if(key, |_, a| a.get_id() == id)
            .is_some()
        {
            let lifecycle = self.book.lifecycle();
            let counter = if failed {
                &lifecycle.restarts
            } else {
                &lifecycle.passivations
            };
            counter.fetch_add(1, Relaxed);
        }
        self.book.leave(key, stats);
    }

    /// Tells every actor `msg()` and waits, up to `wait`, for each to stop on its own
    /// (a shutdown that lets work in flight end); the rest are stopped then.
    pub async fn drain(&self, msg: impl Fn() -> M, wait: std::time::Duration) {
        let actors: Vec<(String, ActorRef<M>)> = self
            .actors
            .iter()
            .map(|a| (a.key().clone(), a.value().clone()))
            .collect();
        for (key, actor) in &actors {
            self.tell(key, actor, msg());
        }
        let deadline = tokio::time::Instant::now() + wait;
        while actors
            .iter()
            .any(|(_, a)| a.get_status() != ractor::ActorStatus::Stopped)
            && tokio::time::Instant::now() < deadline
        {
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
        self.stop_all();
    }

    /// Stops every actor (shutdown).
    pub fn stop_all(&self) {
        for a in self.actors.iter() {
            a.stop(None);
        }
        for s in self.book.snapshot() {
            if let Some(stats) = self.book.get(&s.key) {
                self.book.leave(&s.key, &stats);
            }
        }
        self.actors.clear();
    }
}
