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
    /// The latest configuration of each connection it was told of: a wake carries the one
    /// its message was queued with, and the relay URL or secret may have changed since.
    configs: Arc<dashmap::DashMap<String, RelayConfig>>,
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
            configs: Arc::default(),
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
        let cfg = self.configs.entry(id.clone()).or_insert(cfg).clone();
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

    /// The latest configuration the relays were told of for `channel`.
    pub fn configured(&self, channel: &str) -> Option<RelayConfig> {
        self.configs.get(channel).map(|c| c.clone())
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
        self.configs.insert(id.clone(), cfg.clone());
        if let Some(actor) = self.actors.get(&id) {
            self.actors.tell(&id, &actor, RelayMsg::Configure(cfg));
        }
    }

    /// A connection was deleted; its workspace has already failed what it had waiting.
    pub fn remove(&self, channel: ChannelId) {
        let channel = channel.to_string();
        self.configs.remove(&channel);
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
        self.configs
            .retain(|_, c| c.workspace_id.as_str() != workspace);
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::Timestamp;
    use crate::ids::{ConversationId, MessageId, WorkspaceId};
    use crate::outbound::record::PendingSend;
    use crate::store::Batch;
    use std::time::Duration;

    /// A wake carries the connection's configuration as it was when its message was
    /// written. A relay URL changed meanwhile (told once that change is durable)
    /// wins: the message goes to the new relay.
    #[tokio::test]
    async fn a_wake_staged_before_a_relay_url_change_sends_to_the_new_relay() {
        stale_relay_wake(true).await;
    }

    /// Control: the same wake carrying the configuration as it is now.
    #[tokio::test]
    async fn control_a_wake_sends_to_the_current_relay() {
        stale_relay_wake(false).await;
    }

    async fn stale_relay_wake(stale: bool) {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        let clock: SharedClock = Arc::new(crate::clock::SystemClock);
        let settings = OutboundSettings {
            allow_private: true,
            ..OutboundSettings::default()
        };
        let (relays, _reports) = Relays::new(store.clone(), clock, settings).unwrap();
        let old_relay = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let new_relay = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let before = RelayConfig {
            workspace_id: WorkspaceId::parse("ws_one").unwrap(),
            channel_id: ChannelId(7),
            relay_url: format!("http://{}/relay", old_relay.local_addr().unwrap()),
            secret: "s".into(),
            previous_secret: None,
        };
        let after = RelayConfig {
            relay_url: format!("http://{}/relay", new_relay.local_addr().unwrap()),
            ..before.clone()
        };
        // The connection's actor runs (an earlier wake), with nothing to send.
        relays.wake(vec![before.clone()]);
        tokio::time::sleep(Duration::from_millis(100)).await;
        // The team changes the relay URL: the handler tells the actor at once.
        relays.configure(after.clone());
        // A message written before the change is durable now; its wake follows.
        let send = PendingSend {
            message_id: MessageId(1),
            conversation_id: ConversationId(1),
            body: "{}".into(),
            attempts: 0,
            next_attempt_at: None,
            created_at: Timestamp(chrono::Utc::now()),
            origin: None,
        };
        let mut batch = Batch::default();
        batch
            .put(super::super::record::key(ChannelId(7), MessageId(1)), &send)
            .unwrap();
        store.apply(batch).unwrap();
        relays.wake(vec![if stale { before } else { after }]);
        let to_new = tokio::time::timeout(Duration::from_secs(2), new_relay.accept()).await;
        let to_old = tokio::time::timeout(Duration::from_millis(200), old_relay.accept()).await;
        assert!(
            to_new.is_ok() && to_old.is_err(),
            "the message went to the old relay ({}) and not to the new one ({})",
            to_old.is_ok(),
            to_new.is_ok()
        );
    }
}
