use super::*;

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
        .json(&json!({"type": "booking.created"}));
    assert_eq!(
        status_of(anonymous).await,
        401,
        "the admin token is required"
    );
}

#[tokio::test]
async fn the_cli_trigger_delivers_the_event_it_prints() {
    let app = spawn_webhook_app().await;
    let rx = TestReceiver::start().await;
    hook(&app, &rx.url, &["booking.created"]).await;
    let printed = cli_json(
        &app,
        &format!("trigger booking.created --workspace {}", app.workspace_id),
    )
    .await;
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
    let r = app.post(&at, json!({})).await.expect(200);
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
    let r = app.post(&at, json!({})).await.expect(200);
    assert_eq!(r.body["delivered"], false, "{}", r.body);
    assert_eq!(r.body["status"], 500);
    assert!(r.body["error"].is_string());
    assert!(r.body["duration_ms"].is_u64());

    let r = app
        .post(&at, json!({"event": "call.ended"}))
        .await
        .expect(200);
    assert_eq!(r.body["status"], 500);
    let got = rx.wait_for(3).await;
    assert_eq!(got[2].event_type(), "call.ended");
    lacks(
        &got[2].json()["data"],
        &["summary", "transcript", "from_number", "to_number"],
    );
    assert_eq!(
        got[2].json()["resource"]["type"],
        "call",
        "the real resource"
    );
    // webhook.test is about the endpoint.
    app.post(&at, json!({"event": "webhook.test"}))
        .await
        .expect(200);
    let got = rx.wait_for(4).await;
    assert_eq!(
        got[3].json()["resource"],
        json!({"type": "webhook_endpoint", "id": id})
    );
    let r = app.post(&at, json!({"event": "nope.created"})).await;
    let r = r.expect_error(422, "validation_failed");
    assert_eq!(r.paths(), ["event"]);
    app.post(&at, json!({"events": "tag.created"}))
        .await
        .expect_error(422, "validation_failed");

    let (dead, _) = hook(&app, &closed_url().await, &["*"]).await;
    let r = app
        .post(&format!("/webhooks/{dead}/test"), json!({}))
        .await
        .expect(200);
    assert_eq!(r.body["delivered"], false);
    assert_eq!(r.body["status"], Value::Null);
    assert!(r.body["error"].is_string(), "{}", r.body);
    // A test send is not a queued delivery: no retries follow.
    rx.stays_at(4, Duration::from_millis(300)).await;
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
            .post(&format!("/webhooks/{id}/test"), json!({}))
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
    let (rx, id) = tag_hook(&app).await;
    new_tag(&app, &app.key, "again").await;
    let first = rx.wait_for(1).await;
    let d = deliveries_when(&app, &id, "delivered", |d| d[0]["status"] == "delivered").await;
    let delivery = d[0]["id"].as_u64().expect("an integer id");
    let r = app
        .post(
            &format!("/webhooks/{id}/deliveries/{delivery}/redeliver"),
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
    not_found(
        app.post(&format!("{base}/999999999/redeliver"), json!({}))
            .await,
    );
    for bad in ["abc", "0", "-1", "1.5"] {
        let r = app
            .post(&format!("{base}/{bad}/redeliver"), json!({}))
            .await;
        assert_eq!(r.status, 400, "{bad}: {}", r.body);
        assert_eq!(r.code(), "invalid_request", "{bad}: {}", r.body);
    }
    // Another endpoint's delivery id is unknown here.
    let (other, _) = hook(&app, &rx.url, &["order.*"]).await;
    not_found(
        app.post(
            &format!("/webhooks/{other}/deliveries/{delivery}/redeliver"),
            json!({}),
        )
        .await,
    );
    rx.stays_at(2, Duration::from_millis(200)).await;
}

// ----- 14. The delivery list -----

#[tokio::test]
async fn the_delivery_list_is_paginated_newest_first_with_integer_ids_and_every_attempt() {
    let app = spawn_webhook_app().await;
    let (rx, id) = tag_hook(&app).await;
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
        .get(&format!("/webhooks/{id}/deliveries?limit=2"))
        .await
        .ok();
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
        .get(&format!(
            "/webhooks/{id}/deliveries?limit=2&starting_after={cursor}"
        ))
        .await
        .ok();
    assert_eq!(rest["has_more"], false);
    assert_eq!(rest["data"].as_array().unwrap().len(), 1);
    assert_eq!(rest["data"][0]["event_id"], event_of("t0"));
    app.get(&format!("/webhooks/{id}/deliveries?limit=0"))
        .await
        .expect_error(422, "validation_failed");
}
