use super::*;

// ----- 10. Stage and funnels -----

#[tokio::test]
async fn put_stage_moves_the_contact_and_delete_stage_clears_it() {
    let app = spawn_app().await;
    let sales = app.new_funnel("Sales", &["Lead", "Won"]).await;
    let support = app.new_funnel("Support", &["Open"]).await;
    let (lead, won) = (&sales["stages"][0], &sales["stages"][1]);
    let c = new_contact(&app, json!({"first_name": "Ann"})).await;
    let path = format!("{}/stage", at(&c));
    let r = app.put(&path, json!({"stage_id": lead["id"]})).await.ok();
    assert_eq!(
        r["stage"],
        json!({"funnel_id": sales["id"], "stage_id": lead["id"], "stage_name": "Lead"})
    );
    let r = app
        .put(
            &path,
            json!({"stage_id": won["id"], "funnel_id": sales["id"]}),
        )
        .await
        .ok();
    assert_eq!(
        r["stage"],
        json!({"funnel_id": sales["id"], "stage_id": won["id"], "stage_name": "Won"})
    );
    invalid(
        app.put(
            &path,
            json!({"stage_id": lead["id"], "funnel_id": support["id"]}),
        )
        .await,
        "funnel_id",
    );
    no_such(
        app.put(&path, json!({"stage_id": 999_999_999})).await,
        "stage_id: no such stage",
    );

    invalid(app.put(&path, json!({})).await, "stage_id");
    invalid(app.put(&path, json!({"stage_id": "won"})).await, "stage_id");
    let got = app.get(&at(&c)).await.ok();
    assert_eq!(
        got["stage"]["stage_id"], won["id"],
        "refusals changed nothing"
    );
    let in_won = app
        .get(&format!("/contacts?stage_id={}", won["id"]))
        .await
        .ok();
    assert_eq!(in_won["data"].as_array().unwrap().len(), 1);
    let r = app.delete(&path).await.ok();
    assert_eq!(r["stage"], Value::Null);
    let got = app.get(&at(&c)).await.ok();
    assert_eq!(got["stage"], Value::Null);
    not_found(
        app.put("/contacts/999999999/stage", json!({"stage_id": lead["id"]}))
            .await,
    );
    not_found(app.delete("/contacts/999999999/stage").await);
}

#[tokio::test]
async fn get_funnels_lists_funnels_with_stages_or_one_row_per_stage() {
    let app = spawn_app().await;
    let sales = app.new_funnel("Sales", &["Lead", "Won"]).await;
    let body = app.get("/funnels").await.ok();
    assert_eq!(body["object"], "list");
    assert_eq!(body["has_more"], false);
    let funnels = body["data"].as_array().unwrap();
    assert_eq!(funnels.len(), 1);
    assert_eq!(funnels[0]["object"], "funnel");
    assert_eq!(funnels[0]["id"], sales["id"]);
    assert_eq!(funnels[0]["name"], "Sales");
    let names: Vec<&str> = funnels[0]["stages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["Lead", "Won"]);
    let flat = app.get("/funnels?flat=true").await.ok();
    let rows = flat["data"].as_array().unwrap();
    assert_eq!(rows.len(), 2);
    for (row, (stage, name)) in rows.iter().zip([(0, "Lead"), (1, "Won")]) {
        assert_eq!(row["funnel_id"], sales["id"]);
        assert_eq!(row["funnel_name"], "Sales");
        assert_eq!(row["stage_id"], sales["stages"][stage]["id"]);
        assert_eq!(row["stage_name"], name);
    }
    invalid(app.get("/funnels?flat=yes").await, "flat");
}

// ----- 11. Assignee -----

#[tokio::test]
async fn put_assignee_sets_a_member_refuses_others_and_unassigns_on_empty_or_null() {
    let app = spawn_app().await;
    let member = app.new_user("Mia Member").await;
    app.add_member(&app.workspace_id, &member, "member", &[])
        .await;
    let outsider = app.new_user("Otto Outsider").await;
    let c = new_contact(&app, json!({"first_name": "Ann"})).await;
    let path = format!("{}/assignee", at(&c));
    let r = app.put(&path, json!({"user_id": member})).await.ok();
    assert_eq!(r["assigned_to_user_id"], member.as_str());
    for user in [outsider.as_str(), "nobody"] {
        invalid(app.put(&path, json!({"user_id": user})).await, "user_id");
    }
    invalid(app.put(&path, json!({"user_id": 5})).await, "user_id");
    let got = app.get(&at(&c)).await.ok();
    assert_eq!(got["assigned_to_user_id"], member.as_str());
    let mine = app
        .get(&format!("/contacts?assigned_to_user_id={}", enc(&member)))
        .await
        .ok();
    assert_eq!(mine["data"].as_array().unwrap().len(), 1);
    let r = app.put(&path, json!({})).await.ok();
    assert_eq!(r["assigned_to_user_id"], Value::Null);
    app.put(&path, json!({"user_id": member})).await.expect(200);
    let r = app.put(&path, json!({"user_id": null})).await.ok();
    assert_eq!(r["assigned_to_user_id"], Value::Null);
    let got = app.get(&at(&c)).await.ok();
    assert_eq!(got["assigned_to_user_id"], Value::Null);
    not_found(app.put("/contacts/999999999/assignee", json!({})).await);
}

// ----- 12. Notes -----

#[tokio::test]
async fn a_note_answers_201_with_its_record() {
    let app = spawn_app().await;
    let c = new_contact(&app, json!({"first_name": "Ann"})).await;
    let n = app
        .post(
            &format!("{}/notes", at(&c)),
            json!({"body": "Prefers mornings"}),
        )
        .await
        .created();
    let keys: BTreeSet<&str> = n.as_object().unwrap().keys().map(|k| &k[..]).collect();
    assert_eq!(
        keys,
        BTreeSet::from(["object", "id", "contact_id", "body", "created_at"]),
        "note: {n}"
    );
    assert_eq!(n["object"], "note");
    assert_eq!(n["contact_id"], c["id"]);
    assert_eq!(n["body"], "Prefers mornings");
    assert!(n["id"].as_u64().is_some());
    chrono::DateTime::parse_from_rfc3339(n["created_at"].as_str().unwrap()).expect("timestamp");
}

#[tokio::test]
async fn a_note_body_needs_1_to_10000_chars() {
    let app = spawn_app().await;
    let c = new_contact(&app, json!({"first_name": "Ann"})).await;
    let path = format!("{}/notes", at(&c));
    for body in [
        json!({"body": ""}),
        json!({"body": "x".repeat(10_001)}),
        json!({}),
        json!({"body": 5}),
        json!({"body": null}),
    ] {
        invalid(app.post(&path, body).await, "body");
    }
    invalid(
        app.post(&path, json!({"body": "ok", "pinned": true})).await,
        "pinned",
    );
    let long = "é".repeat(10_000);
    let n = app.post(&path, json!({"body": long})).await.created();
    assert_eq!(n["body"], long.as_str());
    let list = app.get(&path).await.ok();
    assert_eq!(list["data"].as_array().unwrap().len(), 1);
}

#[tokio::test]
async fn notes_list_newest_first_and_paginate() {
    let app = spawn_app().await;
    let c = new_contact(&app, json!({"first_name": "Ann"})).await;
    let other = new_contact(&app, json!({"first_name": "Bob"})).await;
    let path = format!("{}/notes", at(&c));
    let mut made = Vec::new();
    for i in 0..5 {
        let n = app
            .post(&path, json!({"body": format!("note {i}")}))
            .await
            .created();
        made.push(id(&n));
    }
    app.post(
        &format!("{}/notes", at(&other)),
        json!({"body": "someone else's"}),
    )
    .await
    .expect(201);
    let all = app.get(&path).await.ok();
    assert_eq!(all["object"], "list");
    let bodies: Vec<&str> = all["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["body"].as_str().unwrap())
        .collect();
    assert_eq!(bodies, ["note 4", "note 3", "note 2", "note 1", "note 0"]);
    let mut seen = Vec::new();
    let mut cursor: Option<String> = None;
    for _ in 0..10 {
        let mut url = format!("{path}?limit=2");
        if let Some(c) = &cursor {
            url.push_str(&format!("&starting_after={}", enc(c)));
        }
        let page = app.get(&url).await.ok();
        let data = page["data"].as_array().unwrap();
        assert!(data.len() <= 2);
        seen.extend(data.iter().map(id));
        if page["has_more"] == true {
            cursor = Some(page["next_cursor"].as_str().expect("cursor").to_string());
        } else {
            assert_eq!(page["next_cursor"], Value::Null);
            break;
        }
    }
    made.reverse();
    assert_eq!(seen, made, "all notes, newest first, no gaps or repeats");
    invalid(app.get(&format!("{path}?limit=0")).await, "limit");
    invalid(app.get(&format!("{path}?limit=101")).await, "limit");
    bad_request(app.get(&format!("{path}?starting_after=garbage")).await);
}

#[tokio::test]
async fn notes_of_an_unknown_contact_answer_404() {
    let app = spawn_app().await;
    not_found(app.get("/contacts/999999999/notes").await);
    not_found(
        app.post("/contacts/999999999/notes", json!({"body": "hello"}))
            .await,
    );
}

// ----- 13. Do-not-contact -----

#[tokio::test]
async fn put_dnc_sets_the_flag_and_reason_and_false_clears_the_reason() {
    let app = spawn_app().await;
    let c = new_contact(&app, json!({"first_name": "Ann"})).await;
    let path = format!("{}/dnc", at(&c));
    let r = app
        .put(
            &path,
            json!({"do_not_contact": true, "reason": "asked by phone"}),
        )
        .await
        .ok();
    assert_eq!(r["do_not_contact"], true);
    assert_eq!(r["do_not_contact_reason"], "asked by phone");
    let got = app.get(&at(&c)).await.ok();
    assert_eq!(got["do_not_contact"], true);
    assert_eq!(got["do_not_contact_reason"], "asked by phone");
    let cases: Vec<(Value, &str)> = vec![
        (
            json!({"do_not_contact": true, "reason": "r".repeat(201)}),
            "reason",
        ),
        (json!({"reason": "why"}), "do_not_contact"),
        (json!({}), "do_not_contact"),
        (json!({"do_not_contact": "yes"}), "do_not_contact"),
        (json!({"do_not_contact": null}), "do_not_contact"),
        (json!({"do_not_contact": true, "note": "x"}), "note"),
    ];
    for (body, want) in cases {
        invalid(app.put(&path, body).await, want);
    }
    let r = app
        .put(
            &path,
            json!({"do_not_contact": true, "reason": "r".repeat(200)}),
        )
        .await
        .ok();
    assert_eq!(r["do_not_contact_reason"], "r".repeat(200));
    let r = app
        .put(
            &path,
            json!({"do_not_contact": false, "reason": "changed their mind"}),
        )
        .await
        .ok();
    assert_eq!(r["do_not_contact"], false);
    assert_eq!(r["do_not_contact_reason"], Value::Null);
    let got = app.get(&at(&c)).await.ok();
    assert_eq!(got["do_not_contact"], false);
    assert_eq!(got["do_not_contact_reason"], Value::Null);
    not_found(
        app.put("/contacts/999999999/dnc", json!({"do_not_contact": true}))
            .await,
    );
}

// ----- 14. Channels -----

#[tokio::test]
async fn channels_list_every_identity_the_contact_can_be_reached_on() {
    let app = spawn_app().await;
    let c = new_contact(
        &app,
        json!({
            "first_name": "Ann", "phone": "+15550100100", "chan_d_phone": "+15550100200",
            "email": "Ann@Example.com", "chan_a_username": "@ann_a",
            "chan_c_username": "ann_c", "chan_e_username": "ann_e"
        }),
    )
    .await;
    let body = app.get(&format!("{}/channels", at(&c))).await.ok();
    assert_eq!(body["object"], "list");
    assert_eq!(body["has_more"], false);
    let got: BTreeSet<(String, String)> = body["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|ch| {
            assert_eq!(ch["object"], "contact_channel", "{ch}");
            assert_eq!(ch.as_object().unwrap().len(), 3, "{ch}");
            (
                ch["channel"].as_str().unwrap().to_string(),
                ch["identifier"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let want: BTreeSet<(String, String)> = [
        ("sms", "+15550100100"),
        ("voice", "+15550100100"),
        ("chan_d", "+15550100200"),
        ("email", "ann@example.com"),
        ("chan_a", "ann_a"),
        ("chan_c", "ann_c"),
        ("chan_e", "ann_e"),
    ]
    .into_iter()
    .map(|(a, b)| (a.to_string(), b.to_string()))
    .collect();
    assert_eq!(got, want);
    assert_eq!(body["data"].as_array().unwrap().len(), 7);
    let only_email = new_contact(&app, json!({"email": "bob@example.com"})).await;
    let body = app.get(&format!("{}/channels", at(&only_email))).await.ok();
    assert_eq!(
        body["data"],
        json!([{"object": "contact_channel", "channel": "email", "identifier": "bob@example.com"}])
    );
    let none = new_contact(&app, json!({"first_name": "Nobody"})).await;
    let body = app.get(&format!("{}/channels", at(&none))).await.ok();
    assert_eq!(body["data"], json!([]));
    not_found(app.get("/contacts/999999999/channels").await);
}

// ----- 16. Permissions -----

#[tokio::test]
async fn a_member_without_the_contacts_permission_gets_403() {
    let app = spawn_app().await;
    let c = new_contact(&app, json!({"first_name": "Ann", "phone": "+15550100100"})).await;
    let token = app.member_token("member", &["inbox"]).await;
    let refused = [
        app.get_as(&token, "/contacts").await,
        app.post_as(&token, "/contacts", json!({"first_name": "Bob"}))
            .await,
        app.get_as(&token, &at(&c)).await,
        app.get_as(&token, "/contacts/lookup?phone=%2B15550100100")
            .await,
        app.post_as(&token, "/contacts/upsert", json!({"phone": "+15550100100"}))
            .await,
        app.patch_as(&token, &at(&c), json!({"first_name": "X"}))
            .await,
        app.delete_as(&token, &at(&c)).await,
        app.post_as(&token, &format!("{}/notes", at(&c)), json!({"body": "x"}))
            .await,
        app.get_as(&token, "/funnels").await,
    ];
    for r in refused {
        forbidden(r);
    }
    let list = app.get("/contacts").await.ok();
    assert_eq!(list["data"].as_array().unwrap().len(), 1, "nothing created");
    assert_eq!(list["data"][0]["first_name"], "Ann", "nothing changed");
    let allowed = app.member_token("member", &["contacts"]).await;
    app.get_as(&allowed, "/contacts").await.expect(200);
    let made = app
        .post_as(&allowed, "/contacts", json!({"first_name": "Bob"}))
        .await
        .created();
    assert_eq!(made["channel"], "api");
}
