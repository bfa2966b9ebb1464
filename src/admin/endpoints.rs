//! Webhook endpoints the operator creates and removes in a workspace with the admin token
//! (`switchboard listen` uses them). Unlike the API's `POST /webhooks`, such an endpoint may
//! point at a loopback IP literal (`http://127.0.0.1:PORT/`), a receiver on the service's
//! own machine; every other private address is refused as on the API.

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::routing::{delete, post};
use axum::{Json, Router};
use switchboard_actors::domain::webhook::{EndpointChange, EndpointInput, OPERATOR};
use switchboard_actors::events::Origin;
use switchboard_actors::ids::EndpointId;
use switchboard_actors::ssrf::is_loopback_literal;
use switchboard_actors::workspace::{EndpointCaller, WebhookMsg};

use crate::http::error::ApiResult;
use crate::http::extract::ApiJson;
use crate::http::object::Obj;
use crate::http::routes::webhooks::{CreatedEndpoint, EndpointDeleted};
use crate::http::AppState;

/// The routes, mounted behind the admin token.
pub fn router() -> Router<AppState> {
    Router::new()
        .route("/admin/workspaces/{id}/webhooks", post(create))
        .route(
            "/admin/workspaces/{id}/webhooks/{endpoint_id}",
            delete(remove),
        )
}

/// Adds an endpoint as the operator: the body of `POST /webhooks`; 201 with the secret.
async fn create(
    State(app): State<AppState>,
    Path(id): Path<String>,
    ApiJson(input): ApiJson<EndpointInput>,
) -> ApiResult<(StatusCode, Json<CreatedEndpoint>)> {
    let ws = super::known_workspace(&app, &id).await?;
    let hipaa = app.directory.workspace(&ws).is_some_and(|w| w.hipaa);
    let loopback = input
        .url
        .as_deref()
        .and_then(|u| url::Url::parse(u).ok())
        .is_some_and(|u| is_loopback_literal(&u));
    let allow_private = app.settings.webhooks.allow_private || loopback;
    let change = EndpointChange::parse(input, true, allow_private)?;
    if let (Some(url), false) = (&change.url, loopback) {
        crate::http::routes::public_url(&app, url).await?;
    }
    let caller = EndpointCaller {
        owner_or_admin: true,
        hipaa,
        connection_id: Some(OPERATOR.to_string()),
    };
    let (view, secret) = app
        .registry
        .call(&ws, |reply| {
            WebhookMsg::Create {
                origin: Origin::system(),
                change: change.clone(),
                caller: caller.clone(),
                reply,
            }
            .into()
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

/// Removes an endpoint of the workspace (any endpoint, as the API's DELETE would).
async fn remove(
    State(app): State<AppState>,
    Path((id, endpoint_id)): Path<(String, String)>,
) -> ApiResult<Json<EndpointDeleted>> {
    let ws = super::known_workspace(&app, &id).await?;
    // Malformed is 400, as on the API's own routes; well-formed and unknown is 404.
    let endpoint = crate::http::extract::parse_string_id(&endpoint_id, EndpointId::parse)?;
    let id = app
        .registry
        .call(&ws, |reply| {
            WebhookMsg::Delete {
                origin: Origin::system(),
                id: endpoint.clone(),
                reply,
            }
            .into()
        })
        .await?;
    Ok(Json(EndpointDeleted {
        object: "webhook_endpoint",
        id,
        deleted: true,
    }))
}
