//! Webhook endpoints: where a workspace's events are pushed, which ones, with what
//! filters and privacy, and the health the delivery actors report.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::contact::Channel;
use super::error::Checks;
use super::{text, DomainError, Patch};
use crate::clock::Timestamp;
use crate::events::privacy::Disclosure;
use crate::events::subscription;
use crate::events::ActorKind;
use crate::ids::{DeliveryId, EndpointId, EventId, WorkspaceId};
use crate::ssrf::{check_webhook_url, UrlProblem};

pub const MAX_ENDPOINTS: usize = 100;
pub const MAX_EVENTS: usize = 100;
pub const MAX_CHANNELS: usize = 20;
pub const MAX_ACTOR_TYPES: usize = 7;

/// `created_by` of an endpoint the operator created with the admin token. Such an endpoint
/// alone may point at a loopback address (see [`EndpointConfig::loopback_allowed`]).
pub const OPERATOR: &str = "operator";

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum EndpointStatus {
    Active,
    Paused,
    /// Set by the service: the receiver answered 410, or failed for the whole window.
    Disabled,
}

/// Who created the endpoint: the API or one of the automation connectors.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum CreatedVia {
    Api,
    ToolA,
    ToolB,
    ToolC,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct Filters {
    /// Only events about these channels (events without a channel pass).
    pub channels: Vec<Channel>,
    /// Only events caused by these actor types.
    pub actor_types: Vec<ActorKind>,
    /// Per event type, the source keys (`source.via`) that may pass.
    pub sources: BTreeMap<String, Vec<String>>,
    /// Skip events caused by the credential that created this endpoint.
    pub ignore_own_changes: bool,
}

/// The outcome of the newest delivery attempt.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct LastDelivery {
    pub delivery_id: DeliveryId,
    pub event_id: EventId,
    pub event_type: String,
    pub delivered: bool,
    pub status_code: Option<u16>,
    pub error: Option<String>,
    pub attempted_at: Timestamp,
}

/// A stored endpoint. Its secrets never leave in a view.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Endpoint {
    /// Orders endpoints newest first.
    pub seq: u64,
    pub id: EndpointId,
    pub url: String,
    pub events: Vec<String>,
    pub description: Option<String>,
    pub filters: Filters,
    pub include_content: bool,
    pub include_contact_details: bool,
    pub created_via: CreatedVia,
    /// The credential that created the endpoint, for ignore_own_changes.
    pub created_by: Option<String>,
    pub hipaa: bool,
    pub status: EndpointStatus,
    pub disabled_reason: Option<String>,
    pub secret: String,
    /// The secret the latest rotation replaced, and when its overlap ends.
    pub previous_secret: Option<String>,
    pub previous_secret_expires_at: Option<Timestamp>,
    pub failure_count: u32,
    pub failing_since: Option<Timestamp>,
    pub last_delivery: Option<LastDelivery>,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
    /// Secrets replaced by earlier rotations whose overlap has not ended, newest first
    /// (at most [`MAX_OLDER_SECRETS`]): rotating twice within the overlap keeps both
    /// replaced secrets signing. Last in the record, so a record stored before it existed
    /// fails to read as this shape and is upgraded ([`EndpointV1`]).
    pub older_secrets: Vec<(String, Timestamp)>,
}

/// How many secrets from rotations before the latest keep signing within their overlap.
pub const MAX_OLDER_SECRETS: usize = 4;

/// An endpoint as stored before `older_secrets` existed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EndpointV1 {
    pub seq: u64,
    pub id: EndpointId,
    pub url: String,
    pub events: Vec<String>,
    pub description: Option<String>,
    pub filters: Filters,
    pub include_content: bool,
    pub include_contact_details: bool,
    pub created_via: CreatedVia,
    pub created_by: Option<String>,
    pub hipaa: bool,
    pub status: EndpointStatus,
    pub disabled_reason: Option<String>,
    pub secret: String,
    pub previous_secret: Option<String>,
    pub previous_secret_expires_at: Option<Timestamp>,
    pub failure_count: u32,
    pub failing_since: Option<Timestamp>,
    pub last_delivery: Option<LastDelivery>,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
}

impl From<EndpointV1> for Endpoint {
    fn from(e: EndpointV1) -> Self {
        Self {
            seq: e.seq,
            id: e.id,
            url: e.url,
            events: e.events,
            description: e.description,
            filters: e.filters,
            include_content: e.include_content,
            include_contact_details: e.include_contact_details,
            created_via: e.created_via,
            created_by: e.created_by,
            hipaa: e.hipaa,
            status: e.status,
            disabled_reason: e.disabled_reason,
            secret: e.secret,
            previous_secret: e.previous_secret,
            previous_secret_expires_at: e.previous_secret_expires_at,
            failure_count: e.failure_count,
            failing_since: e.failing_since,
            last_delivery: e.last_delivery,
            created_at: e.created_at,
            updated_at: e.updated_at,
            older_secrets: Vec::new(),
        }
    }
}

impl Endpoint {
    /// Makes `secret` the signing secret: the one it replaces, and the earlier ones still
    /// within their overlap, keep signing until their overlaps end.
    pub fn rotate(&mut self, secret: String, now: DateTime<Utc>, until: DateTime<Utc>) {
        let mut older: Vec<(String, Timestamp)> = Vec::new();
        if let (Some(s), Some(t)) = (
            self.previous_secret.take(),
            self.previous_secret_expires_at.take(),
        ) {
            older.push((s, t));
        }
        older.append(&mut self.older_secrets);
        older.retain(|(_, t)| t.get() > now);
        older.truncate(MAX_OLDER_SECRETS);
        self.older_secrets = older;
        self.previous_secret = Some(std::mem::replace(&mut self.secret, secret));
        self.previous_secret_expires_at = Some(Timestamp(until));
    }

    /// The replaced secrets and when each stops signing, newest first.
    pub fn previous_secrets(&self) -> Vec<(String, DateTime<Utc>)> {
        self.previous_secret
            .clone()
            .zip(self.previous_secret_expires_at.map(Timestamp::get))
            .into_iter()
            .chain(self.older_secrets.iter().map(|(s, t)| (s.clone(), t.get())))
            .collect()
    }

    /// Whether this endpoint may receive content or contact details at all.
    pub fn discloses(&self) -> bool {
        self.include_content || self.include_contact_details
    }

    pub fn view(&self) -> EndpointView {
        EndpointView {
            seq: self.seq,
            id: self.id.clone(),
            url: self.url.clone(),
            events: self.events.clone(),
            description: self.description.clone(),
            filters: self.filters.clone(),
            include_content: self.include_content,
            include_contact_details: self.include_contact_details,
            created_via: self.created_via,
            status: self.status,
            disabled_reason: self.disabled_reason.clone(),
            failure_count: self.failure_count,
            failing_since: self.failing_since,
            last_delivery: self.last_delivery.clone(),
            created_at: self.created_at,
            updated_at: self.updated_at,
        }
    }
}

/// An endpoint as answered (never with its secret).
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct EndpointView {
    /// The list cursor position; not sent.
    #[serde(skip)]
    pub seq: u64,
    pub id: EndpointId,
    pub url: String,
    pub events: Vec<String>,
    pub description: Option<String>,
    pub filters: Filters,
    pub include_content: bool,
    pub include_contact_details: bool,
    pub created_via: CreatedVia,
    pub status: EndpointStatus,
    pub disabled_reason: Option<String>,
    /// Failed attempts since the last success.
    pub failure_count: u32,
    pub failing_since: Option<Timestamp>,
    pub last_delivery: Option<LastDelivery>,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
}

/// `filters` as sent.
#[derive(Debug, Clone, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct FiltersInput {
    #[serde(default)]
    pub channels: Option<Vec<String>>,
    #[serde(default)]
    pub actor_types: Option<Vec<String>>,
    #[serde(default)]
    pub sources: Option<BTreeMap<String, Vec<String>>>,
    #[serde(default)]
    pub ignore_own_changes: Option<bool>,
}

/// Body of POST /webhooks and PATCH /webhooks/{id}.
#[derive(Debug, Clone, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct EndpointInput {
    /// An https URL of a public host (plain http and private addresses only where the
    /// operator allows them, for development).
    #[serde(default)]
    #[schema(max_length = 2048, pattern = "^https://[^\\s/?#]+")]
    pub url: Option<String>,
    #[serde(default)]
    #[schema(min_items = 1, max_items = 100)]
    pub events: Option<Vec<String>>,
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    pub description: Patch<String>,
    #[serde(default)]
    pub filters: Option<FiltersInput>,
    #[serde(default)]
    pub include_content: Option<bool>,
    #[serde(default)]
    pub include_contact_details: Option<bool>,
    /// Create only.
    #[serde(default)]
    pub created_via: Option<String>,
    /// PATCH only: `active` or `paused`.
    #[serde(default)]
    pub status: Option<String>,
}

/// Checked endpoint fields; None where nothing was sent.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct EndpointChange {
    pub url: Option<String>,
    pub events: Option<Vec<String>>,
    pub description: Patch<String>,
    pub filters: Option<FiltersInput2>,
    pub include_content: Option<bool>,
    pub include_contact_details: Option<bool>,
    pub created_via: Option<CreatedVia>,
    pub status: Option<EndpointStatus>,
}

/// Checked filters; `ignore_own_changes` None means "the default for the creator".
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FiltersInput2 {
    pub channels: Option<Vec<Channel>>,
    pub actor_types: Option<Vec<ActorKind>>,
    pub sources: Option<BTreeMap<String, Vec<String>>>,
    pub ignore_own_changes: Option<bool>,
}

impl EndpointChange {
    /// Checks every field; `creating` requires url and events and refuses status.
    pub fn parse(
        input: EndpointInput,
        creating: bool,
        allow_private: bool,
    ) -> Result<Self, DomainError> {
        let mut c = Checks::new();
        let mut unsafe_url = None;
        let url = match input.url {
            None if creating => {
                c.fail("url", "is required");
                None
            }
            None => None,
            // Stored as parsed (`https:///x` is `https://x/`), as every sender reads it.
            Some(u) => match check_webhook_url(&u, allow_private) {
                Ok(parsed) => Some(parsed.to_string()),
                Err(UrlProblem::Invalid(m)) => {
                    c.fail("url", m);
                    None
                }
                Err(UrlProblem::Unsafe(m)) => {
                    unsafe_url = Some(m);
                    None
                }
            },
        };
        let events = match input.events {
            None if creating => {
                c.fail("events", "is required");
                None
            }
            None => None,
            Some(list) => {
                if list.is_empty() || list.len() > MAX_EVENTS {
                    c.fail("events", format!("must hold 1 to {MAX_EVENTS} entries"));
                }
                for (i, e) in list.iter().enumerate() {
                    if let Err(m) = subscription::validate_entry(e) {
                        c.fail(format!("events[{i}]"), m);
                    }
                }
                // An entry named twice subscribes once: kept where it first stands.
                let mut seen = std::collections::HashSet::new();
                let mut list = list;
                list.retain(|e| seen.insert(e.clone()));
                Some(list)
            }
        };
        let description = c
            .take(
                "description",
                input
                    .description
                    .try_map(|d| text::bounded(&d, 0, 200).map(|_| d)),
            )
            .unwrap_or(Patch::Keep);
        let filters = input.filters.map(|f| parse_filters(&mut c, f));
        let created_via = match input.created_via {
            Some(_) if !creating => {
                c.fail("created_via", "is set when the endpoint is created");
                None
            }
            Some(v) => c.take(
                "created_via",
                serde_json::from_value::<CreatedVia>(serde_json::Value::String(v))
                    .map_err(|_| "must be one of api, tool_a, tool_b, tool_c".to_string()),
            ),
            None => None,
        };
        let status = match input.status {
            Some(_) if creating => {
                c.fail("status", "is set with PATCH");
                None
            }
            Some(s) if s == "active" => Some(EndpointStatus::Active),
            Some(s) if s == "paused" => Some(EndpointStatus::Paused),
            Some(_) => {
                c.fail(
                    "status",
                    "must be active or paused (disabled is set by the service)",
                );
                None
            }
            None => None,
        };
        let change = EndpointChange {
            url,
            events,
            description,
            filters,
            include_content: input.include_content,
            include_contact_details: input.include_contact_details,
            created_via,
            status,
        };
        if !creating && c.is_empty() && unsafe_url.is_none() && change == EndpointChange::default()
        {
            c.fail("", "send at least one field to change");
        }
        c.finish()?;
        if let Some(m) = unsafe_url {
            return Err(DomainError::UnsafeUrl(m));
        }
        Ok(change)
    }

    /// Whether the change touches what only owners and admins may change on an endpoint
    /// that discloses content or contact details.
    pub fn touches_routing(&self) -> bool {
        self.url.is_some() || self.events.is_some() || self.filters.is_some()
    }

    /// Whether it turns a disclosure on.
    pub fn enables_disclosure(&self) -> bool {
        self.include_content == Some(true) || self.include_contact_details == Some(true)
    }

    /// Whether this change turns an option on that `current` has off (a new endpoint has
    /// both off); sending an option that is already on turns nothing on.
    pub fn turns_on_disclosure(&self, current: Option<&Endpoint>) -> bool {
        let (content, details) = current.map_or((false, false), |e| {
            (e.include_content, e.include_contact_details)
        });
        (self.include_content == Some(true) && !content)
            || (self.include_contact_details == Some(true) && !details)
    }
}

fn parse_filters(c: &mut Checks, f: FiltersInput) -> FiltersInput2 {
    let channels = f.channels.map(|list| {
        if list.len() > MAX_CHANNELS {
            c.fail(
                "filters.channels",
                format!("must hold at most {MAX_CHANNELS} channels"),
            );
        }
        list.iter()
            .enumerate()
            .filter_map(|(i, ch)| c.take(format!("filters.channels[{i}]"), Channel::parse(ch)))
            .collect()
    });
    let actor_types = f.actor_types.map(|list| {
        if list.len() > MAX_ACTOR_TYPES {
            c.fail(
                "filters.actor_types",
                format!("must hold at most {MAX_ACTOR_TYPES} actor types"),
            );
        }
        list.iter()
            .enumerate()
            .filter_map(|(i, a)| {
                c.take(
                    format!("filters.actor_types[{i}]"),
                    serde_json::from_value::<ActorKind>(serde_json::Value::String(a.clone()))
                        .map_err(|_| {
                            "must be one of ai, human, customer, system, api, import, provider"
                                .to_string()
                        }),
                )
            })
            .collect()
    });
    let sources = f.sources.inspect(|map| {
        for (event_type, keys) in map {
            if crate::events::catalog::find(event_type).is_none() {
                c.fail(
                    format!("filters.sources.{event_type}"),
                    "is not an event type of the catalog",
                );
            }
            for (i, k) in keys.iter().enumerate() {
                if let Err(m) = text::bounded(k, 1, 50) {
                    c.fail(format!("filters.sources.{event_type}[{i}]"), m);
                }
            }
        }
    });
    FiltersInput2 {
        channels,
        actor_types,
        sources,
        ignore_own_changes: f.ignore_own_changes,
    }
}

impl FiltersInput2 {
    /// Applies to `filters`; on create, ignore_own_changes defaults to on for endpoints a
    /// connector created.
    pub fn apply(self, filters: &mut Filters) {
        if let Some(c) = self.channels {
            filters.channels = c;
        }
        if let Some(a) = self.actor_types {
            filters.actor_types = a;
        }
        if let Some(s) = self.sources {
            filters.sources = s;
        }
        if let Some(i) = self.ignore_own_changes {
            filters.ignore_own_changes = i;
        }
    }
}

/// A notice for the workspace owner (an endpoint the service disabled).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct Notification {
    pub id: u64,
    pub endpoint_id: EndpointId,
    pub reason: String,
    pub created_at: Timestamp,
}

/// What a delivery actor needs to know about its endpoint.
#[derive(Debug, Clone, PartialEq)]
pub struct EndpointConfig {
    pub id: EndpointId,
    pub workspace_id: WorkspaceId,
    pub url: String,
    /// The current signing secret.
    pub secret: String,
    /// Replaced secrets and until when each still signs (the rotation overlap).
    pub previous_secrets: Vec<(String, DateTime<Utc>)>,
    /// Paused and disabled endpoints receive nothing; their deliveries wait.
    pub active: bool,
    /// Created by the operator: a loopback IP literal in `url` is reached (no other
    /// private address, and no name that resolves to one).
    pub loopback_allowed: bool,
    /// What the endpoint may receive now: a stored body is narrowed to it when sent.
    pub disclose: Disclosure,
}

impl EndpointConfig {
    /// An active endpoint `id` of workspace `ws_one` that discloses nothing, for tests.
    #[cfg(test)]
    pub fn sample(id: &str) -> Self {
        Self {
            id: crate::ids::EndpointId::parse(id).expect("an endpoint id"),
            workspace_id: crate::ids::WorkspaceId::parse("ws_one").expect("a workspace id"),
            url: "https://example.com/hook".into(),
            secret: "s".into(),
            previous_secrets: Vec::new(),
            active: true,
            loopback_allowed: false,
            disclose: crate::events::privacy::Disclosure {
                content: false,
                contact_details: false,
            },
        }
    }

    /// The secrets that sign at `now`: the current one, and each replaced one until its
    /// overlap ends. Worked out per attempt, so a retry after the overlap carries one v1.
    pub fn secrets_at(&self, now: DateTime<Utc>) -> Vec<String> {
        let still = self
            .previous_secrets
            .iter()
            .filter(|(_, until)| now < *until);
        std::iter::once(self.secret.clone())
            .chain(still.map(|(old, _)| old.clone()))
            .collect()
    }
}
