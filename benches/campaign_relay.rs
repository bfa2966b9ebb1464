//! A campaign of many recipients sent across a channel relay, with other workspaces
//! reading at a steady pace meanwhile: how many campaign messages a second the relay
//! receives, and how the other workspaces' API p99 compares with an idle run.
//!
//! The real app runs in this process on 127.0.0.1 (rate limit off, relays allowed on this
//! machine), the relay is a local HTTP server answering 200, and every call goes over
//! HTTP. `GET /health` is measured in the same run as the baseline.
//!
//! `cargo bench --bench campaign_relay` (env: `RECIPIENTS`, default 50000;
//! `CAMPAIGN_RATE`, default 50000; `OTHERS`, default 8 workspaces; `PROBE_RATE`, default
//! 200 reads/s over all of them).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::StreamExt;
use hdrhistogram::Histogram;
use serde_json::{json, Value};
use switchboard::config::Settings;

fn env(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

struct Bench {
    client: reqwest::Client,
    api: String,
    admin: String,
}

const ADMIN_TOKEN: &str = "bench-admin-token-0123456789";

impl Bench {
    async fn call(&self, method: reqwest::Method, key: &str, path: &str, body: Value) -> Value {
        let r = self
            .client
            .request(method, format!("{}/api/v1{path}", self.api))
            .bearer_auth(key)
            .json(&body)
            .send()
            .await
            .expect("the server answers");
        let status = r.status();
        let v: Value = r.json().await.unwrap_or(Value::Null);
        assert!(status.is_success(), "{path}: {status} {v}");
        v
    }
}

/// A relay that answers 200 to everything and counts what it received.
async fn relay(count: Arc<AtomicU64>) -> String {
    let app = axum::Router::new().fallback(move || {
        let count = count.clone();
        async move {
            count.fetch_add(1, Ordering::Relaxed);
            axum::http::StatusCode::OK
        }
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/relay", listener.local_addr().unwrap());
    tokio::spawn(async move {
        axum::serve(listener, app).await.unwrap();
    });
    url
}

/// Reads at `rate` per second, spread over `targets` (key, path), until `stop` is set;
/// answers the latency histogram (microseconds).
async fn probe(
    bench: Arc<Bench>,
    targets: Arc<Vec<(String, String)>>,
    rate: u64,
    stop: Arc<std::sync::atomic::AtomicBool>,
) -> Histogram<u64> {
    let mut hist = Histogram::<u64>::new(3).unwrap();
    let mut tick = tokio::time::interval(Duration::from_micros(1_000_000 / rate.max(1)));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let mut i = 0usize;
    while !stop.load(Ordering::Relaxed) {
        tick.tick().await;
        let (key, path) = targets[i % targets.len()].clone();
        i += 1;
        let (b, tx) = (bench.clone(), tx.clone());
        tokio::spawn(async move {
            let started = Instant::now();
            let r = b
                .client
                .get(format!("{}{path}", b.api))
                .bearer_auth(&key)
                .send()
                .await;
            if let Ok(r) = r {
                let _ = r.bytes().await;
            }
            let _ = tx.send(started.elapsed().as_micros() as u64);
        });
    }
    drop(tx);
    while let Some(us) = rx.recv().await {
        let _ = hist.record(us.max(1));
    }
    hist
}

/// Closed-loop GET /health with `connections` for `for_`: requests per second.
async fn health_throughput(bench: &Bench, connections: usize, for_: Duration) -> f64 {
    let done = Arc::new(AtomicU64::new(0));
    let until = Instant::now() + for_;
    let mut tasks = Vec::new();
    for _ in 0..connections {
        let (client, url, done) = (
            bench.client.clone(),
            format!("{}/health", bench.api),
            done.clone(),
        );
        tasks.push(tokio::spawn(async move {
            while Instant::now() < until {
                if let Ok(r) = client.get(&url).send().await {
                    let _ = r.bytes().await;
                    done.fetch_add(1, Ordering::Relaxed);
                }
            }
        }));
    }
    for t in tasks {
        let _ = t.await;
    }
    done.load(Ordering::Relaxed) as f64 / for_.as_secs_f64()
}

fn ms(h: &Histogram<u64>, q: f64) -> f64 {
    h.value_at_quantile(q) as f64 / 1000.0
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(run());
}

async fn run() {
    let recipients = env("RECIPIENTS", 50_000);
    let campaign_rate = env("CAMPAIGN_RATE", 50_000) as u32;
    let others = env("OTHERS", 8) as usize;
    let probe_rate = env("PROBE_RATE", 200);
    let dir = tempfile::tempdir().unwrap();
    let settings = Settings {
        addr: "127.0.0.1:0".parse().unwrap(),
        admin_addr: "127.0.0.1:0".parse().unwrap(),
        data_dir: dir.path().to_path_buf(),
        admin_token: Some(ADMIN_TOKEN.into()),
        rate_limit_per_minute: 0,
        campaign_rate,
        ..Settings::default()
    };
    let mut settings = settings;
    settings.webhooks.allow_private = true;
    let app = switchboard::app::start(settings).await.expect("app starts");
    let key = app.bootstrap.clone().expect("bootstrap").api_key;
    let bench = Arc::new(Bench {
        client: reqwest::Client::builder()
            .no_proxy()
            .pool_max_idle_per_host(256)
            .build()
            .unwrap(),
        api: app.api_url(),
        admin: app.admin_url(),
    });

    let received = Arc::new(AtomicU64::new(0));
    let relay_url = relay(received.clone()).await;
    bench
        .call(
            reqwest::Method::POST,
            &key,
            "/channels",
            json!({"type": "chan_a", "relay_url": relay_url}),
        )
        .await;
    bench
        .client
        .post(format!(
            "{}/admin/workspaces/{}/credits",
            bench.admin,
            app.bootstrap.as_ref().unwrap().workspace_id
        ))
        .bearer_auth(ADMIN_TOKEN)
        .json(&json!({"allowance": recipients * 2}))
        .send()
        .await
        .unwrap();

    // Other workspaces, each with one contact to read.
    let mut targets = Vec::new();
    for i in 0..others {
        let created: Value = bench
            .client
            .post(format!("{}/admin/workspaces", bench.admin))
            .bearer_auth(ADMIN_TOKEN)
            .json(&json!({"name": format!("Other {i}")}))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        let other_key = created["api_key"].as_str().unwrap().to_string();
        let c = bench
            .call(
                reqwest::Method::POST,
                &other_key,
                "/contacts",
                json!({"first_name": "Reader"}),
            )
            .await;
        targets.push((other_key, format!("/api/v1/contacts/{}", c["id"])));
    }
    let targets = Arc::new(targets);

    eprintln!("creating {recipients} contacts...");
    let started = Instant::now();
    futures::stream::iter(0..recipients)
        .map(|i| {
            let (b, key) = (bench.clone(), key.clone());
            async move {
                b.call(
                    reqwest::Method::POST,
                    &key,
                    "/contacts",
                    json!({"first_name": format!("R{i}"), "chan_a_username": format!("r{i}")}),
                )
                .await;
            }
        })
        .buffer_unordered(32)
        .collect::<Vec<()>>()
        .await;
    eprintln!("  {:.1} s", started.elapsed().as_secs_f64());

    let health = health_throughput(&bench, 16, Duration::from_secs(3)).await;

    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let idle = tokio::spawn(probe(
        bench.clone(),
        targets.clone(),
        probe_rate,
        stop.clone(),
    ));
    tokio::time::sleep(Duration::from_secs(10)).await;
    stop.store(true, Ordering::Relaxed);
    let idle = idle.await.unwrap();

    let campaign = bench
        .call(
            reqwest::Method::POST,
            &key,
            "/campaigns",
            json!({"name": "Bench", "text": "Hello from the bench", "channel": "chan_a"}),
        )
        .await;
    let id = campaign["id"].clone();
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let busy = tokio::spawn(probe(
        bench.clone(),
        targets.clone(),
        probe_rate,
        stop.clone(),
    ));
    let sending = Instant::now();
    bench
        .call(
            reqwest::Method::POST,
            &key,
            &format!("/campaigns/{id}/send"),
            json!({}),
        )
        .await;
    let done = loop {
        tokio::time::sleep(Duration::from_millis(100)).await;
        let c = bench
            .call(
                reqwest::Method::GET,
                &key,
                &format!("/campaigns/{id}"),
                json!({}),
            )
            .await;
        if c["status"] == "completed" {
            break c;
        }
        if sending.elapsed() > Duration::from_secs(1_800) {
            panic!("the campaign did not complete: {c}");
        }
    };
    let took = sending.elapsed().as_secs_f64();
    stop.store(true, Ordering::Relaxed);
    let busy = busy.await.unwrap();

    let per_s = recipients as f64 / took;
    println!("campaign_relay: {recipients} recipients, campaign rate {campaign_rate}/s, {others} other workspaces probed at {probe_rate} reads/s");
    println!("  stats: {}", done["stats"]);
    println!(
        "  relay received {} requests; sending took {took:.1} s = {per_s:.0} messages/s",
        received.load(Ordering::Relaxed)
    );
    println!(
        "  GET /health closed loop (16 connections): {health:.0} req/s; messages/s = {:.3}x of it",
        per_s / health
    );
    println!(
        "  other workspaces' GET /contacts/{{id}}: idle p50 {:.2} ms p99 {:.2} ms ({} reads); during the campaign p50 {:.2} ms p99 {:.2} ms ({} reads); p99 ratio {:.2}",
        ms(&idle, 0.5),
        ms(&idle, 0.99),
        idle.len(),
        ms(&busy, 0.5),
        ms(&busy, 0.99),
        busy.len(),
        ms(&busy, 0.99) / ms(&idle, 0.99)
    );
    app.shutdown().await;
}
