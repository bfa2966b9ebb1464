//! Conversations: one thread between the workspace and one contact on one channel, with
//! its status, assignee, the AI's pause state, and the internal comments on it.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::contact::Channel;
use super::error::Checks;
use super::{text, DomainError};
use crate::clock::Timestamp;
use crate::ids::{ClosingNoteId, CommentId, ContactId, ConversationId, UserId};

/// The longest closing note text, comment and message text.
pub const MAX_CLOSING_TEXT: usize = 2_000;
pub const MAX_COMMENT: usize = 10_000;
/// The longest message text, in characters.
pub const MAX_MESSAGE_TEXT: usize = 10_000;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum ConversationStatus {
    Open,
    Closed,
}

/// Why the AI does not answer a conversation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum AiPauseReason {
    /// A team member replied.
    Takeover,
    /// The AI handed the conversation to a person.
    Handover,
    Spam,
    Schedule,
    Api,
}

impl AiPauseReason {
    /// Pauses that closing the conversation lifts, so that the next customer message is
    /// answered again.
    pub fn lifted_by_close(self) -> bool {
        matches!(self, AiPauseReason::Takeover | AiPauseReason::Handover)
    }
}

/// Who closed a conversation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum ClosedBy {
    Team,
    Api,
    Auto,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct Conversation {
    pub id: ConversationId,
    /// Follows contact merges.
    pub contact_id: ContactId,
    pub channel: Channel,
    pub status: ConversationStatus,
    #[schema(value_type = Option<String>)]
    pub assigned_to_user_id: Option<UserId>,
    pub ai_paused: bool,
    pub ai_paused_reason: Option<AiPauseReason>,
    pub closing_note_id: Option<ClosingNoteId>,
    /// Content: withheld from webhooks without include_content.
    pub closing_note_text: Option<String>,
    pub closed_by: Option<ClosedBy>,
    pub message_count: u64,
    pub last_message_at: Option<Timestamp>,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
    pub closed_at: Option<Timestamp>,
}

impl Conversation {
    pub fn new(
        id: ConversationId,
        contact_id: ContactId,
        channel: Channel,
        now: DateTime<Utc>,
    ) -> Self {
        Self {
            id,
            contact_id,
            channel,
            status: ConversationStatus::Open,
            assigned_to_user_id: None,
            ai_paused: false,
            ai_paused_reason: None,
            closing_note_id: None,
            closing_note_text: None,
            closed_by: None,
            message_count: 0,
            last_message_at: None,
            created_at: Timestamp(now),
            updated_at: Timestamp(now),
            closed_at: None,
        }
    }

    pub fn is_open(&self) -> bool {
        self.status == ConversationStatus::Open
    }

    /// Pauses the AI; false when it was already paused (the first reason stays).
    pub fn pause_ai(&mut self, reason: AiPauseReason, now: DateTime<Utc>) -> bool {
        if self.ai_paused {
            return false;
        }
        self.ai_paused = true;
        self.ai_paused_reason = Some(reason);
        self.updated_at = Timestamp(now);
        true
    }

    /// Resumes the AI; false when it was not paused.
    pub fn resume_ai(&mut self, now: DateTime<Utc>) -> bool {
        if !self.ai_paused {
            return false;
        }
        self.ai_paused = false;
        self.ai_paused_reason = None;
        self.updated_at = Timestamp(now);
        true
    }

    /// Closes it; the caller has checked it is open.
    pub fn close(&mut self, by: ClosedBy, note: ClosingNote, now: DateTime<Utc>) {
        self.status = ConversationStatus::Closed;
        self.closed_by = Some(by);
        self.closing_note_id = note.id;
        self.closing_note_text = note.text;
        self.closed_at = Some(Timestamp(now));
        self.updated_at = Timestamp(now);
    }

    /// Opens it again; the caller has checked it is closed.
    pub fn reopen(&mut self, now: DateTime<Utc>) {
        self.status = ConversationStatus::Open;
        self.closed_by = None;
        self.closed_at = None;
        self.closing_note_id = None;
        self.closing_note_text = None;
        self.updated_at = Timestamp(now);
    }

    /// Counts a new message.
    pub fn saw_message(&mut self, at: DateTime<Utc>) {
        self.message_count += 1;
        self.last_message_at = Some(Timestamp(at));
        self.updated_at = Timestamp(at);
    }
}

/// Body of POST /conversations.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NewConversationInput {
    pub contact_id: u64,
    #[schema(value_type = Channel)]
    pub channel: String,
    #[serde(default)]
    pub text: Option<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct NewConversation {
    pub contact_id: ContactId,
    pub channel: Channel,
    /// A first outbound message from the team.
    pub text: Option<String>,
}

impl NewConversation {
    pub fn parse(input: NewConversationInput) -> Result<Self, DomainError> {
        let mut checks = Checks::new();
        let channel = checks.take("channel", Channel::parse(&input.channel));
        let text = match input.text {
            None => Some(None),
            Some(t) => checks.take("text", message_text(&t).map(Some)),
        };
        checks.finish()?;
        match (channel, text) {
            (Some(channel), Some(text)) => Ok(Self {
                contact_id: ContactId(input.contact_id),
                channel,
                text,
            }),
            _ => Err(DomainError::Internal("conversation parse".into())),
        }
    }
}

/// Message text: 1 to 10,000 characters, not only white space.
pub fn message_text(raw: &str) -> Result<String, String> {
    if raw.trim().is_empty() {
        return Err("must not be empty".into());
    }
    text::bounded(raw, 1, MAX_MESSAGE_TEXT)?;
    Ok(raw.to_string())
}

/// How a conversation was closed: a closing note of the workspace, a free text, both, or
/// neither.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ClosingNote {
    pub id: Option<ClosingNoteId>,
    pub text: Option<String>,
}

/// Body of POST /conversations/:id/close.
#[derive(Debug, Clone, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CloseInput {
    #[serde(default)]
    pub closing_note_id: Option<u64>,
    #[serde(default)]
    pub closing_note_text: Option<String>,
}

impl ClosingNote {
    /// The note id is checked against the workspace's closing notes by the caller.
    pub fn parse(input: CloseInput) -> Result<Self, DomainError> {
        let mut checks = Checks::new();
        let text = checks.take(
            "closing_note_text",
            text::optional(input.closing_note_text, MAX_CLOSING_TEXT),
        );
        checks.finish()?;
        Ok(Self {
            id: input.closing_note_id.map(ClosingNoteId),
            text: text.flatten(),
        })
    }
}

/// Body of POST /conversations/:id/ai/pause.
#[derive(Debug, Clone, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PauseInput {
    #[serde(default)]
    pub reason: Option<AiPauseReason>,
}

/// An internal note on a conversation; customers never see it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct Comment {
    pub id: CommentId,
    pub conversation_id: ConversationId,
    #[schema(value_type = Option<String>)]
    pub author_user_id: Option<UserId>,
    /// Content.
    pub body: String,
    pub created_at: Timestamp,
}

/// Body of POST /conversations/:id/comments.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NewCommentInput {
    #[schema(min_length = 1, max_length = 10_000, pattern = "\\S")]
    pub body: String,
}

impl NewCommentInput {
    pub fn parse(self) -> Result<String, DomainError> {
        if self.body.trim().is_empty() {
            return Err(DomainError::invalid("body", "must not be empty"));
        }
        text::bounded(&self.body, 1, MAX_COMMENT).map_err(|m| DomainError::invalid("body", m))?;
        Ok(self.body)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn conv() -> Conversation {
        Conversation::new(ConversationId(1), ContactId(2), Channel::Api, Utc::now())
    }

    #[test]
    fn a_second_pause_keeps_the_first_reason_and_says_nothing_changed() {
        let mut c = conv();
        assert!(c.pause_ai(AiPauseReason::Handover, Utc::now()));
        assert!(!c.pause_ai(AiPauseReason::Takeover, Utc::now()));
        assert_eq!(c.ai_paused_reason, Some(AiPauseReason::Handover));
        assert!(c.resume_ai(Utc::now()));
        assert!(!c.resume_ai(Utc::now()));
    }

    #[test]
    fn only_takeover_and_handover_pauses_are_lifted_by_closing() {
        assert!(AiPauseReason::Takeover.lifted_by_close());
        assert!(AiPauseReason::Handover.lifted_by_close());
        for r in [
            AiPauseReason::Spam,
            AiPauseReason::Schedule,
            AiPauseReason::Api,
        ] {
            assert!(!r.lifted_by_close());
        }
    }

    #[test]
    fn closing_and_reopening_clear_each_other() {
        let mut c = conv();
        let note = ClosingNote {
            id: Some(ClosingNoteId(9)),
            text: Some("done".into()),
        };
        c.close(ClosedBy::Api, note, Utc::now());
        assert!(!c.is_open());
        assert_eq!(c.closed_by, Some(ClosedBy::Api));
        c.reopen(Utc::now());
        assert!(c.is_open());
        assert_eq!(
            (c.closed_by, c.closed_at, c.closing_note_id),
            (None, None, None)
        );
    }

    #[test]
    fn new_conversation_checks_channel_and_text_together() {
        let err = NewConversation::parse(NewConversationInput {
            contact_id: 1,
            channel: "fax".into(),
            text: Some("   ".into()),
        })
        .unwrap_err();
        match err {
            DomainError::Validation(e) => {
                let paths: Vec<_> = e.iter().map(|e| e.path.as_str()).collect();
                assert_eq!(paths, ["channel", "text"]);
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn message_text_is_one_to_ten_thousand_characters() {
        assert!(message_text("hi").is_ok());
        assert!(message_text("").is_err());
        assert!(message_text(&"é".repeat(10_000)).is_ok());
        assert!(message_text(&"é".repeat(10_001)).is_err());
    }

    #[test]
    fn a_closing_text_over_two_thousand_characters_is_refused() {
        let long = CloseInput {
            closing_note_id: None,
            closing_note_text: Some("x".repeat(2_001)),
        };
        assert!(ClosingNote::parse(long).is_err());
    }
}
