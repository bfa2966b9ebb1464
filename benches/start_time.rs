//! Start time with a long delivery history: 1,000 endpoints (10 workspaces x 100) and
//! 1,000,000 delivery records (RECORDS), 1 in 1,000 of them still pending. The endpoints
//! are created over the API; the records are written straight into the store (the API
//! would need minutes to make them), the way the endpoint actors write them. Then the
//! `switchboard` binary starts on that folder, and the bench reports how long it takes
//! until it answers `GET /health` and a workspace route, and until the pending deliveries
//! arrive.
//!
//! `cargo bench --bench start_time` (RECORDS, ENDPOINTS to change).

mod common;
use common::env;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use switchboard_actors::clock::Timestamp;
use switchboard_actors::delivery::record::{self, Attempt, Delivery, DeliveryStatus};
use switchboard_actors::ids::{DeliveryId, EndpointId, EventId, WorkspaceId};
use switchboard_actors::store::{Batch, Store};

const ADMIN_TOKEN: &str = "bench-admin-token-0123456789";

/// The service as its own process on free ports, as an operator runs it.
struct Service {
    child: std::process::Child,
    api: String,
    admin: String,
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port()
}

impl Service {
    fn spawn(dir: &std::path::Path) -> Self {
        let (api, admin) = (free_port(), free_port());
        let child = std::process::Command::new(env!("CARGO_BIN_EXE_switchboard"))
            .arg("serve")
            .env("SWITCHBOARD_ADDR", format!("127.0.0.1:{api}"))
            .env("SWITCHBOARD_ADMIN_ADDR", format!("127.0.0.1:{admin}"))
            .env("SWITCHBOARD_DATA_DIR", dir)
            .env("SWITCHBOARD_ADMIN_TOKEN", ADMIN_TOKEN)
            .env("SWITCHBOARD_RATE_LIMIT_PER_MINUTE", "0")
            .env("SWITCHBOARD_WEBHOOK_ALLOW_PRIVATE", "true")
            .env("RUST_LOG", "warn")
            .stdout(std::process::Stdio::null())
            .spawn()
            .expect("the switchboard binary starts");
        Self {
            child,
            api: format!("http://127.0.0.1:{api}"),
            admin: format!("http://127.0.0.1:{admin}"),
        }
    }

    /// Polls `GET /health` until it answers 200.
    async fn answering(&self, client: &reqwest::Client) {
        let give_up = Instant::now() + Duration::from_secs(120);
        loop {
            if let Ok(r) = client.get(format!("{}/health", self.api)).send().await {
                if r.status().is_success() {
                    return;
                }
            }
            assert!(Instant::now() < give_up, "the service did not start");
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
    }

    /// A clean stop (SIGTERM), waited for.
    fn stop(mut self) {
        let _ = std::process::Command::new("kill")
            .arg(self.child.id().to_string())
            .status();
        let _ = self.child.wait();
    }
}

/// A receiver that counts what it is sent.
async fn receiver() -> (String, Arc<AtomicU64>) {
    let count = Arc::new(AtomicU64::new(0));
    let seen = count.clone();
    let app = axum::Router::new().fallback(move || {
        let seen = seen.clone();
        async move {
            seen.fetch_add(1, Ordering::Relaxed);
            "ok"
        }
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let url = format!("http://{}/hook", listener.local_addr().expect("addr"));
    tokio::spawn(async move { axum::serve(listener, app).await });
    (url, count)
}

#[tokio::main]
async fn main() {
    if !std::env::args().any(|a| a == "--bench") {
        println!("run with cargo bench to measure");
        return;
    }
    let records = env("RECORDS", 1_000_000);
    let endpoints = env("ENDPOINTS", 1_000);
    let per_workspace = 100.min(endpoints);
    let dir = tempfile::tempdir().expect("tempdir");
    let (hook, arrived) = receiver().await;
    let client = reqwest::Client::builder()
        .no_proxy()
        .build()
        .expect("client");

    // 1. The endpoints, over the API.
    let service = Service::spawn(dir.path());
    service.answering(&client).await;
    let (api, admin) = (format!("{}/api/v1", service.api), service.admin.clone());
    let mut made: Vec<(WorkspaceId, EndpointId)> = Vec::new();
    let mut first_key = None;
    while (made.len() as u64) < endpoints {
        let ws: Value = client
            .post(format!("{admin}/admin/workspaces"))
            .bearer_auth(ADMIN_TOKEN)
            .json(&json!({"name": format!("history {}", made.len())}))
            .send()
            .await
            .expect("workspace")
            .json()
            .await
            .expect("workspace body");
        let key = ws["api_key"].as_str().expect("key").to_string();
        let ws_id = WorkspaceId::parse(ws["id"].as_str().expect("id")).expect("ws");
        first_key.get_or_insert((ws_id.clone(), key.clone()));
        for _ in 0..per_workspace.min(endpoints - made.len() as u64) {
            let ep: Value = client
                .post(format!("{api}/webhooks"))
                .bearer_auth(&key)
                .json(&json!({"url": hook, "events": ["tag.created"]}))
                .send()
                .await
                .expect("endpoint")
                .json()
                .await
                .expect("endpoint body");
            let id = EndpointId::parse(ep["id"].as_str().expect("endpoint id")).expect("we");
            made.push((ws_id.clone(), id));
        }
    }
    service.stop();

    // 2. The history, straight into the store: settled records, and one in 1,000 pending
    //    (due now, so that the start has real work to resume).
    let started = Instant::now();
    let store = Store::open(dir.path()).expect("store");
    let body = json!({"type": "tag.created", "data": {"object": "tag", "id": 1, "name": "vip"}})
        .to_string();
    let now = chrono::Utc::now();
    let mut batch = Batch::default();
    let mut pending = 0u64;
    for n in 0..records {
        let (ws, ep) = &made[(n % made.len() as u64) as usize];
        let due_now = n % 1_000 == 999;
        let d = Delivery {
            id: DeliveryId(store.next_id().expect("id")),
            endpoint_id: ep.clone(),
            workspace_id: ws.clone(),
            event_id: EventId::generate(),
            event_type: "tag.created".into(),
            body: body.clone(),
            status: if due_now {
                DeliveryStatus::Pending
            } else {
                DeliveryStatus::Delivered
            },
            attempts: if due_now {
                Vec::new()
            } else {
                vec![Attempt {
                    number: 1,
                    at: Timestamp(now),
                    status_code: Some(200),
                    error: None,
                    duration_ms: 3,
                }]
            },
            next_attempt_at: due_now.then_some(Timestamp(now)),
            created_at: Timestamp(now),
            quoted_details: Default::default(),
        };
        pending += u64::from(due_now);
        record::put(&mut batch, &d).expect("put");
        if batch.len() >= 20_000 {
            store.apply(std::mem::take(&mut batch)).expect("apply");
        }
    }
    store.apply(batch).expect("apply");
    store.flush_now().expect("flush");
    drop(store);
    // The store's own threads let go of the folder once they see the store dropped.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let size: u64 = walk_size(dir.path());
    println!(
        "history: {records} delivery records ({pending} pending) over {} endpoints written in {:.1} s; data folder {:.0} MiB",
        made.len(),
        started.elapsed().as_secs_f64(),
        size as f64 / 1048576.0
    );

    // 3. The start.
    let started = Instant::now();
    let service = Service::spawn(dir.path());
    service.answering(&client).await;
    let health_at = started.elapsed();
    let api = format!("{}/api/v1", service.api);
    let (ws, key) = first_key.expect("a workspace");
    let webhooks = client
        .get(format!("{api}/webhooks"))
        .bearer_auth(&key)
        .send()
        .await
        .expect("webhooks");
    assert!(webhooks.status().is_success(), "{ws}");
    let workspace_at = started.elapsed();
    let wait_until = Instant::now() + Duration::from_secs(120);
    while arrived.load(Ordering::Relaxed) < pending && Instant::now() < wait_until {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let delivered_at = started.elapsed();
    println!(
        "start: GET /health answered {:.0} ms after the process was started; GET /webhooks at {:.0} ms; {} of {pending} pending deliveries arrived by {:.0} ms",
        health_at.as_secs_f64() * 1000.0,
        workspace_at.as_secs_f64() * 1000.0,
        arrived.load(Ordering::Relaxed),
        delivered_at.as_secs_f64() * 1000.0,
    );
    service.stop();
}

fn walk_size(dir: &std::path::Path) -> u64 {
    std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .flatten()
                .map(|e| match e.metadata() {
                    Ok(m) if m.is_dir() => walk_size(&e.path()),
                    Ok(m) => m.len(),
                    Err(_) => 0,
                })
                .sum()
        })
        .unwrap_or(0)
}
