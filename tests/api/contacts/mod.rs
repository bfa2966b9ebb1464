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
    let r = app.post("/contacts", body).await.expect(201);
    assert_eq!(r.body["object"], "contact", "body: {}", r.body);
    r.body
}

/// The contact's URL below /api/v1.
pub(crate) fn at(contact: &Value) -> String {
    format!("/contacts/{}", id(contact))
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
    let body = app.get("/tags").await.ok();
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
    app.post("/custom-fields", body).await.created()
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
    let archived = app.admin_post(&path, json!({})).await.ok();
    assert_eq!(archived["archived"], true, "body: {archived}");
}

mod create;
mod custom_fields;
mod read_patch_delete;
mod stage_assignee_notes;
mod tags;
