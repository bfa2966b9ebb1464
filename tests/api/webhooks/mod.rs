//! Webhook endpoints over HTTP: the endpoints API, every validation rule (https only,
//! length, every unsafe address form, events, description, filters, the 100-endpoint
//! limit), permissions and the owner-or-admin rules of include_content and
//! include_contact_details. Deliveries to real receivers are in `webhook_delivery`; the
//! helpers both share are here.

use std::sync::Arc;
use std::time::Duration;

use reqwest::Method;
use serde_json::{json, Value};
use switchboard::config::Settings;
use switchboard_actors::clock::ManualClock;

use crate::helpers::*;
use crate::receiver::*;

// ----- Shared helpers -----

/// Webhooks allowed to reach this machine, a fast tick and a short ladder.
pub fn fast_webhooks(s: &mut Settings) {
    s.webhooks.allow_private = true;
    s.webhooks.tick = Duration::from_millis(20);
    // Generous: a busy test machine must not turn a prompt receiver into a timeout (tests
    // of the time limit set their own).
    s.webhooks.timeout = Duration::from_secs(10);
    s.webhooks.retry_delays = vec![Duration::from_millis(50); 6];
}

/// The app with webhooks allowed to reach this machine, a fast tick and a short ladder.
pub async fn spawn_webhook_app() -> TestApp {
    spawn_app_with(fast_webhooks).await
}

/// [`spawn_webhook_app`] with more settings changed after the fast ones.
pub async fn spawn_webhook_app_with(configure: impl FnOnce(&mut Settings)) -> TestApp {
    spawn_app_with(|s| {
        fast_webhooks(s);
        configure(s);
    })
    .await
}

/// The fast webhook app reading time from `clock`: a retry is due only once the test has
/// moved the clock past its delay (ticks stay real 20 ms timers).
pub async fn spawn_clocked_webhook_app(
    clock: ManualClock,
    configure: impl FnOnce(&mut Settings),
) -> TestApp {
    let dir = Arc::new(tempfile::tempdir().expect("tempdir"));
    spawn_in(dir, Some(clock), |s| {
        fast_webhooks(s);
        configure(s);
    })
    .await
}

/// Stops the app and starts it again on the same folder with the fast webhook settings
/// and `configure` (the shared `restart` starts with default settings, where private
/// receivers are refused and the first retry waits 30 s).
pub async fn restart_webhook_app(
    app: TestApp,
    configure: impl Fn(&mut Settings) + Clone + Send + Sync + 'static,
) -> TestApp {
    app.restart_with(move |s| {
        fast_webhooks(s);
        configure(s);
    })
    .await
}

/// POST /webhooks with the bootstrap key answering 201: (id, secret).
pub async fn new_endpoint(app: &TestApp, body: Value) -> (String, String) {
    let r = app.post("/webhooks", body).await.expect(201);
    (
        r.body["id"].as_str().unwrap().to_string(),
        r.body["secret"].as_str().unwrap().to_string(),
    )
}

/// An endpoint for `url` subscribed to `events`: (id, secret).
pub async fn hook(app: &TestApp, url: &str, events: &[&str]) -> (String, String) {
    new_endpoint(app, json!({"url": url, "events": events})).await
}

/// GET /webhooks/{id} with the bootstrap key.
pub async fn endpoint_of(app: &TestApp, id: &str) -> Value {
    app.get(&format!("/webhooks/{id}")).await.ok()
}

/// Polls GET /webhooks/{id} (up to 10 s) until `ok` holds; the endpoint.
pub async fn endpoint_when(
    app: &TestApp,
    id: &str,
    what: &str,
    ok: impl Fn(&Value) -> bool,
) -> Value {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    loop {
        let e = endpoint_of(app, id).await;
        if ok(&e) {
            return e;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "waited 10 s for the endpoint to show {what}: {e}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// GET /webhooks/{id}/deliveries (first page of up to 100), newest first.
pub async fn deliveries(app: &TestApp, id: &str) -> Vec<Value> {
    let r = app
        .get(&format!("/webhooks/{id}/deliveries?limit=100"))
        .await
        .expect(200);
    r.body["data"].as_array().unwrap().clone()
}

/// Polls the deliveries (up to 10 s) until there is one and `ok` holds.
pub async fn deliveries_when(
    app: &TestApp,
    id: &str,
    what: &str,
    ok: impl Fn(&[Value]) -> bool,
) -> Vec<Value> {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    loop {
        let d = deliveries(app, id).await;
        if !d.is_empty() && ok(&d) {
            return d;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "waited 10 s for deliveries showing {what}: {}",
            Value::Array(d)
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// POST /admin/workspaces/{ws}/events answering 202: the event id.
pub async fn trigger(app: &TestApp, ws: &str, event_type: &str, data: Option<Value>) -> String {
    let mut body = json!({"type": event_type});
    if let Some(d) = data {
        body["data"] = d;
    }
    let r = app
        .admin_post(&format!("/admin/workspaces/{ws}/events"), body)
        .await
        .expect(202);
    r.body["id"].as_str().unwrap().to_string()
}

/// A new HIPAA workspace: (id, API key).
pub async fn hipaa_workspace(app: &TestApp) -> (String, String) {
    let r = app
        .admin_post(
            "/admin/workspaces",
            json!({"name": "Clinic", "hipaa": true}),
        )
        .await
        .expect(201);
    assert_eq!(r.body["hipaa"], true, "{}", r.body);
    (
        r.body["id"].as_str().unwrap().to_string(),
        r.body["api_key"].as_str().unwrap().to_string(),
    )
}

/// An ISO 8601 UTC timestamp with exactly three fraction digits and `Z`.
#[track_caller]
pub fn assert_millis_utc(v: &Value) {
    let s = v.as_str().unwrap_or_else(|| panic!("not a string: {v}"));
    assert!(
        chrono::DateTime::parse_from_rfc3339(s).is_ok(),
        "not ISO 8601: {s}"
    );
    let frac = s
        .strip_suffix('Z')
        .unwrap_or_else(|| panic!("not UTC with Z: {s}"))
        .rsplit_once('.')
        .unwrap_or_else(|| panic!("no milliseconds: {s}"))
        .1;
    assert!(
        frac.len() == 3 && frac.bytes().all(|b| b.is_ascii_digit()),
        "not milliseconds: {s}"
    );
}

/// Asserts that no key of an answer names a secret.
#[track_caller]
fn no_secret(v: &Value) {
    let keys: Vec<&String> = v.as_object().expect("an object").keys().collect();
    assert!(
        keys.iter().all(|k| !k.contains("secret")),
        "a secret leaked: {v}"
    );
}

const SAFE_URL: &str = "https://hooks.example.com/in";

async fn every_route_answers_404(app: &TestApp, key: &str, id: &str) {
    for r in every_route(app, key, id).await {
        not_found(r);
    }
}

/// Every route of endpoint `id`, each called once.
async fn every_route(app: &TestApp, key: &str, id: &str) -> Vec<Resp> {
    let at = format!("/webhooks/{id}");
    vec![
        app.get_as(key, &at).await,
        app.patch_as(key, &at, json!({"description": "x"})).await,
        app.delete_as(key, &at).await,
        app.post_as(key, &format!("{at}/rotate-secret"), json!({}))
            .await,
        app.post_as(key, &format!("{at}/test"), json!({})).await,
        app.get_as(key, &format!("{at}/deliveries")).await,
        app.post_as(key, &format!("{at}/deliveries/1/redeliver"), json!({}))
            .await,
    ]
}

mod disclosure;
mod endpoints;
mod urls_and_bounds;
