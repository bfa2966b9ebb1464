//! Contacts over HTTP: the record, its field rules, custom fields, GET/PATCH/DELETE, tags,
//! stage, assignee, notes, do-not-contact, channels, funnels and permissions. Lists,
//! search, lookup, upsert, merge and restarts are in `contacts_search`.

use crate::helpers::*;

use std::collections::BTreeSet;

use reqwest::Method;
use serde_json::{json, Value};

// ----- Helpers shared with `contacts_search`. -----

/// Every field of a contact record, and nothing else.
pub(crate) const CONTACT_FIELDS: [&str; 23] = [
    "id",
    "object",
    "name",
    "first_name",
    "last_name",
    "phone",
    "chan_d_phone",
    "email",
    "chan_a_username",
    "chan_c_username",
    "chan_e_username",
    "country_code",
    "channel",
    "source",
    "tags",
    "stage",
    "assigned_to_user_id",
    "language",
    "custom_fields",
    "do_not_contact",
    "do_not_contact_reason",
    "created_at",
    "updated_at",
];

/// POST /contacts answering 201; the contact.
pub(crate) async fn new_contact(app: &TestApp, body: Value) -> Value {
    let r = app.post("/contacts", &app.key, body).await.expect(201);
    assert_eq!(r.body["object"], "contact", "body: {}", r.body);
    r.body
}

pub(crate) fn id_of(v: &Value) -> u64 {
    v["id"]
        .as_u64()
        .unwrap_or_else(|| panic!("no integer id: {v}"))
}

/// The contact's URL below /api/v1.
pub(crate) fn at(contact: &Value) -> String {
    format!("/contacts/{}", id_of(contact))
}

/// A 422 `validation_failed` naming exactly `path`.
#[track_caller]
pub(crate) fn invalid(r: Resp, path: &str) {
    let r = r.expect_error(422, "validation_failed");
    assert_eq!(r.paths(), vec![path.to_string()], "body: {}", r.body);
}

#[track_caller]
pub(crate) fn not_found(r: Resp) {
    r.expect_error(404, "not_found");
}

/// A 404 `not_found` for an id in the body: the message names the field, as in
/// `contact_id: no such contact`.
#[track_caller]
pub(crate) fn no_such(r: Resp, message: &str) {
    let r = r.expect_error(404, "not_found");
    assert_eq!(r.body["error"]["message"], message, "body: {}", r.body);
}

/// Percent-encodes a query parameter value.
pub(crate) fn enc(s: &str) -> String {
    s.bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
                (b as char).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}

/// The tag names of the workspace.
pub(crate) async fn workspace_tags(app: &TestApp) -> Vec<String> {
    let body = app.get("/tags", &app.key).await.expect(200).body;
    body["data"]
        .as_array()
        .expect("data")
        .iter()
        .map(|t| t["name"].as_str().expect("name").to_string())
        .collect()
}

/// The tag names of a contact record, sorted (the order is not part of the contract).
pub(crate) fn tags_of(c: &Value) -> Vec<String> {
    let mut names: Vec<String> = c["tags"]
        .as_array()
        .unwrap_or_else(|| panic!("no tags array: {c}"))
        .iter()
        .map(|t| t.as_str().expect("tag name").to_string())
        .collect();
    names.sort();
    names
}

/// An email address of exactly `n` characters (n >= 6), valid in form.
fn email_of_len(n: usize) -> String {
    let mut domain = String::new();
    let mut left = n - 2; // "a@"
    while left > 0 {
        if !domain.is_empty() {
            domain.push('.');
            left -= 1;
        }
        let take = if left > 63 { 60 } else { left };
        domain.push_str(&"b".repeat(take));
        left -= take;
    }
    let email = format!("a@{domain}");
    assert_eq!(email.chars().count(), n);
    email
}

async fn new_field(app: &TestApp, body: Value) -> Value {
    app.post("/custom-fields", &app.key, body)
        .await
        .expect(201)
        .body
}

/// One custom field of every type, and an archived one (`legacy_code`).
async fn every_field_type(app: &TestApp) {
    for body in [
        json!({"label": "Nickname", "key": "nickname", "type": "text"}),
        json!({"label": "Bio", "key": "bio", "type": "textarea"}),
        json!({"label": "Score", "key": "score", "type": "number"}),
        json!({"label": "Member", "key": "vip_member", "type": "boolean"}),
        json!({"label": "Birthday", "key": "birthday", "type": "date"}),
        json!({"label": "Plan", "key": "plan", "type": "select", "options": ["basic", "pro"]}),
        json!({"label": "Interests", "key": "interests", "type": "multi_select",
               "options": ["golf", "tennis", "chess"]}),
        json!({"label": "Website", "key": "website", "type": "url"}),
    ] {
        new_field(app, body).await;
    }
    let legacy = new_field(
        app,
        json!({"label": "Legacy", "key": "legacy_code", "type": "text"}),
    )
    .await;
    let path = format!(
        "/admin/workspaces/{}/custom-fields/{}/archive",
        app.workspace_id, legacy["id"]
    );
    let archived = app.admin_post(&path, json!({})).await.expect(200).body;
    assert_eq!(archived["archived"], true, "body: {archived}");
}

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
    let again = app.get(&at(&c), &app.key).await.expect(200).body;
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
        let r = app.post("/contacts", &app.key, body.clone()).await;
        let got = (r.status, r.code().to_string(), r.paths());
        let want = (422, "validation_failed".to_string(), vec![path.to_string()]);
        assert_eq!(got, want, "POST /contacts {body} answered {}", r.body);
    }
    let list = app.get("/contacts", &app.key).await.expect(200).body;
    assert_eq!(list["data"], json!([]), "no refused create left a contact");
    assert_eq!(workspace_tags(&app).await, Vec::<String>::new());
}

#[tokio::test]
async fn a_create_with_several_faults_names_every_faulty_field() {
    let app = spawn_app().await;
    let r = app
        .post(
            "/contacts",
            &app.key,
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
                &app.key,
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
        .expect(201)
        .body;
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
            no_such(
                app.post(path, &app.key, body).await,
                "stage_id: no such stage",
            );
        }
        no_such(
            app.put(&stage_path, &app.key, json!({"stage_id": stage}))
                .await,
            "stage_id: no such stage",
        );
    }
    for funnel in [json!(999_999_999), theirs["id"].clone()] {
        let body = json!({"stage_id": mine["stages"][0]["id"], "funnel_id": funnel});
        no_such(
            app.put(&stage_path, &app.key, body).await,
            "funnel_id: no such funnel",
        );
    }
    let list = app.get("/contacts", &app.key).await.expect(200).body;
    assert_eq!(
        list["data"].as_array().map(Vec::len),
        Some(1),
        "nothing created"
    );
    let got = app.get(&at(&c), &app.key).await.expect(200).body;
    assert_eq!(got["stage"], Value::Null, "the stage is unchanged");
}

#[tokio::test]
async fn new_tags_join_the_workspace_and_existing_ones_match_case_insensitively() {
    let app = spawn_app().await;
    app.post("/tags", &app.key, json!({"name": "VIP"}))
        .await
        .expect(201);
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
    let got = app.get(&at(&c), &app.key).await.expect(200).body;
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
        let r = app.post("/contacts", &app.key, body.clone()).await;
        let got = (r.status, r.code().to_string(), r.paths());
        let want = (
            422,
            "validation_failed".to_string(),
            vec![format!("custom_fields.{key}")],
        );
        assert_eq!(got, want, "POST /contacts {body} answered {}", r.body);
    }
    let list = app.get("/contacts", &app.key).await.expect(200).body;
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
            .patch(&at(&c), &app.key, json!({"custom_fields": {key: value}}))
            .await;
        invalid(r, &format!("custom_fields.{key}"));
        let r = app
            .post(
                "/contacts/upsert",
                &app.key,
                json!({"email": "ann@example.com", "custom_fields": {key: value}}),
            )
            .await;
        invalid(r, &format!("custom_fields.{key}"));
    }
    let got = app.get(&at(&c), &app.key).await.expect(200).body;
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
        .patch(&at(&c), &app.key, json!({"custom_fields": {"plan": "pro"}}))
        .await
        .expect(200)
        .body;
    assert_eq!(
        p["custom_fields"],
        json!({"nickname": "Annie", "score": 4.5, "plan": "pro"})
    );
    let p = app
        .patch(
            &at(&c),
            &app.key,
            json!({"custom_fields": {"nickname": null, "score": 7.25}}),
        )
        .await
        .expect(200)
        .body;
    assert_eq!(p["custom_fields"], json!({"score": 7.25, "plan": "pro"}));
    let got = app.get(&at(&c), &app.key).await.expect(200).body;
    assert_eq!(got["custom_fields"], json!({"score": 7.25, "plan": "pro"}));
}

// ----- 3. GET, PATCH, DELETE -----

#[tokio::test]
async fn get_answers_404_for_unknown_or_foreign_ids_and_400_for_malformed_ones() {
    let app = spawn_app().await;
    let (_, other_key) = app.new_workspace("Other").await;
    let foreign = app
        .post("/contacts", &other_key, json!({"first_name": "Fay"}))
        .await
        .expect(201)
        .body;
    let mine = new_contact(&app, json!({"first_name": "Ann"})).await;
    let got = app.get(&at(&mine), &app.key).await.expect(200).body;
    assert_eq!(got["first_name"], "Ann");
    not_found(app.get("/contacts/999999999", &app.key).await);
    let f = at(&foreign);
    not_found(app.get(&f, &app.key).await);
    not_found(app.patch(&f, &app.key, json!({"first_name": "X"})).await);
    not_found(app.delete(&f, &app.key).await);
    not_found(app.get(&format!("{f}/notes"), &app.key).await);
    not_found(app.get(&format!("{f}/channels"), &app.key).await);
    not_found(
        app.post(&format!("{f}/notes"), &app.key, json!({"body": "hi"}))
            .await,
    );
    not_found(
        app.post(&format!("{f}/tags"), &app.key, json!({"tags": ["x"]}))
            .await,
    );
    let still = app.get(&f, &other_key).await.expect(200).body;
    assert_eq!(
        still["first_name"], "Fay",
        "the foreign contact is untouched"
    );
    for bad in ["abc", "0", "-1", "1.5"] {
        app.get(&format!("/contacts/{bad}"), &app.key)
            .await
            .expect_error(400, "invalid_request");
    }
    app.patch("/contacts/abc", &app.key, json!({}))
        .await
        .expect_error(400, "invalid_request");
    app.delete("/contacts/abc", &app.key)
        .await
        .expect_error(400, "invalid_request");
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
            &app.key,
            json!({"first_name": null, "email": "NEW@Example.com", "country_code": "fr",
                   "chan_c_username": "@ann_c"}),
        )
        .await
        .expect(200)
        .body;
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
    let got = app.get(&at(&c), &app.key).await.expect(200).body;
    assert_eq!(got, p);
    let cleared = app
        .patch(
            &at(&c),
            &app.key,
            json!({"last_name": null, "phone": null, "email": null, "chan_a_username": null,
                   "chan_c_username": null, "country_code": null}),
        )
        .await
        .expect(200)
        .body;
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
    let same = app
        .patch(&at(&c), &app.key, json!({}))
        .await
        .expect(200)
        .body;
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
        let r = app.patch(&at(&c), &app.key, body.clone()).await;
        let got = (r.status, r.code().to_string(), r.paths());
        let want = (422, "validation_failed".to_string(), vec![path.to_string()]);
        assert_eq!(got, want, "PATCH {body} answered {}", r.body);
    }
    let got = app.get(&at(&c), &app.key).await.expect(200).body;
    assert_eq!(got, c, "refused patches change nothing");
    not_found(
        app.patch("/contacts/999999999", &app.key, json!({"first_name": "X"}))
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
        &app.key,
        json!({"body": "remember the pineapple"}),
    )
    .await
    .expect(201);
    let r = app.delete(&at(&c), &app.key).await.expect(200);
    assert_eq!(
        r.body,
        json!({"object": "contact", "id": c["id"], "deleted": true})
    );
    not_found(app.get(&at(&c), &app.key).await);
    not_found(app.delete(&at(&c), &app.key).await);
    not_found(app.get(&format!("{}/notes", at(&c)), &app.key).await);
    not_found(app.get(&format!("{}/channels", at(&c)), &app.key).await);
    let ids = |b: &Value| -> Vec<u64> { b["data"].as_array().unwrap().iter().map(id_of).collect() };
    let all = app.get("/contacts", &app.key).await.expect(200).body;
    assert_eq!(ids(&all), [id_of(&keep)]);
    for query in [
        "q=zelda",
        "q=pineapple",
        "q=0777",
        "tag=doomed",
        "phone=%2B15550100777",
        "email=zelda%40example.com",
    ] {
        let r = app
            .get(&format!("/contacts?{query}"), &app.key)
            .await
            .expect(200)
            .body;
        assert_eq!(r["data"], json!([]), "GET /contacts?{query}: {r}");
    }
    for query in [
        "phone=%2B15550100777",
        "email=zelda%40example.com",
        "handle=zelda_a",
    ] {
        not_found(
            app.get(&format!("/contacts/lookup?{query}"), &app.key)
                .await,
        );
    }
    assert_eq!(workspace_tags(&app).await, ["doomed"], "the tag stays");
    let tags = app.get("/tags", &app.key).await.expect(200).body;
    let r = app
        .delete(&format!("/tags/{}", tags["data"][0]["id"]), &app.key)
        .await
        .expect(200)
        .body;
    assert_eq!(
        r["contacts_updated"], 0,
        "a deleted contact no longer carries the tag: {r}"
    );
}

// ----- 9. Tags on a contact -----

#[tokio::test]
async fn adding_tags_joins_new_names_to_the_workspace_without_doubling() {
    let app = spawn_app().await;
    app.post("/tags", &app.key, json!({"name": "VIP"}))
        .await
        .expect(201);
    let c = new_contact(&app, json!({"first_name": "Ann", "tags": ["Lead"]})).await;
    let path = format!("{}/tags", at(&c));
    let r = app
        .post(
            &path,
            &app.key,
            json!({"tags": ["vip", "New", "lead", "NEW"]}),
        )
        .await
        .expect(200)
        .body;
    assert_eq!(r["object"], "contact");
    assert_eq!(tags_of(&r), ["Lead", "New", "VIP"]);
    let r = app
        .post(&path, &app.key, json!({"tags": ["VIP"]}))
        .await
        .expect(200)
        .body;
    assert_eq!(tags_of(&r), ["Lead", "New", "VIP"], "no doubling");
    let mut names = workspace_tags(&app).await;
    names.sort();
    assert_eq!(names, ["Lead", "New", "VIP"]);
    let got = app.get(&at(&c), &app.key).await.expect(200).body;
    assert_eq!(tags_of(&got), ["Lead", "New", "VIP"]);
}

#[tokio::test]
async fn contact_tag_requests_need_1_to_100_names_of_1_to_80_chars() {
    let app = spawn_app().await;
    let c = new_contact(&app, json!({"first_name": "Ann"})).await;
    let path = format!("{}/tags", at(&c));
    let many: Vec<String> = (0..101).map(|i| format!("t{i}")).collect();
    let cases: Vec<(Value, &str)> = vec![
        (json!({"tags": []}), "tags"),
        (json!({"tags": many}), "tags"),
        (json!({"tags": ["ok", "x".repeat(81)]}), "tags[1]"),
        (json!({"tags": [""]}), "tags[0]"),
        (json!({}), "tags"),
        (json!({"tags": "vip"}), "tags"),
        (json!({"tags": ["a"], "extra": 1}), "extra"),
    ];
    for (body, want) in cases {
        invalid(app.post(&path, &app.key, body.clone()).await, want);
        let r = app
            .call(Method::DELETE, &path)
            .token(&app.key)
            .json(body)
            .send()
            .await;
        invalid(r, want);
    }
    let hundred: Vec<String> = (0..100).map(|i| format!("{i:0>80}")).collect();
    let r = app
        .post(&path, &app.key, json!({"tags": hundred}))
        .await
        .expect(200)
        .body;
    assert_eq!(tags_of(&r).len(), 100);
    not_found(
        app.post("/contacts/999999999/tags", &app.key, json!({"tags": ["x"]}))
            .await,
    );
}

#[tokio::test]
async fn removing_tags_is_case_insensitive_and_the_tags_stay_in_the_workspace() {
    let app = spawn_app().await;
    let c = new_contact(
        &app,
        json!({"first_name": "Ann", "tags": ["VIP", "Lead", "Cold"]}),
    )
    .await;
    let path = format!("{}/tags", at(&c));
    let r = app
        .call(Method::DELETE, &path)
        .token(&app.key)
        .json(json!({"tags": ["vip", "COLD", "never-existed"]}))
        .send()
        .await
        .expect(200)
        .body;
    assert_eq!(tags_of(&r), ["Lead"]);
    let got = app.get(&at(&c), &app.key).await.expect(200).body;
    assert_eq!(tags_of(&got), ["Lead"]);
    let mut names = workspace_tags(&app).await;
    names.sort();
    assert_eq!(names, ["Cold", "Lead", "VIP"]);
    let tagged = app
        .get("/contacts?tag=vip", &app.key)
        .await
        .expect(200)
        .body;
    assert_eq!(tagged["data"], json!([]));
}

#[tokio::test]
async fn renaming_a_tag_shows_the_new_name_on_every_contact_carrying_it() {
    let app = spawn_app().await;
    let a = new_contact(&app, json!({"first_name": "A", "tags": ["VIP", "Lead"]})).await;
    let b = new_contact(&app, json!({"first_name": "B", "tags": ["vip"]})).await;
    let other = new_contact(&app, json!({"first_name": "O", "tags": ["Lead"]})).await;
    let tags = app.get("/tags", &app.key).await.expect(200).body;
    let vip = tags["data"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "VIP")
        .expect("VIP tag")
        .clone();
    app.patch(
        &format!("/tags/{}", vip["id"]),
        &app.key,
        json!({"name": "Gold"}),
    )
    .await
    .expect(200);
    let a = app.get(&at(&a), &app.key).await.expect(200).body;
    let b = app.get(&at(&b), &app.key).await.expect(200).body;
    let other = app.get(&at(&other), &app.key).await.expect(200).body;
    assert_eq!(tags_of(&a), ["Gold", "Lead"]);
    assert_eq!(tags_of(&b), ["Gold"]);
    assert_eq!(tags_of(&other), ["Lead"]);
    let gold = app
        .get("/contacts?tag=GOLD&limit=100", &app.key)
        .await
        .expect(200)
        .body;
    let ids: BTreeSet<u64> = gold["data"].as_array().unwrap().iter().map(id_of).collect();
    assert_eq!(ids, BTreeSet::from([id_of(&a), id_of(&b)]));
    let vip_left = app
        .get("/contacts?tag=vip", &app.key)
        .await
        .expect(200)
        .body;
    assert_eq!(vip_left["data"], json!([]));
}

#[tokio::test]
async fn deleting_a_tag_removes_it_from_every_contact_and_counts_them() {
    let app = spawn_app().await;
    let carriers = [
        new_contact(&app, json!({"first_name": "A", "tags": ["Promo", "Keep"]})).await,
        new_contact(&app, json!({"first_name": "B", "tags": ["promo"]})).await,
        new_contact(&app, json!({"first_name": "C", "tags": ["PROMO"]})).await,
    ];
    let bystander = new_contact(&app, json!({"first_name": "D", "tags": ["Keep"]})).await;
    let tags = app.get("/tags", &app.key).await.expect(200).body;
    let id_of_tag = |name: &str| {
        tags["data"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["name"] == name)
            .unwrap_or_else(|| panic!("tag {name}"))["id"]
            .clone()
    };
    let promo = id_of_tag("Promo");
    let r = app
        .delete(&format!("/tags/{promo}"), &app.key)
        .await
        .expect(200)
        .body;
    assert_eq!(r["deleted"], true, "body: {r}");
    assert_eq!(r["contacts_updated"], 3, "body: {r}");
    assert_eq!(r["id"], promo);
    for c in &carriers {
        let got = app.get(&at(c), &app.key).await.expect(200).body;
        assert!(!tags_of(&got).contains(&"Promo".to_string()), "{got}");
    }
    let first = app.get(&at(&carriers[0]), &app.key).await.expect(200).body;
    assert_eq!(tags_of(&first), ["Keep"]);
    let by = app.get(&at(&bystander), &app.key).await.expect(200).body;
    assert_eq!(tags_of(&by), ["Keep"]);
    assert_eq!(workspace_tags(&app).await, ["Keep"]);
    let keep = id_of_tag("Keep");
    let r = app
        .delete(&format!("/tags/{keep}"), &app.key)
        .await
        .expect(200)
        .body;
    assert_eq!(r["contacts_updated"], 2, "body: {r}");
    let unused = app
        .post("/tags", &app.key, json!({"name": "Unused"}))
        .await
        .expect(201)
        .body;
    let r = app
        .delete(&format!("/tags/{}", unused["id"]), &app.key)
        .await
        .expect(200)
        .body;
    assert_eq!(r["contacts_updated"], 0, "body: {r}");
}

// ----- 10. Stage and funnels -----

#[tokio::test]
async fn put_stage_moves_the_contact_and_delete_stage_clears_it() {
    let app = spawn_app().await;
    let sales = app.new_funnel("Sales", &["Lead", "Won"]).await;
    let support = app.new_funnel("Support", &["Open"]).await;
    let (lead, won) = (&sales["stages"][0], &sales["stages"][1]);
    let c = new_contact(&app, json!({"first_name": "Ann"})).await;
    let path = format!("{}/stage", at(&c));
    let r = app
        .put(&path, &app.key, json!({"stage_id": lead["id"]}))
        .await
        .expect(200)
        .body;
    assert_eq!(
        r["stage"],
        json!({"funnel_id": sales["id"], "stage_id": lead["id"], "stage_name": "Lead"})
    );
    let r = app
        .put(
            &path,
            &app.key,
            json!({"stage_id": won["id"], "funnel_id": sales["id"]}),
        )
        .await
        .expect(200)
        .body;
    assert_eq!(
        r["stage"],
        json!({"funnel_id": sales["id"], "stage_id": won["id"], "stage_name": "Won"})
    );
    invalid(
        app.put(
            &path,
            &app.key,
            json!({"stage_id": lead["id"], "funnel_id": support["id"]}),
        )
        .await,
        "funnel_id",
    );
    no_such(
        app.put(&path, &app.key, json!({"stage_id": 999_999_999}))
            .await,
        "stage_id: no such stage",
    );

    invalid(app.put(&path, &app.key, json!({})).await, "stage_id");
    invalid(
        app.put(&path, &app.key, json!({"stage_id": "won"})).await,
        "stage_id",
    );
    let got = app.get(&at(&c), &app.key).await.expect(200).body;
    assert_eq!(
        got["stage"]["stage_id"], won["id"],
        "refusals changed nothing"
    );
    let in_won = app
        .get(&format!("/contacts?stage_id={}", won["id"]), &app.key)
        .await
        .expect(200)
        .body;
    assert_eq!(in_won["data"].as_array().unwrap().len(), 1);
    let r = app.delete(&path, &app.key).await.expect(200).body;
    assert_eq!(r["stage"], Value::Null);
    let got = app.get(&at(&c), &app.key).await.expect(200).body;
    assert_eq!(got["stage"], Value::Null);
    not_found(
        app.put(
            "/contacts/999999999/stage",
            &app.key,
            json!({"stage_id": lead["id"]}),
        )
        .await,
    );
    not_found(app.delete("/contacts/999999999/stage", &app.key).await);
}

#[tokio::test]
async fn get_funnels_lists_funnels_with_stages_or_one_row_per_stage() {
    let app = spawn_app().await;
    let sales = app.new_funnel("Sales", &["Lead", "Won"]).await;
    let body = app.get("/funnels", &app.key).await.expect(200).body;
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
    let flat = app
        .get("/funnels?flat=true", &app.key)
        .await
        .expect(200)
        .body;
    let rows = flat["data"].as_array().unwrap();
    assert_eq!(rows.len(), 2);
    for (row, (stage, name)) in rows.iter().zip([(0, "Lead"), (1, "Won")]) {
        assert_eq!(row["funnel_id"], sales["id"]);
        assert_eq!(row["funnel_name"], "Sales");
        assert_eq!(row["stage_id"], sales["stages"][stage]["id"]);
        assert_eq!(row["stage_name"], name);
    }
    invalid(app.get("/funnels?flat=yes", &app.key).await, "flat");
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
    let r = app
        .put(&path, &app.key, json!({"user_id": member}))
        .await
        .expect(200)
        .body;
    assert_eq!(r["assigned_to_user_id"], member.as_str());
    for user in [outsider.as_str(), "nobody"] {
        invalid(
            app.put(&path, &app.key, json!({"user_id": user})).await,
            "user_id",
        );
    }
    invalid(
        app.put(&path, &app.key, json!({"user_id": 5})).await,
        "user_id",
    );
    let got = app.get(&at(&c), &app.key).await.expect(200).body;
    assert_eq!(got["assigned_to_user_id"], member.as_str());
    let mine = app
        .get(
            &format!("/contacts?assigned_to_user_id={}", enc(&member)),
            &app.key,
        )
        .await
        .expect(200)
        .body;
    assert_eq!(mine["data"].as_array().unwrap().len(), 1);
    let r = app.put(&path, &app.key, json!({})).await.expect(200).body;
    assert_eq!(r["assigned_to_user_id"], Value::Null);
    app.put(&path, &app.key, json!({"user_id": member}))
        .await
        .expect(200);
    let r = app
        .put(&path, &app.key, json!({"user_id": null}))
        .await
        .expect(200)
        .body;
    assert_eq!(r["assigned_to_user_id"], Value::Null);
    let got = app.get(&at(&c), &app.key).await.expect(200).body;
    assert_eq!(got["assigned_to_user_id"], Value::Null);
    not_found(
        app.put("/contacts/999999999/assignee", &app.key, json!({}))
            .await,
    );
}

// ----- 12. Notes -----

#[tokio::test]
async fn a_note_answers_201_with_its_record() {
    let app = spawn_app().await;
    let c = new_contact(&app, json!({"first_name": "Ann"})).await;
    let n = app
        .post(
            &format!("{}/notes", at(&c)),
            &app.key,
            json!({"body": "Prefers mornings"}),
        )
        .await
        .expect(201)
        .body;
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
        invalid(app.post(&path, &app.key, body).await, "body");
    }
    invalid(
        app.post(&path, &app.key, json!({"body": "ok", "pinned": true}))
            .await,
        "pinned",
    );
    let long = "é".repeat(10_000);
    let n = app
        .post(&path, &app.key, json!({"body": long}))
        .await
        .expect(201)
        .body;
    assert_eq!(n["body"], long.as_str());
    let list = app.get(&path, &app.key).await.expect(200).body;
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
            .post(&path, &app.key, json!({"body": format!("note {i}")}))
            .await
            .expect(201)
            .body;
        made.push(id_of(&n));
    }
    app.post(
        &format!("{}/notes", at(&other)),
        &app.key,
        json!({"body": "someone else's"}),
    )
    .await
    .expect(201);
    let all = app.get(&path, &app.key).await.expect(200).body;
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
        let page = app.get(&url, &app.key).await.expect(200).body;
        let data = page["data"].as_array().unwrap();
        assert!(data.len() <= 2);
        seen.extend(data.iter().map(id_of));
        if page["has_more"] == true {
            cursor = Some(page["next_cursor"].as_str().expect("cursor").to_string());
        } else {
            assert_eq!(page["next_cursor"], Value::Null);
            break;
        }
    }
    made.reverse();
    assert_eq!(seen, made, "all notes, newest first, no gaps or repeats");
    invalid(app.get(&format!("{path}?limit=0"), &app.key).await, "limit");
    invalid(
        app.get(&format!("{path}?limit=101"), &app.key).await,
        "limit",
    );
    app.get(&format!("{path}?starting_after=garbage"), &app.key)
        .await
        .expect_error(400, "invalid_request");
}

#[tokio::test]
async fn notes_of_an_unknown_contact_answer_404() {
    let app = spawn_app().await;
    not_found(app.get("/contacts/999999999/notes", &app.key).await);
    not_found(
        app.post(
            "/contacts/999999999/notes",
            &app.key,
            json!({"body": "hello"}),
        )
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
            &app.key,
            json!({"do_not_contact": true, "reason": "asked by phone"}),
        )
        .await
        .expect(200)
        .body;
    assert_eq!(r["do_not_contact"], true);
    assert_eq!(r["do_not_contact_reason"], "asked by phone");
    let got = app.get(&at(&c), &app.key).await.expect(200).body;
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
        invalid(app.put(&path, &app.key, body).await, want);
    }
    let r = app
        .put(
            &path,
            &app.key,
            json!({"do_not_contact": true, "reason": "r".repeat(200)}),
        )
        .await
        .expect(200)
        .body;
    assert_eq!(r["do_not_contact_reason"], "r".repeat(200));
    let r = app
        .put(
            &path,
            &app.key,
            json!({"do_not_contact": false, "reason": "changed their mind"}),
        )
        .await
        .expect(200)
        .body;
    assert_eq!(r["do_not_contact"], false);
    assert_eq!(r["do_not_contact_reason"], Value::Null);
    let got = app.get(&at(&c), &app.key).await.expect(200).body;
    assert_eq!(got["do_not_contact"], false);
    assert_eq!(got["do_not_contact_reason"], Value::Null);
    not_found(
        app.put(
            "/contacts/999999999/dnc",
            &app.key,
            json!({"do_not_contact": true}),
        )
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
    let body = app
        .get(&format!("{}/channels", at(&c)), &app.key)
        .await
        .expect(200)
        .body;
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
    let body = app
        .get(&format!("{}/channels", at(&only_email)), &app.key)
        .await
        .expect(200)
        .body;
    assert_eq!(
        body["data"],
        json!([{"object": "contact_channel", "channel": "email", "identifier": "bob@example.com"}])
    );
    let none = new_contact(&app, json!({"first_name": "Nobody"})).await;
    let body = app
        .get(&format!("{}/channels", at(&none)), &app.key)
        .await
        .expect(200)
        .body;
    assert_eq!(body["data"], json!([]));
    not_found(app.get("/contacts/999999999/channels", &app.key).await);
}

// ----- 16. Permissions -----

#[tokio::test]
async fn a_member_without_the_contacts_permission_gets_403() {
    let app = spawn_app().await;
    let c = new_contact(&app, json!({"first_name": "Ann", "phone": "+15550100100"})).await;
    let token = app.member_token("member", &["inbox"]).await;
    let refused = [
        app.get("/contacts", &token).await,
        app.post("/contacts", &token, json!({"first_name": "Bob"}))
            .await,
        app.get(&at(&c), &token).await,
        app.get("/contacts/lookup?phone=%2B15550100100", &token)
            .await,
        app.post("/contacts/upsert", &token, json!({"phone": "+15550100100"}))
            .await,
        app.patch(&at(&c), &token, json!({"first_name": "X"})).await,
        app.delete(&at(&c), &token).await,
        app.post(&format!("{}/notes", at(&c)), &token, json!({"body": "x"}))
            .await,
        app.get("/funnels", &token).await,
    ];
    for r in refused {
        r.expect_error(403, "insufficient_permissions");
    }
    let list = app.get("/contacts", &app.key).await.expect(200).body;
    assert_eq!(list["data"].as_array().unwrap().len(), 1, "nothing created");
    assert_eq!(list["data"][0]["first_name"], "Ann", "nothing changed");
    let allowed = app.member_token("member", &["contacts"]).await;
    app.get("/contacts", &allowed).await.expect(200);
    let made = app
        .post("/contacts", &allowed, json!({"first_name": "Bob"}))
        .await
        .expect(201)
        .body;
    assert_eq!(made["channel"], "api");
}
