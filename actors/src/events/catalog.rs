//! The 58 event types of the catalog, with the fields each type sends only with
//! `include_content` (content) or `include_contact_details` (contact).

use serde::Serialize;
use utoipa::ToSchema;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
pub struct EventType {
    #[serde(rename = "type")]
    pub name: &'static str,
    pub category: &'static str,
    pub description: &'static str,
    pub content_fields: &'static [&'static str],
    pub contact_fields: &'static [&'static str],
}

impl EventType {
    /// High-volume types that wildcards never include; they must be named.
    pub fn named_only(&self) -> bool {
        matches!(self.name, "message.received" | "message.sent")
    }
}

pub fn find(name: &str) -> Option<&'static EventType> {
    CATALOG.iter().find(|t| t.name == name)
}

pub static CATALOG: [EventType; 58] = [
    EventType {
        name: "contact.created",
        category: "contacts",
        description: "a contact is added (first message, manual, import, API)",
        content_fields: &[],
        contact_fields: &["name", "first_name", "last_name", "phone", "email", "custom_fields"],
    },
    EventType {
        name: "contact.updated",
        category: "contacts",
        description: "a contact field or custom field changes; changes has changed fields and previous values",
        content_fields: &[],
        contact_fields: &["name", "first_name", "last_name", "phone", "email", "custom_fields"],
    },
    EventType {
        name: "contact.deleted",
        category: "contacts",
        description: "a contact is deleted; ids only",
        content_fields: &[],
        contact_fields: &[],
    },
    EventType {
        name: "contact.tag_added",
        category: "contacts",
        description: "tags are added",
        content_fields: &[],
        contact_fields: &[],
    },
    EventType {
        name: "contact.tag_removed",
        category: "contacts",
        description: "tags are removed",
        content_fields: &[],
        contact_fields: &[],
    },
    EventType {
        name: "contact.stage_changed",
        category: "contacts",
        description: "the contact moves to another funnel stage or the stage is removed",
        content_fields: &[],
        contact_fields: &[],
    },
    EventType {
        name: "contact.assigned",
        category: "contacts",
        description: "assigned or unassigned",
        content_fields: &[],
        contact_fields: &[],
    },
    EventType {
        name: "contact.lead_captured",
        category: "contacts",
        description: "the AI or a form marks a lead",
        content_fields: &["summary"],
        contact_fields: &["name", "phone", "email"],
    },
    EventType {
        name: "contact.merged",
        category: "contacts",
        description: "two contacts merge; secondary id redirects to the primary",
        content_fields: &[],
        contact_fields: &[],
    },
    EventType {
        name: "contact.opted_out",
        category: "contacts",
        description: "marked do-not-contact or opts out of marketing",
        content_fields: &[],
        contact_fields: &[],
    },
    EventType {
        name: "note.created",
        category: "contacts",
        description: "a team member adds a note",
        content_fields: &["body"],
        contact_fields: &[],
    },
    EventType {
        name: "conversation.created",
        category: "conversations",
        description: "a conversation starts on any channel",
        content_fields: &[],
        contact_fields: &[],
    },
    EventType {
        name: "conversation.reopened",
        category: "conversations",
        description: "a closed conversation opens again (customer message or team member)",
        content_fields: &[],
        contact_fields: &[],
    },
    EventType {
        name: "conversation.closed",
        category: "conversations",
        description: "closed by team member, API or auto-close",
        content_fields: &["closing_note_text"],
        contact_fields: &[],
    },
    EventType {
        name: "conversation.assigned",
        category: "conversations",
        description: "assignee changes",
        content_fields: &[],
        contact_fields: &[],
    },
    EventType {
        name: "conversation.ai_paused",
        category: "conversations",
        description: "AI replies paused (takeover, handover, spam, schedule, API)",
        content_fields: &[],
        contact_fields: &[],
    },
    EventType {
        name: "conversation.ai_resumed",
        category: "conversations",
        description: "AI replies switched back on",
        content_fields: &[],
        contact_fields: &[],
    },
    EventType {
        name: "conversation.comment_created",
        category: "conversations",
        description: "internal comment added (customers never see it)",
        content_fields: &["body"],
        contact_fields: &[],
    },
    EventType {
        name: "message.received",
        category: "messages",
        description: "every customer message on any channel; high volume, subscribe by name",
        content_fields: &["text"],
        contact_fields: &[],
    },
    EventType {
        name: "message.sent",
        category: "messages",
        description: "every message sent to a customer (AI, team, campaigns, automations); high volume, subscribe by name",
        content_fields: &["text"],
        contact_fields: &[],
    },
    EventType {
        name: "message.send_failed",
        category: "messages",
        description: "the channel could not deliver a message",
        content_fields: &[],
        contact_fields: &[],
    },
    EventType {
        name: "handover.requested",
        category: "handovers",
        description: "the AI hands a conversation to a human",
        content_fields: &["summary"],
        contact_fields: &["customer_name", "customer_phone"],
    },
    EventType {
        name: "handover.resolved",
        category: "handovers",
        description: "a team member or auto-resolve marks it handled",
        content_fields: &[],
        contact_fields: &[],
    },
    EventType {
        name: "conversation.followup_sent",
        category: "ai",
        description: "the AI sends an automatic follow-up to a quiet customer",
        content_fields: &[],
        contact_fields: &[],
    },
    EventType {
        name: "ai_turn.failed",
        category: "ai",
        description: "the AI could not produce a reply",
        content_fields: &[],
        contact_fields: &[],
    },
    EventType {
        name: "message_feedback.submitted",
        category: "ai",
        description: "a team member rates an AI reply up or down",
        content_fields: &["comment"],
        contact_fields: &[],
    },
    EventType {
        name: "booking.created",
        category: "bookings",
        description: "an appointment is created",
        content_fields: &["conversation_summary", "documents"],
        contact_fields: &["customer_name", "customer_phone"],
    },
    EventType {
        name: "booking.documents.added",
        category: "bookings",
        description: "a customer shares a document or photo after the booking; only new files",
        content_fields: &["documents"],
        contact_fields: &["customer_name", "customer_phone"],
    },
    EventType {
        name: "booking.updated",
        category: "bookings",
        description: "time, service, duration, location or notes change; changes lists them",
        content_fields: &[],
        contact_fields: &["customer_name", "customer_phone"],
    },
    EventType {
        name: "booking.rescheduled",
        category: "bookings",
        description: "moves to a new date or time",
        content_fields: &[],
        contact_fields: &["customer_name", "customer_phone"],
    },
    EventType {
        name: "booking.cancelled",
        category: "bookings",
        description: "cancelled by customer (via AI), team member or API",
        content_fields: &[],
        contact_fields: &["customer_name", "customer_phone"],
    },
    EventType {
        name: "booking.status_changed",
        category: "bookings",
        description: "status changes (for example confirmed, completed, no-show)",
        content_fields: &[],
        contact_fields: &["customer_name", "customer_phone"],
    },
    EventType {
        name: "reminder.created",
        category: "reminders",
        description: "a reminder is created",
        content_fields: &["title", "note"],
        contact_fields: &[],
    },
    EventType {
        name: "reminder.fired",
        category: "reminders",
        description: "a reminder becomes due and assignees are notified",
        content_fields: &["title", "note"],
        contact_fields: &[],
    },
    EventType {
        name: "reminder.closed",
        category: "reminders",
        description: "a reminder is marked done",
        content_fields: &["title", "note"],
        contact_fields: &[],
    },
    EventType {
        name: "appointment_reminder.sent",
        category: "reminders",
        description: "an automatic appointment reminder (template message or SMS) is sent",
        content_fields: &[],
        contact_fields: &[],
    },
    EventType {
        name: "order.created",
        category: "orders",
        description: "created by the AI, team, store sync or API",
        content_fields: &[],
        contact_fields: &["customer_name", "customer_phone"],
    },
    EventType {
        name: "order.updated",
        category: "orders",
        description: "any detail or item changes; changes lists them",
        content_fields: &[],
        contact_fields: &["customer_name", "customer_phone"],
    },
    EventType {
        name: "order.status_changed",
        category: "orders",
        description: "status changes (for example confirmed, shipped, delivered)",
        content_fields: &[],
        contact_fields: &["customer_name", "customer_phone"],
    },
    EventType {
        name: "order.paid",
        category: "orders",
        description: "marked paid",
        content_fields: &[],
        contact_fields: &["customer_name", "customer_phone"],
    },
    EventType {
        name: "order.cancelled",
        category: "orders",
        description: "cancelled",
        content_fields: &[],
        contact_fields: &["customer_name", "customer_phone"],
    },
    EventType {
        name: "order.payment_proof_uploaded",
        category: "orders",
        description: "a payment receipt is attached by a customer (via AI) or team member",
        content_fields: &[],
        contact_fields: &[],
    },
    EventType {
        name: "product.created",
        category: "products",
        description: "added to the catalog",
        content_fields: &[],
        contact_fields: &[],
    },
    EventType {
        name: "product.updated",
        category: "products",
        description: "price, stock or details change",
        content_fields: &[],
        contact_fields: &[],
    },
    EventType {
        name: "product.deleted",
        category: "products",
        description: "removed from the catalog",
        content_fields: &[],
        contact_fields: &[],
    },
    EventType {
        name: "call.ended",
        category: "calls",
        description: "after every AI phone or messaging-channel call, with outcome",
        content_fields: &["summary", "transcript"],
        contact_fields: &["from_number", "to_number"],
    },
    EventType {
        name: "call.missed",
        category: "calls",
        description: "an incoming call unanswered or an outgoing call got no answer",
        content_fields: &["summary", "transcript"],
        contact_fields: &["from_number", "to_number"],
    },
    EventType {
        name: "call.voicemail_received",
        category: "calls",
        description: "a caller leaves a voicemail",
        content_fields: &["transcript_text"],
        contact_fields: &["from_number"],
    },
    EventType {
        name: "campaign.completed",
        category: "campaigns",
        description: "a broadcast campaign finished sending to all recipients",
        content_fields: &[],
        contact_fields: &[],
    },
    EventType {
        name: "campaign_recipient.replied",
        category: "campaigns",
        description: "a recipient replies",
        content_fields: &[],
        contact_fields: &[],
    },
    EventType {
        name: "campaign_recipient.failed",
        category: "campaigns",
        description: "a campaign message could not be delivered to a recipient",
        content_fields: &[],
        contact_fields: &[],
    },
    EventType {
        name: "form.submitted",
        category: "forms",
        description: "a customer submits a form (website widget, hosted link, in-chat intake)",
        content_fields: &["fields"],
        contact_fields: &[],
    },
    EventType {
        name: "channel.disconnected",
        category: "account",
        description: "a channel stops working (token expired, access removed) or is disconnected",
        content_fields: &[],
        contact_fields: &[],
    },
    EventType {
        name: "channel.reconnected",
        category: "account",
        description: "a failing channel works again",
        content_fields: &[],
        contact_fields: &[],
    },
    EventType {
        name: "credits.threshold_reached",
        category: "account",
        description: "credit usage crosses 80%, 100% or 120% of the plan allowance",
        content_fields: &[],
        contact_fields: &[],
    },
    EventType {
        name: "tag.created",
        category: "workspace",
        description: "a tag is added to the workspace tag list",
        content_fields: &[],
        contact_fields: &[],
    },
    EventType {
        name: "tag.updated",
        category: "workspace",
        description: "a tag is renamed or recolored",
        content_fields: &[],
        contact_fields: &[],
    },
    EventType {
        name: "tag.deleted",
        category: "workspace",
        description: "a tag is deleted (removed from every contact)",
        content_fields: &[],
        contact_fields: &[],
    },
];

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn the_catalog_has_58_distinct_types() {
        let names: HashSet<_> = CATALOG.iter().map(|t| t.name).collect();
        assert_eq!(names.len(), 58);
    }

    #[test]
    fn privacy_columns_are_recorded() {
        let created = find("contact.created").unwrap();
        assert!(created.contact_fields.contains(&"email"));
        assert_eq!(find("note.created").unwrap().content_fields, &["body"]);
        assert!(find("message.sent").unwrap().named_only());
        assert!(!find("message.send_failed").unwrap().named_only());
    }
}
