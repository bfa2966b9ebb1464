//! The workspace's channel connections: added, changed, deleted (channel.disconnected) and
//! their secret rotated. The sender (`sending`) picks a channel's connection from here.

use std::collections::BTreeMap;

use super::sending;
use super::{
    answer, finish, load_upgrading, Change, Ctx, Handled, OutletChange, Reply, WorkspaceData,
};
use crate::clock::Timestamp;
use crate::domain::channel::{
    ChannelChange, ChannelView, Connection, ConnectionStatus, ConnectionV1, RelayConfig,
};
use crate::domain::contact::Channel;
use crate::domain::page::{Page, PageRequest};
use crate::domain::DomainError;
use crate::events::Origin;
use crate::ids::{ChannelId, WorkspaceId};
use crate::outbound;
use crate::store::{decode, Batch, Key, Store};

#[derive(strum::IntoStaticStr)]
#[strum(prefix = "channel.", serialize_all = "snake_case")]
pub enum ChannelMsg {
    List {
        page: PageRequest,
        reply: Reply<Page<ChannelView>>,
    },
    Get {
        id: ChannelId,
        reply: Reply<ChannelView>,
    },
    /// Answers the connection and its secret (shown once).
    Create {
        origin: Origin,
        change: ChannelChange,
        reply: Reply<(ChannelView, String)>,
    },
    Update {
        origin: Origin,
        id: ChannelId,
        change: ChannelChange,
        reply: Reply<ChannelView>,
    },
    Delete {
        origin: Origin,
        id: ChannelId,
        reply: Reply<ChannelId>,
    },
    /// Answers the connection and its new secret.
    RotateSecret {
        origin: Origin,
        id: ChannelId,
        reply: Reply<(ChannelView, String)>,
    },
}

const KIND: &str = "ch";

/// The workspace's connections by id (ids grow, so this is creation order).
#[derive(Default)]
pub struct Channels {
    by_id: BTreeMap<ChannelId, Connection>,
}

impl Channels {
    /// Loads the connections, upgrading any stored before channel ids were integers.
    pub fn load(store: &Store, ws: &WorkspaceId) -> Result<Self, DomainError> {
        let loaded = load_upgrading(store, ws, KIND, |key, raw, writes| {
            upgrade(store, key, decode::<ConnectionV1>(raw)?, writes).map(Some)
        })?;
        Ok(Self {
            by_id: loaded.into_iter().map(|c: Connection| (c.id, c)).collect(),
        })
    }

    pub fn len(&self) -> usize {
        self.by_id.len()
    }

    pub fn is_empty(&self) -> bool {
        self.by_id.is_empty()
    }

    fn get(&self, id: ChannelId) -> Result<&Connection, DomainError> {
        self.find(id).ok_or(DomainError::NotFound("channel"))
    }

    pub(super) fn find(&self, id: ChannelId) -> Option<&Connection> {
        self.by_id.get(&id)
    }

    /// The connection that sends on `channel`: the most recently created one of its type.
    pub(super) fn sender_for(&self, channel: Channel) -> Option<&Connection> {
        self.by_id.values().rev().find(|c| c.channel == channel)
    }

    /// Every connection's sender configuration (for resuming pending sends at start).
    pub fn relays(&self, ws: &WorkspaceId) -> Vec<RelayConfig> {
        self.by_id.values().map(|c| c.relay(ws)).collect()
    }

    pub(super) fn put(
        &mut self,
        ctx: &Ctx,
        c: Connection,
        writes: &mut Batch,
    ) -> Result<(), DomainError> {
        writes.put(ctx.key(KIND, c.id), &c)?;
        self.by_id.insert(c.id, c);
        Ok(())
    }
}

/// A connection stored with a `ch_...` id: stored again under its integer id (its old
/// list position, so the order holds), with its pending sends moved to that id.
fn upgrade(
    store: &Store,
    key: Vec<u8>,
    old: ConnectionV1,
    writes: &mut Batch,
) -> Result<Connection, DomainError> {
    let old_prefix = Key::new("os").str(&old.id).prefix();
    let c = old.upgrade();
    for (old_key, send) in store.scan_read(&old_prefix, outbound::record::read)? {
        writes.put(outbound::record::key(c.id, send.message_id), &send)?;
        writes.delete(old_key);
    }
    writes.put(key, &c)?;
    Ok(c)
}

pub(super) fn handle(msg: ChannelMsg, data: &mut WorkspaceData, ctx: &Ctx) -> Handled {
    match msg {
        ChannelMsg::List { page, reply } => {
            let found = page.select(&data.channels.by_id, |_| true);
            answer(
                reply,
                Ok(Page {
                    items: found.items.iter().map(Connection::view).collect(),
                    has_more: found.has_more,
                }),
            )
        }
        ChannelMsg::Get { id, reply } => answer(reply, data.channels.get(id).map(Connection::view)),
        ChannelMsg::Create {
            origin,
            change,
            reply,
        } => finish(reply, origin, create(data, ctx, change)),
        ChannelMsg::Update {
            origin,
            id,
            change,
            reply,
        } => finish(reply, origin, update(data, ctx, id, change)),
        ChannelMsg::Delete { origin, id, reply } => finish(reply, origin, delete(data, ctx, id)),
        ChannelMsg::RotateSecret { origin, id, reply } => {
            finish(reply, origin, rotate(data, ctx, id))
        }
    }
}

fn create(
    data: &mut WorkspaceData,
    ctx: &Ctx,
    change: ChannelChange,
) -> Result<Change<(ChannelView, String)>, DomainError> {
    let channel = change
        .channel
        .ok_or_else(|| DomainError::invalid("type", "is required"))?;
    let relay_url = change
        .relay_url
        .ok_or_else(|| DomainError::invalid("relay_url", "is required"))?;
    let secret = crate::events::signature::new_secret();
    let c = Connection {
        id: ChannelId(ctx.next_id()?),
        channel,
        name: change.name.unwrap_or_else(|| {
            serde_json::to_value(channel)
                .ok()
                .and_then(|v| v.as_str().map(str::to_string))
                .unwrap_or_default()
        }),
        status: ConnectionStatus::Connected,
        relay_url,
        secret: secret.clone(),
        previous_secret: None,
        last_error: None,
        connected_at: ctx.now,
        updated_at: ctx.now,
    };
    let mut writes = Batch::default();
    data.channels.put(ctx, c.clone(), &mut writes)?;
    Ok(Change::new((c.view(), secret), writes, Vec::new()))
}

fn update(
    data: &mut WorkspaceData,
    ctx: &Ctx,
    id: ChannelId,
    change: ChannelChange,
) -> Result<Change<ChannelView>, DomainError> {
    let mut c = data.channels.get(id)?.clone();
    if let Some(name) = change.name {
        c.name = name;
    }
    if let Some(url) = change.relay_url {
        c.relay_url = url;
    }
    c.updated_at = ctx.now;
    let mut writes = Batch::default();
    data.channels.put(ctx, c.clone(), &mut writes)?;
    let told = OutletChange::Relay(c.relay(ctx.workspace));
    ctx.outlets.borrow_mut().push(told);
    Ok(Change::new(c.view(), writes, Vec::new()))
}

fn delete(
    data: &mut WorkspaceData,
    ctx: &Ctx,
    id: ChannelId,
) -> Result<Change<ChannelId>, DomainError> {
    let mut c = data.channels.get(id)?.clone();
    data.channels.by_id.remove(&id);
    let mut change = Change {
        value: id,
        writes: Batch::default(),
        events: Vec::new(),
    };
    change.writes.delete(ctx.key(KIND, id));
    sending::fail_waiting(data, ctx, &c, &mut change)?;
    // Its last state, as the event tells it: deleting disconnects.
    c.status = ConnectionStatus::Disconnected;
    c.updated_at = ctx.now;
    change.events.push(sending::channel_event(
        "channel.disconnected",
        &c,
        Some("deleted"),
    ));
    ctx.outlets
        .borrow_mut()
        .push(OutletChange::RelayRemoved(id));
    Ok(change)
}

fn rotate(
    data: &mut WorkspaceData,
    ctx: &Ctx,
    id: ChannelId,
) -> Result<Change<(ChannelView, String)>, DomainError> {
    let mut c = data.channels.get(id)?.clone();
    let secret = crate::events::signature::new_secret();
    let overlap =
        chrono::Duration::from_std(ctx.dispatcher.settings().secret_overlap).unwrap_or_default();
    c.rotate(secret.clone(), Timestamp(ctx.now.get() + overlap), ctx.now);
    let mut writes = Batch::default();
    data.channels.put(ctx, c.clone(), &mut writes)?;
    let told = OutletChange::Relay(c.relay(ctx.workspace));
    ctx.outlets.borrow_mut().push(told);
    Ok(Change::new((c.view(), secret), writes, Vec::new()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::{ConversationId, MessageId};
    use crate::outbound::record::PendingSend;

    #[test]
    fn connections_stored_with_string_ids_load_under_their_position_with_their_pending_sends() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        let ws = WorkspaceId::generate();
        let at = Timestamp(chrono::DateTime::from_timestamp_millis(1_795_000_000_000).unwrap());
        let old = ConnectionV1 {
            seq: 41,
            id: "ch_abc123".into(),
            channel: Channel::ChanA,
            name: "A".into(),
            status: ConnectionStatus::Failing,
            relay_url: "https://relay.example.com/a".into(),
            secret: "whsec_old".into(),
            last_error: Some("the relay answered 500".into()),
            connected_at: at,
            updated_at: at,
        };
        let send = PendingSend {
            message_id: MessageId(7),
            conversation_id: ConversationId(6),
            body: "{}".into(),
            attempts: 1,
            next_attempt_at: None,
            created_at: at,
            origin: None,
        };
        let old_send_key = Key::new("os").str("ch_abc123").id(7).build();
        let mut batch = Batch::default();
        batch
            .put(super::super::record_key(&ws, KIND, 41), &old)
            .unwrap();
        batch.put(old_send_key.clone(), &send).unwrap();
        store.apply(batch).unwrap();

        let channels = Channels::load(&store, &ws).unwrap();
        let c = channels
            .find(ChannelId(41))
            .expect("the connection, by its position");
        assert_eq!(
            (
                c.channel,
                c.status,
                c.secret.as_str(),
                c.previous_secret.clone()
            ),
            (Channel::ChanA, ConnectionStatus::Failing, "whsec_old", None)
        );
        let moved = store
            .scan::<PendingSend>(&outbound::record::prefix(ChannelId(41)))
            .unwrap();
        assert_eq!(moved.len(), 1);
        assert_eq!(moved[0].1, send);
        assert!(store.get_raw(&old_send_key).unwrap().is_none());
        let again: Connection = store
            .get(&super::super::record_key(&ws, KIND, 41))
            .unwrap()
            .expect("stored again in the current shape");
        assert_eq!(&again, c);
        assert_eq!(
            Channels::load(&store, &ws).unwrap().len(),
            1,
            "loads again as it is"
        );
    }
}
