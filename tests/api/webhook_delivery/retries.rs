use super::*;

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
    let (rx, id) = tag_hook_answering(&app, 500).await;
    new_tag(&app, &app.key, "orphan").await;
    rx.wait_for(1).await;
    app.delete(&format!("/webhooks/{id}")).await.expect(200);
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

/// A retry goes out at its `next_attempt_at`, not at the endpoint's next periodic look
/// (here 5 s apart, against a ladder of 300 ms).
#[tokio::test]
async fn a_retry_goes_out_when_it_falls_due_between_two_periodic_looks() {
    let app = spawn_webhook_app_with(|s| {
        s.webhooks.tick = Duration::from_secs(5);
        s.webhooks.retry_delays = vec![Duration::from_millis(300); 6];
    })
    .await;
    let rx = TestReceiver::start().await;
    rx.respond_with(500);
    let (id, _) = hook(&app, &rx.url, &["tag.*"]).await;
    new_tag(&app, &app.key, "on time").await;
    rx.wait_for(3).await;
    let d = deliveries_when(&app, &id, "three attempts", |d| {
        d[0]["attempt_count"].as_u64() >= Some(3)
    })
    .await;
    let at = |n: usize| {
        let text = d[0]["attempts"][n]["at"].as_str().unwrap();
        chrono::DateTime::parse_from_rfc3339(text).unwrap()
    };
    for n in 1..3 {
        let gap = (at(n) - at(n - 1)).num_milliseconds();
        assert!(
            (300..2_500).contains(&gap),
            "attempt {} came {gap} ms after the one before: {}",
            n + 1,
            d[0]
        );
    }
}
