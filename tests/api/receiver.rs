//! A real webhook receiver on 127.0.0.1:0 that records every request (headers and raw
//! body bytes) and answers as a test tells it: a status, a slow answer, or a redirect.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Router;

#[derive(Debug, Clone)]
pub struct Received {
    pub headers: HeaderMap,
    pub body: Bytes,
}

impl Received {
    pub fn header(&self, name: &str) -> &str {
        self.headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
    }

    pub fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body).expect("a JSON body")
    }

    /// `X-Service-Event-Type`.
    pub fn event_type(&self) -> &str {
        self.header("x-service-event-type")
    }

    /// `X-Service-Event-Id`.
    pub fn event_id(&self) -> &str {
        self.header("x-service-event-id")
    }

    /// `X-Service-Delivery-Attempt` as a number (0 when missing).
    pub fn attempt(&self) -> u32 {
        self.header("x-service-delivery-attempt")
            .parse()
            .unwrap_or(0)
    }

    /// The `v1=` values of `X-Service-Signature`.
    pub fn signatures(&self) -> Vec<&str> {
        self.header("x-service-signature")
            .split(',')
            .filter_map(|p| p.trim().strip_prefix("v1="))
            .collect()
    }

    /// The `t=` value of `X-Service-Signature`.
    pub fn signed_at(&self) -> i64 {
        self.header("x-service-signature")
            .split(',')
            .find_map(|p| p.trim().strip_prefix("t="))
            .and_then(|t| t.parse().ok())
            .expect("a t= value")
    }
}

#[derive(Debug, Clone)]
enum Behaviour {
    Status(u16),
    /// Answers the status after the wait.
    Slow(Duration, u16),
    Redirect(String),
}

#[derive(Clone)]
struct Shared {
    received: Arc<Mutex<Vec<Received>>>,
    behaviour: Arc<Mutex<Behaviour>>,
}

pub struct TestReceiver {
    pub url: String,
    shared: Shared,
}

impl TestReceiver {
    pub async fn start() -> Self {
        let shared = Shared {
            received: Arc::default(),
            behaviour: Arc::new(Mutex::new(Behaviour::Status(200))),
        };
        let app = Router::new().fallback(receive).with_state(shared.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Self {
            url: format!("http://{addr}/hook"),
            shared,
        }
    }

    pub fn respond_with(&self, status: u16) {
        *self.shared.behaviour.lock().unwrap() = Behaviour::Status(status);
    }

    /// Answers 200 only after `d` (longer than the answer time limit: a timeout).
    pub fn answer_after(&self, d: Duration) {
        self.answer_after_with(d, 200);
    }

    /// Answers `status` only after `d`.
    pub fn answer_after_with(&self, d: Duration, status: u16) {
        *self.shared.behaviour.lock().unwrap() = Behaviour::Slow(d, status);
    }

    pub fn redirect_to(&self, location: &str) {
        *self.shared.behaviour.lock().unwrap() = Behaviour::Redirect(location.to_string());
    }

    pub fn received(&self) -> Vec<Received> {
        self.shared.received.lock().unwrap().clone()
    }

    /// Waits (up to 10 s) until at least `n` requests arrived.
    pub async fn wait_for(&self, n: usize) -> Vec<Received> {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
        loop {
            let got = self.received();
            if got.len() >= n {
                return got;
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "expected {n} requests, got {}",
                got.len()
            );
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }

    /// Waits (up to 10 s) until the requests received so far satisfy `done`.
    pub async fn wait_until(
        &self,
        what: &str,
        done: impl Fn(&[Received]) -> bool,
    ) -> Vec<Received> {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
        loop {
            let got = self.received();
            if done(&got) {
                return got;
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "waited 10 s for {what}; got {} requests: {:?}",
                got.len(),
                got.iter().map(|r| r.event_type()).collect::<Vec<_>>()
            );
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }

    /// The requests so far in the order their events happened (`occurred_at`, stable):
    /// deliveries may arrive out of order, a retry overtaken by a later event. Events of
    /// one change share their `occurred_at` (as may changes in one millisecond) and stay
    /// in arrival order: this orders only events apart in time, as on a manual clock.
    pub fn in_event_order(&self) -> Vec<Received> {
        let mut got = self.received();
        got.sort_by_key(|r| r.json()["occurred_at"].as_str().unwrap_or("").to_string());
        got
    }

    /// The event types received so far, sorted by name: deliveries may arrive in any
    /// order (even the events of one change), so tests compare what arrived, not when.
    pub fn event_types(&self) -> Vec<String> {
        let mut types: Vec<String> = self
            .received()
            .iter()
            .map(|r| r.event_type().to_string())
            .collect();
        types.sort();
        types
    }

    /// The requests so far that carry `event_type`, in arrival order.
    pub fn of_type(&self, event_type: &str) -> Vec<Received> {
        self.received()
            .into_iter()
            .filter(|r| r.event_type() == event_type)
            .collect()
    }

    /// Asserts nothing more than `n` requests arrive within `d`.
    pub async fn stays_at(&self, n: usize, d: Duration) {
        tokio::time::sleep(d).await;
        assert_eq!(self.received().len(), n, "unexpected extra requests");
    }
}

async fn receive(State(s): State<Shared>, headers: HeaderMap, body: Bytes) -> Response {
    s.received.lock().unwrap().push(Received { headers, body });
    let behaviour = s.behaviour.lock().unwrap().clone();
    match behaviour {
        Behaviour::Status(code) => StatusCode::from_u16(code)
            .unwrap_or(StatusCode::OK)
            .into_response(),
        Behaviour::Slow(d, code) => {
            tokio::time::sleep(d).await;
            StatusCode::from_u16(code)
                .unwrap_or(StatusCode::OK)
                .into_response()
        }
        Behaviour::Redirect(to) => (StatusCode::FOUND, [("location", to)]).into_response(),
    }
}

/// A URL on a local port where nothing listens.
pub async fn closed_url() -> String {
    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = l.local_addr().unwrap();
    drop(l);
    format!("http://{addr}/hook")
}
