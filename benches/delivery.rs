//! Webhook delivery, end to end over real HTTP on this machine:
//! 1. from an API write to its first delivery attempt, at about 1,000 events/s;
//! 2. sustained deliveries to 1,000 endpoints (10 workspaces x 100), one of which never
//!    answers in time, to show that a slow endpoint delays nobody else;
//! 3. a backlog of BACKLOG pending deliveries to one fast endpoint (built while the
//!    receiver holds its first answers), drained per second once it answers.
//!
//! `cargo bench --bench delivery` (EVENTS_PER_SEC, SECONDS, ENDPOINT_EVENTS, BACKLOG to
//! change; SKIP_FANOUT=1 skips part 2).

mod common;
use common::env;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::body::Bytes;
use axum::extract::State;
use axum::Router;
use serde_json::{json, Value};
use switchboard::config::Settings;

type Arrivals = Arc<Mutex<HashMap<String, Instant>>>;

async fn receiver(slow: bool) -> (String, Arrivals, Arc<std::sync::atomic::AtomicU64>) {
    let arrivals: Arrivals = Arc::default();
    let count = Arc::new(std::sync::atomic::AtomicU64::new(0));
    let state = (arrivals.clone(), count.clone(), slow);
    let app = Router::new()
        .fallback(
            |State((arrivals, count, slow)): State<(
                Arrivals,
                Arc<std::sync::atomic::AtomicU64>,
                bool,
            )>,
             body: Bytes| async move {
                if slow {
                    tokio::time::sleep(Duration::from_secs(60)).await;
                }
                count.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                if let Ok(v) = serde_json::from_slice::<Value>(&body) {
                    if let Some(name) = v["data"]["name"].as_str() {
                        arrivals
                            .lock()
                            .unwrap()
                            .entry(name.to_string())
                            .or_insert_with(Instant::now);
                    }
                }
                "ok"
            },
        )
        .with_state(state);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    (format!("http://{addr}/hook"), arrivals, count)
}

fn percentile(sorted: &[Duration], q: f64) -> f64 {
    sorted[((sorted.len() as f64 * q) as usize).min(sorted.len() - 1)].as_secs_f64() * 1e3
}

#[tokio::main]
async fn main() {
    // `cargo test --all-targets` runs bench targets too; measure only under `cargo bench`.
    if !std::env::args().any(|a| a == "--bench") {
        println!("run with cargo bench to measure");
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let mut settings = Settings {
        addr: "127.0.0.1:0".parse().expect("addr"),
        admin_addr: "127.0.0.1:0".parse().expect("addr"),
        data_dir: dir.path().to_path_buf(),
        admin_token: Some("bench-admin-token-0123456789".into()),
        rate_limit_per_minute: 0,
        ..Settings::default()
    };
    settings.webhooks.allow_private = true;
    settings.webhooks.timeout = Duration::from_secs(2);
    let app = switchboard::app::start(settings).await.expect("app");
    let boot = app.bootstrap.clone().expect("fresh folder");
    let api = format!("{}/api/v1", app.api_url());
    let admin = app.admin_url();
    let client = reqwest::Client::builder()
        .no_proxy()
        .pool_max_idle_per_host(256)
        .build()
        .expect("client");

    // 1. Write -> first attempt latency.
    let (url, arrivals, _) = receiver(false).await;
    client
        .post(format!("{api}/webhooks"))
        .bearer_auth(&boot.api_key)
        .json(&json!({"url": url, "events": ["tag.created"]}))
        .send()
        .await
        .expect("endpoint");
    let rate = env("EVENTS_PER_SEC", 1000);
    let seconds = env("SECONDS", 5);
    let total = rate * seconds;
    let sent: Arc<Mutex<HashMap<String, Instant>>> = Arc::default();
    let mut tick = tokio::time::interval(Duration::from_micros(1_000_000 / rate));
    let started = Instant::now();
    let mut tasks = Vec::new();
    for i in 0..total {
        tick.tick().await;
        let (client, api, key, sent) = (
            client.clone(),
            api.clone(),
            boot.api_key.clone(),
            sent.clone(),
        );
        tasks.push(tokio::spawn(async move {
            let name = format!("t{i}");
            sent.lock().unwrap().insert(name.clone(), Instant::now());
            let r = client
                .post(format!("{api}/tags"))
                .bearer_auth(&key)
                .json(&json!({"name": name}))
                .send()
                .await;
            matches!(r, Ok(r) if r.status() == 201)
        }));
    }
    let mut ok = 0;
    for t in tasks {
        ok += t.await.unwrap_or(false) as u64;
    }
    let offered = started.elapsed();
    let deadline = Instant::now() + Duration::from_secs(30);
    while arrivals.lock().unwrap().len() < ok as usize && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let mut lat: Vec<Duration> = {
        let sent = sent.lock().unwrap();
        arrivals
            .lock()
            .unwrap()
            .iter()
            .filter_map(|(name, at)| sent.get(name).map(|s| at.duration_since(*s)))
            .collect()
    };
    lat.sort();
    println!(
        "write -> first delivery attempt: {} writes at {:.0}/s offered ({} acknowledged), {} delivered; p50 {:.2} ms, p99 {:.2} ms, max {:.2} ms",
        total,
        total as f64 / offered.as_secs_f64(),
        ok,
        lat.len(),
        percentile(&lat, 0.5),
        percentile(&lat, 0.99),
        lat.last().map_or(0.0, |d| d.as_secs_f64() * 1e3)
    );

    if env("SKIP_FANOUT", 0) == 0 {
        fanout(&client, &api, &admin).await;
    }
    backlog(&client, &api, &admin).await;
    app.shutdown().await;
}

/// A receiver that holds every request until `open` turns true, then answers at once.
async fn gated() -> (
    String,
    tokio::sync::watch::Sender<bool>,
    Arc<std::sync::atomic::AtomicU64>,
) {
    let (open, gate) = tokio::sync::watch::channel(false);
    let count = Arc::new(std::sync::atomic::AtomicU64::new(0));
    let state = (gate, count.clone());
    let app = Router::new()
        .fallback(
            |State((mut gate, count)): State<(
                tokio::sync::watch::Receiver<bool>,
                Arc<std::sync::atomic::AtomicU64>,
            )>| async move {
                let _ = gate.wait_for(|o| *o).await;
                count.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                "ok"
            },
        )
        .with_state(state);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    (format!("http://{addr}/hook"), open, count)
}

/// 3. A backlog drains as fast as the receiver answers.
async fn backlog(client: &reqwest::Client, api: &str, admin: &str) {
    let r: Value = client
        .post(format!("{admin}/admin/workspaces"))
        .bearer_auth("bench-admin-token-0123456789")
        .json(&json!({"name": "backlog"}))
        .send()
        .await
        .expect("workspace")
        .json()
        .await
        .expect("json");
    let key = r["api_key"].as_str().unwrap_or_default().to_string();
    let (url, open, count) = gated().await;
    client
        .post(format!("{api}/webhooks"))
        .bearer_auth(&key)
        .json(&json!({"url": url, "events": ["tag.created"]}))
        .send()
        .await
        .expect("endpoint");
    let total = env("BACKLOG", 100_000);
    let filled = Instant::now();
    let next = Arc::new(std::sync::atomic::AtomicU64::new(0));
    let writers: Vec<_> = (0..64)
        .map(|_| {
            let (client, api, key, next) =
                (client.clone(), api.to_string(), key.clone(), next.clone());
            tokio::spawn(async move {
                loop {
                    let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    if i >= total {
                        return;
                    }
                    let _ = client
                        .post(format!("{api}/tags"))
                        .bearer_auth(&key)
                        .json(&json!({"name": format!("b{i}")}))
                        .send()
                        .await;
                }
            })
        })
        .collect();
    for w in writers {
        let _ = w.await;
    }
    println!(
        "backlog: {total} events written in {:.1} s while the receiver held its answers",
        filled.elapsed().as_secs_f64()
    );
    let flushes_before = flush_figures(client, admin).await;
    let started = Instant::now();
    let _ = open.send(true);
    // The attempts on the wire while the receiver held its answers timed out and wait on
    // the retry ladder; the drain rate is taken over the run of arrivals before the
    // first pause of a second, and those stragglers are reported apart.
    let deadline = Instant::now() + Duration::from_secs(600);
    let (mut seen, mut last_arrival, mut run) = (0, started, None);
    loop {
        let got = count.load(std::sync::atomic::Ordering::Relaxed);
        if got > seen {
            (seen, last_arrival) = (got, Instant::now());
        } else if run.is_none() && seen > 0 && last_arrival.elapsed() >= Duration::from_secs(1) {
            run = Some((seen, last_arrival.duration_since(started)));
        }
        if got >= total || Instant::now() >= deadline {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let took = started.elapsed();
    let got = count.load(std::sync::atomic::Ordering::Relaxed);
    let (drained, drain_took) = run.unwrap_or((got, took));
    println!(
        "backlog drained: {drained} of {total} deliveries in {:.2} s = {:.0} deliveries/s to one endpoint",
        drain_took.as_secs_f64(),
        drained as f64 / drain_took.as_secs_f64()
    );
    println!(
        "  the other {}: attempts that timed out while the receiver held them, retried on the ladder; all {got} received {:.1} s after the receiver opened",
        total.saturating_sub(drained),
        took.as_secs_f64()
    );
    let after = flush_figures(client, admin).await;
    let flushes = after[0] - flushes_before[0];
    println!(
        "  store while draining: {flushes:.0} flushes, {:.1} writes per flush, {:.2} ms per flush",
        (after[1] - flushes_before[1]) / flushes.max(1.0),
        (after[2] - flushes_before[2]) * 1e3 / flushes.max(1.0)
    );
}

/// The store's flush count, writes flushed and seconds spent flushing, from /metrics.
async fn flush_figures(client: &reqwest::Client, admin: &str) -> [f64; 3] {
    let text = match client
        .get(format!("{admin}/metrics"))
        .bearer_auth("bench-admin-token-0123456789")
        .send()
        .await
    {
        Ok(r) => r.text().await.unwrap_or_default(),
        Err(_) => String::new(),
    };
    let value = |name: &str| {
        text.lines()
            .find(|l| l.starts_with(name) && l[name.len()..].starts_with(' '))
            .and_then(|l| l.rsplit(' ').next())
            .and_then(|v| v.parse::<f64>().ok())
            .unwrap_or(0.0)
    };
    [
        value("switchboard_store_flushes_total"),
        value("switchboard_store_flushed_writes_total"),
        value("switchboard_store_flush_seconds_sum"),
    ]
}

/// 2. 1,000 endpoints, one of them always too slow.
async fn fanout(client: &reqwest::Client, api: &str, admin: &str) {
    let (fast_url, _, fast_count) = receiver(false).await;
    let (slow_url, _, _) = receiver(true).await;
    let mut workspaces = Vec::new();
    for w in 0..10 {
        let r: Value = client
            .post(format!("{admin}/admin/workspaces"))
            .bearer_auth("bench-admin-token-0123456789")
            .json(&json!({"name": format!("bench {w}")}))
            .send()
            .await
            .expect("workspace")
            .json()
            .await
            .expect("json");
        let (id, key) = (
            r["id"].as_str().unwrap_or_default().to_string(),
            r["api_key"].as_str().unwrap_or_default().to_string(),
        );
        for e in 0..100 {
            let target = if w == 0 && e == 0 {
                &slow_url
            } else {
                &fast_url
            };
            client
                .post(format!("{api}/webhooks"))
                .bearer_auth(&key)
                .json(&json!({"url": target, "events": ["*"]}))
                .send()
                .await
                .expect("endpoint");
        }
        workspaces.push(id);
    }
    let per_ws = env("ENDPOINT_EVENTS", 20);
    let expected = per_ws * (10 * 100 - 1);
    let started = Instant::now();
    for ws in &workspaces {
        for _ in 0..per_ws {
            client
                .post(format!("{admin}/admin/workspaces/{ws}/events"))
                .bearer_auth("bench-admin-token-0123456789")
                .json(&json!({"type": "product.updated"}))
                .send()
                .await
                .expect("trigger");
        }
    }
    let deadline = Instant::now() + Duration::from_secs(120);
    while fast_count.load(std::sync::atomic::Ordering::Relaxed) < expected
        && Instant::now() < deadline
    {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let took = started.elapsed();
    let got = fast_count.load(std::sync::atomic::Ordering::Relaxed);
    println!(
        "1,000 endpoints (one never answers in time): {got} of {expected} deliveries to the healthy 999 in {:.2} s = {:.0} deliveries/s",
        took.as_secs_f64(),
        got as f64 / took.as_secs_f64()
    );
}
