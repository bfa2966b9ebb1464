//! The operator API on its own listener. Every call needs
//! `Authorization: Bearer <admin token>`; bodies and errors use the standard format.

pub mod backup;
pub mod cluster;
pub mod dashboard;
pub mod endpoints;
pub mod metrics;
pub mod process;

use std::collections::BTreeSet;

use axum::extract::{Path, Request, State};
use axum::http::{header, StatusCode};
use axum::middleware::{from_fn_with_state, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde::{Deserialize, Serialize};
use switchboard_actors::directory::{hash_secret, Membership, Permission, Role, User, Workspace};
use switchboard_actors::domain::credits::{CreditsView, MAX_ALLOWANCE};
use switchboard_actors::domain::custom_field::CustomField;
use switchboard_actors::domain::funnel::{Funnel, NewFunnel, NewFunnelInput};
use switchboard_actors::domain::webhook::Notification;
use switchboard_actors::events::Origin;
use switchboard_actors::ids::CustomFieldId;
use switchboard_actors::ids::{UserId, WorkspaceId};
use switchboard_actors::workspace::{
    CreditsMsg, CustomFieldMsg, FunnelMsg, WebhookMsg, WorkspaceMsg,
};

use crate::http::error::{ApiError, ApiResult};
use crate::http::extract::{ApiJson, ApiQuery, NoFields};
use crate::http::object::Obj;
use crate::http::pagination::{ListEnvelope, PageParams, Place};
use crate::http::AppState;

pub fn router(state: AppState) -> Router {
    Router::new()
        .route(
            "/admin/workspaces",
            post(create_workspace).get(list_workspaces),
        )
        .route("/admin/workspaces/{id}/api-keys", post(create_api_key))
        .route("/admin/api-keys/revoke", post(revoke_api_key))
        .route("/admin/users", post(create_user))
        .route("/admin/workspaces/{id}/members", post(add_member))
        .route("/admin/users/{id}/tokens", post(issue_token))
        .route("/admin/workspaces/{id}/funnels", post(create_funnel))
        .route("/admin/workspaces/{id}/credits", post(set_credits))
        .route("/metrics", get(prometheus))
        .route("/admin/actors", get(list_actors))
        .route("/admin/process", get(process::usage))
        .route("/admin/workspaces/{id}/stats", get(workspace_stats))
        .route("/admin/workspaces/{id}/events", post(trigger_event))
        .route(
            "/admin/workspaces/{id}/notifications",
            get(list_notifications),
        )
        .route(
            "/admin/workspaces/{id}/custom-fields/{field_id}/archive",
            post(archive_custom_field),
        )
        .route("/admin/backup", post(backup::backup))
        .route("/admin/cluster", get(cluster::cluster))
        .route(
            "/admin/health",
            get(|State(app): State<AppState>| async move {
                crate::http::store_health::report(&app.store)
            }),
        )
        .merge(endpoints::router())
        .layer(from_fn_with_state(state.clone(), pass_to_owner))
        .layer(from_fn_with_state(state.clone(), require_admin))
        .layer(axum::middleware::from_fn(crate::http::json_rejections))
        .layer(tower_http::catch_panic::CatchPanicLayer::custom(
            crate::http::error::panicked,
        ))
        .fallback(|| async { ApiError::new(StatusCode::NOT_FOUND, "not_found", "no such route") })
        .with_state(state)
}

/// In a cluster, an operator request on a workspace another node owns is answered there.
async fn pass_to_owner(State(app): State<AppState>, req: Request, next: Next) -> Response {
    match crate::http::forward::route_operator(&app, req).await {
        Ok(req) => next.run(req).await,
        Err(answered) => answered,
    }
}

async fn require_admin(State(app): State<AppState>, req: Request, next: Next) -> Response {
    let presented = req
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(crate::http::auth::bearer_token)
        .map(hash_secret);
    match presented {
        Some(h) if constant_time_eq(h.as_bytes(), app.admin_token_hash.as_bytes()) => {
            next.run(req).await
        }
        Some(_) => ApiError::new(
            StatusCode::UNAUTHORIZED,
            "invalid_token",
            "wrong admin token",
        )
        .into_response(),
        None => {
            ApiError::unauthenticated("send Authorization: Bearer <admin token>").into_response()
        }
    }
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

fn workspace_id(raw: &str) -> Result<WorkspaceId, ApiError> {
    WorkspaceId::parse(raw).ok_or_else(|| ApiError::not_found("workspace"))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct NewWorkspace {
    name: String,
    #[serde(default)]
    hipaa: bool,
}

#[derive(Serialize)]
struct CreatedWorkspace {
    #[serde(flatten)]
    workspace: Obj<Workspace>,
    api_key: String,
}

async fn create_workspace(
    State(app): State<AppState>,
    ApiJson(body): ApiJson<NewWorkspace>,
) -> ApiResult<(StatusCode, Json<CreatedWorkspace>)> {
    let (workspace, _, key) = app
        .directory
        .create_workspace(&body.name, body.hipaa)
        .await?;
    Ok((
        StatusCode::CREATED,
        Json(CreatedWorkspace {
            workspace: Obj(workspace),
            api_key: key.plain,
        }),
    ))
}

/// Workspaces, newest first, a page at a time as the API's lists (`limit`, `starting_after`).
async fn list_workspaces(
    State(app): State<AppState>,
    ApiQuery(q): ApiQuery<PageParams>,
) -> ApiResult<Json<ListEnvelope<Obj<Workspace>>>> {
    let page = q.page_by_place(app.directory.workspaces(), |w| Place {
        at_ms: w.created_at.0.timestamp_millis(),
        id: w.id.as_str().as_bytes().to_vec(),
    })?;
    Ok(Json(page.map(Obj)))
}

async fn create_api_key(
    State(app): State<AppState>,
    Path(id): Path<String>,
    ApiJson(NoFields {}): ApiJson<NoFields>,
) -> ApiResult<(StatusCode, Json<serde_json::Value>)> {
    let ws = workspace_id(&id)?;
    let key = app.directory.create_api_key(&ws).await?;
    Ok((
        StatusCode::CREATED,
        Json(serde_json::json!({"object": "api_key", "workspace_id": ws, "api_key": key.plain})),
    ))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Revoke {
    api_key: String,
}

async fn revoke_api_key(
    State(app): State<AppState>,
    ApiJson(body): ApiJson<Revoke>,
) -> ApiResult<Json<serde_json::Value>> {
    app.directory.revoke_api_key(&body.api_key).await?;
    Ok(Json(serde_json::json!({"revoked": true})))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct NewUser {
    name: String,
    email: String,
}

async fn create_user(
    State(app): State<AppState>,
    ApiJson(body): ApiJson<NewUser>,
) -> ApiResult<(StatusCode, Json<Obj<User>>)> {
    let user = app.directory.create_user(&body.name, &body.email).await?;
    Ok((StatusCode::CREATED, Json(Obj(user))))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct NewMember {
    user_id: String,
    role: Role,
    #[serde(default)]
    permissions: BTreeSet<Permission>,
}

async fn add_member(
    State(app): State<AppState>,
    Path(id): Path<String>,
    ApiJson(body): ApiJson<NewMember>,
) -> ApiResult<(StatusCode, Json<Obj<Membership>>)> {
    let ws = workspace_id(&id)?;
    let user =
        UserId::parse(&body.user_id).ok_or_else(|| ApiError::invalid("user_id", "no such user"))?;
    let m = app
        .directory
        .set_membership(&ws, &user, body.role, body.permissions)
        .await?;
    Ok((StatusCode::CREATED, Json(Obj(m))))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct NewToken {
    expires_in: u64,
}

async fn issue_token(
    State(app): State<AppState>,
    Path(id): Path<String>,
    ApiJson(body): ApiJson<NewToken>,
) -> ApiResult<(StatusCode, Json<serde_json::Value>)> {
    let user = UserId::parse(&id).ok_or_else(|| ApiError::not_found("user"))?;
    if body.expires_in == 0 || body.expires_in > 10 * 365 * 86400 {
        return Err(ApiError::invalid(
            "expires_in",
            "must be from 1 second to 10 years",
        ));
    }
    let t = app
        .directory
        .issue_token(&user, std::time::Duration::from_secs(body.expires_in))
        .await?;
    Ok((
        StatusCode::CREATED,
        Json(serde_json::json!({
            "object": "access_token",
            "access_token": t.plain,
            "expires_at": switchboard_actors::clock::rfc3339_millis::format(&t.expires_at),
        })),
    ))
}

async fn create_funnel(
    State(app): State<AppState>,
    Path(id): Path<String>,
    ApiJson(input): ApiJson<NewFunnelInput>,
) -> ApiResult<(StatusCode, Json<Obj<Funnel>>)> {
    let ws = known_workspace(&app, &id).await?;
    let new = NewFunnel::parse(input)?;
    let funnel = app
        .registry
        .call(&ws, |r| {
            WorkspaceMsg::Funnel(FunnelMsg::Create {
                origin: Origin::system(),
                new: new.clone(),
                reply: r,
            })
        })
        .await?;
    Ok((StatusCode::CREATED, Json(Obj(funnel))))
}

/// Body of POST /admin/workspaces/{id}/credits.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CreditsInput {
    allowance: u64,
}

/// Sets a workspace's monthly credit allowance; answers its credits record.
async fn set_credits(
    State(app): State<AppState>,
    Path(id): Path<String>,
    ApiJson(input): ApiJson<CreditsInput>,
) -> ApiResult<Json<Obj<CreditsView>>> {
    let ws = known_workspace(&app, &id).await?;
    if input.allowance > MAX_ALLOWANCE {
        return Err(ApiError::invalid(
            "allowance",
            format!("must be at most {MAX_ALLOWANCE}"),
        ));
    }
    let credits = app
        .registry
        .call(&ws, |reply| {
            CreditsMsg::SetAllowance {
                allowance: input.allowance,
                reply,
            }
            .into()
        })
        .await?;
    Ok(Json(Obj(credits)))
}

async fn archive_custom_field(
    State(app): State<AppState>,
    Path((id, field_id)): Path<(String, String)>,
    ApiJson(NoFields {}): ApiJson<NoFields>,
) -> ApiResult<Json<Obj<CustomField>>> {
    let ws = known_workspace(&app, &id).await?;
    let field_id = CustomFieldId(crate::http::extract::parse_id(&field_id)?);
    let field = app
        .registry
        .call(&ws, |r| {
            WorkspaceMsg::CustomField(CustomFieldMsg::Archive {
                id: field_id,
                reply: r,
            })
        })
        .await?;
    Ok(Json(Obj(field)))
}

/// The workspace `raw` names, 404 when there is none (in a cluster, after looking at
/// other nodes' changes: it may have been created there a moment ago).
async fn known_workspace(app: &AppState, raw: &str) -> Result<WorkspaceId, ApiError> {
    let ws = workspace_id(raw)?;
    app.directory
        .catch_up_if(|d| d.workspace(&ws).is_none())
        .await;
    app.directory
        .workspace(&ws)
        .map(|_| ws)
        .ok_or_else(|| ApiError::not_found("workspace"))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Trigger {
    #[serde(rename = "type")]
    event_type: String,
    #[serde(default)]
    data: Option<serde_json::Value>,
}

/// Emits an event of any catalog type (sample data unless `data` is given) through the
/// same pipeline as real changes: subscriptions, filters, privacy, delivery.
async fn trigger_event(
    State(app): State<AppState>,
    Path(id): Path<String>,
    ApiJson(body): ApiJson<Trigger>,
) -> ApiResult<(StatusCode, Json<serde_json::Value>)> {
    let ws = known_workspace(&app, &id).await?;
    if let Some(d) = &body.data {
        if !d.is_object() {
            return Err(ApiError::invalid("data", "must be an object"));
        }
    }
    let data = body.data.unwrap_or(serde_json::Value::Null);
    let event_id = app
        .registry
        .call(&ws, |r| {
            WebhookMsg::Emit {
                origin: Origin::system(),
                event_type: body.event_type.clone(),
                data: data.clone(),
                reply: r,
            }
            .into()
        })
        .await?;
    Ok((
        StatusCode::ACCEPTED,
        Json(serde_json::json!({"object": "event", "id": event_id})),
    ))
}

/// Owner notifications: endpoints the service disabled, newest first.
async fn list_notifications(
    State(app): State<AppState>,
    Path(id): Path<String>,
    crate::http::pagination::Paging(page): crate::http::pagination::Paging,
) -> ApiResult<Json<ListEnvelope<Obj<Notification>>>> {
    let ws = known_workspace(&app, &id).await?;
    let found = app
        .registry
        .call(&ws, |r| WebhookMsg::Notifications { page, reply: r }.into())
        .await?;
    Ok(Json(ListEnvelope::page(found, |n| n.id)))
}

/// Prometheus text format.
async fn prometheus(State(app): State<AppState>) -> Response {
    (
        [(header::CONTENT_TYPE, "text/plain; version=0.0.4")],
        metrics::render(&app),
    )
        .into_response()
}

/// Live actors with their kind, key, mailbox depth, messages handled and last activity,
/// most recently active first, a page at a time (`limit`, `starting_after`). Actors move
/// up the list as they work, so a walk over pages is a view of a moving list.
async fn list_actors(
    State(app): State<AppState>,
    ApiQuery(q): ApiQuery<PageParams>,
) -> ApiResult<Json<ListEnvelope<serde_json::Value>>> {
    let mut actors = app.registry.book().snapshot();
    actors.extend(app.dispatcher.book().snapshot());
    actors.extend(app.relays.book().snapshot());
    let page = q.page_by_place(actors, |a| Place {
        at_ms: a.last_active_ms,
        id: format!("{}/{}", a.kind, a.key).into_bytes(),
    })?;
    let node = app.store.cluster().map(|c| c.node().id.clone());
    Ok(Json(page.map(|a| {
        let mut v = serde_json::to_value(a).unwrap_or_default();
        if let Some(m) = v.as_object_mut() {
            m.insert("object".into(), "actor".into());
            m.insert("node".into(), node.clone().into());
        }
        v
    })))
}

/// Counts and last-minute traffic of one workspace.
async fn workspace_stats(
    State(app): State<AppState>,
    Path(id): Path<String>,
) -> ApiResult<Json<serde_json::Value>> {
    let ws = known_workspace(&app, &id).await?;
    let counts = app.registry.call(&ws, WorkspaceMsg::Stats).await?;
    let pending: usize = counts
        .endpoint_ids
        .iter()
        .map(|e| app.dispatcher.pending(Some(e)))
        .sum();
    let (requests, rejected) = app.recent.last_minute(&ws);
    Ok(Json(serde_json::json!({
        "object": "workspace_stats",
        "workspace_id": ws,
        "contacts": counts.contacts,
        "orders": counts.orders,
        "products": counts.products,
        "webhook_endpoints": counts.endpoints,
        "pending_deliveries": pending,
        "requests_last_minute": requests,
        "rate_limited_last_minute": rejected,
    })))
}
