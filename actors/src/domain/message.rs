//! Messages of a conversation, their attachments, and the team's feedback on AI messages.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::conversation::message_text;
use super::error::Checks;
use super::{text, DomainError};
use crate::clock::Timestamp;
use crate::ids::{ContactId, ConversationId, FeedbackId, MessageId, UserId};

pub const MAX_ATTACHMENTS: usize = 10;
pub const MAX_FEEDBACK_COMMENT: usize = 2_000;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Direction {
    /// From the customer.
    Inbound,
    Outbound,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum SenderType {
    Customer,
    Ai,
    Team,
    Campaign,
    Automation,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum MessageStatus {
    /// An inbound message.
    Received,
    /// Waiting for its channel.
    Queued,
    Sent,
    Failed,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum AttachmentType {
    Image,
    Document,
    Audio,
    Video,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Attachment {
    /// An https URL.
    pub url: String,
    #[serde(rename = "type")]
    pub kind: AttachmentType,
    #[serde(default)]
    pub name: Option<String>,
}

/// Checks attachments: at most ten, each an https URL of up to 2,048 characters with a
/// name of up to 255.
pub fn attachments(list: Vec<Attachment>, checks: &mut Checks, path: &str) -> Vec<Attachment> {
    if list.len() > MAX_ATTACHMENTS {
        checks.fail(
            path,
            format!("must hold at most {MAX_ATTACHMENTS} attachments"),
        );
    }
    for (i, a) in list.iter().enumerate() {
        let https = url::Url::parse(&a.url)
            .map(|u| u.scheme() == "https" && u.host_str().is_some())
            .unwrap_or(false);
        if !https || a.url.chars().count() > 2_048 {
            checks.fail(
                format!("{path}[{i}].url"),
                "must be an https URL of up to 2,048 characters",
            );
        }
        if let Some(name) = &a.name {
            if let Err(m) = text::bounded(name, 1, 255) {
                checks.fail(format!("{path}[{i}].name"), m);
            }
        }
    }
    list
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct Message {
    pub id: MessageId,
    pub conversation_id: ConversationId,
    pub contact_id: ContactId,
    pub direction: Direction,
    pub sender_type: SenderType,
    #[schema(value_type = Option<String>)]
    pub sender_user_id: Option<UserId>,
    /// Content. Empty when the message carries attachments only.
    pub text: String,
    pub attachments: Vec<Attachment>,
    pub status: MessageStatus,
    /// The id the sender gave it (`message_id` of the legacy route).
    pub external_id: Option<String>,
    /// Why sending failed.
    pub error: Option<String>,
    pub created_at: Timestamp,
}

/// Text and attachments of a message; at least one of them.
#[derive(Debug, Clone, PartialEq)]
pub struct Body {
    pub text: String,
    pub attachments: Vec<Attachment>,
}

impl Body {
    /// `text` may be absent when attachments are sent.
    pub fn parse(
        text: Option<String>,
        attachments: Vec<Attachment>,
        text_path: &str,
    ) -> Result<Self, DomainError> {
        let mut checks = Checks::new();
        let attachments = self::attachments(attachments, &mut checks, "attachments");
        let text = match text {
            Some(t) => checks.take(text_path, message_text(&t)).unwrap_or_default(),
            None if attachments.is_empty() => {
                checks.fail(text_path, "is required unless attachments are sent");
                String::new()
            }
            None => String::new(),
        };
        checks.finish()?;
        Ok(Self { text, attachments })
    }
}

/// Body of POST /conversations/:id/messages (a team reply).
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct TeamReplyInput {
    #[serde(default)]
    pub text: Option<String>,
    #[serde(default)]
    pub attachments: Vec<Attachment>,
}

impl TeamReplyInput {
    pub fn parse(self) -> Result<Body, DomainError> {
        Body::parse(self.text, self.attachments, "text")
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Rating {
    Up,
    Down,
}

/// A team member's rating of an AI message; one per message and credential.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct Feedback {
    pub id: FeedbackId,
    pub message_id: MessageId,
    pub conversation_id: ConversationId,
    #[schema(value_type = Option<String>)]
    pub user_id: Option<UserId>,
    pub rating: Rating,
    /// Content.
    pub comment: Option<String>,
    pub created_at: Timestamp,
}

/// Body of POST /conversations/:id/messages/:message_id/feedback.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct FeedbackInput {
    pub rating: Rating,
    #[serde(default)]
    pub comment: Option<String>,
}

impl FeedbackInput {
    pub fn parse(self) -> Result<(Rating, Option<String>), DomainError> {
        let comment = text::optional(self.comment, MAX_FEEDBACK_COMMENT)
            .map_err(|m| DomainError::invalid("comment", m))?;
        Ok((self.rating, comment))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn attachment(url: &str) -> Attachment {
        Attachment {
            url: url.into(),
            kind: AttachmentType::Image,
            name: None,
        }
    }

    #[test]
    fn a_body_needs_text_or_attachments() {
        assert!(Body::parse(None, vec![], "text").is_err());
        let only_file = Body::parse(None, vec![attachment("https://x.example/a.png")], "text");
        assert_eq!(only_file.unwrap().text, "");
        assert_eq!(
            Body::parse(Some("hi".into()), vec![], "text").unwrap().text,
            "hi"
        );
    }

    #[test]
    fn attachments_must_be_https_and_at_most_ten() {
        let err = Body::parse(
            Some("hi".into()),
            vec![attachment("http://x.example/a.png")],
            "text",
        )
        .unwrap_err();
        assert_eq!(
            err,
            DomainError::invalid(
                "attachments[0].url",
                "must be an https URL of up to 2,048 characters"
            )
        );
        let eleven = (0..11)
            .map(|i| attachment(&format!("https://x.example/{i}")))
            .collect();
        assert!(Body::parse(Some("hi".into()), eleven, "text").is_err());
    }

    #[test]
    fn feedback_comments_are_capped() {
        let long = FeedbackInput {
            rating: Rating::Down,
            comment: Some("x".repeat(2_001)),
        };
        assert!(long.parse().is_err());
    }
}
