//! AI turns: the job that runs beside the actor, and applying its outcome.

use super::*;

/// An AI turn to run beside the actor: on which message, and what the AI is told. The
/// earlier messages are read by whoever runs the turn ([`TurnJob::load_history`]), so
/// that the read stays off the actor's mailbox.
#[derive(Clone)]
pub struct TurnJob {
    pub conversation: ConversationId,
    pub message: MessageId,
    pub request: TurnRequest,
    pub contact: KnownContact,
    pub(super) store: Store,
    pub(super) workspace: WorkspaceId,
}

impl std::fmt::Debug for TurnJob {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TurnJob")
            .field("conversation", &self.conversation)
            .field("message", &self.message)
            .finish_non_exhaustive()
    }
}

impl TurnJob {
    /// Fills the request's history: the last messages before this one, oldest first.
    pub fn load_history(&mut self) -> Result<(), DomainError> {
        let prefix = message_prefix(&self.workspace, self.conversation);
        let mut history: Vec<(Speaker, String)> = self
            .store
            .newest::<Message>(&prefix, Some(self.message.get()), HISTORY)?
            .into_iter()
            .filter(|(_, earlier)| !earlier.text.is_empty())
            .map(|(_, earlier)| {
                let speaker = match earlier.direction {
                    Direction::Inbound => Speaker::Customer,
                    Direction::Outbound => Speaker::Business,
                };
                (speaker, earlier.text)
            })
            .collect();
        history.reverse();
        self.request.history = history;
        Ok(())
    }
}

/// What applying a turn's outcome did.
#[derive(Debug, Clone, PartialEq)]
pub struct TurnApplied {
    /// The AI's message to the customer, if one was sent.
    pub reply: Option<Message>,
    pub handover: bool,
    /// Why the turn failed (ai_turn.failed was emitted).
    pub failure: Option<String>,
}

/// Events of AI turns: the AI is the actor.
pub(super) fn ai_origin() -> Origin {
    Origin {
        actor: EventActor {
            kind: ActorKind::Ai,
            id: None,
        },
        source: EventSource {
            connection_id: None,
            via: "ai".into(),
        },
    }
}

/// How many earlier messages the AI is shown.
pub(super) const HISTORY: usize = 20;

/// A background turn whose outcome is not applied yet: the end of its wait. Its timer,
/// armed with the customer's message and disarmed with the outcome (in the same batches),
/// is what survives a stop: one that fires means the outcome never came back (the actor
/// stopped or the process died while the turn ran), so the turn runs again. The wait
/// itself is kept in memory, to disarm the timer and apply each outcome once.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct PendingTurn {
    conversation: ConversationId,
    due_at: DateTime<Utc>,
    /// The conversation was closed or its AI paused while the turn ran: its reply (and
    /// handover) must not go, even if the conversation is open and answered again by the
    /// time the outcome comes back.
    silenced: bool,
}

/// A `/chat` turn, run by its request's task and applied when it answers. It has no timer
/// (its caller gets the error if it never comes back), but like a background turn it is
/// silenced by a close or pause meanwhile.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct ChatTurn {
    conversation: ConversationId,
    started: DateTime<Utc>,
    silenced: bool,
}

/// How long past the turn's own time limit its outcome may take to be applied.
const TURN_GRACE: std::time::Duration = std::time::Duration::from_secs(30);

fn pending_timer(
    ctx: &Ctx,
    conversation: ConversationId,
    message: MessageId,
    due: DateTime<Utc>,
) -> Timer {
    Timer::new(ctx.workspace, format!("turn/{conversation}/{message}"), due)
}

/// Arms in `writes` the timer of background turn `job`, which waits for its outcome.
pub(super) fn expect_outcome(
    data: &mut WorkspaceData,
    ctx: &Ctx,
    job: &TurnJob,
    writes: &mut Batch,
) -> Result<(), DomainError> {
    let wait = chrono::Duration::from_std(ctx.turn_limit + TURN_GRACE).unwrap_or_default();
    let due = *ctx.now + wait;
    pending_timer(ctx, job.conversation, job.message, due).arm(writes)?;
    let pending = PendingTurn {
        conversation: job.conversation,
        due_at: due,
        silenced: false,
    };
    data.conversations
        .pending_turns
        .insert(job.message, pending);
    Ok(())
}

/// Marks the turns still running on `conversation` as silenced: it was closed or its AI
/// paused, so what they answer is no longer wanted.
pub(super) fn silence(data: &mut WorkspaceData, conversation: ConversationId) {
    for pending in data.conversations.pending_turns.values_mut() {
        if pending.conversation == conversation {
            pending.silenced = true;
        }
    }
    for chat in data.conversations.chat_turns.values_mut() {
        if chat.conversation == conversation {
            chat.silenced = true;
        }
    }
}

/// Takes the wait of `message` off, its timer disarmed in `writes`: its outcome is being
/// applied. None when there is none (the outcome was applied already).
fn settle(
    data: &mut WorkspaceData,
    ctx: &Ctx,
    message: MessageId,
    writes: &mut Batch,
) -> Option<PendingTurn> {
    let pending = data.conversations.pending_turns.remove(&message)?;
    pending_timer(ctx, pending.conversation, message, pending.due_at).disarm(writes);
    Some(pending)
}

/// A pending turn's timer: the turn never came back (its actor stopped or the process
/// died while it ran), so it runs again, unless the AI no longer answers there.
pub(in crate::workspace) fn turn_due(
    data: &mut WorkspaceData,
    ctx: &Ctx,
    timer: &Timer,
) -> Option<Result<Change<()>, DomainError>> {
    let mut parts = timer.name.strip_prefix("turn/")?.split('/');
    let conversation = ConversationId(parts.next()?.parse().ok()?);
    let message = MessageId(parts.next()?.parse().ok()?);
    Some(rerun(data, ctx, timer, conversation, message))
}

fn rerun(
    data: &mut WorkspaceData,
    ctx: &Ctx,
    timer: &Timer,
    conversation: ConversationId,
    message: MessageId,
) -> Result<Change<()>, DomainError> {
    let mut step = Step::new(ctx);
    // A timer that fires was never disarmed by an outcome: whatever this actor still
    // waits for on the message is replaced by the run again.
    timer.disarm(&mut step.writes);
    settle(data, ctx, message, &mut step.writes);
    let job = match prepare_turn(data, ctx, conversation, message) {
        Ok(job) => job,
        // The conversation or the message is gone: nothing to answer.
        Err(DomainError::NotFound(_)) => None,
        Err(e) => return Err(e),
    };
    if let Some(job) = job {
        tracing::info!(workspace = %ctx.workspace, %conversation, %message, "an AI turn cut short runs again");
        expect_outcome(data, ctx, &job, &mut step.writes)?;
        ctx.later.borrow_mut().push(job);
    }
    Ok(step.done(()))
}

/// The turn on customer message `m` of `c`, if the AI answers it: it is on for the
/// workspace and not paused on the conversation.
pub(super) fn turn_job(
    data: &WorkspaceData,
    ctx: &Ctx,
    c: &Conversation,
    m: &Message,
) -> Result<Option<TurnJob>, DomainError> {
    if !data.ai_settings.enabled || c.ai_paused || !c.is_open() {
        return Ok(None);
    }
    let (email, phone) = crate::workspace::contacts::reachable(data, c.contact_id);
    Ok(Some(TurnJob {
        conversation: c.id,
        message: m.id,
        request: TurnRequest {
            settings: data.ai_settings.clone(),
            history: Vec::new(),
            text: m.text.clone(),
        },
        contact: KnownContact { email, phone },
        store: ctx.store.clone(),
        workspace: ctx.workspace.clone(),
    }))
}

pub(super) fn prepare_turn(
    data: &WorkspaceData,
    ctx: &Ctx,
    id: ConversationId,
    message: MessageId,
) -> Result<Option<TurnJob>, DomainError> {
    let c = found(data, id)?;
    let m: Message = ctx
        .store
        .get(&message_key(ctx.workspace, id, message))?
        .ok_or(DomainError::NotFound("message"))?;
    turn_job(data, ctx, c, &m)
}

/// [`prepare_turn`] for `/chat`, whose request task runs the turn: kept in memory until
/// its outcome comes back, so that a close or pause meanwhile silences it.
pub(super) fn prepare_chat_turn(
    data: &mut WorkspaceData,
    ctx: &Ctx,
    id: ConversationId,
    message: MessageId,
) -> Result<Option<TurnJob>, DomainError> {
    let job = prepare_turn(data, ctx, id, message)?;
    if job.is_some() {
        // A turn whose request went away never comes back: forget it after its time.
        let wait = chrono::Duration::from_std(ctx.turn_limit + TURN_GRACE).unwrap_or_default();
        let now = *ctx.now;
        let chats = &mut data.conversations.chat_turns;
        chats.retain(|_, t| t.started + wait > now);
        chats.insert(
            message,
            ChatTurn {
                conversation: id,
                started: now,
                silenced: false,
            },
        );
    }
    Ok(job)
}

/// Applies a turn: the lead first (whatever else happened), then a failure
/// (ai_turn.failed, nothing sent), or the handover and the reply. A conversation that was
/// paused or closed while the turn ran gets no reply, even if it was reopened or resumed
/// since (a `/chat` turn's too), and neither does one whose workspace turned the AI off.
///
/// A background turn's outcome is applied once: with its pending record, which it takes
/// off; without one (applied already, after a run again) it changes nothing.
pub(super) fn apply_turn(
    data: &mut WorkspaceData,
    ctx: &Ctx,
    id: ConversationId,
    message: MessageId,
    outcome: TurnOutcome,
    background: bool,
) -> Result<Change<TurnApplied>, DomainError> {
    let mut c = found(data, id)?.clone();
    let mut step = Step::new(ctx).on_behalf_of(ai_origin());
    let silenced = if background {
        match settle(data, ctx, message, &mut step.writes) {
            Some(pending) => pending.silenced,
            None => {
                return Ok(step.done(TurnApplied {
                    reply: None,
                    handover: false,
                    failure: None,
                }))
            }
        }
    } else {
        data.conversations
            .chat_turns
            .remove(&message)
            .is_some_and(|t| t.silenced)
    };
    if let Some(lead) = outcome.lead {
        let captured = crate::workspace::contacts::capture_lead(
            data,
            ctx,
            c.contact_id,
            lead.email,
            lead.phone,
            &lead.summary,
        )?;
        step.writes.extend(captured.writes);
        step.events.extend(captured.events);
    }
    let mut applied = TurnApplied {
        reply: None,
        handover: false,
        failure: outcome.failure.clone(),
    };
    if let Some(error) = outcome.failure {
        step.events.push(DomainEvent::new(
            "ai_turn.failed",
            "conversation",
            c.id,
            json!({"conversation_id": c.id, "message_id": message, "error": error}),
        ));
        return Ok(step.done(applied));
    }
    // Turned off while the turn ran, the AI says nothing either.
    if silenced || c.ai_paused || !c.is_open() || !data.ai_settings.enabled {
        return Ok(step.done(applied));
    }
    // A conversation has at most one open handover: a new request while one waits for a
    // person adds to that one (the AI pauses again) rather than opening a second, which
    // a team reply or close would leave unresolved.
    let open = data.conversations.open_handover.contains_key(&c.id);
    let wants_person = outcome.handover.is_some();
    if let Some(summary) = outcome.handover.filter(|_| !open) {
        let contact = data.contacts.get(c.contact_id);
        let h = Handover {
            id: HandoverId(ctx.next_id()?),
            conversation_id: c.id,
            contact_id: c.contact_id,
            status: HandoverStatus::Requested,
            summary,
            customer_name: contact
                .as_ref()
                .and_then(|k| crate::workspace::contacts::view(data, k).name),
            customer_phone: contact.and_then(|k| k.phone.clone()),
            requested_at: ctx.now,
            resolved_at: None,
            resolved_by: None,
        };
        let event = ("handover.requested", "handover", h.id);
        step.put_announced(ctx.key(HANDOVER, h.id.get()), &h, event)?;
        data.conversations.remember_handover(h);
        applied.handover = true;
    } else if wants_person {
        applied.handover = true;
    }
    if applied.handover && c.pause_ai(AiPauseReason::Handover, *ctx.now) {
        step.announce("conversation.ai_paused");
    }
    if let Some(text) = outcome.reply {
        let m = step.message(data, &mut c, NewMessage::from_ai(text))?;
        step.ai_replied = true;
        applied.reply = Some(m);
    }
    step.save(data, c, None)?;
    Ok(step.done(applied))
}
