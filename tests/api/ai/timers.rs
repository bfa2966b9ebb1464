//! Follow-ups and auto-close on the injectable clock: armed, fired once, announced, and
//! kept across kill -9.

use std::time::Duration;

use serde_json::{json, Value};

use super::{chat, messages_when};
use crate::helpers::*;
use switchboard_actors::clock::ManualClock;

const MINUTE: Duration = Duration::from_secs(60);

/// Sets `settings` on the AI, then a customer (by phone) says `message` through /chat;
/// the conversation it landed in.
async fn customer_says(app: &TestApp, settings: Value, message: &str) -> u64 {
    app.patch("/ai-settings", settings).await.expect(200);
    let r = chat(
        app,
        json!({"message": message, "contact": {"phone": "+15550100"}}),
    )
    .await;
    r.body["conversationId"].as_u64().unwrap()
}

async fn messages(app: &TestApp, conversation: u64) -> Vec<Value> {
    let mut all = listed(
        app.get(&format!("/conversations/{conversation}/messages"))
            .await,
    );
    all.reverse();
    all
}

#[tokio::test]
async fn a_quiet_customer_gets_one_follow_up_even_from_a_passivated_workspace() {
    let (app, clock) = clocked(|s| s.actor_idle = Duration::from_millis(50)).await;
    let conversation = customer_says(&app, json!({"followup_after": "30m"}), "hello").await;
    assert_eq!(messages(&app, conversation).await.len(), 2);

    clock.advance(29 * MINUTE);
    tokio::time::sleep(Duration::from_millis(600)).await;
    assert_eq!(
        messages(&app, conversation).await.len(),
        2,
        "not before it is due"
    );

    clock.advance(2 * MINUTE);
    eventually("the follow-up", async || {
        messages(&app, conversation).await.len() == 3
    })
    .await;
    let all = messages(&app, conversation).await;
    assert_eq!(
        all[2]["text"],
        "Are you still there? Let us know if we can help."
    );
    assert_eq!(all[2]["sender_type"], "ai");

    clock.advance(120 * MINUTE);
    tokio::time::sleep(Duration::from_millis(600)).await;
    assert_eq!(messages(&app, conversation).await.len(), 3, "exactly once");
}

#[tokio::test]
async fn a_contact_who_opted_out_gets_no_follow_up() {
    let (app, clock) = clocked(|_| {}).await;
    let conversation = customer_says(&app, json!({"followup_after": "30m"}), "hello").await;
    let c = app
        .get(&format!("/conversations/{conversation}"))
        .await
        .ok();
    app.put(
        &format!("/contacts/{}/dnc", c["contact_id"]),
        json!({"do_not_contact": true}),
    )
    .await
    .expect(200);
    clock.advance(31 * MINUTE);
    tokio::time::sleep(Duration::from_millis(600)).await;
    assert_eq!(messages(&app, conversation).await.len(), 2, "no follow-up");
}

#[tokio::test]
async fn a_team_reply_takes_over_and_no_follow_up_goes_out() {
    let (app, clock) = clocked(|_| {}).await;
    let conversation = customer_says(&app, json!({"followup_after": "30m"}), "hello").await;
    app.post(
        &format!("/conversations/{conversation}/messages"),
        json!({"text": "I am here"}),
    )
    .await
    .expect(201);
    clock.advance(60 * MINUTE);
    tokio::time::sleep(Duration::from_millis(600)).await;
    assert_eq!(messages(&app, conversation).await.len(), 3);
}

#[tokio::test]
async fn a_quiet_conversation_closes_by_itself() {
    let (app, clock) = clocked(|_| {}).await;
    let conversation = customer_says(&app, json!({"auto_close_after": "1h"}), "agent please").await;
    clock.advance(61 * MINUTE);
    let path = format!("/conversations/{conversation}");
    eventually("the auto-close", async || {
        app.get(&path).await.body["status"] == "closed"
    })
    .await;
    let c = app.get(&path).await.ok();
    assert_eq!(c["closed_by"], "auto");
    assert_eq!(c["ai_paused"], false, "the handover pause is lifted");
    let handovers = listed(app.get("/handovers?status=resolved").await);
    assert_eq!(handovers[0]["resolved_by"], "system");
}

#[tokio::test]
async fn armed_timers_follow_the_settings_of_the_moment() {
    let (app, clock) = clocked(|_| {}).await;
    // A follow-up armed for 1h, then turned off: nothing goes out.
    let c = customer_says(&app, json!({"followup_after": "1h"}), "hello").await;
    let before = messages(&app, c).await.len();
    app.patch("/ai-settings", json!({"followup_after": null}))
        .await
        .expect(200);
    clock.advance(61 * MINUTE);
    tokio::time::sleep(Duration::from_millis(600)).await;
    assert_eq!(messages(&app, c).await.len(), before, "no follow-up");

    // An auto-close armed for 1h, lengthened to 3h: open at 1h, closed at 3h.
    let again = customer_says(&app, json!({"auto_close_after": "1h"}), "still there").await;
    assert_eq!(again, c);
    app.patch("/ai-settings", json!({"auto_close_after": "3h"}))
        .await
        .expect(200);
    let path = format!("/conversations/{c}");
    clock.advance(61 * MINUTE);
    tokio::time::sleep(Duration::from_millis(600)).await;
    assert_eq!(app.get(&path).await.ok()["status"], "open");
    clock.advance(120 * MINUTE);
    eventually("the lengthened auto-close", async || {
        app.get(&path).await.body["status"] == "closed"
    })
    .await;

    // Turned off while armed: the conversation stays open.
    let third = customer_says(&app, json!({"auto_close_after": "1h"}), "me again").await;
    assert_eq!(third, c, "reopened");
    app.patch("/ai-settings", json!({"auto_close_after": null}))
        .await
        .expect(200);
    clock.advance(61 * MINUTE);
    tokio::time::sleep(Duration::from_millis(600)).await;
    assert_eq!(app.get(&path).await.ok()["status"], "open");
}

// Worker threads as in the service: handed over side by side, the timers would race.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_overdue_follow_up_goes_out_before_the_later_auto_close() {
    // Both overdue at once, as after a stop: each workspace gets its timers in due
    // order, so the follow-up goes out and the auto-close counts from it.
    let (app, clock) = clocked(|_| {}).await;
    app.patch(
        "/ai-settings",
        json!({"followup_after": "10m", "auto_close_after": "1h"}),
    )
    .await
    .expect(200);
    let mut conversations = Vec::new();
    for i in 0..8 {
        let r = chat(
            &app,
            json!({"message": "hello", "contact": {"phone": format!("+1555010{i}")}}),
        )
        .await;
        conversations.push(r.body["conversationId"].as_u64().unwrap());
    }
    clock.advance(2 * 60 * MINUTE);
    for &c in &conversations {
        let all = messages_when(&app, c, 3).await;
        assert_eq!(all.len(), 3, "the follow-up went out on {c}");
    }
    tokio::time::sleep(Duration::from_millis(600)).await;
    for &c in &conversations {
        let now = app.get(&format!("/conversations/{c}")).await.ok();
        assert_eq!(now["status"], "open", "an hour after the follow-up: {now}");
    }
    clock.advance(61 * MINUTE);
    for &c in &conversations {
        let path = format!("/conversations/{c}");
        eventually("the auto-close after the follow-up", async || {
            app.get(&path).await.body["status"] == "closed"
        })
        .await;
    }
}

#[tokio::test]
async fn a_pending_follow_up_fires_once_after_kill_9() {
    let dir = tempfile::tempdir().unwrap();
    let mut server = launch(dir.path(), &[], &[]).await;
    let key = server.key.clone().unwrap();
    server
        .send(
            reqwest::Method::PATCH,
            &key,
            "/ai-settings",
            json!({"followup_after": "2s"}),
        )
        .await;
    let r = server
        .post_json(
            &key,
            "/chat",
            json!({"message": "hello", "contact": {"phone": "+15550100"}}),
        )
        .await;
    let conversation = r["conversationId"].as_u64().unwrap();
    server.kill_9().await;
    crate::store_safety::assert_store_checks(dir.path());

    let server = launch(dir.path(), &[], &[]).await;
    let path = format!("/conversations/{conversation}/messages");
    let count = async || -> usize {
        let v = server.get_json(&key, &path).await;
        v["data"].as_array().unwrap().len()
    };
    happens_once("the follow-up went out after the restart", 3, count).await;
}

/// An app on the manual clock whose AI follows up after 10 minutes and closes after an
/// hour, announcing both to a receiver.
pub(crate) async fn announcing_follow_ups_and_auto_closes(
) -> (TestApp, ManualClock, crate::receiver::TestReceiver) {
    let (app, clock) = clocked(crate::webhooks::fast_webhooks).await;
    let rx = crate::receiver::TestReceiver::start().await;
    crate::webhooks::new_endpoint(
        &app,
        json!({"url": rx.url, "events": ["conversation.followup_sent", "conversation.closed"]}),
    )
    .await;
    app.patch(
        "/ai-settings",
        json!({"followup_after": "10m", "auto_close_after": "1h"}),
    )
    .await
    .expect(200);
    (app, clock, rx)
}

#[tokio::test]
async fn the_follow_up_and_the_auto_close_are_announced() {
    let (app, clock, rx) = announcing_follow_ups_and_auto_closes().await;
    chat(
        &app,
        json!({"message": "hello", "contact": {"phone": "+15550100"}}),
    )
    .await;
    clock.advance(11 * MINUTE);
    let got = rx.wait_for(1).await;
    let followed = got[0].json();
    assert_eq!(followed["type"], "conversation.followup_sent");
    assert_eq!(followed["actor"]["type"], "system");
    assert!(followed["data"]["message_id"].as_u64().is_some());
    clock.advance(61 * MINUTE);
    let got = rx.wait_for(2).await;
    let closed = got[1].json();
    assert_eq!(closed["type"], "conversation.closed");
    assert_eq!(closed["data"]["closed_by"], "auto");
}
