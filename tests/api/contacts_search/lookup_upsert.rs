use super::*;

// ----- 6. Lookup -----

#[tokio::test]
async fn lookup_finds_by_phone_email_or_handle_with_or_without_at() {
    let app = spawn_app().await;
    let c = new_contact(
        &app,
        json!({
            "first_name": "Ann", "phone": "+15550100100", "email": "ann@example.com",
            "chan_a_username": "@only_a", "chan_c_username": "ann_c",
            "chan_e_username": "ann_e", "chan_d_phone": "+4930111222"
        }),
    )
    .await;
    let other = new_contact(
        &app,
        json!({"first_name": "Other", "phone": "+15550100999", "email": "other@example.com"}),
    )
    .await;
    let found = app
        .get(&format!("/contacts/lookup?phone={}", enc("+15550100100")))
        .await
        .ok();
    let full = app.get(&at(&c)).await.ok();
    assert_eq!(found, full, "lookup answers the whole contact record");
    let ann = id(&c);
    for query in [
        format!("phone={}", enc("+15550100100")),
        format!("email={}", enc("ann@example.com")),
        format!("email={}", enc("ANN@Example.com")),
        "handle=only_a".to_string(),
        format!("handle={}", enc("@only_a")),
        "handle=only_a&channel=chan_a".to_string(),
        format!("handle={}&channel=chan_a", enc("@only_a")),
        "handle=ann_c".to_string(),
        format!("handle={}&channel=chan_c", enc("@ann_c")),
        "handle=ann_e&channel=chan_e".to_string(),
        format!("handle={}&channel=chan_d", enc("+4930111222")),
        format!(
            "phone={}&email={}",
            enc("+15550100100"),
            enc("ann@example.com")
        ),
        format!("email={}&handle=ann_c", enc("ann@example.com")),
    ] {
        assert_eq!(looked_up(&app, &query).await, ann, "lookup {query}");
    }
    assert_eq!(
        looked_up(&app, &format!("phone={}", enc("+15550100999"))).await,
        id(&other)
    );
    for query in [
        "handle=only_a&channel=chan_c".to_string(),
        "handle=only_a&channel=chan_e".to_string(),
        "handle=ann_c&channel=chan_a".to_string(),
        format!(
            "phone={}&email={}",
            enc("+15550100100"),
            enc("other@example.com")
        ),
        format!("phone={}", enc("+15550100101")),
        format!("email={}", enc("ann@example.co")),
        "handle=only".to_string(),
        "handle=nobody".to_string(),
    ] {
        let r = app.get(&format!("/contacts/lookup?{query}")).await;
        assert_eq!(
            (r.status, r.code()),
            (404, "not_found"),
            "lookup {query}: {}",
            r.body
        );
    }
}

#[tokio::test]
async fn lookup_answers_the_oldest_of_several_matches() {
    let app = spawn_app().await;
    let first = new_contact(
        &app,
        json!({"first_name": "First", "phone": "+15550100100", "email": "dup@example.com",
               "chan_c_username": "dup"}),
    )
    .await;
    let second = new_contact(
        &app,
        json!({"first_name": "Second", "phone": "+15550100100", "email": "dup@example.com",
               "chan_c_username": "dup"}),
    )
    .await;
    let third = new_contact(
        &app,
        json!({"first_name": "Third", "phone": "+15550100100", "chan_a_username": "dup"}),
    )
    .await;
    let phone = format!("phone={}", enc("+15550100100"));
    assert_eq!(looked_up(&app, &phone).await, id(&first));
    assert_eq!(
        looked_up(&app, &format!("email={}", enc("dup@example.com"))).await,
        id(&first)
    );
    assert_eq!(looked_up(&app, "handle=dup").await, id(&first));
    assert_eq!(
        looked_up(&app, "handle=dup&channel=chan_a").await,
        id(&third)
    );
    // A newer contact changed to match stays behind the older one.
    app.patch(&at(&third), json!({"email": "dup@example.com"}))
        .await
        .expect(200);
    assert_eq!(
        looked_up(&app, &format!("email={}", enc("dup@example.com"))).await,
        id(&first)
    );
    app.delete(&at(&first)).await.expect(200);
    assert_eq!(looked_up(&app, &phone).await, id(&second));
    assert_eq!(looked_up(&app, "handle=dup").await, id(&second));
}

#[tokio::test]
async fn lookup_refuses_requests_without_a_criterion_or_with_a_bad_channel() {
    let app = spawn_app().await;
    new_contact(&app, json!({"first_name": "Ann", "chan_a_username": "ann"})).await;
    // No phone, email or handle: the details point at the query as a whole.
    for query in ["", "?phone=", "?email=&handle=", "?channel=chan_a"] {
        app.get(&format!("/contacts/lookup{query}"))
            .await
            .expect_error(422, "validation_failed");
    }
    for channel in ["email", "sms", "api", "fax", "chan_b"] {
        invalid(
            app.get(&format!("/contacts/lookup?handle=ann&channel={channel}"))
                .await,
            "channel",
        );
    }
}

// ----- 7. Upsert -----

#[tokio::test]
async fn upsert_without_phone_email_or_username_answers_422() {
    let app = spawn_app().await;
    for body in [
        json!({}),
        json!({"first_name": "Ann"}),
        json!({"first_name": "Ann", "tags": ["vip"], "country_code": "DE"}),
        json!({"phone": null, "email": null}),
    ] {
        let r = upsert(&app, body.clone()).await;
        assert_eq!(
            (r.status, r.code()),
            (422, "validation_failed"),
            "upsert {body}: {}",
            r.body
        );
    }
    assert_eq!(ids(&app, "").await, [0u64; 0], "nothing was created");
    invalid(upsert(&app, json!({"email": "nope"})).await, "email");
    invalid(
        upsert(&app, json!({"phone": "+15550100100", "nickname": "x"})).await,
        "nickname",
    );
    no_such(
        upsert(
            &app,
            json!({"phone": "+15550100100", "stage_id": 999_999_999}),
        )
        .await,
        "stage_id: no such stage",
    );
    invalid(
        upsert(
            &app,
            json!({"phone": "+15550100100", "assigned_to_user_id": "nobody"}),
        )
        .await,
        "assigned_to_user_id",
    );
    assert_eq!(ids(&app, "").await, [0u64; 0], "nothing was created");
}

#[tokio::test]
async fn upsert_creates_with_201_then_updates_with_200_adding_tags() {
    let app = spawn_app().await;
    let funnel = app.new_funnel("Sales", &["Lead"]).await;
    let member = app.new_user("Mia Member").await;
    app.add_member(&app.workspace_id, &member, "member", &[])
        .await;
    let r = upsert(
        &app,
        json!({"email": "Ann@Example.com", "first_name": "Ann", "tags": ["A"], "source": "form"}),
    )
    .await
    .created();
    let keys: BTreeSet<&str> = r.as_object().unwrap().keys().map(|k| &k[..]).collect();
    assert_eq!(
        keys,
        BTreeSet::from(["object", "created", "contact"]),
        "{r}"
    );
    assert_eq!(r["object"], "contact_upsert");
    assert_eq!(r["created"], true);
    let c = &r["contact"];
    assert_eq!(c["object"], "contact");
    assert_eq!(c["email"], "ann@example.com");
    assert_eq!(c["source"], "form");
    assert_eq!(c["channel"], "api");
    assert_eq!(tags_of(c), ["A"]);
    let got = app.get(&at(c)).await.ok();
    assert_eq!(&got, c);
    let r = upsert(
        &app,
        json!({"email": "ann@example.com", "last_name": "Lee", "tags": ["b", "a"],
               "stage_id": funnel["stages"][0]["id"], "assigned_to_user_id": member}),
    )
    .await
    .ok();
    assert_eq!(r["object"], "contact_upsert");
    assert_eq!(r["created"], false);
    let u = &r["contact"];
    assert_eq!(u["id"], c["id"]);
    assert_eq!(u["first_name"], "Ann", "omitted fields are kept");
    assert_eq!(u["last_name"], "Lee");
    assert_eq!(u["name"], "Ann Lee");
    assert_eq!(u["source"], "form");
    assert_eq!(tags_of(u), ["A", "b"], "tags are added, not replaced");
    assert_eq!(u["stage"]["stage_name"], "Lead");
    assert_eq!(u["assigned_to_user_id"], member.as_str());
    assert_eq!(u["created_at"], c["created_at"]);
    let got = app.get(&at(c)).await.ok();
    assert_eq!(&got, u);
    assert_eq!(ids(&app, "").await, [id(c)]);
    no_such(
        upsert(
            &app,
            json!({"email": "ann@example.com", "stage_id": 999_999_999}),
        )
        .await,
        "stage_id: no such stage",
    );
    for (body, path) in [
        (
            json!({"email": "ann@example.com", "assigned_to_user_id": "nobody"}),
            "assigned_to_user_id",
        ),
        (
            json!({"email": "ann@example.com", "tags": ["x".repeat(81)]}),
            "tags[0]",
        ),
        (
            json!({"email": "ann@example.com", "country_code": "XX"}),
            "country_code",
        ),
    ] {
        invalid(upsert(&app, body).await, path);
    }
    let got = app.get(&at(c)).await.ok();
    assert_eq!(&got, u, "refused upserts change nothing");
    let h = upsert(&app, json!({"chan_c_username": "@ann_c"}))
        .await
        .created();
    assert_eq!(h["contact"]["chan_c_username"], "ann_c");
    let h2 = upsert(&app, json!({"chan_c_username": "ann_c", "first_name": "C"}))
        .await
        .ok();
    assert_eq!(h2["contact"]["id"], h["contact"]["id"]);
    assert_eq!(h2["contact"]["first_name"], "C");
    let h3 = upsert(&app, json!({"chan_e_username": "ann_c"}))
        .await
        .created();
    assert_ne!(
        h3["contact"]["id"], h["contact"]["id"],
        "usernames match on their own channel only"
    );
}

#[tokio::test]
async fn upsert_matches_phone_before_email_before_usernames() {
    let app = spawn_app().await;
    // Oldest first: the username holder, then the email holder, then the phone holder, so
    // that age alone would pick the wrong one.
    let by_user = new_contact(
        &app,
        json!({"first_name": "User", "chan_a_username": "handle1"}),
    )
    .await;
    let by_email = new_contact(
        &app,
        json!({"first_name": "Email", "email": "e1@example.com"}),
    )
    .await;
    let by_phone = new_contact(
        &app,
        json!({"first_name": "Phone", "phone": "+15550100100"}),
    )
    .await;
    let matched = |r: Resp| {
        let r = r.expect(200);
        assert_eq!(r.body["created"], false, "{}", r.body);
        id(&r.body["contact"])
    };
    let r = upsert(
        &app,
        json!({"phone": "+15550100100", "email": "e1@example.com", "chan_a_username": "handle1",
               "last_name": "S1"}),
    )
    .await;
    assert_eq!(matched(r), id(&by_phone), "phone first");
    for c in [&by_user, &by_email] {
        let got = app.get(&at(c)).await.ok();
        assert_eq!(got["last_name"], Value::Null, "untouched: {got}");
    }
    let r = upsert(
        &app,
        json!({"email": "E1@example.com", "chan_a_username": "@handle1", "last_name": "S2"}),
    )
    .await;
    assert_eq!(matched(r), id(&by_email), "then email");
    let got = app.get(&at(&by_user)).await.ok();
    assert_eq!(got["last_name"], Value::Null, "untouched: {got}");
    let r = upsert(
        &app,
        json!({"chan_a_username": "handle1", "last_name": "S3"}),
    )
    .await;
    assert_eq!(matched(r), id(&by_user), "then usernames, oldest first");
    let r = upsert(
        &app,
        json!({"phone": "+19990000001", "email": "e1@example.com", "last_name": "S4"}),
    )
    .await;
    assert_eq!(
        matched(r),
        id(&by_email),
        "an unmatched phone falls through to email"
    );
    let by_chan_d = new_contact(
        &app,
        json!({"first_name": "D", "chan_d_phone": "+4930111222"}),
    )
    .await;
    let r = upsert(
        &app,
        json!({"phone": "+4930111222", "email": "e1@example.com", "last_name": "S5"}),
    )
    .await;
    assert_eq!(matched(r), id(&by_chan_d), "phone matches a channel phone");
    let r = upsert(
        &app,
        json!({"chan_d_phone": "+4930111222", "last_name": "S6"}),
    )
    .await;
    assert_eq!(matched(r), id(&by_chan_d));
    let r = upsert(
        &app,
        json!({"chan_d_phone": "+15550100100", "email": "e1@example.com", "last_name": "S7"}),
    )
    .await;
    assert_eq!(matched(r), id(&by_phone), "a channel phone matches a phone");
    assert_eq!(ids(&app, "").await.len(), 4, "no upsert created a contact");
}

#[tokio::test]
async fn an_upsert_that_tags_stages_or_assigns_tells_it_as_those_routes_do() {
    let app = crate::webhooks::spawn_webhook_app().await;
    let rx = crate::receiver::TestReceiver::start().await;
    crate::webhooks::hook(&app, &rx.url, &["contact.*"]).await;
    let funnel = app.new_funnel("Sales", &["Lead"]).await;
    let member = app.new_user("Mia Member").await;
    app.add_member(&app.workspace_id, &member, "member", &[])
        .await;
    let c = new_contact(&app, json!({"phone": "+15550100100", "tags": ["old"]})).await;
    rx.wait_for(1).await;
    upsert(
        &app,
        json!({"phone": "+15550100100", "tags": ["old", "Upserted"],
               "stage_id": funnel["stages"][0]["id"], "assigned_to_user_id": member}),
    )
    .await
    .ok();
    rx.wait_for(5).await;
    assert_eq!(
        rx.event_types(),
        [
            "contact.assigned",
            "contact.created",
            "contact.stage_changed",
            "contact.tag_added",
            "contact.updated"
        ]
    );
    let data = |t: &str| rx.of_type(t)[0].json()["data"].clone();
    assert_eq!(
        data("contact.tag_added"),
        json!({"contact_id": c["id"], "tags": ["Upserted"]}),
        "only the tag the contact lacked"
    );
    assert_eq!(data("contact.stage_changed")["stage"]["stage_name"], "Lead");
    assert_eq!(
        data("contact.assigned")["assigned_to_user_id"],
        member.as_str()
    );
    let updated = rx.of_type("contact.updated")[0].json();
    assert_eq!(
        changed_fields(&updated),
        ["assigned_to_user_id", "stage", "tags"]
    );
}

#[tokio::test]
async fn usernames_and_emails_match_however_their_accents_were_typed() {
    let app = spawn_app().await;
    // Decomposed (`e` + U+0301) on create; one character (`é`) when looked up.
    let c = new_contact(
        &app,
        json!({"chan_a_username": "jose\u{301}_nfd", "email": "Jose\u{301}@x.io"}),
    )
    .await;
    assert_eq!(c["chan_a_username"], "jos\u{e9}_nfd", "stored in NFC");
    for query in [
        format!("handle={}", enc("jos\u{e9}_nfd")),
        format!("handle={}", enc("jose\u{301}_nfd")),
        format!("email={}", enc("jos\u{e9}@x.io")),
    ] {
        assert_eq!(looked_up(&app, &query).await, id(&c), "lookup {query}");
    }
    let r = upsert(&app, json!({"chan_a_username": "jos\u{e9}_nfd"})).await;
    assert_eq!(r.status, 200, "the same contact, not a new one: {}", r.body);
    assert_eq!(r.body["created"], false);
    assert_eq!(r.body["contact"]["id"], c["id"]);
}
