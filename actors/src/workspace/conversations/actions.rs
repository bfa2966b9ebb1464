//! What the team does on a conversation: create, close, reopen, assign, pause and resume
//! the AI, reply, comment, rate AI messages and resolve handovers.

use super::*;

pub(super) fn create(
    data: &mut WorkspaceData,
    ctx: &Ctx,
    caller: &Caller,
    contact_id: ContactId,
    channel: Channel,
    text: Option<String>,
) -> Result<Change<Conversation>, DomainError> {
    let contact = data.contacts.named(contact_id)?;
    let mut step = Step::new(ctx).on_behalf_of(caller.origin.clone());
    let mut c = Conversation::new(ConversationId(ctx.next_id()?), contact, channel, *ctx.now);
    step.announce("conversation.created");
    if let Some(text) = text {
        let body = Body {
            text,
            attachments: Vec::new(),
        };
        step.message(data, &mut c, NewMessage::from_team(caller, body))?;
    }
    let c = step.save(data, c, None)?;
    Ok(step.done(c))
}

pub(super) fn close(
    data: &mut WorkspaceData,
    ctx: &Ctx,
    caller: &Caller,
    id: ConversationId,
    note: ClosingNote,
) -> Result<Change<Conversation>, DomainError> {
    let mut c = found(data, id)?.clone();
    if let Some(note_id) = note.id {
        if !data.closing_notes.contains_key(&note_id) {
            return Err(DomainError::missing("closing_note_id", "closing note"));
        }
    }
    close_as(
        data,
        ctx,
        &mut c,
        caller.closed_by(),
        note,
        caller.resolver(),
    )
}

/// Closes `c` (team, API or auto-close): resolves its open handover and lifts a takeover
/// or handover pause, so that the next customer message is answered.
pub(super) fn close_as(
    data: &mut WorkspaceData,
    ctx: &Ctx,
    c: &mut Conversation,
    by: ClosedBy,
    note: ClosingNote,
    resolver: String,
) -> Result<Change<Conversation>, DomainError> {
    if !c.is_open() {
        return Err(DomainError::conflict("the conversation is already closed"));
    }
    let mut step = Step::new(ctx);
    c.close(by, note, *ctx.now);
    step.resolve_open_handover(data, c.id, resolver)?;
    let lifted = c
        .ai_paused_reason
        .is_some_and(AiPauseReason::lifted_by_close);
    if lifted {
        c.resume_ai(*ctx.now);
        step.announce("conversation.ai_resumed");
    }
    let closed = step.save(data, c.clone(), Some("conversation.closed"))?;
    Ok(step.done(closed))
}

/// A change of state that the conversation's own rule allows (`apply` answers true) or
/// refuses (409 with `refused`), announced as `event`.
pub(super) fn transition(
    data: &mut WorkspaceData,
    ctx: &Ctx,
    id: ConversationId,
    event: &'static str,
    refused: &str,
    apply: impl FnOnce(&mut Conversation, chrono::DateTime<chrono::Utc>) -> bool,
) -> Result<Change<Conversation>, DomainError> {
    let mut c = found(data, id)?.clone();
    if !apply(&mut c, *ctx.now) {
        return Err(DomainError::conflict(refused));
    }
    let mut step = Step::new(ctx);
    let c = step.save(data, c, Some(event))?;
    Ok(step.done(c))
}

pub(super) fn reopen(
    data: &mut WorkspaceData,
    ctx: &Ctx,
    id: ConversationId,
) -> Result<Change<Conversation>, DomainError> {
    let refused = "the conversation is already open";
    transition(data, ctx, id, "conversation.reopened", refused, |c, now| {
        !c.is_open() && {
            c.reopen(now);
            true
        }
    })
}

pub(super) fn assign(
    data: &mut WorkspaceData,
    ctx: &Ctx,
    id: ConversationId,
    user: Option<UserId>,
) -> Result<Change<Conversation>, DomainError> {
    let mut c = found(data, id)?.clone();
    let mut step = Step::new(ctx);
    if c.assigned_to_user_id == user {
        return Ok(step.done(c));
    }
    let previous = std::mem::replace(&mut c.assigned_to_user_id, user);
    c.updated_at = ctx.now;
    let mut changes = serde_json::Map::new();
    changes.insert("assigned_to_user_id".into(), json!(previous));
    step.writes.put(conversation_key(ctx, c.id), &c)?;
    step.events.push(
        DomainEvent::record("conversation.assigned", "conversation", c.id, &c)
            .with_changes(changes),
    );
    data.conversations.remember(c.clone());
    Ok(step.done(c))
}

pub(super) fn pause(
    data: &mut WorkspaceData,
    ctx: &Ctx,
    id: ConversationId,
    reason: AiPauseReason,
) -> Result<Change<Conversation>, DomainError> {
    let refused = "the AI is already paused";
    transition(
        data,
        ctx,
        id,
        "conversation.ai_paused",
        refused,
        |c, now| c.pause_ai(reason, now),
    )
}

pub(super) fn resume(
    data: &mut WorkspaceData,
    ctx: &Ctx,
    id: ConversationId,
) -> Result<Change<Conversation>, DomainError> {
    let refused = "the AI is not paused";
    transition(
        data,
        ctx,
        id,
        "conversation.ai_resumed",
        refused,
        |c, now| c.resume_ai(now),
    )
}

/// A newest-first page of the records under `prefix`.
pub(super) fn newest_page<T: serde::de::DeserializeOwned>(
    ctx: &Ctx,
    prefix: &[u8],
    page: PageRequest,
) -> Result<Page<T>, DomainError> {
    let mut items: Vec<T> = ctx
        .store
        .newest::<T>(prefix, page.after, page.limit + 1)?
        .into_iter()
        .map(|(_, v)| v)
        .collect();
    let has_more = items.len() > page.limit;
    items.truncate(page.limit);
    Ok(Page { items, has_more })
}

pub(super) fn list_messages(
    data: &WorkspaceData,
    ctx: &Ctx,
    id: ConversationId,
    page: PageRequest,
) -> Result<Page<Message>, DomainError> {
    let contact = found(data, id)?.contact_id;
    let mut page = newest_page::<Message>(ctx, &message_prefix(ctx.workspace, id), page)?;
    // Messages follow their conversation through contact merges.
    for m in &mut page.items {
        m.contact_id = contact;
    }
    Ok(page)
}

/// A team reply: reopens a closed conversation, takes over from an active AI, and
/// resolves the open handover.
pub(super) fn team_reply(
    data: &mut WorkspaceData,
    ctx: &Ctx,
    caller: &Caller,
    id: ConversationId,
    body: Body,
) -> Result<Change<Message>, DomainError> {
    let mut c = found(data, id)?.clone();
    let mut step = Step::new(ctx).on_behalf_of(caller.origin.clone());
    if !c.is_open() {
        c.reopen(*ctx.now);
        step.announce("conversation.reopened");
    }
    if c.pause_ai(AiPauseReason::Takeover, *ctx.now) {
        step.announce("conversation.ai_paused");
    }
    step.resolve_open_handover(data, c.id, caller.resolver())?;
    let m = step.message(data, &mut c, NewMessage::from_team(caller, body))?;
    step.save(data, c, None)?;
    Ok(step.done(m))
}

pub(super) fn list_comments(
    data: &WorkspaceData,
    ctx: &Ctx,
    id: ConversationId,
    page: PageRequest,
) -> Result<Page<Comment>, DomainError> {
    found(data, id)?;
    newest_page(ctx, &comment_prefix(ctx.workspace, id), page)
}

pub(super) fn add_comment(
    data: &mut WorkspaceData,
    ctx: &Ctx,
    caller: &Caller,
    id: ConversationId,
    body: String,
) -> Result<Change<Comment>, DomainError> {
    found(data, id)?;
    let comment = Comment {
        id: CommentId(ctx.next_id()?),
        conversation_id: id,
        author_user_id: caller.user.clone(),
        body,
        created_at: ctx.now,
    };
    let mut step = Step::new(ctx);
    let key = comment_key(ctx.workspace, id, comment.id);
    let event = ("conversation.comment_created", "comment", comment.id);
    step.put_announced(key, &comment, event)?;
    Ok(step.done(comment))
}

#[allow(clippy::too_many_arguments)]
pub(super) fn feedback(
    data: &mut WorkspaceData,
    ctx: &Ctx,
    caller: &Caller,
    id: ConversationId,
    message: MessageId,
    rating: Rating,
    comment: Option<String>,
) -> Result<Change<(bool, Feedback)>, DomainError> {
    found(data, id)?;
    let m: Message = ctx
        .store
        .get(&message_key(ctx.workspace, id, message))?
        .ok_or(DomainError::NotFound("message"))?;
    if m.sender_type != SenderType::Ai {
        return Err(DomainError::invalid(
            "message_id",
            "feedback is only taken on messages the AI sent",
        ));
    }
    let key = feedback_key(ctx.workspace, message, &caller.credential);
    let previous: Option<Feedback> = ctx.store.get(&key)?;
    let first = previous.is_none();
    let fb = Feedback {
        id: previous
            .map(|p| p.id)
            .map_or_else(|| ctx.next_id().map(FeedbackId), Ok)?,
        message_id: message,
        conversation_id: id,
        user_id: caller.user.clone(),
        rating,
        comment,
        created_at: ctx.now,
    };
    let mut step = Step::new(ctx);
    let event = ("message_feedback.submitted", "message_feedback", fb.id);
    step.put_announced(key, &fb, event)?;
    Ok(step.done((first, fb)))
}

pub(super) fn resolve_handover(
    data: &mut WorkspaceData,
    ctx: &Ctx,
    caller: &Caller,
    id: HandoverId,
) -> Result<Change<Handover>, DomainError> {
    let mut h = data
        .conversations
        .handovers
        .get(&id.get())
        .cloned()
        .ok_or(DomainError::NotFound("handover"))?;
    if !h.resolve(caller.resolver(), *ctx.now) {
        return Err(DomainError::conflict("the handover is already resolved"));
    }
    let mut step = Step::new(ctx);
    let event = ("handover.resolved", "handover", id);
    step.put_announced(ctx.key(HANDOVER, id.get()), &h, event)?;
    data.conversations.remember_handover(h.clone());
    Ok(step.done(h))
}
