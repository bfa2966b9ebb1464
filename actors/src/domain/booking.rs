//! Bookings: a contact's appointment for a service at a time, with its status, the files
//! shared for it, and automatic reminders before it starts.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::ai_settings::Span;
use super::document::{Document, DocumentInput, NewDocument};
use super::error::Checks;
use super::{text, DomainError, Patch};
use crate::clock::{parse_client_time, Timestamp};
use crate::ids::{BookingId, ContactId, ConversationId};

pub const MAX_SERVICE: usize = 200;
pub const MAX_LOCATION: usize = 500;
pub const MAX_NOTES: usize = 2_000;
pub const MAX_SUMMARY: usize = 10_000;
pub const MAX_REASON: usize = 500;
pub const MIN_DURATION: i64 = 5;
pub const MAX_DURATION: i64 = 1_440;
/// Files in one request, and on one booking.
pub const MAX_DOCUMENTS_PER_REQUEST: usize = 20;
pub const MAX_DOCUMENTS: usize = 100;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum BookingStatus {
    Pending,
    Confirmed,
    Completed,
    Cancelled,
    NoShow,
}

impl BookingStatus {
    /// Still ahead: appointment reminders go out for these.
    pub fn upcoming(self) -> bool {
        matches!(self, BookingStatus::Pending | BookingStatus::Confirmed)
    }
}

/// A booking as stored.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Booking {
    pub id: BookingId,
    pub contact_id: ContactId,
    pub conversation_id: Option<ConversationId>,
    pub service: String,
    pub starts_at: Timestamp,
    pub duration_minutes: u32,
    pub location: Option<String>,
    pub notes: Option<String>,
    pub status: BookingStatus,
    pub documents: Vec<Document>,
    pub conversation_summary: Option<String>,
    pub cancel_reason: Option<String>,
    /// Lead times whose reminder went out for the current `starts_at`.
    pub reminded: Vec<Span>,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
}

/// A booking as answered and announced: the stored fields plus the contact's current
/// name and phone.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct BookingView {
    pub id: BookingId,
    pub contact_id: ContactId,
    pub conversation_id: Option<ConversationId>,
    pub service: String,
    pub starts_at: Timestamp,
    pub duration_minutes: u32,
    pub location: Option<String>,
    pub notes: Option<String>,
    pub status: BookingStatus,
    /// Content: withheld from webhooks without `include_content`.
    pub documents: Vec<Document>,
    /// Content: withheld from webhooks without `include_content`.
    pub conversation_summary: Option<String>,
    pub cancel_reason: Option<String>,
    /// The contact's current name (read-only; a contact detail in webhooks).
    pub customer_name: Option<String>,
    /// The contact's current phone (read-only; a contact detail in webhooks).
    pub customer_phone: Option<String>,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
}

impl Booking {
    pub fn view(
        &self,
        customer_name: Option<String>,
        customer_phone: Option<String>,
    ) -> BookingView {
        BookingView {
            id: self.id,
            contact_id: self.contact_id,
            conversation_id: self.conversation_id,
            service: self.service.clone(),
            starts_at: self.starts_at,
            duration_minutes: self.duration_minutes,
            location: self.location.clone(),
            notes: self.notes.clone(),
            status: self.status,
            documents: self.documents.clone(),
            conversation_summary: self.conversation_summary.clone(),
            cancel_reason: self.cancel_reason.clone(),
            customer_name,
            customer_phone,
            created_at: self.created_at,
            updated_at: self.updated_at,
        }
    }
}

/// Body of POST /bookings.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NewBookingInput {
    pub contact_id: ContactId,
    /// One of the contact's conversations.
    #[serde(default)]
    pub conversation_id: Option<ConversationId>,
    #[schema(min_length = 1, max_length = 200, pattern = "\\S")]
    pub service: String,
    /// ISO 8601 with an offset.
    #[schema(format = DateTime)]
    pub starts_at: String,
    #[schema(minimum = 5, maximum = 1440)]
    pub duration_minutes: i64,
    #[serde(default)]
    #[schema(max_length = 500)]
    pub location: Option<String>,
    #[serde(default)]
    #[schema(max_length = 2000)]
    pub notes: Option<String>,
    /// `pending` (the default) or `confirmed`.
    #[serde(default)]
    pub status: Option<BookingStatus>,
    #[serde(default)]
    #[schema(max_length = 10000)]
    pub conversation_summary: Option<String>,
}

/// Body of PATCH /bookings/{id}: at least one field; null clears the optional ones.
#[derive(Debug, Clone, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct BookingPatchInput {
    #[serde(default)]
    #[schema(value_type = Option<u64>)]
    pub conversation_id: Patch<ConversationId>,
    #[serde(default)]
    #[schema(min_length = 1, max_length = 200, pattern = "\\S")]
    pub service: Option<String>,
    /// A new time reschedules the booking.
    #[serde(default)]
    #[schema(format = DateTime)]
    pub starts_at: Option<String>,
    #[serde(default)]
    #[schema(minimum = 5, maximum = 1440)]
    pub duration_minutes: Option<i64>,
    #[serde(default)]
    #[schema(value_type = Option<String>, max_length = 500)]
    pub location: Patch<String>,
    #[serde(default)]
    #[schema(value_type = Option<String>, max_length = 2000)]
    pub notes: Patch<String>,
    #[serde(default)]
    #[schema(value_type = Option<String>, max_length = 10000)]
    pub conversation_summary: Patch<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct NewBooking {
    pub contact_id: ContactId,
    pub conversation_id: Option<ConversationId>,
    pub service: String,
    pub starts_at: DateTime<Utc>,
    pub duration_minutes: u32,
    pub location: Option<String>,
    pub notes: Option<String>,
    pub status: BookingStatus,
    pub conversation_summary: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct BookingChange {
    pub conversation_id: Patch<ConversationId>,
    pub service: Option<String>,
    pub starts_at: Option<DateTime<Utc>>,
    pub duration_minutes: Option<u32>,
    pub location: Patch<String>,
    pub notes: Patch<String>,
    pub conversation_summary: Patch<String>,
}

fn duration(minutes: i64) -> Result<u32, String> {
    if (MIN_DURATION..=MAX_DURATION).contains(&minutes) {
        Ok(minutes as u32)
    } else {
        Err(format!("must be {MIN_DURATION} to {MAX_DURATION} minutes"))
    }
}

/// A patched optional text: Set is checked (empty clears), Keep and Clear stay.
fn patched_text(checks: &mut Checks, path: &str, p: Patch<String>, max: usize) -> Patch<String> {
    match p {
        Patch::Set(v) => match checks.take(path, text::optional(Some(v), max)) {
            Some(Some(v)) => Patch::Set(v),
            _ => Patch::Clear,
        },
        other => other,
    }
}

impl NewBooking {
    pub fn parse(input: NewBookingInput) -> Result<Self, DomainError> {
        let mut checks = Checks::new();
        let service = checks.take("service", text::name(&input.service, MAX_SERVICE));
        let starts_at = checks.take("starts_at", parse_client_time(&input.starts_at));
        let duration_minutes = checks.take("duration_minutes", duration(input.duration_minutes));
        let location = checks.take("location", text::optional(input.location, MAX_LOCATION));
        let notes = checks.take("notes", text::optional(input.notes, MAX_NOTES));
        let summary = checks.take(
            "conversation_summary",
            text::optional(input.conversation_summary, MAX_SUMMARY),
        );
        let status = input.status.unwrap_or(BookingStatus::Pending);
        if !status.upcoming() {
            checks.fail("status", "a new booking is pending or confirmed");
        }
        checks.finish()?;
        match (
            service,
            starts_at,
            duration_minutes,
            location,
            notes,
            summary,
        ) {
            (
                Some(service),
                Some(starts_at),
                Some(duration_minutes),
                Some(location),
                Some(notes),
                Some(conversation_summary),
            ) => Ok(Self {
                contact_id: input.contact_id,
                conversation_id: input.conversation_id,
                service,
                starts_at,
                duration_minutes,
                location,
                notes,
                status,
                conversation_summary,
            }),
            _ => Err(DomainError::Internal("booking parse".into())),
        }
    }
}

impl BookingChange {
    pub fn parse(input: BookingPatchInput) -> Result<Self, DomainError> {
        let mut checks = Checks::new();
        let service = input
            .service
            .and_then(|s| checks.take("service", text::name(&s, MAX_SERVICE)));
        let starts_at = input
            .starts_at
            .and_then(|s| checks.take("starts_at", parse_client_time(&s)));
        let duration_minutes = input
            .duration_minutes
            .and_then(|m| checks.take("duration_minutes", duration(m)));
        let change = Self {
            conversation_id: input.conversation_id,
            service,
            starts_at,
            duration_minutes,
            location: patched_text(&mut checks, "location", input.location, MAX_LOCATION),
            notes: patched_text(&mut checks, "notes", input.notes, MAX_NOTES),
            conversation_summary: patched_text(
                &mut checks,
                "conversation_summary",
                input.conversation_summary,
                MAX_SUMMARY,
            ),
        };
        if checks.is_empty() && change == Self::default() {
            checks.fail(
                "",
                "send service, starts_at, duration_minutes, location, notes, conversation_id or conversation_summary",
            );
        }
        checks.finish()?;
        Ok(change)
    }
}

/// Body of PUT /bookings/{id}/status.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct BookingStatusInput {
    pub status: BookingStatus,
    /// With `cancelled` only, as in POST /bookings/{id}/cancel.
    #[serde(default)]
    #[schema(max_length = 500)]
    pub reason: Option<String>,
}

impl BookingStatusInput {
    /// The status, and for `cancelled` the checked reason (a reason with another status
    /// is refused).
    pub fn parse(self) -> Result<(BookingStatus, Option<String>), DomainError> {
        if self.status != BookingStatus::Cancelled && self.reason.is_some() {
            return Err(DomainError::invalid(
                "reason",
                "goes only with status cancelled",
            ));
        }
        let reason = CancelInput {
            reason: self.reason,
        }
        .parse()?;
        Ok((self.status, reason))
    }
}

/// Body of POST /bookings/{id}/cancel.
#[derive(Debug, Clone, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CancelInput {
    #[serde(default)]
    #[schema(max_length = 500)]
    pub reason: Option<String>,
}

impl CancelInput {
    pub fn parse(self) -> Result<Option<String>, DomainError> {
        text::optional(self.reason, MAX_REASON).map_err(|m| DomainError::invalid("reason", m))
    }
}

/// Body of POST /bookings/{id}/documents.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct DocumentsInput {
    #[schema(min_items = 1, max_items = 20)]
    pub documents: Vec<DocumentInput>,
}

impl DocumentsInput {
    pub fn parse(self) -> Result<Vec<NewDocument>, DomainError> {
        if self.documents.is_empty() || self.documents.len() > MAX_DOCUMENTS_PER_REQUEST {
            return Err(DomainError::invalid(
                "documents",
                format!("must hold 1 to {MAX_DOCUMENTS_PER_REQUEST} files"),
            ));
        }
        let mut checks = Checks::new();
        let docs: Vec<Option<NewDocument>> = self
            .documents
            .into_iter()
            .enumerate()
            .map(|(i, d)| NewDocument::parse_at(&mut checks, &format!("documents[{i}]."), d))
            .collect();
        checks.finish()?;
        Ok(docs.into_iter().flatten().collect())
    }
}

/// The text of an appointment reminder.
pub fn reminder_text(service: &str, starts_at: DateTime<Utc>) -> String {
    format!(
        "Reminder: {service} on {}.",
        starts_at.format("%Y-%m-%d %H:%M UTC")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input() -> NewBookingInput {
        NewBookingInput {
            contact_id: ContactId(1),
            conversation_id: None,
            service: "Haircut".into(),
            starts_at: "2030-01-02T10:00:00+02:00".into(),
            duration_minutes: 30,
            location: None,
            notes: None,
            status: None,
            conversation_summary: None,
        }
    }

    #[test]
    fn a_booking_starts_pending_in_utc_and_checks_each_field() {
        let b = NewBooking::parse(input()).unwrap();
        assert_eq!(b.status, BookingStatus::Pending);
        assert_eq!(b.starts_at.to_rfc3339(), "2030-01-02T08:00:00+00:00");
        let mut bad = input();
        bad.service = " ".into();
        bad.duration_minutes = 4;
        bad.starts_at = "soon".into();
        bad.status = Some(BookingStatus::Completed);
        match NewBooking::parse(bad) {
            Err(DomainError::Validation(e)) => {
                let paths: Vec<_> = e.iter().map(|e| e.path.as_str()).collect();
                assert_eq!(
                    paths,
                    ["service", "starts_at", "duration_minutes", "status"]
                );
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn documents_need_https_urls_and_one_to_twenty_files() {
        let doc = |url: &str| DocumentInput {
            url: url.into(),
            name: None,
            content_type: None,
        };
        assert!(DocumentsInput {
            documents: vec![doc("https://files.example/a.pdf")]
        }
        .parse()
        .is_ok());
        match (DocumentsInput {
            documents: vec![
                doc("https://ok.example/a"),
                doc("http://files.example/a.pdf"),
            ],
        })
        .parse()
        {
            Err(DomainError::Validation(e)) => assert_eq!(e[0].path, "documents[1].url"),
            other => panic!("{other:?}"),
        }
        assert!(DocumentsInput { documents: vec![] }.parse().is_err());
        assert!(DocumentsInput {
            documents: vec![doc("https://a.example/x"); 21]
        }
        .parse()
        .is_err());
    }

    #[test]
    fn times_keep_the_milliseconds_of_the_wire_so_timer_keys_match_them() {
        let t = parse_client_time("2030-01-02T10:30:00.123456789Z").unwrap();
        assert_eq!(t.timestamp_subsec_nanos(), 123_000_000);
    }

    #[test]
    fn the_reminder_text_names_the_service_and_the_time_in_utc() {
        let at = parse_client_time("2030-01-02T10:30:00+02:00").unwrap();
        assert_eq!(
            reminder_text("Haircut", at),
            "Reminder: Haircut on 2030-01-02 08:30 UTC."
        );
    }
}
