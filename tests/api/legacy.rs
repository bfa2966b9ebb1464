//! The legacy routes of the API channel: POST /messages (and its repeat rules), errors as
//! `{message}`, no rate limit.

use serde_json::{json, Value};

use crate::helpers::*;

/// The app with the AI off, so that a conversation holds only what the test sends.
async fn quiet_app() -> TestApp {
    let app = spawn_app().await;
    app.patch("/ai-settings", json!({"enabled": false}))
        .await
        .expect(200);
    app
}

async fn post_message(app: &TestApp, body: Value) -> Resp {
    app.post("/messages", body).await
}

/// A legacy error: the status and a `{message}` body, nothing else.
#[track_caller]
fn legacy_error(r: Resp, status: u16) -> String {
    assert_eq!(r.status, status, "body: {}", r.body);
    let obj = r.body.as_object().expect("an object");
    assert_eq!(obj.len(), 1, "only `message`: {}", r.body);
    obj["message"].as_str().expect("a message").to_string()
}

fn ids(r: &Resp) -> (u64, u64, u64) {
    let b = &r.body;
    (
        b["conversationId"].as_u64().unwrap(),
        b["messageId"].as_u64().unwrap(),
        b["contactId"].as_u64().unwrap(),
    )
}

#[tokio::test]
async fn a_message_from_new_details_creates_the_contact_and_a_conversation() {
    let app = quiet_app().await;
    let r = post_message(
        &app,
        json!({"contact": {"phone": "+1 555 0100", "name": "Ann Lee"}, "text": "Hi there"}),
    )
    .await;
    assert_eq!(r.status, 202, "{}", r.body);
    assert_eq!(r.body["accepted"], true);
    let (conv, msg, contact) = ids(&r);

    let c = app.get(&format!("/contacts/{contact}")).await.ok();
    assert_eq!(
        (&c["first_name"], &c["last_name"]),
        (&json!("Ann"), &json!("Lee"))
    );
    assert_eq!(c["channel"], "api");
    let conversation = app.get(&format!("/conversations/{conv}")).await.ok();
    assert_eq!(conversation["channel"], "api");
    assert_eq!(conversation["message_count"], 1);
    let messages = listed(app.get(&format!("/conversations/{conv}/messages")).await);
    assert_eq!(messages[0]["id"], msg);
    assert_eq!(
        (
            &messages[0]["direction"],
            &messages[0]["sender_type"],
            &messages[0]["status"]
        ),
        (&json!("inbound"), &json!("customer"), &json!("received"))
    );

    let again = post_message(
        &app,
        json!({"contact": {"phone": "15550100"}, "text": "me again"}),
    )
    .await;
    let (conv2, _, contact2) = ids(&again);
    assert_eq!(
        (conv2, contact2),
        (conv, contact),
        "matched by phone, same conversation"
    );
}

#[tokio::test]
async fn a_closed_conversation_reopens_and_another_channel_gets_its_own() {
    let app = spawn_app().await;
    let first = post_message(
        &app,
        json!({"contact": {"email": "a@example.com"}, "text": "one"}),
    )
    .await;
    let (conv, _, contact) = ids(&first);
    app.post(&format!("/conversations/{conv}/close"), json!({}))
        .await
        .expect(200);
    let again = post_message(&app, json!({"contact_id": contact, "text": "two"})).await;
    assert_eq!(ids(&again).0, conv);
    let c = app.get(&format!("/conversations/{conv}")).await.ok();
    assert_eq!(c["status"], "open");

    let sms = post_message(
        &app,
        json!({"contact_id": contact, "channel": "sms", "text": "three"}),
    )
    .await;
    assert_ne!(ids(&sms).0, conv);
}

#[tokio::test]
async fn bad_input_answers_with_a_message() {
    let app = spawn_app().await;
    let raw = app
        .call(reqwest::Method::POST, "/messages")
        .token(&app.key)
        .raw("{not json")
        .send()
        .await;
    legacy_error(raw, 400);
    for path in ["/messages", "/chat"] {
        let body = r#"{"contact": {"phone": "+15550100"}, "text": "hi", "message": "hi"}"#;
        let plain = app
            .call(reqwest::Method::POST, path)
            .token(&app.key)
            .raw_as("text/plain", body)
            .send()
            .await;
        assert!(
            legacy_error(plain, 400).contains("Content-Type: application/json"),
            "{path}"
        );
    }
    let undeclared = app
        .call(reqwest::Method::POST, "/messages")
        .token(&app.key)
        .raw_as("", r#"{"contact": {"phone": "+15550100"}, "text": "hi"}"#)
        .send()
        .await;
    assert_eq!(
        undeclared.status, 202,
        "no Content-Type reads as JSON, as on every route"
    );
    let twice = app
        .call(reqwest::Method::POST, "/messages")
        .token(&app.key)
        .raw(r#"{"contact_id": 1, "text": "hi", "text": "again"}"#)
        .send()
        .await;
    assert!(legacy_error(twice, 422).contains("text"));
    for path in ["/messages", "/chat"] {
        let wrong_method = app
            .call(reqwest::Method::GET, path)
            .token(&app.key)
            .send()
            .await;
        assert!(legacy_error(wrong_method, 405).contains("method"), "{path}");
    }
    assert!(legacy_error(post_message(&app, json!({"contact_id": 1})).await, 422).contains("text"));
    assert!(legacy_error(
        post_message(&app, json!({"contact_id": 999_999, "text": "x"})).await,
        404
    )
    .contains("contact_id"));
    assert!(legacy_error(
        post_message(
            &app,
            json!({"contact": {"phone": "+15550100"}, "channel": "fax", "text": "x"})
        )
        .await,
        422
    )
    .contains("channel"));
    legacy_error(post_message(&app, json!({"text": "x"})).await, 422);
    legacy_error(
        post_message(&app, json!({"contact": {"name": "Nobody"}, "text": "x"})).await,
        422,
    );
    legacy_error(
        post_message(
            &app,
            json!({"contact": {"username": "ann"}, "channel": "sms", "text": "x"}),
        )
        .await,
        422,
    );
    legacy_error(
        post_message(&app, json!({"contact_id": 1, "text": "x", "extra": 1})).await,
        422,
    );
    legacy_error(
        post_message(
            &app,
            json!({"contact_id": 1, "text": "x", "message_id": ""}),
        )
        .await,
        422,
    );
    let anonymous = app
        .call(reqwest::Method::POST, "/messages")
        .json(json!({"contact_id": 1, "text": "x"}))
        .send()
        .await;
    legacy_error(anonymous, 401);
    let no_inbox = app.member_token("member", &["contacts"]).await;
    legacy_error(
        app.post_as(
            &no_inbox,
            "/messages",
            json!({"contact_id": 1, "text": "x"}),
        )
        .await,
        403,
    );
}

#[tokio::test]
async fn a_repeated_message_id_answers_the_same_ids_and_stores_nothing_new() {
    let app = quiet_app().await;
    let body = json!({"message_id": "m-1", "contact": {"phone": "+15550100"}, "text": "hi"});
    let first = post_message(&app, body.clone()).await;
    let again = post_message(&app, body).await;
    assert_eq!(again.status, 202);
    assert_eq!(ids(&again), ids(&first));
    let conv = ids(&first).0;
    let c = app.get(&format!("/conversations/{conv}")).await.ok();
    assert_eq!(c["message_count"], 1);
    let messages = listed(app.get(&format!("/conversations/{conv}/messages")).await);
    assert_eq!(messages[0]["external_id"], "m-1");

    let other = json!({"message_id": "m-1", "contact": {"phone": "+15550100"}, "text": "changed"});
    legacy_error(post_message(&app, other).await, 409);
}

#[tokio::test]
async fn an_idempotency_key_repeat_matches_the_body_in_any_key_order() {
    let app = spawn_app().await;
    let send = |raw: &'static str, key: &'static str| {
        app.call(reqwest::Method::POST, "/messages")
            .token(&app.key)
            .header("Idempotency-Key", key)
            .raw(raw)
            .send()
    };
    let first = send(
        r#"{"contact": {"email": "a@example.com"}, "text": "hi"}"#,
        "k1",
    )
    .await;
    assert_eq!(first.status, 202);
    let reordered = send(
        r#"{"text": "hi", "contact": {"email": "a@example.com"}}"#,
        "k1",
    )
    .await;
    assert_eq!(reordered.status, 202);
    assert_eq!(ids(&reordered), ids(&first));
    legacy_error(
        send(
            r#"{"text": "bye", "contact": {"email": "a@example.com"}}"#,
            "k1",
        )
        .await,
        409,
    );
    let fresh = send(
        r#"{"contact": {"email": "a@example.com"}, "text": "hi"}"#,
        "k2",
    )
    .await;
    assert_ne!(
        ids(&fresh).1,
        ids(&first).1,
        "another key is another message"
    );
}

#[tokio::test]
async fn an_idempotency_key_with_spaces_is_400_as_on_every_other_post() {
    let app = spawn_app().await;
    let send = |key: &'static str| {
        app.call(reqwest::Method::POST, "/messages")
            .token(&app.key)
            .header("Idempotency-Key", key)
            .raw(r#"{"contact": {"email": "a@example.com"}, "text": "hi"}"#)
            .send()
    };
    let spaced = send("two words").await;
    assert!(legacy_error(spaced, 400).contains("Idempotency-Key"));
    // The same key is refused by the other routes' check too.
    app.call(reqwest::Method::POST, "/tags")
        .token(&app.key)
        .header("Idempotency-Key", "two words")
        .json(json!({"name": "vip"}))
        .send()
        .await
        .expect_error(400, "invalid_request");
    assert_eq!(send("two-words").await.status, 202);
}

#[tokio::test]
async fn legacy_routes_do_not_count_against_the_rate_limit() {
    let app = spawn_app_with(|s| s.rate_limit_per_minute = 2).await;
    for i in 0..5 {
        let r = post_message(
            &app,
            json!({"contact": {"phone": "+15550100"}, "text": format!("m{i}")}),
        )
        .await;
        assert_eq!(r.status, 202);
        assert!(r.header("ratelimit-limit").is_none());
    }
    app.get("/tags").await.expect(200);
    app.get("/tags").await.expect(200);
    app.get("/tags").await.expect_error(429, "rate_limited");
}

#[tokio::test]
async fn a_repeat_after_kill_9_still_answers_the_same_conversation() {
    let dir = tempfile::tempdir().unwrap();
    let mut server = launch(dir.path(), &[], &[]).await;
    let key = server.key.clone().unwrap();
    let client = reqwest::Client::new();
    let body = json!({"message_id": "crash-1", "contact": {"phone": "+15550100"}, "text": "hi"});
    let send = |server: &Server| {
        client
            .post(server.url("/messages"))
            .bearer_auth(&key)
            .json(&body)
            .send()
    };
    let first: Value = send(&server).await.unwrap().json().await.unwrap();
    server.kill_9().await;
    crate::store_safety::assert_store_checks(dir.path());

    let server = launch(dir.path(), &[], &[]).await;
    let again = send(&server).await.unwrap();
    assert_eq!(again.status(), 202);
    let again: Value = again.json().await.unwrap();
    assert_eq!(again["conversationId"], first["conversationId"]);
    assert_eq!(again["messageId"], first["messageId"]);
}

#[tokio::test]
async fn an_inbound_message_announces_the_contact_the_conversation_and_the_message() {
    use crate::receiver::TestReceiver;
    use crate::webhooks::{new_endpoint, spawn_webhook_app};

    let app = spawn_webhook_app().await;
    let rx = TestReceiver::start().await;
    new_endpoint(
        &app,
        json!({"url": rx.url, "events": ["contact.created", "conversation.*", "message.received"]}),
    )
    .await;
    let first = post_message(
        &app,
        json!({"contact": {"phone": "+15550100"}, "text": "secret"}),
    )
    .await;
    let got = rx.wait_for(3).await;
    let mut types: Vec<&str> = got.iter().map(|r| r.event_type()).collect();
    types.sort();
    assert_eq!(
        types,
        [
            "contact.created",
            "conversation.created",
            "message.received"
        ]
    );
    let received = got
        .iter()
        .find(|r| r.event_type() == "message.received")
        .unwrap()
        .json();
    assert_eq!(received["actor"]["type"], "customer");
    assert_eq!(received["actor"]["id"], ids(&first).2.to_string());
    assert!(received["data"].get("text").is_none(), "text is content");
    assert_eq!(received["data"]["channel"], "api");
    assert_eq!(received["data"]["direction"], "inbound");
}
