//! Events: the 58-type catalog and the domain events mutations return. Delivery (outbox,
//! subscriptions, privacy, endpoint actors) builds on these.

pub mod catalog;
pub mod privacy;
pub mod samples;
pub mod signature;
pub mod subscription;

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

/// Everything about the caller that an event records (kept with a pending send, so that
/// the events of its outcome name who sent it).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
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

thread_local! {
    /// Set while a workspace actor runs a handler in a workspace with no active endpoint.
    static UNHEARD: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// While alive, events made on this thread carry no data or changes: no endpoint would
/// receive them, and building their JSON is a good part of a write's CPU. The workspace
/// actor holds one around a handler (never around one that manages endpoints).
pub struct Unheard {
    before: bool,
}

impl Unheard {
    pub fn begin(unheard: bool) -> Self {
        Self {
            before: UNHEARD.with(|u| u.replace(unheard)),
        }
    }
}

impl Drop for Unheard {
    fn drop(&mut self) {
        UNHEARD.with(|u| u.set(self.before));
    }
}

fn unheard() -> bool {
    UNHEARD.with(|u| u.get())
}

/// A change a mutation caused, before it gets its envelope.
#[derive(Debug, Clone, PartialEq)]
pub struct DomainEvent {
    pub event_type: &'static str,
    pub resource_type: &'static str,
    pub resource_id: String,
    /// `Null` when made inside an [`Unheard`] scope.
    pub data: serde_json::Value,
    /// Update-style events: changed field names mapped to previous values.
    pub changes: Option<serde_json::Map<String, serde_json::Value>>,
    /// A pre-assigned `evt_` id (the operator trigger answers with it); generated if None.
    pub event_id: Option<crate::ids::EventId>,
    /// Made while no endpoint was active: its data was never built, so it must not be
    /// delivered.
    pub unheard: bool,
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
        let unheard = unheard();
        let data = match unheard {
            true => serde_json::Value::Null,
            false => serde_json::to_value(data).unwrap_or(serde_json::Value::Null),
        };
        Self {
            event_type,
            resource_type,
            resource_id: resource_id.to_string(),
            data,
            changes: None,
            event_id: None,
            unheard,
        }
    }

    /// An event whose data is the record as `GET` answers it: with its `object` field,
    /// named by `resource_type` (plus any extra fields `data` already carries).
    pub fn record(
        event_type: &'static str,
        resource_type: &'static str,
        resource_id: impl ToString,
        data: impl Serialize,
    ) -> Self {
        let mut event = Self::new(event_type, resource_type, resource_id, data);
        if let Some(fields) = event.data.as_object_mut() {
            fields.insert("object".into(), serde_json::Value::from(resource_type));
        }
        event
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
    if unheard() {
        return serde_json::Map::new();
    }
    let (Ok(serde_json::Value::Object(b)), Ok(serde_json::Value::Object(a))) =
        (serde_json::to_value(before), serde_json::to_value(after))
    else {
        return serde_json::Map::new();
    };
    b.into_iter()
        .filter(|(k, v)| k != "updated_at" && a.get(k) != Some(v))
        .collect()
}

/// The date-formatted version carried by every delivered event.
pub const API_VERSION: &str = "2026-11-01";

/// The envelope's `resource`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct ResourceRef {
    #[serde(rename = "type")]
    pub kind: String,
    pub id: String,
}

/// An event as delivered.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct Envelope {
    /// `evt_...`
    pub id: crate::ids::EventId,
    /// Always `event`.
    pub object: String,
    #[serde(rename = "type")]
    pub event_type: String,
    pub api_version: String,
    pub occurred_at: String,
    pub created_at: String,
    pub workspace_id: String,
    pub actor: EventActor,
    pub resource: ResourceRef,
    pub source: EventSource,
    #[schema(value_type = Object)]
    pub data: serde_json::Value,
    #[schema(value_type = Option<Object>)]
    pub changes: Option<serde_json::Map<String, serde_json::Value>>,
}

impl Envelope {
    /// Wraps a domain event; `at` is when the change happened (and was recorded).
    pub fn new(
        workspace: &crate::ids::WorkspaceId,
        origin: &Origin,
        event: &DomainEvent,
        at: chrono::DateTime<chrono::Utc>,
    ) -> Self {
        let at = crate::clock::rfc3339_millis::format(&at);
        Self {
            id: event
                .event_id
                .clone()
                .unwrap_or_else(crate::ids::EventId::generate),
            object: "event".into(),
            event_type: event.event_type.to_string(),
            api_version: API_VERSION.into(),
            occurred_at: at.clone(),
            created_at: at,
            workspace_id: workspace.to_string(),
            actor: origin.actor.clone(),
            resource: ResourceRef {
                kind: event.resource_type.to_string(),
                id: event.resource_id.clone(),
            },
            source: origin.source.clone(),
            data: event.data.clone(),
            changes: event.changes.clone(),
        }
    }
}
