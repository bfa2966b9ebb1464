//! One span per request, with a request id (also answered as `X-Request-Id`), the route
//! template and the workspace id; one `info` line per answered request, inside that span,
//! with its latency; and the HTTP metrics: requests by route template and status, and a
//! latency histogram. Route templates (`/api/v1/contacts/{id}`), never raw paths, so label
//! cardinality stays bounded.

use std::time::Instant;

use axum::extract::{MatchedPath, Request};
use axum::http::{HeaderName, HeaderValue};
use axum::middleware::Next;
use axum::response::Response;
use tower::ServiceBuilder;
use tower_http::request_id::{
    MakeRequestId, PropagateRequestIdLayer, RequestId, SetRequestIdLayer,
};
use tower_http::trace::TraceLayer;
use tracing::Span;

pub const REQUEST_ID: &str = "x-request-id";

/// The matched route template, carried from the routing layer out to [`track`].
#[derive(Clone)]
pub struct MatchedRoute(String);

/// The matched route template, once routing is done (inside a route's layers).
pub fn matched_route(req: &Request) -> Option<MatchedRoute> {
    req.extensions()
        .get::<MatchedPath>()
        .map(|m| MatchedRoute(m.as_str().to_string()))
}

/// Carries the matched template on the response, out to [`track`].
pub fn remember(route: Option<MatchedRoute>, response: &mut Response) {
    if let Some(route) = route {
        response.extensions_mut().insert(route);
    }
}

/// The request-id, tracing and metrics layers, outermost first: an acceptable
/// `X-Request-Id` is kept and any other replaced by a fresh `req_...` id (tower-http's
/// request-id layers), one span per request carries it (tower-http's trace layer), and
/// [`track`] adds the route template and status to that span, logs the request and counts
/// it.
pub fn layers<S>(router: axum::Router<S>) -> axum::Router<S>
where
    S: Clone + Send + Sync + 'static,
{
    let header = HeaderName::from_static(REQUEST_ID);
    router.layer(
        ServiceBuilder::new()
            .map_request(drop_unacceptable_id)
            .layer(SetRequestIdLayer::new(header.clone(), NewId))
            .layer(PropagateRequestIdLayer::new(header))
            .layer(
                TraceLayer::new_for_http()
                    .make_span_with(span)
                    .on_request(())
                    .on_response(()),
            )
            .layer(axum::middleware::from_fn(track)),
    )
}

/// Makes a `req_...` id for a request that brought no acceptable one.
#[derive(Clone, Copy)]
struct NewId;

impl MakeRequestId for NewId {
    fn make_request_id<B>(&mut self, _: &axum::http::Request<B>) -> Option<RequestId> {
        let id = switchboard_actors::ids::random_id("req", 20);
        HeaderValue::from_str(&id).ok().map(RequestId::new)
    }
}

/// A caller's id is kept when it is short printable ASCII; anything else is dropped, so
/// that logs never carry a caller's arbitrary bytes.
fn drop_unacceptable_id<B>(mut req: axum::http::Request<B>) -> axum::http::Request<B> {
    let acceptable = req.headers().get(REQUEST_ID).is_none_or(|v| {
        !v.is_empty() && v.len() <= 128 && v.as_bytes().iter().all(u8::is_ascii_graphic)
    });
    if !acceptable {
        req.headers_mut().remove(REQUEST_ID);
    }
    req
}

fn span<B>(req: &axum::http::Request<B>) -> Span {
    let request_id = req
        .headers()
        .get(REQUEST_ID)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    tracing::info_span!(
        "request",
        request_id = %request_id,
        method = %req.method(),
        route = tracing::field::Empty,
        workspace_id = tracing::field::Empty,
        status = tracing::field::Empty,
    )
}

/// The method as a metric label: the standard ones by name, any other as `other`, so
/// that a client inventing methods cannot add series without end.
fn method_label(method: &axum::http::Method) -> &'static str {
    use axum::http::Method;
    match *method {
        Method::GET => "GET",
        Method::POST => "POST",
        Method::PUT => "PUT",
        Method::PATCH => "PATCH",
        Method::DELETE => "DELETE",
        Method::HEAD => "HEAD",
        Method::OPTIONS => "OPTIONS",
        Method::TRACE => "TRACE",
        Method::CONNECT => "CONNECT",
        _ => "other",
    }
}

/// Inside the request span: records the route template and status, logs the one line of
/// the request (the span adds its request id, method, route, workspace and status), and
/// the HTTP metrics.
async fn track(req: Request, next: Next) -> Response {
    let started = Instant::now();
    let method = req.method().clone();
    let response = next.run(req).await;
    let route = response
        .extensions()
        .get::<MatchedRoute>()
        .map(|r| r.0.clone())
        .unwrap_or_else(|| "unmatched".to_string());
    let status = response.status().as_u16();
    let took = started.elapsed();
    let span = Span::current();
    span.record("route", tracing::field::display(&route));
    span.record("status", status);
    // Milliseconds with microsecond precision: readable, and exact enough to sort by.
    let latency_ms = took.as_micros() as f64 / 1000.0;
    tracing::info!(latency_ms, "answered");
    metrics::counter!(
        "switchboard_http_requests_total",
        "route" => route.clone(),
        "method" => method_label(&method),
        "status" => status.to_string()
    )
    .increment(1);
    metrics::histogram!("switchboard_http_request_seconds", "route" => route)
        .record(took.as_secs_f64());
    response
}
