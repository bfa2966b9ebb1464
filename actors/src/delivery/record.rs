//! Delivery records: one per (event, endpoint), with every attempt, kept under
//! `wd/<endpoint id>/<delivery id>` for the delivery log. Every pending one also has an
//! entry in the pending index, `wp/<endpoint id>/<delivery id>` holding its due time, so
//! that an endpoint actor starts from its pending work without reading its history.
//! [`put`] writes both in one batch, so the index cannot disagree with the records, also
//! after a crash.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::clock::Timestamp;
use crate::ids::{DeliveryId, EndpointId, EventId, WorkspaceId};
use crate::store::{Appended, Batch, Key, StoreResult};

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
    /// The contact details of the contact the event is about, kept when `body` was
    /// rendered with them disclosed: should the endpoint stop including contact details,
    /// a later attempt withholds them wherever the body quotes them (a handover's summary
    /// quoting the customer), as a newly rendered body would.
    pub quoted_details: Appended<Vec<String>>,
}

#[cfg(test)]
impl Delivery {
    /// A `tag.created` delivery to `endpoint` of workspace `ws_one`, due now.
    pub(crate) fn sample(endpoint: &str, id: u64, status: DeliveryStatus) -> Delivery {
        let now = Timestamp(chrono::Utc::now());
        Delivery {
            id: DeliveryId(id),
            endpoint_id: EndpointId::parse(endpoint).unwrap(),
            workspace_id: WorkspaceId::parse("ws_one").unwrap(),
            event_id: EventId::parse("evt_1").unwrap(),
            event_type: "tag.created".into(),
            body: "{}".into(),
            status,
            attempts: Vec::new(),
            next_attempt_at: Some(now),
            created_at: now,
            quoted_details: Appended::default(),
        }
    }
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
    /// When the next attempt is due, in Unix milliseconds (a delivery without a time is due
    /// at once).
    pub fn due_ms(&self) -> i64 {
        self.next_attempt_at
            .map_or(i64::MIN, |t| t.timestamp_millis())
    }

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

/// Every delivery record of every endpoint.
pub const ALL: &[u8] = b"wd/";

/// The pending index entry of a delivery: its due time in Unix milliseconds.
pub fn pending_key(endpoint_id: &str, id: DeliveryId) -> Vec<u8> {
    Key::new("wp").str(endpoint_id).id(id.get()).build()
}

pub fn pending_prefix(endpoint_id: &str) -> Vec<u8> {
    Key::new("wp").str(endpoint_id).prefix()
}

/// Writes a delivery into `batch` with its pending index entry: put while it is pending
/// (with its due time), deleted once it is delivered or failed.
pub fn put(batch: &mut Batch, d: &Delivery) -> StoreResult<()> {
    batch.put(key(&d.endpoint_id, d.id), d)?;
    let index = pending_key(&d.endpoint_id, d.id);
    match d.status {
        DeliveryStatus::Pending => batch.put(index, &d.due_ms())?,
        DeliveryStatus::Delivered | DeliveryStatus::Failed => batch.delete(index),
    }
    Ok(())
}

/// Deletes a delivery and its pending index entry.
pub fn delete(batch: &mut Batch, endpoint_id: &str, id: DeliveryId) {
    batch.delete(key(endpoint_id, id));
    batch.delete(pending_key(endpoint_id, id));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::Store;

    fn sample(id: u64, status: DeliveryStatus) -> Delivery {
        Delivery::sample("we_one", id, status)
    }

    #[tokio::test]
    async fn a_pending_delivery_is_indexed_with_its_due_time_and_leaves_the_index_when_finished() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        let mut d = sample(7, DeliveryStatus::Pending);
        let mut batch = Batch::default();
        put(&mut batch, &d).unwrap();
        store.apply(batch).unwrap();
        let due: Option<i64> = store.get(&pending_key("we_one", d.id)).unwrap();
        assert_eq!(due, Some(d.due_ms()));

        d.status = DeliveryStatus::Delivered;
        let mut batch = Batch::default();
        put(&mut batch, &d).unwrap();
        store.apply(batch).unwrap();
        assert_eq!(
            store.get::<i64>(&pending_key("we_one", d.id)).unwrap(),
            None
        );
        assert!(store
            .get::<Delivery>(&key("we_one", d.id))
            .unwrap()
            .is_some());
    }
}
