//! 10,000 workspaces touched in one run: memory while their actors are live, after they
//! passivate, and after a second round (which shows freed memory is reused, not leaked).
//! `cargo bench --bench workspaces_10k` (WORKSPACES, IDLE_MS to change).

mod common;

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;
use switchboard_actors::domain::contact::{ContactInput, NewContact};
use switchboard_actors::ids::WorkspaceId;
use switchboard_actors::registry::Registry;
use switchboard_actors::store::Store;
use tokio::sync::Semaphore;

/// The same allocator as the service binary, which gives freed pages back to the system.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn rss_mib() -> f64 {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap_or_default();
    let pages: f64 = statm
        .split_whitespace()
        .nth(1)
        .and_then(|p| p.parse().ok())
        .unwrap_or(0.0);
    pages * 4096.0 / 1048576.0
}

/// Touches `n` new workspaces (one durable contact each); answers how long it took.
async fn touch(reg: &Registry, n: usize, new: &NewContact) -> Duration {
    let gate = Arc::new(Semaphore::new(256));
    let started = Instant::now();
    let mut tasks = Vec::with_capacity(n);
    for _ in 0..n {
        let (reg, new, gate) = (reg.clone(), new.clone(), gate.clone());
        tasks.push(tokio::spawn(async move {
            let _permit = gate.acquire_owned().await.expect("gate");
            let ws = WorkspaceId::generate();
            common::create_contact(&reg, &ws, &new).await;
        }));
    }
    for t in tasks {
        t.await.expect("join");
    }
    started.elapsed()
}

async fn until_passivated(reg: &Registry, idle: Duration) {
    let deadline = Instant::now() + idle * 4 + Duration::from_secs(30);
    while reg.live() > 0 && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    tokio::time::sleep(Duration::from_millis(1500)).await;
}

#[tokio::main]
async fn main() {
    // `cargo test --all-targets` runs bench targets too; measure only under `cargo bench`.
    if !std::env::args().any(|a| a == "--bench") {
        println!("run with cargo bench to measure");
        return;
    }
    let n = common::env("WORKSPACES", 10_000) as usize;
    let idle = Duration::from_millis(common::env("IDLE_MS", 3_000));
    let dir = tempfile::tempdir().expect("tempdir");
    let store = Store::open(dir.path()).expect("store");
    let reg = common::registry(&store, idle).await;
    let base = rss_mib();
    let input: ContactInput =
        serde_json::from_value(json!({"first_name": "Ann", "email": "ann@example.com"}))
            .expect("input");
    let new = NewContact::parse(input).expect("valid");

    let took = touch(&reg, n, &new).await;
    let live = reg.live();
    let peak = rss_mib();
    println!(
        "{n} workspaces touched (one durable contact each) in {:.2} s; {live} live actors; resident memory {:.1} MiB over a {:.1} MiB baseline = {:.1} KiB per live workspace actor",
        took.as_secs_f64(),
        peak - base,
        base,
        (peak - base) * 1024.0 / live.max(1) as f64
    );
    until_passivated(&reg, idle).await;
    println!(
        "after {:.1} s idle: {} live actors, {} passivations; resident memory {:.1} MiB over baseline",
        idle.as_secs_f64(),
        reg.live(),
        reg.stats().passivations.load(std::sync::atomic::Ordering::Relaxed),
        rss_mib() - base
    );
    let took = touch(&reg, n, &new).await;
    println!(
        "a second round of {n} new workspaces in {:.2} s: resident memory {:.1} MiB over baseline",
        took.as_secs_f64(),
        rss_mib() - base
    );
    until_passivated(&reg, idle).await;
    println!(
        "after the second round passivates: {:.1} MiB over baseline",
        rss_mib() - base
    );
}
