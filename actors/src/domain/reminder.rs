//! Reminders: a note to the team, due at a time, for up to 20 members. It fires once when
//! due (its assignees are notified) and is closed when done.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::error::Checks;
use super::{text, DomainError, Patch};
use crate::clock::Timestamp;
use crate::ids::{ContactId, ConversationId, EndpointId, NotificationId, ReminderId, UserId};

pub const MAX_TITLE: usize = 200;
pub const MAX_NOTE: usize = 2_000;
pub const MAX_ASSIGNEES: usize = 20;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum ReminderStatus {
    /// Waiting for its due time.
    Open,
    /// Due time passed; the assignees were notified.
    Fired,
    /// Closed by a team member.
    Done,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct Reminder {
    pub id: ReminderId,
    /// Content: withheld from webhooks without `include_content`.
    pub title: String,
    /// Content: withheld from webhooks without `include_content`.
    pub note: Option<String>,
    pub due_at: Timestamp,
    pub assignee_user_ids: Vec<UserId>,
    pub contact_id: Option<ContactId>,
    pub conversation_id: Option<ConversationId>,
    pub status: ReminderStatus,
    pub created_at: Timestamp,
    pub fired_at: Option<Timestamp>,
    pub closed_at: Option<Timestamp>,
}

/// What a person is told when a reminder for them fires.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct ReminderNotification {
    pub id: NotificationId,
    pub user_id: UserId,
    /// Always `reminder_fired` today.
    pub kind: NotificationKind,
    pub reminder_id: ReminderId,
    pub created_at: Timestamp,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum NotificationKind {
    ReminderFired,
    /// The service disabled a webhook endpoint (410, or failing for the disable window);
    /// told to the workspace owner.
    WebhookEndpointDisabled,
}

/// A notification as GET /notifications answers it: a reminder that fired (`reminder_id`)
/// or, for the workspace owner, an endpoint the service disabled (`endpoint_id`, `reason`).
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct NotificationView {
    pub id: u64,
    pub user_id: UserId,
    pub kind: NotificationKind,
    pub reminder_id: Option<ReminderId>,
    #[schema(value_type = Option<String>)]
    pub endpoint_id: Option<EndpointId>,
    pub reason: Option<String>,
    pub created_at: Timestamp,
}

impl ReminderNotification {
    pub fn view(&self) -> NotificationView {
        NotificationView {
            id: self.id.get(),
            user_id: self.user_id.clone(),
            kind: self.kind,
            reminder_id: Some(self.reminder_id),
            endpoint_id: None,
            reason: None,
            created_at: self.created_at,
        }
    }
}

/// Body of POST /reminders.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NewReminderInput {
    #[schema(min_length = 1, max_length = 200, pattern = "\\S")]
    pub title: String,
    #[serde(default)]
    #[schema(max_length = 2000)]
    pub note: Option<String>,
    /// ISO 8601 with an offset, in the future.
    #[schema(format = DateTime)]
    pub due_at: String,
    /// Members of the workspace (1-20). Defaults to the caller for a person's token;
    /// required for API keys.
    #[serde(default)]
    #[schema(min_items = 1, max_items = 20)]
    pub assignee_user_ids: Option<Vec<String>>,
    #[serde(default)]
    pub contact_id: Option<ContactId>,
    /// One of the contact's conversations when contact_id is given too; sets contact_id
    /// when it is not.
    #[serde(default)]
    pub conversation_id: Option<ConversationId>,
}

/// Body of PATCH /reminders/{id}: every field optional; null clears note, contact_id and
/// conversation_id.
#[derive(Debug, Clone, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ReminderPatchInput {
    #[serde(default)]
    #[schema(min_length = 1, max_length = 200, pattern = "\\S")]
    pub title: Option<String>,
    #[serde(default)]
    #[schema(value_type = Option<String>, max_length = 2000)]
    pub note: Patch<String>,
    /// A new due time re-arms a fired reminder.
    #[serde(default)]
    #[schema(format = DateTime)]
    pub due_at: Option<String>,
    #[serde(default)]
    #[schema(min_items = 1, max_items = 20)]
    pub assignee_user_ids: Option<Vec<String>>,
    #[serde(default)]
    #[schema(value_type = Option<u64>)]
    pub contact_id: Patch<ContactId>,
    #[serde(default)]
    #[schema(value_type = Option<u64>)]
    pub conversation_id: Patch<ConversationId>,
}

/// A reminder to create, checked field by field; the assignees' membership and the ids'
/// existence are checked by those who know them.
#[derive(Debug, Clone, PartialEq)]
pub struct NewReminder {
    pub title: String,
    pub note: Option<String>,
    pub due_at: DateTime<Utc>,
    /// None: the caller (checked at the edge, where the caller is known).
    pub assignees: Option<Vec<UserId>>,
    pub contact_id: Option<ContactId>,
    pub conversation_id: Option<ConversationId>,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct ReminderChange {
    pub title: Option<String>,
    pub note: Patch<String>,
    pub due_at: Option<DateTime<Utc>>,
    pub assignees: Option<Vec<UserId>>,
    pub contact_id: Patch<ContactId>,
    pub conversation_id: Patch<ConversationId>,
}

/// A due time: ISO 8601 with an offset, strictly after `now`.
pub fn future_time(raw: &str, now: DateTime<Utc>) -> Result<DateTime<Utc>, String> {
    let at = crate::clock::parse_client_time(raw)?;
    if at <= now {
        return Err("must be in the future".into());
    }
    Ok(at)
}

fn assignees(checks: &mut Checks, raw: Vec<String>) -> Option<Vec<UserId>> {
    if raw.is_empty() || raw.len() > MAX_ASSIGNEES {
        checks.fail(
            "assignee_user_ids",
            format!("must name 1 to {MAX_ASSIGNEES} members"),
        );
        return None;
    }
    let mut out: Vec<UserId> = Vec::new();
    for (i, id) in raw.iter().enumerate() {
        match UserId::parse(id) {
            Some(u) if !out.contains(&u) => out.push(u),
            Some(_) => {}
            None => checks.fail(format!("assignee_user_ids[{i}]"), "must be a usr_ id"),
        }
    }
    Some(out)
}

impl NewReminder {
    pub fn parse(input: NewReminderInput, now: DateTime<Utc>) -> Result<Self, DomainError> {
        let mut checks = Checks::new();
        let title = checks.take("title", text::name(&input.title, MAX_TITLE));
        let note = checks.take("note", text::optional(input.note, MAX_NOTE));
        let due_at = checks.take("due_at", future_time(&input.due_at, now));
        let assignees = match input.assignee_user_ids {
            Some(raw) => assignees(&mut checks, raw).map(Some),
            None => Some(None),
        };
        checks.finish()?;
        match (title, note, due_at, assignees) {
            (Some(title), Some(note), Some(due_at), Some(assignees)) => Ok(Self {
                title,
                note,
                due_at,
                assignees,
                contact_id: input.contact_id,
                conversation_id: input.conversation_id,
            }),
            _ => Err(DomainError::Internal("reminder parse".into())),
        }
    }
}

impl ReminderChange {
    pub fn parse(input: ReminderPatchInput, now: DateTime<Utc>) -> Result<Self, DomainError> {
        let mut checks = Checks::new();
        let title = input
            .title
            .map(|t| checks.take("title", text::name(&t, MAX_TITLE)));
        let note = match input.note {
            Patch::Set(n) => match checks.take("note", text::optional(Some(n), MAX_NOTE)) {
                Some(Some(n)) => Patch::Set(n),
                _ => Patch::Clear,
            },
            other => other,
        };
        let due_at = input
            .due_at
            .map(|d| checks.take("due_at", future_time(&d, now)));
        let assignees = input
            .assignee_user_ids
            .map(|raw| assignees(&mut checks, raw));
        let change = Self {
            title: title.flatten(),
            note,
            due_at: due_at.flatten(),
            assignees: assignees.flatten(),
            contact_id: input.contact_id,
            conversation_id: input.conversation_id,
        };
        if checks.is_empty() && change == Self::default() {
            checks.fail(
                "",
                "send title, note, due_at, assignee_user_ids, contact_id or conversation_id",
            );
        }
        checks.finish()?;
        Ok(change)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input(due: &str) -> NewReminderInput {
        NewReminderInput {
            title: "Call back".into(),
            note: None,
            due_at: due.into(),
            assignee_user_ids: None,
            contact_id: None,
            conversation_id: None,
        }
    }

    #[test]
    fn a_due_time_in_the_past_or_unreadable_is_refused() {
        let now = Utc::now();
        assert!(NewReminder::parse(input("2999-01-01T00:00:00Z"), now).is_ok());
        for bad in ["2020-01-01T00:00:00Z", "tomorrow", "2999-01-01"] {
            match NewReminder::parse(input(bad), now) {
                Err(DomainError::Validation(e)) => assert_eq!(e[0].path, "due_at"),
                other => panic!("{bad}: {other:?}"),
            }
        }
    }

    #[test]
    fn assignees_are_one_to_twenty_user_ids_without_repeats() {
        let now = Utc::now();
        let with = |ids: Vec<&str>| {
            let mut i = input("2999-01-01T00:00:00Z");
            i.assignee_user_ids = Some(ids.into_iter().map(String::from).collect());
            NewReminder::parse(i, now)
        };
        assert!(with(vec![]).is_err());
        assert!(with(vec!["usr_a"; 21]).is_err());
        let twice = with(vec!["usr_a", "usr_a"]).unwrap();
        assert_eq!(twice.assignees.unwrap().len(), 1);
        match with(vec!["usr_a", "ws_b"]) {
            Err(DomainError::Validation(e)) => assert_eq!(e[0].path, "assignee_user_ids[1]"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn an_empty_patch_is_refused_and_null_clears() {
        assert!(ReminderChange::parse(ReminderPatchInput::default(), Utc::now()).is_err());
        let p: ReminderPatchInput = serde_json::from_str(r#"{"note": null}"#).unwrap();
        let c = ReminderChange::parse(p, Utc::now()).unwrap();
        assert_eq!(c.note, Patch::Clear);
    }
}
