//! Customer messages (routing, repeat guards) and the service's own outbound messages
//! (campaigns, automations).

use super::*;

/// A stored repeat guard: the body it came with and where the message went.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub(super) struct GuardRecord {
    pub(super) fingerprint: String,
    pub(super) accepted: Accepted,
    pub(super) created_at: Timestamp,
}

/// Events caused by a customer: the actor is the customer (the contact, once known), the
/// source the credential the message came through.
pub(super) fn customer_origin(source: &EventSource, contact: Option<ContactId>) -> Origin {
    Origin {
        actor: EventActor {
            kind: ActorKind::Customer,
            id: contact.map(|c| c.to_string()),
        },
        source: source.clone(),
    }
}

pub(super) fn guard_key(ctx: &Ctx, key: &str) -> Vec<u8> {
    Key::new("w")
        .str(ctx.workspace.as_str())
        .str(DEDUPE)
        .str(key)
        .build()
}

/// The timer that forgets a repeat guard once its window has passed.
pub(super) fn guard_timer(ctx: &Ctx, key: &str, created_at: DateTime<Utc>) -> Timer {
    Timer::new(
        ctx.workspace,
        format!("dedupe/{key}"),
        created_at + DEDUPE_WINDOW,
    )
}

/// A customer message: stored on the contact's latest conversation on its channel
/// (reopened if closed, created if there is none), with the contact created first when
/// new; a repeat within the window answers where the first one went and stores nothing.
pub(super) fn receive(
    data: &mut WorkspaceData,
    ctx: &Ctx,
    inbound: Inbound,
) -> Result<Change<Accepted>, DomainError> {
    let mut step = Step::new(ctx);
    for guard in &inbound.guards {
        let seen: Option<GuardRecord> = ctx.store.get(&guard_key(ctx, &guard.key))?;
        match seen {
            Some(seen) if seen.created_at + DEDUPE_WINDOW > ctx.now => {
                if seen.fingerprint != guard.fingerprint {
                    return Err(DomainError::Conflict {
                        code: "idempotency_key_reused",
                        message: "this message was accepted before with a different body".into(),
                    });
                }
                return Ok(step.done(Accepted {
                    repeat: true,
                    ..seen.accepted
                }));
            }
            _ => {}
        }
    }
    let mut channel = inbound.channel;
    let mut into = None;
    let contact = match inbound.from {
        InboundFrom::Conversation(id) => {
            let c = data
                .conversations
                .get(id)
                .ok_or_else(|| DomainError::missing("conversationId", "conversation"))?;
            channel = c.channel;
            into = Some(c.clone());
            c.contact_id
        }
        InboundFrom::Contact(id) => data.contacts.named(id)?,
        InboundFrom::Details(new) => {
            let found = crate::workspace::contacts::for_inbound(data, ctx, *new, inbound.channel)?;
            step.writes.extend(found.writes);
            step.events.extend(found.events);
            found.value
        }
    };
    let target = into.or_else(|| data.conversations.latest_of(contact, channel).cloned());
    let mut c = match target {
        Some(c) if c.is_open() => c,
        Some(mut c) => {
            c.reopen(*ctx.now);
            step.announce("conversation.reopened");
            c
        }
        None => {
            let c = Conversation::new(ConversationId(ctx.next_id()?), contact, channel, *ctx.now);
            step.announce("conversation.created");
            c
        }
    };
    let m = step.message(
        data,
        &mut c,
        NewMessage {
            direction: Direction::Inbound,
            sender_type: SenderType::Customer,
            sender_user_id: None,
            body: inbound.body,
            status: MessageStatus::Received,
            external_id: inbound.external_id,
        },
    )?;
    let accepted = Accepted {
        conversation_id: c.id,
        message_id: m.id,
        contact_id: contact,
        repeat: false,
    };
    data.campaigns
        .replied(ctx, contact, &mut step.writes, &mut step.events)?;
    if inbound.answer {
        if let Some(job) = turn_job(data, ctx, &c, &m)? {
            expect_outcome(data, ctx, &job, &mut step.writes)?;
            ctx.later.borrow_mut().push(job);
        }
    }
    for guard in inbound.guards {
        let record = GuardRecord {
            fingerprint: guard.fingerprint,
            accepted: accepted.clone(),
            created_at: ctx.now,
        };
        step.writes.put(guard_key(ctx, &guard.key), &record)?;
        guard_timer(ctx, &guard.key, *ctx.now).arm(&mut step.writes)?;
    }
    step.save(data, c, None)?;
    Ok(step.done(accepted))
}

/// A campaign's message to `contact`: on the contact's most recent conversation on
/// `channel` (created if there is none), sent through the sender like every other.
pub(in crate::workspace) fn campaign_message(
    data: &mut WorkspaceData,
    ctx: &Ctx,
    contact: ContactId,
    channel: Channel,
    text: String,
) -> Result<Change<Message>, DomainError> {
    let existing = data.conversations.latest_of(contact, channel).cloned();
    outbound(
        data,
        ctx,
        existing,
        contact,
        channel,
        SenderType::Campaign,
        text,
    )
}

/// An automatic message to `contact` (an appointment reminder): on the conversation with
/// the latest message on any channel (an older conversation's later message counts), or
/// a new `api` conversation when there is none.
pub(in crate::workspace) fn automation_message(
    data: &mut WorkspaceData,
    ctx: &Ctx,
    contact: ContactId,
    text: String,
) -> Result<Change<Message>, DomainError> {
    let existing = data
        .conversations
        .of_contact(contact)
        .max_by_key(|c| (c.last_message_at, c.id))
        .cloned();
    outbound(
        data,
        ctx,
        existing,
        contact,
        Channel::Api,
        SenderType::Automation,
        text,
    )
}

/// An outbound message from the service on `existing`, or on a new conversation of
/// `contact` on `channel`.
pub(super) fn outbound(
    data: &mut WorkspaceData,
    ctx: &Ctx,
    existing: Option<Conversation>,
    contact: ContactId,
    channel: Channel,
    sender_type: SenderType,
    text: String,
) -> Result<Change<Message>, DomainError> {
    let mut step = Step::new(ctx);
    let mut c = match existing {
        Some(c) => c,
        None => {
            let c = Conversation::new(ConversationId(ctx.next_id()?), contact, channel, *ctx.now);
            step.announce("conversation.created");
            c
        }
    };
    let m = step.message(data, &mut c, NewMessage::from_service(sender_type, text))?;
    step.save(data, c, None)?;
    Ok(step.done(m))
}

/// A repeat guard's window has passed: forget it (the timer's own change).
pub(in crate::workspace) fn forget_guard(
    ctx: &Ctx,
    key: &str,
    timer: &Timer,
) -> Result<Change<()>, DomainError> {
    let mut step = Step::new(ctx);
    let seen: Option<GuardRecord> = ctx.store.get(&guard_key(ctx, key))?;
    // A guard written again later (the key reused after expiry) has its own timer.
    if seen.is_some_and(|g| g.created_at + DEDUPE_WINDOW <= ctx.now) {
        step.writes.delete(guard_key(ctx, key));
    }
    timer.disarm(&mut step.writes);
    Ok(step.done(()))
}
