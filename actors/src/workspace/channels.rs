//! The workspace's channel connections: added, changed, deleted (channel.disconnected) and
//! their secret rotated. The sender (`sending`) picks a channel's connection from here.

use std::collections::{BTreeMap, HashMap};

use super::sending;
use super::{answer, finish, record_prefix, Change, Ctx, Handled, Reply, WorkspaceData};
use crate::domain::channel::{
    ChannelChange, ChannelView, Connection, ConnectionStatus, RelayConfig,
};
use crate::domain::contact::Channel;
use crate::domain::page::{Page, PageRequest};
use crate::domain::DomainError;
use crate::events::Origin;
use crate::ids::{ChannelId, WorkspaceId};
use crate::store::{Batch, Store};

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

#[derive(Default)]
pub struct Channels {
    by_seq: BTreeMap<u64, Connection>,
    seq_of: HashMap<ChannelId, u64>,
}

impl Channels {
    pub fn load(store: &Store, ws: &WorkspaceId) -> Result<Self, DomainError> {
        let mut channels = Self::default();
        for (_, c) in store.scan::<Connection>(&record_prefix(ws, KIND))? {
            channels.seq_of.insert(c.id.clone(), c.seq);
            channels.by_seq.insert(c.seq, c);
        }
        Ok(channels)
    }

    pub fn len(&self) -> usize {
        self.by_seq.len()
    }

    pub fn is_empty(&self) -> bool {
        self.by_seq.is_empty()
    }

    fn get(&self, id: &str) -> Result<&Connection, DomainError> {
        self.find(id).ok_or(DomainError::NotFound("channel"))
    }

    pub(super) fn find(&self, id: &str) -> Option<&Connection> {
        self.seq_of.get(id).and_then(|s| self.by_seq.get(s))
    }

    /// The connection that sends on `channel`: the most recently created one of its type.
    pub(super) fn sender_for(&self, channel: Channel) -> Option<&Connection> {
        self.by_seq.values().rev().find(|c| c.channel == channel)
    }

    /// Every connection's sender configuration (for resuming pending sends at start).
    pub fn relays(&self, ws: &WorkspaceId) -> Vec<RelayConfig> {
        self.by_seq.values().map(|c| c.relay(ws)).collect()
    }

    pub(super) fn put(
        &mut self,
        ctx: &Ctx,
        c: Connection,
        writes: &mut Batch,
    ) -> Result<(), DomainError> {
        writes.put(ctx.key(KIND, c.seq), &c)?;
        self.seq_of.insert(c.id.clone(), c.seq);
        self.by_seq.insert(c.seq, c);
        Ok(())
    }
}

pub(super) fn handle(msg: ChannelMsg, data: &mut WorkspaceData, ctx: &Ctx) -> Handled {
    match msg {
        ChannelMsg::List { page, reply } => {
            let found = page.select(&data.channels.by_seq, |_| true);
            answer(
                reply,
                Ok(Page {
                    items: found.items.iter().map(Connection::view).collect(),
                    has_more: found.has_more,
                }),
            )
        }
        ChannelMsg::Get { id, reply } => {
            answer(reply, data.channels.get(&id).map(Connection::view))
        }
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
        } => finish(reply, origin, update(data, ctx, &id, change)),
        ChannelMsg::Delete { origin, id, reply } => finish(reply, origin, delete(data, ctx, &id)),
        ChannelMsg::RotateSecret { origin, id, reply } => {
            finish(reply, origin, rotate(data, ctx, &id))
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
        seq: ctx.next_id()?,
        id: ChannelId::generate(),
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
    id: &ChannelId,
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
    ctx.relays.configure(c.relay(ctx.workspace));
    Ok(Change::new(c.view(), writes, Vec::new()))
}

fn delete(
    data: &mut WorkspaceData,
    ctx: &Ctx,
    id: &ChannelId,
) -> Result<Change<ChannelId>, DomainError> {
    let mut c = data.channels.get(id)?.clone();
    data.channels.by_seq.remove(&c.seq);
    data.channels.seq_of.remove(id);
    let mut change = Change {
        value: c.id.clone(),
        writes: Batch::default(),
        events: Vec::new(),
    };
    change.writes.delete(ctx.key(KIND, c.seq));
    sending::fail_waiting(data, ctx, &c, &mut change)?;
    // Its last state, as the event tells it: deleting disconnects.
    c.status = ConnectionStatus::Disconnected;
    c.updated_at = ctx.now;
    change.events.push(sending::channel_event(
        "channel.disconnected",
        &c,
        Some("deleted"),
    ));
    ctx.relays.remove(&c.id);
    Ok(change)
}

fn rotate(
    data: &mut WorkspaceData,
    ctx: &Ctx,
    id: &ChannelId,
) -> Result<Change<(ChannelView, String)>, DomainError> {
    let mut c = data.channels.get(id)?.clone();
    let secret = crate::events::signature::new_secret();
    c.secret = secret.clone();
    c.updated_at = ctx.now;
    let mut writes = Batch::default();
    data.channels.put(ctx, c.clone(), &mut writes)?;
    ctx.relays.configure(c.relay(ctx.workspace));
    Ok(Change::new((c.view(), secret), writes, Vec::new()))
}
