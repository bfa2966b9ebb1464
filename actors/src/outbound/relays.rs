//! Connection id -> relay actor. Like delivery, it knows nothing of workspace actors:
//! whoever holds the [`SendReports`] end passes the outcomes on.

use std::sync::Arc;

use tokio::sync::mpsc;

use super::context::{RelayContext, RelayStats};
use super::relay::{RelayActor, RelayMsg};
use super::{OutboundSettings, SendReports};
use crate::clock::SharedClock;
use crate::delivery::sender::Sender;
use crate::domain::channel::RelayConfig;
use crate::domain::DomainError;
use crate::ids::ChannelId;
use crate::pool::Pool;
use crate::store::Store;
use crate::telemetry::ActorBook;

#[derive(Clone)]
pub struct Relays {
    ctx: Arc<RelayContext>,
    actors: Arc<Pool<RelayMsg>>,
    /// The workspace of each connection whose actor was started, to stop them together.
    workspaces: Arc<dashmap::DashMap<String, String>>,
}

impl Relays {
    pub fn new(
        store: Store,
        clock: SharedClock,
        settings: OutboundSettings,
    ) -> Result<(Self, SendReports), DomainError> {
        let sender =
            Sender::new(settings.timeout, settings.allow_private).map_err(DomainError::Internal)?;
        let (reports, receiver) = mpsc::unbounded_channel();
        let ctx = RelayContext::new(store, clock, settings, sender, reports);
        let relays = Self {
            ctx: Arc::new(ctx),
            actors: Arc::new(Pool::new("channel_relay")),
            workspaces: Arc::default(),
        };
        Ok((relays, receiver))
    }

    pub fn settings(&self) -> &OutboundSettings {
        &self.ctx.settings
    }

    pub fn stats(&self) -> &RelayStats {
        &self.ctx.stats
    }

    /// The live relay actors' figures.
    pub fn book(&self) -> &ActorBook {
        self.actors.book()
    }

    /// The connection's actor, started (and its pending sends loaded) if needed.
    async fn ensure(&self, cfg: RelayConfig) -> Result<(), DomainError> {
        let ctx = self.ctx.clone();
        let id = cfg.channel_id.to_string();
        self.workspaces
            .insert(id.clone(), cfg.workspace_id.to_string());
        self.actors
            .ensure(
                &id,
                RelayActor,
                |stats| (cfg.clone(), ctx, stats),
                || RelayMsg::Configure(cfg.clone()),
            )
            .await
            .map(|_| ())
            .map_err(DomainError::Internal)
    }

    /// Resumes a connection's pending sends (at start), if it has any.
    pub async fn resume(&self, cfg: RelayConfig) -> Result<(), DomainError> {
        let waiting = self
            .ctx
            .store
            .keys(&super::record::prefix(cfg.channel_id))?;
        if waiting.is_empty() {
            return Ok(());
        }
        self.ensure(cfg).await
    }

    /// New pending sends are durable for these connections.
    pub fn wake(&self, connections: Vec<RelayConfig>) {
        for cfg in connections {
            let me = self.clone();
            tokio::spawn(async move {
                let id = cfg.channel_id.to_string();
                match me.ensure(cfg).await {
                    Ok(()) => {
                        if let Some(actor) = me.actors.get(&id) {
                            me.actors.tell(&id, &actor, RelayMsg::Wake);
                        }
                    }
                    Err(e) => tracing::error!(error = %e, "could not wake a relay actor"),
                }
            });
        }
    }

    /// A connection changed (relay URL, secret).
    pub fn configure(&self, cfg: RelayConfig) {
        let id = cfg.channel_id.to_string();
        if let Some(actor) = self.actors.get(&id) {
            self.actors.tell(&id, &actor, RelayMsg::Configure(cfg));
        }
    }

    /// A connection was deleted; its workspace has already failed what it had waiting.
    pub fn remove(&self, channel: ChannelId) {
        let channel = channel.to_string();
        if let Some(actor) = self.actors.remove(&channel) {
            self.actors.tell(&channel, &actor, RelayMsg::Remove);
        }
    }

    /// Another node took `workspace` (cluster mode): its connections' actors stop here and
    /// their pending sends stay stored for the new owner.
    pub fn release_workspace(&self, workspace: &str) {
        let channels: Vec<String> = self
            .workspaces
            .iter()
            .filter(|w| w.value() == workspace)
            .map(|w| w.key().clone())
            .collect();
        for channel in channels {
            self.workspaces.remove(&channel);
            if let Some(actor) = self.actors.remove(&channel) {
                actor.stop(Some("the workspace moved to another node".into()));
            }
        }
    }

    /// Shutdown: every relay actor starts no new send and stops once its sends in flight
    /// have ended and been recorded, for up to `wait`; the rest are stopped then (a send
    /// cut that way goes out again after the restart). Pending sends stay stored.
    pub async fn drain(&self, wait: std::time::Duration) {
        self.actors.drain(|| RelayMsg::Drain, wait).await;
    }
}
