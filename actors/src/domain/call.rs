//! Calls reported by the workspace's telephony integration: who called whom, how it ended,
//! and what was said (summary, transcripts, recording).

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::contact::phone;
use super::document::https_url;
use super::error::Checks;
use super::{text, DomainError};
use crate::clock::Timestamp;
use crate::ids::{CallId, ContactId};

pub const MAX_DURATION_SECONDS: i64 = 86_400;
pub const MAX_SUMMARY: usize = 10_000;
pub const MAX_TRANSCRIPT: usize = 100_000;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum CallDirection {
    Inbound,
    Outbound,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum CallOutcome {
    Completed,
    Missed,
    Voicemail,
}

impl CallOutcome {
    /// The one event a call of this outcome emits.
    pub fn event_type(self) -> &'static str {
        match self {
            CallOutcome::Completed => "call.ended",
            CallOutcome::Missed => "call.missed",
            CallOutcome::Voicemail => "call.voicemail_received",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct Call {
    pub id: CallId,
    pub direction: CallDirection,
    /// A contact detail in webhooks.
    pub from_number: String,
    /// A contact detail in webhooks.
    pub to_number: String,
    pub contact_id: ContactId,
    pub outcome: CallOutcome,
    pub started_at: Timestamp,
    pub duration_seconds: u32,
    /// Content in webhooks, as are both transcripts and the recording.
    pub summary: Option<String>,
    pub transcript: Option<String>,
    pub transcript_text: Option<String>,
    pub recording_url: Option<String>,
    pub created_at: Timestamp,
}

impl Call {
    /// The number of the other party: the caller of an inbound call, the callee of an
    /// outbound one.
    pub fn customer_number(&self) -> &str {
        match self.direction {
            CallDirection::Inbound => &self.from_number,
            CallDirection::Outbound => &self.to_number,
        }
    }
}

/// Body of POST /calls.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NewCallInput {
    pub direction: CallDirection,
    #[schema(
        min_length = 3,
        max_length = 50,
        pattern = r"^[ +().-]*[0-9][ +().-]*[0-9][ +().-]*[0-9][0-9 +().-]*$"
    )]
    pub from_number: String,
    #[schema(
        min_length = 3,
        max_length = 50,
        pattern = r"^[ +().-]*[0-9][ +().-]*[0-9][ +().-]*[0-9][0-9 +().-]*$"
    )]
    pub to_number: String,
    /// The contact; when absent, matched by the customer's number (inbound: from_number,
    /// outbound: to_number) or created.
    #[serde(default)]
    pub contact_id: Option<ContactId>,
    pub outcome: CallOutcome,
    /// ISO 8601 with an offset.
    #[schema(format = DateTime)]
    pub started_at: String,
    #[serde(default)]
    #[schema(minimum = 0, maximum = 86400)]
    pub duration_seconds: Option<i64>,
    #[serde(default)]
    #[schema(max_length = 10000)]
    pub summary: Option<String>,
    #[serde(default)]
    #[schema(max_length = 100000)]
    pub transcript: Option<String>,
    #[serde(default)]
    #[schema(max_length = 100000)]
    pub transcript_text: Option<String>,
    #[serde(default)]
    #[schema(
        max_length = 2048,
        pattern = r"^https://[A-Za-z0-9.-]+(:(6553[0-5]|655[0-2][0-9]|65[0-4][0-9]{2}|6[0-4][0-9]{3}|[1-5][0-9]{4}|[0-9]{1,4}))?([/?#][^\s\x00-\x1f\x7f-\x9f]*)?$"
    )]
    pub recording_url: Option<String>,
}

/// A call to record, checked field by field.
#[derive(Debug, Clone, PartialEq)]
pub struct NewCall {
    pub direction: CallDirection,
    pub from_number: String,
    pub to_number: String,
    pub contact_id: Option<ContactId>,
    pub outcome: CallOutcome,
    pub started_at: DateTime<Utc>,
    pub duration_seconds: u32,
    pub summary: Option<String>,
    pub transcript: Option<String>,
    pub transcript_text: Option<String>,
    pub recording_url: Option<String>,
}

impl NewCall {
    pub fn parse(input: NewCallInput) -> Result<Self, DomainError> {
        let mut checks = Checks::new();
        let from_number = checks.take("from_number", phone(&input.from_number));
        let to_number = checks.take("to_number", phone(&input.to_number));
        let started_at = checks.take(
            "started_at",
            crate::clock::parse_client_time(&input.started_at),
        );
        let duration = input.duration_seconds.unwrap_or(0);
        if !(0..=MAX_DURATION_SECONDS).contains(&duration) {
            checks.fail(
                "duration_seconds",
                format!("must be 0 to {MAX_DURATION_SECONDS}"),
            );
        }
        let summary = checks.take("summary", text::optional(input.summary, MAX_SUMMARY));
        let transcript = checks.take(
            "transcript",
            text::optional(input.transcript, MAX_TRANSCRIPT),
        );
        let transcript_text = checks.take(
            "transcript_text",
            text::optional(input.transcript_text, MAX_TRANSCRIPT),
        );
        let recording_url = checks.take(
            "recording_url",
            input.recording_url.as_deref().map(https_url).transpose(),
        );
        checks.finish()?;
        match (
            from_number,
            to_number,
            started_at,
            summary,
            transcript,
            transcript_text,
            recording_url,
        ) {
            (
                Some(f),
                Some(t),
                Some(s),
                Some(summary),
                Some(transcript),
                Some(transcript_text),
                Some(recording_url),
            ) => Ok(Self {
                direction: input.direction,
                from_number: f,
                to_number: t,
                contact_id: input.contact_id,
                outcome: input.outcome,
                started_at: s,
                duration_seconds: duration as u32,
                summary,
                transcript,
                transcript_text,
                recording_url,
            }),
            _ => Err(DomainError::Internal("call parse".into())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input() -> NewCallInput {
        NewCallInput {
            direction: CallDirection::Inbound,
            from_number: "+1 555-0100".into(),
            to_number: "+15550999".into(),
            contact_id: None,
            outcome: CallOutcome::Missed,
            started_at: "2030-01-01T09:00:00Z".into(),
            duration_seconds: None,
            summary: None,
            transcript: None,
            transcript_text: None,
            recording_url: None,
        }
    }

    #[test]
    fn each_outcome_has_one_event() {
        assert_eq!(CallOutcome::Completed.event_type(), "call.ended");
        assert_eq!(CallOutcome::Missed.event_type(), "call.missed");
        assert_eq!(
            CallOutcome::Voicemail.event_type(),
            "call.voicemail_received"
        );
    }

    #[test]
    fn every_field_is_checked_with_its_path() {
        assert!(NewCall::parse(input()).is_ok());
        let mut bad = input();
        bad.from_number = "call me".into();
        bad.started_at = "yesterday".into();
        bad.duration_seconds = Some(86_401);
        bad.summary = Some("s".repeat(10_001));
        bad.recording_url = Some("http://rec.example/1".into());
        match NewCall::parse(bad) {
            Err(DomainError::Validation(e)) => {
                let paths: Vec<_> = e.iter().map(|e| e.path.as_str()).collect();
                assert_eq!(
                    paths,
                    [
                        "from_number",
                        "started_at",
                        "duration_seconds",
                        "summary",
                        "recording_url"
                    ]
                );
            }
            other => panic!("{other:?}"),
        }
    }
}
