//! The webhook receiver the load tester starts for itself, so that webhook-producing
//! writes have somewhere to deliver. Each workspace's endpoint points at a path of its
//! own under the run's marker (`/loadtest-hooks/<run>/<workspace>`), so the receiver
//! knows which secret signed a delivery: one whose `X-Service-Signature` verifies is
//! answered 200 and entered in the [`Deliveries`] ledger (its event id and the write its
//! tag names); anything else (unsigned, badly signed, or for an endpoint of another run)
//! is answered 400 and only counted, as rejected.

use std::collections::HashMap;
use std::sync::{Arc, RwLock};
use std::time::Instant;

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, Uri};
use axum::Router;
use serde::Deserialize;
use switchboard_actors::events::signature;
use tokio::task::JoinHandle;

use super::deliveries::{write_number, Deliveries};
use super::LoadtestError;

/// How far a signature's time may be from ours, as `switchboard listen` allows.
const SIGNATURE_TOLERANCE_SECS: i64 = 300;

/// A running receiver on 127.0.0.1; stops when dropped.
pub struct Receiver {
    pub deliveries: Arc<Deliveries>,
    inbox: Arc<Inbox>,
    /// `http://<address>` of the listener.
    origin: String,
    task: JoinHandle<()>,
}

/// What the handler needs: the ledger, and each endpoint's secret.
struct Inbox {
    deliveries: Arc<Deliveries>,
    /// The run's marker: in the path, and in the tag names of its writes.
    run: String,
    /// Workspace number to its endpoint's signing secret.
    secrets: RwLock<HashMap<usize, String>>,
}

/// The parts of an event the ledger needs.
#[derive(Deserialize)]
struct Event {
    id: Option<String>,
    data: Option<EventData>,
}

#[derive(Deserialize)]
struct EventData {
    name: Option<String>,
}

impl Receiver {
    /// Listens on a free port of 127.0.0.1 for the run marked `run`.
    pub async fn start(run: &str) -> Result<Self, LoadtestError> {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .map_err(|e| LoadtestError::new(format!("cannot start the webhook receiver: {e}")))?;
        let addr = listener
            .local_addr()
            .map_err(|e| LoadtestError::new(format!("the webhook receiver has no address: {e}")))?;
        let deliveries = Arc::new(Deliveries::default());
        let inbox = Arc::new(Inbox {
            deliveries: deliveries.clone(),
            run: run.to_string(),
            secrets: RwLock::new(HashMap::new()),
        });
        let app = Router::new().fallback(receive).with_state(inbox.clone());
        let task = tokio::spawn(async move {
            if let Err(e) = axum::serve(listener, app).await {
                eprintln!("switchboard loadtest: webhook receiver stopped: {e}");
            }
        });
        Ok(Self {
            deliveries,
            inbox,
            origin: format!("http://{addr}"),
            task,
        })
    }

    /// Where the endpoint of workspace number `workspace` should point.
    pub fn url_for(&self, workspace: usize) -> String {
        format!("{}{}{workspace}", self.origin, self.inbox.path_prefix())
    }

    /// Records the signing secret of workspace `workspace`'s endpoint (from the answer
    /// that created it), so that its deliveries verify.
    pub fn know_secret(&self, workspace: usize, secret: String) {
        let mut secrets = self
            .inbox
            .secrets
            .write()
            .unwrap_or_else(|e| e.into_inner());
        secrets.insert(workspace, secret);
    }
}

impl Inbox {
    fn path_prefix(&self) -> String {
        format!("/loadtest-hooks/{}/", self.run)
    }

    /// Whether the request to `path` is signed by the secret of the endpoint that
    /// points there.
    fn verifies(&self, path: &str, headers: &HeaderMap, body: &[u8]) -> bool {
        let workspace = path
            .strip_prefix(&self.path_prefix())
            .and_then(|n| n.parse::<usize>().ok());
        let secrets = self.secrets.read().unwrap_or_else(|e| e.into_inner());
        let Some(secret) = workspace.and_then(|w| secrets.get(&w)) else {
            return false;
        };
        let header = headers
            .get("x-service-signature")
            .and_then(|v| v.to_str().ok())
            .unwrap_or("");
        let now = chrono::Utc::now().timestamp();
        signature::verify(header, body, secret, now, SIGNATURE_TOLERANCE_SECS)
    }
}

/// A verified request is a delivery (one that is not an event of ours counts as
/// unmatched); any other is rejected, so a stranger never passes for a delivery.
async fn receive(
    State(inbox): State<Arc<Inbox>>,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> StatusCode {
    let arrived = Instant::now();
    if !inbox.verifies(uri.path(), &headers, &body) {
        inbox.deliveries.rejected();
        return StatusCode::BAD_REQUEST;
    }
    let event: Option<Event> = serde_json::from_slice(&body).ok();
    let id = event.as_ref().and_then(|e| e.id.as_deref());
    let write = event
        .as_ref()
        .and_then(|e| e.data.as_ref())
        .and_then(|d| d.name.as_deref())
        .and_then(|name| write_number(&inbox.run, name));
    inbox.deliveries.delivered(id, write, arrived);
    StatusCode::OK
}

impl Drop for Receiver {
    fn drop(&mut self) {
        self.task.abort();
    }
}

#[cfg(test)]
mod tests {
    use super::super::deliveries::tag_name;
    use super::*;

    #[tokio::test]
    async fn only_a_delivery_signed_with_its_endpoints_secret_counts() {
        let receiver = Receiver::start("r1").await.unwrap();
        receiver.know_secret(0, "whsec_zero".into());
        receiver.deliveries.sent(7, Instant::now());
        receiver.deliveries.accepted(7);
        let body =
            serde_json::json!({"id": "evt_1", "data": {"name": tag_name("r1", 7)}}).to_string();
        let now = chrono::Utc::now().timestamp();
        let client = reqwest::Client::builder().no_proxy().build().unwrap();
        let post = |url: String, signed: Option<String>| {
            let mut req = client.post(url).body(body.clone());
            if let Some(h) = signed {
                req = req.header("X-Service-Signature", h);
            }
            async move { req.send().await.unwrap().status().as_u16() }
        };
        let by = |secret: &str| Some(signature::header(now, body.as_bytes(), &[secret]));
        // Unsigned, twice (once this counted as a duplicate and an unmatched delivery).
        assert_eq!(post(receiver.url_for(0), None).await, 400);
        assert_eq!(post(receiver.url_for(0), None).await, 400);
        // Signed with another secret, and at an endpoint this run did not make.
        assert_eq!(post(receiver.url_for(0), by("whsec_other")).await, 400);
        assert_eq!(post(receiver.url_for(1), by("whsec_zero")).await, 400);
        let elsewhere = receiver.url_for(0).replace("/r1/", "/r0/");
        assert_eq!(post(elsewhere, by("whsec_zero")).await, 400);
        let s = receiver.deliveries.summary();
        assert_eq!(s.rejected, 5, "{s:?}");
        assert_eq!(
            (s.received, s.delivered, s.duplicates, s.unmatched),
            (0, 0, 0, 0)
        );

        assert_eq!(post(receiver.url_for(0), by("whsec_zero")).await, 200);
        let s = receiver.deliveries.summary();
        assert_eq!((s.received, s.delivered, s.rejected), (1, 1, 5), "{s:?}");
    }
}
