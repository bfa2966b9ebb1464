//! `EndpointActor`: one per webhook endpoint. It owns the endpoint's pending deliveries
//! and their timers: on every tick it sends what is due (a few at a time, each attempt in
//! its own task so the mailbox never waits on the network), records each attempt, puts
//! failures back on the retry ladder, and reports outcomes to the workspace, which keeps
//! the endpoint's health and decides when to disable it.

use crate::clock::Timestamp;
use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;
use std::time::Instant;

use chrono::{DateTime, Utc};
use ractor::{Actor, ActorProcessingErr, ActorRef, RpcReplyPort};

use super::context::DeliveryContext;
use super::record::{self, Attempt, Delivery, DeliveryStatus};
use super::sender::{self, Outcome, SendResult};
use crate::domain::page::{Page, PageRequest};
use crate::domain::webhook::{EndpointConfig, LastDelivery};
use crate::domain::DomainError;
use crate::ids::DeliveryId;
use crate::store::Batch;
use crate::telemetry::ActorStats;

pub type Reply<T> = RpcReplyPort<Result<T, DomainError>>;

/// The error of an attempt that a stop or a crash cut short.
const INTERRUPTED: &str = "interrupted: the service stopped while this attempt was in flight";

pub enum EndpointMsg {
    Configure(EndpointConfig),
    /// New deliveries were committed for this endpoint.
    Wake,
    Tick,
    Done {
        delivery: DeliveryId,
        result: SendResult,
    },
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
}

impl EndpointMsg {
    pub fn kind(&self) -> &'static str {
        match self {
            EndpointMsg::Configure(_) => "configure",
            EndpointMsg::Wake => "wake",
            EndpointMsg::Tick => "tick",
            EndpointMsg::Done { .. } => "attempt_done",
            EndpointMsg::List { .. } => "list",
            EndpointMsg::Redeliver { .. } => "redeliver",
            EndpointMsg::Remove => "remove",
        }
    }
}

pub struct EndpointActor;

pub struct EndpointState {
    cfg: EndpointConfig,
    stats: Arc<ActorStats>,
    ctx: Arc<DeliveryContext>,
    pending: BTreeMap<DeliveryId, Delivery>,
    in_flight: HashSet<DeliveryId>,
    seen_up_to: u64,
    last_prune: DateTime<Utc>,
}

impl Actor for EndpointActor {
    type Msg = EndpointMsg;
    type State = EndpointState;
    type Arguments = (EndpointConfig, Arc<DeliveryContext>, Arc<ActorStats>);

    async fn pre_start(
        &self,
        myself: ActorRef<EndpointMsg>,
        (cfg, ctx, stats): (EndpointConfig, Arc<DeliveryContext>, Arc<ActorStats>),
    ) -> Result<EndpointState, ActorProcessingErr> {
        myself.send_interval(ctx.settings().tick, || EndpointMsg::Tick);
        let mut state = EndpointState {
            cfg,
            stats,
            last_prune: ctx.now(),
            ctx,
            pending: BTreeMap::new(),
            in_flight: HashSet::new(),
            seen_up_to: 0,
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
        }
        match msg {
            EndpointMsg::Configure(cfg) => {
                state.cfg = cfg;
                state.send_due(&myself);
            }
            EndpointMsg::Wake => {
                state.load_new()?;
                state.send_due(&myself);
            }
            EndpointMsg::Tick => {
                state.send_due(&myself);
                state.prune_old()?;
            }
            EndpointMsg::Done {
                delivery: id,
                result,
            } => {
                state.record(id, result)?;
                // A freed slot takes the next due delivery at once, so a backlog drains
                // as fast as the receiver answers, not a few per tick.
                state.send_due(&myself);
            }
            EndpointMsg::List { page, reply } => {
                let _ = reply.send(state.list(page));
            }
            EndpointMsg::Redeliver {
                delivery: id,
                reply,
            } => {
                let answer = state.redeliver(id);
                let _ = reply.send(answer);
                state.send_due(&myself);
            }
            EndpointMsg::Remove => {
                state.forget_all()?;
                myself.stop(Some("endpoint deleted".into()));
            }
        }
        if kind != "tick" {
            state.stats.handled(kind, started);
        }
        Ok(())
    }
}

impl EndpointState {
    fn store(&self) -> &crate::store::Store {
        self.ctx.store()
    }

    /// Picks up deliveries committed since the last look.
    fn load_new(&mut self) -> Result<(), DomainError> {
        let found = self
            .store()
            .scan_after::<Delivery>(&record::prefix(&self.cfg.id), self.seen_up_to)?;
        for (id, mut d) in found {
            self.seen_up_to = self.seen_up_to.max(id);
            if d.status == DeliveryStatus::Pending {
                // An attempt still marked in flight was cut short by a stop or a crash:
                // it counts, and the next one carries the next number.
                if let Some(last) = d.attempts.last_mut().filter(|a| a.in_flight()) {
                    last.error = Some(INTERRUPTED.into());
                }
                self.pending.insert(DeliveryId(id), d);
            }
        }
        self.ctx.set_pending(&self.cfg.id, self.pending.len());
        Ok(())
    }

    fn send_due(&mut self, myself: &ActorRef<EndpointMsg>) {
        if !self.cfg.active {
            return;
        }
        let now = self.ctx.now();
        let room = self
            .ctx
            .settings()
            .max_in_flight
            .saturating_sub(self.in_flight.len());
        let due: Vec<DeliveryId> = self
            .pending
            .values()
            .filter(|d| {
                !self.in_flight.contains(&d.id) && d.next_attempt_at.is_none_or(|t| t <= now)
            })
            .take(room)
            .map(|d| d.id)
            .collect();
        for id in due {
            let Some(d) = self.pending.get_mut(&id) else {
                continue;
            };
            // The attempt is written before it is sent, and sent only once that write is
            // durable: a repeat after a crash then carries the next number, and the log
            // shows the interrupted attempt.
            let number = d.attempts.len() as u32 + 1;
            d.attempts.push(Attempt {
                number,
                at: Timestamp(now),
                status_code: None,
                error: Some(record::IN_FLIGHT.into()),
                duration_ms: 0,
            });
            let mut batch = Batch::default();
            let written = batch
                .put(record::key(&self.cfg.id, id), &*d)
                .and_then(|_| self.ctx.store().apply(batch));
            if let Err(e) = written {
                d.attempts.pop();
                tracing::error!(error = %e, "could not record an attempt before sending it");
                continue;
            }
            let durable = self.ctx.store().durable();
            self.in_flight.insert(id);
            let sender = self.ctx.sender().clone();
            let (url, body, secrets) = (
                self.cfg.url.clone(),
                d.body.clone(),
                self.cfg.secrets_at(now),
            );
            let loopback_allowed = self.cfg.loopback_allowed;
            let (event_id, event_type) = (d.event_id.clone(), d.event_type.clone());
            let t = now.timestamp();
            let me = myself.clone();
            let stats = self.stats.clone();
            tokio::spawn(async move {
                let result = match durable.await {
                    Err(e) => SendResult {
                        outcome: Outcome::Failed,
                        status_code: None,
                        error: Some(format!("not sent: the attempt could not be recorded ({e})")),
                        duration_ms: 0,
                    },
                    Ok(()) => {
                        sender
                            .send(sender::Attempt {
                                url: &url,
                                body: &body,
                                secrets: &secrets,
                                labels: &sender::event_labels(&event_id, &event_type, number),
                                t,
                                loopback_allowed,
                            })
                            .await
                    }
                };
                stats.sent();
                if me
                    .send_message(EndpointMsg::Done {
                        delivery: id,
                        result,
                    })
                    .is_err()
                {
                    stats.received();
                }
            });
        }
    }

    /// Records an attempt: delivered, failed for good, or back on the ladder.
    fn record(&mut self, id: DeliveryId, result: SendResult) -> Result<(), DomainError> {
        self.in_flight.remove(&id);
        let Some(mut d) = self.pending.remove(&id) else {
            return Ok(());
        };
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
        let mut batch = Batch::default();
        batch.put(record::key(&self.cfg.id, id), &d)?;
        self.store().apply(batch)?;
        self.ctx.count_attempt(result.outcome);
        let last = LastDelivery {
            delivery_id: d.id,
            event_id: d.event_id.clone(),
            event_type: d.event_type.clone(),
            delivered: result.outcome == Outcome::Delivered,
            status_code: result.status_code,
            error: result.error,
            attempted_at: Timestamp(now),
        };
        if d.status == DeliveryStatus::Pending {
            self.pending.insert(id, d);
        }
        self.ctx.set_pending(&self.cfg.id, self.pending.len());
        self.ctx
            .report(&self.cfg.workspace_id, &self.cfg.id, last, result.outcome);
        Ok(())
    }

    fn list(&self, page: PageRequest) -> Result<Page<Delivery>, DomainError> {
        let mut items: Vec<Delivery> = self
            .store()
            .newest::<Delivery>(&record::prefix(&self.cfg.id), page.after, page.limit + 1)?
            .into_iter()
            .map(|(_, d)| self.pending.get(&d.id).cloned().unwrap_or(d))
            .collect();
        let has_more = items.len() > page.limit;
        items.truncate(page.limit);
        Ok(Page { items, has_more })
    }

    /// Queues a delivery again as a new delivery of the same event and body.
    fn redeliver(&mut self, id: DeliveryId) -> Result<Delivery, DomainError> {
        let original: Delivery = self
            .store()
            .get(&record::key(&self.cfg.id, id))?
            .ok_or(DomainError::NotFound("delivery"))?;
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
        batch.put(record::key(&self.cfg.id, again.id), &again)?;
        self.store().apply(batch)?;
        self.seen_up_to = self.seen_up_to.max(again.id.get());
        self.pending.insert(again.id, again.clone());
        Ok(again)
    }

    /// Deletes finished delivery records older than the history period, once an hour.
    fn prune_old(&mut self) -> Result<(), DomainError> {
        let now = self.ctx.now();
        if now - self.last_prune < chrono::Duration::hours(1) {
            return Ok(());
        }
        self.last_prune = now;
        let keep = chrono::Duration::from_std(self.ctx.settings().history).unwrap_or_default();
        let old: Vec<(DeliveryId, Delivery)> = self
            .store()
            .scan_after::<Delivery>(&record::prefix(&self.cfg.id), 0)?
            .into_iter()
            .filter(|(_, d)| d.status != DeliveryStatus::Pending && d.created_at + keep < now)
            .map(|(id, d)| (DeliveryId(id), d))
            .collect();
        let mut batch = Batch::default();
        for (id, _) in old {
            batch.delete(record::key(&self.cfg.id, id));
        }
        Ok(self.store().apply(batch)?)
    }

    fn forget_all(&mut self) -> Result<(), DomainError> {
        let mut batch = Batch::default();
        for k in self.store().keys(&record::prefix(&self.cfg.id))? {
            batch.delete(k);
        }
        self.pending.clear();
        self.ctx.set_pending(&self.cfg.id, 0);
        Ok(self.store().apply(batch)?)
    }
}
