use super::*;

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
    let contact = contact_named(&app, "Ann").await;
    app.post(
        &format!("/contacts/{}/notes", contact),
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
        c["summary"].is_string() && c.get("transcript").is_some(),
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
        assert!(b.get(f).is_some(), "{f} missing: {b}");
    }
}

#[tokio::test]
async fn a_hipaa_workspace_never_sends_content_or_contact_details() {
    let app = spawn_webhook_app().await;
    let (ws, key) = hipaa_workspace(&app).await;
    let rx = TestReceiver::start().await;
    app.post_as(&key, "/webhooks", json!({"url": rx.url, "events": ["*"]}))
        .await
        .expect(201);
    for flag in ["include_content", "include_contact_details"] {
        app.post_as(
            &key,
            "/webhooks",
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

/// A record event's `data` is the record as GET answers it (an endpoint that opted in to
/// content and contact details sees all of it), `object` included.
#[tokio::test]
async fn a_record_events_data_is_the_record_as_get_answers_it() {
    let app = spawn_webhook_app().await;
    let rx = crate::receiver::TestReceiver::start().await;
    let events = [
        "contact.created",
        "tag.created",
        "product.created",
        "conversation.created",
        "conversation.comment_created",
    ];
    crate::webhooks::new_endpoint(
        &app,
        json!({"url": rx.url, "events": events,
               "include_content": true, "include_contact_details": true}),
    )
    .await;
    let contact = full_contact(&app, &app.key).await;
    let tag = app.post("/tags", json!({"name": "vip"})).await.created();
    let product = app
        .post(
            "/products",
            json!({"name": "Tea", "price": 4.5, "currency": "EUR"}),
        )
        .await
        .created();
    let conversation = app
        .post(
            "/conversations",
            json!({"contact_id": contact["id"], "channel": "api"}),
        )
        .await
        .created();
    let path = format!("/conversations/{}", conversation["id"]);
    let comment = app
        .post(&format!("{path}/comments"), json!({"body": "note"}))
        .await
        .created();

    rx.wait_for(events.len()).await;
    let data = |t: &str| rx.of_type(t)[0].json()["data"].clone();
    let contact_now = app.get(&format!("/contacts/{}", contact["id"])).await.ok();
    assert_eq!(data("contact.created"), contact_now);
    assert_eq!(data("tag.created"), tag);
    assert_eq!(data("product.created"), product);
    assert_eq!(data("conversation.created"), conversation);
    assert_eq!(data("conversation.comment_created"), comment);
    assert_eq!(data("contact.created")["object"], "contact");
}

#[tokio::test]
async fn lead_captured_withholds_every_part_of_the_contact_unless_opted_in() {
    let app = spawn_webhook_app().await;
    let [plain, content, details] = three_endpoints(&app, &["contact.lead_captured"]).await;
    let r = app
        .post(
            "/chat",
            json!({"message": "mail me at ann@example.com",
                   "contact": {"phone": "+15550100", "name": "Ann Lee"}}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);

    for rx in [&plain, &content] {
        let data = rx.wait_for(1).await[0].json()["data"].clone();
        lacks(&data, &CONTACT_DETAILS);
        assert!(data["id"].is_u64());
    }
    let data = details.wait_for(1).await[0].json()["data"].clone();
    assert_eq!(
        (&data["first_name"], &data["last_name"]),
        (&json!("Ann"), &json!("Lee"))
    );
    assert_eq!(data["email"], "ann@example.com");
}

#[tokio::test]
async fn a_redelivery_after_the_settings_were_lowered_sends_only_what_they_allow_now() {
    let app = spawn_webhook_app().await;
    let first = TestReceiver::start().await;
    let (id, _) = new_endpoint(
        &app,
        json!({"url": first.url, "events": ["contact.created"],
               "include_content": true, "include_contact_details": true}),
    )
    .await;
    full_contact(&app, &app.key).await;
    let sent = first.wait_for(1).await[0].json();
    assert_eq!(sent["data"]["email"], "ann@example.com");

    // A member may lower the settings, and then move the endpoint.
    let member = app.member_token("member", &["integrations"]).await;
    let at = format!("/webhooks/{id}");
    app.patch_as(
        &member,
        &at,
        json!({"include_content": false, "include_contact_details": false}),
    )
    .await
    .expect(200);
    let second = TestReceiver::start().await;
    app.patch_as(&member, &at, json!({"url": second.url}))
        .await
        .expect(200);
    let d = deliveries_when(&app, &id, "delivered", |d| d[0]["status"] == "delivered").await;
    app.post_as(
        &member,
        &format!("{at}/deliveries/{}/redeliver", d[0]["id"]),
        json!({}),
    )
    .await
    .expect(202);

    let again = second.wait_for(1).await[0].clone();
    let event = again.json();
    assert_eq!(event["id"], sent["id"], "the same event");
    lacks(&event["data"], &CONTACT_DETAILS);
    assert_eq!(event["data"]["id"], sent["data"]["id"]);
    for private in ["ann@example.com", "+15550100123", "Annie"] {
        assert!(
            !String::from_utf8_lossy(&again.body).contains(private),
            "{private} was sent again"
        );
    }
}

#[tokio::test]
async fn notes_a_person_wrote_are_content() {
    let app = spawn_webhook_app().await;
    let [plain, content, _details] = three_endpoints(
        &app,
        &["contact.opted_out", "contact.updated", "booking.created"],
    )
    .await;
    let contact = contact_named(&app, "Ann").await;
    let dnc = format!("/contacts/{contact}/dnc");
    app.put(
        &dnc,
        json!({"do_not_contact": true, "reason": "asked on the phone"}),
    )
    .await
    .expect(200);
    app.post(
        "/bookings",
        json!({"contact_id": contact, "service": "Checkup",
               "starts_at": "2031-05-01T10:00:00Z", "duration_minutes": 30,
               "notes": "bring the forms"}),
    )
    .await
    .expect(201);
    // Opting back in is an update like any other: the contact, and what changed.
    let back = app.put(&dnc, json!({"do_not_contact": false})).await.ok();
    for rx in [&plain, &content] {
        rx.wait_for(3).await;
    }
    let data = |rx: &TestReceiver, t: &str| rx.of_type(t)[0].json()["data"].clone();
    lacks(&data(&plain, "contact.opted_out"), &["reason"]);
    lacks(&data(&plain, "booking.created"), &["notes"]);
    assert_eq!(
        data(&content, "contact.opted_out")["reason"],
        "asked on the phone"
    );
    assert_eq!(
        data(&content, "booking.created")["notes"],
        "bring the forms"
    );

    let updated = plain.of_type("contact.updated")[0].json();
    assert_eq!(updated["data"]["object"], "contact");
    assert_eq!(updated["data"]["do_not_contact"], false);
    assert_eq!(updated["data"]["tags"], back["tags"]);
    assert_eq!(
        updated["changes"],
        json!({"do_not_contact": true, "do_not_contact_reason": null})
    );
    let updated = content.of_type("contact.updated")[0].json();
    assert_eq!(
        updated["changes"]["do_not_contact_reason"],
        "asked on the phone"
    );
}

#[tokio::test]
async fn a_new_reason_for_a_contact_already_opted_out_is_an_update_with_the_reason_as_content() {
    let app = spawn_webhook_app().await;
    let [plain, content, _details] = three_endpoints(&app, &["contact.*"]).await;
    let contact = contact_named(&app, "Ann").await;
    let dnc = format!("/contacts/{contact}/dnc");
    app.put(&dnc, json!({"do_not_contact": true, "reason": "first"}))
        .await
        .expect(200);
    app.put(&dnc, json!({"do_not_contact": true, "reason": "second"}))
        .await
        .expect(200);
    for rx in [&plain, &content] {
        rx.wait_for(3).await;
    }
    let updated = plain.of_type("contact.updated");
    assert_eq!(updated.len(), 1, "{:?}", plain.event_types());
    let updated = updated[0].json();
    assert_eq!(updated["changes"], json!({"do_not_contact_reason": null}));
    lacks(&updated["data"], &["do_not_contact_reason"]);
    let updated = content.of_type("contact.updated")[0].json();
    assert_eq!(
        updated["changes"],
        json!({"do_not_contact_reason": "first"})
    );
    assert_eq!(updated["data"]["do_not_contact_reason"], "second");
}
