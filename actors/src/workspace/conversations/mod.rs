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

mod actions;
mod contact_records;
mod inbound;
mod step;
mod timers;
mod turns;

use actions::*;
use inbound::*;
use step::*;
use timers::*;
use turns::*;

pub(in crate::workspace) use contact_records::{erase_of_contact, reassign};
pub(in crate::workspace) use inbound::{automation_message, campaign_message, forget_guard};
pub(in crate::workspace) use timers::timer_due;
pub use timers::ConversationTimers;
pub(in crate::workspace) use turns::turn_due;
pub use turns::{TurnApplied, TurnJob};

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
    /// The outcome of an AI turn on `message`, to apply. A background turn (one the actor
    /// started, not `/chat`'s) is applied once.
    ApplyTurn {
        id: ConversationId,
        message: MessageId,
        outcome: TurnOutcome,
        background: bool,
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
        /// The rating, and whether it is the credential's first on the message.
        reply: Reply<(bool, Feedback)>,
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
    /// Background AI turns of this actor's life whose outcome is not applied yet, by
    /// customer message (their timers are stored, see [`turns::PendingTurn`]).
    pending_turns: HashMap<MessageId, PendingTurn>,
    /// `/chat` turns running in their request's task, by customer message: kept in memory
    /// only, to know whether they were silenced meanwhile (see [`turns::ChatTurn`]).
    chat_turns: HashMap<MessageId, ChatTurn>,
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

    /// Every conversation of `contact`, oldest first.
    fn of_contact(&self, contact: ContactId) -> impl Iterator<Item = &Conversation> {
        self.by_id.values().filter(move |c| c.contact_id == contact)
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
            answer(reply, prepare_chat_turn(data, ctx, id, message))
        }
        M::ApplyTurn {
            id,
            message,
            outcome,
            background,
            reply,
        } => finish(
            reply,
            ai_origin(),
            apply_turn(data, ctx, id, message, outcome, background),
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
