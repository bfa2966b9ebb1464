//! A change built step by step: its writes, events, the conversation's timers, and
//! the messages it stores.

use super::*;

/// Builds a change step by step: the writes, the events, and the conversation it is about.
pub(super) struct Step<'a> {
    pub(super) ctx: &'a Ctx<'a>,
    pub(super) writes: Batch,
    pub(super) events: Vec<DomainEvent>,
    /// A message was added: the quiet time starts again.
    pub(super) activity: bool,
    /// The AI replied in a turn: a follow-up may come later.
    pub(super) ai_replied: bool,
    /// Conversation events told when the conversation is saved, each with the record as
    /// saved: the events of one change all show its outcome, not the states between.
    pending: Vec<&'static str>,
    /// Who sends the outbound messages of this change (the service itself unless
    /// [`Self::on_behalf_of`] says otherwise): kept with a relayed message, so that the
    /// events of its outcome name them.
    origin: Origin,
}

impl<'a> Step<'a> {
    pub(super) fn new(ctx: &'a Ctx<'a>) -> Self {
        Self {
            ctx,
            writes: Batch::default(),
            events: Vec::new(),
            activity: false,
            ai_replied: false,
            pending: Vec::new(),
            origin: Origin::system(),
        }
    }

    /// The messages this change sends are sent by `origin`.
    pub(super) fn on_behalf_of(mut self, origin: Origin) -> Self {
        self.origin = origin;
        self
    }

    pub(super) fn done<T>(self, value: T) -> Change<T> {
        debug_assert!(self.pending.is_empty(), "announced but never saved");
        Change {
            value,
            writes: self.writes,
            events: self.events,
        }
    }

    /// Announces `event_type` with the conversation as data, as it is saved at the end of
    /// this change.
    pub(super) fn announce(&mut self, event_type: &'static str) {
        self.pending.push(event_type);
    }

    /// Stores a record under `key` and announces it: `(event type, resource type, id)`,
    /// the record as data.
    pub(super) fn put_announced<T: serde::Serialize>(
        &mut self,
        key: Vec<u8>,
        record: &T,
        (event_type, resource, id): (&'static str, &'static str, impl ToString),
    ) -> Result<(), DomainError> {
        self.writes.put(key, record)?;
        self.events
            .push(DomainEvent::record(event_type, resource, id, record));
        Ok(())
    }

    /// Stores the conversation and announces `event_type` with it as data.
    pub(super) fn save(
        &mut self,
        data: &mut WorkspaceData,
        c: Conversation,
        event_type: Option<&'static str>,
    ) -> Result<Conversation, DomainError> {
        self.writes.put(conversation_key(self.ctx, c.id), &c)?;
        for event_type in event_type.into_iter().chain(self.pending.drain(..)) {
            self.events
                .push(DomainEvent::record(event_type, "conversation", c.id, &c));
        }
        let before = data.conversations.get(c.id);
        let started = before.is_none_or(|before| !before.is_open() && c.is_open());
        let answered = |c: &Conversation| c.is_open() && !c.ai_paused;
        if before.is_some_and(answered) && !answered(&c) {
            super::turns::silence(data, c.id);
        }
        self.activity |= started;
        self.schedule(data, &c)?;
        data.conversations.remember(c.clone());
        Ok(c)
    }

    /// Re-arms the conversation's follow-up and auto-close after this step: a closed
    /// conversation has neither; activity restarts the auto-close wait and cancels a
    /// follow-up; an AI reply on an AI-active conversation arms the follow-up.
    pub(super) fn schedule(
        &mut self,
        data: &mut WorkspaceData,
        c: &Conversation,
    ) -> Result<(), DomainError> {
        let settings = &data.ai_settings;
        let old = data
            .conversations
            .timers
            .get(&c.id)
            .copied()
            .unwrap_or_default();
        let mut next = old;
        if !c.is_open() {
            next = ConversationTimers::default();
        } else {
            if self.activity {
                next.followup_at = None;
                next.auto_close_at = settings.auto_close_after.map(|d| self.ctx.now + d.chrono());
            }
            if self.ai_replied && settings.enabled && !c.ai_paused {
                next.followup_at = settings.followup_after.map(|d| self.ctx.now + d.chrono());
            }
            if c.ai_paused {
                next.followup_at = None;
            }
        }
        if next == old {
            return Ok(());
        }
        for (kind, before, after) in [
            (TimerKind::Followup, old.followup_at, next.followup_at),
            (TimerKind::AutoClose, old.auto_close_at, next.auto_close_at),
        ] {
            if before == after {
                continue;
            }
            let name = kind.name(c.id);
            if let Some(due) = before {
                Timer::new(self.ctx.workspace, name.clone(), *due).disarm(&mut self.writes);
            }
            if let Some(due) = after {
                Timer::new(self.ctx.workspace, name, *due).arm(&mut self.writes)?;
            }
        }
        self.keep_timers(data, c.id, next)
    }

    /// Records when a conversation's timers are due (none armed: no record), in memory and
    /// in this change's writes.
    pub(super) fn keep_timers(
        &mut self,
        data: &mut WorkspaceData,
        id: ConversationId,
        timers: ConversationTimers,
    ) -> Result<(), DomainError> {
        let key = self.ctx.key(TIMERS, id.get());
        if timers == ConversationTimers::default() {
            self.writes.delete(key);
            data.conversations.timers.remove(&id);
        } else {
            self.writes.put(key, &timers)?;
            data.conversations.timers.insert(id, timers);
        }
        Ok(())
    }

    /// Stores a new message on `c` (counted there) and announces it; an outbound one goes
    /// through the sender, which sets its status.
    pub(super) fn message(
        &mut self,
        data: &mut WorkspaceData,
        c: &mut Conversation,
        new: NewMessage,
    ) -> Result<Message, DomainError> {
        let mut m = Message {
            id: MessageId(self.ctx.next_id()?),
            conversation_id: c.id,
            contact_id: c.contact_id,
            direction: new.direction,
            sender_type: new.sender_type,
            sender_user_id: new.sender_user_id,
            text: new.body.text,
            attachments: new.body.attachments,
            status: new.status,
            external_id: new.external_id,
            error: None,
            created_at: self.ctx.now,
        };
        c.saw_message(*self.ctx.now);
        self.activity = true;
        let event_type = match m.direction {
            Direction::Inbound => Some("message.received"),
            Direction::Outbound => {
                let (writes, events) = (&mut self.writes, &mut self.events);
                sending::dispatch(
                    data,
                    self.ctx,
                    c.channel,
                    &mut m,
                    writes,
                    events,
                    &self.origin,
                )?
            }
        };
        self.writes
            .put(message_key(self.ctx.workspace, c.id, m.id), &m)?;
        if let Some(event_type) = event_type {
            self.events.push(DomainEvent::record(
                event_type,
                "message",
                m.id,
                message_event(&m, c.channel),
            ));
        }
        Ok(m)
    }

    /// Resolves the open handover of `c`, if any.
    pub(super) fn resolve_open_handover(
        &mut self,
        data: &mut WorkspaceData,
        c: ConversationId,
        by: String,
    ) -> Result<(), DomainError> {
        let Some(hid) = data.conversations.open_handover.get(&c).copied() else {
            return Ok(());
        };
        let Some(mut h) = data.conversations.handovers.get(&hid.get()).cloned() else {
            return Ok(());
        };
        if h.resolve(by, *self.ctx.now) {
            self.writes.put(self.ctx.key(HANDOVER, hid.get()), &h)?;
            self.events.push(DomainEvent::record(
                "handover.resolved",
                "handover",
                hid,
                &h,
            ));
            data.conversations.remember_handover(h);
        }
        Ok(())
    }
}

/// A message about to be stored.
pub(super) struct NewMessage {
    pub(super) direction: Direction,
    pub(super) sender_type: SenderType,
    pub(super) sender_user_id: Option<UserId>,
    pub(super) body: Body,
    pub(super) status: MessageStatus,
    pub(super) external_id: Option<String>,
}

impl NewMessage {
    /// A text the service sends on its own: the AI's, a campaign's, an automation's.
    pub(super) fn from_service(sender_type: SenderType, text: String) -> Self {
        Self {
            direction: Direction::Outbound,
            sender_type,
            sender_user_id: None,
            body: Body {
                text,
                attachments: Vec::new(),
            },
            status: MessageStatus::Queued,
            external_id: None,
        }
    }

    /// A message the AI sends.
    pub(super) fn from_ai(text: String) -> Self {
        Self::from_service(SenderType::Ai, text)
    }

    /// A message the team sends.
    pub(super) fn from_team(caller: &Caller, body: Body) -> Self {
        Self {
            direction: Direction::Outbound,
            sender_type: SenderType::Team,
            sender_user_id: caller.user.clone(),
            body,
            status: MessageStatus::Queued,
            external_id: None,
        }
    }
}
