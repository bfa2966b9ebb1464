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

/// Webhooks allowed to reach this machine, a fast tick, a short answer time and ladder.
pub fn fast_webhooks(s: &mut Settings) {
    s.webhooks.allow_private = true;
    s.webhooks.tick = Duration::from_millis(20);
    s.webhooks.timeout = Duration::from_millis(500);
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
    mut app: TestApp,
    configure: impl Fn(&mut Settings) + Clone + Send + Sync + 'static,
) -> TestApp {
    app.stop().await;
    let dir = app.dir.clone();
    let clock = app.clock.clone();
    let (ws, key) = (app.workspace_id.clone(), app.key.clone());
    drop(app);
    let mut again = None;
    for _ in 0..100 {
        // The store's lock is released once the previous flusher has seen the close.
        tokio::time::sleep(Duration::from_millis(20)).await;
        let (d, c, conf) = (dir.clone(), clock.clone(), configure.clone());
        let attempt = tokio::spawn(async move {
            spawn_in(d, c, |s| {
                fast_webhooks(s);
                conf(s);
            })
            .await
        })
        .await;
        if let Ok(app) = attempt {
            again = Some(app);
            break;
        }
    }
    let mut again = again.expect("app restarts on the same folder");
    again.workspace_id = ws;
    again.key = key;
    again
}

/// POST /webhooks with the bootstrap key answering 201: (id, secret).
pub async fn new_endpoint(app: &TestApp, body: Value) -> (String, String) {
    let r = app.post("/webhooks", &app.key, body).await.expect(201);
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
    app.get(&format!("/webhooks/{id}"), &app.key)
        .await
        .expect(200)
        .body
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
        .get(&format!("/webhooks/{id}/deliveries?limit=100"), &app.key)
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

/// A 422 `validation_failed` naming exactly `path`.
#[track_caller]
fn invalid(r: Resp, path: &str) {
    let r = r.expect_error(422, "validation_failed");
    assert_eq!(r.paths(), vec![path.to_string()], "body: {}", r.body);
}

#[track_caller]
fn not_found(r: Resp) {
    r.expect_error(404, "not_found");
}

#[track_caller]
fn forbidden(r: Resp) {
    r.expect_error(403, "insufficient_permissions");
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

// ----- 1. The endpoints API -----

#[tokio::test]
async fn creating_an_endpoint_answers_201_with_a_we_id_and_its_secret_shown_only_there() {
    let app = spawn_app().await;
    let r = app
        .post(
            "/webhooks",
            &app.key,
            json!({"url": SAFE_URL, "events": ["tag.*", "contact.created"], "description": "CRM sync"}),
        )
        .await
        .expect(201);
    let e = &r.body;
    let id = e["id"].as_str().unwrap();
    assert!(id.starts_with("we_") && id.len() > 3, "{e}");
    assert_eq!(e["object"], "webhook_endpoint");
    assert_eq!(e["url"], SAFE_URL);
    assert_eq!(e["events"], json!(["tag.*", "contact.created"]));
    assert_eq!(e["description"], "CRM sync");
    assert_eq!(
        e["filters"],
        json!({"channels": [], "actor_types": [], "sources": {}, "ignore_own_changes": false})
    );
    assert_eq!(e["include_content"], false);
    assert_eq!(e["include_contact_details"], false);
    assert_eq!(e["created_via"], "api");
    assert_eq!(e["status"], "active");
    assert_eq!(e["failure_count"], 0);
    assert_eq!(e["last_delivery"], Value::Null);
    let secret = e["secret"].as_str().unwrap().to_string();
    assert!(secret.len() >= 32, "{secret}");

    let got = endpoint_of(&app, id).await;
    no_secret(&got);
    assert_eq!(got["id"], id);
    assert_eq!(got["status"], "active");
    assert_eq!(got["last_delivery"], Value::Null);
    let list = app.get("/webhooks", &app.key).await.expect(200).body;
    for item in list["data"].as_array().unwrap() {
        no_secret(item);
    }
    let patched = app
        .patch(
            &format!("/webhooks/{id}"),
            &app.key,
            json!({"description": null}),
        )
        .await
        .expect(200)
        .body;
    no_secret(&patched);
    assert_eq!(patched["description"], Value::Null);

    let rotated = app
        .post(
            &format!("/webhooks/{id}/rotate-secret"),
            &app.key,
            json!({}),
        )
        .await
        .expect(200)
        .body;
    let new_secret = rotated["secret"].as_str().unwrap();
    assert_ne!(new_secret, secret);
    assert!(new_secret.len() >= 32);
    assert_millis_utc(&rotated["previous_secret_expires_at"]);
    no_secret(&endpoint_of(&app, id).await);
}

#[tokio::test]
async fn creating_an_endpoint_twice_with_one_idempotency_key_creates_it_once() {
    let app = spawn_app().await;
    let create = || {
        app.call(Method::POST, "/webhooks")
            .token(&app.key)
            .header("Idempotency-Key", "endpoint-once")
            .json(json!({"url": SAFE_URL, "events": ["*"]}))
            .send()
    };
    let first = create().await.expect(201);
    let again = create().await.expect(201);
    assert_eq!(again.header("idempotent-replayed"), Some("true"));
    assert_eq!(again.body["id"], first.body["id"]);
    let list = app.get("/webhooks", &app.key).await.expect(200).body;
    assert_eq!(list["data"].as_array().unwrap().len(), 1);
}

#[tokio::test]
async fn an_endpoint_created_by_a_connector_ignores_its_own_changes_by_default() {
    let app = spawn_app().await;
    let r = app
        .post(
            "/webhooks",
            &app.key,
            json!({"url": SAFE_URL, "events": ["*"], "created_via": "tool_a"}),
        )
        .await
        .expect(201);
    assert_eq!(r.body["created_via"], "tool_a");
    assert_eq!(r.body["filters"]["ignore_own_changes"], true);
    let r = app
        .post(
            "/webhooks",
            &app.key,
            json!({"url": SAFE_URL, "events": ["*"], "created_via": "tool_b",
                   "filters": {"ignore_own_changes": false}}),
        )
        .await
        .expect(201);
    assert_eq!(r.body["filters"]["ignore_own_changes"], false);
    invalid(
        app.post(
            "/webhooks",
            &app.key,
            json!({"url": SAFE_URL, "events": ["*"], "created_via": "zapier"}),
        )
        .await,
        "created_via",
    );
}

#[tokio::test]
async fn the_endpoint_list_is_paginated_newest_first() {
    let app = spawn_app().await;
    let mut ids = Vec::new();
    for i in 0..3 {
        let (id, _) = hook(&app, &format!("{SAFE_URL}/{i}"), &["*"]).await;
        ids.push(id);
    }
    let first = app.get("/webhooks?limit=2", &app.key).await.expect(200);
    assert_eq!(first.body["object"], "list");
    assert_eq!(first.body["has_more"], true);
    let got: Vec<&str> = first.body["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["id"].as_str().unwrap())
        .collect();
    assert_eq!(got, [ids[2].as_str(), ids[1].as_str()]);
    let cursor = first.body["next_cursor"].as_str().unwrap();
    let second = app
        .get(
            &format!("/webhooks?limit=2&starting_after={cursor}"),
            &app.key,
        )
        .await
        .expect(200);
    assert_eq!(second.body["has_more"], false);
    assert_eq!(second.body["data"].as_array().unwrap().len(), 1);
    assert_eq!(second.body["data"][0]["id"], ids[0].as_str());
    let all = app.get("/webhooks", &app.key).await.expect(200);
    assert_eq!(all.body["data"].as_array().unwrap().len(), 3);
    invalid(app.get("/webhooks?limit=101", &app.key).await, "limit");
    app.get("/webhooks?starting_after=nope", &app.key)
        .await
        .expect(400);
}

#[tokio::test]
async fn get_shows_no_last_delivery_before_the_first_and_its_result_after_it() {
    let app = spawn_webhook_app().await;
    let rx = TestReceiver::start().await;
    let (id, _) = hook(&app, &rx.url, &["tag.created"]).await;
    let before = endpoint_of(&app, &id).await;
    assert_eq!(before["last_delivery"], Value::Null);
    assert_eq!(before["status"], "active");
    app.post("/tags", &app.key, json!({"name": "First"}))
        .await
        .expect(201);
    let got = rx.wait_for(1).await;
    let e = endpoint_when(&app, &id, "a last delivery", |e| {
        !e["last_delivery"].is_null()
    })
    .await;
    let last = &e["last_delivery"];
    assert_eq!(last["delivered"], true, "{e}");
    assert_eq!(last["status_code"], 200);
    assert_eq!(last["error"], Value::Null);
    assert_eq!(last["event_type"], "tag.created");
    assert_eq!(last["event_id"], got[0].event_id());
    assert!(last["delivery_id"].is_u64(), "{last}");
    assert_millis_utc(&last["attempted_at"]);
    assert_eq!(e["failure_count"], 0);
}

#[tokio::test]
async fn patch_sets_only_active_or_paused_and_reactivating_resets_the_failure_count() {
    let app = spawn_webhook_app().await;
    let rx = TestReceiver::start().await;
    let (id, _) = hook(&app, &rx.url, &["tag.*"]).await;
    let at = format!("/webhooks/{id}");

    let paused = app
        .patch(&at, &app.key, json!({"status": "paused"}))
        .await
        .expect(200);
    assert_eq!(paused.body["status"], "paused");
    assert_eq!(paused.body["object"], "webhook_endpoint");
    for status in ["disabled", "bogus", "PAUSED"] {
        invalid(
            app.patch(&at, &app.key, json!({"status": status})).await,
            "status",
        );
    }
    invalid(
        app.post(
            "/webhooks",
            &app.key,
            json!({"url": SAFE_URL, "events": ["*"], "status": "paused"}),
        )
        .await,
        "status",
    );
    invalid(
        app.patch(&at, &app.key, json!({"created_via": "tool_a"}))
            .await,
        "created_via",
    );
    let r = app.patch(&at, &app.key, json!({})).await;
    r.expect_error(422, "validation_failed");
    let r = app.patch(&at, &app.key, json!({"colour": "red"})).await;
    r.expect_error(422, "validation_failed");
    assert_eq!(endpoint_of(&app, &id).await["status"], "paused");

    // A 410 disables the endpoint with a failure counted; PATCH active resets both.
    app.patch(&at, &app.key, json!({"status": "active"}))
        .await
        .expect(200);
    rx.respond_with(410);
    app.post("/tags", &app.key, json!({"name": "Gone"}))
        .await
        .expect(201);
    let e = endpoint_when(&app, &id, "disabled", |e| e["status"] == "disabled").await;
    assert_eq!(e["failure_count"], 1, "{e}");
    assert!(e["disabled_reason"].is_string(), "{e}");
    let again = app
        .patch(&at, &app.key, json!({"status": "active"}))
        .await
        .expect(200);
    assert_eq!(again.body["status"], "active");
    assert_eq!(again.body["failure_count"], 0);
    assert_eq!(again.body["failing_since"], Value::Null);
    assert_eq!(again.body["disabled_reason"], Value::Null);
    let stored = endpoint_of(&app, &id).await;
    assert_eq!(stored["status"], "active");
    assert_eq!(stored["failure_count"], 0);
}

#[tokio::test]
async fn patch_changes_url_events_description_and_filters() {
    let app = spawn_app().await;
    let (id, _) = hook(&app, SAFE_URL, &["*"]).await;
    let r = app
        .patch(
            &format!("/webhooks/{id}"),
            &app.key,
            json!({"url": "https://other.example.com/x", "events": ["order.*"],
                   "description": "Orders", "filters": {"actor_types": ["human"]}}),
        )
        .await
        .expect(200);
    assert_eq!(r.body["url"], "https://other.example.com/x");
    assert_eq!(r.body["events"], json!(["order.*"]));
    assert_eq!(r.body["description"], "Orders");
    assert_eq!(r.body["filters"]["actor_types"], json!(["human"]));
    assert_eq!(endpoint_of(&app, &id).await, r.body);
}

#[tokio::test]
async fn a_deleted_endpoint_answers_404_everywhere() {
    let app = spawn_app().await;
    let (id, _) = hook(&app, SAFE_URL, &["*"]).await;
    let (keep, _) = hook(&app, SAFE_URL, &["*"]).await;
    let r = app
        .delete(&format!("/webhooks/{id}"), &app.key)
        .await
        .expect(200);
    assert_eq!(
        r.body,
        json!({"object": "webhook_endpoint", "id": id, "deleted": true})
    );
    every_route_answers_404(&app, &app.key, &id).await;
    let list = app.get("/webhooks", &app.key).await.expect(200).body;
    let ids: Vec<&str> = list["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, [keep.as_str()]);
}

async fn every_route_answers_404(app: &TestApp, key: &str, id: &str) {
    let at = format!("/webhooks/{id}");
    not_found(app.get(&at, key).await);
    not_found(app.patch(&at, key, json!({"description": "x"})).await);
    not_found(app.delete(&at, key).await);
    not_found(
        app.post(&format!("{at}/rotate-secret"), key, json!({}))
            .await,
    );
    not_found(app.post(&format!("{at}/test"), key, json!({})).await);
    not_found(app.get(&format!("{at}/deliveries"), key).await);
    not_found(
        app.post(&format!("{at}/deliveries/1/redeliver"), key, json!({}))
            .await,
    );
}

#[tokio::test]
async fn unknown_ids_and_ids_of_another_workspace_answer_404() {
    let app = spawn_app().await;
    every_route_answers_404(&app, &app.key, "we_doesnotexist0000000000").await;
    every_route_answers_404(&app, &app.key, "nope").await;
    let (_, other_key) = app.new_workspace("Other").await;
    let r = app
        .post(
            "/webhooks",
            &other_key,
            json!({"url": SAFE_URL, "events": ["*"]}),
        )
        .await
        .expect(201);
    let theirs = r.body["id"].as_str().unwrap().to_string();
    every_route_answers_404(&app, &app.key, &theirs).await;
    let still = app
        .get(&format!("/webhooks/{theirs}"), &other_key)
        .await
        .expect(200);
    assert_eq!(still.body["status"], "active");
    let mine = app.get("/webhooks", &app.key).await.expect(200);
    assert_eq!(mine.body["data"], json!([]));
}

#[tokio::test]
async fn every_webhook_route_needs_the_integrations_permission() {
    let app = spawn_app().await;
    let (id, _) = hook(&app, SAFE_URL, &["*"]).await;
    let outsider = app.member_token("member", &["contacts", "inbox"]).await;
    let at = format!("/webhooks/{id}");
    forbidden(app.get("/webhooks", &outsider).await);
    forbidden(
        app.post(
            "/webhooks",
            &outsider,
            json!({"url": SAFE_URL, "events": ["*"]}),
        )
        .await,
    );
    forbidden(app.get(&at, &outsider).await);
    forbidden(app.patch(&at, &outsider, json!({"description": "x"})).await);
    forbidden(
        app.post(&format!("{at}/rotate-secret"), &outsider, json!({}))
            .await,
    );
    forbidden(app.post(&format!("{at}/test"), &outsider, json!({})).await);
    forbidden(app.get(&format!("{at}/deliveries"), &outsider).await);
    forbidden(
        app.post(
            &format!("{at}/deliveries/1/redeliver"),
            &outsider,
            json!({}),
        )
        .await,
    );
    forbidden(app.delete(&at, &outsider).await);
    assert_eq!(endpoint_of(&app, &id).await["status"], "active");

    let integrator = app.member_token("member", &["integrations"]).await;
    app.get("/webhooks", &integrator).await.expect(200);
    app.get(&at, &integrator).await.expect(200);
    app.post(
        "/webhooks",
        &integrator,
        json!({"url": SAFE_URL, "events": ["*"]}),
    )
    .await
    .expect(201);
    app.patch(&at, &integrator, json!({"description": "mine"}))
        .await
        .expect(200);
    app.delete(&at, &integrator).await.expect(200);
    app.call(Method::GET, "/webhooks")
        .send()
        .await
        .expect_error(401, "unauthenticated");
}

// ----- 2. Validation -----

#[tokio::test]
async fn http_urls_and_urls_over_2048_chars_are_refused_when_private_addresses_are_not_allowed() {
    let app = spawn_app().await;
    let body = |url: &str| json!({"url": url, "events": ["*"]});
    invalid(
        app.post("/webhooks", &app.key, body("http://hooks.example.com/in"))
            .await,
        "url",
    );
    invalid(
        app.post("/webhooks", &app.key, body("ftp://hooks.example.com/in"))
            .await,
        "url",
    );
    invalid(
        app.post("/webhooks", &app.key, body("not a url")).await,
        "url",
    );
    let base = "https://hooks.example.com/";
    let exactly = format!("{base}{}", "a".repeat(2048 - base.len()));
    assert_eq!(exactly.chars().count(), 2048);
    let too_long = format!("{exactly}a");
    invalid(
        app.post("/webhooks", &app.key, body(&too_long)).await,
        "url",
    );
    let (id, _) = new_endpoint(&app, body(&exactly)).await;
    invalid(
        app.patch(
            &format!("/webhooks/{id}"),
            &app.key,
            json!({"url": "http://hooks.example.com/in"}),
        )
        .await,
        "url",
    );
    invalid(
        app.post("/webhooks", &app.key, json!({"events": ["*"]}))
            .await,
        "url",
    );
    invalid(
        app.post("/webhooks", &app.key, json!({"url": SAFE_URL}))
            .await,
        "events",
    );
}

#[tokio::test]
async fn every_private_or_internal_address_form_is_refused_with_unsafe_url() {
    let app = spawn_app().await;
    let (id, _) = hook(&app, SAFE_URL, &["*"]).await;
    let unsafe_urls = [
        "https://127.0.0.1/hook",
        "https://127.10.20.30/hook",
        "https://10.0.0.1/hook",
        "https://172.16.0.1/hook",
        "https://172.31.255.254/hook",
        "https://192.168.1.1/hook",
        "https://169.254.169.254/latest/meta-data/",
        "https://100.64.0.1/hook",
        "https://0.0.0.0/hook",
        "https://224.0.0.1/hook",
        "https://240.0.0.1/hook",
        "https://255.255.255.255/hook",
        "https://2130706433/hook",
        "https://0x7f000001/hook",
        "https://0177.0.0.1/hook",
        "https://127.1/hook",
        "https://[::1]/hook",
        "https://[::]/hook",
        "https://[fd00::1]/hook",
        "https://[fc00::1]/hook",
        "https://[fe80::1]/hook",
        "https://[::ffff:127.0.0.1]/hook",
        "https://[::ffff:10.0.0.1]/hook",
        "https://[::ffff:169.254.169.254]/hook",
        "https://localhost/hook",
        "https://LOCALHOST:8443/hook",
        "https://x.localhost/hook",
        "https://localhost./hook",
        "https://127.0.0.1./hook",
        "https://0/hook",
        "https://017700000001/hook",
        "https://[0:0:0:0:0:ffff:127.0.0.1]/hook",
        "https://[::ffff:a9fe:a9fe]/hook",
        "https://[::127.0.0.1]/hook",
        "https://[ff02::1]/hook",
        "https://[fec0::1]/hook",
    ];
    for url in unsafe_urls {
        let r = app
            .post("/webhooks", &app.key, json!({"url": url, "events": ["*"]}))
            .await;
        assert_eq!(
            (r.status, r.code()),
            (422, "unsafe_url"),
            "POST {url} answered {}",
            r.body
        );
        let r = app
            .patch(&format!("/webhooks/{id}"), &app.key, json!({"url": url}))
            .await;
        assert_eq!(
            (r.status, r.code()),
            (422, "unsafe_url"),
            "PATCH {url} answered {}",
            r.body
        );
    }
    let list = app.get("/webhooks", &app.key).await.expect(200).body;
    assert_eq!(list["data"].as_array().unwrap().len(), 1, "nothing created");
    assert_eq!(endpoint_of(&app, &id).await["url"], SAFE_URL);
    for url in [
        "https://8.8.8.8/hook",
        "https://172.32.0.1/hook",
        "https://100.128.0.1/hook",
        "https://[2606:4700::1111]/hook",
        "https://hooks.example.com:8443/in?x=1",
    ] {
        let r = app
            .post("/webhooks", &app.key, json!({"url": url, "events": ["*"]}))
            .await;
        assert_eq!(r.status, 201, "{url} refused: {}", r.body);
    }
}

#[tokio::test]
async fn events_hold_one_to_a_hundred_catalog_types_prefix_wildcards_or_the_star() {
    let app = spawn_app().await;
    let post = |events: Value| {
        app.post(
            "/webhooks",
            &app.key,
            json!({"url": SAFE_URL, "events": events}),
        )
    };
    invalid(post(json!([])).await, "events");
    invalid(post(json!(vec!["tag.created"; 101])).await, "events");
    invalid(post(json!(["tag.nope"])).await, "events[0]");
    invalid(post(json!(["tag.created", "nope.*"])).await, "events[1]");
    invalid(
        post(json!(["tag.created", "contact.*", "webhook.test"])).await,
        "events[2]",
    );
    invalid(post(json!(["contact"])).await, "events[0]");
    invalid(post(json!(["*.*"])).await, "events[0]");
    invalid(post(json!("tag.created")).await, "events");
    for ok in [
        json!(["*"]),
        json!(["contact.*"]),
        json!(["booking.documents.*"]),
        json!(["message.received", "message.sent"]),
        json!(vec!["tag.created"; 100]),
    ] {
        let r = post(ok.clone()).await;
        assert_eq!(r.status, 201, "{ok} refused: {}", r.body);
        assert_eq!(r.body["events"], ok);
    }
    let (id, _) = hook(&app, SAFE_URL, &["*"]).await;
    invalid(
        app.patch(&format!("/webhooks/{id}"), &app.key, json!({"events": []}))
            .await,
        "events",
    );
    invalid(
        app.patch(
            &format!("/webhooks/{id}"),
            &app.key,
            json!({"events": ["*", "bad"]}),
        )
        .await,
        "events[1]",
    );
}

#[tokio::test]
async fn description_and_filters_are_bounded() {
    let app = spawn_app().await;
    let post = |extra: Value| {
        let mut body = json!({"url": SAFE_URL, "events": ["*"]});
        body.as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        app.post("/webhooks", &app.key, body)
    };
    invalid(
        post(json!({"description": "d".repeat(201)})).await,
        "description",
    );
    post(json!({"description": "d".repeat(200)}))
        .await
        .expect(201);
    invalid(
        post(json!({"filters": {"channels": vec!["sms"; 21]}})).await,
        "filters.channels",
    );
    post(json!({"filters": {"channels": vec!["sms"; 20]}}))
        .await
        .expect(201);
    invalid(
        post(json!({"filters": {"channels": ["chan_a", "telegraph"]}})).await,
        "filters.channels[1]",
    );
    invalid(
        post(json!({"filters": {"actor_types": vec!["api"; 8]}})).await,
        "filters.actor_types",
    );
    let all_seven = json!(["ai", "human", "customer", "system", "api", "import", "provider"]);
    let r = post(json!({"filters": {"actor_types": all_seven}}))
        .await
        .expect(201);
    assert_eq!(r.body["filters"]["actor_types"], all_seven);
    invalid(
        post(json!({"filters": {"actor_types": ["robot"]}})).await,
        "filters.actor_types[0]",
    );
    invalid(
        post(json!({"filters": {"sources": {"nope.created": ["api"]}}})).await,
        "filters.sources.nope.created",
    );
    post(json!({"filters": {"unknown": true}}))
        .await
        .expect_error(422, "validation_failed");
    post(json!({"secret": "mine"}))
        .await
        .expect_error(422, "validation_failed");
}

#[tokio::test]
async fn the_101st_endpoint_answers_409_endpoint_limit_reached() {
    let app = spawn_app().await;
    for chunk in 0..5 {
        let creates = (0..20).map(|i| {
            app.post(
                "/webhooks",
                &app.key,
                json!({"url": format!("{SAFE_URL}/{chunk}/{i}"), "events": ["*"]}),
            )
        });
        for r in futures::future::join_all(creates).await {
            r.expect(201);
        }
    }
    let over = app
        .post(
            "/webhooks",
            &app.key,
            json!({"url": SAFE_URL, "events": ["*"]}),
        )
        .await;
    over.expect_error(409, "endpoint_limit_reached");
    let first = app.get("/webhooks?limit=100", &app.key).await.expect(200);
    assert_eq!(first.body["data"].as_array().unwrap().len(), 100);
    assert_eq!(first.body["has_more"], false);
    // Another workspace has its own 100.
    let (_, other_key) = app.new_workspace("Other").await;
    app.post(
        "/webhooks",
        &other_key,
        json!({"url": SAFE_URL, "events": ["*"]}),
    )
    .await
    .expect(201);
    // Deleting one makes room for one.
    let id = first.body["data"][0]["id"].as_str().unwrap();
    app.delete(&format!("/webhooks/{id}"), &app.key)
        .await
        .expect(200);
    app.post(
        "/webhooks",
        &app.key,
        json!({"url": SAFE_URL, "events": ["*"]}),
    )
    .await
    .expect(201);
    app.post(
        "/webhooks",
        &app.key,
        json!({"url": SAFE_URL, "events": ["*"]}),
    )
    .await
    .expect_error(409, "endpoint_limit_reached");
}

// ----- 3. include_content and include_contact_details -----

#[tokio::test]
async fn only_an_owner_an_admin_or_an_api_key_may_turn_on_content_or_contact_details() {
    let app = spawn_app().await;
    let integrator = app.member_token("member", &["integrations"]).await;
    for flag in ["include_content", "include_contact_details"] {
        let body = json!({"url": SAFE_URL, "events": ["*"], flag: true});
        forbidden(app.post("/webhooks", &integrator, body.clone()).await);
        let r = app
            .post("/webhooks", &app.key, body.clone())
            .await
            .expect(201);
        assert_eq!(r.body[flag], true);
        let admin = app.member_token("admin", &[]).await;
        let r = app
            .post("/webhooks", &admin, body.clone())
            .await
            .expect(201);
        assert_eq!(r.body[flag], true);
        let owner = app.member_token("owner", &[]).await;
        app.post("/webhooks", &owner, body).await.expect(201);

        let (id, _) = hook(&app, SAFE_URL, &["*"]).await;
        let at = format!("/webhooks/{id}");
        forbidden(app.patch(&at, &integrator, json!({flag: true})).await);
        assert_eq!(endpoint_of(&app, &id).await[flag], false);
        let r = app
            .patch(&at, &admin, json!({flag: true}))
            .await
            .expect(200);
        assert_eq!(r.body[flag], true);
    }
    // Creating without either stays open to a member with integrations.
    let r = app
        .post(
            "/webhooks",
            &integrator,
            json!({"url": SAFE_URL, "events": ["*"], "include_content": false}),
        )
        .await
        .expect(201);
    assert_eq!(r.body["include_content"], false);
}

#[tokio::test]
async fn on_a_hipaa_workspace_content_and_contact_details_can_never_be_enabled() {
    let app = spawn_app().await;
    let (_, key) = hipaa_workspace(&app).await;
    for flag in ["include_content", "include_contact_details"] {
        let r = app
            .post(
                "/webhooks",
                &key,
                json!({"url": SAFE_URL, "events": ["*"], flag: true}),
            )
            .await;
        invalid(r, flag);
    }
    let r = app
        .post("/webhooks", &key, json!({"url": SAFE_URL, "events": ["*"]}))
        .await
        .expect(201);
    let id = r.body["id"].as_str().unwrap();
    for flag in ["include_content", "include_contact_details"] {
        invalid(
            app.patch(&format!("/webhooks/{id}"), &key, json!({flag: true}))
                .await,
            flag,
        );
    }
    let got = app
        .get(&format!("/webhooks/{id}"), &key)
        .await
        .expect(200)
        .body;
    assert_eq!(got["include_content"], false);
    assert_eq!(got["include_contact_details"], false);
}

#[tokio::test]
async fn on_a_disclosing_endpoint_only_an_owner_or_admin_may_change_url_events_or_filters() {
    let app = spawn_app().await;
    let integrator = app.member_token("member", &["integrations"]).await;
    let admin = app.member_token("admin", &[]).await;
    for flag in ["include_content", "include_contact_details"] {
        let (id, _) =
            new_endpoint(&app, json!({"url": SAFE_URL, "events": ["*"], flag: true})).await;
        let at = format!("/webhooks/{id}");
        for change in [
            json!({"url": "https://elsewhere.example.com/in"}),
            json!({"events": ["contact.*"]}),
            json!({"filters": {"actor_types": ["human"]}}),
            json!({"filters": {"ignore_own_changes": true}}),
            json!({"description": "ok", "url": "https://elsewhere.example.com/in"}),
        ] {
            let r = app.patch(&at, &integrator, change.clone()).await;
            assert_eq!(
                (r.status, r.code()),
                (403, "insufficient_permissions"),
                "{flag}: PATCH {change} answered {}",
                r.body
            );
        }
        let unchanged = endpoint_of(&app, &id).await;
        assert_eq!(unchanged["url"], SAFE_URL);
        assert_eq!(unchanged["events"], json!(["*"]));
        assert_eq!(unchanged["description"], Value::Null);

        let r = app
            .patch(&at, &integrator, json!({"description": "Support inbox"}))
            .await
            .expect(200);
        assert_eq!(r.body["description"], "Support inbox");
        let r = app
            .patch(&at, &integrator, json!({"status": "paused"}))
            .await
            .expect(200);
        assert_eq!(r.body["status"], "paused");
        let r = app
            .patch(&at, &integrator, json!({"status": "active"}))
            .await
            .expect(200);
        assert_eq!(r.body["status"], "active");
        let r = app
            .patch(
                &at,
                &admin,
                json!({"url": "https://elsewhere.example.com/in", "events": ["contact.*"]}),
            )
            .await
            .expect(200);
        assert_eq!(r.body["url"], "https://elsewhere.example.com/in");
        app.patch(&at, &app.key, json!({"filters": {"actor_types": ["api"]}}))
            .await
            .expect(200);
    }
    // On an endpoint that discloses nothing the same member may change routing.
    let (id, _) = hook(&app, SAFE_URL, &["*"]).await;
    app.patch(
        &format!("/webhooks/{id}"),
        &integrator,
        json!({"url": "https://elsewhere.example.com/in", "events": ["tag.*"]}),
    )
    .await
    .expect(200);
}
