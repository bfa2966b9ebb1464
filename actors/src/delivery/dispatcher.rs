//! Endpoint id -> delivery actor. Spawns actors when deliveries are committed or an
//! endpoint changes, passes outcomes back to the workspace actors, and keeps the counters
//! operators read.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, RwLock};

use chrono::{DateTime, Utc};
use dashmap::DashMap;
use ractor::{Actor, ActorRef};

use super::endpoint::{EndpointActor, EndpointConfig, EndpointMsg};
use super::sender::{Outcome, SendResult, Sender};
use super::DeliverySettings;
use crate::clock::SharedClock;
use crate::domain::page::{Page, PageRequest};
use crate::domain::webhook::LastDelivery;
use crate::domain::DomainError;
use crate::ids::WorkspaceId;
use crate::registry::Registry;
use crate::store::Store;
use crate::telemetry::ActorBook;
use crate::workspace::{WebhookMsg, WorkspaceMsg};

/// Delivery counters for operators.
#[derive(Debug, Default)]
pub struct DeliveryStats {
    pub delivered: AtomicU64,
    pub failed_attempts: AtomicU64,
    pub gone: AtomicU64,
    pub retries_scheduled: AtomicU64,
    pub endpoints_disabled: AtomicU64,
}

struct Inner {
    store: Store,
    clock: SharedClock,
    settings: DeliverySettings,
    sender: Sender,
    actors: DashMap<String, ActorRef<EndpointMsg>>,
    book: ActorBook,
    pending: DashMap<String, usize>,
    spawning: tokio::sync::Mutex<()>,
    /// Cleared at shutdown: the registry also holds this dispatcher.
    registry: RwLock<Option<Registry>>,
    stats: DeliveryStats,
}

#[derive(Clone)]
pub struct Dispatcher(Arc<Inner>);

impl Dispatcher {
    pub fn new(
        store: Store,
        clock: SharedClock,
        settings: DeliverySettings,
    ) -> Result<Self, DomainError> {
        let sender =
            Sender::new(settings.timeout, settings.allow_private).map_err(DomainError::Internal)?;
        Ok(Self(Arc::new(Inner {
            store,
            clock,
            settings,
            sender,
            actors: DashMap::new(),
            book: ActorBook::new("endpoint_delivery"),
            pending: DashMap::new(),
            spawning: tokio::sync::Mutex::new(()),
            registry: RwLock::new(None),
            stats: DeliveryStats::default(),
        })))
    }

    /// Connects outcome reports to the workspace actors.
    pub fn attach(&self, registry: Registry) {
        if let Ok(mut r) = self.0.registry.write() {
            *r = Some(registry);
        }
    }

    pub fn settings(&self) -> &DeliverySettings {
        &self.0.settings
    }

    pub fn stats(&self) -> &DeliveryStats {
        &self.0.stats
    }

    pub(crate) fn store(&self) -> &Store {
        &self.0.store
    }

    pub(crate) fn sender(&self) -> &Sender {
        &self.0.sender
    }

    pub fn now(&self) -> DateTime<Utc> {
        self.0.clock.now()
    }

    /// Live delivery actors.
    pub fn live(&self) -> usize {
        self.0.actors.len()
    }

    /// The live delivery actors' figures.
    pub fn book(&self) -> &ActorBook {
        &self.0.book
    }

    /// Sends to an endpoint actor, counting the message into its mailbox depth.
    pub(crate) fn tell(
        &self,
        endpoint: &str,
        actor: &ActorRef<EndpointMsg>,
        msg: EndpointMsg,
    ) -> bool {
        let stats = self.0.book.get(endpoint);
        if let Some(s) = &stats {
            s.sent();
        }
        let ok = actor.send_message(msg).is_ok();
        if let (false, Some(s)) = (ok, &stats) {
            s.received();
        }
        ok
    }

    /// Deliveries waiting, over every endpoint (or one).
    pub fn pending(&self, endpoint: Option<&str>) -> usize {
        match endpoint {
            Some(id) => self.0.pending.get(id).map_or(0, |n| *n),
            None => self.0.pending.iter().map(|n| *n).sum(),
        }
    }

    pub(crate) fn set_pending(&self, endpoint: &str, n: usize) {
        self.0.pending.insert(endpoint.to_string(), n);
    }

    pub(crate) fn count_attempt(&self, outcome: Outcome) {
        let s = &self.0.stats;
        match outcome {
            Outcome::Delivered => s.delivered.fetch_add(1, Ordering::Relaxed),
            Outcome::Failed => s.failed_attempts.fetch_add(1, Ordering::Relaxed),
            Outcome::Gone => s.gone.fetch_add(1, Ordering::Relaxed),
        };
    }

    pub(crate) fn count_retry(&self) {
        self.0
            .stats
            .retries_scheduled
            .fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn count_disabled(&self) {
        self.0
            .stats
            .endpoints_disabled
            .fetch_add(1, Ordering::Relaxed);
    }

    /// The endpoint's actor, started (and its pending deliveries loaded) if needed, with
    /// `cfg` as its configuration.
    pub async fn ensure(&self, cfg: EndpointConfig) -> Result<ActorRef<EndpointMsg>, DomainError> {
        if let Some(actor) = self.0.actors.get(&cfg.id).map(|a| a.clone()) {
            if self.tell(&cfg.id, &actor, EndpointMsg::Configure(cfg.clone())) {
                return Ok(actor);
            }
        }
        let _guard = self.0.spawning.lock().await;
        if let Some(actor) = self.0.actors.get(&cfg.id).map(|a| a.clone()) {
            if self.tell(&cfg.id, &actor, EndpointMsg::Configure(cfg.clone())) {
                return Ok(actor);
            }
        }
        let id = cfg.id.clone();
        let stats = self.0.book.enter(&id);
        let (actor, _) = Actor::spawn(None, EndpointActor, (cfg, self.clone(), stats))
            .await
            .map_err(|e| DomainError::Internal(format!("delivery actor start: {e}")))?;
        self.0.actors.insert(id, actor.clone());
        Ok(actor)
    }

    /// New deliveries are durable for these endpoints.
    pub fn wake(&self, endpoints: Vec<EndpointConfig>) {
        for cfg in endpoints {
            let me = self.clone();
            tokio::spawn(async move {
                let id = cfg.id.clone();
                match me.ensure(cfg).await {
                    Ok(actor) => {
                        me.tell(&id, &actor, EndpointMsg::Wake);
                    }
                    Err(e) => tracing::error!(error = %e, "could not wake a delivery actor"),
                }
            });
        }
    }

    /// An endpoint changed (url, secrets, status).
    pub fn configure(&self, cfg: EndpointConfig) {
        if let Some(actor) = self.0.actors.get(&cfg.id).map(|a| a.clone()) {
            self.tell(&cfg.id.clone(), &actor, EndpointMsg::Configure(cfg));
        }
    }

    /// An endpoint was deleted.
    pub fn remove(&self, endpoint: &str) {
        if let Some((_, actor)) = self.0.actors.remove(endpoint) {
            self.tell(endpoint, &actor, EndpointMsg::Remove);
        }
        self.0.pending.remove(endpoint);
    }

    /// Passes an attempt's outcome to the endpoint's workspace.
    pub(crate) fn report(
        &self,
        ws: &WorkspaceId,
        endpoint: &str,
        last: LastDelivery,
        outcome: Outcome,
    ) {
        let Some(registry) = self.0.registry.read().ok().and_then(|r| r.clone()) else {
            return;
        };
        let (ws, endpoint) = (ws.clone(), endpoint.to_string());
        tokio::spawn(async move {
            let msg = WorkspaceMsg::Webhook(Box::new(WebhookMsg::Outcome(endpoint, last, outcome)));
            if let Err(e) = registry.tell(&ws, msg).await {
                tracing::warn!(error = %e, "could not report a delivery outcome");
            }
        });
    }

    /// Deliveries of an endpoint, newest first.
    pub async fn deliveries(
        &self,
        cfg: EndpointConfig,
        page: PageRequest,
    ) -> Result<Page<super::record::Delivery>, DomainError> {
        let id = cfg.id.clone();
        let actor = self.ensure(cfg).await?;
        self.count_call(&id);
        let page = call(&actor, |r| EndpointMsg::List(page, r)).await?;
        // The log shows only what is on disk: every outcome it lists was applied before
        // this flush began.
        self.0.store.durable().await?;
        Ok(page)
    }

    pub async fn redeliver(
        &self,
        cfg: EndpointConfig,
        delivery: u64,
    ) -> Result<super::record::Delivery, DomainError> {
        let id = cfg.id.clone();
        let actor = self.ensure(cfg).await?;
        self.count_call(&id);
        call(&actor, |r| EndpointMsg::Redeliver(delivery, r)).await
    }

    fn count_call(&self, endpoint: &str) {
        if let Some(s) = self.0.book.get(endpoint) {
            s.sent();
        }
    }

    /// Sends a signed event to an endpoint now, outside the queue (the test call).
    pub async fn send_now(
        &self,
        cfg: &EndpointConfig,
        event_id: &str,
        event_type: &str,
        body: &str,
    ) -> SendResult {
        self.0
            .sender
            .send(super::sender::Attempt {
                url: &cfg.url,
                body,
                secrets: &cfg.secrets_at(self.now()),
                event_id,
                event_type,
                number: 1,
                t: self.now().timestamp(),
            })
            .await
    }

    /// Stops every delivery actor (shutdown) and lets go of the registry; pending
    /// deliveries stay stored.
    pub fn stop_all(&self) {
        for a in self.0.actors.iter() {
            a.stop(None);
        }
        for s in self.0.book.snapshot() {
            if let Some(stats) = self.0.book.get(&s.key) {
                self.0.book.leave(&s.key, &stats);
            }
        }
        self.0.actors.clear();
        if let Ok(mut r) = self.0.registry.write() {
            *r = None;
        }
    }
}

async fn call<T: Send + 'static>(
    actor: &ActorRef<EndpointMsg>,
    build: impl FnOnce(super::endpoint::Reply<T>) -> EndpointMsg,
) -> Result<T, DomainError> {
    match actor
        .call(build, Some(std::time::Duration::from_secs(30)))
        .await
    {
        Ok(ractor::rpc::CallResult::Success(answer)) => answer,
        Ok(_) => Err(DomainError::Internal(
            "delivery actor did not answer in time".into(),
        )),
        Err(e) => Err(DomainError::Internal(format!(
            "delivery actor unreachable: {e}"
        ))),
    }
}
