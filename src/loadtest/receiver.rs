//! The webhook receiver the load tester starts for itself, so that webhook-producing
//! writes have somewhere to deliver: it answers 200 to anything and counts what came.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use axum::http::StatusCode;
use axum::Router;
use tokio::task::JoinHandle;

use super::LoadtestError;

/// A running receiver on 127.0.0.1; stops when dropped.
pub struct Receiver {
    /// Where endpoints should point.
    pub url: String,
    received: Arc<AtomicU64>,
    task: JoinHandle<()>,
}

impl Receiver {
    pub async fn start() -> Result<Self, LoadtestError> {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .map_err(|e| LoadtestError::new(format!("cannot start the webhook receiver: {e}")))?;
        let addr = listener
            .local_addr()
            .map_err(|e| LoadtestError::new(format!("the webhook receiver has no address: {e}")))?;
        let received = Arc::new(AtomicU64::new(0));
        let counter = received.clone();
        let app = Router::new().fallback(move || {
            let counter = counter.clone();
            async move {
                counter.fetch_add(1, Ordering::Relaxed);
                StatusCode::OK
            }
        });
        let task = tokio::spawn(async move {
            if let Err(e) = axum::serve(listener, app).await {
                eprintln!("switchboard loadtest: webhook receiver stopped: {e}");
            }
        });
        Ok(Self {
            url: format!("http://{addr}/loadtest-hooks"),
            received,
            task,
        })
    }

    /// Deliveries received so far.
    pub fn received(&self) -> u64 {
        self.received.load(Ordering::Relaxed)
    }
}

impl Drop for Receiver {
    fn drop(&mut self) {
        self.task.abort();
    }
}
