//! Webhook deliveries to real local receivers: headers, the envelope, signatures and
//! rotation, every retry path, the 7-attempt end, 410, the failure window, pause and
//! resume, subscriptions, filters, privacy, the operator trigger (HTTP and CLI), test
//! sends and redelivery, the delivery list, restarts, kill -9, slow-endpoint isolation, and
//! delivery actors that stop when idle and start again for new work or a retry.

use std::path::Path;
use std::time::Duration;

use reqwest::Method;
use serde_json::{json, Value};
use switchboard::config::Settings;
use switchboard_actors::clock::{Clock, ManualClock};
use switchboard_actors::events::signature;

use crate::fixtures::*;
use crate::helpers::*;
use crate::receiver::*;
use crate::webhooks::*;

const HOUR: Duration = Duration::from_secs(3600);
const MINUTE: Duration = Duration::from_secs(60);

fn now_unix() -> i64 {
    chrono::Utc::now().timestamp()
}

/// A person with `role` in the bootstrap workspace: (user id, token).
async fn person(app: &TestApp, role: &str) -> (String, String) {
    let user = app.new_user("Pat Person").await;
    app.add_member(&app.workspace_id, &user, role, &[]).await;
    let token = app.token_for(&user, 3600).await;
    (user, token)
}

pub(crate) async fn new_tag(app: &TestApp, token: &str, name: &str) -> Value {
    app.post_as(token, "/tags", json!({"name": name}))
        .await
        .created()
}

// ----- 7. The failure window -----

/// The bootstrap workspace's operator notifications (GET, answering 200).
async fn notifications(app: &TestApp) -> Value {
    app.admin_call(
        Method::GET,
        &format!("/admin/workspaces/{}/notifications", app.workspace_id),
    )
    .send()
    .await
    .ok()
}

// ----- 11. Privacy -----

const CONTACT_DETAILS: [&str; 10] = [
    "name",
    "first_name",
    "last_name",
    "phone",
    "email",
    "chan_d_phone",
    "chan_a_username",
    "chan_c_username",
    "chan_e_username",
    "custom_fields",
];

/// Three endpoints on `events`: without opt-in, with include_content, with
/// include_contact_details.
async fn three_endpoints(app: &TestApp, events: &[&str]) -> [TestReceiver; 3] {
    let plain = TestReceiver::start().await;
    let content = TestReceiver::start().await;
    let details = TestReceiver::start().await;
    hook(app, &plain.url, events).await;
    new_endpoint(
        app,
        json!({"url": content.url, "events": events, "include_content": true}),
    )
    .await;
    new_endpoint(
        app,
        json!({"url": details.url, "events": events, "include_contact_details": true}),
    )
    .await;
    [plain, content, details]
}

async fn full_contact(app: &TestApp, key: &str) -> Value {
    app.post_as(
        key,
        "/custom-fields",
        json!({"label": "Nickname", "key": "nickname", "type": "text"}),
    )
    .await
    .expect(201);
    app.post_as(
        key,
        "/contacts",
        json!({"first_name": "Ann", "last_name": "Lee", "phone": "+15550100123",
               "email": "ann@example.com", "chan_d_phone": "+15550100999",
               "chan_a_username": "ann_a", "chan_c_username": "ann_c",
               "chan_e_username": "ann_e", "custom_fields": {"nickname": "Annie"}}),
    )
    .await
    .created()
}

#[track_caller]
fn lacks(data: &Value, fields: &[&str]) {
    for f in fields {
        assert!(data.get(*f).is_none(), "`{f}` was sent: {data}");
    }
}

/// The real binary with fast webhook settings and every proxy variable pointed at `proxy`
/// (which must receive nothing: deliveries use no proxy).
async fn launch_with_proxy(dir: &Path, proxy: &str) -> Server {
    let env = [
        ("HTTP_PROXY", proxy),
        ("HTTPS_PROXY", proxy),
        ("ALL_PROXY", proxy),
        ("http_proxy", proxy),
        ("https_proxy", proxy),
        ("all_proxy", proxy),
        ("SWITCHBOARD_WEBHOOK_ALLOW_PRIVATE", "true"),
        ("SWITCHBOARD_WEBHOOK_TICK", "20ms"),
        ("SWITCHBOARD_WEBHOOK_TIMEOUT", "2s"),
        ("SWITCHBOARD_WEBHOOK_RETRY_DELAYS", "1s,1s,1s,1s,1s,1s"),
    ];
    launch(dir, &env, &["NO_PROXY", "no_proxy"]).await
}

/// Rotates the endpoint's secret; the new one.
async fn rotate(app: &TestApp, id: &str) -> String {
    app.post(&format!("/webhooks/{id}/rotate-secret"), json!({}))
        .await
        .ok()["secret"]
        .as_str()
        .expect("secret")
        .to_string()
}

mod disabling;
mod filters;
mod passivation;
mod privacy;
mod restarts;
mod retries;
mod signing;
mod triggers_and_log;
