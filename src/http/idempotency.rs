//! `Idempotency-Key` on every POST: the first response (status and body, failures
//! included) is stored and replayed with `Idempotent-Replayed: true`; the same key with a
//! different request is 409 `idempotency_key_reused`; while the first is still running (or
//! never finished) 409 `request_in_progress`. Scoped to workspace and credential.

use axum::body::{to_bytes, Body};
use axum::extract::Request;
use axum::http::{header, HeaderValue, Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use switchboard_actors::idempotency::{
    canonical_json, fingerprint, Claim, StoredResponse, MAX_KEY_LEN,
};

use super::auth::{Caller, Checked};
use super::error::ApiError;
use super::extract::{ParsedBody, MAX_BODY_BYTES};
use super::strict_json::unique_tree;
use super::AppState;
use tracing::Instrument;

pub const HEADER: &str = "idempotency-key";
pub const REPLAYED: &str = "idempotent-replayed";

/// The key of an `Idempotency-Key` header: 1 to [`MAX_KEY_LEN`] visible ASCII characters
/// (no spaces), or 400.
pub fn read_key(raw: &HeaderValue) -> Result<&str, ApiError> {
    raw.to_str()
        .ok()
        .filter(|k| {
            !k.is_empty() && k.len() <= MAX_KEY_LEN && k.bytes().all(|b| b.is_ascii_graphic())
        })
        .ok_or_else(|| {
            ApiError::bad_request(format!(
                "Idempotency-Key must be 1 to {MAX_KEY_LEN} visible ASCII characters"
            ))
        })
}

/// Runs the request through `next`, or answers it from (or for) its `Idempotency-Key`.
pub async fn run(app: &AppState, req: Request, next: Next) -> Response {
    if req.method() != Method::POST {
        return next.run(req).await;
    }
    let Some(raw_key) = req.headers().get(HEADER) else {
        return next.run(req).await;
    };
    match handle(app.clone(), raw_key.clone(), req, next).await {
        Ok(r) | Err(r) => r,
    }
}

async fn handle(
    app: AppState,
    raw_key: HeaderValue,
    req: Request,
    next: Next,
) -> Result<Response, Response> {
    let key = read_key(&raw_key)
        .map_err(IntoResponse::into_response)?
        .to_string();
    let scope = {
        let caller = req.extensions().get::<Caller>();
        let ws = caller
            .and_then(|c| c.workspace.as_ref().ok())
            .map(|w| w.id.to_string())
            .unwrap_or_default();
        let credential = caller
            .map(|c| c.principal.connection_id())
            .unwrap_or_default();
        format!("{ws}|{credential}")
    };
    let (parts, body) = req.into_parts();
    // Past the limit, late or cut off: the body could never be run.
    let bytes = to_bytes(body, MAX_BODY_BYTES).await.map_err(|e| {
        if crate::serve::BodyTimedOut::caused(&*e.into_inner()) {
            ApiError::body_timed_out().into_response()
        } else {
            ApiError::payload_too_large(MAX_BODY_BYTES).into_response()
        }
    })?;
    let path = fingerprinted_path(&parts.uri);
    // A JSON body is compared in its canonical form, so that a client that re-serialises
    // between retries still matches; anything else as its bytes, a body that names a key
    // twice included (its tree would read as the body without the first, which is
    // another request; the handler then refuses it as it does without a key).
    let parsed = unique_tree(&bytes).ok();
    let fp = match &parsed {
        Some(value) => fingerprint(
            parts.method.as_str(),
            path,
            canonical_json(value).as_bytes(),
        ),
        // An empty body reads as `{}`, so it is the same request as `{}`.
        None if bytes.trim_ascii().is_empty() => fingerprint(
            parts.method.as_str(),
            path,
            canonical_json(&serde_json::json!({})).as_bytes(),
        ),
        None => fingerprint(parts.method.as_str(), path, &bytes),
    };
    let mut parts = parts;
    if let Some(value) = parsed {
        // The handler reads this tree instead of parsing the body again.
        parts
            .extensions
            .insert(ParsedBody(std::sync::Arc::new(value)));
    }
    let claim = app
        .idempotency
        .claim(&scope, &key, &fp)
        .map_err(|e| ApiError::internal(e).into_response())?;
    match claim {
        Claim::Replay(stored) => {
            // A caller who has lost a right the first answer needed is refused as that
            // request would be now.
            if let Some(Ok(ws)) = parts.extensions.get::<Caller>().map(|c| &c.workspace) {
                for r in &stored.requirements {
                    ws.meets(*r).map_err(IntoResponse::into_response)?;
                }
            }
            metrics::counter!("switchboard_idempotency_total", "result" => "replayed").increment(1);
            Ok(replay(stored))
        }
        Claim::Reused => Err({
            metrics::counter!("switchboard_idempotency_total", "result" => "key_reused")
                .increment(1);
            ApiError::new(
                StatusCode::CONFLICT,
                "idempotency_key_reused",
                "this Idempotency-Key was used with a different request",
            )
            .into_response()
        }),
        Claim::InProgress => Err({
            metrics::counter!("switchboard_idempotency_total", "result" => "in_progress")
                .increment(1);
            ApiError::new(
            StatusCode::CONFLICT,
            "request_in_progress",
            "the first request with this Idempotency-Key has not finished; check the result before repeating it",
        )
        .into_response()
        }),
        Claim::Fresh => {
            // The handler notes the rights it checks, for replays to check again.
            if let Some(Ok(ws)) = parts
                .extensions
                .get_mut::<Caller>()
                .map(|c| &mut c.workspace)
            {
                ws.checked = Some(Checked::default());
            }
            // The first request runs to its end, and its answer is stored, even if the
            // client goes away meanwhile: cut off halfway, it would leave its key
            // answering 409 request_in_progress for the key's whole life, whether its
            // write was made or not.
            let first = async move {
                match run_first(app, scope, key, fp, parts, bytes, next).await {
                    Ok(r) | Err(r) => r,
                }
            };
            tokio::spawn(first.in_current_span())
                .await
                .map_err(|e| ApiError::internal(e).into_response())
        }
    }
}

/// Runs the first request with a key and stores its answer.
async fn run_first(
    app: AppState,
    scope: String,
    key: String,
    fp: String,
    parts: axum::http::request::Parts,
    bytes: axum::body::Bytes,
    next: Next,
) -> Result<Response, Response> {
    let checked = parts
        .extensions
        .get::<Caller>()
        .and_then(|c| c.workspace.as_ref().ok())
        .and_then(|ws| ws.checked.clone())
        .unwrap_or_default();
    // The in-progress marker reaches the disk before the work starts, so that work with
    // an effect outside the store (a test delivery now, message sends later) is never
    // repeated after a crash: the repeat finds the marker and answers 409
    // request_in_progress. Writes to the store share this flush anyway.
    app.store.durable().await.map_err(|e| {
        ApiError::from(switchboard_actors::domain::DomainError::from(e)).into_response()
    })?;
    let response = next
        .run(Request::from_parts(parts, Body::from(bytes)))
        .await;
    if refused_unrun(response.status()) {
        app.idempotency
            .release(&scope, &key)
            .map_err(|e| ApiError::internal(e).into_response())?;
        return Ok(response);
    }
    let (parts, body) = response.into_parts();
    let body = to_bytes(body, usize::MAX)
        .await
        .map_err(|e| ApiError::internal(e).into_response())?;
    let stored = StoredResponse {
        status: parts.status.as_u16(),
        content_type: parts
            .headers
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string),
        body: body.to_vec(),
        requirements: checked.taken(),
    };
    app.idempotency
        .complete(&scope, &key, &fp, stored)
        .await
        .map_err(|e| ApiError::internal(e).into_response())?;
    Ok(Response::from_parts(parts, Body::from(body)))
}

/// Answers that refuse a request before anything is done (no credential, no permission,
/// over the rate limit): not stored, so a repeat once the caller may is run.
/// The path and query a fingerprint names: below the API's prefix, as fingerprints have
/// always named it, so that keys stored by earlier versions still match their retries.
fn fingerprinted_path(uri: &axum::http::Uri) -> &str {
    let path = uri.path_and_query().map(|p| p.as_str()).unwrap_or("");
    path.strip_prefix(super::API_PREFIX).unwrap_or(path)
}

fn refused_unrun(status: StatusCode) -> bool {
    matches!(
        status,
        StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN | StatusCode::TOO_MANY_REQUESTS
    )
}

fn replay(stored: StoredResponse) -> Response {
    let status = StatusCode::from_u16(stored.status).unwrap_or(StatusCode::OK);
    let mut response = (status, stored.body).into_response();
    let headers = response.headers_mut();
    if let Some(ct) = stored
        .content_type
        .and_then(|c| HeaderValue::from_str(&c).ok())
    {
        headers.insert(header::CONTENT_TYPE, ct);
    }
    headers.insert(REPLAYED, HeaderValue::from_static("true"));
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fingerprint_names_the_path_below_the_api_prefix_with_its_query() {
        let uri: axum::http::Uri = "/api/v1/contacts/ct_1/tags?x=1".parse().unwrap_or_default();
        assert_eq!(fingerprinted_path(&uri), "/contacts/ct_1/tags?x=1");
        let legacy: axum::http::Uri = "/api/v1/messages".parse().unwrap_or_default();
        assert_eq!(fingerprinted_path(&legacy), "/messages");
    }
}
