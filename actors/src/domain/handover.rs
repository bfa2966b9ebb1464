//! Handovers: the AI asks for a person to take over a conversation.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::clock::Timestamp;
use crate::ids::{ContactId, ConversationId, HandoverId};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum HandoverStatus {
    Requested,
    Resolved,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct Handover {
    pub id: HandoverId,
    pub conversation_id: ConversationId,
    pub contact_id: ContactId,
    pub status: HandoverStatus,
    /// Content: what the customer asked for.
    pub summary: String,
    /// Contact details, as they were when the handover was requested.
    pub customer_name: Option<String>,
    pub customer_phone: Option<String>,
    pub requested_at: Timestamp,
    pub resolved_at: Option<Timestamp>,
    /// Who resolved it: a user id, `api` for an API key, `system` for a rule of the
    /// service.
    pub resolved_by: Option<String>,
}

impl Handover {
    pub fn is_open(&self) -> bool {
        self.status == HandoverStatus::Requested
    }

    /// Marks it handled; false when it already was.
    pub fn resolve(&mut self, by: impl Into<String>, now: DateTime<Utc>) -> bool {
        if !self.is_open() {
            return false;
        }
        self.status = HandoverStatus::Resolved;
        self.resolved_at = Some(Timestamp(now));
        self.resolved_by = Some(by.into());
        true
    }
}
