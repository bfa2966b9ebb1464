//! A conversation's follow-up and auto-close timers: what is armed, and what happens when
//! one is due.

use super::*;

/// When a conversation's follow-up and auto-close are due; each armed as a durable timer
/// named `conversation/<id>/followup` or `conversation/<id>/autoclose`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ConversationTimers {
    pub followup_at: Option<Timestamp>,
    pub auto_close_at: Option<Timestamp>,
}

/// The two timers of a conversation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum TimerKind {
    Followup,
    AutoClose,
}

impl TimerKind {
    pub(super) fn name(self, c: ConversationId) -> String {
        match self {
            TimerKind::Followup => format!("conversation/{c}/followup"),
            TimerKind::AutoClose => format!("conversation/{c}/autoclose"),
        }
    }

    pub(super) fn parse(name: &str) -> Option<(ConversationId, Self)> {
        let rest = name.strip_prefix("conversation/")?;
        let (id, kind) = rest.split_once('/')?;
        let id = ConversationId(id.parse().ok()?);
        match kind {
            "followup" => Some((id, TimerKind::Followup)),
            "autoclose" => Some((id, TimerKind::AutoClose)),
            _ => None,
        }
    }
}

/// A conversation timer is due: the follow-up goes out once, or the quiet conversation
/// closes (closed_by `auto`). A timer the conversation no longer expects (it was re-armed,
/// or the conversation changed) is only disarmed.
pub(in crate::workspace) fn timer_due(
    data: &mut WorkspaceData,
    ctx: &Ctx,
    timer: &Timer,
) -> Option<Result<Change<()>, DomainError>> {
    let (id, kind) = TimerKind::parse(&timer.name)?;
    Some(fire(data, ctx, timer, id, kind))
}

pub(super) fn fire(
    data: &mut WorkspaceData,
    ctx: &Ctx,
    timer: &Timer,
    id: ConversationId,
    kind: TimerKind,
) -> Result<Change<()>, DomainError> {
    let mut step = Step::new(ctx);
    timer.disarm(&mut step.writes);
    let armed = data
        .conversations
        .timers
        .get(&id)
        .copied()
        .unwrap_or_default();
    let expected = match kind {
        TimerKind::Followup => armed.followup_at,
        TimerKind::AutoClose => armed.auto_close_at,
    };
    let Some(mut c) = data.conversations.get(id).cloned() else {
        return Ok(step.done(()));
    };
    if expected != Some(Timestamp(timer.due_at)) || !c.is_open() {
        return Ok(step.done(()));
    }
    // The settings of the moment decide: turned off since the timer was armed, nothing
    // happens; lengthened, the timer is armed again for the new time (a shortened one
    // acts now, at the time it was armed for).
    let (setting, since) = match kind {
        TimerKind::Followup => (data.ai_settings.followup_after, c.last_message_at),
        TimerKind::AutoClose => (
            data.ai_settings.auto_close_after,
            Some(c.last_message_at.unwrap_or(c.created_at)),
        ),
    };
    let Some(after) = setting else {
        retime(&mut step, data, id, kind, None)?;
        return Ok(step.done(()));
    };
    if let Some(due) = since.map(|t| t.get() + after.chrono()) {
        if due > *ctx.now {
            retime(&mut step, data, id, kind, Some(due))?;
            return Ok(step.done(()));
        }
    }
    match kind {
        TimerKind::Followup => {
            // A follow-up is the business reaching out: never to a contact who opted out.
            let opted_out = data
                .contacts
                .get(c.contact_id)
                .is_some_and(|k| k.do_not_contact);
            if !data.ai_settings.enabled || c.ai_paused || opted_out {
                return Ok(step.done(()));
            }
            let text = data.ai_settings.followup_text.clone();
            let m = step.message(data, &mut c, NewMessage::from_ai(text))?;
            let mut followed = serde_json::to_value(&c).unwrap_or_else(|_| json!({}));
            if let Some(obj) = followed.as_object_mut() {
                obj.insert("message_id".into(), json!(m.id));
            }
            step.events.push(DomainEvent::record(
                "conversation.followup_sent",
                "conversation",
                c.id,
                followed,
            ));
            step.save(data, c, None)?;
            Ok(step.done(()))
        }
        TimerKind::AutoClose => {
            let closed = close_as(
                data,
                ctx,
                &mut c,
                ClosedBy::Auto,
                ClosingNote::default(),
                "system".into(),
            )?;
            step.writes.extend(closed.writes);
            step.events.extend(closed.events);
            Ok(step.done(()))
        }
    }
}

/// Sets when a conversation's `kind` timer is due (none: not armed), in the record and, for
/// a time, as a durable timer.
fn retime(
    step: &mut Step,
    data: &mut WorkspaceData,
    id: ConversationId,
    kind: TimerKind,
    due: Option<DateTime<Utc>>,
) -> Result<(), DomainError> {
    let mut timers = data
        .conversations
        .timers
        .get(&id)
        .copied()
        .unwrap_or_default();
    let slot = match kind {
        TimerKind::Followup => &mut timers.followup_at,
        TimerKind::AutoClose => &mut timers.auto_close_at,
    };
    *slot = due.map(Timestamp);
    if let Some(due) = due {
        Timer::new(step.ctx.workspace, kind.name(id), due).arm(&mut step.writes)?;
    }
    step.keep_timers(data, id, timers)
}
