use super::*;

#[tokio::test]
async fn a_410_stops_retries_at_once_disables_the_endpoint_and_notifies_the_owner() {
    let app = spawn_webhook_app().await;
    let (rx, id) = tag_hook_answering(&app, 410).await;
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

    let n = notifications(&app).await;
    assert_eq!(n["object"], "list");
    let data = n["data"].as_array().unwrap();
    assert_eq!(data.len(), 1, "{n}");
    assert_eq!(data[0]["endpoint_id"], id.as_str());
    assert!(data[0]["reason"].is_string());

    // Disabled is the system's state: a client may re-activate it, not pause it.
    let paused = app
        .patch(&format!("/webhooks/{id}"), json!({"status": "paused"}))
        .await;
    paused.expect_error(409, "conflict");
    let e = endpoint_when(&app, &id, "still disabled", |e| e["status"] == "disabled").await;
    assert!(e["disabled_reason"].is_string(), "{e}");

    rx.respond_with(200);
    new_tag(&app, &app.key, "later").await;
    rx.stays_at(1, Duration::from_millis(300)).await;
    assert_eq!(deliveries(&app, &id).await.len(), 1, "nothing queued");
}

#[tokio::test]
async fn after_a_410_nothing_more_goes_out_and_what_waited_is_delivered_once_re_enabled() {
    // One attempt on the wire at a time: whatever reaches the receiver after the first
    // was started after the 410 came back.
    let app = spawn_webhook_app_with(|s| {
        s.webhooks.max_in_flight = 1;
        s.webhooks.fast_max_in_flight = 1;
    })
    .await;
    let (rx, id) = tag_hook_answering(&app, 410).await;
    // The 410 comes back once the other nine wait behind the first attempt.
    rx.answer_after_with(Duration::from_millis(700), 410);
    let first = new_tag(&app, &app.key, "first").await;
    for n in 0..9 {
        new_tag(&app, &app.key, &format!("waiting-{n}")).await;
    }
    rx.respond_with(410);
    endpoint_when(&app, &id, "disabled", |e| e["status"] == "disabled").await;
    rx.stays_at(1, Duration::from_millis(500)).await;

    rx.respond_with(200);
    let active = app
        .patch(&format!("/webhooks/{id}"), json!({"status": "active"}))
        .await;
    assert_eq!(active.status, 200, "{}", active.body);
    let got = rx.wait_for(10).await;
    assert_eq!(got[0].json()["data"]["id"], first["id"]);
    let d = deliveries_when(&app, &id, "all settled", |d| {
        d.iter().all(|x| x["status"] != "pending")
    })
    .await;
    let failed: Vec<&Value> = d.iter().filter(|x| x["status"] == "failed").collect();
    assert_eq!(failed.len(), 1, "only the answer of the 410 failed: {d:?}");
    assert!(
        d.iter()
            .filter(|x| x["status"] == "delivered")
            .all(|x| x["attempt_count"] == 1),
        "no waiting delivery spent an attempt while the endpoint was disabled: {d:?}"
    );
}

#[tokio::test]
async fn after_seven_failed_attempts_the_delivery_is_failed_and_no_eighth_comes() {
    let app = spawn_webhook_app().await;
    let (rx, id) = tag_hook_answering(&app, 500).await;
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
    let (rx, id) = tag_hook_answering(&app, 503).await;
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

/// An app on a manual clock with a 20-minute ladder and a one-hour failure window, and a
/// `tag.*` endpoint whose receiver answers 500; the endpoint's id.
async fn failing_within_an_hour() -> (TestApp, ManualClock, TestReceiver, String) {
    let clock = ManualClock::new(chrono::Utc::now());
    let app = spawn_clocked_webhook_app(clock.clone(), |s| {
        s.webhooks.retry_delays = vec![20 * MINUTE; 6];
        s.webhooks.disable_after = HOUR;
    })
    .await;
    let (rx, id) = tag_hook_answering(&app, 500).await;
    (app, clock, rx, id)
}

#[tokio::test]
async fn an_endpoint_failing_for_the_whole_window_is_disabled_and_the_owner_notified() {
    let (app, clock, rx, id) = failing_within_an_hour().await;
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
    // The owner reads it among their own notifications (an API key reads the owner's);
    // another member does not.
    let mine = app.get("/notifications").await.ok();
    let told = mine["data"].as_array().unwrap();
    assert_eq!(told.len(), 1, "{mine}");
    assert_eq!(told[0]["object"], "notification");
    assert_eq!(told[0]["kind"], "webhook_endpoint_disabled");
    assert_eq!(told[0]["endpoint_id"], id.as_str());
    assert_eq!(told[0]["reason"], data[0]["reason"]);
    assert_eq!(told[0]["reminder_id"], Value::Null);
    assert_eq!(told[0]["id"], data[0]["id"]);
    let member = app.member_token("admin", &[]).await;
    let theirs = app.get_as(&member, "/notifications").await.ok();
    assert_eq!(theirs["data"], json!([]), "only the owner is told");

    // Disabled: nothing is sent, not even the pending retry, and new events are not kept.
    rx.respond_with(200);
    new_tag(&app, &app.key, "while disabled").await;
    clock.advance(HOUR);
    rx.stays_at(3, Duration::from_millis(300)).await;

    // PATCH active re-enables with a fresh count; the pending retry goes out.
    let e = app
        .patch(&format!("/webhooks/{id}"), json!({"status": "active"}))
        .await
        .ok();
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
    let (app, clock, rx, id) = failing_within_an_hour().await;
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
