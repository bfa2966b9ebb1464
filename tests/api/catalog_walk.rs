//! The whole catalog from real operations: one workspace does, through the public API, the
//! operation behind each of the 58 event types (the README's table "Where each event
//! comes from" lists them), and a real receiver gets every type, signed with the
//! endpoint's secret. The operator trigger is not used.

use std::collections::BTreeSet;
use std::time::Duration;

use serde_json::{json, Value};
use switchboard_actors::events::{catalog, signature};

use crate::fixtures::*;
use crate::helpers::*;
use crate::receiver::TestReceiver;
use crate::sending::fast_relays;
use crate::webhooks::new_endpoint;

/// A chat-completions server that fails turns whose last message says "explode" and
/// answers the others.
async fn model() -> String {
    use axum::routing::post;
    let app = axum::Router::new().route(
        "/v1/chat/completions",
        post(|axum::Json(req): axum::Json<Value>| async move {
            let last = req["messages"]
                .as_array()
                .and_then(|m| m.last())
                .map(|m| m["content"].to_string())
                .unwrap_or_default();
            if last.contains("explode") {
                (
                    axum::http::StatusCode::INTERNAL_SERVER_ERROR,
                    axum::Json(json!({"error": "down"})),
                )
            } else {
                (
                    axum::http::StatusCode::OK,
                    axum::Json(
                        json!({"choices": [{"message": {"role": "assistant", "content": "Happy to help."}}]}),
                    ),
                )
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await });
    url
}

async fn created(app: &TestApp, path: &str, body: Value) -> Value {
    app.post(path, body).await.created()
}

/// Tags `contact` with `tag`, then makes `campaign` (a name, text and channel) with that
/// tag as its audience and sends it.
async fn send_to_tag(app: &TestApp, contact: &Value, tag: &str, mut campaign: Value) {
    app.post(
        &format!("/contacts/{}/tags", id(contact)),
        json!({"tags": [tag]}),
    )
    .await
    .ok();
    campaign["audience"] = json!({"tags": [id(&tag_named(app, tag).await)]});
    let campaign = created(app, "/campaigns", campaign).await;
    app.post(&format!("/campaigns/{}/send", id(&campaign)), json!({}))
        .await
        .ok();
}

fn soon(seconds: i64) -> String {
    (chrono::Utc::now() + chrono::Duration::seconds(seconds)).to_rfc3339()
}

/// Waits until the receiver holds at least one event of `ty`.
async fn received(rx: &TestReceiver, ty: &str) {
    rx.wait_until(ty, |all| all.iter().any(|r| r.event_type() == ty))
        .await;
}

#[tokio::test]
async fn every_catalog_type_is_emitted_by_a_real_operation_and_arrives_signed() {
    let model = model().await;
    let app = spawn_app_with(move |s| {
        fast_relays(s);
        s.ai.url = Some(model);
        s.ai.timeout = Duration::from_secs(10);
    })
    .await;
    let rx = TestReceiver::start().await;
    let (_, secret) = new_endpoint(
        &app,
        json!({"url": rx.url, "events": ["*", "message.received", "message.sent"],
               "include_content": true, "include_contact_details": true}),
    )
    .await;
    let owner = listed(app.get("/users").await)[0]["id"].clone();

    // Tags and contacts.
    let tag = created(&app, "/tags", json!({"name": "walk"})).await;
    app.patch(&format!("/tags/{}", id(&tag)), json!({"name": "walked"}))
        .await
        .ok();
    let ann = created(
        &app,
        "/contacts",
        json!({"first_name": "Ann", "phone": "+15550100"}),
    )
    .await;
    let at = |c: &Value, rest: &str| format!("/contacts/{}{rest}", id(c));
    app.patch(&at(&ann, ""), json!({"last_name": "Lee"}))
        .await
        .ok();
    app.post(&at(&ann, "/tags"), json!({"tags": ["vip"]}))
        .await
        .ok();
    app.call(reqwest::Method::DELETE, &at(&ann, "/tags"))
        .token(&app.key)
        .json(json!({"tags": ["vip"]}))
        .send()
        .await
        .ok();
    let funnel = app.new_funnel("Sales", &["New", "Won"]).await;
    let stage = funnel["stages"][0]["id"].clone();
    app.put(&at(&ann, "/stage"), json!({"stage_id": stage}))
        .await
        .ok();
    app.put(&at(&ann, "/assignee"), json!({"user_id": owner}))
        .await
        .ok();
    created(&app, &at(&ann, "/notes"), json!({"body": "likes tea"})).await;
    app.put(&at(&ann, "/dnc"), json!({"do_not_contact": true}))
        .await
        .ok();
    let twin = created(&app, "/contacts", json!({"first_name": "Annie"})).await;
    app.post(
        "/contacts/merge",
        json!({"primary_contact_id": id(&ann), "secondary_contact_id": id(&twin)}),
    )
    .await
    .ok();
    let gone = created(&app, "/contacts", json!({"first_name": "Gone"})).await;
    app.delete(&at(&gone, "")).await.ok();
    app.delete(&format!("/tags/{}", id(&tag))).await.ok();

    // Conversations, the team and the AI.
    app.patch(
        "/ai-settings",
        json!({"followup_after": "1s", "appointment_reminders": ["1h"]}),
    )
    .await
    .ok();
    let bea = created(
        &app,
        "/contacts",
        json!({"first_name": "Bea", "phone": "+15550111"}),
    )
    .await;
    let conv = created(
        &app,
        "/conversations",
        json!({"contact_id": id(&bea), "channel": "api", "text": "Hello from the team"}),
    )
    .await;
    let c = |rest: &str| format!("/conversations/{}{rest}", id(&conv));
    created(&app, &c("/comments"), json!({"body": "VIP"})).await;
    app.put(&c("/assignee"), json!({"user_id": owner}))
        .await
        .ok();
    app.post(&c("/ai/pause"), json!({"reason": "api"}))
        .await
        .ok();
    app.post(&c("/ai/resume"), json!({})).await.ok();
    app.post(&c("/close"), json!({"closing_note_text": "done"}))
        .await
        .ok();
    app.post(&c("/reopen"), json!({})).await.ok();
    // A customer writes: received, answered by the model, a lead captured from the text,
    // and a follow-up a second later.
    let chat = |text: &str| json!({"message": text, "contact": {"phone": "+15550122"}});
    let answered = app
        .post("/chat", chat("Hi, my email is cy@example.com"))
        .await
        .ok();
    let cy_conv = answered["conversationId"].clone();
    received(&rx, "conversation.followup_sent").await;
    let ai_message = listed(app.get(&format!("/conversations/{cy_conv}/messages")).await)
        .into_iter()
        .find(|m| m["sender_type"] == "ai")
        .expect("an AI reply");
    created(
        &app,
        &format!(
            "/conversations/{cy_conv}/messages/{}/feedback",
            id(&ai_message)
        ),
        json!({"rating": "up"}),
    )
    .await;
    app.post("/chat", chat("please explode")).await.expect(502);
    app.post("/chat", chat("I want an agent")).await.expect(200);
    received(&rx, "handover.requested").await;
    let handover = listed(app.get("/handovers").await)[0].clone();
    app.post(&format!("/handovers/{}/resolve", id(&handover)), json!({}))
        .await
        .ok();

    // Channels: a relay that refuses, then recovers.
    let relay = TestReceiver::start().await;
    relay.respond_with(401);
    let channel = created(
        &app,
        "/channels",
        json!({"type": "chan_c", "relay_url": relay.url}),
    )
    .await;
    let dee = created(
        &app,
        "/contacts",
        json!({"first_name": "Dee", "chan_c_username": "dee_c"}),
    )
    .await;
    let on_relay = id(&new_conversation(&app, id(&dee), "chan_c").await);
    team_reply(&app, on_relay, "one").await;
    received(&rx, "channel.disconnected").await;
    received(&rx, "message.send_failed").await;
    relay.respond_with(200);
    team_reply(&app, on_relay, "two").await;
    received(&rx, "channel.reconnected").await;

    // Campaigns: one on the api channel that Bea answers, one whose relay fails.
    let news = json!({"name": "News", "text": "Hello", "channel": "api"});
    send_to_tag(&app, &bea, "news", news).await;
    received(&rx, "campaign.completed").await;
    app.post(
        "/messages",
        json!({"contact_id": id(&bea), "channel": "api", "text": "Thanks!"}),
    )
    .await
    .expect(202);
    received(&rx, "campaign_recipient.replied").await;
    relay.respond_with(500);
    let failing = json!({"name": "Relay", "text": "Hi", "channel": "chan_c"});
    send_to_tag(&app, &dee, "relay", failing).await;
    received(&rx, "campaign_recipient.failed").await;
    app.delete(&format!("/channels/{}", channel["id"]))
        .await
        .ok();

    // Bookings and their reminder (the lead time is 1 h; the booking starts in 1 h 1 s).
    let booking = created(
        &app,
        "/bookings",
        json!({"contact_id": id(&bea), "service": "Visit", "starts_at": soon(3601), "duration_minutes": 30}),
    )
    .await;
    let b = |rest: &str| format!("/bookings/{}{rest}", id(&booking));
    app.patch(&b(""), json!({"location": "Main St"})).await.ok();
    received(&rx, "appointment_reminder.sent").await;
    app.patch(&b(""), json!({"starts_at": soon(7200)}))
        .await
        .ok();
    app.put(&b("/status"), json!({"status": "confirmed"}))
        .await
        .ok();
    app.post(
        &b("/documents"),
        json!({"documents": [{"url": "https://files.example/id.pdf"}]}),
    )
    .await
    .ok();
    app.post(&b("/cancel"), json!({})).await.ok();

    // Reminders.
    let reminder = created(
        &app,
        "/reminders",
        json!({"title": "Call Bea", "due_at": soon(1), "assignee_user_ids": [owner]}),
    )
    .await;
    received(&rx, "reminder.fired").await;
    app.post(&format!("/reminders/{}/close", id(&reminder)), json!({}))
        .await
        .ok();

    // Orders and products.
    let order = created(
        &app,
        "/orders",
        json!({"contact_id": id(&bea), "items": [{"name": "Tea", "quantity": 1, "unit_price": 5}]}),
    )
    .await;
    let o = |rest: &str| format!("/orders/{}{rest}", id(&order));
    app.patch(&o(""), json!({"notes": "gift wrap"})).await.ok();
    app.put(&o("/status"), json!({"status": "shipped"}))
        .await
        .ok();
    app.patch(&o(""), json!({"payment_status": "paid"}))
        .await
        .ok();
    created(
        &app,
        &o("/payment-proofs"),
        json!({"url": "https://files.example/receipt.pdf"}),
    )
    .await;
    app.put(&o("/status"), json!({"status": "cancelled"}))
        .await
        .ok();
    let product = created(&app, "/products", json!({"name": "Teapot"})).await;
    app.patch(
        &format!("/products/{}", id(&product)),
        json!({"name": "Big teapot"}),
    )
    .await
    .ok();
    app.delete(&format!("/products/{}", id(&product)))
        .await
        .ok();

    // Calls from the telephony integration, one per outcome.
    for outcome in ["completed", "missed", "voicemail"] {
        created(
            &app,
            "/calls",
            json!({"direction": "inbound", "from_number": "+15550111", "to_number": "+15550999",
                   "outcome": outcome, "started_at": soon(-60), "duration_seconds": 30,
                   "summary": "asked about prices", "transcript_text": "hello"}),
        )
        .await;
    }

    // Forms.
    let form = created(
        &app,
        "/forms",
        json!({"name": "Contact us", "fields": [{"key": "topic", "label": "Topic", "type": "text", "required": true}]}),
    )
    .await;
    created(
        &app,
        &format!("/forms/{}/submissions", id(&form)),
        json!({"contact": {"name": "Eve Moss", "email": "eve@example.com"}, "values": {"topic": "prices"}}),
    )
    .await;

    // Credits: an allowance just above what was used; the next message crosses 100%.
    let used = app.get("/credits").await.ok()["used"].as_u64().unwrap();
    set_allowance(&app, used + 1).await;
    created(&app, &c("/messages"), json!({"text": "one more"})).await;

    let every: BTreeSet<&str> = catalog::CATALOG.iter().map(|t| t.name).collect();
    let all = rx
        .wait_until("every catalog type", |got| {
            let seen: BTreeSet<&str> = got.iter().map(|r| r.event_type()).collect();
            every.iter().all(|t| seen.contains(t))
        })
        .await;
    let now = chrono::Utc::now().timestamp();
    for r in &all {
        assert!(
            signature::verify(r.header("x-service-signature"), &r.body, &secret, now, 300),
            "{} is signed with the endpoint's secret",
            r.event_type()
        );
    }
    let seen: BTreeSet<&str> = all.iter().map(|r| r.event_type()).collect();
    assert_eq!(seen, every);

    // The first real event of each type, as the test call's samples are made from.
    let mut real = serde_json::Map::new();
    for r in &all {
        let event = r.json();
        real.entry(r.event_type().to_string()).or_insert_with(|| {
            let mut sample = json!({"resource": event["resource"], "data": event["data"]});
            if !event["changes"].is_null() {
                sample["changes"] = event["changes"].clone();
            }
            sample
        });
    }
    if let Ok(path) = std::env::var("SWITCHBOARD_SAMPLES_OUT") {
        let text = serde_json::to_string_pretty(&Value::Object(real.clone())).unwrap();
        std::fs::write(path, text + "\n").unwrap();
    }

    // The test call's sample of each type has the real event's shape: the same resource
    // type and the same data fields.
    let tester = TestReceiver::start().await;
    let (endpoint, _) = new_endpoint(
        &app,
        json!({"url": tester.url, "events": ["*"],
               "include_content": true, "include_contact_details": true}),
    )
    .await;
    for (n, t) in every.iter().enumerate() {
        let sent = app
            .post(&format!("/webhooks/{endpoint}/test"), json!({"event": t}))
            .await
            .ok();
        assert_eq!(sent["delivered"], true, "{t}: {sent}");
        let sample = tester.wait_for(n + 1).await[n].json();
        assert_eq!(sample["type"], *t);
        let keys = |v: &Value| -> BTreeSet<String> {
            v.as_object()
                .map(|o| o.keys().cloned().collect())
                .unwrap_or_default()
        };
        assert_eq!(
            keys(&sample["data"]),
            keys(&real[*t]["data"]),
            "{t}: the sample's fields are the real event's (make samples.json again)"
        );
        assert_eq!(
            sample["resource"]["type"], real[*t]["resource"]["type"],
            "{t}"
        );
        assert_eq!(
            sample["changes"].is_null(),
            real[*t]["changes"].is_null(),
            "{t}: an update-style sample carries changes as the real event does"
        );
    }

    // Everything these operations stored reads back: the offline check loads every
    // workspace and decodes every record.
    let mut app = app;
    app.stop().await;
    crate::store_safety::assert_store_checks_once_released(app.dir.path()).await;
}
