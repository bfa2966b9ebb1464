//! Workspace id -> actor. Spawns an actor on first use, forgets it when it passivates or
//! fails, and respawns it from the store on the next use.
//!
//! Every workspace actor is linked to one `WorkspaceSupervisor`, which overrides ractor's
//! default (stop the supervisor when a child fails): a failed child is forgotten and
//! counted, and the next message for that workspace starts a fresh actor that reloads its
//! state from the store, so nothing acknowledged is lost and no partial in-memory change
//! survives.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use dashmap::DashMap;
use ractor::rpc::CallResult;
use ractor::{
    Actor, ActorCell, ActorId, ActorProcessingErr, ActorRef, MessagingErr, RpcReplyPort,
    SupervisionEvent,
};
use tokio::sync::OnceCell;

use crate::clock::SharedClock;
use crate::delivery::{Dispatcher, Reports};
use crate::domain::DomainError;
use crate::ids::WorkspaceId;
use crate::outbound::{Relays, SendReports};
use crate::store::{Store, Taken};
use crate::telemetry::{ActorBook, ActorStats};
use crate::workspace::{WebhookMsg, WorkspaceActor, WorkspaceArgs, WorkspaceMsg};

/// The services that run beside the workspace actors and report back to them: webhook
/// delivery and the channel relays, each with the receiving end of its reports.
pub struct Outlets {
    pub dispatcher: Dispatcher,
    pub delivery_reports: Reports,
    pub relays: Relays,
    pub send_reports: SendReports,
}

impl Outlets {
    pub fn new(
        store: Store,
        clock: SharedClock,
        delivery: crate::delivery::DeliverySettings,
        outbound: crate::outbound::OutboundSettings,
    ) -> Result<Self, DomainError> {
        let (dispatcher, delivery_reports) =
            Dispatcher::new(store.clone(), clock.clone(), delivery)?;
        let (relays, send_reports) = Relays::new(store, clock, outbound)?;
        Ok(Self {
            dispatcher,
            delivery_reports,
            relays,
            send_reports,
        })
    }
}

/// Life-cycle counters for operators.
#[derive(Debug, Default)]
pub struct RegistryStats {
    pub spawned: AtomicU64,
    pub restarts: AtomicU64,
    pub passivations: AtomicU64,
}

pub struct RegistrySettings {
    pub idle_after: Duration,
    pub call_timeout: Duration,
    /// The AI every workspace actor uses.
    pub ai: crate::ai::Ai,
}

type Slot = Arc<OnceCell<ActorRef<WorkspaceMsg>>>;

struct Inner {
    store: Store,
    clock: SharedClock,
    dispatcher: Dispatcher,
    relays: Relays,
    settings: RegistrySettings,
    slots: DashMap<WorkspaceId, Slot>,
    owners: DashMap<ActorId, (WorkspaceId, Arc<ActorStats>)>,
    /// Actors that passivate: forgotten, so that callers start a fresh one, but still
    /// finishing the messages they took before. Until one stops, a fresh actor of its
    /// workspace waits to load: it would miss what the leaving one still writes.
    leaving: DashMap<WorkspaceId, ActorCell>,
    /// The workspace of each leaving actor, to drop its entry when it stops.
    leaving_ids: DashMap<ActorId, WorkspaceId>,
    book: ActorBook,
    stats: RegistryStats,
}

impl Inner {
    /// A leaving actor has stopped: a fresh one of its workspace need not wait.
    fn left(&self, cell: &ActorCell) {
        let id = cell.get_id();
        if let Some((_, ws)) = self.leaving_ids.remove(&id) {
            self.leaving.remove_if(&ws, |_, c| c.get_id() == id);
        }
    }

    /// Drops the slot of `ws` if it still holds actor `id`.
    fn forget(&self, ws: &WorkspaceId, id: ActorId) {
        self.slots
            .remove_if(ws, |_, slot| slot.get().map(|a| a.get_id()) == Some(id));
        if let Some((_, (ws, stats))) = self.owners.remove(&id) {
            self.book.leave(ws.as_str(), &stats);
        }
    }
}

#[derive(Clone)]
pub struct Registry {
    inner: Arc<Inner>,
    supervisor: ActorRef<()>,
}

impl Registry {
    pub async fn start(
        store: Store,
        clock: SharedClock,
        outlets: Outlets,
        settings: RegistrySettings,
    ) -> Result<Self, DomainError> {
        let inner = Arc::new(Inner {
            store,
            clock,
            dispatcher: outlets.dispatcher,
            relays: outlets.relays,
            settings,
            slots: DashMap::new(),
            owners: DashMap::new(),
            leaving: DashMap::new(),
            leaving_ids: DashMap::new(),
            book: ActorBook::new("workspace"),
            stats: RegistryStats::default(),
        });
        let (supervisor, _) = Actor::spawn(None, WorkspaceSupervisor, inner.clone())
            .await
            .map_err(|e| DomainError::Internal(format!("supervisor: {e}")))?;
        // Endpoint delivery actors stop when idle after the same time as workspace actors.
        inner.dispatcher.passivate_after(inner.settings.idle_after);
        let registry = Self { inner, supervisor };
        registry.forward(outlets.delivery_reports, |r| {
            let ws = r.workspace.clone();
            (ws, WorkspaceMsg::Webhook(Box::new(WebhookMsg::Outcome(r))))
        });
        registry.forward(outlets.send_reports, |r| {
            (r.workspace.clone(), WorkspaceMsg::Sent(Box::new(r)))
        });
        Ok(registry)
    }

    /// Passes reports (delivery or send outcomes) to the workspaces they belong to, in the
    /// order they happened. Holds the registry weakly, so dropping it ends the loop.
    fn forward<R: Send + 'static>(
        &self,
        mut reports: tokio::sync::mpsc::UnboundedReceiver<R>,
        route: fn(R) -> (WorkspaceId, WorkspaceMsg),
    ) {
        let weak = Arc::downgrade(&self.inner);
        let supervisor = self.supervisor.clone();
        tokio::spawn(async move {
            while let Some(report) = reports.recv().await {
                let Some(inner) = weak.upgrade() else { break };
                let registry = Registry {
                    inner,
                    supervisor: supervisor.clone(),
                };
                let (ws, msg) = route(report);
                if let Err(e) = registry.tell(&ws, msg).await {
                    tracing::warn!(error = %e, "could not report an outcome to its workspace");
                }
            }
        });
    }

    pub fn stats(&self) -> &RegistryStats {
        &self.inner.stats
    }

    /// How many workspace actors are alive.
    pub fn live(&self) -> usize {
        self.inner.book.live()
    }

    /// The live workspace actors' figures.
    pub fn book(&self) -> &ActorBook {
        &self.inner.book
    }

    /// The actor of `ws`, spawned (and its state loaded) if none is running.
    pub async fn actor(&self, ws: &WorkspaceId) -> Result<ActorRef<WorkspaceMsg>, DomainError> {
        self.own(ws).await?;
        let slot = self.inner.slots.entry(ws.clone()).or_default().clone();
        slot.get_or_try_init(|| self.spawn(ws)).await.cloned()
    }

    /// In a cluster, nothing of a workspace runs on a node that does not own it: takes
    /// `ws` when it is free (loading its rows and resuming its deliveries and sends), or
    /// says which node has it. Alone, every workspace is this process's.
    pub async fn own(&self, ws: &WorkspaceId) -> Result<(), DomainError> {
        let Some(cluster) = self.inner.store.cluster() else {
            return Ok(());
        };
        if cluster.holds(ws.as_str()) {
            return Ok(());
        }
        // An actor running now is left from before this node lost the workspace (its rows
        // are reloaded by the take); one started after the take is fresh and stays.
        let stale = self
            .inner
            .slots
            .get(ws)
            .and_then(|slot| slot.get().map(|a| a.get_id()));
        let name = ws.to_string();
        let taken = tokio::task::spawn_blocking(move || cluster.take(&name))
            .await
            .map_err(|e| DomainError::Internal(format!("taking a workspace: {e}")))??;
        match taken {
            Taken::Held => Ok(()),
            Taken::Now => {
                if let Some(id) = stale {
                    let gone = self
                        .inner
                        .slots
                        .remove_if(ws, |_, slot| slot.get().map(|a| a.get_id()) == Some(id));
                    if let Some((_, slot)) = gone {
                        if let Some(actor) = slot.get() {
                            actor.stop(Some("its workspace was taken again".into()));
                        }
                    }
                }
                self.resume_outlets(ws).await;
                Ok(())
            }
            Taken::Elsewhere(holder) => Err(DomainError::Elsewhere {
                node: holder.node,
                addr: holder.addr,
                admin_addr: holder.admin_addr,
            }),
        }
    }

    /// Starts a delivery actor for every stored endpoint of `ws` and a relay actor for
    /// every connection with messages waiting, so that what was pending before a stop, a
    /// crash or a move to this node goes out on schedule.
    pub async fn resume_outlets(&self, ws: &WorkspaceId) {
        use crate::workspace::{stored_endpoints, stored_relays};
        let store = &self.inner.store;
        match stored_endpoints(store, ws) {
            Ok(configs) => {
                for cfg in configs {
                    if let Err(e) = self.inner.dispatcher.ensure(cfg).await {
                        tracing::error!(error = %e, "could not resume deliveries");
                    }
                }
            }
            Err(e) => tracing::error!(error = %e, workspace = %ws, "could not read endpoints"),
        }
        match stored_relays(store, ws) {
            Ok(configs) => {
                for cfg in configs {
                    if let Err(e) = self.inner.relays.resume(cfg).await {
                        tracing::error!(error = %e, "could not resume pending sends");
                    }
                }
            }
            Err(e) => tracing::error!(error = %e, workspace = %ws, "could not read channels"),
        }
    }

    /// Another node owns `ws` now (cluster mode): its actor, delivery actors and relay
    /// actors stop here; what they had stored stays for the new owner.
    pub fn lose(&self, ws: &WorkspaceId) {
        if let Some((_, slot)) = self.inner.slots.remove(ws) {
            if let Some(actor) = slot.get() {
                actor.stop(Some("the workspace moved to another node".into()));
            }
        }
        self.inner.dispatcher.release_workspace(ws.as_str());
        self.inner.relays.release_workspace(ws.as_str());
    }

    /// Waits for a passivating actor of `ws` to stop (it finishes the messages it took
    /// first): only then does a fresh one load everything it wrote.
    async fn until_left(&self, ws: &WorkspaceId) -> Result<(), DomainError> {
        let Some(cell) = self.inner.leaving.get(ws).map(|c| c.clone()) else {
            return Ok(());
        };
        if cell
            .wait(Some(self.inner.settings.call_timeout))
            .await
            .is_err()
        {
            return Err(DomainError::Unavailable(format!(
                "workspace {ws} is still stopping; try again"
            )));
        }
        self.inner.left(&cell);
        Ok(())
    }

    async fn spawn(&self, ws: &WorkspaceId) -> Result<ActorRef<WorkspaceMsg>, DomainError> {
        self.until_left(ws).await?;
        let weak = Arc::downgrade(&self.inner);
        let stats = self.inner.book.enter(ws.as_str());
        let args = WorkspaceArgs {
            ai: self.inner.settings.ai.clone(),
            stats: stats.clone(),
            id: ws.clone(),
            store: self.inner.store.scoped(ws.as_str()),
            clock: self.inner.clock.clone(),
            dispatcher: self.inner.dispatcher.clone(),
            relays: self.inner.relays.clone(),
            idle_after: self.inner.settings.idle_after,
            on_recover: {
                let weak = weak.clone();
                Arc::new(move || {
                    if let Some(inner) = weak.upgrade() {
                        inner.stats.restarts.fetch_add(1, Ordering::Relaxed);
                    }
                })
            },
            on_passivate: Arc::new(move |ws, cell| {
                if let Some(inner) = weak.upgrade() {
                    let id = cell.get_id();
                    inner.leaving_ids.insert(id, ws.clone());
                    inner.leaving.insert(ws.clone(), cell);
                    inner.forget(ws, id);
                    inner.stats.passivations.fetch_add(1, Ordering::Relaxed);
                }
            }),
        };
        let (actor, _) =
            Actor::spawn_linked(None, WorkspaceActor, args, self.supervisor.get_cell())
                .await
                .map_err(|e| {
                    let cause = format!("workspace actor start: {e}");
                    if self.inner.store.health().is_failing() {
                        DomainError::Unavailable(cause)
                    } else {
                        DomainError::Internal(cause)
                    }
                })?;
        self.inner
            .owners
            .insert(actor.get_id(), (ws.clone(), stats));
        self.inner.stats.spawned.fetch_add(1, Ordering::Relaxed);
        Ok(actor)
    }

    /// Asks the workspace actor and waits for its answer. A message that could not be
    /// delivered because the actor was stopping is sent again to a fresh actor; it was never
    /// handled, so this cannot apply a change twice.
    pub async fn call<T, F>(&self, ws: &WorkspaceId, build: F) -> Result<T, DomainError>
    where
        T: Send + 'static,
        F: Fn(RpcReplyPort<Result<T, DomainError>>) -> WorkspaceMsg,
    {
        for _ in 0..3 {
            let actor = self.actor(ws).await?;
            let stats = self.inner.book.get(ws.as_str());
            if let Some(s) = &stats {
                s.sent();
            }
            let answer = actor
                .call(&build, Some(self.inner.settings.call_timeout))
                .await;
            if let (Some(s), Err(MessagingErr::SendErr(_))) = (&stats, &answer) {
                s.received();
            }
            match answer {
                Ok(CallResult::Success(answer)) => return answer,
                Ok(CallResult::Timeout) => {
                    return Err(DomainError::Internal(format!("workspace {ws} timed out")))
                }
                Ok(CallResult::SenderError) => {
                    return Err(DomainError::Internal(format!(
                        "workspace {ws} failed while handling the request"
                    )))
                }
                Err(MessagingErr::SendErr(_)) | Err(MessagingErr::ChannelClosed) => {
                    self.inner.forget(ws, actor.get_id());
                }
                Err(MessagingErr::InvalidActorType) => {
                    return Err(DomainError::Internal("actor type mismatch".into()))
                }
            }
        }
        Err(DomainError::Internal(format!(
            "workspace {ws} could not be reached"
        )))
    }

    /// Sends without waiting for an answer (due timers, delivery and relay outcomes; tests
    /// use it to crash an actor). An actor that stopped or is passivating refuses the
    /// message and hands it back: it goes to a fresh actor, as a call does, rather than
    /// being lost.
    pub async fn tell(&self, ws: &WorkspaceId, msg: WorkspaceMsg) -> Result<(), DomainError> {
        let mut msg = msg;
        for _ in 0..3 {
            let actor = self.actor(ws).await?;
            let stats = self.inner.book.get(ws.as_str());
            if let Some(s) = &stats {
                s.sent();
            }
            let refused = match actor.send_message(msg) {
                Ok(()) => return Ok(()),
                Err(e) => e,
            };
            if let Some(s) = &stats {
                s.received();
            }
            match refused {
                MessagingErr::SendErr(back) => {
                    self.inner.forget(ws, actor.get_id());
                    msg = back;
                }
                other => return Err(DomainError::Internal(other.to_string())),
            }
        }
        Err(DomainError::Internal(format!(
            "workspace {ws} could not be reached"
        )))
    }

    /// Stops every actor, letting each finish what is in its mailbox.
    pub async fn shutdown(&self, wait: Duration) {
        let actors: Vec<_> = self
            .inner
            .slots
            .iter()
            .filter_map(|s| s.get().cloned())
            .collect();
        for a in actors {
            let _ = a.drain_and_wait(Some(wait)).await;
        }
        self.supervisor.stop(None);
    }
}

/// Due timers go to their workspace's actor, which is started for them if it is not
/// running (a passivated workspace's timers still fire), one workspace's in due order
/// (its mailbox keeps that order) and workspaces side by side; the wake-up of a stopped
/// endpoint delivery actor goes to the dispatcher, which starts that actor again.
impl crate::schedule::TimerSink for Registry {
    fn due(&self, timers: Vec<crate::schedule::Timer>) {
        let mut by_workspace: std::collections::HashMap<WorkspaceId, Vec<crate::schedule::Timer>> =
            std::collections::HashMap::new();
        for timer in timers {
            if crate::delivery::wake::endpoint_of(&timer).is_some() {
                self.inner.dispatcher.wake_up(timer);
                continue;
            }
            by_workspace
                .entry(timer.workspace.clone())
                .or_default()
                .push(timer);
        }
        for (ws, timers) in by_workspace {
            let registry = self.clone();
            tokio::spawn(async move {
                for timer in timers {
                    if let Err(e) = registry.tell(&ws, WorkspaceMsg::TimerDue(timer)).await {
                        tracing::warn!(workspace = %ws, error = %e, "could not hand over a due timer");
                    }
                }
            });
        }
    }
}

/// Watches workspace actors; see the module docs.
struct WorkspaceSupervisor;

impl Actor for WorkspaceSupervisor {
    type Msg = ();
    type State = Arc<Inner>;
    type Arguments = Arc<Inner>;

    async fn pre_start(
        &self,
        _: ActorRef<()>,
        inner: Arc<Inner>,
    ) -> Result<Arc<Inner>, ActorProcessingErr> {
        Ok(inner)
    }

    async fn handle_supervisor_evt(
        &self,
        _: ActorRef<()>,
        event: SupervisionEvent,
        inner: &mut Arc<Inner>,
    ) -> Result<(), ActorProcessingErr> {
        match event {
            SupervisionEvent::ActorFailed(cell, err) => {
                inner.left(&cell);
                tracing::error!(actor = %cell.get_id(), error = %err, "workspace actor failed; it restarts from the store on next use");
                inner.stats.restarts.fetch_add(1, Ordering::Relaxed);
                forget_cell(inner, &cell);
            }
            SupervisionEvent::ActorTerminated(cell, ..) => {
                inner.left(&cell);
                forget_cell(inner, &cell)
            }
            _ => {}
        }
        Ok(())
    }
}

fn forget_cell(inner: &Inner, cell: &ActorCell) {
    let id = cell.get_id();
    let ws = inner.owners.get(&id).map(|o| o.0.clone());
    if let Some(ws) = ws {
        inner.forget(&ws, id);
    }
}
