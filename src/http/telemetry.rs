//! One span per request, with a request id (also answered as `X-Request-Id`), the route
//! template and the workspace id; and the HTTP metrics: requests by route template and
//! status, and a latency histogram. Route templates (`/api/v1/contacts/{id}`), never raw
//! paths, so label cardinality stays bounded.

use std::time::Instant;

use axum::extract::{MatchedPath, Request};
use axum::http::HeaderValue;
use axum::middleware::Next;
use axum::response::Response;
use tracing::Instrument;

pub const REQUEST_ID: &str = "x-request-id";

/// The matched route template, carried from the routing layer out to [`track`].
#[derive(Clone)]
struct Route(String);

/// Runs after routing (as a route layer): remembers the matched template on the response.
pub async fn remember_route(req: Request, next: Next) -> Response {
    let route = req
        .extensions()
        .get::<MatchedPath>()
        .map(|m| m.as_str().to_string());
    let mut response = next.run(req).await;
    if let Some(route) = route {
        response.extensions_mut().insert(Route(route));
    }
    response
}

/// The outermost layer: request id, span, access metrics.
pub async fn track(req: Request, next: Next) -> Response {
    let started = Instant::now();
    let request_id = req
        .headers()
        .get(REQUEST_ID)
        .and_then(|v| v.to_str().ok())
        .filter(|v| !v.is_empty() && v.len() <= 128 && v.bytes().all(|b| b.is_ascii_graphic()))
        .map(str::to_string)
        .unwrap_or_else(|| switchboard_actors::ids::random_id("req", 20));
    let method = req.method().clone();
    let span = tracing::info_span!(
        "request",
        request_id = %request_id,
        method = %method,
        route = tracing::field::Empty,
        workspace_id = tracing::field::Empty,
        status = tracing::field::Empty,
    );
    let mut response = next.run(req).instrument(span.clone()).await;
    let route = response
        .extensions()
        .get::<Route>()
        .map(|r| r.0.clone())
        .unwrap_or_else(|| "unmatched".to_string());
    let status = response.status().as_u16();
    let took = started.elapsed();
    span.record("route", route.as_str());
    span.record("status", status);
    span.in_scope(|| tracing::debug!(latency_ms = took.as_secs_f64() * 1e3, "request finished"));
    metrics::counter!(
        "switchboard_http_requests_total",
        "route" => route.clone(),
        "method" => method.to_string(),
        "status" => status.to_string()
    )
    .increment(1);
    metrics::histogram!("switchboard_http_request_seconds", "route" => route)
        .record(took.as_secs_f64());
    if let Ok(v) = HeaderValue::from_str(&request_id) {
        response.headers_mut().insert(REQUEST_ID, v);
    }
    response
}
