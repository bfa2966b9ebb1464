//! `switchboard listen`: a workspace's events, live, on the service's machine. It opens a
//! receiver on a loopback address, creates a temporary webhook endpoint pointing at it
//! through the operator API (only the admin token may point an endpoint at loopback), prints
//! each event as it arrives with its type, id and whether its signature verifies with the
//! endpoint's secret, forwards it with its headers to `--forward-to`, and removes the
//! endpoint on Ctrl-C.

use std::net::SocketAddr;
use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::Router;
use clap::Args;
use serde_json::{json, Value};
use switchboard_actors::events::signature;

#[derive(Args)]
pub struct ListenArgs {
    #[command(flatten)]
    pub operator: crate::config::OperatorArgs,
    /// The workspace whose events are received.
    #[arg(long)]
    pub workspace: String,
    /// Where each event is POSTed, with its headers and signature (for example
    /// http://localhost:3000/webhooks).
    #[arg(long)]
    pub forward_to: String,
    /// The event types to receive, comma-separated (`*`: every type but message.received and
    /// message.sent, which must be named).
    #[arg(long, value_delimiter = ',', default_value = "*")]
    pub events: Vec<String>,
    /// The loopback address the service delivers to (port 0: any free port).
    #[arg(long, default_value = "127.0.0.1:0")]
    pub listen_addr: SocketAddr,
}

/// How far a signature's time may be from this machine's clock.
const SIGNATURE_TOLERANCE_SECS: i64 = 300;

/// What the receiver needs for each event.
struct Forwarding {
    secret: String,
    forward_to: String,
    client: reqwest::Client,
}

/// The headers an event is forwarded with, so the receiving app can verify it as it would
/// verify the service's own delivery (with the secret printed at start).
const FORWARDED: [&str; 5] = [
    "content-type",
    "x-service-signature",
    "x-service-event-id",
    "x-service-event-type",
    "x-service-delivery-attempt",
];

/// Runs until `stop` resolves, then removes the endpoint.
pub async fn run(
    args: ListenArgs,
    stop: impl std::future::Future<Output = ()> + Send + 'static,
) -> Result<(), String> {
    if !args.listen_addr.ip().is_loopback() {
        return Err(format!(
            "--listen-addr {} is not a loopback address",
            args.listen_addr
        ));
    }
    url::Url::parse(&args.forward_to)
        .map_err(|e| format!("--forward-to {}: {e}", args.forward_to))?;
    let listener = tokio::net::TcpListener::bind(args.listen_addr)
        .await
        .map_err(|e| format!("cannot listen on {}: {e}", args.listen_addr))?;
    let local = listener.local_addr().map_err(|e| e.to_string())?;
    let client = reqwest::Client::builder()
        .no_proxy()
        .build()
        .map_err(|e| e.to_string())?;
    let operator = Operator {
        client: client.clone(),
        base: format!(
            "{}/admin/workspaces/{}/webhooks",
            args.operator.base(),
            args.workspace
        ),
        token: args.operator.admin_token.clone(),
    };
    let (endpoint, secret) = operator
        .create(&format!("http://{local}/"), &args.events)
        .await?;
    println!(
        "Ready: events of {} are forwarded to {} (endpoint {endpoint}, signing secret {secret}). Ctrl-C stops and removes the endpoint.",
        args.workspace, args.forward_to
    );
    let forwarding = Arc::new(Forwarding {
        secret,
        forward_to: args.forward_to,
        client,
    });
    let receiver = Router::new().fallback(receive).with_state(forwarding);
    let served = axum::serve(listener, receiver)
        .with_graceful_shutdown(stop)
        .await
        .map_err(|e| format!("the receiver stopped: {e}"));
    let removed = operator.remove(&endpoint).await;
    if removed.is_ok() {
        println!("Stopped: endpoint {endpoint} removed.");
    }
    served.and(removed)
}

/// The operator API calls that create and remove the temporary endpoint.
struct Operator {
    client: reqwest::Client,
    /// `<admin url>/admin/workspaces/<id>/webhooks`.
    base: String,
    token: String,
}

impl Operator {
    /// The new endpoint's id and signing secret.
    async fn create(&self, url: &str, events: &[String]) -> Result<(String, String), String> {
        let body = json!({"url": url, "events": events, "description": "switchboard listen"});
        let created = self
            .answer(self.client.post(&self.base).json(&body))
            .await
            .map_err(|e| format!("cannot create the endpoint: {e}"))?;
        let field = |name: &str| {
            created[name]
                .as_str()
                .map(str::to_string)
                .ok_or_else(|| format!("the answer lacks `{name}`: {created}"))
        };
        Ok((field("id")?, field("secret")?))
    }

    async fn remove(&self, endpoint: &str) -> Result<(), String> {
        self.answer(self.client.delete(format!("{}/{endpoint}", self.base)))
            .await
            .map(|_| ())
            .map_err(|e| format!("cannot remove endpoint {endpoint}: {e}"))
    }

    /// The JSON answer of a 2xx; the status and body of anything else.
    async fn answer(&self, request: reqwest::RequestBuilder) -> Result<Value, String> {
        let response = request
            .bearer_auth(&self.token)
            .send()
            .await
            .map_err(|e| format!("request failed: {e}"))?;
        let status = response.status();
        let text = response.text().await.map_err(|e| e.to_string())?;
        if !status.is_success() {
            return Err(format!("{status}: {text}"));
        }
        serde_json::from_str(&text).map_err(|e| format!("not JSON ({e}): {text}"))
    }
}

fn header<'a>(headers: &'a HeaderMap, name: &str) -> &'a str {
    headers
        .get(name)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
}

/// One delivery: printed, verified, forwarded. The service hears 200 once the app took the
/// event (2xx), else 502, so that it retries on its ladder; an event whose signature does
/// not verify is not forwarded (400).
async fn receive(State(f): State<Arc<Forwarding>>, headers: HeaderMap, body: Bytes) -> StatusCode {
    let now = chrono::Utc::now();
    let (event_type, event_id) = (
        header(&headers, "x-service-event-type"),
        header(&headers, "x-service-event-id"),
    );
    let at = now.format("%H:%M:%S");
    let verified = signature::verify(
        header(&headers, "x-service-signature"),
        &body,
        &f.secret,
        now.timestamp(),
        SIGNATURE_TOLERANCE_SECS,
    );
    if !verified {
        println!("{at}  {event_type}  {event_id}  signature INVALID: not forwarded");
        return StatusCode::BAD_REQUEST;
    }
    let mut forward = f.client.post(&f.forward_to).body(body);
    for name in FORWARDED {
        if let Some(v) = headers.get(name) {
            forward = forward.header(name, v);
        }
    }
    match forward.send().await {
        Ok(r) => {
            let status = r.status();
            println!(
                "{at}  {event_type}  {event_id}  signature verified  -> {} [{}]",
                f.forward_to,
                status.as_u16()
            );
            if status.is_success() {
                StatusCode::OK
            } else {
                StatusCode::BAD_GATEWAY
            }
        }
        Err(e) => {
            println!(
                "{at}  {event_type}  {event_id}  signature verified  -> {} failed: {e}",
                f.forward_to
            );
            StatusCode::BAD_GATEWAY
        }
    }
}
