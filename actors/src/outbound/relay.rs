//! `RelayActor`: one per channel connection. It owns the connection's pending sends: it
//! POSTs what is due (a few at a time, each in its own task so the mailbox never waits on
//! the network), puts failures back on the short ladder, and reports each message's final
//! outcome. A 2xx sends; 401 and 403 fail at once (the integrator's access is gone);
//! anything else is retried until the attempts run out.

use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;
use std::time::{Duration, Instant};

use ractor::{Actor, ActorProcessingErr, ActorRef};

use super::context::RelayContext;
use super::record::{self, PendingSend};
use super::SendReport;
use crate::clock::Timestamp;
use crate::delivery::sender::{self, Outcome, SendResult};
use crate::domain::channel::{RelayConfig, SendFailure};
use crate::domain::DomainError;
use crate::ids::MessageId;
use crate::store::Batch;
use crate::telemetry::ActorStats;

pub enum RelayMsg {
    Configure(RelayConfig),
    /// New pending sends were committed for this connection.
    Wake,
    Tick,
    Done {
        message: MessageId,
        result: SendResult,
    },
    /// The connection was deleted: forget its sends and stop.
    Remove,
    /// The service is stopping: start no new send, and stop once those in flight have
    /// ended and been recorded.
    Drain,
}

impl RelayMsg {
    pub fn kind(&self) -> &'static str {
        match self {
            RelayMsg::Configure(_) => "configure",
            RelayMsg::Wake => "wake",
            RelayMsg::Tick => "tick",
            RelayMsg::Done { .. } => "send_done",
            RelayMsg::Remove => "remove",
            RelayMsg::Drain => "drain",
        }
    }
}

pub struct RelayActor;

pub struct RelayState {
    cfg: RelayConfig,
    /// The store, as the writer of the connection's workspace.
    store: crate::store::Store,
    stats: Arc<ActorStats>,
    ctx: Arc<RelayContext>,
    pending: BTreeMap<MessageId, PendingSend>,
    in_flight: HashSet<MessageId>,
    seen_up_to: u64,
    /// Stopping with the service: no new sends start.
    draining: bool,
    /// The due time (Unix ms) a wake-up of its own is armed for (see
    /// [`RelayState::wake_when_next_due`]).
    woken_for: Option<i64>,
}

impl Actor for RelayActor {
    type Msg = RelayMsg;
    type State = RelayState;
    type Arguments = (RelayConfig, Arc<RelayContext>, Arc<ActorStats>);

    async fn pre_start(
        &self,
        myself: ActorRef<RelayMsg>,
        (cfg, ctx, stats): Self::Arguments,
    ) -> Result<RelayState, ActorProcessingErr> {
        myself.send_interval(ctx.settings.tick, || RelayMsg::Tick);
        let mut state = RelayState {
            store: ctx.store.scoped(cfg.workspace_id.as_str()),
            cfg,
            stats,
            ctx,
            pending: BTreeMap::new(),
            in_flight: HashSet::new(),
            seen_up_to: 0,
            draining: false,
            woken_for: None,
        };
        state.load_new()?;
        state.send_due(&myself);
        Ok(state)
    }

    async fn handle(
        &self,
        myself: ActorRef<RelayMsg>,
        msg: RelayMsg,
        state: &mut RelayState,
    ) -> Result<(), ActorProcessingErr> {
        let (kind, started) = (msg.kind(), Instant::now());
        if kind != "tick" {
            state.stats.received();
        }
        match msg {
            RelayMsg::Configure(cfg) => state.cfg = cfg,
            RelayMsg::Wake => state.load_new()?,
            // A full look for the next retry once a tick; after an attempt, only its own.
            RelayMsg::Tick => state.wake_when_next_due(&myself),
            RelayMsg::Done { message, result } => {
                state.record(message, result)?;
                if let Some(due) = state.pending.get(&message).and_then(|s| s.next_attempt_at) {
                    state.wake_at(&myself, due.timestamp_millis());
                }
            }
            RelayMsg::Remove => {
                state.forget_all()?;
                myself.stop(Some("channel connection deleted".into()));
                return Ok(());
            }
            RelayMsg::Drain => state.draining = true,
        }
        if !state.draining {
            state.send_due(&myself);
        } else if state.in_flight.is_empty() {
            myself.stop(Some("drained".into()));
        }
        if kind != "tick" {
            state.stats.handled(kind, started);
        }
        Ok(())
    }
}

impl RelayState {
    /// Picks up sends committed since the last look.
    fn load_new(&mut self) -> Result<(), DomainError> {
        let found = self.store.scan_after_read(
            &record::prefix(self.cfg.channel_id),
            self.seen_up_to,
            record::read,
        )?;
        for (id, send) in found {
            self.seen_up_to = self.seen_up_to.max(id);
            self.pending.insert(send.message_id, send);
        }
        Ok(())
    }

    /// The periodic tick finds a retry up to a tick after it falls due; the next retry
    /// due within two ticks gets a wake-up of its own at its time. A look over every
    /// pending send, so once a tick, not per message (a campaign queues thousands).
    fn wake_when_next_due(&mut self, myself: &ActorRef<RelayMsg>) {
        let now = self.ctx.now().timestamp_millis();
        let next = self
            .pending
            .values()
            .filter(|s| !self.in_flight.contains(&s.message_id))
            .filter_map(|s| s.next_attempt_at.map(|t| t.timestamp_millis()))
            .filter(|&due| due > now)
            .min();
        if let Some(due) = next {
            self.wake_at(myself, due);
        }
    }

    /// Arms a wake-up at `due` (Unix ms) when it falls within two ticks and before the
    /// one already armed, so that a burst of failures arms few timers.
    fn wake_at(&mut self, myself: &ActorRef<RelayMsg>, due: i64) {
        let now = self.ctx.now().timestamp_millis();
        let horizon = 2 * self.ctx.settings.tick.as_millis() as i64;
        let wait = due - now;
        let armed_sooner = self.woken_for.is_some_and(|at| at > now && at <= due);
        if wait <= 0 || wait > horizon || armed_sooner {
            return;
        }
        self.woken_for = Some(due);
        myself.send_after(Duration::from_millis(wait as u64), || RelayMsg::Tick);
    }

    fn send_due(&mut self, myself: &ActorRef<RelayMsg>) {
        let now = self.ctx.now();
        let room = self
            .ctx
            .settings
            .max_in_flight
            .saturating_sub(self.in_flight.len());
        let due: Vec<&PendingSend> = self
            .pending
            .values()
            .filter(|s| {
                !self.in_flight.contains(&s.message_id)
                    && s.next_attempt_at.is_none_or(|t| *t <= now)
            })
            .take(room)
            .collect();
        let mut started = Vec::new();
        for send in due {
            let labels = [
                ("x-service-message-id", send.message_id.to_string()),
                (
                    "x-service-delivery-attempt",
                    (send.attempts + 1).to_string(),
                ),
            ];
            let (url, body) = (self.cfg.relay_url.clone(), send.body.clone());
            let secrets = self.cfg.signing_secrets(now);
            let (sender, me, stats) = (self.ctx.sender.clone(), myself.clone(), self.stats.clone());
            let (message, t) = (send.message_id, now.timestamp());
            tokio::spawn(async move {
                let result = sender
                    .send(sender::Attempt {
                        url: &url,
                        body: &body,
                        secrets: &secrets,
                        labels: &labels,
                        t,
                        loopback_allowed: false,
                    })
                    .await;
                stats.sent();
                if me.send_message(RelayMsg::Done { message, result }).is_err() {
                    stats.received();
                }
            });
            started.push(message);
        }
        self.in_flight.extend(started);
    }

    /// Records an attempt: sent, failed for good, or back on the ladder.
    fn record(&mut self, message: MessageId, result: SendResult) -> Result<(), DomainError> {
        self.in_flight.remove(&message);
        let Some(mut send) = self.pending.remove(&message) else {
            return Ok(());
        };
        send.attempts += 1;
        let settings = &self.ctx.settings;
        let outcome = match (result.outcome, result.status_code) {
            (Outcome::Delivered, _) => Ok(()),
            (_, Some(code @ (401 | 403))) => Err(SendFailure {
                error: format!("the relay answered {code}: access to the channel was removed"),
                access_removed: true,
            }),
            _ => {
                let error = result
                    .error
                    .unwrap_or_else(|| "the relay did not accept the message".into());
                self.ctx
                    .stats
                    .failed_attempts
                    .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                if (send.attempts as usize) < settings.max_attempts() {
                    let wait = settings.retry_delays[send.attempts as usize - 1];
                    let due = self.ctx.now() + chrono::Duration::from_std(wait).unwrap_or_default();
                    send.next_attempt_at = Some(Timestamp(due));
                    let mut batch = Batch::default();
                    batch.put(record::key(self.cfg.channel_id, message), &send)?;
                    self.store.apply(batch)?;
                    self.ctx
                        .stats
                        .retries_scheduled
                        .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    self.pending.insert(message, send);
                    return Ok(());
                }
                Err(SendFailure {
                    error,
                    access_removed: false,
                })
            }
        };
        self.ctx.report(SendReport {
            workspace: self.cfg.workspace_id.clone(),
            channel: self.cfg.channel_id,
            conversation: send.conversation_id,
            message,
            result: outcome,
        });
        Ok(())
    }

    /// Deletes what is left of the connection's sends (its workspace failed them already).
    fn forget_all(&mut self) -> Result<(), DomainError> {
        let mut batch = Batch::default();
        for k in self.store.keys(&record::prefix(self.cfg.channel_id))? {
            batch.delete(k);
        }
        self.pending.clear();
        Ok(self.store.apply(batch)?)
    }
}
