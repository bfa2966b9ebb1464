use super::*;

// ----- 15. Durability -----

#[tokio::test]
async fn a_pending_delivery_of_an_acknowledged_write_is_sent_after_a_restart() {
    let slow_ladder = |s: &mut Settings| {
        s.webhooks.retry_delays = vec![Duration::from_millis(1500); 6];
    };
    let app = spawn_webhook_app_with(slow_ladder).await;
    let (rx, id) = tag_hook_answering(&app, 500).await;
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
    let (rx, id) = tag_hook_answering(&app, 500).await;
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

#[tokio::test]
async fn a_retry_pending_at_kill_9_is_delivered_after_the_restart_without_any_proxy() {
    let dir = tempfile::tempdir().unwrap();
    let proxy = TestReceiver::start().await;
    let proxy_url = proxy.url.trim_end_matches("/hook").to_string();
    let mut server = launch_with_proxy(dir.path(), &proxy_url).await;
    let key = server.key.clone().expect("a fresh folder prints a key");
    let rx = TestReceiver::start().await;
    rx.respond_with(500);

    let id = server.new_webhook(&key, &rx.url, &["tag.*"]).await;
    let r = server
        .send(
            reqwest::Method::POST,
            &key,
            "/tags",
            json!({"name": "acknowledged"}),
        )
        .await;
    assert_eq!(r.status(), 201);
    let first = rx.wait_for(1).await[0].event_id().to_string();
    tokio::time::sleep(Duration::from_millis(200)).await;

    server.kill_9().await;
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
        let list: Value = server
            .get_json(&key, &format!("/webhooks/{id}/deliveries"))
            .await;
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

#[tokio::test]
async fn deleting_an_endpoint_while_its_deliveries_fail_leaves_none_of_them_behind() {
    let mut app = spawn_webhook_app().await;
    for round in 0..3 {
        let (rx, id) = tag_hook_answering(&app, 500).await;
        // Tags made eight at a time, the endpoint deleted among them: wakes for
        // deliveries committed just before the delete must not start its actor again.
        let writes = async {
            for i in 0..20 {
                let names: Vec<String> = (0..8).map(|w| format!("r{round}-{i}-{w}")).collect();
                futures::future::join_all(names.iter().map(|n| new_tag(&app, &app.key, n))).await;
            }
        };
        let delete = async {
            rx.wait_for(8).await;
            app.delete(&format!("/webhooks/{id}")).await.expect(200);
        };
        tokio::join!(writes, delete);
    }
    // Long enough for a revived actor to retry (the ladder waits 50 ms).
    tokio::time::sleep(Duration::from_millis(500)).await;
    app.stop().await;
    crate::store_safety::assert_store_checks_once_released(app.dir.path()).await;
}

#[tokio::test]
async fn a_stop_waits_for_the_attempt_in_flight_instead_of_cutting_it() {
    let app = spawn_webhook_app().await;
    let (rx, id) = tag_hook(&app).await;
    // Answered well within the stop's grace period (10 s by default).
    rx.answer_after(Duration::from_millis(700));
    new_tag(&app, &app.key, "in flight at the stop").await;
    rx.wait_for(1).await;

    let app = restart_webhook_app(app, |_| {}).await;
    rx.respond_with(200);
    let d = deliveries_when(&app, &id, "the delivery", |d| d[0]["status"] != "pending").await;
    assert_eq!(d[0]["status"], "delivered", "{}", d[0]);
    assert_eq!(
        d[0]["attempt_count"], 1,
        "not cut, not sent again: {}",
        d[0]
    );
    rx.stays_at(1, Duration::from_millis(300)).await;
}
