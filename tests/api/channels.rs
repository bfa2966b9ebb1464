//! Channel connections: created with a safe relay URL and a secret shown once, read,
//! changed, rotated and deleted (channel.disconnected), behind the integrations
//! permission, and kept across restarts.

use reqwest::Method;
use serde_json::{json, Value};

use crate::helpers::*;
use crate::receiver::*;
use crate::webhooks::*;

const RELAY: &str = "https://relay.example.com/in";
const CHANNEL_FIELDS: &str =
    "object id type name status relay_url last_error connected_at updated_at";

async fn connect(app: &TestApp, body: Value) -> Value {
    app.post("/channels", body).await.created()
}

/// Connects a `kind` channel to the relay; its id.
async fn connected(app: &TestApp, kind: &str) -> u64 {
    let created = connect(app, json!({"type": kind, "relay_url": RELAY})).await;
    created["id"].as_u64().expect("an integer id")
}

#[tokio::test]
async fn a_connection_is_created_connected_with_its_secret_shown_only_then() {
    let app = spawn_app().await;
    let created = connect(&app, json!({"type": "chan_a", "relay_url": RELAY})).await;
    let mut fields = CHANNEL_FIELDS.to_string();
    fields.push_str(" secret");
    assert_fields(&created, &fields);
    assert_eq!(created["object"], "channel");
    assert!(created["id"].is_u64(), "ids are integers");
    assert_eq!(created["type"], "chan_a");
    assert_eq!(created["name"], "chan_a", "the name defaults to the type");
    assert_eq!(created["status"], "connected");
    assert!(created["last_error"].is_null());
    assert!(created["secret"].as_str().unwrap().starts_with("whsec_"));
    assert_millis_utc(&created["connected_at"]);

    let id = created["id"].as_u64().unwrap();
    let got = app.get(&format!("/channels/{id}")).await.ok();
    assert_fields(&got, CHANNEL_FIELDS);
    assert_eq!(got["relay_url"], RELAY);

    let second = connect(
        &app,
        json!({"type": "chan_d", "name": "Phones", "relay_url": RELAY}),
    )
    .await;
    let ids: Vec<Value> = listed(app.get("/channels").await)
        .iter()
        .map(|c| c["id"].clone())
        .collect();
    assert_eq!(
        ids,
        vec![second["id"].clone(), created["id"].clone()],
        "newest first"
    );
}

#[tokio::test]
async fn a_connection_needs_a_type_other_than_api_and_an_https_relay() {
    let app = spawn_app().await;
    refusals(
        &app,
        Method::POST,
        "/channels",
        vec![
            (json!({"relay_url": RELAY}), "type"),
            (json!({"type": "api", "relay_url": RELAY}), "type"),
            (json!({"type": "pigeon", "relay_url": RELAY}), "type"),
            (json!({"type": "chan_a"}), "relay_url"),
            (
                json!({"type": "chan_a", "relay_url": "http://relay.example.com/in"}),
                "relay_url",
            ),
            (
                json!({"type": "chan_a", "relay_url": RELAY, "status": "failing"}),
                "status",
            ),
            (
                json!({"type": "chan_a", "relay_url": RELAY, "name": ""}),
                "name",
            ),
        ],
    )
    .await;
    for private in [
        "https://127.0.0.1/in",
        "https://169.254.169.254/latest",
        "https://10.0.0.8/",
    ] {
        app.post("/channels", json!({"type": "chan_a", "relay_url": private}))
            .await
            .expect_error(422, "unsafe_url");
    }
    assert!(listed(app.get("/channels").await).is_empty());
}

#[tokio::test]
async fn a_change_renames_or_moves_the_relay_but_never_changes_the_type() {
    let app = spawn_app().await;
    let id = connected(&app, "chan_c").await;
    let path = format!("/channels/{id}");
    let moved = app
        .patch(
            &path,
            json!({"name": "Chat", "relay_url": "https://relay2.example.com/in"}),
        )
        .await
        .ok();
    assert_eq!(moved["name"], "Chat");
    assert_eq!(moved["relay_url"], "https://relay2.example.com/in");
    assert_eq!(moved["type"], "chan_c");
    refusals(
        &app,
        Method::PATCH,
        &path,
        vec![
            (json!({"type": "chan_a"}), "type"),
            (json!({}), ""),
            (json!({"status": "connected"}), "status"),
        ],
    )
    .await;
    app.patch(&path, json!({"relay_url": "https://192.168.1.2/x"}))
        .await
        .expect_error(422, "unsafe_url");
}

#[tokio::test]
async fn rotating_answers_a_new_secret() {
    let app = spawn_app().await;
    let created = connect(&app, json!({"type": "chan_b", "relay_url": RELAY})).await;
    let id = created["id"].as_u64().unwrap();
    let rotated = app
        .post(&format!("/channels/{id}/rotate-secret"), json!({}))
        .await
        .ok();
    assert_eq!(rotated["id"], created["id"]);
    assert!(rotated["secret"].as_str().unwrap().starts_with("whsec_"));
    assert_ne!(rotated["secret"], created["secret"]);
}

#[tokio::test]
async fn deleting_disconnects_and_announces_channel_disconnected() {
    let app = spawn_webhook_app().await;
    let rx = TestReceiver::start().await;
    hook(&app, &rx.url, &["channel.*"]).await;
    let id = connected(&app, "chan_e").await;
    let before = app.get(&format!("/channels/{id}")).await.ok();
    let deleted = app.delete(&format!("/channels/{id}")).await.ok();
    assert_eq!(
        deleted,
        json!({"object": "channel", "id": id, "deleted": true})
    );
    not_found(app.get(&format!("/channels/{id}")).await);
    not_found(app.delete(&format!("/channels/{id}")).await);
    let event = rx.wait_for(1).await[0].json();
    assert_eq!(event["type"], "channel.disconnected");
    assert_eq!(event["data"]["id"], id);
    assert_eq!(event["data"]["type"], "chan_e");
    assert_eq!(event["data"]["reason"], "deleted");
    // The connection as GET answered it, in its last state: deleting disconnects.
    let data = &event["data"];
    assert_eq!(data["object"], "channel");
    assert_eq!(data["status"], "disconnected");
    for field in ["name", "relay_url", "connected_at", "last_error"] {
        assert_eq!(data[field], before[field], "{field}");
    }
    assert!(data["updated_at"].as_str().unwrap() >= before["updated_at"].as_str().unwrap());
}

#[tokio::test]
async fn unknown_or_foreign_ids_are_not_found_and_members_need_integrations() {
    let app = spawn_app().await;
    let id = connected(&app, "chan_a").await;
    not_found(app.get("/channels/42").await);
    app.get("/channels/ch_unknown").await.expect(400);
    let (_, other_key) = app.new_workspace("Other").await;
    not_found(app.get_as(&other_key, &format!("/channels/{id}")).await);
    assert_read_needs(&app, "/channels", &["contacts"], &["integrations"]).await;
}

#[tokio::test]
async fn connections_survive_a_restart() {
    let app = spawn_app().await;
    let created = connect(&app, json!({"type": "chan_d", "relay_url": RELAY})).await;
    let app = app.restart().await;
    let id = created["id"].as_u64().unwrap();
    let got = app.get(&format!("/channels/{id}")).await.ok();
    assert_eq!(got["type"], "chan_d");
    assert_eq!(got["status"], "connected");
    assert_eq!(got["connected_at"], created["connected_at"]);
}
