//! Endpoint id -> delivery actor. Spawns actors when deliveries are committed, an
//! endpoint changes or a wake-up falls due; reports outcomes on its own channel
//! ([`Reports`]); prunes old records; and keeps the counters operators read.
//!
//! Delivery knows nothing of workspace actors: whoever owns the receiving end (the
//! registry) passes each [`super::Report`] on. So the flow stays one way, workspace ->
//! delivery, with no back reference to break at shutdown.

use std::sync::Arc;
use std::time::Duration;

use chrono::{DateTime, Utc};
use dashmap::{DashMap, DashSet};
use ractor::rpc::CallResult;
use ractor::ActorRef;
use tokio::sync::mpsc;

use super::context::DeliveryContext;
use super::endpoint::{EndpointActor, EndpointArgs, EndpointMsg, HandBack, Reply, StopHook};
use super::record::{self, Delivery, DeliveryStatus};
use super::sender::{SendResult, Sender};
use super::{pending, wake, DeliverySettings, DeliveryStats, Reports};
use crate::clock::SharedClock;
use crate::domain::page::{Page, PageRequest};
use crate::domain::webhook::EndpointConfig;
use crate::domain::DomainError;
use crate::pool::Pool;
use crate::schedule::Timer;
use crate::store::{decode, Batch, Store, StoreResult};
use crate::telemetry::ActorBook;

/// How often finished deliveries older than the history period are deleted.
const PRUNE_EVERY: chrono::Duration = chrono::Duration::hours(1);

/// Records read at a time while pruning.
const PRUNE_PAGE: usize = 256;

struct Inner {
    ctx: Arc<DeliveryContext>,
    actors: Pool<EndpointMsg>,
    /// The latest configuration of every endpoint, with a live actor or not: a wake-up
    /// that falls due after its actor stopped starts it again with this.
    configs: DashMap<String, EndpointConfig>,
    /// Endpoints deleted since start: nothing starts their actor again (a wake for a
    /// delivery committed just before the delete would, and resend what was deleted).
    /// Ids are never reused.
    removed: DashSet<String>,
}

#[derive(Clone)]
pub struct Dispatcher(Arc<Inner>);

impl Dispatcher {
    /// Also builds the pending index once, for a data folder written before it existed,
    /// and (on a tokio runtime) starts the hourly pruning of old records.
    pub fn new(
        store: Store,
        clock: SharedClock,
        settings: DeliverySettings,
    ) -> Result<(Self, Reports), DomainError> {
        let sender =
            Sender::new(settings.timeout, settings.allow_private).map_err(DomainError::Internal)?;
        if let Some(indexed) = pending::build_once(&store)? {
            tracing::info!(
                indexed,
                "built the pending-delivery index from the delivery records (once)"
            );
        }
        let (reports, receiver) = mpsc::unbounded_channel();
        let dispatcher = Self(Arc::new(Inner {
            ctx: Arc::new(DeliveryContext::new(
                store, clock, settings, sender, reports,
            )),
            actors: Pool::new("endpoint_delivery"),
            configs: DashMap::new(),
            removed: DashSet::new(),
        }));
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(prune_while_alive(Arc::downgrade(&dispatcher.0)));
        }
        Ok((dispatcher, receiver))
    }

    pub fn settings(&self) -> &DeliverySettings {
        self.0.ctx.settings()
    }

    /// Endpoint actors with nothing to do stop after `idle` (the workspace actors' idle
    /// time; the registry sets it).
    pub fn passivate_after(&self, idle: Duration) {
        self.0.ctx.set_idle_after(idle);
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
        if self.0.removed.contains(cfg.id.as_str()) {
            return Err(DomainError::NotFound("webhook endpoint"));
        }
        // The latest configuration wins: a wake carries the one its event was staged with,
        // and the endpoint may have been paused or changed since (told once durable).
        let cfg = self
            .0
            .configs
            .entry(cfg.id.to_string())
            .or_insert(cfg)
            .clone();
        let ctx = self.0.ctx.clone();
        let id = cfg.id.clone();
        let on_stop = self.stop_hook();
        let hand_back = self.hand_back_hook();
        let actor = self
            .0
            .actors
            .ensure(
                &id,
                EndpointActor,
                |stats| EndpointArgs {
                    cfg: cfg.clone(),
                    ctx,
                    stats,
                    on_stop,
                    hand_back,
                },
                || EndpointMsg::Configure(cfg.clone()),
            )
            .await
            .map_err(DomainError::Internal)?;
        // Deleted while it started: the new actor forgets what it loaded, and stops.
        if self.0.removed.contains(cfg.id.as_str()) {
            self.forget_removed(cfg.workspace_id.as_str(), &cfg.id);
            return Err(DomainError::NotFound("webhook endpoint"));
        }
        Ok(actor)
    }

    /// What an endpoint actor calls as it stops on its own: forget it, so that the next
    /// use starts a fresh one. Holds the dispatcher weakly (the actors live inside it).
    fn stop_hook(&self) -> StopHook {
        let weak = Arc::downgrade(&self.0);
        Arc::new(move |key, id, stats, failed| {
            if let Some(inner) = weak.upgrade() {
                inner.actors.forget(key, id, stats, failed);
            }
        })
    }

    /// What an endpoint actor that is stopping does with a message that needs an actor:
    /// it goes to a fresh one, with the endpoint's latest configuration (none: deleted).
    fn hand_back_hook(&self) -> HandBack {
        let weak = Arc::downgrade(&self.0);
        Arc::new(move |endpoint, msg| {
            let Some(inner) = weak.upgrade() else {
                return;
            };
            let me = Dispatcher(inner);
            let Some(cfg) = me.0.configs.get(endpoint).map(|c| c.clone()) else {
                return;
            };
            match msg {
                EndpointMsg::Configure(_) => me.configure(cfg),
                other => {
                    tokio::spawn(async move { me.tell(cfg, other).await });
                }
            }
        })
    }

    /// New deliveries are durable for these endpoints.
    pub fn wake(&self, endpoints: Vec<EndpointConfig>) {
        for cfg in endpoints {
            let me = self.clone();
            tokio::spawn(async move { me.tell(cfg, EndpointMsg::Wake).await });
        }
    }

    /// A wake-up armed by a stopped endpoint actor fell due: start the actor again, or,
    /// if its endpoint is gone, delete the timer.
    pub fn wake_up(&self, timer: Timer) {
        let Some(endpoint) = wake::endpoint_of(&timer) else {
            return;
        };
        match self.0.configs.get(endpoint).map(|c| c.clone()) {
            Some(cfg) => {
                let me = self.clone();
                tokio::spawn(async move { me.tell(cfg, EndpointMsg::Due(timer)).await });
            }
            None => {
                let mut batch = Batch::default();
                timer.disarm(&mut batch);
                if let Err(e) = self.0.ctx.store().apply(batch) {
                    tracing::warn!(error = %e, "could not delete the wake-up of a deleted endpoint");
                }
            }
        }
    }

    /// Tells the endpoint's actor, started if needed.
    async fn tell(&self, cfg: EndpointConfig, msg: EndpointMsg) {
        let id = cfg.id.clone();
        match self.ensure(cfg).await {
            Ok(actor) => {
                self.0.actors.tell(&id, &actor, msg);
            }
            // Deleted meanwhile: there is nothing to wake.
            Err(DomainError::NotFound(_)) => {}
            Err(e) => tracing::error!(error = %e, "could not wake a delivery actor"),
        }
    }

    /// The latest configuration the dispatcher was told of for `endpoint`.
    pub fn configured(&self, endpoint: &str) -> Option<EndpointConfig> {
        self.0.configs.get(endpoint).map(|c| c.clone())
    }

    /// An endpoint changed (url, secrets, status). An endpoint made active again whose
    /// actor had stopped starts it, if deliveries wait.
    pub fn configure(&self, cfg: EndpointConfig) {
        if self.0.removed.contains(cfg.id.as_str()) {
            return;
        }
        self.0.configs.insert(cfg.id.to_string(), cfg.clone());
        if let Some(actor) = self.0.actors.get(&cfg.id) {
            let id = cfg.id.clone();
            if self
                .0
                .actors
                .tell(&id, &actor, EndpointMsg::Configure(cfg.clone()))
            {
                return;
            }
            // It stopped taking messages (it is stopping): as if there were none.
        }
        if !cfg.active {
            return;
        }
        // Told on the store's flusher thread: the look for waiting deliveries (a read,
        // which waits for queued writes) is the task's.
        let me = self.clone();
        tokio::spawn(async move {
            let waiting =
                me.0.ctx
                    .store()
                    .scan_page(&record::pending_prefix(&cfg.id), None, 1)
                    .map(|found| !found.is_empty());
            if waiting.unwrap_or(true) {
                me.tell(cfg, EndpointMsg::Wake).await;
            }
        });
    }

    /// An endpoint of `workspace` was deleted: its actor, if running, deletes its
    /// deliveries and stops; otherwise they are deleted here.
    pub fn remove(&self, workspace: &str, endpoint: &str) {
        self.0.removed.insert(endpoint.to_string());
        self.forget_removed(workspace, endpoint);
        self.0.ctx.forget(endpoint);
    }

    fn forget_removed(&self, workspace: &str, endpoint: &str) {
        self.0.configs.remove(endpoint);
        let told = self
            .0
            .actors
            .remove(endpoint)
            .is_some_and(|actor| self.0.actors.tell(endpoint, &actor, EndpointMsg::Remove));
        if !told {
            // As the workspace's writer: in cluster mode the deliveries' rows are its own.
            let store = self.0.ctx.store().scoped(workspace);
            let endpoint = endpoint.to_string();
            tokio::task::spawn_blocking(move || {
                if let Err(e) = forget_endpoint(&store, &endpoint) {
                    tracing::warn!(error = %e, "could not delete a deleted endpoint's deliveries");
                }
            });
        }
    }

    /// Another node took `workspace` (cluster mode): its endpoints' actors stop here and
    /// their deliveries stay stored for the new owner.
    pub fn release_workspace(&self, workspace: &str) {
        let endpoints: Vec<String> = self
            .0
            .configs
            .iter()
            .filter(|c| c.workspace_id.as_str() == workspace)
            .map(|c| c.key().clone())
            .collect();
        for endpoint in endpoints {
            self.0.configs.remove(&endpoint);
            if let Some(actor) = self.0.actors.remove(&endpoint) {
                actor.stop(Some("the workspace moved to another node".into()));
            }
        }
    }

    /// Deliveries of an endpoint, newest first.
    pub async fn deliveries(
        &self,
        cfg: EndpointConfig,
        page: PageRequest,
    ) -> Result<Page<Delivery>, DomainError> {
        let page = self
            .ask(cfg, move |r| EndpointMsg::List { page, reply: r })
            .await?;
        // The log shows only what is on disk: every outcome it lists was applied before
        // this flush began.
        self.0.ctx.store().durable().await?;
        Ok(page)
    }

    pub async fn redeliver(
        &self,
        cfg: EndpointConfig,
        delivery: crate::ids::DeliveryId,
    ) -> Result<Delivery, DomainError> {
        self.ask(cfg, move |r| EndpointMsg::Redeliver { delivery, reply: r })
            .await
    }

    /// Asks the endpoint's actor and waits for its answer. A question that reached an
    /// actor as it stopped (idle) was never handled, so it is asked again of a fresh one.
    async fn ask<T: Send + 'static>(
        &self,
        cfg: EndpointConfig,
        build: impl Fn(Reply<T>) -> EndpointMsg,
    ) -> Result<T, DomainError> {
        for _ in 0..3 {
            let actor = self.ensure(cfg.clone()).await?;
            self.0.actors.count_call(&cfg.id);
            match actor.call(&build, Some(Duration::from_secs(30))).await {
                Ok(CallResult::Success(answer)) => return answer,
                Ok(CallResult::Timeout) => {
                    return Err(DomainError::Internal(
                        "delivery actor did not answer in time".into(),
                    ))
                }
                Ok(CallResult::SenderError) | Err(_) => continue,
            }
        }
        Err(DomainError::Internal(
            "delivery actor could not be reached".into(),
        ))
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

    /// Shutdown: every endpoint actor starts no new attempt and stops once its attempts
    /// in flight have ended and been recorded, for up to `wait`; the rest are stopped
    /// then (an attempt cut that way is retried after the restart). Pending deliveries
    /// stay stored.
    pub async fn drain(&self, wait: Duration) {
        self.0.actors.drain(|| EndpointMsg::Drain, wait).await;
    }
}

/// Deletes every delivery of an endpoint whose actor is not running.
fn forget_endpoint(store: &Store, endpoint: &str) -> StoreResult<()> {
    let mut batch = Batch::default();
    for prefix in [record::prefix(endpoint), record::pending_prefix(endpoint)] {
        for k in store.keys(&prefix)? {
            batch.delete(k);
        }
    }
    store.apply(batch)
}

/// Prunes every hour (on the injectable clock, looking every tick) until the dispatcher
/// is gone. Endpoints whose actors stopped are pruned too.
async fn prune_while_alive(dispatcher: std::sync::Weak<Inner>) {
    let Some(tick) = dispatcher.upgrade().map(|d| d.ctx.settings().tick) else {
        return;
    };
    let mut last = dispatcher.upgrade().map(|d| d.ctx.now());
    loop {
        tokio::time::sleep(tick).await;
        let Some(inner) = dispatcher.upgrade() else {
            return;
        };
        let now = inner.ctx.now();
        if last.is_some_and(|l| now - l < PRUNE_EVERY) {
            continue;
        }
        last = Some(now);
        let endpoints: Vec<String> = inner.configs.iter().map(|c| c.key().clone()).collect();
        let ctx = inner.ctx.clone();
        drop(inner);
        let pruned = tokio::task::spawn_blocking(move || {
            let keep = chrono::Duration::from_std(ctx.settings().history).unwrap_or_default();
            let mut pruned = 0;
            for endpoint in endpoints {
                match prune(ctx.store(), &endpoint, now - keep) {
                    Ok(n) => pruned += n,
                    Err(e) => tracing::warn!(error = %e, "could not prune old deliveries"),
                }
            }
            pruned
        })
        .await;
        match pruned {
            Ok(0) => {}
            Ok(n) => tracing::debug!(pruned = n, "old delivery records deleted"),
            Err(e) => tracing::warn!(error = %e, "the pruning task failed"),
        }
    }
}

/// Deletes an endpoint's finished deliveries created before `cutoff`. Ids grow with
/// creation time, so the walk starts at the oldest record and stops at the first one
/// created since: it reads what it deletes (and old deliveries still pending, which
/// stay), not the endpoint's whole history.
fn prune(store: &Store, endpoint: &str, cutoff: DateTime<Utc>) -> StoreResult<usize> {
    let prefix = record::prefix(endpoint);
    let mut batch = Batch::default();
    let mut pruned = 0;
    let mut after: Option<Vec<u8>> = None;
    'walk: loop {
        let page = store.scan_page(&prefix, after.as_deref(), PRUNE_PAGE)?;
        for (key, value) in &page {
            let Ok(d) = decode::<Delivery>(value) else {
                continue;
            };
            if *d.created_at >= cutoff {
                break 'walk;
            }
            if d.status != DeliveryStatus::Pending {
                batch.delete(key.clone());
                pruned += 1;
            }
        }
        after = match page.last() {
            Some((key, _)) if page.len() == PRUNE_PAGE => Some(key.clone()),
            _ => break,
        };
        if batch.len() >= 4 * PRUNE_PAGE {
            store.apply(std::mem::take(&mut batch))?;
        }
    }
    store.apply(batch)?;
    Ok(pruned)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::Timestamp;

    fn delivery(id: u64, status: DeliveryStatus, created: DateTime<Utc>) -> Delivery {
        Delivery {
            next_attempt_at: None,
            created_at: Timestamp(created),
            ..Delivery::sample("we_one", id, status)
        }
    }

    #[tokio::test]
    async fn a_deleted_endpoint_is_never_started_again() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        let clock: SharedClock = Arc::new(crate::clock::SystemClock);
        let (dispatcher, _reports) =
            Dispatcher::new(store, clock, DeliverySettings::default()).unwrap();
        let cfg = EndpointConfig::sample("we_gone");
        dispatcher.ensure(cfg.clone()).await.unwrap();
        assert_eq!(dispatcher.live(), 1);
        dispatcher.remove(cfg.workspace_id.as_str(), cfg.id.as_str());
        // A wake for a delivery committed just before the delete, a change, a read.
        dispatcher.wake(vec![cfg.clone()]);
        dispatcher.configure(cfg.clone());
        let again = dispatcher.ensure(cfg.clone()).await;
        assert!(matches!(again, Err(DomainError::NotFound(_))), "{again:?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
        assert_eq!(dispatcher.live(), 0);
        assert!(dispatcher.0.configs.is_empty());
    }

    /// A dispatcher on a fresh store, on the system clock.
    fn on_disk() -> (tempfile::TempDir, Store, Dispatcher, Reports) {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        let clock: SharedClock = Arc::new(crate::clock::SystemClock);
        let (dispatcher, reports) =
            Dispatcher::new(store.clone(), clock, DeliverySettings::default()).unwrap();
        (dir, store, dispatcher, reports)
    }

    /// An endpoint deleted while its idle actor is about to passivate: the dispatcher
    /// still finds the actor and tells it `Remove` behind the Tick that passivates it. The
    /// leaving actor finishes its mailbox, so the deliveries are deleted all the same.
    #[tokio::test]
    async fn a_remove_queued_behind_a_passivating_tick_still_deletes_the_deliveries() {
        remove_while(true).await;
    }

    /// Control: the same without the Tick ahead of `Remove`.
    #[tokio::test]
    async fn control_a_remove_deletes_the_deliveries() {
        remove_while(false).await;
    }

    async fn remove_while(passivating: bool) {
        let (_dir, store, dispatcher, _reports) = on_disk();
        dispatcher.passivate_after(Duration::ZERO);
        let cfg = EndpointConfig::sample("we_removed");
        let mut batch = Batch::default();
        record::put(
            &mut batch,
            &Delivery::sample("we_removed", 1, DeliveryStatus::Delivered),
        )
        .unwrap();
        store.apply(batch).unwrap();
        let actor = dispatcher.ensure(cfg.clone()).await.unwrap();
        // The interval's tick is queued; the workspace deletes the endpoint meanwhile.
        if passivating {
            actor.send_message(EndpointMsg::Tick).unwrap();
        }
        dispatcher.remove(cfg.workspace_id.as_str(), cfg.id.as_str());
        tokio::time::sleep(Duration::from_millis(300)).await;
        assert_eq!(dispatcher.live(), 0);
        let left = store.keys(&record::prefix("we_removed")).unwrap();
        assert!(
            left.is_empty(),
            "a deleted endpoint kept {} delivery record(s): its Remove was lost",
            left.len()
        );
    }

    /// A paused endpoint made active again while its idle actor is about to passivate
    /// (as paused, arming no wake-up): the `Configure` told behind the Tick is handed to a
    /// fresh actor, which sends what waits.
    #[tokio::test]
    async fn an_endpoint_resumed_while_its_actor_passivates_still_sends_what_waits() {
        resume_while(true).await;
    }

    /// Control: the same without the Tick ahead of `Configure`.
    #[tokio::test]
    async fn control_a_resumed_endpoint_sends_what_waits() {
        resume_while(false).await;
    }

    async fn resume_while(passivating: bool) {
        let (_dir, store, dispatcher, _reports) = on_disk();
        dispatcher.passivate_after(Duration::ZERO);
        let mut paused = EndpointConfig::sample("we_resumed");
        paused.active = false;
        let mut batch = Batch::default();
        record::put(
            &mut batch,
            &Delivery::sample("we_resumed", 1, DeliveryStatus::Pending),
        )
        .unwrap();
        store.apply(batch).unwrap();
        let actor = dispatcher.ensure(paused.clone()).await.unwrap();
        // The interval's tick is queued; the workspace resumes the endpoint meanwhile.
        if passivating {
            actor.send_message(EndpointMsg::Tick).unwrap();
        }
        let active = EndpointConfig {
            active: true,
            ..paused
        };
        dispatcher.configure(active);
        tokio::time::sleep(Duration::from_millis(300)).await;
        let wake_armed = store
            .keys(b"tq/")
            .unwrap()
            .iter()
            .any(|k| k.ends_with(b"webhook-delivery/we_resumed"));
        let d: Delivery = store
            .get(&record::key("we_resumed", crate::ids::DeliveryId(1)))
            .unwrap()
            .unwrap();
        assert!(
            dispatcher.live() > 0 || wake_armed || !d.attempts.is_empty(),
            "the resumed endpoint has a pending delivery, no actor, no wake-up and no attempt: \
             its Configure was lost"
        );
    }

    /// The workspace pauses an endpoint (`configure`, told once the pause is durable) while
    /// the batch of an earlier event is still being flushed; that batch's wake carries the
    /// configuration from before the pause. The pause wins: nothing is sent.
    #[tokio::test]
    async fn a_wake_of_an_event_committed_before_a_pause_sends_nothing() {
        stale_wake(true).await;
    }

    /// Control: the same wake carrying the configuration as it is now (paused).
    #[tokio::test]
    async fn control_a_wake_of_a_paused_endpoint_sends_nothing() {
        stale_wake(false).await;
    }

    async fn stale_wake(stale: bool) {
        let (_dir, store, dispatcher, _reports) = on_disk();
        let before = EndpointConfig::sample("we_paused");
        let paused = EndpointConfig {
            active: false,
            ..before.clone()
        };
        // The event's delivery, staged while the endpoint was active, is on disk now.
        let mut batch = Batch::default();
        record::put(
            &mut batch,
            &Delivery::sample("we_paused", 1, DeliveryStatus::Pending),
        )
        .unwrap();
        store.apply(batch).unwrap();
        // The pause was handled before the event's flush ended.
        dispatcher.configure(paused.clone());
        // The event's wake, with the configuration it was staged with.
        dispatcher.wake(vec![if stale { before } else { paused }]);
        tokio::time::sleep(Duration::from_millis(300)).await;
        let d: Delivery = store
            .get(&record::key("we_paused", crate::ids::DeliveryId(1)))
            .unwrap()
            .unwrap();
        let latest_active = dispatcher.0.configs.get("we_paused").map(|c| c.active);
        assert!(
            d.attempts.is_empty() && latest_active == Some(false),
            "paused endpoint: {} attempt(s) made, dispatcher's latest config active = {:?}",
            d.attempts.len(),
            latest_active
        );
    }

    #[tokio::test]
    async fn pruning_deletes_old_finished_records_keeps_pending_ones_and_stops_at_the_first_young_one(
    ) {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        let now = Utc::now();
        let old = now - chrono::Duration::days(40);
        let cutoff = now - chrono::Duration::days(30);
        let mut batch = Batch::default();
        let mut id = 0;
        for _ in 0..(2 * PRUNE_PAGE) {
            id += 1;
            record::put(&mut batch, &delivery(id, DeliveryStatus::Delivered, old)).unwrap();
        }
        let old_pending = id + 1;
        record::put(
            &mut batch,
            &delivery(old_pending, DeliveryStatus::Pending, old),
        )
        .unwrap();
        let young = old_pending + 1;
        record::put(&mut batch, &delivery(young, DeliveryStatus::Failed, now)).unwrap();
        // Out of creation order (a clock moved back): left for a later pass.
        let behind = young + 1;
        record::put(
            &mut batch,
            &delivery(behind, DeliveryStatus::Delivered, old),
        )
        .unwrap();
        store.apply(batch).unwrap();

        assert_eq!(prune(&store, "we_one", cutoff).unwrap(), 2 * PRUNE_PAGE);
        let left: Vec<u64> = store
            .scan_after::<Delivery>(&record::prefix("we_one"), 0)
            .unwrap()
            .into_iter()
            .map(|(id, _)| id)
            .collect();
        assert_eq!(left, vec![old_pending, young, behind]);
        assert_eq!(prune(&store, "we_one", cutoff).unwrap(), 0);
    }
}
