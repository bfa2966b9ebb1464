//! The API listener: `/health`, `/api/v1/openapi.json`, and every resource route under
//! `/api/v1` behind authentication (which also applies the rate limit) and idempotency.

pub mod auth;
mod document;
pub mod error;
pub mod extract;
pub mod forward;
mod gate;
pub mod idempotency;
pub mod json;
pub mod object;
pub mod pagination;
pub mod rate_limit;
pub mod recent;
pub mod routes;
pub mod store_health;
mod strict_json;
pub mod telemetry;

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::StatusCode;
use axum::middleware::{from_fn_with_state, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use json::Json;
use switchboard_actors::directory::Directory;
use switchboard_actors::idempotency::Idempotency;
use switchboard_actors::registry::Registry;
use utoipa::OpenApi;
use utoipa_axum::router::OpenApiRouter;

use crate::config::Settings;
use error::ApiError;
use rate_limit::RateLimit;

/// What every handler can reach; cheap to clone.
#[derive(Clone)]
pub struct AppState(Arc<Shared>);

pub struct Shared {
    pub settings: Settings,
    /// The AI that answers customers; `/chat` takes its turn with it.
    pub ai: switchboard_actors::ai::Ai,
    pub store: switchboard_actors::store::Store,
    pub recent: recent::RecentCounts,
    pub dispatcher: switchboard_actors::delivery::Dispatcher,
    /// The channel relays' senders (their counters, for operators).
    pub relays: switchboard_actors::outbound::Relays,
    pub directory: Directory,
    pub registry: Registry,
    pub idempotency: Idempotency,
    pub rate_limit: RateLimit,
    pub admin_token_hash: String,
}

impl std::ops::Deref for AppState {
    type Target = Shared;
    fn deref(&self) -> &Shared {
        &self.0
    }
}

impl AppState {
    pub fn new(shared: Shared) -> Self {
        Self(Arc::new(shared))
    }

    /// Asks the workspace's actor on the caller's behalf: `build` gets the caller as the
    /// origin of the events the change causes, and the reply port.
    pub async fn ask_as<T, M>(
        &self,
        ws: &auth::Ws,
        build: impl Fn(switchboard_actors::events::Origin, switchboard_actors::workspace::Reply<T>) -> M,
    ) -> error::ApiResult<T>
    where
        T: Send + 'static,
        M: Into<switchboard_actors::workspace::WorkspaceMsg>,
    {
        let origin = ws.origin();
        Ok(self
            .registry
            .call(&ws.id, |reply| build(origin.clone(), reply).into())
            .await?)
    }

    /// Asks the workspace's actor: `build` gets the reply port (the message carries
    /// whatever origin or caller it needs itself).
    pub async fn ask<T, M>(
        &self,
        ws: &auth::Ws,
        build: impl Fn(switchboard_actors::workspace::Reply<T>) -> M,
    ) -> error::ApiResult<T>
    where
        T: Send + 'static,
        M: Into<switchboard_actors::workspace::WorkspaceMsg>,
    {
        Ok(self
            .registry
            .call(&ws.id, |reply| build(reply).into())
            .await?)
    }
}

#[derive(OpenApi)]
#[openapi(
    info(title = "Switchboard Workspace Messaging API", version = "v1"),
    servers((url = "/api/v1")),
    components(schemas(
        error::ErrorBody,
        switchboard_actors::events::Envelope,
        switchboard_actors::domain::channel::RelayMessage,
        routes::funnels::StageRow
    )),
    modifiers(&BearerAuth)
)]
struct ApiDoc;

struct BearerAuth;

impl utoipa::Modify for BearerAuth {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};
        let components = openapi.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "bearer",
            SecurityScheme::Http(HttpBuilder::new().scheme(HttpAuthScheme::Bearer).build()),
        );
        openapi.security = Some(vec![utoipa::openapi::security::SecurityRequirement::new(
            "bearer",
            Vec::<String>::new(),
        )]);
    }
}

/// The resource routes and the OpenAPI document describing them.
fn api() -> (Router<AppState>, utoipa::openapi::OpenApi) {
    let (router, mut doc) = resources();
    let mut records = object::records();
    records.push(object::record::<routes::users::UserView>());
    records.push(object::record::<routes::funnels::StageRow>());
    object::document(&mut doc, records);
    (router, doc)
}

fn resources() -> (Router<AppState>, utoipa::openapi::OpenApi) {
    OpenApiRouter::with_openapi(ApiDoc::openapi())
        .merge(routes::me::router())
        .merge(routes::events::router())
        .merge(routes::tags::router())
        .merge(routes::users::router())
        .merge(routes::custom_fields::router())
        .merge(routes::closing_notes::router())
        .merge(routes::funnels::router())
        .merge(routes::contacts::router())
        .merge(routes::conversations::router())
        .merge(routes::ai_settings::router())
        .merge(routes::orders::router())
        .merge(routes::products::router())
        .merge(routes::webhooks::router())
        .merge(routes::channels::router())
        .merge(routes::credits::router())
        .merge(routes::campaigns::router())
        .merge(routes::reminders::router())
        .merge(routes::bookings::router())
        .merge(routes::calls::router())
        .merge(routes::forms::router())
        .split_for_parts()
}

pub fn router(state: AppState) -> Router {
    let (api, mut doc) = api();
    let (legacy, legacy_doc) = routes::legacy::router().split_for_parts();
    doc.merge(legacy_doc);
    let doc = Arc::new(complete_document(doc));
    // The legacy routes have their own authentication (no rate limit, `{message}`
    // errors) and repeat rules, so the standard gate stops short of them. Route layers:
    // the router has matched the route by then, and an unknown route is a 404 unchecked.
    let legacy = legacy.route_layer(from_fn_with_state(state.clone(), gate::legacy));
    let api = api
        .route_layer(from_fn_with_state(state.clone(), gate::api))
        .merge(legacy);
    let mut top = Router::new();
    if state.settings.test_hooks {
        top = top.route("/__test/panic", axum::routing::post(test_panic));
    }
    let top = top
        .route("/health", get(health))
        .route(
            "/api/v1/openapi.json",
            get(move || {
                let doc = doc.clone();
                async move { Json(doc.as_ref().clone()) }
            }),
        )
        // Merged, not nested: the routes carry their full paths, since a nested route
        // rewrites each request's URI and passes two more layers.
        .merge(api)
        .fallback(unknown_route)
        .layer(axum::middleware::from_fn(json_rejections))
        .layer(axum::middleware::from_fn(refuse_long_uris))
        .layer(tower_http::catch_panic::CatchPanicLayer::custom(
            error::panicked,
        ));
    telemetry::layers(top).with_state(state)
}

/// The OpenAPI document as served, for tools that want it without a running server.
pub fn openapi() -> serde_json::Value {
    let mut doc = api().1;
    doc.merge(routes::legacy::router().split_for_parts().1);
    complete_document(doc)
}

/// Where the resource routes live; the document names it as its server, so its paths
/// leave it out.
pub const API_PREFIX: &str = "/api/v1";

/// The generated document with what every operation shares written in (see [`document`]).
fn complete_document(doc: utoipa::openapi::OpenApi) -> serde_json::Value {
    let mut json = serde_json::to_value(&doc).unwrap_or_default();
    if let Some(paths) = json
        .get_mut("paths")
        .and_then(serde_json::Value::as_object_mut)
    {
        *paths = std::mem::take(paths)
            .into_iter()
            .map(|(path, item)| match path.strip_prefix(API_PREFIX) {
                Some(relative) => (relative.to_string(), item),
                None => (path, item),
            })
            .collect();
    }
    document::complete(&mut json);
    json
}

/// The longest request target (path and query) served.
const MAX_URI_BYTES: usize = 16 * 1024;

/// An over-long request target gets 414 with the error envelope.
async fn refuse_long_uris(req: Request, next: Next) -> Response {
    let len = req.uri().path_and_query().map_or(0, |p| p.as_str().len());
    if len > MAX_URI_BYTES {
        return ApiError::new(
            StatusCode::URI_TOO_LONG,
            "uri_too_long",
            format!("the request target is {len} bytes; at most {MAX_URI_BYTES} are served"),
        )
        .into_response();
    }
    next.run(req).await
}

/// The test hook: a handler that panics.
async fn test_panic() -> StatusCode {
    panic!("a panic asked for by a test")
}

async fn health(State(app): State<AppState>) -> Response {
    store_health::report(&app.store)
}

async fn unknown_route() -> ApiError {
    ApiError::new(StatusCode::NOT_FOUND, "not_found", "no such route")
}

/// axum answers a wrong method with an empty 405, and some malformed requests with a
/// plain-text 400; give them the error envelope (a legacy route's own `{message}` on the
/// legacy routes).
pub async fn json_rejections(req: Request, next: Next) -> Response {
    let legacy = routes::legacy::is_legacy_path(req.uri().path());
    let response = next.run(req).await;
    // The framework's own 400s (a path segment that is not UTF-8, for one) come as plain
    // text: they get the error envelope like every other error.
    let plain_text = response
        .headers()
        .get(axum::http::header::CONTENT_TYPE)
        .is_some_and(|ct| ct.as_bytes().starts_with(b"text/plain"));
    if response.status() == StatusCode::BAD_REQUEST && plain_text {
        let text = axum::body::to_bytes(response.into_body(), 4096)
            .await
            .map(|b| String::from_utf8_lossy(&b).into_owned())
            .unwrap_or_default();
        let e = ApiError::bad_request(text);
        return if legacy {
            routes::legacy::LegacyError::from(e).into_response()
        } else {
            e.into_response()
        };
    }
    if response.status() == StatusCode::METHOD_NOT_ALLOWED
        && response.headers().get("content-type").is_none()
    {
        let e = ApiError::new(
            StatusCode::METHOD_NOT_ALLOWED,
            "method_not_allowed",
            "this route does not accept that method",
        );
        let mut e = if legacy {
            routes::legacy::LegacyError::from(e).into_response()
        } else {
            e.into_response()
        };
        if let Some(allow) = response.headers().get(axum::http::header::ALLOW) {
            e.headers_mut()
                .insert(axum::http::header::ALLOW, allow.clone());
        }
        return e;
    }
    response
}
