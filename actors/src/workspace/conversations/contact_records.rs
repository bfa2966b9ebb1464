//! A contact's conversations follow it: moved on a merge, erased with it.

use super::*;

/// Moves the conversations and handovers of a merged contact to the primary (inside the
/// merge's batch; contact.merged covers them, so no events of their own).
pub(in crate::workspace) fn reassign(
    data: &mut WorkspaceData,
    ctx: &Ctx,
    from: ContactId,
    to: ContactId,
    writes: &mut Batch,
) -> Result<(), DomainError> {
    let moved: Vec<Conversation> = data.conversations.of_contact(from).cloned().collect();
    for mut c in moved {
        data.conversations.latest.remove(&(from, c.channel));
        c.contact_id = to;
        writes.put(conversation_key(ctx, c.id), &c)?;
        data.conversations.remember(c);
    }
    let handovers: Vec<Handover> = data
        .conversations
        .handovers
        .values()
        .filter(|h| h.contact_id == from)
        .cloned()
        .collect();
    for mut h in handovers {
        h.contact_id = to;
        writes.put(ctx.key(HANDOVER, h.id.get()), &h)?;
        data.conversations.remember_handover(h);
    }
    Ok(())
}

/// Erases the conversations of a deleted contact with everything that hangs off them
/// (messages, their feedback, comments, handovers, armed timers), inside the deletion's
/// batch: the spec's "the contact and derived data". contact.deleted covers them, so no
/// events of their own. A reply already queued for its channel's relay still settles: it
/// finds its message gone and changes nothing.
pub(in crate::workspace) fn erase_of_contact(
    data: &mut WorkspaceData,
    ctx: &Ctx,
    contact: ContactId,
    writes: &mut Batch,
) -> Result<(), DomainError> {
    let convs = &mut data.conversations;
    let erased: Vec<(ConversationId, Channel)> = convs
        .of_contact(contact)
        .map(|c| (c.id, c.channel))
        .collect();
    for (id, channel) in erased {
        for key in ctx.store.keys(&message_prefix(ctx.workspace, id))? {
            if let Some(message) = crate::store::trailing_id(&key) {
                let feedback = feedback_prefix(ctx.workspace, MessageId(message));
                ctx.store
                    .keys(&feedback)?
                    .into_iter()
                    .for_each(|k| writes.delete(k));
            }
            writes.delete(key);
        }
        for key in ctx.store.keys(&comment_prefix(ctx.workspace, id))? {
            writes.delete(key);
        }
        if let Some(timers) = convs.timers.remove(&id) {
            for (kind, due) in [
                (TimerKind::Followup, timers.followup_at),
                (TimerKind::AutoClose, timers.auto_close_at),
            ] {
                if let Some(due) = due {
                    Timer::new(ctx.workspace, kind.name(id), *due).disarm(writes);
                }
            }
            writes.delete(ctx.key(TIMERS, id.get()));
        }
        convs.open_handover.remove(&id);
        convs.latest.remove(&(contact, channel));
        convs.by_id.remove(&id.get());
        writes.delete(conversation_key(ctx, id));
    }
    let handovers: Vec<u64> = convs
        .handovers
        .iter()
        .filter(|(_, h)| h.contact_id == contact)
        .map(|(id, _)| *id)
        .collect();
    for id in handovers {
        convs.handovers.remove(&id);
        writes.delete(ctx.key(HANDOVER, id));
    }
    Ok(())
}
