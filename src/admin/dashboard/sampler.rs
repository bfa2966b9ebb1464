//! The dashboard's figures. Once a second the `/metrics` exposition is rendered and read
//! back into a [`Point`], so every figure is a counter a scraper sees too; rates and
//! quantiles are taken over the last ten seconds of those counters. Ten minutes of points
//! are kept for the charts. While a page watches, each point goes out with two tables
//! that `/metrics` cannot carry without per-workspace or per-actor labels: the busiest
//! workspaces (the counts behind `/admin/workspaces/{id}/stats`) and the deepest
//! mailboxes (the counts behind `/admin/actors` and `switchboard_actor_mailbox_depth`).

use std::collections::{BTreeMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde::Serialize;
use tokio::sync::{broadcast, watch};

use super::exposition::{Buckets, Exposition};
use crate::http::AppState;

/// Points kept: ten minutes at one a second.
pub const HISTORY: usize = 600;

/// How often a point is taken.
pub const EVERY: Duration = Duration::from_secs(1);

/// Seconds over which rates and quantiles are taken.
const WINDOW: usize = 10;

/// Rows of each table.
const TOP_WORKSPACES: usize = 20;
const TOP_MAILBOXES: usize = 10;

/// One second of the service, as the dashboard charts it.
#[derive(Debug, Clone, Serialize)]
pub struct Point {
    /// Unix milliseconds.
    pub t: i64,
    /// `switchboard_http_requests_total`, all routes.
    pub requests_total: f64,
    pub requests_per_s: f64,
    /// `switchboard_rate_limited_total`.
    pub rate_limited_total: f64,
    pub rate_limited_per_s: f64,
    /// From `switchboard_http_request_seconds`; None when no request was answered.
    pub latency_p50_ms: Option<f64>,
    pub latency_p99_ms: Option<f64>,
    /// `switchboard_actors_live` by kind.
    pub actors: BTreeMap<String, f64>,
    /// `switchboard_actor_mailbox_depth`, all kinds.
    pub mailbox_depth: f64,
    /// `switchboard_webhook_pending_deliveries`.
    pub pending_deliveries: f64,
    /// `switchboard_webhook_attempts_total` by outcome.
    pub delivered_per_s: f64,
    pub failed_attempts_per_s: f64,
    /// `switchboard_webhook_endpoints_disabled_total`.
    pub endpoints_disabled_total: f64,
    /// From `switchboard_store_flush_seconds`.
    pub flushes_per_s: f64,
    pub flush_mean_ms: Option<f64>,
    pub flush_p99_ms: Option<f64>,
    /// `switchboard_process_resident_memory_bytes`.
    pub memory_bytes: f64,
}

/// The cumulative counters a rate or quantile needs, at one instant.
struct Raw {
    at: Instant,
    requests: f64,
    rate_limited: f64,
    delivered: f64,
    failed: f64,
    flush_sum: f64,
    latency: Buckets,
    flush: Buckets,
}

impl Raw {
    fn of(e: &Exposition) -> Self {
        Self {
            at: Instant::now(),
            requests: e.sum("switchboard_http_requests_total", &[]),
            rate_limited: e.sum("switchboard_rate_limited_total", &[]),
            delivered: e.sum(
                "switchboard_webhook_attempts_total",
                &[("outcome", "delivered")],
            ),
            failed: e.sum(
                "switchboard_webhook_attempts_total",
                &[("outcome", "failed")],
            ),
            flush_sum: e.sum("switchboard_store_flush_seconds_sum", &[]),
            latency: e.buckets("switchboard_http_request_seconds"),
            flush: e.buckets("switchboard_store_flush_seconds"),
        }
    }
}

/// A row of the busiest-workspaces table.
#[derive(Debug, Clone, Serialize)]
pub struct WorkspaceRow {
    pub id: String,
    pub name: String,
    pub requests_per_s: f64,
    pub rate_limited_per_s: f64,
}

/// A row of the deepest-mailboxes table.
#[derive(Debug, Clone, Serialize)]
pub struct MailboxRow {
    pub kind: &'static str,
    pub key: String,
    pub depth: i64,
    pub handled: u64,
}

/// The two tables, as they are now.
#[derive(Debug, Clone, Serialize)]
pub struct Tables {
    pub workspaces: Vec<WorkspaceRow>,
    pub mailboxes: Vec<MailboxRow>,
}

/// The busiest workspaces over the last ten seconds and the deepest mailboxes now.
pub fn tables(app: &AppState) -> Tables {
    let secs = WINDOW as f64;
    let workspaces = app
        .recent
        .busiest(TOP_WORKSPACES, WINDOW as i64)
        .into_iter()
        .map(|(id, requests, rejected)| WorkspaceRow {
            name: app
                .directory
                .workspace(&id)
                .map(|w| w.name)
                .unwrap_or_default(),
            id: id.to_string(),
            requests_per_s: requests as f64 / secs,
            rate_limited_per_s: rejected as f64 / secs,
        })
        .collect();
    let mut actors = app.registry.book().snapshot();
    actors.extend(app.dispatcher.book().snapshot());
    actors.extend(app.relays.book().snapshot());
    actors.sort_by(|a, b| {
        b.mailbox_depth
            .cmp(&a.mailbox_depth)
            .then(b.messages_handled.cmp(&a.messages_handled))
    });
    let mailboxes = actors
        .into_iter()
        .take(TOP_MAILBOXES)
        .map(|a| MailboxRow {
            kind: a.kind,
            key: a.key,
            depth: a.mailbox_depth,
            handled: a.messages_handled,
        })
        .collect();
    Tables {
        workspaces,
        mailboxes,
    }
}

/// The history and the live feed of points.
pub struct Sampler {
    history: Mutex<VecDeque<Point>>,
    /// Each tick's point and tables, as the JSON sent to pages.
    ticks: broadcast::Sender<Arc<str>>,
}

impl Sampler {
    pub fn new() -> Self {
        Self {
            history: Mutex::new(VecDeque::with_capacity(HISTORY)),
            ticks: broadcast::channel(16).0,
        }
    }

    /// The last ten minutes, oldest first.
    pub fn history(&self) -> Vec<Point> {
        let h = self.history.lock().unwrap_or_else(|p| p.into_inner());
        h.iter().cloned().collect()
    }

    /// Every tick from now on.
    pub fn subscribe(&self) -> broadcast::Receiver<Arc<str>> {
        self.ticks.subscribe()
    }

    /// Takes a point a second until `stopped` turns true.
    pub async fn run(self: Arc<Self>, app: AppState, mut stopped: watch::Receiver<bool>) {
        let mut tick = tokio::time::interval(EVERY);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
        let mut recent: VecDeque<Raw> = VecDeque::with_capacity(WINDOW + 1);
        loop {
            tokio::select! {
                _ = tick.tick() => self.take(&app, &mut recent),
                _ = stopped.wait_for(|s| *s) => return,
            }
        }
    }

    fn take(&self, app: &AppState, recent: &mut VecDeque<Raw>) {
        let exposition = Exposition::parse(&crate::admin::metrics::render(app));
        let now = Raw::of(&exposition);
        let point = point(&exposition, &now, recent.front());
        if recent.len() == WINDOW {
            recent.pop_front();
        }
        recent.push_back(now);
        {
            let mut h = self.history.lock().unwrap_or_else(|p| p.into_inner());
            if h.len() == HISTORY {
                h.pop_front();
            }
            h.push_back(point.clone());
        }
        // The tables cost a walk over every live actor: only while a page watches.
        if self.ticks.receiver_count() > 0 {
            let payload = serde_json::json!({"point": point, "tables": tables(app)});
            let _ = self.ticks.send(payload.to_string().into());
        }
    }
}

impl Default for Sampler {
    fn default() -> Self {
        Self::new()
    }
}

/// The point of `e`, with rates and quantiles since `start` (the oldest scrape of the
/// window; none at the first tick).
fn point(e: &Exposition, now: &Raw, start: Option<&Raw>) -> Point {
    let ms = |s: f64| s * 1000.0;
    // Over the ten seconds of the window even while fewer have passed since the start, so
    // that a rate means what the tables' rates mean: what came in those seconds, over ten.
    let (secs, since) = match start {
        Some(s) => (
            now.at.duration_since(s.at).as_secs_f64().max(WINDOW as f64),
            Some(s),
        ),
        None => (0.0, None),
    };
    let rate = |f: fn(&Raw) -> f64| match since {
        Some(s) if secs > 0.0 => ((f(now) - f(s)) / secs).max(0.0),
        _ => 0.0,
    };
    let latency = since.map(|s| now.latency.since(&s.latency));
    let flush = since.map(|s| now.flush.since(&s.flush));
    let flushes = flush.as_ref().map_or(0.0, Buckets::count);
    let flush_mean_ms = match since {
        Some(s) if flushes > 0.0 => Some(ms((now.flush_sum - s.flush_sum) / flushes)),
        _ => None,
    };
    Point {
        t: chrono::Utc::now().timestamp_millis(),
        requests_total: now.requests,
        requests_per_s: rate(|r| r.requests),
        rate_limited_total: now.rate_limited,
        rate_limited_per_s: rate(|r| r.rate_limited),
        latency_p50_ms: latency.as_ref().and_then(|b| b.quantile(0.5)).map(ms),
        latency_p99_ms: latency.as_ref().and_then(|b| b.quantile(0.99)).map(ms),
        actors: e
            .by_label("switchboard_actors_live", "kind")
            .map(|(k, v)| (k.to_string(), v))
            .collect(),
        mailbox_depth: e.sum("switchboard_actor_mailbox_depth", &[]),
        pending_deliveries: e.sum("switchboard_webhook_pending_deliveries", &[]),
        delivered_per_s: rate(|r| r.delivered),
        failed_attempts_per_s: rate(|r| r.failed),
        endpoints_disabled_total: e.sum("switchboard_webhook_endpoints_disabled_total", &[]),
        flushes_per_s: if secs > 0.0 { flushes / secs } else { 0.0 },
        flush_mean_ms,
        flush_p99_ms: flush.as_ref().and_then(|b| b.quantile(0.99)).map(ms),
        memory_bytes: e.sum("switchboard_process_resident_memory_bytes", &[]),
    }
}
