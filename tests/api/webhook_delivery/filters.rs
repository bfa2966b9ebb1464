use super::*;

// ----- 8. Pause and resume -----

#[tokio::test]
async fn a_paused_endpoint_receives_nothing_and_events_of_the_pause_are_not_sent_after_resume() {
    let app = spawn_webhook_app().await;
    let (rx, id) = tag_hook(&app).await;
    let at = format!("/webhooks/{id}");
    app.patch(&at, json!({"status": "paused"}))
        .await
        .expect(200);
    new_tag(&app, &app.key, "during the pause").await;
    rx.stays_at(0, Duration::from_millis(300)).await;
    assert!(deliveries(&app, &id).await.is_empty(), "nothing queued");

    app.patch(&at, json!({"status": "active"}))
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
    let (rx, id) = tag_hook_answering(&app, 500).await;
    let at = format!("/webhooks/{id}");
    new_tag(&app, &app.key, "before the pause").await;
    rx.wait_for(1).await;
    app.patch(&at, json!({"status": "paused"}))
        .await
        .expect(200);
    rx.respond_with(200);
    let n = rx.received().len();
    rx.stays_at(n, Duration::from_millis(700)).await;
    let d = deliveries(&app, &id).await;
    assert_eq!(d[0]["status"], "pending", "{}", d[0]);

    app.patch(&at, json!({"status": "active"}))
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
    let contact = contact_named(&app, "Ann").await;
    app.post(
        "/orders",
        json!({"contact_id": contact,
               "items": [{"name": "Tea", "quantity": 1, "unit_price": 5.0}]}),
    )
    .await
    .expect(201);
    app.post(
        &format!("/contacts/{}/notes", contact),
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
    assert_eq!(star.event_types(), expected_star);
    assert_eq!(named.event_types(), ["message.received"]);
    assert_eq!(messages.event_types(), ["message.send_failed"]);
    assert_eq!(contacts.event_types(), ["contact.created"]);
    assert_eq!(exact.event_types(), ["order.paid", "tag.created"]);
    assert_eq!(
        overlapping.event_types(),
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
    app.post("/tags", json!({"name": "Once"})).await.expect(409);
    app.post("/tags", json!({"name": ""}))
        .await
        .expect_error(422, "validation_failed");
    not_found(app.patch("/tags/999999999", json!({"name": "x"})).await);
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
    let other_key = app.another_key().await;
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
    app.patch(&format!("/tags/{}", tag["id"]), json!({"name": "renamed"}))
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
