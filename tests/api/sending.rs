//! The sender: outbound messages on a connected channel are POSTed, signed, to the
//! connection's relay (a real receiver on a local port), retried on the short ladder, and
//! settled as sent or failed with their events; 401 and 403 disconnect the connection and
//! the next success reconnects it; a channel with no connection fails at once; pending
//! sends survive kill -9.

use std::time::Duration;

use serde_json::{json, Value};
use switchboard::config::Settings;
use switchboard_actors::events::signature;

use crate::fixtures::*;
use crate::helpers::*;
use crate::receiver::*;
use crate::webhooks::{fast_webhooks, hook};

/// Relays and webhooks allowed on this machine, with a quick ladder (attempts 50 ms apart).
/// The time limit stays generous: a busy test machine must not turn a prompt relay into
/// a timeout.
pub fn fast_relays(s: &mut Settings) {
    fast_webhooks(s);
    s.relay_retry_delays = vec![Duration::from_millis(50), Duration::from_millis(100)];
    s.relay_timeout = Duration::from_secs(10);
}

async fn spawn_relay_app() -> TestApp {
    spawn_app_with(fast_relays).await
}

/// Connects `kind` to `relay`: (id, secret).
async fn connect(app: &TestApp, kind: &str, relay: &str) -> (u64, String) {
    let r = app
        .post("/channels", json!({"type": kind, "relay_url": relay}))
        .await
        .created();
    (
        r["id"].as_u64().unwrap(),
        r["secret"].as_str().unwrap().to_string(),
    )
}

/// A contact with every address a relay may need, and a conversation with it on `channel`.
async fn conversation(app: &TestApp, channel: &str) -> u64 {
    let contact = json!({
        "first_name": "Ann",
        "phone": "+15550100",
        "chan_d_phone": "+15550199",
        "email": "ann@example.com",
        "chan_a_username": "ann_a",
        "chan_e_username": "ann_e",
    });
    conversation_with(app, contact, channel).await
}

/// Message `m` of conversation `c` once its status is `status` (fails after 10 s).
async fn message_when(app: &TestApp, c: u64, m: &Value, status: &str) -> Value {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    loop {
        let page = app.get(&format!("/conversations/{c}/messages")).await.ok();
        let found = page["data"]
            .as_array()
            .and_then(|all| all.iter().find(|x| x["id"] == m["id"]).cloned())
            .expect("the message is listed");
        if found["status"] == status {
            return found;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "message never became {status}: {found}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

async fn channel_of(app: &TestApp, id: u64) -> Value {
    app.get(&format!("/channels/{id}")).await.ok()
}

/// The events of `types` a receiver got, in arrival order.
fn events_of(rx: &TestReceiver, types: &[&str]) -> Vec<Value> {
    rx.received()
        .iter()
        .filter(|r| types.contains(&r.event_type()))
        .map(Received::json)
        .collect()
}

/// As webhook deliveries are: after a rotation the old secret signs beside the new one
/// for the overlap (24 hours; shortened here), so a relay that still checks with it
/// keeps accepting messages; after it, the new one alone.
#[tokio::test]
async fn after_a_rotation_relay_requests_carry_both_signatures_until_the_overlap_ends() {
    let app = spawn_app_with(|s| {
        fast_relays(s);
        s.webhooks.secret_overlap = Duration::from_millis(600);
    })
    .await;
    let relay = TestReceiver::start().await;
    let (id, old) = connect(&app, "chan_a", &relay.url).await;
    let c = conversation(&app, "chan_a").await;
    let rotated = app
        .post(&format!("/channels/{id}/rotate-secret"), json!({}))
        .await
        .ok();
    let new = rotated["secret"].as_str().unwrap().to_string();
    team_reply(&app, c, "during the overlap").await;
    let got = relay.wait_for(1).await;
    let header = got[0].header("x-service-signature");
    let now = chrono::Utc::now().timestamp();
    assert_eq!(got[0].signatures().len(), 2, "{header}");
    assert!(signature::verify(header, &got[0].body, &new, now, 300));
    assert!(signature::verify(header, &got[0].body, &old, now, 300));

    tokio::time::sleep(Duration::from_millis(700)).await;
    team_reply(&app, c, "after the overlap").await;
    let got = relay.wait_for(2).await;
    let header = got[1].header("x-service-signature");
    let now = chrono::Utc::now().timestamp();
    assert_eq!(got[1].signatures().len(), 1, "{header}");
    assert!(signature::verify(header, &got[1].body, &new, now, 300));
    assert!(!signature::verify(header, &got[1].body, &old, now, 300));
}

#[tokio::test]
async fn a_reply_on_a_connected_channel_is_relayed_signed_and_then_sent() {
    let app = spawn_relay_app().await;
    let relay = TestReceiver::start().await;
    let hooks = TestReceiver::start().await;
    hook(&app, &hooks.url, &["message.sent"]).await;
    let (_, secret) = connect(&app, "chan_a", &relay.url).await;
    let c = conversation(&app, "chan_a").await;

    let m = team_reply(&app, c, "Your order shipped").await;
    assert_eq!(m["status"], "queued", "a relay channel answers queued");

    let got = relay.wait_for(1).await;
    let body = got[0].json();
    assert_eq!(
        body,
        json!({
            "object": "outbound_message",
            "message_id": m["id"],
            "conversation_id": c,
            "channel": "chan_a",
            "to": {"phone": "+15550100", "email": "ann@example.com", "username": "ann_a"},
            "text": "Your order shipped",
            "attachments": [],
        })
    );
    let doc = app.openapi().await;
    let mut schema = json!({"$ref": "#/components/schemas/RelayMessage"});
    schema["components"] = doc["components"].clone();
    let documented = jsonschema::validator_for(&schema).expect("a valid schema");
    assert!(
        documented.is_valid(&body),
        "the relay request is the documented RelayMessage"
    );
    assert!(!documented.is_valid(&json!({"object": "outbound_message"})));
    assert_eq!(got[0].header("x-service-message-id"), m["id"].to_string());
    assert_eq!(got[0].attempt(), 1);
    let now = chrono::Utc::now().timestamp();
    assert!(signature::verify(
        got[0].header("x-service-signature"),
        &got[0].body,
        &secret,
        now,
        300
    ));
    assert!(!signature::verify(
        got[0].header("x-service-signature"),
        &got[0].body,
        "whsec_another",
        now,
        300
    ));

    let sent = message_when(&app, c, &m, "sent").await;
    assert!(sent["error"].is_null());
    let events = hooks.wait_until("message.sent", |r| !r.is_empty()).await;
    let data = &events[0].json()["data"];
    assert_eq!(data["id"], m["id"]);
    assert_eq!(
        data["status"], "sent",
        "message.sent fires once the relay took it"
    );
    relay.stays_at(1, Duration::from_millis(300)).await;
}

#[tokio::test]
async fn operators_see_one_relay_actor_per_connection_that_sent() {
    let app = spawn_relay_app().await;
    let relay = TestReceiver::start().await;
    let (channel, _) = connect(&app, "chan_a", &relay.url).await;
    let c = conversation(&app, "chan_a").await;
    let m = team_reply(&app, c, "hi").await;
    message_when(&app, c, &m, "sent").await;
    let actors = app
        .admin_call(reqwest::Method::GET, "/admin/actors")
        .send()
        .await
        .ok();
    let relays: Vec<&Value> = actors["data"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|a| a["kind"] == "channel_relay")
        .collect();
    assert_eq!(relays.len(), 1);
    assert_eq!(relays[0]["key"], channel.to_string());
    assert!(relays[0]["messages_handled"].as_u64().unwrap() >= 2);
}

#[tokio::test]
async fn the_relay_is_told_the_chan_d_phone_on_chan_d_and_no_username() {
    let app = spawn_relay_app().await;
    let relay = TestReceiver::start().await;
    connect(&app, "chan_d", &relay.url).await;
    let c = conversation(&app, "chan_d").await;
    team_reply(&app, c, "hi").await;
    let to = relay.wait_for(1).await[0].json()["to"].clone();
    assert_eq!(
        to,
        json!({"phone": "+15550199", "email": "ann@example.com", "username": null})
    );
}

#[tokio::test]
async fn the_api_channel_sends_at_once_and_an_unconnected_channel_fails_at_once() {
    let app = spawn_relay_app().await;
    let hooks = TestReceiver::start().await;
    hook(&app, &hooks.url, &["message.sent", "message.send_failed"]).await;

    let on_api = conversation(&app, "api").await;
    let m = team_reply(&app, on_api, "at once").await;
    assert_eq!(m["status"], "sent");

    let on_sms = conversation(&app, "sms").await;
    let failed = team_reply(&app, on_sms, "nowhere to go").await;
    assert_eq!(failed["status"], "failed");
    assert_eq!(failed["error"], "channel_not_connected");

    hooks.wait_for(2).await;
    assert_eq!(hooks.event_types(), ["message.send_failed", "message.sent"]);
    let data = &hooks.of_type("message.send_failed")[0].json()["data"];
    assert_eq!(data["error"], "channel_not_connected");
    assert!(
        data.get("text").is_none(),
        "the message text is content, withheld by default"
    );
}

#[tokio::test]
async fn a_failing_relay_is_tried_three_times_then_the_message_fails_and_a_success_reconnects() {
    let app = spawn_relay_app().await;
    let relay = TestReceiver::start().await;
    relay.respond_with(500);
    let hooks = TestReceiver::start().await;
    hook(&app, &hooks.url, &["message.send_failed", "channel.*"]).await;
    let (channel, _) = connect(&app, "chan_c", &relay.url).await;
    let c = conversation(&app, "chan_c").await;

    let m = team_reply(&app, c, "are you there?").await;
    let failed = message_when(&app, c, &m, "failed").await;
    assert!(
        failed["error"].as_str().unwrap().contains("500"),
        "{failed}"
    );
    let attempts: Vec<u32> = relay.received().iter().map(Received::attempt).collect();
    assert_eq!(attempts, [1, 2, 3], "the first try and two retries");
    relay.stays_at(3, Duration::from_millis(300)).await;
    let conn = channel_of(&app, channel).await;
    assert_eq!(conn["status"], "failing");
    assert!(conn["last_error"].as_str().unwrap().contains("500"));

    relay.respond_with(200);
    let next = team_reply(&app, c, "hello again").await;
    message_when(&app, c, &next, "sent").await;
    assert_eq!(channel_of(&app, channel).await["status"], "connected");
    assert!(channel_of(&app, channel).await["last_error"].is_null());

    hooks.wait_for(2).await;
    assert_eq!(
        hooks.event_types(),
        ["channel.reconnected", "message.send_failed"]
    );
    let reconnected = &hooks.of_type("channel.reconnected")[0].json()["data"];
    assert_eq!(reconnected["id"], channel);
    // The event carries the connection as GET returns it.
    let mut record = reconnected.clone();
    record.as_object_mut().unwrap().remove("reason");
    assert_eq!(record, channel_of(&app, channel).await);
}

/// A relay retry goes out when it falls due, not at the relay actor's next periodic look
/// (here 5 s apart, against a ladder of 300 ms).
#[tokio::test]
async fn a_relay_retry_goes_out_when_it_falls_due_between_two_periodic_looks() {
    let app = spawn_app_with(|s| {
        fast_relays(s);
        s.webhooks.tick = Duration::from_secs(5);
        s.relay_retry_delays = vec![Duration::from_millis(300); 2];
    })
    .await;
    let relay = TestReceiver::start().await;
    relay.respond_with(500);
    connect(&app, "chan_c", &relay.url).await;
    let c = conversation(&app, "chan_c").await;
    let started = std::time::Instant::now();
    let m = team_reply(&app, c, "on time?").await;
    message_when(&app, c, &m, "failed").await;
    assert_eq!(relay.received().len(), 3);
    let took = started.elapsed();
    assert!(
        took < Duration::from_secs(4),
        "three attempts 300 ms apart took {took:?}"
    );
}

#[tokio::test]
async fn a_401_disconnects_at_once_without_retries_and_tells_it_once() {
    let app = spawn_relay_app().await;
    let relay = TestReceiver::start().await;
    relay.respond_with(401);
    let hooks = TestReceiver::start().await;
    hook(&app, &hooks.url, &["channel.*"]).await;
    let (channel, _) = connect(&app, "chan_e", &relay.url).await;
    let c = conversation(&app, "chan_e").await;

    let first = team_reply(&app, c, "one").await;
    let failed = message_when(&app, c, &first, "failed").await;
    assert!(failed["error"].as_str().unwrap().contains("401"));
    relay.stays_at(1, Duration::from_millis(300)).await;
    assert_eq!(channel_of(&app, channel).await["status"], "disconnected");

    relay.respond_with(403);
    let second = team_reply(&app, c, "two").await;
    message_when(&app, c, &second, "failed").await;

    relay.respond_with(202);
    let third = team_reply(&app, c, "three").await;
    message_when(&app, c, &third, "sent").await;
    assert_eq!(channel_of(&app, channel).await["status"], "connected");

    hooks.wait_for(2).await;
    let events = events_of(&hooks, &["channel.disconnected", "channel.reconnected"]);
    let mut told: Vec<(&str, &str)> = events
        .iter()
        .map(|e| {
            (
                e["type"].as_str().unwrap(),
                e["data"]["reason"].as_str().unwrap_or("-"),
            )
        })
        .collect();
    // Two changes whose deliveries may arrive in either order.
    told.sort();
    assert_eq!(
        told,
        [
            ("channel.disconnected", "access_removed"),
            ("channel.reconnected", "-")
        ],
        "one disconnection for two refusals, and the reconnection"
    );
}

#[tokio::test]
async fn the_newest_connection_of_a_type_sends_and_deleting_one_fails_what_waits_for_it() {
    let app = spawn_app_with(|s| {
        fast_relays(s);
        s.relay_retry_delays = vec![Duration::from_secs(60)];
    })
    .await;
    let (older, newer) = (TestReceiver::start().await, TestReceiver::start().await);
    let hooks = TestReceiver::start().await;
    hook(&app, &hooks.url, &["message.send_failed"]).await;
    connect(&app, "chan_b", &older.url).await;
    let (newest, _) = connect(&app, "chan_b", &newer.url).await;
    let c = conversation(&app, "chan_b").await;

    newer.respond_with(503);
    let waiting = team_reply(&app, c, "to the newest").await;
    newer.wait_for(1).await;
    older.stays_at(0, Duration::from_millis(200)).await;

    app.delete(&format!("/channels/{newest}")).await.expect(200);
    let failed = message_when(&app, c, &waiting, "failed").await;
    assert!(failed["error"].as_str().unwrap().contains("deleted"));
    let got = hooks.wait_for(1).await;
    assert_eq!(got[0].json()["data"]["id"], waiting["id"]);

    let next = team_reply(&app, c, "to the older one").await;
    message_when(&app, c, &next, "sent").await;
    assert_eq!(older.received().len(), 1);
    newer.stays_at(1, Duration::from_millis(200)).await;
}

/// A customer writes on chan_a (the AI answers).
async fn customer_writes_on_chan_a(app: &TestApp) {
    app.post(
        "/messages",
        json!({"channel": "chan_a", "text": "hello?", "contact": {"username": "ann_a"}}),
    )
    .await
    .expect(202);
}

#[tokio::test]
async fn an_ai_reply_goes_out_through_the_relay_too() {
    let app = spawn_relay_app().await;
    let relay = TestReceiver::start().await;
    connect(&app, "chan_a", &relay.url).await;
    customer_writes_on_chan_a(&app).await;
    let got = relay.wait_for(1).await[0].json();
    assert_eq!(got["channel"], "chan_a");
    assert_eq!(got["to"]["username"], "ann_a");
    assert!(!got["text"].as_str().unwrap().is_empty());
}

/// The events of a relayed message's outcome name who sent it, as the send's own events
/// do on the `api` channel: the calling credential for a team reply, the AI for its reply.
#[tokio::test]
async fn a_relayed_message_s_outcome_names_its_sender_as_the_actor() {
    let app = spawn_relay_app().await;
    let relay = TestReceiver::start().await;
    let hooks = TestReceiver::start().await;
    hook(
        &app,
        &hooks.url,
        &["message.sent", "conversation.ai_paused"],
    )
    .await;
    connect(&app, "chan_a", &relay.url).await;

    // The AI answers a customer through the relay.
    customer_writes_on_chan_a(&app).await;
    let first = hooks.wait_until("message.sent", |r| !r.is_empty()).await;
    let by_ai = first[0].json();
    assert_eq!(by_ai["data"]["sender_type"], "ai", "{by_ai}");
    assert_eq!(by_ai["actor"], json!({"type": "ai", "id": null}));
    assert_eq!(by_ai["source"]["via"], "ai");

    // A team reply with the API key: the key is the actor, of both events of the send.
    let c = by_ai["data"]["conversation_id"].as_u64().unwrap();
    team_reply(&app, c, "A person here").await;
    let two_sent = |r: &[Received]| {
        r.iter()
            .filter(|e| e.event_type() == "message.sent")
            .count()
            == 2
    };
    hooks.wait_until("two message.sent", two_sent).await;
    let by_key = events_of(&hooks, &["message.sent"])
        .into_iter()
        .find(|e| e["data"]["sender_type"] == "team")
        .expect("the team reply's message.sent");
    let paused = events_of(&hooks, &["conversation.ai_paused"]);
    assert_eq!(paused.len(), 1);
    assert_eq!(by_key["actor"]["type"], "api", "{by_key}");
    assert_eq!(by_key["actor"], paused[0]["actor"]);
    assert_eq!(by_key["source"], paused[0]["source"]);
    let connection = by_key["source"]["connection_id"].as_str().unwrap();
    assert!(connection.starts_with("api_key:"), "{connection}");
}

#[tokio::test]
async fn a_pending_send_survives_kill_9_and_goes_out_after_the_restart() {
    let dir = tempfile::tempdir().unwrap();
    let env = [
        ("SWITCHBOARD_WEBHOOK_ALLOW_PRIVATE", "true"),
        ("SWITCHBOARD_WEBHOOK_TICK", "20ms"),
        ("SWITCHBOARD_RELAY_RETRY_DELAYS", "1s,1s"),
    ];
    let relay = TestReceiver::start().await;
    relay.respond_with(500);
    let mut server = launch(dir.path(), &env, &[]).await;
    let key = server.key.clone().unwrap();
    let post = async |server: &Server, path: &str, body: Value| -> Value {
        let r = server.send(reqwest::Method::POST, &key, path, body).await;
        r.json().await.unwrap()
    };
    post(
        &server,
        "/channels",
        json!({"type": "chan_a", "relay_url": relay.url}),
    )
    .await;
    let hooks = TestReceiver::start().await;
    post(
        &server,
        "/webhooks",
        json!({"url": hooks.url, "events": ["message.sent"]}),
    )
    .await;
    let contact = post(
        &server,
        "/contacts",
        json!({"first_name": "Ann", "chan_a_username": "ann_a"}),
    )
    .await;
    let conversation = post(
        &server,
        "/conversations",
        json!({"contact_id": contact["id"], "channel": "chan_a"}),
    )
    .await;
    let c = conversation["id"].as_u64().unwrap();
    let m = post(
        &server,
        &format!("/conversations/{c}/messages"),
        json!({"text": "still there?"}),
    )
    .await;
    relay.wait_for(1).await;
    server.kill_9().await;
    crate::store_safety::assert_store_checks(dir.path());

    relay.respond_with(200);
    let server = launch(dir.path(), &env, &[]).await;
    let got = relay.wait_for(2).await;
    assert_eq!(
        got[1].json()["message_id"],
        m["id"],
        "the same message again"
    );
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    loop {
        let page = server
            .get_json(&key, &format!("/conversations/{c}/messages"))
            .await;
        if page["data"][0]["status"] == "sent" {
            break;
        }
        assert!(tokio::time::Instant::now() < deadline, "{page}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    relay.stays_at(2, Duration::from_millis(300)).await;
    // Who sent it outlives the kill too: the key is the actor of its message.sent.
    let sent = hooks.wait_until("message.sent", |r| !r.is_empty()).await;
    let event = sent[0].json();
    assert_eq!(event["actor"]["type"], "api", "{event}");
    assert!(event["source"]["connection_id"]
        .as_str()
        .is_some_and(|c| c.starts_with("api_key:")));
}

#[tokio::test]
async fn a_stop_waits_for_the_relay_send_in_flight_instead_of_cutting_it() {
    let app = spawn_relay_app().await;
    let relay = TestReceiver::start().await;
    connect(&app, "chan_a", &relay.url).await;
    let c = conversation(&app, "chan_a").await;
    // Answered well within the stop's grace period (10 s by default).
    relay.answer_after(Duration::from_millis(700));
    let m = team_reply(&app, c, "Your order shipped").await;
    relay.wait_for(1).await;

    let app = app.restart_with(fast_relays).await;
    relay.respond_with(200);
    let sent = message_when(&app, c, &m, "sent").await;
    assert_eq!(sent["status"], "sent");
    relay.stays_at(1, Duration::from_millis(300)).await;
}
