//! Delivery records: one per (event, endpoint), with every attempt. Kept under
//! `wd/<endpoint id>/<delivery id>` so that an endpoint actor loads just its own.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::clock::Timestamp;
use crate::ids::{DeliveryId, EndpointId, EventId, WorkspaceId};
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
    pub at: Timestamp,
    pub status_code: Option<u16>,
    pub error: Option<String>,
    pub duration_ms: u64,
}

/// The error of an attempt written before it is sent, while it is in flight.
pub const IN_FLIGHT: &str = "in flight";

impl Attempt {
    /// Written before the attempt is sent and replaced by its outcome: no answer yet.
    pub fn in_flight(&self) -> bool {
        self.status_code.is_none() && self.error.as_deref() == Some(IN_FLIGHT)
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Delivery {
    pub id: DeliveryId,
    pub endpoint_id: EndpointId,
    pub workspace_id: WorkspaceId,
    pub event_id: EventId,
    pub event_type: String,
    /// The exact bytes sent, rendered for this endpoint (privacy applied).
    pub body: String,
    pub status: DeliveryStatus,
    pub attempts: Vec<Attempt>,
    pub next_attempt_at: Option<Timestamp>,
    pub created_at: Timestamp,
}

/// A delivery as answered (without its body).
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct DeliveryView {
    pub id: DeliveryId,
    pub endpoint_id: EndpointId,
    pub event_id: EventId,
    pub event_type: String,
    pub status: DeliveryStatus,
    pub attempt_count: usize,
    pub attempts: Vec<Attempt>,
    pub next_attempt_at: Option<Timestamp>,
    pub created_at: Timestamp,
}

impl Delivery {
    /// The delivery as answered: an attempt still in flight is not shown until it has an
    /// outcome (or, after a crash, as interrupted).
    pub fn view(&self) -> DeliveryView {
        let attempts: Vec<Attempt> = self
            .attempts
            .iter()
            .filter(|a| !a.in_flight())
            .cloned()
            .collect();
        DeliveryView {
            id: self.id,
            endpoint_id: self.endpoint_id.clone(),
            event_id: self.event_id.clone(),
            event_type: self.event_type.clone(),
            status: self.status,
            attempt_count: attempts.len(),
            attempts,
            next_attempt_at: self.next_attempt_at,
            created_at: self.created_at,
        }
    }
}

pub fn key(endpoint_id: &str, id: DeliveryId) -> Vec<u8> {
    Key::new("wd").str(endpoint_id).id(id.get()).build()
}

pub fn prefix(endpoint_id: &str) -> Vec<u8> {
    Key::new("wd").str(endpoint_id).prefix()
}
