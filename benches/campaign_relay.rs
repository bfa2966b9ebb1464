//! A campaign of many recipients sent across a channel relay, with other workspaces
//! reading at a steady pace meanwhile: how many campaign messages a second the relay
//! receives, and how the other workspaces' API p99 compares with an idle run.
//!
//! The real app runs in this process on 127.0.0.1 (rate limit off, relays allowed on this
//! machine) on a runtime of its own, as a separate process would; the relay (a local HTTP
//! server answering 200), the probes and the other clients run on the bench's runtime, and
//! every call goes over HTTP. `GET /health` is measured in the same run as the baseline.
//!
//! One run sends the same audience once per campaign rate in `RATES` (the app restarts on
//! the same data with each rate). For each rate the other workspaces are probed for
//! `WINDOW` seconds with nothing sending (idle), then for up to `WINDOW` seconds while the
//! campaign sends, then idle again (how much two idle windows differ is the noise of the
//! comparison). A campaign that has not completed when its window is over is cancelled: at
//! the default 20/s, 50,000 recipients would take 42 minutes, and the window is the same
//! steady state.
//!
//! `cargo bench --bench campaign_relay` (env: `RECIPIENTS`, default 50000; `RATES`,
//! default `20,100,250,1000,50000`; `WINDOW`, default 30 s; `OTHERS`, default 8
//! workspaces; `PROBE_RATE`, default 200 reads/s over all of them).

mod common;
use common::env;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::StreamExt;
use hdrhistogram::Histogram;
use serde_json::{json, Value};
use switchboard::config::Settings;

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

/// Probes the other workspaces for `secs` seconds.
async fn probe_for(
    bench: &Arc<Bench>,
    targets: &Arc<Vec<(String, String)>>,
    rate: u64,
    secs: u64,
) -> Histogram<u64> {
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let probing = tokio::spawn(probe(bench.clone(), targets.clone(), rate, stop.clone()));
    tokio::time::sleep(Duration::from_secs(secs)).await;
    stop.store(true, Ordering::Relaxed);
    probing.await.unwrap()
}

struct CampaignRun {
    sent: u64,
    took: f64,
    /// CPU seconds the process used while sending.
    cpu: f64,
    /// How long POST /campaigns/{id}/send took to answer.
    start_ms: f64,
    completed: bool,
    probe: Histogram<u64>,
}

/// Sends a campaign to every contact (at the app's campaign rate, `rate`) while probing
/// the other workspaces, for `window` seconds at most (then it is cancelled); waits until
/// its messages settle.
async fn campaign_at(
    bench: &Arc<Bench>,
    key: &str,
    window: u64,
    received: &Arc<AtomicU64>,
    targets: &Arc<Vec<(String, String)>>,
    probe_rate: u64,
) -> CampaignRun {
    let campaign = bench
        .call(
            reqwest::Method::POST,
            key,
            "/campaigns",
            json!({"name": "Bench", "text": "Hello from the bench", "channel": "chan_a"}),
        )
        .await;
    let id = campaign["id"].clone();
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let probing = tokio::spawn(probe(
        bench.clone(),
        targets.clone(),
        probe_rate,
        stop.clone(),
    ));
    let before = received.load(Ordering::Relaxed);
    let (sending, cpu) = (Instant::now(), cpu_seconds());
    bench
        .call(
            reqwest::Method::POST,
            key,
            &format!("/campaigns/{id}/send"),
            json!({}),
        )
        .await;
    let start_ms = sending.elapsed().as_secs_f64() * 1000.0;
    let completed = loop {
        tokio::time::sleep(Duration::from_millis(100)).await;
        let c = bench
            .call(
                reqwest::Method::GET,
                key,
                &format!("/campaigns/{id}"),
                json!({}),
            )
            .await;
        if c["status"] == "completed" {
            break true;
        }
        if sending.elapsed() >= Duration::from_secs(window) {
            break false;
        }
    };
    let took = sending.elapsed().as_secs_f64();
    let cpu = cpu_seconds() - cpu;
    let sent = received.load(Ordering::Relaxed) - before;
    stop.store(true, Ordering::Relaxed);
    let probe = probing.await.unwrap();
    if !completed {
        bench
            .call(
                reqwest::Method::POST,
                key,
                &format!("/campaigns/{id}/cancel"),
                json!({}),
            )
            .await;
    }
    tokio::time::sleep(Duration::from_secs(2)).await;
    CampaignRun {
        sent,
        took,
        cpu,
        start_ms,
        completed,
        probe,
    }
}

/// CPU seconds (user + system) this process has used so far, from /proc/self/stat.
fn cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let after_name = stat.rsplit(')').next().unwrap_or_default();
    let fields: Vec<&str> = after_name.split_whitespace().collect();
    let ticks = |i: usize| {
        fields
            .get(i)
            .and_then(|v| v.parse::<f64>().ok())
            .unwrap_or(0.0)
    };
    // Fields 14 and 15 of the line (utime, stime) in clock ticks of 1/100 s.
    (ticks(11) + ticks(12)) / 100.0
}

fn ms(h: &Histogram<u64>, q: f64) -> f64 {
    h.value_at_quantile(q) as f64 / 1000.0
}

fn main() {
    // `cargo test --all-targets` runs bench targets too; measure only under `cargo bench`.
    if !std::env::args().any(|a| a == "--bench") {
        println!("run with cargo bench to measure");
        return;
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(run());
}

/// The app on its own runtime and threads, as a separate process would be: the bench's
/// clients, probes and relay never run on the app's workers.
struct Server {
    bootstrap: Option<switchboard::app::Bootstrap>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Server {
    async fn shutdown(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = tokio::task::spawn_blocking(move || t.join()).await;
        }
    }
}

async fn start(dir: &std::path::Path, campaign_rate: u32) -> (Server, Arc<Bench>) {
    let mut settings = Settings {
        addr: "127.0.0.1:0".parse().unwrap(),
        admin_addr: "127.0.0.1:0".parse().unwrap(),
        data_dir: dir.to_path_buf(),
        admin_token: Some(ADMIN_TOKEN.into()),
        rate_limit_per_minute: 0,
        campaign_rate,
        ..Settings::default()
    };
    settings.webhooks.allow_private = true;
    let (ready_tx, ready) = tokio::sync::oneshot::channel();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let thread = std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async move {
            // After a shutdown the store's lock is released once the old flusher has seen
            // the close.
            let mut tries = 0;
            let app = loop {
                match switchboard::app::start(settings.clone()).await {
                    Ok(app) => break app,
                    Err(e) if tries < 100 => {
                        tries += 1;
                        eprintln!("  waiting for the store: {e}");
                        tokio::time::sleep(Duration::from_millis(50)).await;
                    }
                    Err(e) => panic!("app starts: {e}"),
                }
            };
            let _ = ready_tx.send((app.api_url(), app.admin_url(), app.bootstrap.clone()));
            let _ = stopped.await;
            app.shutdown().await;
        });
    });
    let (api, admin, bootstrap) = ready.await.expect("the app started");
    let bench = Arc::new(Bench {
        client: reqwest::Client::builder()
            .no_proxy()
            .pool_max_idle_per_host(256)
            .build()
            .unwrap(),
        api,
        admin,
    });
    let server = Server {
        bootstrap,
        stop: Some(stop),
        thread: Some(thread),
    };
    (server, bench)
}

async fn run() {
    let recipients = env("RECIPIENTS", 50_000);
    let rates: Vec<u32> = std::env::var("RATES")
        .unwrap_or_else(|_| "20,100,250,1000,50000".into())
        .split(',')
        .filter_map(|r| r.trim().parse().ok())
        .collect();
    let window = env("WINDOW", 30);
    let others = env("OTHERS", 8) as usize;
    let probe_rate = env("PROBE_RATE", 200);
    let dir = tempfile::tempdir().unwrap();
    let (mut app, mut bench) = start(dir.path(), 20).await;
    let boot = app.bootstrap.clone().expect("bootstrap");
    let key = boot.api_key;

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
            bench.admin, boot.workspace_id
        ))
        .bearer_auth(ADMIN_TOKEN)
        .json(&json!({"allowance": recipients * (rates.len() as u64 + 1)}))
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

    println!("campaign_relay: {recipients} recipients, {others} other workspaces probed at {probe_rate} reads/s, windows of {window} s");
    for rate in rates {
        // The campaign rate is a setting: the app restarts on the same data with it.
        app.shutdown().await;
        (app, bench) = start(dir.path(), rate).await;
        let health = health_throughput(&bench, 16, Duration::from_secs(3)).await;
        // The sending workspace is loaded before anything is measured, as it would be in a
        // live service: loading 50,000 contacts is not part of sending.
        bench
            .call(reqwest::Method::GET, &key, "/campaigns", json!({}))
            .await;
        let cpu = cpu_seconds();
        let idle = probe_for(&bench, &targets, probe_rate, window).await;
        let idle_cpu = cpu_seconds() - cpu;
        if std::env::var("CONTROL").is_ok() {
            let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
            let (b, k, st) = (bench.clone(), key.clone(), stop.clone());
            let writer = tokio::spawn(async move {
                let mut tick =
                    tokio::time::interval(Duration::from_micros(1_000_000 / (2 * rate as u64)));
                while !st.load(Ordering::Relaxed) {
                    tick.tick().await;
                    b.call(
                        reqwest::Method::POST,
                        &k,
                        "/contacts",
                        json!({"first_name": "W"}),
                    )
                    .await;
                }
            });
            let h = probe_for(&bench, &targets, probe_rate, window).await;
            stop.store(true, Ordering::Relaxed);
            let _ = writer.await;
            println!("  CONTROL {}/s contact writes: idle p50 {:.2} p99 {:.2}; writing p50 {:.2} p99 {:.2}", 2 * rate, ms(&idle, 0.5), ms(&idle, 0.99), ms(&h, 0.5), ms(&h, 0.99));
            continue;
        }
        let run = campaign_at(&bench, &key, window, &received, &targets, probe_rate).await;
        // A second idle window after the campaign: how far two idle runs differ on this
        // machine, the noise any comparison with idle carries.
        let idle_after = probe_for(&bench, &targets, probe_rate, window).await;
        let per_s = run.sent as f64 / run.took;
        let ratio = ms(&run.probe, 0.99) / ms(&idle, 0.99);
        let end = if run.completed {
            "completed"
        } else {
            "window over, cancelled"
        };
        println!(
            "  rate {rate}/s: {} sent in {:.1} s ({end}) = {per_s:.0} messages/s; GET /health {health:.0} req/s; messages/s = {:.4}x of /health",
            run.sent,
            run.took,
            per_s / health
        );
        println!(
            "    POST /campaigns/{{id}}/send answered in {:.1} ms; process CPU {:.3} s/s idle, {:.3} s/s sending",
            run.start_ms,
            idle_cpu / window as f64,
            run.cpu / run.took
        );
        println!(
            "    other workspaces' GET /contacts/{{id}} p50 / p99 (reads): idle {:.2} / {:.2} ms ({}); sending {:.2} / {:.2} ms ({}); idle again {:.2} / {:.2} ms ({})",
            ms(&idle, 0.5),
            ms(&idle, 0.99),
            idle.len(),
            ms(&run.probe, 0.5),
            ms(&run.probe, 0.99),
            run.probe.len(),
            ms(&idle_after, 0.5),
            ms(&idle_after, 0.99),
            idle_after.len(),
        );
        println!(
            "    p99 sending / idle {ratio:.2} ({}); idle again / idle {:.2}",
            if ratio <= 1.2 {
                "within 20%"
            } else {
                "NOT within 20%"
            },
            ms(&idle_after, 0.99) / ms(&idle, 0.99)
        );
    }
    app.shutdown().await;
}
