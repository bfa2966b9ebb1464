//! 10,000 durable order creations across 100 workspaces at once, through the workspace
//! actors (in process, no HTTP): throughput and latency percentiles.
//!
//! `cargo bench --bench orders_throughput` (ORDERS, WORKSPACES, CONCURRENCY to change).

mod common;

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;
use switchboard_actors::domain::contact::{ContactInput, NewContact};
use switchboard_actors::domain::order::{NewOrder, NewOrderInput};
use switchboard_actors::events::Origin;
use switchboard_actors::ids::WorkspaceId;
use switchboard_actors::store::Store;
use switchboard_actors::workspace::OrderMsg;
use tokio::sync::Semaphore;

#[tokio::main]
async fn main() {
    // `cargo test --all-targets` runs bench targets too; measure only under `cargo bench`.
    if !std::env::args().any(|a| a == "--bench") {
        println!("run with cargo bench to measure");
        return;
    }
    let orders = common::env("ORDERS", 10_000) as usize;
    let workspaces = common::env("WORKSPACES", 100) as usize;
    let concurrency = common::env("CONCURRENCY", 256) as usize;
    let dir = tempfile::tempdir().expect("tempdir");
    let store = Store::open(dir.path()).expect("store");
    let reg = common::registry(&store, Duration::from_secs(3600)).await;

    let mut targets = Vec::new();
    for _ in 0..workspaces {
        let ws = WorkspaceId::generate();
        let input: ContactInput =
            serde_json::from_value(json!({"first_name": "Ann", "phone": "+15550100"}))
                .expect("input");
        let new = NewContact::parse(input).expect("valid");
        let c = common::create_contact(&reg, &ws, &new).await;
        targets.push((ws, c.id));
    }
    let order = |contact: switchboard_actors::ids::ContactId| {
        let input: NewOrderInput = serde_json::from_value(json!({
            "contact_id": contact,
            "currency": "EUR",
            "items": [{"name": "Tea", "quantity": 2, "unit_price": 4.5}, {"name": "Cup", "quantity": 1, "unit_price": 12.99}],
            "shipping_fee": 3.9
        }))
        .expect("input");
        NewOrder::parse(input).expect("valid")
    };

    let gate = Arc::new(Semaphore::new(concurrency));
    let started = Instant::now();
    let mut tasks = Vec::with_capacity(orders);
    for i in 0..orders {
        let (ws, contact) = targets[i % workspaces].clone();
        let new = order(contact);
        let reg = reg.clone();
        let gate = gate.clone();
        tasks.push(tokio::spawn(async move {
            let _permit = gate.acquire_owned().await.expect("gate");
            let t = Instant::now();
            reg.call(&ws, |r| {
                OrderMsg::Create {
                    origin: Origin::system(),
                    new: new.clone(),
                    reply: r,
                }
                .into()
            })
            .await
            .expect("order");
            t.elapsed()
        }));
    }
    let mut latencies = Vec::with_capacity(orders);
    for t in tasks {
        latencies.push(t.await.expect("join"));
    }
    let took = started.elapsed();
    latencies.sort();
    let at = |q: f64| latencies[((latencies.len() as f64 * q) as usize).min(latencies.len() - 1)];
    let stats = store.stats();
    let flushes = stats.flushes.load(std::sync::atomic::Ordering::Relaxed);
    println!(
        "{orders} orders across {workspaces} workspaces, {concurrency} in flight: {:.2} s, {:.0} orders/s",
        took.as_secs_f64(),
        orders as f64 / took.as_secs_f64()
    );
    println!(
        "latency p50 {:.2} ms  p99 {:.2} ms  max {:.2} ms; {} flushes ({:.1} writes per flush)",
        at(0.5).as_secs_f64() * 1e3,
        at(0.99).as_secs_f64() * 1e3,
        latencies[latencies.len() - 1].as_secs_f64() * 1e3,
        flushes,
        stats
            .flushed_writes
            .load(std::sync::atomic::Ordering::Relaxed) as f64
            / flushes.max(1) as f64
    );
}
