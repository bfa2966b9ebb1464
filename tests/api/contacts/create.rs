use super::*;

// ----- 1. Create -----

#[tokio::test]
async fn creating_a_contact_answers_201_with_exactly_the_contact_fields() {
    let app = spawn_app().await;
    let c = new_contact(
        &app,
        json!({
            "first_name": "Ann", "last_name": "Lee", "phone": "+15550100100",
            "chan_d_phone": "+15550100200", "email": "ann@example.com",
            "chan_a_username": "ann_a", "chan_c_username": "ann_c", "chan_e_username": "ann_e",
            "country_code": "US"
        }),
    )
    .await;
    let got: BTreeSet<&str> = c.as_object().unwrap().keys().map(|k| &k[..]).collect();
    assert_eq!(got, CONTACT_FIELDS.into_iter().collect(), "record: {c}");
    let want = json!({
        "object": "contact", "name": "Ann Lee", "first_name": "Ann", "last_name": "Lee",
        "phone": "+15550100100", "chan_d_phone": "+15550100200", "email": "ann@example.com",
        "chan_a_username": "ann_a", "chan_c_username": "ann_c", "chan_e_username": "ann_e",
        "country_code": "US", "channel": "api", "source": "api", "tags": [], "stage": null,
        "assigned_to_user_id": null, "language": null, "custom_fields": {},
        "do_not_contact": false, "do_not_contact_reason": null
    });
    for (k, v) in want.as_object().unwrap() {
        assert_eq!(&c[k], v, "field {k} of {c}");
    }
    assert!(c["id"].as_u64().is_some(), "integer id: {c}");
    for field in ["created_at", "updated_at"] {
        let s = c[field].as_str().expect("timestamp");
        assert!(s.ends_with('Z'), "{field} in UTC: {s}");
        chrono::DateTime::parse_from_rfc3339(s).expect("RFC 3339");
    }
    assert_eq!(c["created_at"], c["updated_at"]);
    let again = app.get(&at(&c)).await.ok();
    assert_eq!(again, c, "GET answers what POST answered");
}

#[tokio::test]
async fn create_normalises_email_usernames_country_and_names() {
    let app = spawn_app().await;
    let c = new_contact(
        &app,
        json!({
            "first_name": "  Ann ", "email": "Ann.Lee@Example.COM",
            "chan_a_username": "@ann_a", "chan_c_username": "@ann_c", "chan_e_username": "ann_e",
            "country_code": "de", "source": "import"
        }),
    )
    .await;
    assert_eq!(c["email"], "ann.lee@example.com");
    assert_eq!(c["chan_a_username"], "ann_a");
    assert_eq!(c["chan_c_username"], "ann_c");
    assert_eq!(c["chan_e_username"], "ann_e");
    assert_eq!(c["country_code"], "DE");
    assert_eq!(c["source"], "import");
    assert_eq!(c["first_name"], "Ann");
    assert_eq!(c["name"], "Ann", "name from the first name alone");
    let last_only = new_contact(&app, json!({"last_name": "Stone"})).await;
    assert_eq!(last_only["name"], "Stone");
    let nameless = new_contact(&app, json!({"phone": "+15550100"})).await;
    assert_eq!(nameless["name"], Value::Null);
}

#[tokio::test]
async fn each_field_rule_refuses_a_create_with_422_naming_the_field() {
    let app = spawn_app().await;
    let long = |n: usize| "a".repeat(n);
    let many: Vec<String> = (0..101).map(|i| format!("t{i}")).collect();
    let cases: Vec<(Value, &str)> = vec![
        (json!({"first_name": long(101)}), "first_name"),
        (json!({"last_name": long(101)}), "last_name"),
        (json!({"first_name": ""}), "first_name"),
        (json!({"first_name": 5}), "first_name"),
        (json!({"email": "not-an-email"}), "email"),
        (json!({"email": "ann@example"}), "email"),
        (json!({"email": email_of_len(321)}), "email"),
        (json!({"phone": "12"}), "phone"),
        (json!({"phone": "1".repeat(51)}), "phone"),
        (json!({"phone": "call me"}), "phone"),
        (json!({"chan_d_phone": "12"}), "chan_d_phone"),
        (json!({"chan_d_phone": "1".repeat(51)}), "chan_d_phone"),
        (json!({"chan_d_phone": "abc-def"}), "chan_d_phone"),
        (json!({"chan_a_username": long(101)}), "chan_a_username"),
        (json!({"chan_c_username": long(101)}), "chan_c_username"),
        (json!({"chan_e_username": long(101)}), "chan_e_username"),
        (json!({"country_code": "XX"}), "country_code"),
        (json!({"country_code": "DEU"}), "country_code"),
        (json!({"source": long(51)}), "source"),
        (json!({"tags": many}), "tags"),
        (json!({"tags": [long(81)]}), "tags[0]"),
        (json!({"tags": ["fine", ""]}), "tags[1]"),
        (json!({"tags": "vip"}), "tags"),
        (json!({"nickname": "Annie"}), "nickname"),
        (json!({"stage_id": "lead"}), "stage_id"),
        (json!({"custom_fields": 5}), "custom_fields"),
        (
            json!({"first_name": "Ann", "assigned_to_user_id": "nobody"}),
            "assigned_to_user_id",
        ),
    ];
    for (body, path) in cases {
        let r = app.post("/contacts", body.clone()).await;
        let got = (r.status, r.code().to_string(), r.paths());
        let want = (422, "validation_failed".to_string(), vec![path.to_string()]);
        assert_eq!(got, want, "POST /contacts {body} answered {}", r.body);
    }
    let list = app.get("/contacts").await.ok();
    assert_eq!(list["data"], json!([]), "no refused create left a contact");
    assert_eq!(workspace_tags(&app).await, Vec::<String>::new());
}

#[tokio::test]
async fn a_create_with_several_faults_names_every_faulty_field() {
    let app = spawn_app().await;
    let r = app
        .post(
            "/contacts",
            json!({"first_name": "a".repeat(101), "email": "nope", "country_code": "XX"}),
        )
        .await
        .expect_error(422, "validation_failed");
    let paths: BTreeSet<String> = r.paths().into_iter().collect();
    let want: BTreeSet<String> = ["first_name", "email", "country_code"]
        .map(String::from)
        .into();
    assert_eq!(paths, want, "body: {}", r.body);
}

#[tokio::test]
async fn values_at_the_length_limits_are_accepted() {
    let app = spawn_app().await;
    let tags: Vec<String> = (0..100).map(|i| format!("{i:0>80}")).collect();
    let email = email_of_len(320);
    let c = new_contact(
        &app,
        json!({
            "first_name": "f".repeat(100), "last_name": "l".repeat(100),
            "email": email, "phone": "123", "chan_d_phone": "9".repeat(50),
            "chan_a_username": format!("@{}", "u".repeat(100)),
            "chan_c_username": "c".repeat(100), "chan_e_username": "e".repeat(100),
            "source": "s".repeat(50), "tags": tags
        }),
    )
    .await;
    assert_eq!(c["email"], email.as_str());
    assert_eq!(c["chan_a_username"], "u".repeat(100));
    assert_eq!(c["phone"], "123");
    assert_eq!(tags_of(&c).len(), 100);
    assert_eq!(workspace_tags(&app).await.len(), 100);
}

#[tokio::test]
async fn explicit_nulls_on_create_leave_the_fields_empty() {
    let app = spawn_app().await;
    let c = new_contact(
        &app,
        json!({"first_name": "Ann", "email": null, "phone": null, "country_code": null}),
    )
    .await;
    assert_eq!(c["email"], Value::Null);
    assert_eq!(c["phone"], Value::Null);
    assert_eq!(c["country_code"], Value::Null);
}

#[tokio::test]
async fn assigned_to_user_id_must_name_a_member_of_the_workspace() {
    let app = spawn_app().await;
    let member = app.new_user("Mia Member").await;
    app.add_member(&app.workspace_id, &member, "member", &["contacts"])
        .await;
    let outsider = app.new_user("Otto Outsider").await;
    let (other_ws, _) = app.new_workspace("Elsewhere").await;
    app.add_member(&other_ws, &outsider, "member", &["contacts"])
        .await;
    let stranger = app.new_user("Sam Stranger").await;
    for user in [outsider.as_str(), stranger.as_str(), "not-a-user-id"] {
        let r = app
            .post(
                "/contacts",
                json!({"first_name": "Ann", "assigned_to_user_id": user}),
            )
            .await;
        invalid(r, "assigned_to_user_id");
    }
    let c = new_contact(
        &app,
        json!({"first_name": "Ann", "assigned_to_user_id": member}),
    )
    .await;
    assert_eq!(c["assigned_to_user_id"], member.as_str());
}

#[tokio::test]
async fn create_with_a_stage_id_shows_the_stage() {
    let app = spawn_app().await;
    let funnel = app.new_funnel("Sales", &["Lead", "Won"]).await;
    let won = &funnel["stages"][1];
    let c = new_contact(&app, json!({"first_name": "Ann", "stage_id": won["id"]})).await;
    assert_eq!(
        c["stage"],
        json!({"funnel_id": funnel["id"], "stage_id": won["id"], "stage_name": "Won"})
    );
}

#[tokio::test]
async fn a_stage_or_funnel_outside_the_workspace_answers_404_naming_the_field() {
    let app = spawn_app().await;
    let (other_ws, _) = app.new_workspace("Other").await;
    let theirs = app
        .admin_post(
            &format!("/admin/workspaces/{other_ws}/funnels"),
            json!({"name": "Theirs", "stages": ["Open"]}),
        )
        .await
        .created();
    let mine = app.new_funnel("Sales", &["Lead"]).await;
    let c = new_contact(&app, json!({"first_name": "Ann"})).await;
    let stage_path = format!("{}/stage", at(&c));
    for stage in [json!(999_999_999), theirs["stages"][0]["id"].clone()] {
        for (path, body) in [
            ("/contacts", json!({"first_name": "Bo", "stage_id": stage})),
            (
                "/contacts/upsert",
                json!({"phone": "+15550100", "stage_id": stage}),
            ),
        ] {
            no_such(app.post(path, body).await, "stage_id: no such stage");
        }
        no_such(
            app.put(&stage_path, json!({"stage_id": stage})).await,
            "stage_id: no such stage",
        );
    }
    for funnel in [json!(999_999_999), theirs["id"].clone()] {
        let body = json!({"stage_id": mine["stages"][0]["id"], "funnel_id": funnel});
        no_such(
            app.put(&stage_path, body).await,
            "funnel_id: no such funnel",
        );
    }
    let list = app.get("/contacts").await.ok();
    assert_eq!(
        list["data"].as_array().map(Vec::len),
        Some(1),
        "nothing created"
    );
    let got = app.get(&at(&c)).await.ok();
    assert_eq!(got["stage"], Value::Null, "the stage is unchanged");
}

#[tokio::test]
async fn new_tags_join_the_workspace_and_existing_ones_match_case_insensitively() {
    let app = spawn_app().await;
    app.post("/tags", json!({"name": "VIP"})).await.expect(201);
    let c = new_contact(
        &app,
        json!({"first_name": "Ann", "tags": ["vip", "Newcomer", "NEWCOMER"]}),
    )
    .await;
    assert_eq!(tags_of(&c), ["Newcomer", "VIP"]);
    let mut names = workspace_tags(&app).await;
    names.sort();
    assert_eq!(names, ["Newcomer", "VIP"], "no duplicate tags");
    let d = new_contact(&app, json!({"first_name": "Dan", "tags": ["newcomer"]})).await;
    assert_eq!(tags_of(&d), ["Newcomer"]);
    assert_eq!(workspace_tags(&app).await.len(), 2);
}
