//! Delivery records: one per (event, endpoint), with every attempt. Kept under
//! `wd/<endpoint id>/<delivery id>` so that an endpoint actor loads just its own.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::clock::rfc3339_millis;
use crate::ids::WorkspaceId;
use crate::store::Key;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum DeliveryStatus {
    Pending,
    Delivered,
    Failed,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct Attempt {
    /// 1 for the first try.
    pub number: u32,
    #[serde(with = "rfc3339_millis")]
    #[schema(value_type = String, format = DateTime)]
    pub at: DateTime<Utc>,
    pub status_code: Option<u16>,
    pub error: Option<String>,
    pub duration_ms: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Delivery {
    pub id: u64,
    pub endpoint_id: String,
    pub workspace_id: WorkspaceId,
    pub event_id: String,
    pub event_type: String,
    /// The exact bytes sent, rendered for this endpoint (privacy applied).
    pub body: String,
    pub status: DeliveryStatus,
    pub attempts: Vec<Attempt>,
    #[serde(with = "rfc3339_millis::option")]
    pub next_attempt_at: Option<DateTime<Utc>>,
    #[serde(with = "rfc3339_millis")]
    pub created_at: DateTime<Utc>,
}

/// A delivery as answered (without its body).
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct DeliveryView {
    pub id: u64,
    pub endpoint_id: String,
    pub event_id: String,
    pub event_type: String,
    pub status: DeliveryStatus,
    pub attempt_count: usize,
    pub attempts: Vec<Attempt>,
    #[serde(with = "rfc3339_millis::option")]
    #[schema(value_type = Option<String>, format = DateTime)]
    pub next_attempt_at: Option<DateTime<Utc>>,
    #[serde(with = "rfc3339_millis")]
    #[schema(value_type = String, format = DateTime)]
    pub created_at: DateTime<Utc>,
}

impl Delivery {
    pub fn view(&self) -> DeliveryView {
        DeliveryView {
            id: self.id,
            endpoint_id: self.endpoint_id.clone(),
            event_id: self.event_id.clone(),
            event_type: self.event_type.clone(),
            status: self.status,
            attempt_count: self.attempts.len(),
            attempts: self.attempts.clone(),
            next_attempt_at: self.next_attempt_at,
            created_at: self.created_at,
        }
    }
}

pub fn key(endpoint_id: &str, id: u64) -> Vec<u8> {
    Key::new("wd").str(endpoint_id).id(id).build()
}

pub fn prefix(endpoint_id: &str) -> Vec<u8> {
    Key::new("wd").str(endpoint_id).prefix()
}
