//! The Prometheus exporter. One recorder per process (the `metrics` facade is global);
//! scrape-time figures (live actors, store, pending deliveries) are set just before
//! rendering.

use std::sync::atomic::Ordering;
use std::sync::OnceLock;

use metrics_exporter_prometheus::{Matcher, PrometheusBuilder, PrometheusHandle};

use crate::http::AppState;

static HANDLE: OnceLock<Option<PrometheusHandle>> = OnceLock::new();

/// The node every series is labelled with (cluster mode), set before the recorder is
/// installed.
static NODE: OnceLock<String> = OnceLock::new();

/// Labels every series with `node="<id>"` (cluster mode); call before [`handle`].
pub fn label_node(id: String) {
    let _ = NODE.set(id);
}

/// Installs the recorder on first use. None if another recorder was installed first.
pub fn handle() -> Option<&'static PrometheusHandle> {
    HANDLE
        .get_or_init(|| {
            let latency = [
                0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 10.0,
            ];
            let sizes = [1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 128.0, 256.0, 1024.0];
            let builder = match NODE.get() {
                Some(node) => PrometheusBuilder::new().add_global_label("node", node),
                None => PrometheusBuilder::new(),
            };
            builder
                .set_buckets_for_metric(Matcher::Suffix("_seconds".into()), &latency)
                .and_then(|b| {
                    b.set_buckets_for_metric(
                        Matcher::Full("switchboard_store_writes_per_flush".into()),
                        &sizes,
                    )
                })
                .and_then(|b| b.install_recorder())
                .inspect(|_| switchboard_actors::telemetry::recorder_installed())
                .map_err(|e| tracing::warn!(error = %e, "metrics recorder not installed"))
                .ok()
        })
        .as_ref()
}

/// Held from refreshing the scrape-time figures to rendering them, so that two services in
/// one process (tests) never render each other's figures: the recorder is global.
static RENDERING: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// The text exposition, with scrape-time figures refreshed.
pub fn render(app: &AppState) -> String {
    let Some(handle) = handle() else {
        return String::new();
    };
    let _rendering = RENDERING.lock().unwrap_or_else(|p| p.into_inner());
    let reg = app.registry.stats();
    if let Some(cluster) = app.store.cluster() {
        metrics::counter!("switchboard_cluster_fenced_commits_total")
            .absolute(cluster.fenced_commits.load(Ordering::Relaxed));
    }
    metrics::gauge!("switchboard_actors_live", "kind" => "workspace")
        .set(app.registry.live() as f64);
    metrics::gauge!("switchboard_actors_live", "kind" => "endpoint_delivery")
        .set(app.dispatcher.live() as f64);
    metrics::gauge!("switchboard_actors_live", "kind" => "channel_relay")
        .set(app.relays.book().live() as f64);
    metrics::counter!("switchboard_actor_restarts_total", "kind" => "workspace")
        .absolute(reg.restarts.load(Ordering::Relaxed));
    metrics::counter!("switchboard_actor_passivations_total", "kind" => "workspace")
        .absolute(reg.passivations.load(Ordering::Relaxed));
    metrics::counter!("switchboard_actor_spawns_total", "kind" => "workspace")
        .absolute(reg.spawned.load(Ordering::Relaxed));
    for book in [app.dispatcher.book(), app.relays.book()] {
        let (kind, counts) = (book.kind(), book.lifecycle());
        metrics::counter!("switchboard_actor_restarts_total", "kind" => kind)
            .absolute(counts.restarts.load(Ordering::Relaxed));
        metrics::counter!("switchboard_actor_passivations_total", "kind" => kind)
            .absolute(counts.passivations.load(Ordering::Relaxed));
        metrics::counter!("switchboard_actor_spawns_total", "kind" => kind)
            .absolute(counts.spawned.load(Ordering::Relaxed));
    }
    let store = app.store.stats();
    metrics::counter!("switchboard_store_flushes_total")
        .absolute(store.flushes.load(Ordering::Relaxed));
    metrics::counter!("switchboard_store_flushed_writes_total")
        .absolute(store.flushed_writes.load(Ordering::Relaxed));
    metrics::counter!("switchboard_store_log_syncs_total")
        .absolute(store.log_syncs.load(Ordering::Relaxed));
    metrics::gauge!("switchboard_store_size_bytes").set(app.store.size_on_disk() as f64);
    let d = app.dispatcher.stats();
    metrics::gauge!("switchboard_webhook_pending_deliveries")
        .set(app.dispatcher.pending(None) as f64);
    metrics::counter!("switchboard_webhook_retries_scheduled_total")
        .absolute(d.retries_scheduled.load(Ordering::Relaxed));
    metrics::counter!("switchboard_webhook_endpoints_disabled_total")
        .absolute(d.endpoints_disabled.load(Ordering::Relaxed));
    for (outcome, n) in [
        ("delivered", &d.delivered),
        ("failed", &d.failed_attempts),
        ("gone", &d.gone),
    ] {
        metrics::counter!("switchboard_webhook_attempts_total", "outcome" => outcome)
            .absolute(n.load(Ordering::Relaxed));
    }
    let r = app.relays.stats();
    metrics::counter!("switchboard_relay_retries_scheduled_total")
        .absolute(r.retries_scheduled.load(Ordering::Relaxed));
    for (outcome, n) in [("sent", &r.sent), ("failed", &r.failed_messages)] {
        metrics::counter!("switchboard_relay_messages_total", "outcome" => outcome)
            .absolute(n.load(Ordering::Relaxed));
    }
    metrics::counter!("switchboard_relay_failed_attempts_total")
        .absolute(r.failed_attempts.load(Ordering::Relaxed));
    metrics::counter!("switchboard_rate_limited_total").absolute(app.rate_limit.rejections());
    if app.store.cluster().is_some() {
        metrics::counter!("switchboard_directory_looks_total").absolute(app.directory.looks());
    }
    if let Some(bytes) = resident_memory_bytes() {
        metrics::gauge!("switchboard_process_resident_memory_bytes").set(bytes as f64);
    }
    handle.render()
}

/// The memory this process holds in RAM (`VmRSS` of /proc/self/status); None where there
/// is no such file.
fn resident_memory_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let kib: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))?
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()?;
    Some(kib * 1024)
}
