//! The webhook receiver the load tester starts for itself, so that webhook-producing
//! writes have somewhere to deliver. It answers 200 at once to anything and enters each
//! delivery (its event id and the write its tag names) in the [`Deliveries`] ledger.

use std::sync::Arc;
use std::time::Instant;

use axum::body::Bytes;
use axum::extract::State;
use axum::http::StatusCode;
use axum::Router;
use serde::Deserialize;
use tokio::task::JoinHandle;

use super::deliveries::{write_number, Deliveries};
use super::LoadtestError;

/// A running receiver on 127.0.0.1; stops when dropped.
pub struct Receiver {
    /// Where endpoints should point.
    pub url: String,
    pub deliveries: Arc<Deliveries>,
    task: JoinHandle<()>,
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
    pub async fn start() -> Result<Self, LoadtestError> {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .map_err(|e| LoadtestError::new(format!("cannot start the webhook receiver: {e}")))?;
        let addr = listener
            .local_addr()
            .map_err(|e| LoadtestError::new(format!("the webhook receiver has no address: {e}")))?;
        let deliveries = Arc::new(Deliveries::default());
        let app = Router::new()
            .fallback(receive)
            .with_state(deliveries.clone());
        let task = tokio::spawn(async move {
            if let Err(e) = axum::serve(listener, app).await {
                eprintln!("switchboard loadtest: webhook receiver stopped: {e}");
            }
        });
        Ok(Self {
            url: format!("http://{addr}/loadtest-hooks"),
            deliveries,
            task,
        })
    }
}

/// Any request is a delivery; one that is not an event of ours counts as unmatched.
async fn receive(State(deliveries): State<Arc<Deliveries>>, body: Bytes) -> StatusCode {
    let arrived = Instant::now();
    let event: Option<Event> = serde_json::from_slice(&body).ok();
    let id = event.as_ref().and_then(|e| e.id.as_deref());
    let write = event
        .as_ref()
        .and_then(|e| e.data.as_ref())
        .and_then(|d| d.name.as_deref())
        .and_then(write_number);
    deliveries.delivered(id, write, arrived);
    StatusCode::OK
}

impl Drop for Receiver {
    fn drop(&mut self) {
        self.task.abort();
    }
}
