use super::*;

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
    app.patch(&at, json!({"name": "Gold"})).await.expect(200);
    let got = rx.wait_for(2).await;
    let updated = got[1].json();
    assert_eq!(updated["type"], "tag.updated");
    assert_eq!(updated["resource"]["id"], tag["id"].to_string());
    assert_eq!(updated["data"]["name"], "Gold");
    assert_eq!(updated["changes"]["name"], "VIP", "{updated}");
    assert!(updated["changes"].get("updated_at").is_none());
    app.delete(&at).await.expect(200);
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
async fn a_second_rotation_inside_the_overlap_keeps_every_replaced_secret_signing() {
    let clock = ManualClock::new(chrono::Utc::now());
    let app = spawn_clocked_webhook_app(clock.clone(), |_| {}).await;
    let rx = TestReceiver::start().await;
    let (id, first) = hook(&app, &rx.url, &["tag.*"]).await;
    let rotate = || async {
        let r = app
            .post(&format!("/webhooks/{id}/rotate-secret"), json!({}))
            .await
            .ok();
        r["secret"].as_str().unwrap().to_string()
    };
    let second = rotate().await;
    clock.advance(HOUR);
    let third = rotate().await;

    new_tag(&app, &app.key, "after two rotations").await;
    let r = &rx.wait_for(1).await[0];
    let signed: Vec<String> = [&third, &second, &first]
        .iter()
        .map(|s| signature::sign(s, r.signed_at(), &r.body))
        .collect();
    assert_eq!(
        r.signatures(),
        signed,
        "newest first, each replaced one still signing"
    );

    // Each replaced secret stops 24 hours after the rotation that replaced it.
    clock.advance(23 * HOUR + Duration::from_secs(60));
    new_tag(&app, &app.key, "the first overlap is over").await;
    let r = &rx.wait_for(2).await[1];
    let signed: Vec<String> = [&third, &second]
        .iter()
        .map(|s| signature::sign(s, r.signed_at(), &r.body))
        .collect();
    assert_eq!(r.signatures(), signed);
}

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
        .post(&format!("/webhooks/{id}/rotate-secret"), json!({}))
        .await
        .ok();
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
    let new = rotate(&app, &id).await;
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
    let new = rotate(&app, &id).await;
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
