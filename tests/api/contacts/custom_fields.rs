use super::*;

// ----- 2. Custom fields -----

#[tokio::test]
async fn custom_fields_of_every_type_store_valid_values() {
    let app = spawn_app().await;
    every_field_type(&app).await;
    let values = json!({
        "nickname": "Annie", "bio": "Likes golf.\nAnd chess.", "score": 4.5,
        "vip_member": true, "birthday": "2024-02-29", "plan": "pro",
        "interests": ["golf", "chess"], "website": "https://example.com/ann"
    });
    let c = new_contact(&app, json!({"first_name": "Ann", "custom_fields": values})).await;
    assert_eq!(c["custom_fields"], values);
    let got = app.get(&at(&c)).await.ok();
    assert_eq!(got["custom_fields"], values);
    let zero = new_contact(
        &app,
        json!({"first_name": "Zed", "custom_fields": {"score": -3, "vip_member": false, "interests": []}}),
    )
    .await;
    assert_eq!(zero["custom_fields"]["score"].as_f64(), Some(-3.0));
    assert_eq!(zero["custom_fields"]["vip_member"], false);
    assert_eq!(zero["custom_fields"]["interests"], json!([]));
}

#[tokio::test]
async fn wrong_unknown_or_archived_custom_field_values_answer_422_naming_the_key() {
    let app = spawn_app().await;
    every_field_type(&app).await;
    let cases: Vec<(&str, Value)> = vec![
        ("nickname", json!(5)),
        ("nickname", json!(["Annie"])),
        ("bio", json!(true)),
        ("score", json!("12")),
        ("score", json!(true)),
        // More digits than a double keeps: refused rather than silently rounded.
        ("score", exact_number("123456789012345678901234567890")),
        ("score", exact_number("9007199254740993")),
        ("vip_member", json!("yes")),
        ("vip_member", json!(1)),
        ("birthday", json!("2026-02-30")),
        ("birthday", json!("31/01/2026")),
        ("birthday", json!("2026-01-31T10:00:00Z")),
        ("birthday", json!(20260131)),
        ("plan", json!("enterprise")),
        ("plan", json!("Pro")),
        ("plan", json!(["pro"])),
        ("interests", json!("golf")),
        ("interests", json!(["golf", "bowling"])),
        ("interests", json!([1])),
        ("website", json!("ftp://x")),
        ("website", json!("not a url")),
        ("website", json!(42)),
        ("unknown_key", json!("x")),
        ("legacy_code", json!("x")),
    ];
    for (key, value) in cases {
        let body = json!({"first_name": "Ann", "custom_fields": {key: value}});
        let r = app.post("/contacts", body.clone()).await;
        let got = (r.status, r.code().to_string(), r.paths());
        let want = (
            422,
            "validation_failed".to_string(),
            vec![format!("custom_fields.{key}")],
        );
        assert_eq!(got, want, "POST /contacts {body} answered {}", r.body);
    }
    let list = app.get("/contacts").await.ok();
    assert_eq!(list["data"], json!([]));
}

#[tokio::test]
async fn custom_fields_are_checked_on_patch_and_upsert_too() {
    let app = spawn_app().await;
    every_field_type(&app).await;
    let c = new_contact(&app, json!({"email": "ann@example.com"})).await;
    for (key, value) in [
        ("score", json!("high")),
        ("unknown_key", json!(1)),
        ("legacy_code", json!("x")),
        ("legacy_code", Value::Null),
    ] {
        let r = app
            .patch(&at(&c), json!({"custom_fields": {key: value}}))
            .await;
        invalid(r, &format!("custom_fields.{key}"));
        let r = app
            .post(
                "/contacts/upsert",
                json!({"email": "ann@example.com", "custom_fields": {key: value}}),
            )
            .await;
        invalid(r, &format!("custom_fields.{key}"));
    }
    let got = app.get(&at(&c)).await.ok();
    assert_eq!(got["custom_fields"], json!({}));
    assert_eq!(got["updated_at"], c["updated_at"]);
}

#[tokio::test]
async fn patch_merges_custom_fields_and_null_removes_a_key() {
    let app = spawn_app().await;
    every_field_type(&app).await;
    let c = new_contact(
        &app,
        json!({"first_name": "Ann", "custom_fields": {"nickname": "Annie", "score": 4.5}}),
    )
    .await;
    let p = app
        .patch(&at(&c), json!({"custom_fields": {"plan": "pro"}}))
        .await
        .ok();
    assert_eq!(
        p["custom_fields"],
        json!({"nickname": "Annie", "score": 4.5, "plan": "pro"})
    );
    let p = app
        .patch(
            &at(&c),
            json!({"custom_fields": {"nickname": null, "score": 7.25}}),
        )
        .await
        .ok();
    assert_eq!(p["custom_fields"], json!({"score": 7.25, "plan": "pro"}));
    let got = app.get(&at(&c)).await.ok();
    assert_eq!(got["custom_fields"], json!({"score": 7.25, "plan": "pro"}));
}

/// A JSON number exactly as written (the test client sends its text as is).
fn exact_number(text: &str) -> Value {
    serde_json::from_str(text).unwrap()
}
