//! What a request passes between routing and its handler, as one middleware per family of
//! routes. Each axum middleware boxes its future and clones the services inside it on every
//! request, so the steps (each in its own module) run here in sequence instead of as a
//! stack of layers.
//!
//! - API routes: the route template is noted for the request log and metrics, then
//!   [`auth::admit`] (credential, workspace, cluster owner, rate limit), the store's
//!   refusal of writes while it fails, and [`idempotency::run`] around the handler.
//! - Legacy routes: the route template, then their own authentication (no rate limit,
//!   `{message}` errors), around the handler.
//!
//! The route is noted outside the steps that may answer for the handler (a 401, a 429, a
//! replay, a request passed to another node), so their answers name it too.

use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::Response;

use super::routes::legacy;
use super::{auth, idempotency, store_health, telemetry, AppState};

/// The gate of the `/api/v1` routes but the legacy ones.
pub async fn api(State(app): State<AppState>, req: Request, next: Next) -> Response {
    let route = telemetry::matched_route(&req);
    let mut response = match auth::admit(&app, req).await {
        Ok((req, budget)) => {
            let mut response = match store_health::refusal(&app, req.method()) {
                Some(refused) => refused,
                None => idempotency::run(&app, req, next).await,
            };
            if let Some(budget) = budget {
                budget.write_headers(response.headers_mut());
            }
            response
        }
        Err(answered) => answered,
    };
    telemetry::remember(route, &mut response);
    response
}

/// The gate of the legacy routes (`POST /messages`, `POST /chat`).
pub async fn legacy(State(app): State<AppState>, req: Request, next: Next) -> Response {
    let route = telemetry::matched_route(&req);
    let mut response = match legacy::admit(&app, req).await {
        Ok(req) => next.run(req).await,
        Err(answered) => answered,
    };
    telemetry::remember(route, &mut response);
    response
}
