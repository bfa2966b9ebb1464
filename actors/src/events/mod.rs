//! Events: the 58-type catalog and the domain events mutations return. Delivery (outbox,
//! subscriptions, privacy, endpoint actors) builds on these.

pub mod catalog;

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// Who caused a change: the envelope's `actor` object.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct EventActor {
    #[serde(rename = "type")]
    pub kind: ActorKind,
    pub id: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum ActorKind {
    Ai,
    Human,
    Customer,
    System,
    Api,
    Import,
    Provider,
}

/// The envelope's `source`: which credential made the change, and through what.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct EventSource {
    /// `<kind>:<id>` of the credential, for example `api_key:key_...`.
    pub connection_id: Option<String>,
    pub via: String,
}

/// Everything about the caller that an event records.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Origin {
    pub actor: EventActor,
    pub source: EventSource,
}

impl Origin {
    /// Changes made by the service itself (operator actions, background rules).
    pub fn system() -> Self {
        Self {
            actor: EventActor {
                kind: ActorKind::System,
                id: None,
            },
            source: EventSource {
                connection_id: None,
                via: "system".into(),
            },
        }
    }
}

/// A change a mutation caused, before it gets its envelope.
#[derive(Debug, Clone, PartialEq)]
pub struct DomainEvent {
    pub event_type: &'static str,
    pub resource_type: &'static str,
    pub resource_id: String,
    pub data: serde_json::Value,
    /// Update-style events: changed field names mapped to previous values.
    pub changes: Option<serde_json::Map<String, serde_json::Value>>,
}

impl DomainEvent {
    pub fn new(
        event_type: &'static str,
        resource_type: &'static str,
        resource_id: impl ToString,
        data: impl Serialize,
    ) -> Self {
        debug_assert!(
            catalog::find(event_type).is_some(),
            "{event_type} not in catalog"
        );
        Self {
            event_type,
            resource_type,
            resource_id: resource_id.to_string(),
            data: serde_json::to_value(data).unwrap_or(serde_json::Value::Null),
            changes: None,
        }
    }

    pub fn with_changes(mut self, changes: serde_json::Map<String, serde_json::Value>) -> Self {
        self.changes = Some(changes);
        self
    }
}

/// The `changes` of an update-style event: each top-level field of `before` whose value
/// differs in `after`, mapped to its previous value (`updated_at` aside).
pub fn field_changes<T: Serialize>(
    before: &T,
    after: &T,
) -> serde_json::Map<String, serde_json::Value> {
    let (Ok(serde_json::Value::Object(b)), Ok(serde_json::Value::Object(a))) =
        (serde_json::to_value(before), serde_json::to_value(after))
    else {
        return serde_json::Map::new();
    };
    b.into_iter()
        .filter(|(k, v)| k != "updated_at" && a.get(k) != Some(v))
        .collect()
}

/// Where committed events go. The workspace actor stages a mutation's events into the same
/// store batch as the state change (so neither exists without the other), then reports the
/// commit once it is durable.
pub trait EventSink: Send + Sync + 'static {
    fn stage(
        &self,
        workspace: &crate::ids::WorkspaceId,
        origin: &Origin,
        events: &[DomainEvent],
        at: chrono::DateTime<chrono::Utc>,
        batch: &mut crate::store::Batch,
    ) -> Result<(), crate::domain::DomainError>;

    /// The staged events of `workspace` are durable and may be delivered.
    fn committed(&self, _workspace: &crate::ids::WorkspaceId) {}
}

/// A sink for a service without webhook endpoints: an event nobody subscribes to needs no
/// outbox record.
pub struct NoSubscribers;

impl EventSink for NoSubscribers {
    fn stage(
        &self,
        _: &crate::ids::WorkspaceId,
        _: &Origin,
        _: &[DomainEvent],
        _: chrono::DateTime<chrono::Utc>,
        _: &mut crate::store::Batch,
    ) -> Result<(), crate::domain::DomainError> {
        Ok(())
    }
}
