//! Webhook endpoints of the workspace, the staging of deliveries, the endpoint health that
//! delivery outcomes update, and owner notifications.

use crate::clock::Timestamp;
use std::collections::{BTreeMap, HashMap};

use chrono::{DateTime, Utc};
use serde_json::Value;

use super::{
    answer, finish, load_upgrading, record_prefix, Change, Ctx, Handled, OutletChange, Reply,
    WorkspaceData,
};
use crate::delivery::record::{self, Delivery, DeliveryStatus};
use crate::delivery::sender::Outcome;
use crate::delivery::Report;
use crate::domain::page::{Page, PageRequest};
use crate::domain::webhook::{
    CreatedVia, Endpoint, EndpointChange, EndpointStatus, EndpointView, Filters, LastDelivery,
    Notification, MAX_ENDPOINTS, OPERATOR,
};
use crate::domain::webhook::{EndpointConfig, EndpointV1};
use crate::domain::DomainError;
use crate::events::privacy::{redact_quoting, Disclosure};
use crate::events::{catalog, subscription, DomainEvent, Envelope, Origin};
use crate::ids::{ContactId, ConversationId, EndpointId, EventId, WorkspaceId};
use crate::store::{decode, Appended, Batch, Store};

/// Who is changing an endpoint, for the rules that depend on it.
#[derive(Debug, Clone)]
pub struct EndpointCaller {
    pub owner_or_admin: bool,
    pub hipaa: bool,
    /// The credential's connection id, remembered for ignore_own_changes.
    pub connection_id: Option<String>,
}

#[derive(strum::IntoStaticStr)]
#[strum(prefix = "webhook.", serialize_all = "snake_case")]
pub enum WebhookMsg {
    List {
        page: PageRequest,
        reply: Reply<Page<EndpointView>>,
    },
    /// The endpoint's view and what its delivery actor needs.
    Get {
        id: EndpointId,
        reply: Reply<(EndpointView, EndpointConfig)>,
    },
    /// Answers the view and the new secret (shown once).
    Create {
        origin: Origin,
        change: EndpointChange,
        caller: EndpointCaller,
        reply: Reply<(EndpointView, String)>,
    },
    Update {
        origin: Origin,
        id: EndpointId,
        change: EndpointChange,
        caller: EndpointCaller,
        reply: Reply<EndpointView>,
    },
    Delete {
        origin: Origin,
        id: EndpointId,
        reply: Reply<EndpointId>,
    },
    /// Answers the new secret and until when the previous one still signs.
    RotateSecret {
        id: EndpointId,
        reply: Reply<(String, DateTime<Utc>)>,
    },
    /// An attempt's outcome, from the delivery actors.
    Outcome(Report),
    Notifications {
        page: PageRequest,
        reply: Reply<Page<Notification>>,
    },
    /// Emits an event of any catalog type through the normal pipeline (operator trigger).
    Emit {
        origin: Origin,
        event_type: String,
        data: Value,
        reply: Reply<EventId>,
    },
}

const KIND: &str = "we";
const NOTIFICATION: &str = "ntf";

#[derive(Default)]
pub struct Webhooks {
    by_seq: BTreeMap<u64, Endpoint>,
    seq_of: HashMap<EndpointId, u64>,
    notifications: BTreeMap<u64, Notification>,
}

impl Webhooks {
    pub fn load(store: &Store, ws: &WorkspaceId) -> Result<Self, DomainError> {
        let mut w = Self::default();
        // Endpoints stored before `older_secrets` existed read in their first shape.
        let endpoints = load_upgrading(store, ws, KIND, |key, raw, writes| {
            let e = Endpoint::from(decode::<EndpointV1>(raw)?);
            writes.put(key, &e)?;
            Ok(Some(e))
        })?;
        for e in endpoints {
            w.seq_of.insert(e.id.clone(), e.seq);
            w.by_seq.insert(e.seq, e);
        }
        for (_, n) in store.scan::<Notification>(&record_prefix(ws, NOTIFICATION))? {
            w.notifications.insert(n.id, n);
        }
        Ok(w)
    }

    pub fn len(&self) -> usize {
        self.by_seq.len()
    }

    pub fn is_empty(&self) -> bool {
        self.by_seq.is_empty()
    }

    fn get(&self, id: &str) -> Result<&Endpoint, DomainError> {
        self.seq_of
            .get(id)
            .and_then(|s| self.by_seq.get(s))
            .ok_or(DomainError::NotFound("webhook endpoint"))
    }

    fn put(&mut self, ctx: &Ctx, e: Endpoint, writes: &mut Batch) -> Result<(), DomainError> {
        writes.put(ctx.key(KIND, e.seq), &e)?;
        self.seq_of.insert(e.id.clone(), e.seq);
        self.by_seq.insert(e.seq, e);
        Ok(())
    }

    /// What the endpoint's delivery actor needs.
    pub fn config(ws: &WorkspaceId, e: &Endpoint) -> EndpointConfig {
        EndpointConfig {
            id: e.id.clone(),
            workspace_id: ws.clone(),
            url: e.url.clone(),
            secret: e.secret.clone(),
            previous_secrets: e.previous_secrets(),
            active: e.status == EndpointStatus::Active,
            loopback_allowed: e.created_by.as_deref() == Some(OPERATOR),
            disclose: disclosure(e),
        }
    }

    /// A page of the owner's notices (endpoints the service disabled), newest first.
    pub(super) fn owner_notifications(&self, page: PageRequest) -> Page<Notification> {
        page.select(&self.notifications, |_| true)
    }

    /// Whether any endpoint is active: without one, no event is delivered.
    pub fn any_active(&self) -> bool {
        self.by_seq
            .values()
            .any(|e| e.status == EndpointStatus::Active)
    }

    /// Every endpoint's configuration (for resuming deliveries after a restart).
    pub fn configs(&self, ws: &WorkspaceId) -> Vec<EndpointConfig> {
        self.by_seq.values().map(|e| Self::config(ws, e)).collect()
    }

    /// Writes one pending delivery per (event, subscribed endpoint) into `batch`, with the
    /// body rendered for that endpoint; answers the endpoints to wake once it is durable.
    /// `details_of` gives the contact details of the contact an event is about (see
    /// [`Subject`]), withheld where the event's kept fields quote them.
    #[allow(clippy::too_many_arguments)]
    pub fn stage(
        &self,
        ws: &WorkspaceId,
        store: &Store,
        origin: &Origin,
        events: &[DomainEvent],
        now: DateTime<Utc>,
        details_of: &dyn Fn(Subject) -> Vec<String>,
        batch: &mut Batch,
    ) -> Result<Vec<EndpointConfig>, DomainError> {
        let mut woken: Vec<EndpointConfig> = Vec::new();
        // Most writes happen in workspaces without an active endpoint: no envelope to build.
        if !self.any_active() {
            return Ok(woken);
        }
        for event in events {
            let envelope = Envelope::new(ws, origin, event, now);
            let mut details: Option<Vec<String>> = None;
            for e in self.by_seq.values().filter(|e| receives(e, &envelope)) {
                if event.unheard {
                    // A handler that can activate an endpoint must not be run unheard.
                    return Err(DomainError::Internal(format!(
                        "{} was made without its data while endpoint {} was active",
                        event.event_type, e.id
                    )));
                }
                let mut rendered = envelope.clone();
                let disclose = disclosure(e);
                let details: &[String] = details
                    .get_or_insert_with(|| subject(event).map(details_of).unwrap_or_default());
                redact_quoting(
                    &rendered.event_type,
                    &mut rendered.data,
                    &mut rendered.changes,
                    disclose,
                    details,
                );
                // Disclosed now, and kept for an attempt made after they no longer are.
                let quoted_details = match disclose.contact_details {
                    true => details.to_vec(),
                    false => Vec::new(),
                };
                let body = serde_json::to_string(&rendered)
                    .map_err(|x| DomainError::Internal(x.to_string()))?;
                let d = Delivery {
                    id: crate::ids::DeliveryId(store.next_id()?),
                    endpoint_id: e.id.clone(),
                    workspace_id: ws.clone(),
                    event_id: rendered.id.clone(),
                    event_type: rendered.event_type.clone(),
                    body,
                    status: DeliveryStatus::Pending,
                    attempts: Vec::new(),
                    next_attempt_at: Some(Timestamp(now)),
                    created_at: Timestamp(now),
                    quoted_details: Appended(quoted_details),
                };
                record::put(batch, &d)?;
                if !woken.iter().any(|c| c.id == e.id) {
                    woken.push(Self::config(ws, e));
                }
            }
        }
        Ok(woken)
    }
}

/// Whom an event is about, as it names them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Subject {
    /// A contact event's own contact, or the `contact_id` its record names.
    Contact(ContactId),
    /// The conversation of a record that names no contact (a comment, a feedback): its
    /// contact is the one.
    Conversation(ConversationId),
}

fn subject(event: &DomainEvent) -> Option<Subject> {
    let field = |name: &str| event.data.get(name).and_then(Value::as_u64);
    if event.resource_type == "contact" {
        return event
            .resource_id
            .parse()
            .ok()
            .map(ContactId)
            .map(Subject::Contact);
    }
    field("contact_id")
        .map(|id| Subject::Contact(ContactId(id)))
        .or_else(|| field("conversation_id").map(|id| Subject::Conversation(ConversationId(id))))
}

/// What an endpoint may receive: never content or contact details on a HIPAA workspace.
fn disclosure(e: &Endpoint) -> Disclosure {
    Disclosure {
        content: e.include_content && !e.hipaa,
        contact_details: e.include_contact_details && !e.hipaa,
    }
}

/// Subscription, status and filters of one endpoint for one event.
fn receives(e: &Endpoint, ev: &Envelope) -> bool {
    let f = &e.filters;
    let channel_ok = f.channels.is_empty()
        || match ev.data.get("channel").and_then(Value::as_str) {
            None => true,
            Some(ch) => f.channels.iter().any(|c| {
                serde_json::to_value(c)
                    .ok()
                    .and_then(|v| v.as_str().map(|s| s == ch))
                    .unwrap_or(false)
            }),
        };
    let own =
        f.ignore_own_changes && e.created_by.is_some() && e.created_by == ev.source.connection_id;
    e.status == EndpointStatus::Active
        && subscription::matches(&e.events, &ev.event_type)
        && (f.actor_types.is_empty() || f.actor_types.contains(&ev.actor.kind))
        && channel_ok
        && f.sources
            .get(&ev.event_type)
            .is_none_or(|keys| keys.contains(&ev.source.via))
        && !own
}

pub(super) fn handle(msg: WebhookMsg, data: &mut WorkspaceData, ctx: &Ctx) -> Handled {
    match msg {
        WebhookMsg::List { page, reply } => {
            let found = page.select(&data.webhooks.by_seq, |_| true);
            answer(
                reply,
                Ok(Page {
                    items: found.items.iter().map(Endpoint::view).collect(),
                    has_more: found.has_more,
                }),
            )
        }
        WebhookMsg::Get { id, reply } => answer(
            reply,
            data.webhooks
                .get(&id)
                .map(|e| (e.view(), Webhooks::config(ctx.workspace, e))),
        ),
        WebhookMsg::Create {
            origin: o,
            change,
            caller,
            reply,
        } => finish(reply, o, create(data, ctx, change, caller)),
        WebhookMsg::Update {
            origin: o,
            id,
            change,
            caller,
            reply,
        } => finish(reply, o, update(data, ctx, &id, change, caller)),
        WebhookMsg::Delete {
            origin: o,
            id,
            reply,
        } => finish(reply, o, delete(data, ctx, &id)),
        WebhookMsg::RotateSecret { id, reply } => {
            finish(reply, Origin::system(), rotate(data, ctx, &id))
        }
        WebhookMsg::Outcome(report) => {
            let Report {
                endpoint,
                last,
                outcome,
                ..
            } = report;
            if let Err(e) = record_outcome(data, ctx, &endpoint, last, outcome) {
                tracing::error!(error = %e, %endpoint, "could not record a delivery outcome");
            }
            Handled::Done
        }
        WebhookMsg::Notifications { page, reply } => answer(
            reply,
            Ok(page.select(&data.webhooks.notifications, |_| true)),
        ),
        WebhookMsg::Emit {
            origin: o,
            event_type,
            data: data_in,
            reply,
        } => finish(reply, o, emit(ctx.workspace, &event_type, data_in)),
    }
}

fn check_disclosure(
    change: &EndpointChange,
    caller: &EndpointCaller,
    current: Option<&Endpoint>,
) -> Result<(), DomainError> {
    if change.enables_disclosure() {
        if caller.hipaa {
            let path = if change.include_content == Some(true) {
                "include_content"
            } else {
                "include_contact_details"
            };
            return Err(DomainError::invalid(
                path,
                "is never allowed on a HIPAA workspace",
            ));
        }
        if !caller.owner_or_admin && change.turns_on_disclosure(current) {
            return Err(DomainError::Forbidden(
                "only an owner or admin may turn on include_content or include_contact_details"
                    .into(),
            ));
        }
    }
    if let Some(e) = current {
        if e.discloses() && change.touches_routing() && !caller.owner_or_admin {
            return Err(DomainError::Forbidden(
                "this endpoint receives content or contact details: only an owner or admin may change its url, events or filters".into(),
            ));
        }
    }
    Ok(())
}

fn create(
    data: &mut WorkspaceData,
    ctx: &Ctx,
    change: EndpointChange,
    caller: EndpointCaller,
) -> Result<Change<(EndpointView, String)>, DomainError> {
    check_disclosure(&change, &caller, None)?;
    if data.webhooks.len() >= MAX_ENDPOINTS {
        return Err(DomainError::Conflict {
            code: "endpoint_limit_reached",
            message: format!("a workspace can have at most {MAX_ENDPOINTS} webhook endpoints"),
        });
    }
    let created_via = change.created_via.unwrap_or(CreatedVia::Api);
    let mut filters = Filters {
        ignore_own_changes: created_via != CreatedVia::Api,
        ..Filters::default()
    };
    if let Some(f) = change.filters {
        f.apply(&mut filters);
    }
    let secret = crate::events::signature::new_secret();
    let e = Endpoint {
        seq: ctx.next_id()?,
        id: EndpointId::generate(),
        url: change.url.unwrap_or_default(),
        events: change.events.unwrap_or_default(),
        description: change.description.apply_to(None),
        filters,
        include_content: change.include_content.unwrap_or(false),
        include_contact_details: change.include_contact_details.unwrap_or(false),
        created_via,
        created_by: caller.connection_id,
        hipaa: caller.hipaa,
        status: EndpointStatus::Active,
        disabled_reason: None,
        secret: secret.clone(),
        previous_secret: None,
        previous_secret_expires_at: None,
        older_secrets: Vec::new(),
        failure_count: 0,
        failing_since: None,
        last_delivery: None,
        created_at: ctx.now,
        updated_at: ctx.now,
    };
    let mut writes = Batch::default();
    let view = e.view();
    data.webhooks.put(ctx, e, &mut writes)?;
    Ok(Change::new((view, secret), writes, Vec::new()))
}

fn update(
    data: &mut WorkspaceData,
    ctx: &Ctx,
    id: &str,
    change: EndpointChange,
    caller: EndpointCaller,
) -> Result<Change<EndpointView>, DomainError> {
    let current = data.webhooks.get(id)?.clone();
    check_disclosure(&change, &caller, Some(&current))?;
    if current.status == EndpointStatus::Disabled && change.status == Some(EndpointStatus::Paused) {
        // Disabled is the system's word on the endpoint; only re-activating answers it.
        return Err(DomainError::conflict(
            "the endpoint is disabled: set status active to resume it",
        ));
    }
    let mut e = current.clone();
    if let Some(u) = change.url {
        e.url = u;
    }
    if let Some(ev) = change.events {
        e.events = ev;
    }
    e.description = change.description.apply_to(e.description.take());
    if let Some(f) = change.filters {
        f.apply(&mut e.filters);
    }
    if let Some(v) = change.include_content {
        e.include_content = v;
    }
    if let Some(v) = change.include_contact_details {
        e.include_contact_details = v;
    }
    match change.status {
        Some(EndpointStatus::Active) => {
            // Re-activating starts the failure window afresh.
            e.status = EndpointStatus::Active;
            e.disabled_reason = None;
            e.failure_count = 0;
            e.failing_since = None;
        }
        Some(s) => e.status = s,
        None => {}
    }
    let mut writes = Batch::default();
    if e != current {
        e.updated_at = ctx.now;
        data.webhooks.put(ctx, e.clone(), &mut writes)?;
        let told = OutletChange::Endpoint(Webhooks::config(ctx.workspace, &e));
        ctx.outlets.borrow_mut().push(told);
    }
    Ok(Change::new(e.view(), writes, Vec::new()))
}

fn delete(
    data: &mut WorkspaceData,
    ctx: &Ctx,
    id: &EndpointId,
) -> Result<Change<EndpointId>, DomainError> {
    let seq = data.webhooks.get(id)?.seq;
    data.webhooks.by_seq.remove(&seq);
    data.webhooks.seq_of.remove(id);
    let mut writes = Batch::default();
    writes.delete(ctx.key(KIND, seq));
    ctx.outlets
        .borrow_mut()
        .push(OutletChange::EndpointRemoved(id.clone()));
    Ok(Change::new(id.clone(), writes, Vec::new()))
}

fn rotate(
    data: &mut WorkspaceData,
    ctx: &Ctx,
    id: &str,
) -> Result<Change<(String, DateTime<Utc>)>, DomainError> {
    let mut e = data.webhooks.get(id)?.clone();
    let overlap =
        chrono::Duration::from_std(ctx.dispatcher.settings().secret_overlap).unwrap_or_default();
    let until = ctx.now + overlap;
    let secret = crate::events::signature::new_secret();
    e.rotate(secret.clone(), *ctx.now, *until);
    e.updated_at = ctx.now;
    let mut writes = Batch::default();
    data.webhooks.put(ctx, e.clone(), &mut writes)?;
    let told = OutletChange::Endpoint(Webhooks::config(ctx.workspace, &e));
    ctx.outlets.borrow_mut().push(told);
    Ok(Change::new((secret, *until), writes, Vec::new()))
}

/// Keeps the endpoint's health: a success clears the failure window; a 410 disables at
/// once; failing for the whole window disables and notifies the owner.
fn record_outcome(
    data: &mut WorkspaceData,
    ctx: &Ctx,
    id: &str,
    last: LastDelivery,
    outcome: Outcome,
) -> Result<(), DomainError> {
    let Ok(current) = data.webhooks.get(id).cloned() else {
        return Ok(());
    };
    let mut e = current.clone();
    let at = last.attempted_at;
    e.last_delivery = Some(last);
    let window =
        chrono::Duration::from_std(ctx.dispatcher.settings().disable_after).unwrap_or_default();
    let mut disabled = None;
    match outcome {
        Outcome::Delivered => {
            e.failure_count = 0;
            e.failing_since = None;
        }
        Outcome::Gone => {
            e.failure_count += 1;
            disabled = Some("the receiver answered 410 Gone".to_string());
        }
        Outcome::Failed => {
            e.failure_count += 1;
            let since = *e.failing_since.get_or_insert(at);
            if at - since >= window {
                disabled = Some(format!(
                    "deliveries failed continuously for {}",
                    humanize(ctx.dispatcher.settings().disable_after)
                ));
            }
        }
    }
    let mut writes = Batch::default();
    if let Some(reason) = disabled.filter(|_| e.status == EndpointStatus::Active) {
        e.status = EndpointStatus::Disabled;
        e.disabled_reason = Some(reason.clone());
        let n = Notification {
            id: ctx.next_id()?,
            endpoint_id: e.id.clone(),
            reason,
            created_at: ctx.now,
        };
        writes.put(ctx.key(NOTIFICATION, n.id), &n)?;
        data.webhooks.notifications.insert(n.id, n);
    }
    if e != current {
        let disabled_now =
            (e.status != current.status).then(|| Webhooks::config(ctx.workspace, &e));
        data.webhooks.put(ctx, e, &mut writes)?;
        ctx.store.apply(writes)?;
        // Stored first: a disable the store refused must not stop the deliveries.
        if let Some(cfg) = disabled_now {
            ctx.dispatcher.count_disabled();
            ctx.dispatcher.configure(cfg);
        }
    }
    Ok(())
}

fn humanize(d: std::time::Duration) -> String {
    let s = d.as_secs();
    if s >= 3600 && s.is_multiple_of(3600) {
        format!("{} hours", s / 3600)
    } else {
        format!("{s} seconds")
    }
}

/// An event of any catalog type with the given (or sample) data, answered with its id.
fn emit(
    ws: &WorkspaceId,
    event_type: &str,
    data_in: Value,
) -> Result<Change<EventId>, DomainError> {
    let kind = catalog::find(event_type)
        .ok_or_else(|| DomainError::invalid("type", "is not an event type of the catalog"))?;
    let event_id = EventId::generate();
    let mut event = match crate::events::samples::sample(kind.name, ws.as_str()) {
        // No data: the sample, about the resource a real event of the type is about.
        Some(sample) if data_in.is_null() => sample.into_event(kind.name),
        _ => {
            let resource = kind.name.split('.').next().unwrap_or("event");
            let id = data_in
                .get("id")
                .map(|v| v.to_string().trim_matches('"').to_string())
                .unwrap_or_default();
            DomainEvent::new(kind.name, resource_type(resource), id, data_in)
        }
    };
    event.event_id = Some(event_id.clone());
    Ok(Change::new(event_id, Batch::default(), vec![event]))
}

fn resource_type(prefix: &str) -> &'static str {
    match prefix {
        "contact" => "contact",
        "note" => "note",
        "conversation" => "conversation",
        "message" => "message",
        "handover" => "handover",
        "ai_turn" => "ai_turn",
        "message_feedback" => "message_feedback",
        "booking" => "booking",
        "reminder" | "appointment_reminder" => "reminder",
        "order" => "order",
        "product" => "product",
        "call" => "call",
        "campaign" | "campaign_recipient" => "campaign",
        "form" => "form",
        "channel" => "channel",
        "credits" => "credits",
        "tag" => "tag",
        _ => "event",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(millis: i64) -> DateTime<Utc> {
        DateTime::from_timestamp_millis(millis).unwrap()
    }

    fn stored_before_older_secrets() -> EndpointV1 {
        let t = Timestamp(at(1_795_000_000_000));
        EndpointV1 {
            seq: 3,
            id: EndpointId::parse("we_old").unwrap(),
            url: "https://hooks.example.com/a".into(),
            events: vec!["tag.*".into()],
            description: None,
            filters: Filters::default(),
            include_content: false,
            include_contact_details: false,
            created_via: CreatedVia::Api,
            created_by: None,
            hipaa: false,
            status: EndpointStatus::Active,
            disabled_reason: None,
            secret: "whsec_now".into(),
            previous_secret: Some("whsec_before".into()),
            previous_secret_expires_at: Some(t),
            failure_count: 0,
            failing_since: None,
            last_delivery: None,
            created_at: t,
            updated_at: t,
        }
    }

    #[test]
    fn an_endpoint_stored_before_older_secrets_loads_and_is_stored_anew() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        let ws = WorkspaceId::generate();
        let key = super::super::record_key(&ws, KIND, 3);
        let mut batch = Batch::default();
        batch
            .put(key.clone(), &stored_before_older_secrets())
            .unwrap();
        store.apply(batch).unwrap();

        let hooks = Webhooks::load(&store, &ws).unwrap();
        let e = hooks.get("we_old").unwrap();
        assert_eq!(e, &Endpoint::from(stored_before_older_secrets()));
        assert_eq!(
            e.previous_secrets(),
            vec![("whsec_before".into(), at(1_795_000_000_000))]
        );
        let again: Endpoint = store
            .get(&key)
            .unwrap()
            .expect("stored in the current shape");
        assert_eq!(&again, e);
    }

    #[test]
    fn an_event_made_unheard_is_never_delivered_with_its_data_missing() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        let ws = WorkspaceId::generate();
        let mut batch = Batch::default();
        let key = super::super::record_key(&ws, KIND, 3);
        batch.put(key, &stored_before_older_secrets()).unwrap();
        store.apply(batch).unwrap();
        let hooks = Webhooks::load(&store, &ws).unwrap();
        assert!(hooks.any_active());
        let tag = crate::domain::tag::Tag {
            id: crate::ids::TagId(9),
            name: crate::domain::tag::TagName::parse("vip").unwrap(),
            color: None,
            created_at: Timestamp(at(1_800_000_000_000)),
            updated_at: Timestamp(at(1_800_000_000_000)),
        };
        let event = |unheard| {
            let _scope = crate::events::Unheard::begin(unheard);
            DomainEvent::record("tag.created", "tag", tag.id, &tag)
        };
        let stage = |e: DomainEvent| {
            let mut batch = Batch::default();
            let staged = hooks.stage(
                &ws,
                &store,
                &Origin::system(),
                &[e],
                at(1_800_000_000_000),
                &|_| Vec::new(),
                &mut batch,
            );
            staged.map(|woken| (woken.len(), batch.len()))
        };

        let heard = event(false);
        assert_eq!(heard.data["name"], "vip");
        // One delivery: its record and its pending index entry.
        assert_eq!(stage(heard).unwrap(), (1, 2));
        let unheard = event(true);
        assert!(unheard.unheard && unheard.data.is_null());
        match stage(unheard) {
            Err(DomainError::Internal(m)) => assert!(m.contains("tag.created"), "{m}"),
            other => panic!("an unheard event was staged: {other:?}"),
        }
        // The scope ends with its guard: events made after it carry their data again.
        assert!(!event(false).unheard);
        assert!(!DomainEvent::record("tag.created", "tag", tag.id, &tag).unheard);
    }

    #[test]
    fn rotations_keep_replaced_secrets_until_their_overlaps_end_and_at_most_a_few() {
        let mut e = Endpoint::from(stored_before_older_secrets());
        e.previous_secret = None;
        e.previous_secret_expires_at = None;
        let hour = 3_600_000;
        let day = 24 * hour;
        let start = 1_800_000_000_000;
        // Eight rotations an hour apart, each replaced secret overlapping a day.
        for n in 0..8 {
            let now = at(start + n * hour);
            e.rotate(format!("whsec_{n}"), now, at(start + n * hour + day));
        }
        let now = at(start + 7 * hour);
        let cfg = Webhooks::config(&WorkspaceId::generate(), &e);
        let signing = cfg.secrets_at(now);
        assert_eq!(signing[0], "whsec_7");
        assert_eq!(
            signing[1..],
            ["whsec_6", "whsec_5", "whsec_4", "whsec_3", "whsec_2"]
        );
        // A day after the fourth rotation, the secrets it and the ones before replaced
        // stop signing.
        let later = at(start + 3 * hour + day + 1);
        assert_eq!(
            cfg.secrets_at(later)[1..],
            ["whsec_6", "whsec_5", "whsec_4", "whsec_3"]
        );
        // A rotation after every overlap ended keeps just the secret it replaces.
        e.rotate("whsec_9".into(), at(start + 9 * day), at(start + 10 * day));
        assert_eq!(e.previous_secrets().len(), 1);
        assert!(e.older_secrets.is_empty());
    }
}
