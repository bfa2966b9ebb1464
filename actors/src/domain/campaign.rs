//! Broadcast campaigns: a text sent on one channel to an audience (contacts with any of
//! some tags, and in a stage when one is named), now or at a set time, at the workspace's
//! campaign rate; do-not-contact contacts are skipped and counted.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::contact::Channel;
use super::conversation::message_text;
use super::error::Checks;
use super::{text, DomainError};
use crate::clock::Timestamp;
use crate::ids::{CampaignId, ContactId, MessageId, StageId, TagId};

pub const MAX_NAME: usize = 100;
pub const MAX_AUDIENCE_TAGS: usize = 50;

/// How long after its campaign message a recipient's first inbound message counts as a
/// reply.
pub const REPLY_WINDOW: chrono::Duration = chrono::Duration::days(7);

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum CampaignStatus {
    Draft,
    Scheduled,
    Sending,
    Completed,
    Cancelled,
}

/// Who receives a campaign: contacts with any of `tags` (every contact when empty), and in
/// stage `stage_id` when it is set.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Audience {
    #[serde(default)]
    #[schema(value_type = Vec<u64>, max_items = 50)]
    pub tags: Vec<TagId>,
    #[serde(default)]
    #[schema(value_type = Option<u64>)]
    pub stage_id: Option<StageId>,
}

impl Audience {
    pub fn matches(&self, tags: &[TagId], stage: Option<StageId>) -> bool {
        let tagged = self.tags.is_empty() || self.tags.iter().any(|t| tags.contains(t));
        tagged && self.stage_id.is_none_or(|s| stage == Some(s))
    }
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct CampaignStats {
    /// Every matched contact, skipped ones included.
    pub recipients: u64,
    pub sent: u64,
    pub failed: u64,
    pub replied: u64,
    pub skipped_do_not_contact: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct Campaign {
    pub id: CampaignId,
    pub name: String,
    /// Content: the message every recipient receives.
    pub text: String,
    pub channel: Channel,
    pub audience: Audience,
    pub status: CampaignStatus,
    pub scheduled_at: Option<Timestamp>,
    pub stats: CampaignStats,
    /// Why a scheduled campaign was cancelled when it fired (`insufficient_credits`).
    pub error: Option<String>,
    pub created_at: Timestamp,
    pub started_at: Option<Timestamp>,
    pub completed_at: Option<Timestamp>,
}

impl Campaign {
    /// Recipients still to settle: queued, or sent to the channel and not yet answered.
    pub fn outstanding(&self) -> u64 {
        let s = &self.stats;
        s.recipients
            .saturating_sub(s.skipped_do_not_contact + s.sent + s.failed)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum RecipientStatus {
    Queued,
    Sent,
    Failed,
    Replied,
    Skipped,
    Cancelled,
}

impl RecipientStatus {
    pub fn parse(raw: &str) -> Result<Self, String> {
        serde_json::from_value(serde_json::Value::String(raw.to_string())).map_err(|_| {
            "must be one of queued, sent, failed, replied, skipped, cancelled".to_string()
        })
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct CampaignRecipient {
    pub campaign_id: CampaignId,
    pub contact_id: ContactId,
    pub status: RecipientStatus,
    pub message_id: Option<MessageId>,
    pub error: Option<String>,
    pub updated_at: Timestamp,
}

/// Body of POST /campaigns and PATCH /campaigns/{id}.
#[derive(Debug, Clone, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CampaignInput {
    /// Required on create.
    #[serde(default)]
    #[schema(min_length = 1, max_length = 100)]
    pub name: Option<String>,
    /// Required on create; 1 to 10,000 characters.
    #[serde(default)]
    #[schema(min_length = 1, max_length = 10000)]
    pub text: Option<String>,
    /// Required on create.
    #[serde(default)]
    #[schema(value_type = Option<Channel>)]
    pub channel: Option<String>,
    /// Every contact when absent.
    #[serde(default)]
    pub audience: Option<Audience>,
}

/// A checked create or change.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CampaignChange {
    pub name: Option<String>,
    pub text: Option<String>,
    pub channel: Option<Channel>,
    pub audience: Option<Audience>,
}

impl CampaignChange {
    pub fn parse(input: CampaignInput, creating: bool) -> Result<Self, DomainError> {
        let mut c = Checks::new();
        if creating {
            for (field, missing) in [
                ("name", input.name.is_none()),
                ("text", input.text.is_none()),
                ("channel", input.channel.is_none()),
            ] {
                if missing {
                    c.fail(field, "is required");
                }
            }
        }
        let name = input
            .name
            .and_then(|n| c.take("name", text::name(&n, MAX_NAME)));
        let body = input.text.and_then(|t| c.take("text", message_text(&t)));
        let channel = input
            .channel
            .and_then(|ch| c.take("channel", Channel::parse(&ch)));
        if let Some(a) = &input.audience {
            if a.tags.len() > MAX_AUDIENCE_TAGS {
                c.fail(
                    "audience.tags",
                    format!("must hold at most {MAX_AUDIENCE_TAGS} tags"),
                );
            }
        }
        let change = Self {
            name,
            text: body,
            channel,
            audience: input.audience,
        };
        if !creating && c.is_empty() && change == Self::default() {
            c.fail("", "send name, text, channel or audience");
        }
        c.finish()?;
        Ok(change)
    }
}

/// Body of POST /campaigns/{id}/send.
#[derive(Debug, Clone, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SendInput {
    /// When to send (ISO 8601, in the future); now when absent or null.
    #[serde(default)]
    #[schema(format = DateTime)]
    pub scheduled_at: Option<String>,
}

impl SendInput {
    /// The time to send at: None for now; a past time is refused.
    pub fn when(self, now: DateTime<Utc>) -> Result<Option<DateTime<Utc>>, DomainError> {
        let Some(raw) = self.scheduled_at else {
            return Ok(None);
        };
        let at = crate::clock::parse_client_time(&raw)
            .map_err(|_| DomainError::invalid("scheduled_at", "must be an ISO 8601 time"))?;
        if at <= now {
            return Err(DomainError::invalid(
                "scheduled_at",
                "must be in the future",
            ));
        }
        Ok(Some(at))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_audience_matches_any_tag_and_the_stage_when_set() {
        let (t1, t2, s) = (TagId(1), TagId(2), StageId(9));
        let everyone = Audience::default();
        assert!(everyone.matches(&[], None));
        let tagged = Audience {
            tags: vec![t1, t2],
            stage_id: None,
        };
        assert!(tagged.matches(&[t2], None));
        assert!(!tagged.matches(&[TagId(3)], Some(s)));
        let staged = Audience {
            tags: vec![t1],
            stage_id: Some(s),
        };
        assert!(staged.matches(&[t1], Some(s)));
        assert!(!staged.matches(&[t1], None), "tags AND stage");
        assert!(!staged.matches(&[], Some(s)));
    }

    #[test]
    fn a_campaign_needs_name_text_and_channel_on_create() {
        let err = CampaignChange::parse(CampaignInput::default(), true).unwrap_err();
        let text = format!("{err:?}");
        for field in ["name", "text", "channel"] {
            assert!(text.contains(field), "{text}");
        }
        assert!(CampaignChange::parse(CampaignInput::default(), false).is_err());
        let ok = CampaignChange::parse(
            CampaignInput {
                name: Some("Spring".into()),
                text: Some("20% off".into()),
                channel: Some("sms".into()),
                audience: None,
            },
            true,
        )
        .expect("valid");
        assert_eq!(ok.channel, Some(Channel::Sms));
    }

    #[test]
    fn a_send_time_must_be_in_the_future() {
        let now = Utc::now();
        let at = |s: &str| SendInput {
            scheduled_at: Some(s.into()),
        };
        assert!(at("2020-01-01T00:00:00Z").when(now).is_err());
        assert!(at("tomorrow").when(now).is_err());
        assert!(at("2999-01-01T00:00:00Z").when(now).unwrap().is_some());
        assert_eq!(SendInput::default().when(now).unwrap(), None);
        let precise = at("2999-01-01T00:00:00.987654321Z")
            .when(now)
            .unwrap()
            .unwrap();
        assert_eq!(
            precise.timestamp_subsec_nanos(),
            987_000_000,
            "as the timer key reads"
        );
    }
}
