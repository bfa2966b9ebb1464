//! Campaigns: drafts and their rules, sending to an audience through the relay with
//! do-not-contact contacts skipped and counted, exact stats and credit use, 402 with
//! nothing sent, cancelling, failures and replies, and a scheduled campaign that fires
//! once after kill -9.

use std::time::Duration;

use futures::StreamExt;
use reqwest::Method;
use serde_json::{json, Value};
use switchboard::config::Settings;

use crate::fixtures::*;
use crate::helpers::*;
use crate::receiver::*;
use crate::sending::fast_relays;
use crate::webhooks::hook;

/// Relays on this machine, a fast ladder, and a campaign rate that lets tests finish.
fn campaign_settings(s: &mut Settings) {
    fast_relays(s);
    s.campaign_rate = 5_000;
}

async fn spawn_campaign_app() -> TestApp {
    spawn_app_with(campaign_settings).await
}

async fn new_campaign(app: &TestApp, body: Value) -> Value {
    app.post("/campaigns", body).await.created()
}

async fn campaign(app: &TestApp, id: &Value) -> Value {
    app.get(&format!("/campaigns/{id}")).await.ok()
}

/// Campaign `id` once its status is `status` (fails after 120 s: a 5,000-recipient
/// campaign takes 15-30 s in a debug build while the rest of the suite shares two cores).
async fn campaign_when(app: &TestApp, id: &Value, status: &str) -> Value {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(120);
    loop {
        let c = campaign(app, id).await;
        if c["status"] == status {
            return c;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "never {status}: {c}"
        );
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}

/// Every recipient of campaign `id` with `query`, across pages.
async fn recipients(app: &TestApp, id: &Value, query: &str) -> Vec<Value> {
    let first = format!("/campaigns/{id}/recipients?limit=100{query}");
    let (mut all, mut url) = (Vec::new(), first.clone());
    loop {
        let page = app.get(&url).await.ok();
        all.extend(page["data"].as_array().expect("data").iter().cloned());
        match page["next_cursor"].as_str() {
            Some(cursor) => url = format!("{first}&starting_after={cursor}"),
            None => return all,
        }
    }
}

/// `n` contacts created concurrently with `body`; their ids.
async fn contacts(app: &TestApp, n: usize, body: Value) -> Vec<u64> {
    futures::stream::iter(0..n)
        .map(|i| {
            let mut b = body.clone();
            b["first_name"] = json!(format!("C{i}"));
            b["chan_a_username"] = json!(format!("user_{i}_{}", rand_suffix()));
            async move {
                app.post("/contacts", b).await.created()["id"]
                    .as_u64()
                    .unwrap()
            }
        })
        .buffer_unordered(32)
        .collect()
        .await
}

fn rand_suffix() -> u32 {
    use std::sync::atomic::{AtomicU32, Ordering};
    static NEXT: AtomicU32 = AtomicU32::new(0);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

async fn opt_out(app: &TestApp, contact: u64) {
    app.put(
        &format!("/contacts/{contact}/dnc"),
        json!({"do_not_contact": true}),
    )
    .await
    .expect(200);
}

async fn send(app: &TestApp, id: &Value, body: Value) -> Resp {
    app.post(&format!("/campaigns/{id}/send"), body).await
}

/// Waits (up to `limit`) until the campaign at `path` on `server` is completed; the
/// campaign then.
async fn completed_on(server: &Server, key: &str, path: &str, limit: Duration) -> Value {
    let deadline = tokio::time::Instant::now() + limit;
    loop {
        let now = server.get_json(key, path).await;
        if now["status"] == "completed" {
            return now;
        }
        assert!(tokio::time::Instant::now() < deadline, "{now}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Checks that `server` holds `recipients` conversations and that each holds exactly
/// one message: the campaign reached every recipient once.
async fn each_got_the_campaign_once(server: &Server, key: &str, recipients: usize) {
    let conversations = server.get_json(key, "/conversations?limit=100").await;
    let all = conversations["data"].as_array().unwrap();
    assert_eq!(all.len(), recipients);
    for conv in all {
        let messages = server
            .get_json(key, &format!("/conversations/{}/messages", conv["id"]))
            .await;
        assert_eq!(
            messages["data"].as_array().unwrap().len(),
            1,
            "each recipient got the campaign exactly once"
        );
    }
}

#[tokio::test]
async fn a_draft_changes_until_it_is_sent_and_only_a_draft_is_deleted() {
    let app = spawn_campaign_app().await;
    let c = new_campaign(
        &app,
        json!({"name": "Spring", "text": "20% off", "channel": "api"}),
    )
    .await;
    assert_fields(
        &c,
        "object id name text channel audience status scheduled_at stats error created_at started_at completed_at",
    );
    assert_eq!(c["object"], "campaign");
    assert_eq!(c["status"], "draft");
    assert_eq!(c["audience"], json!({"tags": [], "stage_id": null}));
    assert_eq!(
        c["stats"],
        json!({"recipients": 0, "sent": 0, "failed": 0, "replied": 0, "skipped_do_not_contact": 0})
    );
    let path = format!("/campaigns/{}", c["id"]);
    let changed = app.patch(&path, json!({"name": "Spring sale"})).await.ok();
    assert_eq!(changed["name"], "Spring sale");
    assert_eq!(list_len(&app, "/campaigns").await, 1);

    let other = new_campaign(&app, json!({"name": "Gone", "text": "x", "channel": "sms"})).await;
    let gone = app
        .delete(&format!("/campaigns/{}", other["id"]))
        .await
        .ok();
    assert_eq!(
        gone,
        json!({"object": "campaign", "id": other["id"], "deleted": true})
    );
    not_found(app.get(&format!("/campaigns/{}", other["id"])).await);

    send(&app, &c["id"], json!({})).await.expect(200);
    conflict(app.patch(&path, json!({"name": "late"})).await);
    conflict(app.delete(&path).await);
}

#[tokio::test]
async fn a_campaign_checks_its_fields_audience_and_permission() {
    let app = spawn_campaign_app().await;
    let r = app.post("/campaigns", json!({})).await.expect(422);
    let mut paths = r.paths();
    paths.sort();
    assert_eq!(paths, ["channel", "name", "text"]);
    for (body, path) in [
        (
            json!({"name": "a", "text": "b", "channel": "pigeon"}),
            "channel",
        ),
        (json!({"name": "", "text": "b", "channel": "sms"}), "name"),
        (json!({"name": "a", "text": "", "channel": "sms"}), "text"),
        (
            json!({"name": "a", "text": "b", "channel": "sms", "extra": 1}),
            "extra",
        ),
    ] {
        let r = app.post("/campaigns", body).await.expect(422);
        assert_eq!(r.paths(), [path]);
    }
    let r = app
        .post(
            "/campaigns",
            json!({"name": "a", "text": "b", "channel": "sms", "audience": {"tags": [999999]}}),
        )
        .await
        .expect_error(404, "not_found");
    assert!(r.body["error"]["message"]
        .as_str()
        .unwrap()
        .contains("audience.tags[0]"));
    not_found(
        app.post(
            "/campaigns",
            json!({"name": "a", "text": "b", "channel": "sms", "audience": {"stage_id": 999999}}),
        )
        .await,
    );
    let c = new_campaign(&app, json!({"name": "a", "text": "b", "channel": "api"})).await;
    send(
        &app,
        &c["id"],
        json!({"scheduled_at": "2020-01-01T00:00:00Z"}),
    )
    .await
    .expect(422);
    assert_read_needs(&app, "/campaigns", &["contacts", "inbox"], &["campaigns"]).await;
}

#[tokio::test]
async fn five_thousand_recipients_through_the_relay_with_exact_stats_and_credit_use() {
    let app = spawn_campaign_app().await;
    set_allowance(&app, 10_000).await;
    let relay = TestReceiver::start().await;
    app.post(
        "/channels",
        json!({"type": "chan_a", "relay_url": relay.url}),
    )
    .await
    .expect(201);
    let hooks = TestReceiver::start().await;
    hook(&app, &hooks.url, &["campaign.completed"]).await;
    let members = contacts(&app, 5_000, json!({"tags": ["vip"]})).await;
    contacts(&app, 40, json!({"tags": ["other"]})).await;
    for contact in &members[..150] {
        opt_out(&app, *contact).await;
    }
    let vip = tag_named(&app, "vip").await["id"].clone();
    let c = new_campaign(
        &app,
        json!({"name": "VIP", "text": "Early access", "channel": "chan_a", "audience": {"tags": [vip]}}),
    )
    .await;

    let started = send(&app, &c["id"], json!({})).await.ok();
    assert_eq!(started["status"], "sending");
    assert_eq!(started["stats"]["recipients"], 5_000);
    assert_eq!(started["stats"]["skipped_do_not_contact"], 150);

    let done = campaign_when(&app, &c["id"], "completed").await;
    assert_eq!(
        done["stats"],
        json!({"recipients": 5000, "sent": 4850, "failed": 0, "replied": 0, "skipped_do_not_contact": 150})
    );
    assert!(done["completed_at"].is_string());
    let got = relay.received();
    let mut ids: Vec<String> = got
        .iter()
        .map(|r| r.json()["message_id"].to_string())
        .collect();
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), 4_850, "one message per reachable recipient");
    assert_eq!(got[0].json()["text"], "Early access");
    let credits = app.get("/credits").await.ok();
    assert_eq!(credits["used"], 4_850, "one credit per message sent");

    let all = recipients(&app, &c["id"], "").await;
    let ids: Vec<u64> = all
        .iter()
        .map(|r| r["contact_id"].as_u64().unwrap())
        .collect();
    assert_eq!(ids.len(), 5_000, "every recipient once, across 50 pages");
    assert!(ids.windows(2).all(|w| w[0] > w[1]), "newest contact first");
    let sent = all.iter().filter(|r| r["status"] == "sent").count();
    assert_eq!(sent, 4_850, "each sent recipient shows its record");
    let skipped = recipients(&app, &c["id"], "&status=skipped").await;
    assert_eq!(skipped.len(), 150);
    assert!(skipped.iter().all(|r| r["message_id"].is_null()));
    let one = recipients(&app, &c["id"], &format!("&contact_id={}", members[200])).await;
    assert_eq!(one.len(), 1);
    assert_fields(
        &one[0],
        "object campaign_id contact_id status message_id error updated_at",
    );
    assert_eq!(one[0]["status"], "sent");
    assert!(one[0]["message_id"].is_u64());

    let events = hooks.wait_for(1).await;
    assert_eq!(events[0].json()["data"]["stats"]["sent"], 4850);
    assert!(
        events[0].json()["data"].get("text").is_none(),
        "the campaign text is content, withheld by default"
    );
    hooks.stays_at(1, Duration::from_millis(200)).await;
}

#[tokio::test]
async fn a_campaign_the_credits_do_not_cover_answers_402_and_sends_nothing() {
    let app = spawn_campaign_app().await;
    set_allowance(&app, 2).await;
    let all = contacts(&app, 4, json!({})).await;
    opt_out(&app, all[0]).await;
    opt_out(&app, all[1]).await;
    let c = new_campaign(&app, json!({"name": "a", "text": "b", "channel": "api"})).await;
    // Two reachable recipients fit in two credits.
    let fits = send(&app, &c["id"], json!({})).await.ok();
    assert_eq!(fits["stats"]["skipped_do_not_contact"], 2);
    campaign_when(&app, &c["id"], "completed").await;

    contacts(&app, 1, json!({})).await;
    let c = new_campaign(&app, json!({"name": "c", "text": "d", "channel": "api"})).await;
    let r = send(&app, &c["id"], json!({}))
        .await
        .expect_error(402, "insufficient_credits");
    assert!(r.body["error"]["message"].as_str().unwrap().contains("3"));
    assert_eq!(campaign(&app, &c["id"]).await["status"], "draft");
    assert!(recipients(&app, &c["id"], "").await.is_empty());
    let credits = app.get("/credits").await.ok();
    assert_eq!(credits["used"], 2, "nothing more was sent");
}

/// An allowance of 5 and a campaign to four contacts sending one message a second: it
/// still owes most of its four credits for a while.
async fn a_campaign_still_owing_four_of_five_credits() -> TestApp {
    let app = spawn_app_with(|s| {
        campaign_settings(s);
        s.campaign_rate = 1;
    })
    .await;
    set_allowance(&app, 5).await;
    contacts(&app, 4, json!({})).await;
    let first = new_campaign(&app, json!({"name": "a", "text": "b", "channel": "api"})).await;
    send(&app, &first["id"], json!({})).await.ok();
    app
}

#[tokio::test]
async fn credits_promised_to_a_campaign_still_sending_are_not_offered_again() {
    let app = a_campaign_still_owing_four_of_five_credits().await;
    // One message a second: the first campaign still owes most of its four.
    let second = new_campaign(&app, json!({"name": "c", "text": "d", "channel": "api"})).await;
    let r = send(&app, &second["id"], json!({}))
        .await
        .expect_error(402, "insufficient_credits");
    let message = r.body["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("needs 4 credits and 1 remain"),
        "{message}"
    );
    assert_eq!(campaign(&app, &second["id"]).await["status"], "draft");
}

#[tokio::test]
async fn a_campaign_that_reaches_nobody_needs_no_credits_even_when_promised_ones_run_short() {
    let app = a_campaign_still_owing_four_of_five_credits().await;
    // The allowance is lowered below what the first campaign still owes.
    set_allowance(&app, 1).await;
    let tag = app.post("/tags", json!({"name": "nobody"})).await.created();
    let audience = json!({"tags": [tag["id"]]});
    let empty = new_campaign(
        &app,
        json!({"name": "c", "text": "d", "channel": "api", "audience": audience}),
    )
    .await;
    let sent = send(&app, &empty["id"], json!({})).await.ok();
    assert_eq!(sent["stats"]["recipients"], 0);
    campaign_when(&app, &empty["id"], "completed").await;
}

#[tokio::test]
async fn cancelling_follows_the_states_and_stops_what_is_queued() {
    let app = spawn_app_with(|s| {
        campaign_settings(s);
        s.campaign_rate = 1;
    })
    .await;
    let hooks = TestReceiver::start().await;
    hook(&app, &hooks.url, &["campaign.completed"]).await;
    contacts(&app, 5, json!({})).await;
    let c = new_campaign(&app, json!({"name": "a", "text": "b", "channel": "api"})).await;
    let cancel = format!("/campaigns/{}/cancel", c["id"]);
    conflict(app.post(&cancel, json!({})).await);

    send(&app, &c["id"], json!({})).await.expect(200);
    let cancelled = app.post(&cancel, json!({})).await.ok();
    assert_eq!(cancelled["status"], "cancelled");
    let all = recipients(&app, &c["id"], "").await;
    let statuses: Vec<&str> = all.iter().map(|r| r["status"].as_str().unwrap()).collect();
    assert_eq!(statuses.len(), 5);
    assert!(
        statuses.iter().filter(|s| **s == "cancelled").count() >= 3,
        "{statuses:?}"
    );
    assert!(statuses.iter().all(|s| *s == "cancelled" || *s == "sent"));
    tokio::time::sleep(Duration::from_millis(1_500)).await;
    assert_eq!(
        recipients(&app, &c["id"], "&status=cancelled").await.len(),
        statuses.iter().filter(|s| **s == "cancelled").count(),
        "nothing cancelled is sent later"
    );
    hooks.stays_at(0, Duration::from_millis(100)).await;
    conflict(app.post(&cancel, json!({})).await);
    send(&app, &c["id"], json!({}))
        .await
        .expect_error(409, "conflict");

    let later = new_campaign(&app, json!({"name": "b", "text": "c", "channel": "api"})).await;
    let scheduled = send(
        &app,
        &later["id"],
        json!({"scheduled_at": "2999-01-01T00:00:00Z"}),
    )
    .await
    .ok();
    assert_eq!(scheduled["status"], "scheduled");
    assert_eq!(scheduled["scheduled_at"], "2999-01-01T00:00:00.000Z");
    let off = app
        .post(&format!("/campaigns/{}/cancel", later["id"]), json!({}))
        .await
        .ok();
    assert_eq!(off["status"], "cancelled");
}

#[tokio::test]
async fn failed_sends_and_first_replies_are_counted_and_announced() {
    let app = spawn_campaign_app().await;
    let hooks = TestReceiver::start().await;
    hook(
        &app,
        &hooks.url,
        &["campaign_recipient.*", "campaign.completed"],
    )
    .await;
    let people = contacts(&app, 2, json!({})).await;

    let nowhere = new_campaign(&app, json!({"name": "a", "text": "b", "channel": "sms"})).await;
    send(&app, &nowhere["id"], json!({})).await.expect(200);
    let failed = campaign_when(&app, &nowhere["id"], "completed").await;
    assert_eq!(failed["stats"]["failed"], 2);
    let rs = recipients(&app, &nowhere["id"], "&status=failed").await;
    assert_eq!(rs.len(), 2);
    assert_eq!(rs[0]["error"], "channel_not_connected");

    let c = new_campaign(&app, json!({"name": "c", "text": "d", "channel": "api"})).await;
    send(&app, &c["id"], json!({})).await.expect(200);
    campaign_when(&app, &c["id"], "completed").await;
    for _ in 0..2 {
        app.post(
            "/messages",
            json!({"contact_id": people[0], "channel": "chan_b", "text": "tell me more"}),
        )
        .await
        .expect(202);
    }
    // The failures, the completions and the reply: pending together, in any order.
    hooks.wait_for(5).await;
    hooks.stays_at(5, Duration::from_millis(200)).await;
    assert_eq!(
        hooks.event_types(),
        [
            "campaign.completed",
            "campaign.completed",
            "campaign_recipient.failed",
            "campaign_recipient.failed",
            "campaign_recipient.replied"
        ]
    );
    let replied = hooks.of_type("campaign_recipient.replied")[0].json();
    assert_eq!(replied["data"]["contact_id"], people[0]);
    assert_eq!(replied["data"]["campaign_id"], c["id"]);
    assert_eq!(
        replied["resource"],
        json!({"type": "campaign_recipient", "id": format!("{}:{}", c["id"], people[0])}),
        "a recipient is named by its campaign and contact"
    );
    let failed: std::collections::BTreeSet<String> = hooks
        .of_type("campaign_recipient.failed")
        .iter()
        .map(|r| r.json()["resource"]["id"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(failed.len(), 2, "two recipients, two resources");
    let after = campaign(&app, &c["id"]).await;
    assert_eq!(
        after["stats"]["replied"], 1,
        "a reply on any channel counts, once"
    );
    assert_eq!(after["stats"]["sent"], 2);
    let them = recipients(&app, &c["id"], "&status=replied").await;
    assert_eq!(them.len(), 1);
}

#[tokio::test]
async fn a_scheduled_campaign_fires_once_after_kill_9_and_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let env = [("SWITCHBOARD_CAMPAIGN_RATE", "1000")];
    let mut server = launch(dir.path(), &env, &[]).await;
    let key = server.key.clone().unwrap();
    for i in 0..3 {
        server
            .post_json(&key, "/contacts", json!({"first_name": format!("P{i}")}))
            .await;
    }
    let c = server
        .post_json(
            &key,
            "/campaigns",
            json!({"name": "Later", "text": "Now", "channel": "api"}),
        )
        .await;
    let at = (chrono::Utc::now() + chrono::Duration::seconds(2)).to_rfc3339();
    let scheduled = server
        .post_json(
            &key,
            &format!("/campaigns/{}/send", c["id"]),
            json!({"scheduled_at": at}),
        )
        .await;
    assert_eq!(scheduled["status"], "scheduled", "{scheduled}");
    server.kill_9().await;
    crate::store_safety::assert_store_checks(dir.path());

    tokio::time::sleep(Duration::from_secs(2)).await;
    let server = launch(dir.path(), &env, &[]).await;
    let path = format!("/campaigns/{}", c["id"]);
    let done = completed_on(&server, &key, &path, Duration::from_secs(15)).await;
    assert_eq!(done["stats"]["sent"], 3);
    tokio::time::sleep(Duration::from_millis(600)).await;
    each_got_the_campaign_once(&server, &key, 3).await;
}

#[tokio::test]
async fn a_campaign_cut_off_by_kill_9_resumes_and_reaches_everyone_once() {
    let dir = tempfile::tempdir().unwrap();
    let env = [("SWITCHBOARD_CAMPAIGN_RATE", "40")];
    let mut server = launch(dir.path(), &env, &[]).await;
    let key = server.key.clone().unwrap();
    let total = 60;
    for i in 0..total {
        server
            .post_json(&key, "/contacts", json!({"first_name": format!("K{i}")}))
            .await;
    }
    let dnc = server
        .post_json(&key, "/contacts", json!({"first_name": "No"}))
        .await;
    let opted = server
        .send(
            Method::PUT,
            &key,
            &format!("/contacts/{}/dnc", dnc["id"]),
            json!({"do_not_contact": true}),
        )
        .await;
    assert_eq!(opted.status(), 200);
    let c = server
        .post_json(
            &key,
            "/campaigns",
            json!({"name": "Cut", "text": "Once", "channel": "api"}),
        )
        .await;
    let path = format!("/campaigns/{}", c["id"]);
    server
        .post_json(&key, &format!("{path}/send"), json!({}))
        .await;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(15);
    loop {
        let now = server.get_json(&key, &path).await;
        let sent = now["stats"]["sent"].as_u64().unwrap();
        if sent >= 5 {
            assert!(sent < total, "the campaign must still be sending: {now}");
            break;
        }
        assert!(tokio::time::Instant::now() < deadline, "{now}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    server.kill_9().await;
    crate::store_safety::assert_store_checks(dir.path());

    let server = launch(dir.path(), &env, &[]).await;
    let recipients_path = format!("{path}/recipients?limit=100");
    let listed = server.get_json(&key, &recipients_path).await;
    let statuses: Vec<&str> = listed["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["status"].as_str().unwrap())
        .collect();
    assert_eq!(statuses.len(), total as usize + 1, "{listed}");
    assert!(
        statuses.contains(&"queued"),
        "some wait after the restart: {statuses:?}"
    );
    let skipped = server
        .get_json(&key, &format!("{recipients_path}&status=skipped"))
        .await;
    assert_eq!(skipped["data"][0]["contact_id"], dnc["id"]);

    let done = completed_on(&server, &key, &path, Duration::from_secs(20)).await;
    assert_eq!(done["stats"]["sent"], total);
    assert_eq!(done["stats"]["skipped_do_not_contact"], 1);
    let sent = server
        .get_json(&key, &format!("{recipients_path}&status=sent"))
        .await;
    assert_eq!(sent["data"].as_array().unwrap().len(), total as usize);
    each_got_the_campaign_once(&server, &key, total as usize).await;
}

#[tokio::test]
async fn a_scheduled_campaign_the_credits_no_longer_cover_is_cancelled_when_it_fires() {
    use chrono::TimeZone;
    let start = chrono::Utc.with_ymd_and_hms(2026, 5, 4, 9, 0, 0).unwrap();
    let clock = switchboard_actors::clock::ManualClock::new(start);
    let dir = std::sync::Arc::new(tempfile::tempdir().unwrap());
    let app = spawn_in(dir, Some(clock.clone()), campaign_settings).await;
    let hooks = TestReceiver::start().await;
    hook(&app, &hooks.url, &["campaign.completed"]).await;
    contacts(&app, 3, json!({})).await;
    set_allowance(&app, 3).await;
    let c = new_campaign(&app, json!({"name": "a", "text": "b", "channel": "api"})).await;
    send(
        &app,
        &c["id"],
        json!({"scheduled_at": "2026-05-04T10:00:00Z"}),
    )
    .await
    .expect(200);
    set_allowance(&app, 1).await;
    clock.advance(Duration::from_secs(3_600));
    let off = campaign_when(&app, &c["id"], "cancelled").await;
    assert_eq!(off["error"], "insufficient_credits");
    assert!(recipients(&app, &c["id"], "").await.is_empty());
    assert_eq!(app.get("/credits").await.ok()["used"], 0);
    hooks.stays_at(0, Duration::from_millis(200)).await;
}

#[tokio::test]
async fn a_campaign_scheduled_to_the_nanosecond_fires_on_time_without_a_restart() {
    let app = spawn_campaign_app().await;
    contacts(&app, 2, json!({})).await;
    let c = new_campaign(&app, json!({"name": "a", "text": "b", "channel": "api"})).await;
    // A client's clock may write more digits than the wire keeps.
    let at = chrono::Utc::now() + chrono::Duration::milliseconds(700);
    let precise = at.to_rfc3339_opts(chrono::SecondsFormat::Nanos, true);
    let scheduled = send(&app, &c["id"], json!({"scheduled_at": precise}))
        .await
        .ok();
    assert_eq!(
        scheduled["scheduled_at"],
        at.to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
    );
    let done = campaign_when(&app, &c["id"], "completed").await;
    assert_eq!(done["stats"]["sent"], 2);
}

/// How many campaign messages `contact`'s conversations hold.
async fn campaign_messages(app: &TestApp, contact: u64) -> usize {
    let conversations = app
        .get(&format!("/conversations?contact_id={contact}&limit=100"))
        .await
        .ok();
    let mut n = 0;
    for c in conversations["data"].as_array().expect("data") {
        let messages = app
            .get(&format!("/conversations/{}/messages?limit=100", c["id"]))
            .await
            .ok();
        n += messages["data"]
            .as_array()
            .expect("data")
            .iter()
            .filter(|m| m["sender_type"] == "campaign")
            .count();
    }
    n
}

async fn merge(app: &TestApp, primary: u64, secondary: u64) {
    let body = json!({"primary_contact_id": primary, "secondary_contact_id": secondary});
    app.post("/contacts/merge", body).await.expect(200);
}

/// Campaign `id`'s recipient entry for `contact`.
async fn recipient(app: &TestApp, id: &Value, contact: u64) -> Value {
    let found = recipients(app, id, &format!("&contact_id={contact}")).await;
    found.into_iter().next().expect("a recipient entry")
}

#[tokio::test]
async fn two_recipients_merged_while_a_campaign_sends_get_it_once() {
    let app = spawn_app_with(|s| {
        campaign_settings(s);
        s.campaign_rate = 1;
    })
    .await;
    // Entries go out in id order, one a second: the first at once, the last after 5 s.
    let mut ids = contacts(&app, 6, json!({})).await;
    ids.sort();
    let (first, second, last) = (ids[0], ids[1], ids[5]);
    let c = new_campaign(&app, json!({"name": "a", "text": "Sale", "channel": "api"})).await;
    send(&app, &c["id"], json!({})).await.expect(200);

    // A queued entry merged into a contact the campaign reaches is skipped.
    merge(&app, first, second).await;
    // A queued entry whose secondary was already sent is skipped too.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(3);
    while recipient(&app, &c["id"], first).await["status"] != "sent" {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the first entry never went"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    merge(&app, last, first).await;

    let done = campaign_when(&app, &c["id"], "completed").await;
    assert_eq!(done["stats"]["recipients"], 4, "{done}");
    assert_eq!(done["stats"]["sent"], 4, "{done}");
    let skipped = recipient(&app, &c["id"], second).await;
    assert_eq!(skipped["status"], "skipped");
    assert_eq!(skipped["message_id"], Value::Null);
    let why = skipped["error"].as_str().unwrap_or_default();
    assert!(
        why.contains(&format!("merged into contact {first}")),
        "{why}"
    );
    let skipped = recipient(&app, &c["id"], last).await;
    assert_eq!(skipped["status"], "skipped");
    let why = skipped["error"].as_str().unwrap_or_default();
    assert!(
        why.contains(&format!("reached as contact {first}")),
        "{why}"
    );
    assert_eq!(
        campaign_messages(&app, last).await,
        1,
        "one message to the person"
    );
    assert_eq!(recipients(&app, &c["id"], "&status=sent").await.len(), 4);
}
