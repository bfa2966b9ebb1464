use super::*;

// ----- 3. GET, PATCH, DELETE -----

#[tokio::test]
async fn get_answers_404_for_unknown_or_foreign_ids_and_400_for_malformed_ones() {
    let app = spawn_app().await;
    let (other_key, foreign) =
        foreign_record(&app, "/contacts", json!({"first_name": "Fay"})).await;
    let mine = new_contact(&app, json!({"first_name": "Ann"})).await;
    let got = app.get(&at(&mine)).await.ok();
    assert_eq!(got["first_name"], "Ann");
    not_found(app.get("/contacts/999999999").await);
    let f = at(&foreign);
    not_found(app.get(&f).await);
    not_found(app.patch(&f, json!({"first_name": "X"})).await);
    not_found(app.delete(&f).await);
    not_found(app.get(&format!("{f}/notes")).await);
    not_found(app.get(&format!("{f}/channels")).await);
    not_found(app.post(&format!("{f}/notes"), json!({"body": "hi"})).await);
    not_found(app.post(&format!("{f}/tags"), json!({"tags": ["x"]})).await);
    let still = app.get_as(&other_key, &f).await.ok();
    assert_eq!(
        still["first_name"], "Fay",
        "the foreign contact is untouched"
    );
    for bad in ["abc", "0", "-1", "1.5"] {
        bad_request(app.get(&format!("/contacts/{bad}")).await);
    }
    bad_request(app.patch("/contacts/abc", json!({})).await);
    bad_request(app.delete("/contacts/abc").await);
}

#[tokio::test]
async fn patch_keeps_omitted_fields_and_clears_fields_set_to_null() {
    let app = spawn_app().await;
    let c = new_contact(
        &app,
        json!({
            "first_name": "Ann", "last_name": "Lee", "phone": "+15550100100",
            "email": "ann@example.com", "chan_a_username": "ann_a", "country_code": "US",
            "source": "import", "tags": ["vip"]
        }),
    )
    .await;
    tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    let p = app
        .patch(
            &at(&c),
            json!({"first_name": null, "email": "NEW@Example.com", "country_code": "fr",
                   "chan_c_username": "@ann_c"}),
        )
        .await
        .ok();
    assert_eq!(p["id"], c["id"]);
    assert_eq!(p["first_name"], Value::Null);
    assert_eq!(p["name"], "Lee");
    assert_eq!(p["last_name"], "Lee");
    assert_eq!(p["email"], "new@example.com");
    assert_eq!(p["country_code"], "FR");
    assert_eq!(p["chan_c_username"], "ann_c");
    assert_eq!(p["phone"], "+15550100100");
    assert_eq!(p["chan_a_username"], "ann_a");
    assert_eq!(p["source"], "import");
    assert_eq!(tags_of(&p), ["vip"]);
    assert_eq!(p["created_at"], c["created_at"]);
    assert!(
        p["updated_at"].as_str() > c["updated_at"].as_str(),
        "updated_at moves: {p}"
    );
    let got = app.get(&at(&c)).await.ok();
    assert_eq!(got, p);
    let cleared = app
        .patch(
            &at(&c),
            json!({"last_name": null, "phone": null, "email": null, "chan_a_username": null,
                   "chan_c_username": null, "country_code": null}),
        )
        .await
        .ok();
    for field in [
        "name",
        "last_name",
        "phone",
        "email",
        "chan_a_username",
        "chan_c_username",
        "country_code",
    ] {
        assert_eq!(cleared[field], Value::Null, "{field} of {cleared}");
    }
    let same = app.patch(&at(&c), json!({})).await.ok();
    assert_eq!(same, cleared, "an empty patch changes nothing");
}

#[tokio::test]
async fn patch_refuses_the_create_only_fields_and_bad_values_with_422() {
    let app = spawn_app().await;
    let funnel = app.new_funnel("Sales", &["Lead"]).await;
    let member = app.new_user("Mia Member").await;
    app.add_member(&app.workspace_id, &member, "member", &["contacts"])
        .await;
    let c = new_contact(&app, json!({"first_name": "Ann"})).await;
    let cases: Vec<(Value, &str)> = vec![
        (json!({"source": "import"}), "source"),
        (json!({"source": null}), "source"),
        (json!({"tags": ["vip"]}), "tags"),
        (json!({"stage_id": funnel["stages"][0]["id"]}), "stage_id"),
        (
            json!({"assigned_to_user_id": member}),
            "assigned_to_user_id",
        ),
        (json!({"first_name": ""}), "first_name"),
        (json!({"last_name": "x".repeat(101)}), "last_name"),
        (json!({"email": "nope"}), "email"),
        (json!({"phone": "12"}), "phone"),
        (json!({"chan_d_phone": "letters"}), "chan_d_phone"),
        (
            json!({"chan_e_username": "e".repeat(101)}),
            "chan_e_username",
        ),
        (json!({"country_code": "XX"}), "country_code"),
        (json!({"nickname": "Annie"}), "nickname"),
    ];
    for (body, path) in cases {
        let r = app.patch(&at(&c), body.clone()).await;
        let got = (r.status, r.code().to_string(), r.paths());
        let want = (422, "validation_failed".to_string(), vec![path.to_string()]);
        assert_eq!(got, want, "PATCH {body} answered {}", r.body);
    }
    let got = app.get(&at(&c)).await.ok();
    assert_eq!(got, c, "refused patches change nothing");
    not_found(
        app.patch("/contacts/999999999", json!({"first_name": "X"}))
            .await,
    );
}

#[tokio::test]
async fn delete_removes_the_contact_from_get_lists_lookup_search_and_its_notes() {
    let app = spawn_app().await;
    let c = new_contact(
        &app,
        json!({"first_name": "Zelda", "phone": "+15550100777", "email": "zelda@example.com",
               "chan_a_username": "zelda_a", "tags": ["doomed"]}),
    )
    .await;
    let keep = new_contact(&app, json!({"first_name": "Keeper"})).await;
    app.post(
        &format!("{}/notes", at(&c)),
        json!({"body": "remember the pineapple"}),
    )
    .await
    .expect(201);
    let r = app.delete(&at(&c)).await.expect(200);
    assert_eq!(
        r.body,
        json!({"object": "contact", "id": c["id"], "deleted": true})
    );
    not_found(app.get(&at(&c)).await);
    not_found(app.delete(&at(&c)).await);
    not_found(app.get(&format!("{}/notes", at(&c))).await);
    not_found(app.get(&format!("{}/channels", at(&c))).await);
    let ids = |b: &Value| -> Vec<u64> { b["data"].as_array().unwrap().iter().map(id).collect() };
    let all = app.get("/contacts").await.ok();
    assert_eq!(ids(&all), [id(&keep)]);
    for query in [
        "q=zelda",
        "q=pineapple",
        "q=0777",
        "tag=doomed",
        "phone=%2B15550100777",
        "email=zelda%40example.com",
    ] {
        let r = app.get(&format!("/contacts?{query}")).await.ok();
        assert_eq!(r["data"], json!([]), "GET /contacts?{query}: {r}");
    }
    for query in [
        "phone=%2B15550100777",
        "email=zelda%40example.com",
        "handle=zelda_a",
    ] {
        not_found(app.get(&format!("/contacts/lookup?{query}")).await);
    }
    assert_eq!(workspace_tags(&app).await, ["doomed"], "the tag stays");
    let tags = app.get("/tags").await.ok();
    let r = app
        .delete(&format!("/tags/{}", tags["data"][0]["id"]))
        .await
        .ok();
    assert_eq!(
        r["contacts_updated"], 0,
        "a deleted contact no longer carries the tag: {r}"
    );
}
