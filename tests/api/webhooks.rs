use std::time::Duration;

use serde_json::json;
use switchboard_actors::events::signature;

use crate::helpers::*;
use crate::receiver::*;

/// The app with webhooks allowed to reach this machine, a fast tick and a short ladder.
pub async fn spawn_webhook_app() -> TestApp {
    spawn_app_with(|s| {
        s.webhooks.allow_private = true;
        s.webhooks.tick = Duration::from_millis(20);
        s.webhooks.timeout = Duration::from_millis(500);
        s.webhooks.retry_delays = vec![Duration::from_millis(50); 6];
    })
    .await
}

#[tokio::test]
async fn a_tag_created_reaches_a_subscribed_receiver_signed_and_with_every_header() {
    let app = spawn_webhook_app().await;
    let rx = TestReceiver::start().await;
    let created = app
        .post(
            "/webhooks",
            &app.key,
            json!({"url": rx.url, "events": ["tag.*"]}),
        )
        .await
        .expect(201);
    let secret = created.body["secret"].as_str().unwrap().to_string();
    assert!(created.body["id"].as_str().unwrap().starts_with("we_"));
    app.post("/tags", &app.key, json!({"name": "VIP"}))
        .await
        .expect(201);

    let got = rx.wait_for(1).await;
    let r = &got[0];
    assert_eq!(r.header("content-type"), "application/json");
    assert_eq!(r.header("user-agent"), "Service-Webhooks/2.0");
    assert_eq!(r.header("x-service-event-type"), "tag.created");
    assert_eq!(r.header("x-service-delivery-attempt"), "1");
    let event = r.json();
    assert_eq!(
        r.header("x-service-event-id"),
        event["id"].as_str().unwrap()
    );
    assert!(event["id"].as_str().unwrap().starts_with("evt_"));
    assert_eq!(event["object"], "event");
    assert_eq!(event["workspace_id"], app.workspace_id.as_str());
    assert_eq!(event["actor"]["type"], "api");
    assert_eq!(event["resource"]["type"], "tag");
    assert!(event["source"]["connection_id"]
        .as_str()
        .unwrap()
        .starts_with("api_key:"));
    assert_eq!(event["data"]["name"], "VIP");
    let now = chrono::Utc::now().timestamp();
    assert!(signature::verify(
        r.header("x-service-signature"),
        &r.body,
        &secret,
        now,
        300
    ));
}

#[tokio::test]
async fn a_failing_receiver_is_retried_until_it_answers_2xx() {
    let app = spawn_webhook_app().await;
    let rx = TestReceiver::start().await;
    rx.respond_with(500);
    app.post(
        "/webhooks",
        &app.key,
        json!({"url": rx.url, "events": ["*"]}),
    )
    .await
    .expect(201);
    app.post("/tags", &app.key, json!({"name": "retry"}))
        .await
        .expect(201);
    rx.wait_for(2).await;
    rx.respond_with(200);
    let got = rx.wait_for(3).await;
    let attempts: Vec<&str> = got
        .iter()
        .map(|r| r.header("x-service-delivery-attempt"))
        .collect();
    assert_eq!(&attempts[..3], ["1", "2", "3"]);
    assert!(
        got.iter().all(|r| r.body == got[0].body),
        "the same body every time"
    );
}
