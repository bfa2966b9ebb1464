//! Delivery records are kept 30 days, then pruned.

use std::sync::Arc;
use std::time::Duration;

use chrono::Utc;
use serde_json::json;
use switchboard_actors::clock::ManualClock;

use crate::helpers::*;
use crate::receiver::TestReceiver;

#[tokio::test]
async fn delivery_records_are_pruned_after_30_days() {
    let clock = ManualClock::new(Utc::now());
    let dir = Arc::new(tempfile::tempdir().unwrap());
    let app = spawn_in(dir, Some(clock.clone()), |s| {
        s.webhooks.allow_private = true;
        s.webhooks.tick = Duration::from_millis(20);
    })
    .await;
    let rx = TestReceiver::start().await;
    let endpoint = app
        .post(
            "/webhooks",
            json!({"url": rx.url, "events": ["tag.created"]}),
        )
        .await
        .expect(201);
    let id = endpoint.body["id"].as_str().unwrap().to_string();
    app.post("/tags", json!({"name": "kept a while"}))
        .await
        .expect(201);
    rx.wait_for(1).await;
    assert_eq!(deliveries(&app, &id).await, 1);

    clock.advance(Duration::from_secs(29 * 24 * 3600));
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(deliveries(&app, &id).await, 1, "kept for 30 days");

    clock.advance(Duration::from_secs(2 * 24 * 3600));
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while deliveries(&app, &id).await > 0 {
        assert!(
            tokio::time::Instant::now() < deadline,
            "pruned after 30 days"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

async fn deliveries(app: &TestApp, endpoint: &str) -> usize {
    app.get(&format!("/webhooks/{endpoint}/deliveries"))
        .await
        .ok()["data"]
        .as_array()
        .unwrap()
        .len()
}
