//! Credits: one per outbound message sent (failed ones are free), read by owners and
//! admins, the allowance set by the operator (route and CLI), thresholds announced once
//! per period, and a new period each calendar month.

use std::time::Duration;

use chrono::{TimeZone, Utc};
use serde_json::{json, Value};
use switchboard_actors::clock::ManualClock;

use crate::fixtures::*;
use crate::helpers::*;
use crate::receiver::*;
use crate::sending::fast_relays;
use crate::webhooks::{fast_webhooks, hook, spawn_webhook_app};

async fn credits(app: &TestApp) -> Value {
    app.get("/credits").await.ok()
}

/// A conversation on `channel` with a new contact, Ann; its id.
async fn conversation(app: &TestApp, channel: &str) -> u64 {
    conversation_with(app, json!({"first_name": "Ann"}), channel).await
}

/// A team reply "hello" on conversation `c`; the message.
async fn reply(app: &TestApp, c: u64) -> Value {
    team_reply(app, c, "hello").await
}

#[tokio::test]
async fn a_sent_message_uses_a_credit_and_a_failed_one_does_not() {
    let app = spawn_app_with(fast_relays).await;
    let start = credits(&app).await;
    assert_eq!(
        start,
        json!({
            "object": "credits",
            "allowance": 1000,
            "used": 0,
            "remaining": 1000,
            "period_start": Utc::now().format("%Y-%m-01T00:00:00.000Z").to_string(),
        })
    );
    let on_api = conversation(&app, "api").await;
    reply(&app, on_api).await;
    reply(&app, on_api).await;
    let on_sms = conversation(&app, "sms").await;
    assert_eq!(reply(&app, on_sms).await["status"], "failed");
    let now = credits(&app).await;
    assert_eq!(
        (now["used"].clone(), now["remaining"].clone()),
        (json!(2), json!(998))
    );

    let relay = TestReceiver::start().await;
    relay.respond_with(500);
    app.post(
        "/channels",
        json!({"type": "chan_b", "relay_url": relay.url}),
    )
    .await
    .expect(201);
    let on_relay = conversation(&app, "chan_b").await;
    reply(&app, on_relay).await;
    relay.wait_for(3).await;
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert_eq!(
        credits(&app).await["used"],
        2,
        "a message queued for a relay is free until it is sent, and free if it fails"
    );
    relay.respond_with(200);
    reply(&app, on_relay).await;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while credits(&app).await["used"] != 3 {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the relayed message was never counted"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn thresholds_are_announced_once_each_as_usage_crosses_them() {
    let app = spawn_webhook_app().await;
    let hooks = TestReceiver::start().await;
    hook(&app, &hooks.url, &["credits.threshold_reached"]).await;
    let set = set_allowance(&app, 2).await;
    assert_eq!(set["object"], "credits");
    assert_eq!(set["allowance"], 2);
    let c = conversation(&app, "api").await;
    reply(&app, c).await;
    hooks.stays_at(0, Duration::from_millis(100)).await;
    reply(&app, c).await;
    let got = hooks.wait_for(2).await;
    let mut percents: Vec<u64> = got
        .iter()
        .map(|r| r.json()["data"]["percent"].as_u64().unwrap())
        .collect();
    percents.sort();
    assert_eq!(
        percents,
        [80, 100],
        "one event per threshold crossed at once"
    );
    reply(&app, c).await;
    let got = hooks.wait_for(3).await;
    assert_eq!(got[2].json()["data"]["percent"], 120);
    assert_eq!(got[2].json()["data"]["remaining"], -1);
    // The credits record as GET answers it, with the threshold crossed.
    let mut record = got[2].json()["data"].clone();
    record.as_object_mut().unwrap().remove("percent");
    assert_eq!(record, credits(&app).await);
    reply(&app, c).await;
    hooks.stays_at(3, Duration::from_millis(200)).await;
    assert_eq!(
        credits(&app).await["remaining"],
        -2,
        "remaining may go below zero"
    );

    let raised = set_allowance(&app, 100).await;
    assert_eq!(raised["remaining"], 96);
    for _ in 0..76 {
        reply(&app, c).await;
    }
    let got = hooks.wait_for(4).await;
    assert_eq!(
        got[3].json()["data"]["percent"],
        80,
        "a new allowance re-arms what usage is no longer past"
    );
}

#[tokio::test]
async fn a_new_month_starts_a_new_period() {
    let clock = ManualClock::new(Utc.with_ymd_and_hms(2026, 1, 31, 23, 0, 0).unwrap());
    let dir = std::sync::Arc::new(tempfile::tempdir().unwrap());
    let app = spawn_in(dir, Some(clock.clone()), fast_webhooks).await;
    let c = conversation(&app, "api").await;
    reply(&app, c).await;
    let january = credits(&app).await;
    assert_eq!(january["used"], 1);
    assert_eq!(january["period_start"], "2026-01-01T00:00:00.000Z");
    clock.advance(Duration::from_secs(2 * 3600));
    let february = credits(&app).await;
    assert_eq!(february["used"], 0);
    assert_eq!(february["period_start"], "2026-02-01T00:00:00.000Z");
    reply(&app, c).await;
    assert_eq!(credits(&app).await["used"], 1);
}

#[tokio::test]
async fn only_owners_admins_and_api_keys_read_credits() {
    let app = spawn_app().await;
    let member = app
        .member_token("member", &["campaigns", "inbox", "integrations"])
        .await;
    forbidden(app.get_as(&member, "/credits").await);
    let admin = app.member_token("admin", &[]).await;
    app.get_as(&admin, "/credits").await.expect(200);
}

#[tokio::test]
async fn the_operator_route_checks_its_input_and_the_cli_sets_the_allowance() {
    let app = spawn_app().await;
    let path = format!("/admin/workspaces/{}/credits", app.workspace_id);
    app.admin_post(&path, json!({"allowance": -1}))
        .await
        .expect(422);
    app.admin_post(&path, json!({"allowance": 5, "bonus": 1}))
        .await
        .expect(422);
    // An allowance past a trillion would not fit the remaining count.
    for huge in [json!(1_000_000_000_001u64), json!(u64::MAX)] {
        invalid(
            app.admin_post(&path, json!({ "allowance": huge })).await,
            "allowance",
        );
    }
    let most = app
        .admin_post(&path, json!({"allowance": 1_000_000_000_000u64}))
        .await
        .ok();
    assert_eq!(most["remaining"], 1_000_000_000_000u64);
    app.admin_post(
        "/admin/workspaces/ws_nothere/credits",
        json!({"allowance": 5}),
    )
    .await
    .expect(404);

    let printed = cli_json(
        &app,
        &format!(
            "set-credits --workspace {} --allowance 250",
            app.workspace_id
        ),
    )
    .await;
    assert_eq!(printed["allowance"], 250);
    assert_eq!(credits(&app).await["allowance"], 250);
}
