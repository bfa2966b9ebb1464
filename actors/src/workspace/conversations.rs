//! Conversations, their messages, comments, handovers and feedback.
//!
//! Conversations and handovers live in memory; messages and comments only in the store,
//! under `w/<ws>/msg/<conversation>/<message>` and `w/<ws>/cmt/<conversation>/<comment>`,
//! so a conversation's page is one newest-first range read and memory does not grow with
//! message volume. A conversation keeps its message count and the time of its last one.

use crate::clock::Timestamp;
use std::collections::{BTreeMap, HashMap};

use chrono::{DateTime, Utc};
use serde_json::json;

use super::sending::{self, message_event, message_key, MESSAGE};
use super::{answer, finish, record_prefix, Change, Ctx, Handled, Reply, WorkspaceData};
use crate::ai::{KnownContact, Speaker, TurnOutcome, TurnRequest};
use crate::domain::contact::Channel;
use crate::domain::contact::NewContact;
use crate::domain::conversation::{
    AiPauseReason, ClosedBy, ClosingNote, Comment, Conversation, ConversationStatus,
};
use crate::domain::handover::{Handover, HandoverStatus};
use crate::domain::message::{
    Body, Direction, Feedback, Message, MessageStatus, Rating, SenderType,
};
use crate::domain::page::{Page, PageRequest};
use crate::domain::DomainError;
use crate::events::{ActorKind, DomainEvent, EventActor, EventSource, Origin};
use crate::ids::{
    CommentId, ContactId, ConversationId, FeedbackId, HandoverId, MessageId, UserId, WorkspaceId,
};
use crate::schedule::Timer;
use crate::store::{Batch, Key, Store};

const CONVERSATION: &str = "cv";
const HANDOVER: &str = "ho";
const COMMENT: &str = "cmt";
const FEEDBACK: &str = "fb";
const DEDUPE: &str = "dd";
const TIMERS: &str = "cvt";

/// How long a repeat of an inbound message is recognised.
pub const DEDUPE_WINDOW: chrono::Duration = chrono::Duration::hours(24);

/// Who asks, as the conversation rules need it: the person (none for API keys) and how
/// the change is attributed in events.
#[derive(Debug, Clone)]
pub struct Caller {
    pub user: Option<UserId>,
    pub origin: Origin,
    /// Identifies the credential, so that one feedback per message and credential holds.
    pub credential: String,
}

impl Caller {
    fn closed_by(&self) -> ClosedBy {
        if self.user.is_some() {
            ClosedBy::Team
        } else {
            ClosedBy::Api
        }
    }

    fn resolver(&self) -> String {
        self.user
            .as_ref()
            .map_or_else(|| "api".to_string(), |u| u.to_string())
    }
}

/// The filters of GET /conversations; each `None` matches everything.
#[derive(Debug, Clone, Default)]
pub struct ConversationFilter {
    pub status: Option<ConversationStatus>,
    pub contact_id: Option<ContactId>,
    pub channel: Option<Channel>,
    pub assigned_to_user_id: Option<UserId>,
    pub ai_paused: Option<bool>,
    pub updated_since: Option<DateTime<Utc>>,
}

impl ConversationFilter {
    fn keeps(&self, c: &Conversation) -> bool {
        self.status.is_none_or(|s| c.status == s)
            && self.contact_id.is_none_or(|id| c.contact_id == id)
            && self.channel.is_none_or(|ch| c.channel == ch)
            && self
                .assigned_to_user_id
                .as_ref()
                .is_none_or(|u| c.assigned_to_user_id.as_ref() == Some(u))
            && self.ai_paused.is_none_or(|p| c.ai_paused == p)
            && self.updated_since.is_none_or(|t| c.updated_at >= t)
    }
}

/// The filters of GET /handovers.
#[derive(Debug, Clone, Default)]
pub struct HandoverFilter {
    pub status: Option<HandoverStatus>,
    pub conversation_id: Option<ConversationId>,
}

/// Who a customer message is from.
#[derive(Debug, Clone)]
pub enum InboundFrom {
    Contact(ContactId),
    /// A known conversation: its contact, on its channel.
    Conversation(ConversationId),
    /// Matched like an upsert; a new contact is created when nothing matches.
    Details(Box<NewContact>),
}

/// What makes a repeat of an inbound message recognisable: a `message_id` (per
/// workspace) or an `Idempotency-Key` (per workspace and credential), already hashed with
/// its scope by the edge, and the fingerprint of the body it came with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RepeatGuard {
    pub key: String,
    pub fingerprint: String,
}

/// A customer message arriving on a channel.
#[derive(Debug, Clone)]
pub struct Inbound {
    pub from: InboundFrom,
    pub channel: Channel,
    pub body: Body,
    /// The sender's own id for the message (`message_id`).
    pub external_id: Option<String>,
    pub guards: Vec<RepeatGuard>,
    /// The credential it came through, for the events' `source`.
    pub source: EventSource,
    /// Whether the actor has the AI answer it after the message is stored (`/chat` runs
    /// its turn itself, to answer with the reply).
    pub answer: bool,
}

/// An AI turn to run beside the actor: on which message, and what the AI is told. The
/// earlier messages are read by whoever runs the turn ([`TurnJob::load_history`]), so
/// that the read stays off the actor's mailbox.
#[derive(Clone)]
pub struct TurnJob {
    pub conversation: ConversationId,
    pub message: MessageId,
    pub request: TurnRequest,
    pub contact: KnownContact,
    store: Store,
    workspace: WorkspaceId,
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

/// Where an inbound message went. `repeat` is set when it had been accepted before (and
/// nothing new was stored).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Accepted {
    pub conversation_id: ConversationId,
    pub message_id: MessageId,
    pub contact_id: ContactId,
    #[serde(skip)]
    pub repeat: bool,
}

/// A stored repeat guard: the body it came with and where the message went.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
struct GuardRecord {
    fingerprint: String,
    accepted: Accepted,
    created_at: Timestamp,
}

#[derive(strum::IntoStaticStr)]
#[strum(prefix = "conversation.", serialize_all = "snake_case")]
pub enum ConversationMsg {
    /// A customer message: goes to the contact's latest conversation on the channel,
    /// reopened or created as needed.
    Inbound {
        inbound: Box<Inbound>,
        reply: Reply<Accepted>,
    },
    /// What the AI would be told to answer `message`; None when it does not answer.
    PrepareTurn {
        id: ConversationId,
        message: MessageId,
        reply: Reply<Option<TurnJob>>,
    },
    /// The outcome of an AI turn on `message`, to apply.
    ApplyTurn {
        id: ConversationId,
        message: MessageId,
        outcome: TurnOutcome,
        reply: Reply<TurnApplied>,
    },
    List {
        filter: ConversationFilter,
        page: PageRequest,
        reply: Reply<Page<Conversation>>,
    },
    Get {
        id: ConversationId,
        reply: Reply<Conversation>,
    },
    /// A conversation started by the team, with an optional first message.
    Create {
        caller: Caller,
        contact_id: ContactId,
        channel: Channel,
        text: Option<String>,
        reply: Reply<Conversation>,
    },
    Close {
        caller: Caller,
        id: ConversationId,
        note: ClosingNote,
        reply: Reply<Conversation>,
    },
    Reopen {
        caller: Caller,
        id: ConversationId,
        reply: Reply<Conversation>,
    },
    /// The edge has checked that the user is a member.
    Assign {
        caller: Caller,
        id: ConversationId,
        user: Option<UserId>,
        reply: Reply<Conversation>,
    },
    PauseAi {
        caller: Caller,
        id: ConversationId,
        reason: AiPauseReason,
        reply: Reply<Conversation>,
    },
    ResumeAi {
        caller: Caller,
        id: ConversationId,
        reply: Reply<Conversation>,
    },
    ListMessages {
        id: ConversationId,
        page: PageRequest,
        reply: Reply<Page<Message>>,
    },
    TeamReply {
        caller: Caller,
        id: ConversationId,
        body: Body,
        reply: Reply<Message>,
    },
    ListComments {
        id: ConversationId,
        page: PageRequest,
        reply: Reply<Page<Comment>>,
    },
    AddComment {
        caller: Caller,
        id: ConversationId,
        body: String,
        reply: Reply<Comment>,
    },
    Feedback {
        caller: Caller,
        id: ConversationId,
        message: MessageId,
        rating: Rating,
        comment: Option<String>,
        reply: Reply<Feedback>,
    },
    ListHandovers {
        filter: HandoverFilter,
        page: PageRequest,
        reply: Reply<Page<Handover>>,
    },
    ResolveHandover {
        caller: Caller,
        id: HandoverId,
        reply: Reply<Handover>,
    },
}

#[derive(Default)]
pub struct Conversations {
    by_id: BTreeMap<u64, Conversation>,
    /// The most recent conversation of each contact on each channel: where its next
    /// inbound message goes.
    latest: HashMap<(ContactId, Channel), ConversationId>,
    handovers: BTreeMap<u64, Handover>,
    /// The open handover of a conversation, if any.
    open_handover: HashMap<ConversationId, HandoverId>,
    /// The follow-up and auto-close times armed for each conversation.
    timers: HashMap<ConversationId, ConversationTimers>,
}

/// When a conversation's follow-up and auto-close are due; each armed as a durable timer
/// named `conversation/<id>/followup` or `conversation/<id>/autoclose`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ConversationTimers {
    pub followup_at: Option<Timestamp>,
    pub auto_close_at: Option<Timestamp>,
}

/// The two timers of a conversation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum TimerKind {
    Followup,
    AutoClose,
}

impl TimerKind {
    fn name(self, c: ConversationId) -> String {
        match self {
            TimerKind::Followup => format!("conversation/{c}/followup"),
            TimerKind::AutoClose => format!("conversation/{c}/autoclose"),
        }
    }

    fn parse(name: &str) -> Option<(ConversationId, Self)> {
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

impl Conversations {
    pub fn load(store: &Store, ws: &WorkspaceId) -> Result<Self, DomainError> {
        let mut me = Self::default();
        for (_, c) in store.scan::<Conversation>(&record_prefix(ws, CONVERSATION))? {
            me.remember(c);
        }
        for (_, h) in store.scan::<Handover>(&record_prefix(ws, HANDOVER))? {
            me.remember_handover(h);
        }
        for (key, t) in store.scan::<ConversationTimers>(&record_prefix(ws, TIMERS))? {
            if let Some(id) = crate::store::trailing_id(&key) {
                me.timers.insert(ConversationId(id), t);
            }
        }
        Ok(me)
    }

    pub fn len(&self) -> usize {
        self.by_id.len()
    }

    pub fn is_empty(&self) -> bool {
        self.by_id.is_empty()
    }

    pub fn get(&self, id: ConversationId) -> Option<&Conversation> {
        self.by_id.get(&id.get())
    }

    fn remember(&mut self, c: Conversation) {
        let slot = self.latest.entry((c.contact_id, c.channel)).or_insert(c.id);
        if c.id > *slot {
            *slot = c.id;
        }
        self.by_id.insert(c.id.get(), c);
    }

    fn remember_handover(&mut self, h: Handover) {
        if h.is_open() {
            self.open_handover.insert(h.conversation_id, h.id);
        } else if self.open_handover.get(&h.conversation_id) == Some(&h.id) {
            self.open_handover.remove(&h.conversation_id);
        }
        self.handovers.insert(h.id.get(), h);
    }

    /// The conversation an inbound message of `contact` on `channel` goes to.
    pub fn latest_of(&self, contact: ContactId, channel: Channel) -> Option<&Conversation> {
        self.latest
            .get(&(contact, channel))
            .and_then(|id| self.get(*id))
    }
}

fn conversation_key(ctx: &Ctx, id: ConversationId) -> Vec<u8> {
    ctx.key(CONVERSATION, id.get())
}

fn message_prefix(ws: &WorkspaceId, conversation: ConversationId) -> Vec<u8> {
    Key::new("w")
        .str(ws.as_str())
        .str(MESSAGE)
        .id(conversation.get())
        .prefix()
}

fn comment_prefix(ws: &WorkspaceId, conversation: ConversationId) -> Vec<u8> {
    Key::new("w")
        .str(ws.as_str())
        .str(COMMENT)
        .id(conversation.get())
        .prefix()
}

fn comment_key(ws: &WorkspaceId, conversation: ConversationId, id: CommentId) -> Vec<u8> {
    Key::new("w")
        .str(ws.as_str())
        .str(COMMENT)
        .id(conversation.get())
        .id(id.get())
        .build()
}

fn feedback_key(ws: &WorkspaceId, message: MessageId, credential: &str) -> Vec<u8> {
    Key::new("w")
        .str(ws.as_str())
        .str(FEEDBACK)
        .id(message.get())
        .str(credential)
        .build()
}

fn feedback_prefix(ws: &WorkspaceId, message: MessageId) -> Vec<u8> {
    Key::new("w")
        .str(ws.as_str())
        .str(FEEDBACK)
        .id(message.get())
        .prefix()
}

pub(super) fn handle(msg: ConversationMsg, data: &mut WorkspaceData, ctx: &Ctx) -> Handled {
    use ConversationMsg as M;
    match msg {
        M::Inbound { inbound, reply } => {
            let source = inbound.source.clone();
            let result = receive(data, ctx, *inbound);
            let contact = result.as_ref().ok().map(|c| c.value.contact_id);
            finish(reply, customer_origin(&source, contact), result)
        }
        M::PrepareTurn { id, message, reply } => {
            answer(reply, prepare_turn(data, ctx, id, message))
        }
        M::ApplyTurn {
            id,
            message,
            outcome,
            reply,
        } => finish(
            reply,
            ai_origin(),
            apply_turn(data, ctx, id, message, outcome),
        ),
        M::List {
            mut filter,
            page,
            reply,
        } => {
            // A merged contact's id names the primary, which now has its conversations.
            filter.contact_id = filter.contact_id.map(|c| data.contacts.current(c));
            answer(
                reply,
                Ok(page.select(&data.conversations.by_id, |c| filter.keeps(c))),
            )
        }
        M::Get { id, reply } => answer(reply, found(data, id).cloned()),
        M::Create {
            caller,
            contact_id,
            channel,
            text,
            reply,
        } => {
            let origin = caller.origin.clone();
            finish(
                reply,
                origin,
                create(data, ctx, &caller, contact_id, channel, text),
            )
        }
        M::Close {
            caller,
            id,
            note,
            reply,
        } => {
            let origin = caller.origin.clone();
            finish(reply, origin, close(data, ctx, &caller, id, note))
        }
        M::Reopen { caller, id, reply } => {
            finish(reply, caller.origin.clone(), reopen(data, ctx, id))
        }
        M::Assign {
            caller,
            id,
            user,
            reply,
        } => finish(reply, caller.origin.clone(), assign(data, ctx, id, user)),
        M::PauseAi {
            caller,
            id,
            reason,
            reply,
        } => finish(reply, caller.origin.clone(), pause(data, ctx, id, reason)),
        M::ResumeAi { caller, id, reply } => {
            finish(reply, caller.origin.clone(), resume(data, ctx, id))
        }
        M::ListMessages { id, page, reply } => answer(reply, list_messages(data, ctx, id, page)),
        M::TeamReply {
            caller,
            id,
            body,
            reply,
        } => {
            let origin = caller.origin.clone();
            finish(reply, origin, team_reply(data, ctx, &caller, id, body))
        }
        M::ListComments { id, page, reply } => answer(reply, list_comments(data, ctx, id, page)),
        M::AddComment {
            caller,
            id,
            body,
            reply,
        } => {
            let origin = caller.origin.clone();
            finish(reply, origin, add_comment(data, ctx, &caller, id, body))
        }
        M::Feedback {
            caller,
            id,
            message,
            rating,
            comment,
            reply,
        } => {
            let origin = caller.origin.clone();
            let result = feedback(data, ctx, &caller, id, message, rating, comment);
            finish(reply, origin, result)
        }
        M::ListHandovers {
            filter,
            page,
            reply,
        } => answer(
            reply,
            Ok(page.select(&data.conversations.handovers, |h| {
                filter.status.is_none_or(|s| h.status == s)
                    && filter
                        .conversation_id
                        .is_none_or(|c| h.conversation_id == c)
            })),
        ),
        M::ResolveHandover { caller, id, reply } => {
            let origin = caller.origin.clone();
            finish(reply, origin, resolve_handover(data, ctx, &caller, id))
        }
    }
}

fn found(data: &WorkspaceData, id: ConversationId) -> Result<&Conversation, DomainError> {
    data.conversations
        .get(id)
        .ok_or(DomainError::NotFound("conversation"))
}

/// Builds a change step by step: the writes, the events, and the conversation it is about.
struct Step<'a> {
    ctx: &'a Ctx<'a>,
    writes: Batch,
    events: Vec<DomainEvent>,
    /// A message was added: the quiet time starts again.
    activity: bool,
    /// The AI replied in a turn: a follow-up may come later.
    ai_replied: bool,
}

impl<'a> Step<'a> {
    fn new(ctx: &'a Ctx<'a>) -> Self {
        Self {
            ctx,
            writes: Batch::default(),
            events: Vec::new(),
            activity: false,
            ai_replied: false,
        }
    }

    fn done<T>(self, value: T) -> Change<T> {
        Change {
            value,
            writes: self.writes,
            events: self.events,
        }
    }

    /// Announces `event_type` with the conversation as data.
    fn announce(&mut self, event_type: &'static str, c: &Conversation) {
        self.events
            .push(DomainEvent::record(event_type, "conversation", c.id, c));
    }

    /// Stores a record under `key` and announces it: `(event type, resource type, id)`,
    /// the record as data.
    fn put_announced<T: serde::Serialize>(
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
    fn save(
        &mut self,
        data: &mut WorkspaceData,
        c: Conversation,
        event_type: Option<&'static str>,
    ) -> Result<Conversation, DomainError> {
        self.writes.put(conversation_key(self.ctx, c.id), &c)?;
        if let Some(event_type) = event_type {
            self.announce(event_type, &c);
        }
        let started = data
            .conversations
            .get(c.id)
            .is_none_or(|before| !before.is_open() && c.is_open());
        self.activity |= started;
        self.schedule(data, &c)?;
        data.conversations.remember(c.clone());
        Ok(c)
    }

    /// Re-arms the conversation's follow-up and auto-close after this step: a closed
    /// conversation has neither; activity restarts the auto-close wait and cancels a
    /// follow-up; an AI reply on an AI-active conversation arms the follow-up.
    fn schedule(&mut self, data: &mut WorkspaceData, c: &Conversation) -> Result<(), DomainError> {
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
        let key = self.ctx.key(TIMERS, c.id.get());
        if next == ConversationTimers::default() {
            self.writes.delete(key);
            data.conversations.timers.remove(&c.id);
        } else {
            self.writes.put(key, &next)?;
            data.conversations.timers.insert(c.id, next);
        }
        Ok(())
    }

    /// Stores a new message on `c` (counted there) and announces it; an outbound one goes
    /// through the sender, which sets its status.
    fn message(
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
                sending::dispatch(data, self.ctx, c.channel, &mut m, writes, events)?
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
    fn resolve_open_handover(
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
struct NewMessage {
    direction: Direction,
    sender_type: SenderType,
    sender_user_id: Option<UserId>,
    body: Body,
    status: MessageStatus,
    external_id: Option<String>,
}

impl NewMessage {
    /// A message the AI sends.
    fn from_ai(text: String) -> Self {
        Self {
            direction: Direction::Outbound,
            sender_type: SenderType::Ai,
            sender_user_id: None,
            body: Body {
                text,
                attachments: Vec::new(),
            },
            status: MessageStatus::Queued,
            external_id: None,
        }
    }

    /// A message the team sends.
    fn from_team(caller: &Caller, body: Body) -> Self {
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

/// Events caused by a customer: the actor is the customer (the contact, once known), the
/// source the credential the message came through.
fn customer_origin(source: &EventSource, contact: Option<ContactId>) -> Origin {
    Origin {
        actor: EventActor {
            kind: ActorKind::Customer,
            id: contact.map(|c| c.to_string()),
        },
        source: source.clone(),
    }
}

fn guard_key(ctx: &Ctx, key: &str) -> Vec<u8> {
    Key::new("w")
        .str(ctx.workspace.as_str())
        .str(DEDUPE)
        .str(key)
        .build()
}

/// The timer that forgets a repeat guard once its window has passed.
fn guard_timer(ctx: &Ctx, key: &str, created_at: DateTime<Utc>) -> Timer {
    Timer::new(
        ctx.workspace,
        format!("dedupe/{key}"),
        created_at + DEDUPE_WINDOW,
    )
}

/// A customer message: stored on the contact's latest conversation on its channel
/// (reopened if closed, created if there is none), with the contact created first when
/// new; a repeat within the window answers where the first one went and stores nothing.
fn receive(
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
            let found = super::contacts::for_inbound(data, ctx, *new, inbound.channel)?;
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
            step.announce("conversation.reopened", &c);
            c
        }
        None => {
            let c = Conversation::new(ConversationId(ctx.next_id()?), contact, channel, *ctx.now);
            step.announce("conversation.created", &c);
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
pub(super) fn campaign_message(
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
/// the latest message on any channel, or a new `api` conversation when there is none.
pub(super) fn automation_message(
    data: &mut WorkspaceData,
    ctx: &Ctx,
    contact: ContactId,
    text: String,
) -> Result<Change<Message>, DomainError> {
    let existing = Channel::ALL
        .iter()
        .filter_map(|channel| data.conversations.latest_of(contact, *channel))
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
fn outbound(
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
            step.announce("conversation.created", &c);
            c
        }
    };
    let new = NewMessage {
        direction: Direction::Outbound,
        sender_type,
        sender_user_id: None,
        body: Body {
            text,
            attachments: Vec::new(),
        },
        status: MessageStatus::Queued,
        external_id: None,
    };
    let m = step.message(data, &mut c, new)?;
    step.save(data, c, None)?;
    Ok(step.done(m))
}

/// A repeat guard's window has passed: forget it (the timer's own change).
pub(super) fn forget_guard(ctx: &Ctx, key: &str, timer: &Timer) -> Result<Change<()>, DomainError> {
    let mut step = Step::new(ctx);
    let seen: Option<GuardRecord> = ctx.store.get(&guard_key(ctx, key))?;
    // A guard written again later (the key reused after expiry) has its own timer.
    if seen.is_some_and(|g| g.created_at + DEDUPE_WINDOW <= ctx.now) {
        step.writes.delete(guard_key(ctx, key));
    }
    timer.disarm(&mut step.writes);
    Ok(step.done(()))
}

/// Events of AI turns: the AI is the actor.
fn ai_origin() -> Origin {
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
const HISTORY: usize = 20;

/// The turn on customer message `m` of `c`, if the AI answers it: it is on for the
/// workspace and not paused on the conversation.
fn turn_job(
    data: &WorkspaceData,
    ctx: &Ctx,
    c: &Conversation,
    m: &Message,
) -> Result<Option<TurnJob>, DomainError> {
    if !data.ai_settings.enabled || c.ai_paused || !c.is_open() {
        return Ok(None);
    }
    let (email, phone) = super::contacts::reachable(data, c.contact_id);
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

fn prepare_turn(
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

/// Applies a turn: the lead first (whatever else happened), then a failure
/// (ai_turn.failed, nothing sent), or the handover and the reply. A conversation that was
/// paused or closed while the turn ran gets no reply.
fn apply_turn(
    data: &mut WorkspaceData,
    ctx: &Ctx,
    id: ConversationId,
    message: MessageId,
    outcome: TurnOutcome,
) -> Result<Change<TurnApplied>, DomainError> {
    let mut c = found(data, id)?.clone();
    let mut step = Step::new(ctx);
    if let Some(lead) = outcome.lead {
        let captured = super::contacts::capture_lead(
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
    if c.ai_paused || !c.is_open() {
        return Ok(step.done(applied));
    }
    if let Some(summary) = outcome.handover {
        let contact = data.contacts.get(c.contact_id);
        let h = Handover {
            id: HandoverId(ctx.next_id()?),
            conversation_id: c.id,
            contact_id: c.contact_id,
            status: HandoverStatus::Requested,
            summary,
            customer_name: contact
                .as_ref()
                .and_then(|k| super::contacts::view(data, k).name),
            customer_phone: contact.and_then(|k| k.phone.clone()),
            requested_at: ctx.now,
            resolved_at: None,
            resolved_by: None,
        };
        let event = ("handover.requested", "handover", h.id);
        step.put_announced(ctx.key(HANDOVER, h.id.get()), &h, event)?;
        data.conversations.remember_handover(h);
        if c.pause_ai(AiPauseReason::Handover, *ctx.now) {
            step.announce("conversation.ai_paused", &c);
        }
        applied.handover = true;
    }
    if let Some(text) = outcome.reply {
        let m = step.message(data, &mut c, NewMessage::from_ai(text))?;
        step.ai_replied = true;
        applied.reply = Some(m);
    }
    step.save(data, c, None)?;
    Ok(step.done(applied))
}

/// A conversation timer is due: the follow-up goes out once, or the quiet conversation
/// closes (closed_by `auto`). A timer the conversation no longer expects (it was re-armed,
/// or the conversation changed) is only disarmed.
pub(super) fn timer_due(
    data: &mut WorkspaceData,
    ctx: &Ctx,
    timer: &Timer,
) -> Option<Result<Change<()>, DomainError>> {
    let (id, kind) = TimerKind::parse(&timer.name)?;
    Some(fire(data, ctx, timer, id, kind))
}

fn fire(
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

fn create(
    data: &mut WorkspaceData,
    ctx: &Ctx,
    caller: &Caller,
    contact_id: ContactId,
    channel: Channel,
    text: Option<String>,
) -> Result<Change<Conversation>, DomainError> {
    let contact = data.contacts.named(contact_id)?;
    let mut step = Step::new(ctx);
    let mut c = Conversation::new(ConversationId(ctx.next_id()?), contact, channel, *ctx.now);
    step.announce("conversation.created", &c);
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

fn close(
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
fn close_as(
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
    let closed = step.save(data, c.clone(), Some("conversation.closed"))?;
    if lifted {
        c.resume_ai(*ctx.now);
        let resumed = step.save(data, c.clone(), Some("conversation.ai_resumed"))?;
        return Ok(step.done(resumed));
    }
    Ok(step.done(closed))
}

/// A change of state that the conversation's own rule allows (`apply` answers true) or
/// refuses (409 with `refused`), announced as `event`.
fn transition(
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

fn reopen(
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

fn assign(
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

fn pause(
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

fn resume(
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
fn newest_page<T: serde::de::DeserializeOwned>(
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

fn list_messages(
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
fn team_reply(
    data: &mut WorkspaceData,
    ctx: &Ctx,
    caller: &Caller,
    id: ConversationId,
    body: Body,
) -> Result<Change<Message>, DomainError> {
    let mut c = found(data, id)?.clone();
    let mut step = Step::new(ctx);
    if !c.is_open() {
        c.reopen(*ctx.now);
        step.announce("conversation.reopened", &c);
    }
    if c.pause_ai(AiPauseReason::Takeover, *ctx.now) {
        step.announce("conversation.ai_paused", &c);
    }
    step.resolve_open_handover(data, c.id, caller.resolver())?;
    let m = step.message(data, &mut c, NewMessage::from_team(caller, body))?;
    step.save(data, c, None)?;
    Ok(step.done(m))
}

fn list_comments(
    data: &WorkspaceData,
    ctx: &Ctx,
    id: ConversationId,
    page: PageRequest,
) -> Result<Page<Comment>, DomainError> {
    found(data, id)?;
    newest_page(ctx, &comment_prefix(ctx.workspace, id), page)
}

fn add_comment(
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
fn feedback(
    data: &mut WorkspaceData,
    ctx: &Ctx,
    caller: &Caller,
    id: ConversationId,
    message: MessageId,
    rating: Rating,
    comment: Option<String>,
) -> Result<Change<Feedback>, DomainError> {
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
    Ok(step.done(fb))
}

fn resolve_handover(
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

/// Moves the conversations and handovers of a merged contact to the primary (inside the
/// merge's batch; contact.merged covers them, so no events of their own).
pub(super) fn reassign(
    data: &mut WorkspaceData,
    ctx: &Ctx,
    from: ContactId,
    to: ContactId,
    writes: &mut Batch,
) -> Result<(), DomainError> {
    let moved: Vec<Conversation> = data
        .conversations
        .by_id
        .values()
        .filter(|c| c.contact_id == from)
        .cloned()
        .collect();
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
pub(super) fn erase_of_contact(
    data: &mut WorkspaceData,
    ctx: &Ctx,
    contact: ContactId,
    writes: &mut Batch,
) -> Result<(), DomainError> {
    let convs = &mut data.conversations;
    let erased: Vec<(ConversationId, Channel)> = convs
        .by_id
        .values()
        .filter(|c| c.contact_id == contact)
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

#[cfg(test)]
mod tests {
    use super::*;

    fn conv(id: u64, contact: u64, channel: Channel) -> Conversation {
        Conversation::new(ConversationId(id), ContactId(contact), channel, Utc::now())
    }

    #[test]
    fn the_latest_conversation_of_a_contact_and_channel_is_the_highest_id() {
        let mut cs = Conversations::default();
        cs.remember(conv(5, 1, Channel::Api));
        cs.remember(conv(9, 1, Channel::Api));
        cs.remember(conv(7, 1, Channel::Api));
        cs.remember(conv(8, 1, Channel::Sms));
        assert_eq!(
            cs.latest_of(ContactId(1), Channel::Api).unwrap().id,
            ConversationId(9)
        );
        assert_eq!(
            cs.latest_of(ContactId(1), Channel::Sms).unwrap().id,
            ConversationId(8)
        );
        assert!(cs.latest_of(ContactId(2), Channel::Api).is_none());
    }

    #[test]
    fn filters_combine() {
        let mut c = conv(1, 3, Channel::Sms);
        c.ai_paused = true;
        let f = ConversationFilter {
            contact_id: Some(ContactId(3)),
            ai_paused: Some(true),
            ..Default::default()
        };
        assert!(f.keeps(&c));
        let other = ConversationFilter {
            channel: Some(Channel::Api),
            ..f
        };
        assert!(!other.keeps(&c));
    }
}
