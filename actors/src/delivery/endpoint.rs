//! `EndpointActor`: one per webhook endpoint while it has work. It starts from the
//! endpoint's pending index, never its history. An attempt goes through three stages:
//! *recorded* (written, in one batch with the rest of its wave), *ready* (that batch is
//! durable), *on the wire* (sent, each in its own task so that the mailbox never waits on
//! the network). The [`Window`] bounds the attempts on the wire; for a receiver that
//! answers fast, the next waves are recorded while earlier ones are on the wire, so the
//! flushes overlap the sends. Finished attempts come back together; their outcomes are
//! written in one batch with the next wave, failures go back on the retry ladder, and
//! outcomes are reported to the workspace, which keeps the endpoint's health and decides
//! when to disable it. Idle for the actors' idle time with nothing due and nothing in
//! flight, it arms a durable [`wake`] timer for its soonest retry and stops.

use std::collections::{BTreeSet, HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use chrono::{DateTime, TimeZone, Utc};
use ractor::{Actor, ActorId, ActorProcessingErr, ActorRef, RpcReplyPort};

use super::context::DeliveryContext;
use super::record::{self, Attempt, Delivery, DeliveryStatus};
use super::sender::{self, Outcome, SendResult};
use super::window::Window;
use super::{pending, wake};
use crate::clock::Timestamp;
use crate::domain::page::{Page, PageRequest};
use crate::domain::webhook::{EndpointConfig, LastDelivery};
use crate::domain::DomainError;
use crate::events::privacy;
use crate::ids::DeliveryId;
use crate::schedule::Timer;
use crate::store::{AfterDurable, Batch, StoreError, StoreResult};
use crate::telemetry::ActorStats;

pub type Reply<T> = RpcReplyPort<Result<T, DomainError>>;

/// The error of an attempt that a stop or a crash cut short.
const INTERRUPTED: &str = "interrupted: the service stopped while this attempt was in flight";

pub enum EndpointMsg {
    Configure(EndpointConfig),
    /// New deliveries were committed for this endpoint.
    Wake,
    /// The wake-up this endpoint's actor armed when it last stopped fell due.
    Due(Timer),
    Tick,
    /// The batch of a recorded wave is durable (or failed to be).
    Recorded {
        wave: u64,
        error: Option<String>,
    },
    /// Attempts finished; their results wait in the actor's [`Finished`] list.
    Done,
    List {
        page: PageRequest,
        reply: Reply<Page<Delivery>>,
    },
    Redeliver {
        delivery: DeliveryId,
        reply: Reply<Delivery>,
    },
    /// The endpoint was deleted: forget its deliveries and stop.
    Remove,
    /// The service is stopping: start no new attempt, and stop once those in flight
    /// have ended and been recorded.
    Drain,
}

impl EndpointMsg {
    pub fn kind(&self) -> &'static str {
        match self {
            EndpointMsg::Configure(_) => "configure",
            EndpointMsg::Wake => "wake",
            EndpointMsg::Due(_) => "wake_up_due",
            EndpointMsg::Tick => "tick",
            EndpointMsg::Recorded { .. } => "wave_recorded",
            EndpointMsg::Done => "attempts_done",
            EndpointMsg::List { .. } => "list",
            EndpointMsg::Redeliver { .. } => "redeliver",
            EndpointMsg::Remove => "remove",
            EndpointMsg::Drain => "drain",
        }
    }
}

/// Called when an endpoint actor stops on its own (idle, or failed), before it stops, so
/// that no new caller reaches it and the next use starts a fresh one.
/// The last argument says whether a failure stopped it (else it was idle).
pub type StopHook = Arc<dyn Fn(&str, ActorId, &Arc<ActorStats>, bool) + Send + Sync>;

/// Takes a message that reached an endpoint actor after it decided to stop (it was
/// already forgotten), for a fresh actor of that endpoint.
pub type HandBack = Arc<dyn Fn(&str, EndpointMsg) + Send + Sync>;

pub struct EndpointArgs {
    pub cfg: EndpointConfig,
    pub ctx: Arc<DeliveryContext>,
    pub stats: Arc<ActorStats>,
    pub on_stop: StopHook,
    pub hand_back: HandBack,
}

pub struct EndpointActor;

pub struct EndpointState {
    cfg: EndpointConfig,
    ctx: Arc<DeliveryContext>,
    /// The store, as the writer of the endpoint's workspace.
    store: crate::store::Store,
    stats: Arc<ActorStats>,
    on_stop: StopHook,
    hand_back: HandBack,
    /// It decided to stop (idle) and was forgotten: it finishes its mailbox, handing what
    /// needs an actor to a fresh one.
    leaving: bool,
    /// Pending deliveries waiting for their next attempt, soonest first: (due ms, id).
    queue: BTreeSet<(i64, DeliveryId)>,
    /// Every pending delivery known, queued or in flight, with its due time.
    due_of: HashMap<DeliveryId, i64>,
    /// Attempts recorded and not finished (in any stage), with their records as written.
    in_flight: HashMap<DeliveryId, Delivery>,
    /// Recorded waves waiting for their batch to be durable, oldest first.
    recording: VecDeque<(u64, Vec<Launch>)>,
    last_wave: u64,
    /// Durable attempts waiting for room on the wire.
    ready: VecDeque<Launch>,
    on_wire: usize,
    finished: Finished,
    window: Window,
    /// The highest id read from the pending index.
    seen_up_to: u64,
    last_message: Instant,
    /// Stopping with the service: no new attempts start.
    draining: bool,
    /// The due time (Unix ms) a wake-up of its own is armed for (see
    /// [`EndpointState::wake_when_next_due`]).
    woken_for: Option<i64>,
}

impl Actor for EndpointActor {
    type Msg = EndpointMsg;
    type State = EndpointState;
    type Arguments = EndpointArgs;

    async fn pre_start(
        &self,
        myself: ActorRef<EndpointMsg>,
        args: EndpointArgs,
    ) -> Result<EndpointState, ActorProcessingErr> {
        myself.send_interval(args.ctx.settings().tick, || EndpointMsg::Tick);
        let mut state = EndpointState {
            window: Window::new(args.ctx.settings()),
            store: args.ctx.store().scoped(args.cfg.workspace_id.as_str()),
            cfg: args.cfg,
            ctx: args.ctx,
            stats: args.stats,
            on_stop: args.on_stop,
            hand_back: args.hand_back,
            leaving: false,
            queue: BTreeSet::new(),
            due_of: HashMap::new(),
            in_flight: HashMap::new(),
            recording: VecDeque::new(),
            last_wave: 0,
            ready: VecDeque::new(),
            on_wire: 0,
            finished: Finished::default(),
            seen_up_to: 0,
            last_message: Instant::now(),
            draining: false,
            woken_for: None,
        };
        state.load_new()?;
        Ok(state)
    }

    async fn handle(
        &self,
        myself: ActorRef<EndpointMsg>,
        msg: EndpointMsg,
        state: &mut EndpointState,
    ) -> Result<(), ActorProcessingErr> {
        let (kind, started) = (msg.kind(), Instant::now());
        if kind != "tick" {
            state.stats.received();
            state.last_message = started;
        }
        let outcome = match state.leaving {
            true => state.left(&myself, msg),
            false => state.handle(&myself, msg).await,
        };
        if !state.leaving {
            state.wake_when_next_due(&myself);
        }
        if state.draining && state.in_flight.is_empty() && state.finished.is_empty() {
            myself.stop(Some("drained".into()));
        }
        if outcome.is_err() {
            // The error stops the actor: the next use starts a fresh one from the store.
            (state.on_stop)(&state.cfg.id, myself.get_id(), &state.stats, true);
        }
        if kind != "tick" {
            state.stats.handled(kind, started);
        }
        Ok(outcome?)
    }
}

impl EndpointState {
    /// A message taken after the actor decided to stop: a deletion needs no actor and is
    /// done here, the outcome of its own work is recorded, ticks are moot, and the rest
    /// goes to a fresh actor through the dispatcher (this one sends nothing any more).
    fn left(
        &mut self,
        myself: &ActorRef<EndpointMsg>,
        msg: EndpointMsg,
    ) -> Result<(), DomainError> {
        match msg {
            EndpointMsg::Remove => self.forget_all(),
            EndpointMsg::Recorded { wave, error } => self.recorded(myself, wave, error),
            EndpointMsg::Done => self.finish(myself),
            EndpointMsg::Tick | EndpointMsg::Drain => Ok(()),
            other => {
                (self.hand_back)(&self.cfg.id, other);
                Ok(())
            }
        }
    }

    async fn handle(
        &mut self,
        myself: &ActorRef<EndpointMsg>,
        msg: EndpointMsg,
    ) -> Result<(), DomainError> {
        match msg {
            EndpointMsg::Configure(cfg) => {
                self.cfg = cfg;
                let mut batch = Batch::default();
                self.send_ready_or_hold(myself, &mut batch)?;
                self.send_due(myself, batch)?;
            }
            EndpointMsg::Wake => {
                self.load_new()?;
                self.send_due(myself, Batch::default())?;
            }
            EndpointMsg::Due(timer) => {
                let mut batch = Batch::default();
                timer.disarm(&mut batch);
                self.load_new()?;
                self.send_due(myself, batch)?;
            }
            EndpointMsg::Tick => {
                self.send_due(myself, Batch::default())?;
                if self.idle() {
                    self.passivate(myself).await?;
                }
            }
            EndpointMsg::Recorded { wave, error } => self.recorded(myself, wave, error)?,
            EndpointMsg::Done => self.finish(myself)?,
            EndpointMsg::List { page, reply } => {
                let _ = reply.send(self.list(page));
            }
            EndpointMsg::Redeliver {
                delivery: id,
                reply,
            } => {
                let answer = self.redeliver(id);
                let _ = reply.send(answer);
                self.send_due(myself, Batch::default())?;
            }
            EndpointMsg::Remove => {
                self.forget_all()?;
                myself.stop(Some("endpoint deleted".into()));
            }
            EndpointMsg::Drain => self.draining = true,
        }
        Ok(())
    }

    fn store(&self) -> &crate::store::Store {
        &self.store
    }

    /// The periodic tick finds a retry up to a tick after it falls due; the next retry
    /// due within two ticks gets a wake-up of its own at its time, so that it goes out
    /// when its `next_attempt_at` says.
    fn wake_when_next_due(&mut self, myself: &ActorRef<EndpointMsg>) {
        let Some(&(due, _)) = self.queue.first() else {
            return;
        };
        if self.woken_for == Some(due) {
            return;
        }
        let wait = due.saturating_sub(self.ctx.now().timestamp_millis());
        let horizon = 2 * self.ctx.settings().tick.as_millis() as i64;
        if wait <= 0 || wait > horizon {
            return;
        }
        self.woken_for = Some(due);
        myself.send_after(std::time::Duration::from_millis(wait as u64), || {
            EndpointMsg::Tick
        });
    }

    /// Picks up deliveries committed since the last look, from the pending index.
    fn load_new(&mut self) -> Result<(), DomainError> {
        for (id, due) in pending::of_endpoint(self.store(), &self.cfg.id, self.seen_up_to)? {
            self.seen_up_to = self.seen_up_to.max(id.get());
            self.enqueue(id, due);
        }
        self.ctx.set_pending(&self.cfg.id, self.due_of.len());
        Ok(())
    }

    fn enqueue(&mut self, id: DeliveryId, due: i64) {
        if self.due_of.insert(id, due).is_none() {
            self.queue.insert((due, id));
        }
    }

    /// Records the next wave: every due delivery that fits in the pipeline gets its attempt
    /// written into `batch` (after whatever it holds already); the wave is sent once the
    /// batch is durable.
    fn send_due(
        &mut self,
        myself: &ActorRef<EndpointMsg>,
        mut batch: Batch,
    ) -> Result<(), DomainError> {
        let now = self.ctx.now();
        let mut wave = Vec::new();
        if self.cfg.active && !self.draining {
            let room = self.window.pipeline().saturating_sub(self.in_flight.len());
            while wave.len() < room {
                match self.queue.first() {
                    Some(&(due, _)) if due <= now.timestamp_millis() => {}
                    _ => break,
                }
                let Some((_, id)) = self.queue.pop_first() else {
                    break;
                };
                if let Some(attempt) = self.begin(id, now, &mut batch)? {
                    wave.push(attempt);
                }
            }
        }
        if batch.is_empty() {
            return Ok(());
        }
        // Queued on the store's write path with the workspaces' writes (no async worker
        // waits on sled's batch lock); the wave goes on the wire once it is durable.
        if wave.is_empty() {
            self.store().submit(batch, Box::new(log_failed_outcomes));
        } else {
            self.last_wave += 1;
            self.recording.push_back((self.last_wave, wave));
            let recorded = self.when_durable(myself, self.last_wave);
            self.store().submit(batch, recorded);
        }
        Ok(())
    }

    /// Tells this actor once wave `wave` is durable; from the store's own thread, with no
    /// task per wave.
    fn when_durable(&self, myself: &ActorRef<EndpointMsg>, wave: u64) -> AfterDurable {
        let (me, stats) = (myself.clone(), self.stats.clone());
        Box::new(move |outcome| {
            stats.sent();
            let error = outcome.err().map(|e| e.to_string());
            if me
                .send_message(EndpointMsg::Recorded { wave, error })
                .is_err()
            {
                stats.received();
            }
        })
    }

    /// A wave is durable: it is ready for the wire. One that could not be recorded is not
    /// sent, and fails as an attempt.
    fn recorded(
        &mut self,
        myself: &ActorRef<EndpointMsg>,
        wave: u64,
        error: Option<String>,
    ) -> Result<(), DomainError> {
        let Some(at) = self.recording.iter().position(|(n, _)| *n == wave) else {
            return Ok(());
        };
        let Some((_, launches)) = self.recording.remove(at) else {
            return Ok(());
        };
        match error {
            None => {
                self.ready.extend(launches);
                let mut batch = Batch::default();
                self.send_ready_or_hold(myself, &mut batch)?;
                if !batch.is_empty() {
                    self.store().submit(batch, Box::new(log_failed_outcomes));
                }
                Ok(())
            }
            Some(e) => {
                let mut batch = Batch::default();
                let mut outcomes = Vec::new();
                for a in launches {
                    let result = SendResult {
                        outcome: Outcome::Failed,
                        status_code: None,
                        error: Some(format!("not sent: the attempt could not be recorded ({e})")),
                        duration_ms: 0,
                    };
                    outcomes.extend(self.record(a.id, result, &mut batch)?);
                }
                self.store().apply(batch)?;
                self.ctx.set_pending(&self.cfg.id, self.due_of.len());
                self.ctx
                    .report(&self.cfg.workspace_id, &self.cfg.id, outcomes);
                Ok(())
            }
        }
    }

    /// Writes the in-flight attempt of delivery `id` into `batch`; None if there is nothing
    /// to send after all.
    fn begin(
        &mut self,
        id: DeliveryId,
        now: DateTime<Utc>,
        batch: &mut Batch,
    ) -> Result<Option<Launch>, DomainError> {
        let mut d = match self.store().get::<Delivery>(&record::key(&self.cfg.id, id)) {
            Ok(Some(d)) if d.status == DeliveryStatus::Pending => d,
            Ok(_) => {
                // Finished or gone: the index entry is stale; drop it.
                self.due_of.remove(&id);
                batch.delete(record::pending_key(&self.cfg.id, id));
                return Ok(None);
            }
            Err(StoreError::Codec(e)) => {
                tracing::error!(delivery = %id, error = %e, "a pending delivery does not decode; it is skipped");
                self.due_of.remove(&id);
                return Ok(None);
            }
            Err(e) => return Err(e.into()),
        };
        // An attempt still marked in flight was cut short by a stop or a crash: it counts,
        // and this one carries the next number; if it was the ladder's last, the delivery
        // has had all its attempts and ends failed.
        if let Some(last) = d.attempts.last_mut().filter(|a| a.in_flight()) {
            last.error = Some(INTERRUPTED.into());
            if d.attempts.len() >= self.ctx.settings().max_attempts() {
                d.status = DeliveryStatus::Failed;
                d.next_attempt_at = None;
                record::put(batch, &d)?;
                self.due_of.remove(&id);
                return Ok(None);
            }
        }
        let number = d.attempts.len() as u32 + 1;
        d.attempts.push(Attempt {
            number,
            at: Timestamp(now),
            status_code: None,
            error: Some(record::IN_FLIGHT.into()),
            duration_ms: 0,
        });
        record::put(batch, &d)?;
        // Sent as the endpoint may receive it now: its settings may have been lowered
        // since the body was rendered.
        let body = privacy::narrow(
            &d.event_type,
            &d.body,
            self.cfg.disclose,
            &d.quoted_details.0,
        )
        .unwrap_or_else(|| d.body.clone());
        let launch = Launch {
            id,
            number,
            body,
            event_id: d.event_id.to_string(),
            event_type: d.event_type.clone(),
        };
        self.in_flight.insert(id, d);
        Ok(Some(launch))
    }

    /// Sends the ready attempts while the endpoint is active; while it is not (paused,
    /// disabled, or a 410 just came back), they go back to the queue, their attempt
    /// unmade, in `batch`.
    fn send_ready_or_hold(
        &mut self,
        myself: &ActorRef<EndpointMsg>,
        batch: &mut Batch,
    ) -> Result<(), DomainError> {
        if self.cfg.active {
            self.send_ready(myself);
            return Ok(());
        }
        while let Some(a) = self.ready.pop_front() {
            let Some(mut d) = self.in_flight.remove(&a.id) else {
                continue;
            };
            if d.attempts.last().is_some_and(Attempt::in_flight) {
                d.attempts.pop();
            }
            record::put(batch, &d)?;
            self.queue.insert((d.due_ms(), a.id));
        }
        Ok(())
    }

    /// Sends ready attempts while the window has room. They are durable before they are
    /// sent: a repeat after a crash then carries the next number, and the log shows the
    /// interrupted attempt.
    fn send_ready(&mut self, myself: &ActorRef<EndpointMsg>) {
        if self.ready.is_empty() || self.on_wire >= self.window.limit() {
            return;
        }
        let now = self.ctx.now();
        let target = Arc::new((self.cfg.url.clone(), self.cfg.secrets_at(now)));
        let t = now.timestamp();
        let loopback_allowed = self.cfg.loopback_allowed;
        while self.on_wire < self.window.limit() {
            let Some(a) = self.ready.pop_front() else {
                break;
            };
            self.on_wire += 1;
            let (sender, target) = (self.ctx.sender().clone(), target.clone());
            let (me, stats, finished) = (myself.clone(), self.stats.clone(), self.finished.clone());
            tokio::spawn(async move {
                let result = sender
                    .send(sender::Attempt {
                        url: &target.0,
                        body: &a.body,
                        secrets: &target.1,
                        labels: &sender::event_labels(&a.event_id, &a.event_type, a.number),
                        t,
                        loopback_allowed,
                    })
                    .await;
                finished.push(&me, &stats, a.id, result);
            });
        }
    }

    /// Records every finished attempt (delivered, failed for good, or back on the ladder)
    /// in one batch with the next wave, then reports the outcomes.
    fn finish(&mut self, myself: &ActorRef<EndpointMsg>) -> Result<(), DomainError> {
        let mut batch = Batch::default();
        let mut outcomes = Vec::new();
        for (id, result) in self.finished.take() {
            self.on_wire = self.on_wire.saturating_sub(1);
            outcomes.extend(self.record(id, result, &mut batch)?);
        }
        self.send_ready_or_hold(myself, &mut batch)?;
        self.send_due(myself, batch)?;
        self.ctx.set_pending(&self.cfg.id, self.due_of.len());
        self.ctx
            .report(&self.cfg.workspace_id, &self.cfg.id, outcomes);
        Ok(())
    }

    /// Writes an attempt's outcome into `batch`; the outcome to report.
    fn record(
        &mut self,
        id: DeliveryId,
        result: SendResult,
        batch: &mut Batch,
    ) -> Result<Option<(LastDelivery, Outcome)>, DomainError> {
        let Some(mut d) = self.in_flight.remove(&id) else {
            return Ok(None);
        };
        self.window.observe(&result);
        let now = self.ctx.now();
        if d.attempts.last().is_some_and(Attempt::in_flight) {
            d.attempts.pop();
        }
        d.attempts.push(Attempt {
            number: d.attempts.len() as u32 + 1,
            at: Timestamp(now),
            status_code: result.status_code,
            error: result.error.clone(),
            duration_ms: result.duration_ms,
        });
        let settings = self.ctx.settings();
        match result.outcome {
            Outcome::Delivered => {
                d.status = DeliveryStatus::Delivered;
                d.next_attempt_at = None;
            }
            Outcome::Gone => {
                d.status = DeliveryStatus::Failed;
                d.next_attempt_at = None;
                // The workspace disables the endpoint on this report; until its
                // configuration says so, nothing more goes out (what waits stays pending
                // for when it is active again).
                self.cfg.active = false;
            }
            Outcome::Failed if d.attempts.len() >= settings.max_attempts() => {
                d.status = DeliveryStatus::Failed;
                d.next_attempt_at = None;
            }
            Outcome::Failed => {
                let wait = settings.retry_delays[d.attempts.len() - 1];
                d.next_attempt_at = Some(Timestamp(
                    now + chrono::Duration::from_std(wait).unwrap_or_default(),
                ));
                self.ctx.count_retry();
            }
        }
        record::put(batch, &d)?;
        self.ctx.count_attempt(result.outcome);
        if d.status == DeliveryStatus::Pending {
            let due = d.due_ms();
            self.due_of.insert(id, due);
            self.queue.insert((due, id));
        } else {
            self.due_of.remove(&id);
        }
        let last = LastDelivery {
            delivery_id: d.id,
            event_id: d.event_id,
            event_type: d.event_type,
            delivered: result.outcome == Outcome::Delivered,
            status_code: result.status_code,
            error: result.error,
            attempted_at: Timestamp(now),
        };
        Ok(Some((last, result.outcome)))
    }

    /// A page of the log. An attempt of this actor's still in flight is shown as it is
    /// (the view hides it); one left in flight by a stop or a crash, as interrupted.
    fn list(&self, page: PageRequest) -> Result<Page<Delivery>, DomainError> {
        let mut items: Vec<Delivery> = self
            .store()
            .newest::<Delivery>(&record::prefix(&self.cfg.id), page.after, page.limit + 1)?
            .into_iter()
            .map(|(_, mut d)| {
                if let Some(mine) = self.in_flight.get(&d.id) {
                    return mine.clone();
                }
                if let Some(last) = d.attempts.last_mut().filter(|a| a.in_flight()) {
                    last.error = Some(INTERRUPTED.into());
                }
                d
            })
            .collect();
        let has_more = items.len() > page.limit;
        items.truncate(page.limit);
        Ok(Page { items, has_more })
    }

    /// Queues a delivery again as a new delivery of the same event and body.
    fn redeliver(&mut self, id: DeliveryId) -> Result<Delivery, DomainError> {
        let original: Delivery = match self.in_flight.get(&id) {
            Some(d) => d.clone(),
            None => self
                .store()
                .get(&record::key(&self.cfg.id, id))?
                .ok_or(DomainError::NotFound("delivery"))?,
        };
        let now = self.ctx.now();
        let again = Delivery {
            id: DeliveryId(self.store().next_id()?),
            status: DeliveryStatus::Pending,
            attempts: Vec::new(),
            next_attempt_at: Some(Timestamp(now)),
            created_at: Timestamp(now),
            ..original
        };
        let mut batch = Batch::default();
        record::put(&mut batch, &again)?;
        self.store().apply(batch)?;
        // Not counted into `seen_up_to`: a delivery the workspace is committing right now
        // may carry a lower id, and the next look must still find it.
        self.enqueue(again.id, again.due_ms());
        self.ctx.set_pending(&self.cfg.id, self.due_of.len());
        Ok(again)
    }

    fn forget_all(&mut self) -> Result<(), DomainError> {
        let mut batch = Batch::default();
        for prefix in [
            record::prefix(&self.cfg.id),
            record::pending_prefix(&self.cfg.id),
        ] {
            for k in self.store().keys(&prefix)? {
                batch.delete(k);
            }
        }
        self.queue.clear();
        self.due_of.clear();
        self.ctx.set_pending(&self.cfg.id, 0);
        Ok(self.store().apply(batch)?)
    }

    /// Nothing in flight, nothing due, and no message for the idle time.
    fn idle(&self) -> bool {
        let due_now = self.cfg.active
            && self
                .queue
                .first()
                .is_some_and(|(due, _)| *due <= self.ctx.now().timestamp_millis());
        self.in_flight.is_empty()
            && self.finished.is_empty()
            && !due_now
            && self.last_message.elapsed() >= self.ctx.idle_after()
    }

    /// Stops, leaving a durable wake-up at the soonest pending delivery. It first leaves
    /// the dispatcher, so that whatever is committed from then on starts a fresh actor; the
    /// wake-up is read from the index after that, so it also covers deliveries committed
    /// before whose wake only reached this actor. A paused or disabled endpoint arms
    /// nothing: it starts again when it is active again.
    async fn passivate(&mut self, myself: &ActorRef<EndpointMsg>) -> Result<(), DomainError> {
        (self.on_stop)(&self.cfg.id, myself.get_id(), &self.stats, false);
        if self.cfg.active {
            let soonest = pending::of_endpoint(self.store(), &self.cfg.id, 0)?
                .into_iter()
                .map(|(_, due)| due)
                .min();
            if let Some(due) = soonest {
                let now = self.ctx.now();
                let at = Utc
                    .timestamp_millis_opt(due)
                    .single()
                    .filter(|at| *at > now)
                    .unwrap_or(now);
                let mut batch = Batch::default();
                wake::timer(&self.cfg, at).arm(&mut batch)?;
                self.store().commit(batch).await?;
            }
        }
        // Drained, not stopped: what was sent to it before it was forgotten is still
        // handled (a deletion, a change of configuration), not dropped.
        self.leaving = true;
        myself
            .drain()
            .map_err(|e| DomainError::Internal(format!("endpoint actor drain: {e}")))
    }
}

/// What a task needs to send one attempt.
struct Launch {
    id: DeliveryId,
    number: u32,
    body: String,
    event_id: String,
    event_type: String,
}

/// Results of finished attempts, waiting for the actor. The task that adds the first one
/// sends [`EndpointMsg::Done`]; the actor takes them all at once.
#[derive(Clone, Default)]
struct Finished(Arc<Mutex<Vec<(DeliveryId, SendResult)>>>);

impl Finished {
    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<(DeliveryId, SendResult)>> {
        self.0
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn push(
        &self,
        me: &ActorRef<EndpointMsg>,
        stats: &ActorStats,
        id: DeliveryId,
        result: SendResult,
    ) {
        let first = {
            let mut waiting = self.lock();
            waiting.push((id, result));
            waiting.len() == 1
        };
        if first {
            stats.sent();
            if me.send_message(EndpointMsg::Done).is_err() {
                stats.received();
            }
        }
    }

    fn take(&self) -> Vec<(DeliveryId, SendResult)> {
        std::mem::take(&mut *self.lock())
    }

    fn is_empty(&self) -> bool {
        self.lock().is_empty()
    }
}

/// Outcomes that could not be written live in memory only: a failed store refuses every
/// write until the process restarts, and the restart resumes from the attempts on disk,
/// so those deliveries are tried again (at least once, as always).
fn log_failed_outcomes(outcome: StoreResult<()>) {
    if let Err(e) = outcome {
        tracing::error!(error = %e, "delivery outcomes could not be written");
    }
}
