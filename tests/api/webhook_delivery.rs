//! Webhook deliveries to real local receivers: headers, the envelope, signatures and
//! rotation, every retry path, the 7-attempt end, 410, the failure window, pause and
//! resume, subscriptions, filters, privacy, the operator trigger (HTTP and CLI), test
//! sends and redelivery, the delivery list, restarts, kill -9 and slow-endpoint isolation.

use std::path::Path;
use std::time::Duration;

use reqwest::Method;
use serde_json::{json, Value};
use switchboard::config::Settings;
use switchboard_actors::clock::{Clock, ManualClock};
use switchboard_actors::events::signature;

use crate::helpers::*;
use crate::receiver::*;
use crate::webhooks::*;

const HOUR: Duration = Duration::from_secs(3600);
const MINUTE: Duration = Duration::from_secs(60);

fn now_unix() -> i64 {
    chrono::Utc::now().timestamp()
}

fn sorted(mut v: Vec<String>) -> Vec<String> {
    v.sort();
    v
}

/// A person with `role` in the bootstrap workspace: (user id, token).
async fn person(app: &TestApp, role: &str) -> (String, String) {
    let user = app.new_user("Pat Person").await;
    app.add_member(&app.workspace_id, &user, role, &[]).await;
    let token = app.token_for(&user, 3600).await;
    (user, token)
}

async fn new_tag(app: &TestApp, token: &str, name: &str) -> Value {
    app.post("/tags", token, json!({"name": name}))
        .await
        .expect(201)
        .body
}

// ----- 4. The request: headers, envelope, signature -----

#[tokio::test]
async fn a_tag_created_reaches_a_subscribed_receiver_signed_and_with_every_header() {
    let app = spawn_webhook_app().await;
    let rx = TestReceiver::start().await;
    let (_, secret) = hook(&app, &rx.url, &["tag.*"]).await;
    let tag = new_tag(&app, &app.key, "VIP").await;

    let got = rx.wait_for(1).await;
    let r = &got[0];
    assert_eq!(r.header("content-type"), "application/json");
    assert_eq!(r.header("user-agent"), "Service-Webhooks/2.0");
    assert_eq!(r.event_type(), "tag.created");
    assert_eq!(r.header("x-service-delivery-attempt"), "1");
    let event = r.json();
    assert_eq!(r.event_id(), event["id"].as_str().unwrap());
    assert!(event["id"].as_str().unwrap().starts_with("evt_"), "{event}");
    assert_eq!(event["object"], "event");
    assert_eq!(event["type"], "tag.created");
    let version = event["api_version"].as_str().unwrap();
    assert!(
        chrono::NaiveDate::parse_from_str(version, "%Y-%m-%d").is_ok(),
        "api_version is not a date: {version}"
    );
    assert_millis_utc(&event["occurred_at"]);
    assert_millis_utc(&event["created_at"]);
    assert_eq!(event["workspace_id"], app.workspace_id.as_str());
    assert_eq!(event["actor"]["type"], "api");
    assert!(event["actor"]["id"].is_string(), "{event}");
    assert_eq!(event["resource"]["type"], "tag");
    assert_eq!(event["resource"]["id"], tag["id"].to_string());
    let connection = event["source"]["connection_id"].as_str().unwrap();
    let (kind, id) = connection.split_once(':').unwrap();
    assert_eq!(kind, "api_key");
    assert!(!id.is_empty());
    assert_eq!(event["source"]["via"], "api");
    assert_eq!(event["data"]["name"], "VIP");
    assert_eq!(event["changes"], Value::Null);

    // The signature: t=<unix>,v1=<64 hex>, over the raw bytes, with the secret.
    let header = r.header("x-service-signature");
    assert!((r.signed_at() - now_unix()).abs() < 60, "{header}");
    assert_eq!(r.signatures().len(), 1, "{header}");
    let v1 = r.signatures()[0];
    assert!(
        v1.len() == 64 && v1.bytes().all(|b| b.is_ascii_hexdigit()),
        "{header}"
    );
    assert_eq!(
        v1,
        signature::sign(&secret, r.signed_at(), &r.body),
        "HMAC-SHA256 of `<t>.<raw body>`"
    );
    assert!(signature::verify(header, &r.body, &secret, now_unix(), 300));
    let mut tampered = r.body.to_vec();
    let last = tampered.len() - 2;
    tampered[last] ^= 1;
    assert!(!signature::verify(
        header,
        &tampered,
        &secret,
        now_unix(),
        300
    ));
    let reserialized = serde_json::to_vec_pretty(&event).unwrap();
    assert!(!signature::verify(
        header,
        &reserialized,
        &secret,
        now_unix(),
        300
    ));
    assert!(!signature::verify(
        header,
        &r.body,
        "whsec_wrong",
        now_unix(),
        300
    ));
    rx.stays_at(1, Duration::from_millis(200)).await;
}

#[tokio::test]
async fn update_and_delete_events_name_the_resource_and_list_changed_fields() {
    let app = spawn_webhook_app().await;
    let rx = TestReceiver::start().await;
    hook(&app, &rx.url, &["tag.*"]).await;
    let tag = new_tag(&app, &app.key, "VIP").await;
    rx.wait_for(1).await;
    let at = format!("/tags/{}", tag["id"]);
    app.patch(&at, &app.key, json!({"name": "Gold"}))
        .await
        .expect(200);
    let got = rx.wait_for(2).await;
    let updated = got[1].json();
    assert_eq!(updated["type"], "tag.updated");
    assert_eq!(updated["resource"]["id"], tag["id"].to_string());
    assert_eq!(updated["data"]["name"], "Gold");
    assert_eq!(updated["changes"]["name"], "VIP", "{updated}");
    assert!(updated["changes"].get("updated_at").is_none());
    app.delete(&at, &app.key).await.expect(200);
    let got = rx.wait_for(3).await;
    let deleted = got[2].json();
    assert_eq!(deleted["type"], "tag.deleted");
    assert_eq!(deleted["resource"]["id"], tag["id"].to_string());
    let ids: Vec<&str> = got.iter().map(|r| r.event_id()).collect();
    assert!(
        ids[0] != ids[1] && ids[1] != ids[2],
        "every event has its own id"
    );
}

#[tokio::test]
async fn a_change_made_with_a_persons_oauth_token_names_a_human_actor() {
    let app = spawn_webhook_app().await;
    let rx = TestReceiver::start().await;
    hook(&app, &rx.url, &["tag.created"]).await;
    let (user, token) = person(&app, "admin").await;
    new_tag(&app, &token, "From a person").await;
    let got = rx.wait_for(1).await;
    let event = got[0].json();
    assert_eq!(event["actor"]["type"], "human");
    assert_eq!(event["actor"]["id"], user.as_str());
    let connection = event["source"]["connection_id"].as_str().unwrap();
    assert!(connection.starts_with("oauth:"), "{connection}");
    assert!(
        !connection.contains(&token),
        "the token itself never leaves"
    );
}

// ----- 5. Secret rotation -----

#[tokio::test]
async fn after_a_rotation_both_secrets_verify_until_the_overlap_ends() {
    let clock = ManualClock::new(chrono::Utc::now());
    let app = spawn_clocked_webhook_app(clock.clone(), |_| {}).await;
    let rx = TestReceiver::start().await;
    let (id, old) = hook(&app, &rx.url, &["tag.*"]).await;
    let now = || clock.now().timestamp();

    new_tag(&app, &app.key, "before").await;
    let got = rx.wait_for(1).await;
    assert_eq!(got[0].signatures().len(), 1);
    assert!(signature::verify(
        got[0].header("x-service-signature"),
        &got[0].body,
        &old,
        now(),
        300
    ));

    let rotated = app
        .post(
            &format!("/webhooks/{id}/rotate-secret"),
            &app.key,
            json!({}),
        )
        .await
        .expect(200)
        .body;
    let new = rotated["secret"].as_str().unwrap().to_string();
    assert_ne!(new, old);
    let until = chrono::DateTime::parse_from_rfc3339(
        rotated["previous_secret_expires_at"].as_str().unwrap(),
    )
    .unwrap();
    assert_eq!(
        until.timestamp(),
        clock.now().timestamp() + 24 * 3600,
        "the old secret keeps signing for 24 hours"
    );

    new_tag(&app, &app.key, "during").await;
    let got = rx.wait_for(2).await;
    let r = &got[1];
    let header = r.header("x-service-signature");
    assert_eq!(r.signatures().len(), 2, "{header}");
    assert_eq!(
        r.signatures()[0],
        signature::sign(&new, r.signed_at(), &r.body)
    );
    assert_eq!(
        r.signatures()[1],
        signature::sign(&old, r.signed_at(), &r.body)
    );
    assert!(signature::verify(header, &r.body, &new, now(), 300));
    assert!(signature::verify(header, &r.body, &old, now(), 300));
    assert!(!signature::verify(header, &r.body, "whsec_x", now(), 300));

    clock.advance(24 * HOUR - Duration::from_secs(60));
    new_tag(&app, &app.key, "near the end").await;
    let got = rx.wait_for(3).await;
    assert_eq!(got[2].signatures().len(), 2, "still inside the overlap");

    clock.advance(Duration::from_secs(61));
    new_tag(&app, &app.key, "after").await;
    let got = rx.wait_for(4).await;
    let r = &got[3];
    let header = r.header("x-service-signature");
    assert_eq!(r.signatures().len(), 1, "{header}");
    assert!(signature::verify(header, &r.body, &new, now(), 300));
    assert!(!signature::verify(header, &r.body, &old, now(), 300));
}

#[tokio::test]
async fn with_a_shortened_overlap_the_second_signature_goes_away_after_it() {
    let app =
        spawn_webhook_app_with(|s| s.webhooks.secret_overlap = Duration::from_millis(300)).await;
    let rx = TestReceiver::start().await;
    let (id, old) = hook(&app, &rx.url, &["tag.*"]).await;
    let new = app
        .post(
            &format!("/webhooks/{id}/rotate-secret"),
            &app.key,
            json!({}),
        )
        .await
        .expect(200)
        .body["secret"]
        .as_str()
        .unwrap()
        .to_string();
    new_tag(&app, &app.key, "during").await;
    let got = rx.wait_for(1).await;
    assert_eq!(got[0].signatures().len(), 2);
    tokio::time::sleep(Duration::from_millis(400)).await;
    new_tag(&app, &app.key, "after").await;
    let got = rx.wait_for(2).await;
    let r = &got[1];
    assert_eq!(r.signatures().len(), 1);
    let header = r.header("x-service-signature");
    assert!(signature::verify(header, &r.body, &new, now_unix(), 300));
    assert!(!signature::verify(header, &r.body, &old, now_unix(), 300));
}

#[tokio::test]
async fn a_retry_sent_after_the_overlap_is_signed_with_the_new_secret_only() {
    let clock = ManualClock::new(chrono::Utc::now());
    let app = spawn_clocked_webhook_app(clock.clone(), |s| {
        s.webhooks.retry_delays = vec![HOUR; 6];
    })
    .await;
    let rx = TestReceiver::start().await;
    rx.respond_with(500);
    let (id, old) = hook(&app, &rx.url, &["tag.*"]).await;
    let new = app
        .post(
            &format!("/webhooks/{id}/rotate-secret"),
            &app.key,
            json!({}),
        )
        .await
        .expect(200)
        .body["secret"]
        .as_str()
        .unwrap()
        .to_string();
    new_tag(&app, &app.key, "retried").await;
    let got = rx.wait_for(1).await;
    assert_eq!(got[0].signatures().len(), 2);
    deliveries_when(&app, &id, "the first attempt", |d| {
        d.len() == 1 && d[0]["attempt_count"] == 1
    })
    .await;

    clock.advance(25 * HOUR);
    let got = rx.wait_for(2).await;
    let r = &got[1];
    assert_eq!(r.attempt(), 2);
    let header = r.header("x-service-signature");
    let t = clock.now().timestamp();
    assert!(signature::verify(header, &r.body, &new, t, 300));
    assert_eq!(
        r.signatures().len(),
        1,
        "24 h after the rotation only the new secret signs: {header}"
    );
    assert!(!signature::verify(header, &r.body, &old, t, 300));
}

// ----- 6. Retry paths -----

#[tokio::test]
async fn a_5xx_answer_is_retried_with_the_same_body_until_a_2xx() {
    let app = spawn_webhook_app().await;
    let rx = TestReceiver::start().await;
    rx.respond_with(500);
    let (id, secret) = hook(&app, &rx.url, &["*"]).await;
    new_tag(&app, &app.key, "retry").await;
    rx.wait_for(2).await;
    rx.respond_with(200);
    let d = deliveries_when(&app, &id, "delivered", |d| d[0]["status"] == "delivered").await;
    let got = rx.received();
    let n = got.len();
    assert!(n >= 3, "two failures then a success: {n}");
    let attempts: Vec<u32> = got.iter().map(Received::attempt).collect();
    assert_eq!(attempts, (1..=n as u32).collect::<Vec<_>>());
    assert!(
        got.iter().all(|r| r.body == got[0].body),
        "the same body every time"
    );
    assert!(got.iter().all(|r| r.event_id() == got[0].event_id()));
    for r in &got {
        assert!(signature::verify(
            r.header("x-service-signature"),
            &r.body,
            &secret,
            now_unix(),
            300
        ));
    }
    assert_eq!(d.len(), 1);
    assert_eq!(d[0]["attempt_count"], n);
    let codes: Vec<&Value> = d[0]["attempts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| &a["status_code"])
        .collect();
    assert_eq!(codes.last().unwrap(), &&json!(200));
    assert!(
        codes[..n - 1].iter().all(|c| **c == json!(500)),
        "{codes:?}"
    );
    assert_eq!(d[0]["next_attempt_at"], Value::Null);
    let e = endpoint_when(&app, &id, "the success", |e| {
        e["last_delivery"]["delivered"] == true
    })
    .await;
    assert_eq!(e["failure_count"], 0);
    rx.stays_at(n, Duration::from_millis(200)).await;
}

#[tokio::test]
async fn any_2xx_is_a_success_and_every_other_answer_but_410_is_retried() {
    let app = spawn_webhook_app().await;
    let mut cases = Vec::new();
    for code in [
        200u16, 201, 202, 204, 299, 301, 304, 400, 401, 404, 429, 501, 503,
    ] {
        let rx = TestReceiver::start().await;
        rx.respond_with(code);
        let (id, _) = hook(&app, &rx.url, &["tag.*"]).await;
        cases.push((code, rx, id));
    }
    new_tag(&app, &app.key, "every code").await;
    for (code, rx, id) in &cases {
        if (200..300).contains(code) {
            let d = deliveries_when(&app, id, "delivered", |d| d[0]["status"] != "pending").await;
            assert_eq!(d[0]["status"], "delivered", "{code}: {}", d[0]);
            assert_eq!(d[0]["attempts"][0]["status_code"], *code);
            rx.stays_at(1, Duration::from_millis(100)).await;
        } else {
            let got = rx.wait_for(2).await;
            assert_eq!(got[1].attempt(), 2, "{code} is retried");
            let e = endpoint_when(&app, id, "a failure", |e| {
                e["failure_count"].as_u64().unwrap_or(0) >= 1
            })
            .await;
            assert_eq!(e["status"], "active", "{code}: {e}");
            assert_eq!(e["last_delivery"]["delivered"], false);
        }
    }
}

#[tokio::test]
async fn deleting_an_endpoint_stops_its_pending_retries() {
    let app = spawn_webhook_app_with(|s| {
        s.webhooks.retry_delays = vec![Duration::from_millis(400); 6];
    })
    .await;
    let rx = TestReceiver::start().await;
    rx.respond_with(500);
    let (id, _) = hook(&app, &rx.url, &["tag.*"]).await;
    new_tag(&app, &app.key, "orphan").await;
    rx.wait_for(1).await;
    app.delete(&format!("/webhooks/{id}"), &app.key)
        .await
        .expect(200);
    let n = rx.received().len();
    rx.respond_with(200);
    rx.stays_at(n, Duration::from_millis(1000)).await;
}

#[tokio::test]
async fn a_receiver_slower_than_the_answer_time_counts_as_a_failure_and_is_retried() {
    let app = spawn_webhook_app_with(|s| s.webhooks.timeout = Duration::from_millis(200)).await;
    let rx = TestReceiver::start().await;
    rx.answer_after(Duration::from_secs(1));
    let (id, _) = hook(&app, &rx.url, &["tag.*"]).await;
    new_tag(&app, &app.key, "slow").await;
    let got = rx.wait_for(2).await;
    assert_eq!(got[0].attempt(), 1);
    assert_eq!(got[1].attempt(), 2);
    assert_eq!(got[1].event_id(), got[0].event_id());
    let d = deliveries_when(&app, &id, "a timed-out attempt", |d| {
        d[0]["attempt_count"].as_u64().unwrap_or(0) >= 1
    })
    .await;
    let first = &d[0]["attempts"][0];
    assert_eq!(first["status_code"], Value::Null, "{first}");
    assert!(first["error"].is_string(), "{first}");
    assert!(first["duration_ms"].as_u64().unwrap() >= 150, "{first}");
    rx.respond_with(200);
    let d = deliveries_when(&app, &id, "delivered", |d| d[0]["status"] == "delivered").await;
    assert!(d[0]["attempt_count"].as_u64().unwrap() >= 3, "{}", d[0]);
}

#[tokio::test]
async fn a_redirect_counts_as_a_failure_and_is_not_followed() {
    let app = spawn_webhook_app().await;
    let rx = TestReceiver::start().await;
    let target = TestReceiver::start().await;
    rx.redirect_to(&target.url);
    let (id, _) = hook(&app, &rx.url, &["tag.*"]).await;
    new_tag(&app, &app.key, "moved").await;
    let got = rx.wait_for(2).await;
    assert_eq!(got[1].attempt(), 2, "retried");
    let d = deliveries_when(&app, &id, "a redirect attempt", |d| {
        d[0]["attempt_count"].as_u64().unwrap_or(0) >= 1
    })
    .await;
    assert_eq!(d[0]["attempts"][0]["status_code"], 302, "{}", d[0]);
    assert!(d[0]["attempts"][0]["error"].is_string());
    let e = endpoint_when(&app, &id, "a failure", |e| {
        e["failure_count"].as_u64().unwrap_or(0) >= 1
    })
    .await;
    assert_eq!(e["last_delivery"]["delivered"], false);
    target.stays_at(0, Duration::from_millis(200)).await;
}

#[tokio::test]
async fn a_refused_connection_counts_as_a_failure_and_is_retried() {
    let app = spawn_webhook_app().await;
    let url = closed_url().await;
    let (id, _) = hook(&app, &url, &["tag.*"]).await;
    new_tag(&app, &app.key, "nobody home").await;
    let d = deliveries_when(&app, &id, "two refused attempts", |d| {
        d.len() == 1 && d[0]["attempt_count"].as_u64().unwrap_or(0) >= 2
    })
    .await;
    for a in d[0]["attempts"].as_array().unwrap() {
        assert_eq!(a["status_code"], Value::Null, "{a}");
        assert!(a["error"].is_string(), "{a}");
    }
    let numbers: Vec<u64> = d[0]["attempts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["number"].as_u64().unwrap())
        .collect();
    assert_eq!(numbers, (1..=numbers.len() as u64).collect::<Vec<_>>());
    let e = endpoint_when(&app, &id, "failures", |e| {
        e["failure_count"].as_u64().unwrap_or(0) >= 2
    })
    .await;
    assert_eq!(e["status"], "active");
}

#[tokio::test]
async fn a_410_stops_retries_at_once_disables_the_endpoint_and_notifies_the_owner() {
    let app = spawn_webhook_app().await;
    let rx = TestReceiver::start().await;
    rx.respond_with(410);
    let (id, _) = hook(&app, &rx.url, &["tag.*"]).await;
    new_tag(&app, &app.key, "gone").await;
    rx.wait_for(1).await;
    let e = endpoint_when(&app, &id, "disabled", |e| e["status"] == "disabled").await;
    assert!(e["disabled_reason"].is_string(), "{e}");
    assert_eq!(e["last_delivery"]["status_code"], 410);
    rx.stays_at(1, Duration::from_millis(300)).await;
    let d = deliveries(&app, &id).await;
    assert_eq!(d.len(), 1);
    assert_eq!(d[0]["status"], "failed", "{}", d[0]);
    assert_eq!(d[0]["attempt_count"], 1);
    assert_eq!(d[0]["next_attempt_at"], Value::Null);

    let n = app
        .admin_call(
            Method::GET,
            &format!("/admin/workspaces/{}/notifications", app.workspace_id),
        )
        .send()
        .await
        .expect(200)
        .body;
    assert_eq!(n["object"], "list");
    let data = n["data"].as_array().unwrap();
    assert_eq!(data.len(), 1, "{n}");
    assert_eq!(data[0]["endpoint_id"], id.as_str());
    assert!(data[0]["reason"].is_string());

    rx.respond_with(200);
    new_tag(&app, &app.key, "later").await;
    rx.stays_at(1, Duration::from_millis(300)).await;
    assert_eq!(deliveries(&app, &id).await.len(), 1, "nothing queued");
}

#[tokio::test]
async fn after_seven_failed_attempts_the_delivery_is_failed_and_no_eighth_comes() {
    let app = spawn_webhook_app().await;
    let rx = TestReceiver::start().await;
    rx.respond_with(500);
    let (id, _) = hook(&app, &rx.url, &["tag.*"]).await;
    new_tag(&app, &app.key, "doomed").await;
    let got = rx.wait_for(7).await;
    let attempts: Vec<u32> = got.iter().map(Received::attempt).collect();
    assert_eq!(attempts, [1, 2, 3, 4, 5, 6, 7]);
    let d = deliveries_when(&app, &id, "failed", |d| d[0]["status"] != "pending").await;
    assert_eq!(d[0]["status"], "failed", "{}", d[0]);
    assert_eq!(d[0]["attempt_count"], 7);
    assert_eq!(d[0]["attempts"].as_array().unwrap().len(), 7);
    assert_eq!(d[0]["next_attempt_at"], Value::Null);
    rx.stays_at(7, Duration::from_millis(500)).await;
    let e = endpoint_when(&app, &id, "7 failures", |e| e["failure_count"] == 7).await;
    assert_eq!(
        e["status"], "active",
        "7 failures in a second are no 72 hours"
    );
}

#[tokio::test]
async fn the_default_ladder_waits_30_s_2_m_10_m_1_h_6_h_and_24_h() {
    let clock = ManualClock::new(chrono::Utc::now());
    let app = spawn_clocked_webhook_app(clock.clone(), |s| {
        s.webhooks.retry_delays = switchboard::config::DeliverySettings::default().retry_delays;
    })
    .await;
    let rx = TestReceiver::start().await;
    rx.respond_with(503);
    let (id, _) = hook(&app, &rx.url, &["tag.*"]).await;
    new_tag(&app, &app.key, "ladder").await;
    rx.wait_for(1).await;
    let ladder = [
        Duration::from_secs(30),
        2 * MINUTE,
        10 * MINUTE,
        HOUR,
        6 * HOUR,
        24 * HOUR,
    ];
    for (i, wait) in ladder.iter().enumerate() {
        let done = i + 1;
        deliveries_when(&app, &id, "the attempt recorded", |d| {
            d[0]["attempt_count"] == done
        })
        .await;
        clock.advance(*wait - Duration::from_secs(1));
        rx.stays_at(done, Duration::from_millis(100)).await;
        clock.advance(Duration::from_secs(1));
        let got = rx.wait_for(done + 1).await;
        assert_eq!(got[done].attempt() as usize, done + 1);
    }
    let d = deliveries_when(&app, &id, "failed", |d| d[0]["status"] != "pending").await;
    assert_eq!(d[0]["status"], "failed");
    assert_eq!(d[0]["attempt_count"], 7);
    clock.advance(48 * HOUR);
    rx.stays_at(7, Duration::from_millis(200)).await;
}

// ----- 7. The failure window -----

async fn notifications(app: &TestApp) -> Value {
    app.admin_call(
        Method::GET,
        &format!("/admin/workspaces/{}/notifications", app.workspace_id),
    )
    .send()
    .await
    .expect(200)
    .body
}

#[tokio::test]
async fn an_endpoint_failing_for_the_whole_window_is_disabled_and_the_owner_notified() {
    let clock = ManualClock::new(chrono::Utc::now());
    let app = spawn_clocked_webhook_app(clock.clone(), |s| {
        s.webhooks.retry_delays = vec![20 * MINUTE; 6];
        s.webhooks.disable_after = HOUR;
    })
    .await;
    let rx = TestReceiver::start().await;
    rx.respond_with(500);
    let (id, _) = hook(&app, &rx.url, &["tag.*"]).await;
    new_tag(&app, &app.key, "failing").await;

    rx.wait_for(1).await;
    deliveries_when(&app, &id, "attempt 1", |d| d[0]["attempt_count"] == 1).await;
    let e = endpoint_when(&app, &id, "1 failure", |e| e["failure_count"] == 1).await;
    assert_eq!(e["status"], "active");
    assert_millis_utc(&e["failing_since"]);

    clock.advance(21 * MINUTE);
    rx.wait_for(2).await;
    deliveries_when(&app, &id, "attempt 2", |d| d[0]["attempt_count"] == 2).await;
    let e = endpoint_when(&app, &id, "2 failures", |e| e["failure_count"] == 2).await;
    assert_eq!(e["status"], "active", "21 minutes are inside the window");
    assert!(notifications(&app).await["data"]
        .as_array()
        .unwrap()
        .is_empty());

    clock.advance(40 * MINUTE);
    rx.wait_for(3).await;
    let e = endpoint_when(&app, &id, "disabled", |e| e["status"] == "disabled").await;
    assert_eq!(e["failure_count"], 3, "{e}");
    assert!(e["disabled_reason"].is_string(), "{e}");

    let n = notifications(&app).await;
    assert_eq!(n["object"], "list");
    assert_eq!(n["has_more"], false);
    let data = n["data"].as_array().unwrap();
    assert_eq!(data.len(), 1, "{n}");
    assert_eq!(data[0]["object"], "notification");
    assert_eq!(data[0]["endpoint_id"], id.as_str());
    assert!(!data[0]["reason"].as_str().unwrap().is_empty());
    assert_millis_utc(&data[0]["created_at"]);
    assert_eq!(
        data[0]["created_at"],
        switchboard_actors::clock::rfc3339_millis::format(&clock.now())
    );

    // Disabled: nothing is sent, not even the pending retry, and new events are not kept.
    rx.respond_with(200);
    new_tag(&app, &app.key, "while disabled").await;
    clock.advance(HOUR);
    rx.stays_at(3, Duration::from_millis(300)).await;

    // PATCH active re-enables with a fresh count; the pending retry goes out.
    let e = app
        .patch(
            &format!("/webhooks/{id}"),
            &app.key,
            json!({"status": "active"}),
        )
        .await
        .expect(200)
        .body;
    assert_eq!(e["status"], "active");
    assert_eq!(e["failure_count"], 0);
    assert_eq!(e["failing_since"], Value::Null);
    let got = rx.wait_for(4).await;
    assert_eq!(got[3].event_id(), got[0].event_id());
    assert_eq!(got[3].attempt(), 4);
    endpoint_when(&app, &id, "the success", |e| {
        e["last_delivery"]["delivered"] == true
    })
    .await;
    rx.stays_at(4, Duration::from_millis(200)).await;
    assert_eq!(
        notifications(&app).await["data"].as_array().unwrap().len(),
        1
    );
}

#[tokio::test]
async fn a_success_inside_the_window_resets_the_failure_count_and_the_window() {
    let clock = ManualClock::new(chrono::Utc::now());
    let app = spawn_clocked_webhook_app(clock.clone(), |s| {
        s.webhooks.retry_delays = vec![20 * MINUTE; 6];
        s.webhooks.disable_after = HOUR;
    })
    .await;
    let rx = TestReceiver::start().await;
    rx.respond_with(500);
    let (id, _) = hook(&app, &rx.url, &["tag.*"]).await;
    new_tag(&app, &app.key, "one").await;
    rx.wait_for(1).await;
    deliveries_when(&app, &id, "attempt 1", |d| d[0]["attempt_count"] == 1).await;
    endpoint_when(&app, &id, "1 failure", |e| e["failure_count"] == 1).await;

    rx.respond_with(200);
    clock.advance(21 * MINUTE);
    rx.wait_for(2).await;
    let e = endpoint_when(&app, &id, "the success", |e| {
        e["last_delivery"]["delivered"] == true
    })
    .await;
    assert_eq!(e["failure_count"], 0);
    assert_eq!(e["failing_since"], Value::Null);

    // Failing again: the window starts at this failure, not at the first one.
    rx.respond_with(500);
    new_tag(&app, &app.key, "two").await;
    rx.wait_for(3).await;
    deliveries_when(&app, &id, "attempt 1 of the second", |d| {
        d[0]["attempt_count"] == 1
    })
    .await;
    endpoint_when(&app, &id, "1 failure", |e| e["failure_count"] == 1).await;
    clock.advance(45 * MINUTE);
    rx.wait_for(4).await;
    let e = endpoint_when(&app, &id, "2 failures", |e| e["failure_count"] == 2).await;
    assert_eq!(
        e["status"], "active",
        "66 min after the first failure but 45 min into this window: {e}"
    );
    assert!(notifications(&app).await["data"]
        .as_array()
        .unwrap()
        .is_empty());
}

// ----- 8. Pause and resume -----

#[tokio::test]
async fn a_paused_endpoint_receives_nothing_and_events_of_the_pause_are_not_sent_after_resume() {
    let app = spawn_webhook_app().await;
    let rx = TestReceiver::start().await;
    let (id, _) = hook(&app, &rx.url, &["tag.*"]).await;
    let at = format!("/webhooks/{id}");
    app.patch(&at, &app.key, json!({"status": "paused"}))
        .await
        .expect(200);
    new_tag(&app, &app.key, "during the pause").await;
    rx.stays_at(0, Duration::from_millis(300)).await;
    assert!(deliveries(&app, &id).await.is_empty(), "nothing queued");

    app.patch(&at, &app.key, json!({"status": "active"}))
        .await
        .expect(200);
    rx.stays_at(0, Duration::from_millis(300)).await;
    new_tag(&app, &app.key, "after the pause").await;
    let got = rx.wait_for(1).await;
    assert_eq!(got[0].json()["data"]["name"], "after the pause");
    rx.stays_at(1, Duration::from_millis(200)).await;
}

#[tokio::test]
async fn deliveries_pending_before_a_pause_wait_and_go_out_after_resume() {
    let app = spawn_webhook_app_with(|s| {
        s.webhooks.retry_delays = vec![Duration::from_millis(300); 6];
    })
    .await;
    let rx = TestReceiver::start().await;
    rx.respond_with(500);
    let (id, _) = hook(&app, &rx.url, &["tag.*"]).await;
    let at = format!("/webhooks/{id}");
    new_tag(&app, &app.key, "before the pause").await;
    rx.wait_for(1).await;
    app.patch(&at, &app.key, json!({"status": "paused"}))
        .await
        .expect(200);
    rx.respond_with(200);
    let n = rx.received().len();
    rx.stays_at(n, Duration::from_millis(700)).await;
    let d = deliveries(&app, &id).await;
    assert_eq!(d[0]["status"], "pending", "{}", d[0]);

    app.patch(&at, &app.key, json!({"status": "active"}))
        .await
        .expect(200);
    let got = rx.wait_for(n + 1).await;
    assert_eq!(got[n].event_id(), got[0].event_id());
    assert_eq!(got[n].attempt() as usize, n + 1);
    deliveries_when(&app, &id, "delivered", |d| d[0]["status"] == "delivered").await;
}

// ----- 9. Subscriptions -----

#[tokio::test]
async fn wildcards_skip_message_received_and_sent_which_must_be_named() {
    let app = spawn_webhook_app().await;
    let ws = app.workspace_id.clone();
    let star = TestReceiver::start().await;
    let named = TestReceiver::start().await;
    let messages = TestReceiver::start().await;
    let contacts = TestReceiver::start().await;
    let exact = TestReceiver::start().await;
    let overlapping = TestReceiver::start().await;
    hook(&app, &star.url, &["*"]).await;
    hook(&app, &overlapping.url, &["*", "tag.*", "tag.created"]).await;
    hook(&app, &named.url, &["message.received"]).await;
    hook(&app, &messages.url, &["message.*"]).await;
    hook(&app, &contacts.url, &["contact.*"]).await;
    hook(&app, &exact.url, &["tag.created", "order.paid"]).await;

    new_tag(&app, &app.key, "Wholesale").await;
    let contact = app
        .post("/contacts", &app.key, json!({"first_name": "Ann"}))
        .await
        .expect(201)
        .body;
    app.post(
        "/orders",
        &app.key,
        json!({"contact_id": contact["id"],
               "items": [{"name": "Tea", "quantity": 1, "unit_price": 5.0}]}),
    )
    .await
    .expect(201);
    app.post(
        &format!("/contacts/{}/notes", contact["id"]),
        &app.key,
        json!({"body": "likes tea"}),
    )
    .await
    .expect(201);
    for t in [
        "message.received",
        "message.sent",
        "message.send_failed",
        "order.paid",
    ] {
        trigger(&app, &ws, t, None).await;
    }

    let expected_star = [
        "contact.created",
        "message.send_failed",
        "note.created",
        "order.created",
        "order.paid",
        "tag.created",
    ];
    star.wait_for(expected_star.len()).await;
    let quiet = Duration::from_millis(300);
    star.stays_at(expected_star.len(), quiet).await;
    assert_eq!(sorted(star.event_types()), expected_star);
    assert_eq!(named.event_types(), ["message.received"]);
    assert_eq!(messages.event_types(), ["message.send_failed"]);
    assert_eq!(contacts.event_types(), ["contact.created"]);
    assert_eq!(sorted(exact.event_types()), ["order.paid", "tag.created"]);
    assert_eq!(
        sorted(overlapping.event_types()),
        expected_star,
        "an event matching several entries is delivered once"
    );
}

#[tokio::test]
async fn a_refused_or_replayed_write_emits_no_event() {
    let app = spawn_webhook_app().await;
    let rx = TestReceiver::start().await;
    hook(&app, &rx.url, &["*"]).await;
    let once = || {
        app.call(Method::POST, "/tags")
            .token(&app.key)
            .header("Idempotency-Key", "tag-once")
            .json(json!({"name": "Once"}))
            .send()
    };
    once().await.expect(201);
    let replay = once().await.expect(201);
    assert_eq!(replay.header("idempotent-replayed"), Some("true"));
    app.post("/tags", &app.key, json!({"name": "Once"}))
        .await
        .expect(409);
    app.post("/tags", &app.key, json!({"name": ""}))
        .await
        .expect_error(422, "validation_failed");
    app.patch("/tags/999999999", &app.key, json!({"name": "x"}))
        .await
        .expect_error(404, "not_found");
    let got = rx.wait_for(1).await;
    rx.stays_at(1, Duration::from_millis(300)).await;
    assert_eq!(got[0].event_type(), "tag.created");
}

#[tokio::test]
async fn an_endpoint_created_after_an_event_does_not_receive_it() {
    let app = spawn_webhook_app().await;
    let early = TestReceiver::start().await;
    let late = TestReceiver::start().await;
    hook(&app, &early.url, &["tag.*"]).await;
    new_tag(&app, &app.key, "before").await;
    early.wait_for(1).await;
    hook(&app, &late.url, &["tag.*"]).await;
    new_tag(&app, &app.key, "after").await;
    early.wait_for(2).await;
    let got = late.wait_for(1).await;
    late.stays_at(1, Duration::from_millis(200)).await;
    assert_eq!(got[0].json()["data"]["name"], "after");
}

// ----- 10. Filters -----

#[tokio::test]
async fn an_actor_types_filter_skips_api_key_changes_and_passes_a_persons() {
    let app = spawn_webhook_app().await;
    let rx = TestReceiver::start().await;
    let api_only = TestReceiver::start().await;
    new_endpoint(
        &app,
        json!({"url": rx.url, "events": ["tag.*"], "filters": {"actor_types": ["human"]}}),
    )
    .await;
    new_endpoint(
        &app,
        json!({"url": api_only.url, "events": ["tag.*"], "filters": {"actor_types": ["api"]}}),
    )
    .await;
    let (_, token) = person(&app, "admin").await;
    new_tag(&app, &app.key, "by the key").await;
    trigger(&app, &app.workspace_id, "tag.created", None).await;
    new_tag(&app, &token, "by a person").await;
    let got = rx.wait_for(1).await;
    rx.stays_at(1, Duration::from_millis(300)).await;
    let event = got[0].json();
    assert_eq!(event["actor"]["type"], "human");
    assert_eq!(event["data"]["name"], "by a person");
    let got = api_only.wait_for(1).await;
    api_only.stays_at(1, Duration::from_millis(100)).await;
    assert_eq!(got[0].json()["data"]["name"], "by the key");
}

#[tokio::test]
async fn ignore_own_changes_skips_the_creating_credential_but_not_another_one() {
    let app = spawn_webhook_app().await;
    let rx = TestReceiver::start().await;
    let all = TestReceiver::start().await;
    new_endpoint(
        &app,
        json!({"url": rx.url, "events": ["tag.*"], "filters": {"ignore_own_changes": true}}),
    )
    .await;
    hook(&app, &all.url, &["tag.*"]).await;
    let other_key = app
        .admin_post(
            &format!("/admin/workspaces/{}/api-keys", app.workspace_id),
            json!({}),
        )
        .await
        .expect(201)
        .body["api_key"]
        .as_str()
        .unwrap()
        .to_string();
    let (_, token) = person(&app, "admin").await;
    new_tag(&app, &app.key, "own").await;
    new_tag(&app, &other_key, "other key").await;
    new_tag(&app, &token, "a person").await;
    all.wait_for(3).await;
    let got = rx.wait_for(2).await;
    rx.stays_at(2, Duration::from_millis(300)).await;
    let mut names: Vec<String> = got
        .iter()
        .map(|r| r.json()["data"]["name"].as_str().unwrap().to_string())
        .collect();
    names.sort();
    assert_eq!(names, ["a person", "other key"]);
}

#[tokio::test]
async fn a_channels_filter_passes_events_of_its_channels_and_events_without_one() {
    let app = spawn_webhook_app().await;
    let rx = TestReceiver::start().await;
    new_endpoint(
        &app,
        json!({"url": rx.url, "events": ["conversation.*"],
               "filters": {"channels": ["chan_a", "email"]}}),
    )
    .await;
    let ws = app.workspace_id.clone();
    for (id, channel) in [
        (1, Some("chan_a")),
        (2, Some("sms")),
        (3, None),
        (4, Some("email")),
    ] {
        let mut data = json!({"id": id});
        if let Some(c) = channel {
            data["channel"] = json!(c);
        }
        trigger(&app, &ws, "conversation.created", Some(data)).await;
    }
    let got = rx.wait_for(3).await;
    rx.stays_at(3, Duration::from_millis(300)).await;
    let mut ids: Vec<i64> = got
        .iter()
        .map(|r| r.json()["data"]["id"].as_i64().unwrap())
        .collect();
    ids.sort();
    assert_eq!(ids, [1, 3, 4]);
}

#[tokio::test]
async fn a_sources_filter_passes_only_the_listed_source_keys_of_its_type() {
    let app = spawn_webhook_app().await;
    let rx = TestReceiver::start().await;
    new_endpoint(
        &app,
        json!({"url": rx.url, "events": ["tag.*"],
               "filters": {"sources": {"tag.created": ["system"]}}}),
    )
    .await;
    let tag = new_tag(&app, &app.key, "via the api").await;
    trigger(&app, &app.workspace_id, "tag.created", None).await;
    app.patch(
        &format!("/tags/{}", tag["id"]),
        &app.key,
        json!({"name": "renamed"}),
    )
    .await
    .expect(200);
    let got = rx.wait_for(2).await;
    rx.stays_at(2, Duration::from_millis(300)).await;
    let mut seen: Vec<(String, String)> = got
        .iter()
        .map(|r| {
            let e = r.json();
            (
                e["type"].as_str().unwrap().to_string(),
                e["source"]["via"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    seen.sort();
    assert_eq!(
        seen,
        [
            ("tag.created".to_string(), "system".to_string()),
            ("tag.updated".to_string(), "api".to_string())
        ]
    );
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
    app.post(
        "/custom-fields",
        key,
        json!({"label": "Nickname", "key": "nickname", "type": "text"}),
    )
    .await
    .expect(201);
    app.post(
        "/contacts",
        key,
        json!({"first_name": "Ann", "last_name": "Lee", "phone": "+15550100123",
               "email": "ann@example.com", "chan_d_phone": "+15550100999",
               "chan_a_username": "ann_a", "chan_c_username": "ann_c",
               "chan_e_username": "ann_e", "custom_fields": {"nickname": "Annie"}}),
    )
    .await
    .expect(201)
    .body
}

#[track_caller]
fn lacks(data: &Value, fields: &[&str]) {
    for f in fields {
        assert!(data.get(*f).is_none(), "`{f}` was sent: {data}");
    }
}

#[tokio::test]
async fn contact_created_omits_contact_details_unless_the_endpoint_opted_in() {
    let app = spawn_webhook_app().await;
    let [plain, content, details] = three_endpoints(&app, &["contact.created"]).await;
    let contact = full_contact(&app, &app.key).await;

    for rx in [&plain, &content] {
        let data = rx.wait_for(1).await[0].json()["data"].clone();
        lacks(&data, &CONTACT_DETAILS);
        assert_eq!(data["id"], contact["id"]);
    }
    let data = details.wait_for(1).await[0].json()["data"].clone();
    assert_eq!(data["first_name"], "Ann");
    assert_eq!(data["last_name"], "Lee");
    assert_eq!(data["name"], contact["name"]);
    assert_eq!(data["phone"], "+15550100123");
    assert_eq!(data["email"], "ann@example.com");
    assert_eq!(data["chan_d_phone"], "+15550100999");
    assert_eq!(data["chan_a_username"], "ann_a");
    assert_eq!(data["chan_c_username"], "ann_c");
    assert_eq!(data["chan_e_username"], "ann_e");
    assert_eq!(data["custom_fields"], json!({"nickname": "Annie"}));
}

#[tokio::test]
async fn contact_updated_names_private_fields_in_changes_but_never_their_previous_values() {
    let app = spawn_webhook_app().await;
    let [plain, _content, details] = three_endpoints(&app, &["contact.updated"]).await;
    let contact = full_contact(&app, &app.key).await;
    app.patch(
        &format!("/contacts/{}", contact["id"]),
        &app.key,
        json!({"email": "bea@example.com", "first_name": "Bea", "country_code": "DE"}),
    )
    .await
    .expect(200);

    let event = plain.wait_for(1).await[0].json();
    assert_eq!(event["type"], "contact.updated");
    lacks(&event["data"], &CONTACT_DETAILS);
    let changes = &event["changes"];
    assert_eq!(changes["email"], Value::Null, "{changes}");
    assert!(
        changes.get("email").is_some(),
        "the name is kept: {changes}"
    );
    assert!(changes.get("first_name").is_some(), "{changes}");
    assert_eq!(changes["first_name"], Value::Null);
    assert!(
        changes.get("country_code").is_some(),
        "non-private changes are listed too: {changes}"
    );
    assert!(!plain.received()[0]
        .body
        .windows(b"ann@example.com".len())
        .any(|w| w == b"ann@example.com"));

    let event = details.wait_for(1).await[0].json();
    assert_eq!(event["data"]["email"], "bea@example.com");
    assert_eq!(event["changes"]["email"], "ann@example.com");
    assert_eq!(event["changes"]["first_name"], "Ann");
}

#[tokio::test]
async fn note_created_carries_its_body_only_with_include_content() {
    let app = spawn_webhook_app().await;
    let [plain, content, details] = three_endpoints(&app, &["note.created"]).await;
    let contact = app
        .post("/contacts", &app.key, json!({"first_name": "Ann"}))
        .await
        .expect(201)
        .body;
    app.post(
        &format!("/contacts/{}/notes", contact["id"]),
        &app.key,
        json!({"body": "called back about the invoice"}),
    )
    .await
    .expect(201);
    for rx in [&plain, &details] {
        let event = rx.wait_for(1).await[0].json();
        assert_eq!(event["type"], "note.created");
        lacks(&event["data"], &["body"]);
    }
    let event = content.wait_for(1).await[0].json();
    assert_eq!(event["data"]["body"], "called back about the invoice");
}

#[tokio::test]
async fn a_triggered_call_ended_sends_each_private_group_only_to_endpoints_that_opted_in() {
    let app = spawn_webhook_app().await;
    let [plain, content, details] = three_endpoints(&app, &["call.*"]).await;
    let both = TestReceiver::start().await;
    new_endpoint(
        &app,
        json!({"url": both.url, "events": ["call.ended"],
               "include_content": true, "include_contact_details": true}),
    )
    .await;
    trigger(&app, &app.workspace_id, "call.ended", None).await;
    let private = ["summary", "transcript", "from_number", "to_number"];
    let data = |rx: &TestReceiver| {
        let rx = rx.received();
        rx[0].json()["data"].clone()
    };
    for rx in [&plain, &content, &details, &both] {
        rx.wait_for(1).await;
    }
    lacks(&data(&plain), &private);
    let c = data(&content);
    assert!(
        c["summary"].is_string() && c["transcript"].is_string(),
        "{c}"
    );
    lacks(&c, &["from_number", "to_number"]);
    let d = data(&details);
    assert!(
        d["from_number"].is_string() && d["to_number"].is_string(),
        "{d}"
    );
    lacks(&d, &["summary", "transcript"]);
    let b = data(&both);
    for f in private {
        assert!(b[f].is_string(), "{f} missing: {b}");
    }
}

#[tokio::test]
async fn a_hipaa_workspace_never_sends_content_or_contact_details() {
    let app = spawn_webhook_app().await;
    let (ws, key) = hipaa_workspace(&app).await;
    let rx = TestReceiver::start().await;
    app.post("/webhooks", &key, json!({"url": rx.url, "events": ["*"]}))
        .await
        .expect(201);
    for flag in ["include_content", "include_contact_details"] {
        app.post(
            "/webhooks",
            &key,
            json!({"url": rx.url, "events": ["*"], flag: true}),
        )
        .await
        .expect_error(422, "validation_failed");
    }
    full_contact(&app, &key).await;
    trigger(&app, &ws, "call.ended", None).await;
    trigger(&app, &ws, "booking.created", None).await;
    let got = rx.wait_for(3).await;
    rx.stays_at(3, Duration::from_millis(200)).await;
    for r in &got {
        let event = r.json();
        let data = &event["data"];
        match r.event_type() {
            "contact.created" => lacks(data, &CONTACT_DETAILS),
            "call.ended" => lacks(data, &["summary", "transcript", "from_number", "to_number"]),
            "booking.created" => lacks(
                data,
                &[
                    "conversation_summary",
                    "documents",
                    "customer_name",
                    "customer_phone",
                ],
            ),
            other => panic!("unexpected {other}"),
        }
        assert_eq!(event["workspace_id"], ws.as_str());
    }
}

// ----- 12. The operator trigger -----

#[tokio::test]
async fn the_operator_trigger_emits_a_catalog_event_through_the_same_pipeline() {
    let app = spawn_webhook_app().await;
    let rx = TestReceiver::start().await;
    let (_, secret) = hook(&app, &rx.url, &["booking.*", "order.paid"]).await;
    let r = app
        .admin_post(
            &format!("/admin/workspaces/{}/events", app.workspace_id),
            json!({"type": "booking.created"}),
        )
        .await
        .expect(202);
    assert_eq!(r.body["object"], "event");
    let id = r.body["id"].as_str().unwrap().to_string();
    assert!(id.starts_with("evt_"), "{}", r.body);
    let got = rx.wait_for(1).await;
    assert_eq!(got[0].event_id(), id);
    let event = got[0].json();
    assert_eq!(event["id"], id.as_str());
    assert_eq!(event["type"], "booking.created");
    assert_eq!(event["resource"]["type"], "booking");
    assert!(event["resource"]["id"].is_string());
    assert!(event["data"].is_object() && !event["data"].as_object().unwrap().is_empty());
    lacks(
        &event["data"],
        &["customer_name", "customer_phone", "conversation_summary"],
    );
    assert!(signature::verify(
        got[0].header("x-service-signature"),
        &got[0].body,
        &secret,
        now_unix(),
        300
    ));

    let id = trigger(
        &app,
        &app.workspace_id,
        "order.paid",
        Some(json!({"id": 77, "paid_amount": 12.5})),
    )
    .await;
    let got = rx.wait_for(2).await;
    let event = got[1].json();
    assert_eq!(event["id"], id.as_str());
    assert_eq!(event["data"], json!({"id": 77, "paid_amount": 12.5}));
    assert_eq!(event["resource"], json!({"type": "order", "id": "77"}));
    // Types outside the subscription are not sent.
    trigger(&app, &app.workspace_id, "tag.created", None).await;
    rx.stays_at(2, Duration::from_millis(200)).await;
}

#[tokio::test]
async fn the_operator_trigger_refuses_unknown_types_workspaces_and_non_object_data() {
    let app = spawn_webhook_app().await;
    let at = format!("/admin/workspaces/{}/events", app.workspace_id);
    for t in ["booking.nope", "webhook.test", "*", ""] {
        let r = app.admin_post(&at, json!({"type": t})).await;
        let r = r.expect_error(422, "validation_failed");
        assert_eq!(r.paths(), ["type"], "{}", r.body);
    }
    let r = app
        .admin_post(&at, json!({"type": "booking.created", "data": [1, 2]}))
        .await
        .expect_error(422, "validation_failed");
    assert_eq!(r.paths(), ["data"]);
    app.admin_post(&at, json!({}))
        .await
        .expect_error(422, "validation_failed");
    app.admin_post(
        "/admin/workspaces/ws_doesnotexist/events",
        json!({"type": "booking.created"}),
    )
    .await
    .expect_error(404, "not_found");
    let anonymous = app
        .client
        .post(format!("{}{at}", app.admin))
        .json(&json!({"type": "booking.created"}))
        .send()
        .await
        .unwrap();
    assert_eq!(anonymous.status(), 401, "the admin token is required");
}

#[tokio::test]
async fn the_cli_trigger_delivers_the_event_it_prints() {
    let app = spawn_webhook_app().await;
    let rx = TestReceiver::start().await;
    hook(&app, &rx.url, &["booking.created"]).await;
    let args = vec![
        "admin".to_string(),
        "--admin-url".into(),
        app.admin.clone(),
        "--admin-token".into(),
        ADMIN_TOKEN.into(),
        "trigger".into(),
        "booking.created".into(),
        "--workspace".into(),
        app.workspace_id.clone(),
    ];
    let out = tokio::task::spawn_blocking(move || {
        std::process::Command::new(env!("CARGO_BIN_EXE_switchboard"))
            .args(&args)
            .env_remove("SWITCHBOARD_ADMIN_URL")
            .env_remove("SWITCHBOARD_ADMIN_TOKEN")
            .output()
            .expect("the CLI runs")
    })
    .await
    .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stdout} {stderr}");
    let printed: Value = serde_json::from_str(&stdout).expect("JSON on stdout");
    let id = printed["id"].as_str().unwrap();
    assert!(id.starts_with("evt_"), "{printed}");
    let got = rx.wait_for(1).await;
    assert_eq!(got[0].event_id(), id);
    assert_eq!(got[0].event_type(), "booking.created");
}

// ----- 13. Test sends and redelivery -----

#[tokio::test]
async fn the_test_call_sends_a_signed_sample_now_and_reports_how_it_went() {
    let app = spawn_webhook_app().await;
    let rx = TestReceiver::start().await;
    let (id, secret) = hook(&app, &rx.url, &["*", "tag.created"]).await;
    let at = format!("/webhooks/{id}/test");
    let r = app.post(&at, &app.key, json!({})).await.expect(200);
    assert_eq!(r.body["delivered"], true, "{}", r.body);
    assert_eq!(r.body["status"], 200);
    assert_eq!(r.body["error"], Value::Null);
    assert!(r.body["duration_ms"].is_u64(), "{}", r.body);
    let got = rx.wait_for(1).await;
    let sent = &got[0];
    assert_eq!(sent.event_type(), "tag.created");
    assert_eq!(sent.attempt(), 1);
    assert_eq!(sent.header("user-agent"), "Service-Webhooks/2.0");
    let event = sent.json();
    assert_eq!(event["type"], "tag.created");
    assert_eq!(event["object"], "event");
    assert_eq!(sent.event_id(), event["id"].as_str().unwrap());
    assert!(signature::verify(
        sent.header("x-service-signature"),
        &sent.body,
        &secret,
        now_unix(),
        300
    ));

    rx.respond_with(500);
    let r = app.post(&at, &app.key, json!({})).await.expect(200);
    assert_eq!(r.body["delivered"], false, "{}", r.body);
    assert_eq!(r.body["status"], 500);
    assert!(r.body["error"].is_string());
    assert!(r.body["duration_ms"].is_u64());

    let r = app
        .post(&at, &app.key, json!({"event": "call.ended"}))
        .await
        .expect(200);
    assert_eq!(r.body["status"], 500);
    let got = rx.wait_for(3).await;
    assert_eq!(got[2].event_type(), "call.ended");
    lacks(
        &got[2].json()["data"],
        &["summary", "transcript", "from_number", "to_number"],
    );
    let r = app
        .post(&at, &app.key, json!({"event": "nope.created"}))
        .await;
    let r = r.expect_error(422, "validation_failed");
    assert_eq!(r.paths(), ["event"]);
    app.post(&at, &app.key, json!({"events": "tag.created"}))
        .await
        .expect_error(422, "validation_failed");

    let (dead, _) = hook(&app, &closed_url().await, &["*"]).await;
    let r = app
        .post(&format!("/webhooks/{dead}/test"), &app.key, json!({}))
        .await
        .expect(200);
    assert_eq!(r.body["delivered"], false);
    assert_eq!(r.body["status"], Value::Null);
    assert!(r.body["error"].is_string(), "{}", r.body);
    // A test send is not a queued delivery: no retries follow.
    rx.stays_at(3, Duration::from_millis(300)).await;
}

#[tokio::test]
async fn the_test_event_defaults_to_the_first_exact_entry_else_webhook_test() {
    let app = spawn_webhook_app().await;
    let rx = TestReceiver::start().await;
    let cases: [(&[&str], &str); 4] = [
        (&["*"], "webhook.test"),
        (&["contact.*", "booking.*"], "webhook.test"),
        (
            &["contact.*", "order.paid", "*", "tag.created"],
            "order.paid",
        ),
        (&["message.received"], "message.received"),
    ];
    for (i, (events, expected)) in cases.iter().enumerate() {
        let (id, _) = hook(&app, &rx.url, events).await;
        let r = app
            .post(&format!("/webhooks/{id}/test"), &app.key, json!({}))
            .await
            .expect(200);
        assert_eq!(r.body["delivered"], true);
        let got = rx.wait_for(i + 1).await;
        assert_eq!(got[i].event_type(), *expected, "events {events:?}");
        assert_eq!(got[i].json()["type"], *expected);
    }
    let (id, _) = hook(&app, &rx.url, &["tag.*"]).await;
    app.post(
        &format!("/webhooks/{id}/test"),
        &app.key,
        json!({"event": "webhook.test"}),
    )
    .await
    .expect(200);
    let got = rx.wait_for(5).await;
    assert_eq!(got[4].event_type(), "webhook.test");
}

#[tokio::test]
async fn redeliver_queues_the_same_event_again_and_answers_202() {
    let app = spawn_webhook_app().await;
    let rx = TestReceiver::start().await;
    let (id, _) = hook(&app, &rx.url, &["tag.*"]).await;
    new_tag(&app, &app.key, "again").await;
    let first = rx.wait_for(1).await;
    let d = deliveries_when(&app, &id, "delivered", |d| d[0]["status"] == "delivered").await;
    let delivery = d[0]["id"].as_u64().expect("an integer id");
    let r = app
        .post(
            &format!("/webhooks/{id}/deliveries/{delivery}/redeliver"),
            &app.key,
            json!({}),
        )
        .await
        .expect(202);
    assert_eq!(r.body["object"], "webhook_delivery");
    assert_eq!(r.body["event_id"], first[0].event_id());
    assert!(r.body["id"].is_u64(), "{}", r.body);
    let got = rx.wait_for(2).await;
    assert_eq!(got[1].event_id(), first[0].event_id());
    assert_eq!(got[1].body, first[0].body, "the same body");
    assert_eq!(got[1].attempt(), 1);
    let d = deliveries_when(&app, &id, "both delivered", |d| {
        d.len() == 2 && d.iter().all(|x| x["status"] == "delivered")
    })
    .await;
    assert!(d.iter().all(|x| x["event_id"] == first[0].event_id()));

    let base = format!("/webhooks/{id}/deliveries");
    app.post(&format!("{base}/999999999/redeliver"), &app.key, json!({}))
        .await
        .expect_error(404, "not_found");
    for bad in ["abc", "0", "-1", "1.5"] {
        let r = app
            .post(&format!("{base}/{bad}/redeliver"), &app.key, json!({}))
            .await;
        assert_eq!(r.status, 400, "{bad}: {}", r.body);
        assert_eq!(r.code(), "invalid_request", "{bad}: {}", r.body);
    }
    // Another endpoint's delivery id is unknown here.
    let (other, _) = hook(&app, &rx.url, &["order.*"]).await;
    app.post(
        &format!("/webhooks/{other}/deliveries/{delivery}/redeliver"),
        &app.key,
        json!({}),
    )
    .await
    .expect_error(404, "not_found");
    rx.stays_at(2, Duration::from_millis(200)).await;
}

// ----- 14. The delivery list -----

#[tokio::test]
async fn the_delivery_list_is_paginated_newest_first_with_integer_ids_and_every_attempt() {
    let app = spawn_webhook_app().await;
    let rx = TestReceiver::start().await;
    let (id, _) = hook(&app, &rx.url, &["tag.*"]).await;
    for name in ["t0", "t1", "t2"] {
        new_tag(&app, &app.key, name).await;
    }
    let got = rx.wait_for(3).await;
    let event_of = |name: &str| {
        got.iter()
            .find(|r| r.json()["data"]["name"] == name)
            .unwrap()
            .event_id()
            .to_string()
    };
    deliveries_when(&app, &id, "3 delivered", |d| {
        d.len() == 3 && d.iter().all(|x| x["status"] == "delivered")
    })
    .await;
    let page = app
        .get(&format!("/webhooks/{id}/deliveries?limit=2"), &app.key)
        .await
        .expect(200)
        .body;
    assert_eq!(page["object"], "list");
    assert_eq!(page["has_more"], true);
    let data = page["data"].as_array().unwrap();
    assert_eq!(data.len(), 2);
    assert_eq!(data[0]["event_id"], event_of("t2"));
    assert_eq!(data[1]["event_id"], event_of("t1"));
    let (a, b) = (
        data[0]["id"].as_u64().unwrap(),
        data[1]["id"].as_u64().unwrap(),
    );
    assert!(a > b, "newest first: {a} {b}");
    for d in data {
        assert_eq!(d["object"], "webhook_delivery");
        assert_eq!(d["endpoint_id"], id.as_str());
        assert_eq!(d["event_type"], "tag.created");
        assert_eq!(d["status"], "delivered");
        assert_eq!(d["attempt_count"], 1);
        assert_eq!(d["next_attempt_at"], Value::Null);
        assert_millis_utc(&d["created_at"]);
        let attempts = d["attempts"].as_array().unwrap();
        assert_eq!(attempts.len(), 1);
        assert_eq!(attempts[0]["number"], 1);
        assert_eq!(attempts[0]["status_code"], 200);
        assert_eq!(attempts[0]["error"], Value::Null);
        assert!(attempts[0]["duration_ms"].is_u64());
        assert_millis_utc(&attempts[0]["at"]);
        assert!(d.get("body").is_none(), "{d}");
    }
    let cursor = page["next_cursor"].as_str().unwrap();
    let rest = app
        .get(
            &format!("/webhooks/{id}/deliveries?limit=2&starting_after={cursor}"),
            &app.key,
        )
        .await
        .expect(200)
        .body;
    assert_eq!(rest["has_more"], false);
    assert_eq!(rest["data"].as_array().unwrap().len(), 1);
    assert_eq!(rest["data"][0]["event_id"], event_of("t0"));
    app.get(&format!("/webhooks/{id}/deliveries?limit=0"), &app.key)
        .await
        .expect_error(422, "validation_failed");
}

// ----- 15. Durability -----

#[tokio::test]
async fn a_pending_delivery_of_an_acknowledged_write_is_sent_after_a_restart() {
    let slow_ladder = |s: &mut Settings| {
        s.webhooks.retry_delays = vec![Duration::from_millis(1500); 6];
    };
    let app = spawn_webhook_app_with(slow_ladder).await;
    let rx = TestReceiver::start().await;
    rx.respond_with(500);
    let (id, _) = hook(&app, &rx.url, &["tag.*"]).await;
    new_tag(&app, &app.key, "survives").await;
    let first = rx.wait_for(1).await[0].event_id().to_string();
    deliveries_when(&app, &id, "attempt 1", |d| d[0]["attempt_count"] == 1).await;

    let app = restart_webhook_app(app, slow_ladder).await;
    rx.respond_with(200);
    let got = rx
        .wait_until("the retry after the restart", |all| {
            all.iter()
                .any(|r| r.event_id() == first && r.attempt() >= 2)
        })
        .await;
    assert!(got.iter().all(|r| r.event_id() == first));
    let d = deliveries_when(&app, &id, "delivered", |d| d[0]["status"] == "delivered").await;
    assert_eq!(d.len(), 1);
    assert_eq!(d[0]["event_id"], first.as_str());
}

#[tokio::test]
async fn after_a_restart_a_pending_retry_keeps_its_schedule() {
    let clock = ManualClock::new(chrono::Utc::now());
    let ladder = |s: &mut Settings| s.webhooks.retry_delays = vec![HOUR; 6];
    let app = spawn_clocked_webhook_app(clock.clone(), ladder).await;
    let rx = TestReceiver::start().await;
    rx.respond_with(500);
    let (id, _) = hook(&app, &rx.url, &["tag.*"]).await;
    new_tag(&app, &app.key, "scheduled").await;
    let first = rx.wait_for(1).await[0].event_id().to_string();
    let d = deliveries_when(&app, &id, "attempt 1", |d| d[0]["attempt_count"] == 1).await;
    assert_eq!(
        d[0]["next_attempt_at"],
        switchboard_actors::clock::rfc3339_millis::format(
            &(clock.now() + chrono::Duration::hours(1))
        )
    );

    let app = restart_webhook_app(app, ladder).await;
    rx.respond_with(200);
    clock.advance(HOUR - MINUTE);
    rx.stays_at(1, Duration::from_millis(300)).await;
    clock.advance(MINUTE);
    let got = rx.wait_for(2).await;
    assert_eq!(got[1].event_id(), first);
    assert_eq!(got[1].attempt(), 2);
    deliveries_when(&app, &id, "delivered", |d| d[0]["status"] == "delivered").await;
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

#[tokio::test]
async fn a_retry_pending_at_kill_9_is_delivered_after_the_restart_without_any_proxy() {
    let dir = tempfile::tempdir().unwrap();
    let proxy = TestReceiver::start().await;
    let proxy_url = proxy.url.trim_end_matches("/hook").to_string();
    let mut server = launch_with_proxy(dir.path(), &proxy_url).await;
    let key = server.key.clone().expect("a fresh folder prints a key");
    let client = reqwest::Client::builder().no_proxy().build().unwrap();
    let rx = TestReceiver::start().await;
    rx.respond_with(500);

    let created: Value = client
        .post(server.url("/webhooks"))
        .bearer_auth(&key)
        .json(&json!({"url": rx.url, "events": ["tag.*"]}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let id = created["id"].as_str().expect("an endpoint").to_string();
    let r = client
        .post(server.url("/tags"))
        .bearer_auth(&key)
        .json(&json!({"name": "acknowledged"}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 201);
    let first = rx.wait_for(1).await[0].event_id().to_string();
    tokio::time::sleep(Duration::from_millis(200)).await;

    server.child.start_kill().unwrap();
    server.child.wait().await.unwrap();
    crate::store_safety::assert_store_checks(dir.path());
    rx.respond_with(200);
    let n = rx.received().len();

    let server = launch_with_proxy(dir.path(), &proxy_url).await;
    assert!(server.key.is_none(), "the same folder");
    let got = rx
        .wait_until("the retry after kill -9", |all| {
            all.len() > n && all[n..].iter().any(|r| r.event_id() == first)
        })
        .await;
    assert!(got.iter().all(|r| r.event_id() == first), "no other event");
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    loop {
        let list: Value = client
            .get(server.url(&format!("/webhooks/{id}/deliveries")))
            .bearer_auth(&key)
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        let data = list["data"].as_array().unwrap();
        assert_eq!(data.len(), 1, "{list}");
        if data[0]["status"] == "delivered" {
            assert_eq!(data[0]["event_id"], first.as_str());
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "not delivered: {list}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(
        proxy.received().is_empty(),
        "a delivery went through the proxy"
    );
}

// ----- 16. A slow endpoint does not hold up the others -----

#[tokio::test]
async fn a_receiver_that_hangs_does_not_delay_another_endpoints_deliveries() {
    let app = spawn_webhook_app_with(|s| s.webhooks.timeout = Duration::from_secs(5)).await;
    let slow = TestReceiver::start().await;
    slow.answer_after(Duration::from_secs(20));
    let fast = TestReceiver::start().await;
    let (slow_id, _) = hook(&app, &slow.url, &["tag.*"]).await;
    hook(&app, &fast.url, &["tag.*"]).await;
    let started = tokio::time::Instant::now();
    for i in 0..12 {
        new_tag(&app, &app.key, &format!("tag {i}")).await;
    }
    fast.wait_for(12).await;
    let took = started.elapsed();
    assert!(
        took < Duration::from_secs(4),
        "the fast receiver waited {took:?}"
    );
    assert!(!slow.received().is_empty(), "the slow one is being tried");
    let d = deliveries(&app, &slow_id).await;
    assert_eq!(d.len(), 12);
    assert!(
        d.iter().all(|x| x["attempt_count"] == 0),
        "the slow receiver is still stuck on its first attempts"
    );
}
