//! Any node serves any workspace (cluster mode): a request for a workspace another node
//! owns is passed to that node, once, and its answer passed back, so the client never
//! notices. The passed request carries the cluster's shared secret in
//! [`PASSED`]; a node honours that header only with the right secret (compared in constant
//! time) and never passes such a request on again, answering 503 instead (the workspace
//! moved meanwhile; the client's retry finds its owner).

use std::sync::OnceLock;
use std::time::Duration;

use axum::body::Body;
use axum::extract::FromRequest;
use axum::extract::Request;
use axum::http::{HeaderMap, HeaderName, StatusCode};
use axum::response::{IntoResponse, Response};
use switchboard_actors::domain::DomainError;
use switchboard_actors::ids::WorkspaceId;

use super::error::ApiError;
use super::extract::RawBody;
use super::AppState;

/// The header of a request passed by another node; its value is the cluster secret.
pub const PASSED: &str = "x-switchboard-passed";

/// How long the owner may take to answer.
const OWNER_TIMEOUT: Duration = Duration::from_secs(40);

/// How long reaching the owner may take: a dead host fails fast, and its workspaces move
/// once its leases run out.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(2);

/// Headers that belong to one connection, not to the request.
const HOP_BY_HOP: &[&str] = &[
    "connection",
    "keep-alive",
    "proxy-authenticate",
    "proxy-authorization",
    "te",
    "trailer",
    "transfer-encoding",
    "upgrade",
    "host",
    "content-length",
];

/// Why a request is not served here.
pub enum Elsewhere {
    /// The owner's answer, passed back as it came.
    Answered(Response),
    /// No answer: the owner could not be reached (or taking the workspace failed); the
    /// route's own error shape renders it.
    Refused(ApiError),
}

/// Hands the request back to be served here if this node owns `ws` (taking it if it is
/// free), or gives the owner's answer (or why there is none). Alone (sled), every
/// workspace is here.
pub async fn route(app: &AppState, ws: &WorkspaceId, req: Request) -> Result<Request, Elsewhere> {
    match app.registry.own(ws).await {
        Ok(()) => Ok(req),
        Err(DomainError::Elsewhere { node, addr, .. }) => {
            Err(match (was_passed(req.headers()), addr) {
                (false, Some(addr)) => pass(app, Owner { ws, node: &node }, &addr, req).await,
                _ => Elsewhere::Refused(moved(node)),
            })
        }
        Err(e) => Err(Elsewhere::Refused(ApiError::from(e))),
    }
}

impl Elsewhere {
    /// The answer in the API's error envelope.
    pub fn into_api_response(self) -> Response {
        match self {
            Elsewhere::Answered(answer) => answer,
            Elsewhere::Refused(e) => e.into_response(),
        }
    }
}

/// Operator requests on one workspace (`/admin/workspaces/{id}/...`, but its directory
/// parts, API keys and members, which every node serves) go to the owner's operator
/// listener like API requests go to its API listener.
pub async fn route_operator(app: &AppState, req: Request) -> Result<Request, Response> {
    if let Err(e) = check_passed(app, req.headers()) {
        return Err(e.into_response());
    }
    let mut parts = req.uri().path().trim_start_matches('/').split('/');
    let ws = match (parts.next(), parts.next(), parts.next(), parts.next()) {
        (Some("admin"), Some("workspaces"), Some(id), Some(rest))
            if !matches!(rest, "api-keys" | "members") =>
        {
            // Only a workspace that exists is taken: asking after any other id must not
            // leave a lease behind (the handler answers 404).
            WorkspaceId::parse(id)
        }
        _ => None,
    };
    let ws = match ws {
        Some(ws) => {
            app.directory
                .catch_up_if(|d| d.workspace(&ws).is_none())
                .await;
            app.directory.workspace(&ws).map(|_| ws)
        }
        None => None,
    };
    let Some(ws) = ws else {
        return Ok(req);
    };
    match app.registry.own(&ws).await {
        Ok(()) => Ok(req),
        Err(DomainError::Elsewhere {
            node, admin_addr, ..
        }) => Err(match (was_passed(req.headers()), admin_addr) {
            (false, Some(addr)) => pass(
                app,
                Owner {
                    ws: &ws,
                    node: &node,
                },
                &addr,
                req,
            )
            .await
            .into_api_response(),
            _ => moved(node).into_response(),
        }),
        // An unknown workspace: the handler answers as it does alone.
        Err(_) => Ok(req),
    }
}

/// Why the owner cannot be reached through this node.
fn moved(node: String) -> ApiError {
    ApiError::from(DomainError::Elsewhere {
        node,
        addr: None,
        admin_addr: None,
    })
}

/// Whether another node passed this request (checked by [`check_passed`] first).
pub fn was_passed(headers: &HeaderMap) -> bool {
    headers.contains_key(PASSED)
}

/// Refuses a request that claims to come from another node without the cluster's secret.
pub fn check_passed(app: &AppState, headers: &HeaderMap) -> Result<(), ApiError> {
    let Some(given) = headers.get(PASSED) else {
        return Ok(());
    };
    let secret = app.settings.cluster.secret.as_deref().unwrap_or_default();
    if !secret.is_empty() && constant_time_eq(given.as_bytes(), secret.as_bytes()) {
        Ok(())
    } else {
        Err(ApiError::unauthenticated(
            "a passed request must carry the cluster's secret",
        ))
    }
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    use sha2::{Digest, Sha256};
    // Hashing first makes the comparison's time independent of the lengths too.
    let (a, b) = (Sha256::digest(a), Sha256::digest(b));
    a.iter()
        .zip(b.iter())
        .fold(0u8, |acc, (x, y)| acc | (x ^ y))
        == 0
}

fn peers() -> &'static reqwest::Client {
    static CLIENT: OnceLock<reqwest::Client> = OnceLock::new();
    CLIENT.get_or_init(|| {
        reqwest::Client::builder()
            .no_proxy()
            .timeout(OWNER_TIMEOUT)
            .connect_timeout(CONNECT_TIMEOUT)
            .build()
            .unwrap_or_default()
    })
}

/// The node a request is passed to, and the workspace it owns.
#[derive(Clone, Copy)]
struct Owner<'a> {
    ws: &'a WorkspaceId,
    node: &'a str,
}

/// Sends `req` to the owner at `addr` and hands back its answer. An owner that is alive
/// but frozen keeps the connection open without answering: once it has let its lease
/// run out (it renews a third of a lease before), the wait ends with 503, and the
/// client's retry is served by whichever node takes the workspace (this one, if none
/// did). The frozen owner cannot store the request later: its commit would be fenced.
async fn pass(app: &AppState, owner: Owner<'_>, addr: &str, req: Request) -> Elsewhere {
    let answer = pass_unwatched(app, addr, req);
    tokio::pin!(answer);
    let every = app
        .store
        .cluster()
        .map(|c| c.node().lease_ttl / 2)
        .unwrap_or(OWNER_TIMEOUT);
    let mut check = tokio::time::interval_at(tokio::time::Instant::now() + every, every);
    loop {
        tokio::select! {
            outcome = &mut answer => return outcome,
            _ = check.tick() => {
                if let Some(gone) = lease_lapsed(app, owner).await {
                    return Elsewhere::Refused(ApiError::workspace_unavailable(gone));
                }
            }
        }
    }
}

/// Why the wait for `owner` should end: its lease on the workspace ran out, or another
/// node holds it now. None while it still holds it.
async fn lease_lapsed(app: &AppState, owner: Owner<'_>) -> Option<String> {
    match app.registry.own(owner.ws).await {
        Err(DomainError::Elsewhere { node, .. }) if node == owner.node => None,
        Err(DomainError::Elsewhere { node, .. }) => Some(format!(
            "{} did not answer and {node} holds {} now",
            owner.node, owner.ws
        )),
        Ok(()) => Some(format!(
            "{} did not answer and let its lease on {} run out; this node took it",
            owner.node, owner.ws
        )),
        // The database cannot say: keep waiting for the owner.
        Err(_) => None,
    }
}

/// Sends `req` to the node at `addr` and hands back its answer.
async fn pass_unwatched(app: &AppState, addr: &str, req: Request) -> Elsewhere {
    // Nested routers see the path without their prefix: pass the one the client sent.
    let uri = req
        .extensions()
        .get::<axum::extract::OriginalUri>()
        .map(|o| o.0.clone())
        .unwrap_or_else(|| req.uri().clone());
    let (method, headers) = (req.method().clone(), req.headers().clone());
    // Read as the owner reads a body: the same limit, deadline and refusals (413...).
    let body = match RawBody::from_request(req, &()).await {
        Ok(RawBody(body)) => body,
        Err(refused) => return Elsewhere::Refused(refused),
    };
    let path = uri.path_and_query().map(|p| p.as_str()).unwrap_or("/");
    let url = format!("{}{path}", addr.trim_end_matches('/'));
    let mut outgoing = peers().request(method, &url).body(body);
    for (name, value) in headers.iter() {
        if !HOP_BY_HOP.contains(&name.as_str()) && name.as_str() != PASSED {
            outgoing = outgoing.header(name, value);
        }
    }
    let secret = app.settings.cluster.secret.clone().unwrap_or_default();
    let answer = match outgoing.header(PASSED, secret).send().await {
        Ok(answer) => answer,
        Err(e) => {
            tracing::warn!(error = %e, %url, "the workspace's owner did not answer");
            return Elsewhere::Refused(ApiError::workspace_unavailable(format!(
                "owner at {addr} did not answer: {e}"
            )));
        }
    };
    let status =
        StatusCode::from_u16(answer.status().as_u16()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let mut headers = HeaderMap::new();
    for (name, value) in answer.headers() {
        if !HOP_BY_HOP.contains(&name.as_str()) {
            if let Ok(name) = HeaderName::from_bytes(name.as_str().as_bytes()) {
                headers.append(name, value.clone());
            }
        }
    }
    match answer.bytes().await {
        Ok(bytes) => {
            let mut response = Response::new(Body::from(bytes));
            *response.status_mut() = status;
            *response.headers_mut() = headers;
            Elsewhere::Answered(response)
        }
        Err(e) => Elsewhere::Refused(ApiError::workspace_unavailable(format!(
            "owner at {addr} broke off: {e}"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_compare_whole() {
        assert!(constant_time_eq(b"same-secret", b"same-secret"));
        assert!(!constant_time_eq(b"same-secret", b"same-secreT"));
        assert!(!constant_time_eq(b"same", b"same-secret"));
        assert!(!constant_time_eq(b"", b"x"));
    }
}
