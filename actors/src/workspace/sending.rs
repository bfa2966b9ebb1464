//! The one way every outbound message leaves (team and AI replies, follow-ups, campaign
//! messages): [`dispatch`] sends it at once on the `api` channel, queues it for the
//! channel's connection (a pending send in the message's own batch), or fails it when the
//! workspace has no connection of that type; [`settle`] applies the relay's final outcome
//! to the message and its connection. A message spends its credit when it is sent. Where messages are stored lives here too, so that
//! the conversation and channel handlers share it without importing each other.

use serde_json::json;

use super::{credits, Change, Ctx, WorkspaceData};
use crate::domain::channel::{Connection, Recipient, RelayMessage};
use crate::domain::contact::Channel;
use crate::domain::message::{Message, MessageStatus};
use crate::domain::DomainError;
use crate::events::{DomainEvent, Origin};
use crate::ids::{ConversationId, MessageId, WorkspaceId};
use crate::outbound::record::{self, PendingSend};
use crate::outbound::SendReport;
use crate::store::{Batch, Key};

pub(super) const MESSAGE: &str = "msg";

/// The error of a message on a channel the workspace has not connected.
pub const NOT_CONNECTED: &str = "channel_not_connected";

pub(super) fn message_key(
    ws: &WorkspaceId,
    conversation: ConversationId,
    id: MessageId,
) -> Vec<u8> {
    Key::new("w")
        .str(ws.as_str())
        .str(MESSAGE)
        .id(conversation.get())
        .id(id.get())
        .build()
}

/// A message event's data: the message, plus the conversation's channel so that
/// endpoint channel filters apply.
pub(super) fn message_event(m: &Message, channel: Channel) -> MessageEvent<'_> {
    MessageEvent {
        message: m,
        channel,
    }
}

/// A message event's data, rendered only when an endpoint may receive it.
#[derive(serde::Serialize)]
pub(super) struct MessageEvent<'a> {
    #[serde(flatten)]
    message: &'a Message,
    channel: Channel,
}

/// Sets the status of a new outbound message on `channel` and answers the event that
/// announces it now (none while it waits for its relay).
pub(super) fn dispatch(
    data: &mut WorkspaceData,
    ctx: &Ctx,
    channel: Channel,
    m: &mut Message,
    writes: &mut Batch,
    events: &mut Vec<DomainEvent>,
    origin: &Origin,
) -> Result<Option<&'static str>, DomainError> {
    if channel == Channel::Api {
        m.status = MessageStatus::Sent;
        credits::spend(data, ctx, 1, writes, events)?;
        return Ok(Some("message.sent"));
    }
    let Some(connection) = data.channels.sender_for(channel) else {
        m.status = MessageStatus::Failed;
        m.error = Some(NOT_CONNECTED.into());
        return Ok(Some("message.send_failed"));
    };
    let to = data
        .contacts
        .get(m.contact_id)
        .map(|c| Recipient::of(&c, channel))
        .unwrap_or(Recipient {
            phone: None,
            email: None,
            username: None,
        });
    m.status = MessageStatus::Queued;
    let body = serde_json::to_string(&RelayMessage::new(m, channel, to))
        .map_err(|e| DomainError::Internal(format!("relay body: {e}")))?;
    let send = PendingSend {
        message_id: m.id,
        conversation_id: m.conversation_id,
        body,
        attempts: 0,
        next_attempt_at: None,
        created_at: ctx.now,
        origin: Some(origin.clone()),
    };
    writes.put(record::key(connection.id, m.id), &send)?;
    ctx.wake.borrow_mut().push(connection.relay(ctx.workspace));
    Ok(None)
}

/// A relay's final outcome: the message becomes `sent` or `failed` (message.sent or
/// message.send_failed), its connection connected, failing or disconnected, and the
/// pending send goes, all in one batch. An outcome whose pending send is gone (its
/// connection was deleted meanwhile) changes nothing. Answers with the change who sent
/// the message: its events name them as the actor, as the send's own would have.
pub(super) fn settle(
    data: &mut WorkspaceData,
    ctx: &Ctx,
    report: SendReport,
) -> Result<(Change<()>, Origin), DomainError> {
    let mut change = Change {
        value: (),
        writes: Batch::default(),
        events: Vec::new(),
    };
    let pending = record::key(report.channel, report.message);
    let Some(send) = ctx.store.get_read(&pending, record::read)? else {
        return Ok((change, Origin::system()));
    };
    let origin = send.origin.unwrap_or_else(Origin::system);
    change.writes.delete(pending);
    let key = message_key(ctx.workspace, report.conversation, report.message);
    let Some(mut m) = ctx.store.get::<Message>(&key)? else {
        return Ok((change, origin));
    };
    let channel = data
        .conversations
        .get(report.conversation)
        .map_or(Channel::Api, |c| c.channel);
    let event_type = match &report.result {
        Ok(()) => {
            m.status = MessageStatus::Sent;
            m.error = None;
            credits::spend(data, ctx, 1, &mut change.writes, &mut change.events)?;
            "message.sent"
        }
        Err(failure) => {
            m.status = MessageStatus::Failed;
            m.error = Some(failure.error.clone());
            "message.send_failed"
        }
    };
    change.writes.put(key, &m)?;
    change.events.push(DomainEvent::record(
        event_type,
        "message",
        m.id,
        message_event(&m, channel),
    ));
    let outcome = report.result.clone().map_err(|f| f.error);
    data.campaigns
        .settled(ctx, m.id, outcome, &mut change.writes, &mut change.events)?;
    if let Some(mut c) = data.channels.find(report.channel).cloned() {
        let told = match &report.result {
            Ok(()) => c
                .mark_sent(ctx.now)
                .then(|| channel_event("channel.reconnected", &c, None)),
            Err(failure) => c
                .mark_failed(failure, ctx.now)
                .then(|| channel_event("channel.disconnected", &c, Some("access_removed"))),
        };
        change.events.extend(told);
        data.channels.put(ctx, c, &mut change.writes)?;
    }
    Ok((change, origin))
}

/// A connection is being deleted: the messages still waiting for it fail.
pub(super) fn fail_waiting(
    data: &mut WorkspaceData,
    ctx: &Ctx,
    connection: &Connection,
    change: &mut Change<impl Sized>,
) -> Result<(), DomainError> {
    let waiting = ctx
        .store
        .scan_read(&record::prefix(connection.id), record::read)?;
    for (key, send) in waiting {
        change.writes.delete(key);
        let at = message_key(ctx.workspace, send.conversation_id, send.message_id);
        let Some(mut m) = ctx.store.get::<Message>(&at)? else {
            continue;
        };
        m.status = MessageStatus::Failed;
        let error = "the channel connection was deleted before the message was sent";
        m.error = Some(error.into());
        change.writes.put(at, &m)?;
        let (writes, events) = (&mut change.writes, &mut change.events);
        data.campaigns
            .settled(ctx, m.id, Err(error.into()), writes, events)?;
        change.events.push(DomainEvent::record(
            "message.send_failed",
            "message",
            m.id,
            message_event(&m, connection.channel),
        ));
    }
    Ok(())
}

/// channel.disconnected and channel.reconnected: the connection as GET returns it, and
/// why (`reason`, when there is one).
pub(super) fn channel_event(
    event_type: &'static str,
    c: &Connection,
    reason: Option<&str>,
) -> DomainEvent {
    let mut data = serde_json::to_value(c.view()).unwrap_or_else(|_| json!({}));
    if let (Some(reason), Some(obj)) = (reason, data.as_object_mut()) {
        obj.insert("reason".into(), json!(reason));
    }
    DomainEvent::record(event_type, "channel", c.id, data)
}
