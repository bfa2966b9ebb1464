//! Webhook endpoints, their deliveries, test sends and secret rotation. Permission:
//! integrations.

use crate::http::json::Json;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use serde::{Deserialize, Serialize};
use switchboard_actors::delivery::record::DeliveryView;
use switchboard_actors::delivery::sender::Outcome;
use switchboard_actors::domain::webhook::{EndpointChange, EndpointInput, EndpointView};
use switchboard_actors::events::privacy::{redact, Disclosure};
use switchboard_actors::events::{catalog, samples, subscription, Envelope};
use switchboard_actors::events::{DomainEvent, API_VERSION};
use switchboard_actors::ids::{DeliveryId, EndpointId};
use switchboard_actors::workspace::{EndpointCaller, WebhookMsg};
use utoipa::ToSchema;
use utoipa_axum::{router::OpenApiRouter, routes};

use crate::http::auth::{need, Allowed, Ws};
use crate::http::error::{ApiError, ApiResult, ErrorBody};
use crate::http::extract::{parse_id, parse_string_id, ApiJson, NoFields};
use crate::http::object::Obj;
use crate::http::pagination::{ListEnvelope, PageParams, Paging};
use crate::http::AppState;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list_webhooks, create_webhook))
        .routes(routes!(get_webhook, update_webhook, delete_webhook))
        .routes(routes!(rotate_webhook_secret))
        .routes(routes!(test_webhook))
        .routes(routes!(list_webhook_deliveries))
        .routes(routes!(redeliver_webhook_delivery))
}

fn caller(ws: &Ws) -> EndpointCaller {
    EndpointCaller {
        owner_or_admin: ws.role.is_owner_or_admin(),
        hipaa: ws.hipaa,
        connection_id: Some(ws.principal.connection_id()),
    }
}

async fn endpoint(
    app: &AppState,
    ws: &Ws,
    id: &EndpointId,
) -> ApiResult<(
    EndpointView,
    switchboard_actors::domain::webhook::EndpointConfig,
)> {
    app.ask(ws, |r| WebhookMsg::Get {
        id: id.clone(),
        reply: r,
    })
    .await
}

/// The endpoint id of a path; one that is not `we_...` names no endpoint (404).
struct EndpointPath(EndpointId);

impl<S: Send + Sync> axum::extract::FromRequestParts<S> for EndpointPath {
    type Rejection = ApiError;

    async fn from_request_parts(
        parts: &mut axum::http::request::Parts,
        state: &S,
    ) -> Result<Self, ApiError> {
        let Path(raw) = Path::<String>::from_request_parts(parts, state)
            .await
            .map_err(|e| ApiError::bad_request(e.to_string()))?;
        endpoint_id(&raw).map(EndpointPath)
    }
}

fn endpoint_id(raw: &str) -> ApiResult<EndpointId> {
    parse_string_id(raw, EndpointId::parse)
}

#[utoipa::path(get, path = "/api/v1/webhooks", tag = "webhooks",
    params(PageParams),
    responses((status = 200, body = ListEnvelope<EndpointView>), (status = 403, body = ErrorBody)))]
async fn list_webhooks(
    State(app): State<AppState>,
    ws: Allowed<need::Integrations>,
    Paging(page): Paging,
) -> ApiResult<Json<ListEnvelope<Obj<EndpointView>>>> {
    let found = app
        .ask(&ws, |r| WebhookMsg::List { page, reply: r })
        .await?;
    Ok(Json(ListEnvelope::page(found, |e| e.seq)))
}

/// The answer of POST /webhooks: the endpoint and its signing secret, shown only here.
#[derive(Serialize, ToSchema)]
pub struct CreatedEndpoint {
    #[serde(flatten)]
    #[schema(value_type = EndpointView)]
    pub endpoint: Obj<EndpointView>,
    pub secret: String,
}

/// A new URL whose host name resolves to a private address is refused now (422
/// `unsafe_url`), before the workspace is asked.
async fn resolves_publicly(app: &AppState, change: &EndpointChange) -> ApiResult<()> {
    match &change.url {
        Some(url) => super::public_url(app, url).await,
        None => Ok(()),
    }
}

/// Adds an endpoint. https only; private and internal addresses answer 422 `unsafe_url`;
/// 409 `endpoint_limit_reached` beyond 100.
#[utoipa::path(post, path = "/api/v1/webhooks", tag = "webhooks", request_body = EndpointInput,
    responses((status = 201, body = CreatedEndpoint), (status = 403, body = ErrorBody), (status = 409, body = ErrorBody), (status = 422, body = ErrorBody)))]
async fn create_webhook(
    State(app): State<AppState>,
    ws: Allowed<need::Integrations>,
    ApiJson(input): ApiJson<EndpointInput>,
) -> ApiResult<(StatusCode, Json<CreatedEndpoint>)> {
    let change = EndpointChange::parse(input, true, app.settings.webhooks.allow_private)?;
    resolves_publicly(&app, &change).await?;
    let (_origin, who) = (ws.origin(), caller(&ws));
    let (view, secret) = app
        .ask_as(&ws, |origin, r| WebhookMsg::Create {
            origin,
            change: change.clone(),
            caller: who.clone(),
            reply: r,
        })
        .await?;
    Ok((
        StatusCode::CREATED,
        Json(CreatedEndpoint {
            endpoint: Obj(view),
            secret,
        }),
    ))
}

/// The endpoint with its status and last delivery result.
#[utoipa::path(get, path = "/api/v1/webhooks/{id}", tag = "webhooks", params(("id" = String, Path)),
    responses((status = 200, body = EndpointView), (status = 404, body = ErrorBody)))]
async fn get_webhook(
    State(app): State<AppState>,
    ws: Allowed<need::Integrations>,
    EndpointPath(id): EndpointPath,
) -> ApiResult<Json<Obj<EndpointView>>> {
    Ok(Json(Obj(endpoint(&app, &ws, &id).await?.0)))
}

/// Clients may set status `active` (resets the failure count) or `paused`.
#[utoipa::path(patch, path = "/api/v1/webhooks/{id}", tag = "webhooks", params(("id" = String, Path)),
    request_body = EndpointInput,
    responses((status = 200, body = EndpointView), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody), (status = 422, body = ErrorBody)))]
async fn update_webhook(
    State(app): State<AppState>,
    ws: Allowed<need::Integrations>,
    EndpointPath(id): EndpointPath,
    ApiJson(input): ApiJson<EndpointInput>,
) -> ApiResult<Json<Obj<EndpointView>>> {
    let change = EndpointChange::parse(input, false, app.settings.webhooks.allow_private)?;
    resolves_publicly(&app, &change).await?;
    let (_origin, who) = (ws.origin(), caller(&ws));
    let view = app
        .ask_as(&ws, |origin, r| WebhookMsg::Update {
            origin,
            id: id.clone(),
            change: change.clone(),
            caller: who.clone(),
            reply: r,
        })
        .await?;
    Ok(Json(Obj(view)))
}

#[derive(Serialize, ToSchema)]
pub struct EndpointDeleted {
    /// Always `webhook_endpoint`.
    pub object: &'static str,
    pub id: EndpointId,
    pub deleted: bool,
}

#[utoipa::path(delete, path = "/api/v1/webhooks/{id}", tag = "webhooks", params(("id" = String, Path)),
    responses((status = 200, body = EndpointDeleted), (status = 404, body = ErrorBody)))]
async fn delete_webhook(
    State(app): State<AppState>,
    ws: Allowed<need::Integrations>,
    EndpointPath(id): EndpointPath,
) -> ApiResult<Json<EndpointDeleted>> {
    let id = app
        .ask_as(&ws, |origin, reply| WebhookMsg::Delete {
            origin,
            id: id.clone(),
            reply,
        })
        .await?;
    Ok(Json(EndpointDeleted {
        object: "webhook_endpoint",
        id,
        deleted: true,
    }))
}

#[derive(Serialize, ToSchema)]
pub struct RotatedSecret {
    /// Always `webhook_endpoint`.
    pub object: &'static str,
    pub id: EndpointId,
    pub secret: String,
    /// Until then deliveries carry a second v1 signed with the previous secret.
    pub previous_secret_expires_at: String,
}

/// A new signing secret; the previous one keeps signing for the overlap (24 hours).
#[utoipa::path(post, path = "/api/v1/webhooks/{id}/rotate-secret", request_body = Option<NoFields>, tag = "webhooks", params(("id" = String, Path)),
    responses((status = 200, body = RotatedSecret), (status = 404, body = ErrorBody)))]
async fn rotate_webhook_secret(
    State(app): State<AppState>,
    ws: Allowed<need::Integrations>,
    EndpointPath(id): EndpointPath,
    ApiJson(NoFields {}): ApiJson<NoFields>,
) -> ApiResult<Json<RotatedSecret>> {
    let (secret, until) = app
        .ask(&ws, |r| WebhookMsg::RotateSecret {
            id: id.clone(),
            reply: r,
        })
        .await?;
    Ok(Json(RotatedSecret {
        object: "webhook_endpoint",
        id,
        secret,
        previous_secret_expires_at: switchboard_actors::clock::rfc3339_millis::format(&until),
    }))
}

#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct TestInput {
    /// A catalog type or `webhook.test`; defaults to the endpoint's first non-wildcard
    /// event, else `webhook.test`.
    #[serde(default)]
    pub event: Option<String>,
}

#[derive(Serialize, ToSchema)]
pub struct TestResult {
    pub delivered: bool,
    /// The receiver's HTTP status, if it answered.
    pub status: Option<u16>,
    pub error: Option<String>,
    pub duration_ms: u64,
}

/// Sends a signed sample event now and answers how it went.
#[utoipa::path(post, path = "/api/v1/webhooks/{id}/test", tag = "webhooks", params(("id" = String, Path)),
    request_body = TestInput,
    responses((status = 200, body = TestResult), (status = 404, body = ErrorBody), (status = 422, body = ErrorBody)))]
async fn test_webhook(
    State(app): State<AppState>,
    ws: Allowed<need::Integrations>,
    EndpointPath(id): EndpointPath,
    ApiJson(input): ApiJson<TestInput>,
) -> ApiResult<Json<TestResult>> {
    let (view, cfg) = endpoint(&app, &ws, &id).await?;
    let event_type = match input.event {
        Some(e) if e == "webhook.test" || catalog::find(&e).is_some() => e,
        Some(_) => {
            return Err(ApiError::invalid(
                "event",
                "must be an event type of the catalog or webhook.test",
            ))
        }
        None => subscription::first_exact(&view.events)
            .unwrap_or("webhook.test")
            .to_string(),
    };
    let mut envelope = sample_envelope(&ws, &id, &event_type);
    let disclose = Disclosure {
        content: view.include_content && !ws.hipaa,
        contact_details: view.include_contact_details && !ws.hipaa,
    };
    redact(
        &envelope.event_type,
        &mut envelope.data,
        &mut envelope.changes,
        disclose,
    );
    let body = serde_json::to_string(&envelope).map_err(ApiError::internal)?;
    let result = app
        .dispatcher
        .send_now(&cfg, &envelope.id, &envelope.event_type, &body)
        .await;
    Ok(Json(TestResult {
        delivered: result.outcome == Outcome::Delivered,
        status: result.status_code,
        error: result.error,
        duration_ms: result.duration_ms,
    }))
}

/// The envelope of a test send: the catalog type's sample (shaped as real operations make
/// it, about the resource a real event is about), or `webhook.test` about the endpoint.
fn sample_envelope(ws: &Ws, endpoint: &str, event_type: &str) -> Envelope {
    let now = app_now();
    if let Some(sample) = samples::sample(event_type, ws.id.as_str()) {
        let kind = catalog::find(event_type).map_or("webhook.test", |k| k.name);
        return Envelope::new(&ws.id, &ws.origin(), &sample.into_event(kind), now);
    }
    let mut e = Envelope::new(
        &ws.id,
        &ws.origin(),
        &DomainEvent::new(
            "tag.created",
            "webhook_endpoint",
            endpoint,
            serde_json::Value::Null,
        ),
        now,
    );
    e.event_type = event_type.to_string();
    e.data = serde_json::json!({"message": "A test event from Switchboard.", "api_version": API_VERSION});
    e
}

fn app_now() -> chrono::DateTime<chrono::Utc> {
    chrono::Utc::now()
}

/// Delivery records, newest first, kept 30 days.
#[utoipa::path(get, path = "/api/v1/webhooks/{id}/deliveries", tag = "webhooks",
    params(("id" = String, Path), PageParams),
    responses((status = 200, body = ListEnvelope<DeliveryView>), (status = 404, body = ErrorBody)))]
async fn list_webhook_deliveries(
    State(app): State<AppState>,
    ws: Allowed<need::Integrations>,
    EndpointPath(id): EndpointPath,
    Paging(page): Paging,
) -> ApiResult<Json<ListEnvelope<Obj<DeliveryView>>>> {
    let (_, cfg) = endpoint(&app, &ws, &id).await?;
    let found = app.dispatcher.deliveries(cfg, page).await?;
    let page = switchboard_actors::domain::page::Page {
        items: found.items.iter().map(|d| d.view()).collect(),
        has_more: found.has_more,
    };
    Ok(Json(ListEnvelope::page(page, |d| d.id)))
}

/// Queues the delivery again (as a new delivery of the same event); answers 202.
#[utoipa::path(post, path = "/api/v1/webhooks/{id}/deliveries/{delivery_id}/redeliver", request_body = Option<NoFields>, tag = "webhooks",
    params(("id" = String, Path), ("delivery_id" = u64, Path)),
    responses((status = 202, body = DeliveryView), (status = 400, body = ErrorBody), (status = 404, body = ErrorBody)))]
async fn redeliver_webhook_delivery(
    State(app): State<AppState>,
    ws: Allowed<need::Integrations>,
    Path((id, delivery)): Path<(String, String)>,
    ApiJson(NoFields {}): ApiJson<NoFields>,
) -> ApiResult<(StatusCode, Json<Obj<DeliveryView>>)> {
    let delivery = DeliveryId(parse_id(&delivery)?);
    let (_, cfg) = endpoint(&app, &ws, &endpoint_id(&id)?).await?;
    let queued = app.dispatcher.redeliver(cfg, delivery).await?;
    Ok((StatusCode::ACCEPTED, Json(Obj(queued.view()))))
}
