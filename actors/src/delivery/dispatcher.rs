//! Endpoint id -> delivery actor. Spawns actors when deliveries are committed or an
//! endpoint changes, reports outcomes on its own channel ([`Reports`]), and keeps the
//! counters operators read.
//!
//! Delivery knows nothing of workspace actors: whoever owns the receiving end (the
//! registry) passes each [`super::Report`] on. So the flow stays one way, workspace ->
//! delivery, with no back reference to break at shutdown.

use std::sync::Arc;

use chrono::{DateTime, Utc};
use ractor::ActorRef;
use tokio::sync::mpsc;

use super::context::DeliveryContext;
use super::endpoint::{EndpointActor, EndpointMsg};
use super::sender::{SendResult, Sender};
use super::{DeliverySettings, DeliveryStats, Reports};
use crate::clock::SharedClock;
use crate::domain::page::{Page, PageRequest};
use crate::domain::webhook::EndpointConfig;
use crate::domain::DomainError;
use crate::pool::Pool;
use crate::store::Store;
use crate::telemetry::ActorBook;

struct Inner {
    ctx: Arc<DeliveryContext>,
    actors: Pool<EndpointMsg>,
}

#[derive(Clone)]
pub struct Dispatcher(Arc<Inner>);

impl Dispatcher {
    pub fn new(
        store: Store,
        clock: SharedClock,
        settings: DeliverySettings,
    ) -> Result<(Self, Reports), DomainError> {
        let sender =
            Sender::new(settings.timeout, settings.allow_private).map_err(DomainError::Internal)?;
        let (reports, receiver) = mpsc::unbounded_channel();
        let dispatcher = Self(Arc::new(Inner {
            ctx: Arc::new(DeliveryContext::new(
                store, clock, settings, sender, reports,
            )),
            actors: Pool::new("endpoint_delivery"),
        }));
        Ok((dispatcher, receiver))
    }

    pub fn settings(&self) -> &DeliverySettings {
        self.0.ctx.settings()
    }

    pub fn stats(&self) -> &DeliveryStats {
        self.0.ctx.stats()
    }

    pub fn now(&self) -> DateTime<Utc> {
        self.0.ctx.now()
    }

    /// Live delivery actors.
    pub fn live(&self) -> usize {
        self.0.actors.live()
    }

    /// The live delivery actors' figures.
    pub fn book(&self) -> &ActorBook {
        self.0.actors.book()
    }

    /// Deliveries waiting, over every endpoint (or one).
    pub fn pending(&self, endpoint: Option<&str>) -> usize {
        self.0.ctx.pending(endpoint)
    }

    /// Counts an endpoint that its workspace disabled (410, or the failure window).
    pub(crate) fn count_disabled(&self) {
        self.0.ctx.count_disabled();
    }

    /// The endpoint's actor, started (and its pending deliveries loaded) if needed, with
    /// `cfg` as its configuration.
    pub async fn ensure(&self, cfg: EndpointConfig) -> Result<ActorRef<EndpointMsg>, DomainError> {
        let ctx = self.0.ctx.clone();
        let id = cfg.id.clone();
        self.0
            .actors
            .ensure(
                &id,
                EndpointActor,
                |stats| (cfg.clone(), ctx, stats),
                || EndpointMsg::Configure(cfg.clone()),
            )
            .await
            .map_err(DomainError::Internal)
    }

    /// New deliveries are durable for these endpoints.
    pub fn wake(&self, endpoints: Vec<EndpointConfig>) {
        for cfg in endpoints {
            let me = self.clone();
            tokio::spawn(async move {
                let id = cfg.id.clone();
                match me.ensure(cfg).await {
                    Ok(actor) => {
                        me.0.actors.tell(&id, &actor, EndpointMsg::Wake);
                    }
                    Err(e) => tracing::error!(error = %e, "could not wake a delivery actor"),
                }
            });
        }
    }

    /// An endpoint changed (url, secrets, status).
    pub fn configure(&self, cfg: EndpointConfig) {
        if let Some(actor) = self.0.actors.get(&cfg.id) {
            self.0
                .actors
                .tell(&cfg.id.clone(), &actor, EndpointMsg::Configure(cfg));
        }
    }

    /// An endpoint was deleted.
    pub fn remove(&self, endpoint: &str) {
        if let Some(actor) = self.0.actors.remove(endpoint) {
            self.0.actors.tell(endpoint, &actor, EndpointMsg::Remove);
        }
        self.0.ctx.forget(endpoint);
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
        let page = call(&actor, |r| EndpointMsg::List { page, reply: r }).await?;
        // The log shows only what is on disk: every outcome it lists was applied before
        // this flush began.
        self.0.ctx.store().durable().await?;
        Ok(page)
    }

    pub async fn redeliver(
        &self,
        cfg: EndpointConfig,
        delivery: crate::ids::DeliveryId,
    ) -> Result<super::record::Delivery, DomainError> {
        let id = cfg.id.clone();
        let actor = self.ensure(cfg).await?;
        self.count_call(&id);
        call(&actor, |r| EndpointMsg::Redeliver { delivery, reply: r }).await
    }

    fn count_call(&self, endpoint: &str) {
        self.0.actors.count_call(endpoint);
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
            .ctx
            .sender()
            .send(super::sender::Attempt {
                url: &cfg.url,
                body,
                secrets: &cfg.secrets_at(self.now()),
                labels: &super::sender::event_labels(event_id, event_type, 1),
                t: self.now().timestamp(),
                loopback_allowed: cfg.loopback_allowed,
            })
            .await
    }

    /// Stops every delivery actor (shutdown); pending deliveries stay stored.
    pub fn stop_all(&self) {
        self.0.actors.stop_all();
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
