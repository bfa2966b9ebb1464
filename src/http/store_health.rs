//! The store's health at the edge: `/health` reports it, writes are refused with 503 while
//! the store cannot take them, and a watcher asks for a restart once the data folder takes
//! writes again (sled does not recover from an I/O failure in process; see
//! `switchboard_actors::store::health`).

use std::time::Duration;

use crate::http::json::Json;
use axum::http::{Method, StatusCode};
use axum::response::{IntoResponse, Response};
use switchboard_actors::store::health::Probe;
use switchboard_actors::store::Store;
use tokio::sync::watch;

use super::error::ApiError;
use super::AppState;

/// How often a failing store's data folder is probed.
const PROBE_EVERY: Duration = Duration::from_secs(2);

/// `GET /health`: 200 `{"status":"ok"}`, or 503 naming the store and why it fails. In a
/// cluster, also 503 while the database has not answered this node's heartbeats for longer
/// than a lease (its leases have run out, so a load balancer should send elsewhere).
pub fn report(store: &Store) -> Response {
    if let Some(silent) = store.cluster().and_then(|c| c.unreachable()) {
        return (
            StatusCode::SERVICE_UNAVAILABLE,
            Json(serde_json::json!({
                "status": "unavailable",
                "database": {
                    "status": "unreachable",
                    "reason": silent.reason,
                    "silent_for_ms": silent.silent_for.as_millis() as u64,
                },
            })),
        )
            .into_response();
    }
    match store.health().failure() {
        None => Json(serde_json::json!({"status": "ok"})).into_response(),
        Some(f) => (
            StatusCode::SERVICE_UNAVAILABLE,
            Json(serde_json::json!({
                "status": "unavailable",
                "store": {
                    "status": "failing",
                    "reason": f.reason,
                    "since": switchboard_actors::clock::rfc3339_millis::format(&f.since),
                },
            })),
        )
            .into_response(),
    }
}

/// The 503 every write gets while the store cannot take it; reads go on.
pub fn refusal(app: &AppState, method: &Method) -> Option<Response> {
    let reads = [Method::GET, Method::HEAD, Method::OPTIONS];
    (app.store.health().is_failing() && !reads.contains(method))
        .then(|| ApiError::unavailable("the store is failing").into_response())
}

/// Probes a failing store until its data folder takes writes again, then says so on
/// `restart`: the process must start over on a fresh store.
pub async fn watch(store: Store, restart: watch::Sender<bool>, mut stopped: watch::Receiver<bool>) {
    let mut tick = tokio::time::interval(PROBE_EVERY);
    loop {
        tokio::select! {
            _ = tick.tick() => {}
            _ = stopped.wait_for(|s| *s) => return,
        }
        let health = store.clone();
        let probe = tokio::task::spawn_blocking(move || health.probe()).await;
        if let Ok(Probe::RestartNeeded) = probe {
            let what = match store.engine_name() {
                "postgres" => "the database answers again",
                _ => "the data folder takes writes again",
            };
            tracing::error!("{what}, but the store cannot recover in process; restarting");
            let _ = restart.send(true);
            return;
        }
    }
}
