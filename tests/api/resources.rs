use crate::helpers::*;

use std::collections::BTreeSet;

use futures::future::join_all;
use reqwest::Method;
use serde_json::{json, Value};

// ----- Small helpers: outcomes checked where the test calls them. -----

const TAGS: &str = "/tags";
const FIELDS: &str = "/custom-fields";
const NOTES: &str = "/closing-notes";

const TAG_FIELDS: &str = "object id name color created_at updated_at";
const NOTE_FIELDS: &str = "object id name description created_at";
const EVENT_FIELDS: &str = "object type category description content_fields contact_fields";
const FIELD_FIELDS: &str =
    "object id key label type options description ai_enabled show_in_table archived created_at";

/// POST answering 422 `validation_failed` naming exactly `field`.
async fn refused(app: &TestApp, path: &str, body: Value, field: &str) {
    let r = post(app, path, body.clone()).await;
    let got = (r.status, r.code(), r.paths());
    let want = (422, "validation_failed", vec![field.to_string()]);
    assert_eq!(got, want, "POST {path} {body} answered {}", r.body);
}

/// The record holds these values (and maybe more).
#[track_caller]
fn assert_has(v: &Value, want: Value) {
    for (k, w) in want.as_object().expect("object") {
        assert_eq!(&v[k], w, "field {k} of {v}");
    }
}

/// A 200 list envelope holding everything (has_more false, no cursor); its items.
#[track_caller]
fn listed(r: Resp) -> Vec<Value> {
    let body = r.ok();
    assert_eq!(body["object"], "list", "body: {body}");
    assert_eq!(body["has_more"], false, "body: {body}");
    assert!(body["next_cursor"].is_null(), "body: {body}");
    body["data"].as_array().expect("data array").clone()
}

/// The record has exactly these (space-separated) fields.
#[track_caller]
fn assert_fields(v: &Value, fields: &str) {
    let got: BTreeSet<&str> = v
        .as_object()
        .expect("object")
        .keys()
        .map(|k| &k[..])
        .collect();
    assert_eq!(got, fields.split(' ').collect(), "record: {v}");
}

/// An ISO 8601 timestamp in UTC.
#[track_caller]
fn assert_utc(v: &Value) {
    let s = v.as_str().unwrap_or_else(|| panic!("not a string: {v}"));
    assert!(s.ends_with('Z'), "not UTC: {s}");
    chrono::DateTime::parse_from_rfc3339(s).unwrap_or_else(|e| panic!("{s}: {e}"));
}

/// Copies every field of `extra` into `base`.
fn merge(base: &mut Value, extra: &Value) {
    let base = base.as_object_mut().expect("object");
    base.extend(extra.as_object().expect("object").clone());
}

fn column(items: &[Value], field: &str) -> Vec<String> {
    items
        .iter()
        .map(|i| i[field].as_str().unwrap_or_default().to_string())
        .collect()
}

async fn post(app: &TestApp, path: &str, body: Value) -> Resp {
    app.post(path, body).await
}

async fn list(app: &TestApp, path: &str) -> Vec<Value> {
    listed(app.get(path).await)
}

async fn new_tag(app: &TestApp, name: &str) -> Value {
    post(app, TAGS, json!({ "name": name })).await.created()
}

async fn tag_names(app: &TestApp) -> Vec<String> {
    column(&list(app, TAGS).await, "name")
}

fn at(base: &str, record: &Value) -> String {
    format!("{base}/{}", record["id"])
}

// ----- Tags -----

#[tokio::test]
async fn creating_a_tag_answers_201_with_the_tag_record() {
    let app = spawn_app().await;
    let body = json!({"name": "VIP", "color": "chart-3"});
    let tag = post(&app, TAGS, body.clone()).await.created();
    assert_fields(&tag, TAG_FIELDS);
    assert_has(&tag, body);
    assert_eq!(tag["object"], "tag");
    assert!(tag["id"].is_u64(), "id is an integer: {tag}");
    assert_utc(&tag["created_at"]);
    assert_utc(&tag["updated_at"]);
}

#[tokio::test]
async fn a_tag_created_without_a_color_has_a_null_color_and_every_chart_color_is_accepted() {
    let app = spawn_app().await;
    let tag = new_tag(&app, "Lead").await;
    assert!(tag["color"].is_null(), "{tag}");
    for n in 1..=8 {
        let body = json!({"name": format!("t{n}"), "color": format!("chart-{n}")});
        let tag = post(&app, TAGS, body.clone()).await.created();
        assert_eq!(tag["color"], body["color"]);
    }
}

#[tokio::test]
async fn the_tag_list_is_an_unpaginated_envelope_newest_first() {
    let app = spawn_app().await;
    assert!(list(&app, TAGS).await.is_empty());
    for name in ["first", "second", "third"] {
        new_tag(&app, name).await;
    }
    let data = list(&app, TAGS).await;
    assert_eq!(column(&data, "name"), ["third", "second", "first"]);
    for item in &data {
        assert_fields(item, TAG_FIELDS);
        assert_eq!(item["object"], "tag");
    }
}

#[tokio::test]
async fn a_tag_name_that_differs_only_in_case_is_a_conflict() {
    let app = spawn_app().await;
    new_tag(&app, "Hot Lead").await;
    for dup in ["Hot Lead", "hot lead", "HOT LEAD", "  hOt LeAd "] {
        conflict(post(&app, TAGS, json!({ "name": dup })).await);
    }
    assert_eq!(tag_names(&app).await, ["Hot Lead"]);
}

#[tokio::test]
async fn tag_names_must_have_1_to_80_characters() {
    let app = spawn_app().await;
    for bad in [String::new(), "   ".into(), "x".repeat(81), "é".repeat(81)] {
        refused(&app, TAGS, json!({ "name": bad }), "name").await;
    }
    let max = "é".repeat(80);
    assert_eq!(new_tag(&app, &max).await["name"], max.as_str());
}

#[tokio::test]
async fn a_tag_color_outside_chart_1_to_8_is_refused_naming_color() {
    let app = spawn_app().await;
    for bad in ["chart-9", "chart-0", "red", "Chart-1", ""] {
        refused(&app, TAGS, json!({"name": "x", "color": bad}), "color").await;
    }
    assert!(tag_names(&app).await.is_empty());
}

#[tokio::test]
async fn a_tag_body_with_an_unknown_field_a_wrong_type_or_no_name_is_refused_naming_the_field() {
    let app = spawn_app().await;
    let cases = [
        (json!({"name": "x", "colour": "chart-1"}), "colour"),
        (json!({"name": 5}), "name"),
        (json!({"name": "x", "color": 3}), "color"),
        (json!({}), "name"),
        (json!({"color": "chart-1"}), "name"),
    ];
    for (body, path) in cases {
        refused(&app, TAGS, body, path).await;
    }
    assert!(tag_names(&app).await.is_empty());
}

#[tokio::test]
async fn a_malformed_json_body_is_a_400_invalid_request() {
    let app = spawn_app().await;
    let tag = new_tag(&app, "x").await;
    let calls = [
        (Method::POST, TAGS.to_string()),
        (Method::POST, FIELDS.to_string()),
        (Method::POST, NOTES.to_string()),
        (Method::PATCH, at(TAGS, &tag)),
    ];
    for (method, path) in calls {
        let call = app.call(method, &path).token(&app.key).raw("{\"name\": ");
        bad_request(call.send().await);
    }
    assert_eq!(tag_names(&app).await, ["x"]);
}

#[tokio::test]
async fn patching_a_tag_renames_recolors_and_clears_its_color() {
    let app = spawn_app().await;
    let tag = new_tag(&app, "old").await;
    let path = at(TAGS, &tag);
    let steps = [
        json!({"name": "new"}),
        json!({"color": "chart-5"}),
        json!({"name": "both", "color": "chart-1"}),
        json!({"color": null}),
    ];
    let mut want = json!({"object": "tag", "id": tag["id"], "created_at": tag["created_at"]});
    let mut last = Value::Null;
    for body in steps {
        merge(&mut want, &body);
        last = app.patch(&path, body).await.ok();
        assert_fields(&last, TAG_FIELDS);
        assert_has(&last, want.clone());
    }
    assert_eq!(list(&app, TAGS).await, vec![last]);
}

#[tokio::test]
async fn a_renamed_tag_frees_its_old_name_and_takes_the_new_one() {
    let app = spawn_app().await;
    let path = at(TAGS, &new_tag(&app, "Beta").await);
    app.patch(&path, json!({"name": "Gamma"})).await.ok();
    new_tag(&app, "beta").await;
    conflict(post(&app, TAGS, json!({"name": "GAMMA"})).await);
}

#[tokio::test]
async fn a_tag_may_be_renamed_to_another_case_of_its_own_name() {
    let app = spawn_app().await;
    let path = at(TAGS, &new_tag(&app, "vip").await);
    let renamed = app.patch(&path, json!({"name": "VIP"})).await.ok();
    assert_eq!(renamed["name"], "VIP");
    assert_eq!(tag_names(&app).await, ["VIP"]);
}

#[tokio::test]
async fn a_tag_patch_that_is_empty_clears_the_name_or_breaks_a_rule_is_refused() {
    let app = spawn_app().await;
    let path = at(TAGS, &new_tag(&app, "keep").await);
    let empty = app.patch(&path, json!({})).await;
    empty.expect_error(422, "validation_failed");
    let cases = [
        (json!({"name": null}), "name"),
        (json!({"name": ""}), "name"),
        (json!({"name": "x".repeat(81)}), "name"),
        (json!({"name": 1}), "name"),
        (json!({"color": "chart-9"}), "color"),
        (json!({"label": "x"}), "label"),
    ];
    for (body, p) in cases {
        invalid(app.patch(&path, body).await, p);
    }
    assert_eq!(tag_names(&app).await, ["keep"]);
}

#[tokio::test]
async fn renaming_a_tag_onto_another_tags_name_in_any_case_is_a_conflict() {
    let app = spawn_app().await;
    new_tag(&app, "Alpha").await;
    let beta = at(TAGS, &new_tag(&app, "Beta").await);
    for clash in ["Alpha", "alpha", "ALPHA"] {
        conflict(app.patch(&beta, json!({ "name": clash })).await);
    }
    assert_eq!(tag_names(&app).await, ["Beta", "Alpha"]);
}

#[tokio::test]
async fn patching_or_deleting_an_unknown_tag_is_404_and_a_bad_id_is_400() {
    let app = spawn_app().await;
    let rename = json!({"name": "x"});
    not_found(app.patch("/tags/999999", rename.clone()).await);
    not_found(app.delete("/tags/999999").await);
    for bad in ["/tags/abc", "/tags/0", "/tags/-1", "/tags/1.5"] {
        bad_request(app.patch(bad, rename.clone()).await);
        bad_request(app.delete(bad).await);
    }
}

#[tokio::test]
async fn deleting_a_tag_answers_the_deletion_and_frees_the_name() {
    let app = spawn_app().await;
    let tag = new_tag(&app, "Temp").await;
    new_tag(&app, "Stays").await;
    let path = at(TAGS, &tag);
    let deleted = app.delete(&path).await.ok();
    let want = json!({"object": "tag", "id": tag["id"], "deleted": true, "contacts_updated": 0});
    assert_eq!(deleted, want);
    assert_eq!(tag_names(&app).await, ["Stays"]);
    assert_ne!(new_tag(&app, "temp").await["id"], tag["id"]);
    not_found(app.delete(&path).await);
    not_found(app.patch(&path, json!({"name": "back"})).await);
}

#[tokio::test]
async fn a_tag_of_another_workspace_is_not_found() {
    let app = spawn_app().await;
    let (other_key, foreign) = foreign_record(&app, TAGS, json!({"name": "Theirs"})).await;
    let path = at(TAGS, &foreign);
    not_found(app.patch(&path, json!({"name": "Mine"})).await);
    not_found(app.delete(&path).await);
    assert!(tag_names(&app).await.is_empty());
    // The name is free here, and the other workspace still has its tag unchanged.
    new_tag(&app, "Theirs").await;
    assert_eq!(listed(app.get_as(&other_key, TAGS).await), vec![foreign]);
}

// ----- Custom fields -----

#[tokio::test]
async fn a_custom_field_gets_defaults_and_a_key_derived_from_its_label() {
    let app = spawn_app().await;
    let f = post(&app, FIELDS, json!({"label": "Shoe Size (EU)"}))
        .await
        .created();
    assert_fields(&f, FIELD_FIELDS);
    let want = json!({
        "object": "custom_field", "key": "shoe_size_eu", "label": "Shoe Size (EU)",
        "type": "text", "options": null, "description": null, "ai_enabled": true,
        "show_in_table": false, "archived": false,
    });
    assert_has(&f, want);
    assert!(f["id"].is_u64(), "{f}");
    assert_utc(&f["created_at"]);
}

#[tokio::test]
async fn a_custom_field_keeps_every_field_it_was_given() {
    let app = spawn_app().await;
    let body = json!({
        "label": "Size", "key": "size_2", "type": "multi_select", "options": ["S", "M", "L"],
        "description": "Shirt size", "ai_enabled": false, "show_in_table": true,
    });
    let f = post(&app, FIELDS, body.clone()).await.created();
    assert_has(&f, body);
}

#[tokio::test]
async fn every_custom_field_type_is_accepted() {
    let app = spawn_app().await;
    for t in "text textarea number boolean date url select multi_select".split(' ') {
        let mut body = json!({"label": format!("F {t}"), "type": t});
        if t.ends_with("select") {
            body["options"] = json!(["a"]);
        }
        let f = post(&app, FIELDS, body.clone()).await.created();
        assert_eq!(f["type"], t);
        assert_eq!(f["options"], body["options"]);
    }
}

#[tokio::test]
async fn an_explicit_key_must_be_lower_snake_case_starting_with_a_letter_up_to_64_chars() {
    let app = spawn_app().await;
    let too_long = "a".repeat(65);
    let bad_keys = [
        "Size",
        "1size",
        "shoe-size",
        "_size",
        "size_",
        "a__b",
        "",
        "a b",
        &too_long,
    ];
    for bad in bad_keys {
        refused(&app, FIELDS, json!({"label": "L", "key": bad}), "key").await;
    }
    let max = "a".repeat(64);
    let f = post(&app, FIELDS, json!({"label": "L", "key": max}))
        .await
        .created();
    assert_eq!(f["key"], max.as_str());
}

#[tokio::test]
async fn a_key_equal_to_a_built_in_contact_field_is_refused_also_when_derived() {
    let app = spawn_app().await;
    for key in ["email", "phone", "tags", "first_name", "custom_fields"] {
        refused(&app, FIELDS, json!({"label": "L", "key": key}), "key").await;
    }
    for label in ["Email", "Phone", "Tags", "First Name"] {
        refused(&app, FIELDS, json!({ "label": label }), "key").await;
    }
    assert!(list(&app, FIELDS).await.is_empty());
}

#[tokio::test]
async fn an_existing_custom_field_key_is_a_conflict() {
    let app = spawn_app().await;
    post(&app, FIELDS, json!({"label": "Shoe size"}))
        .await
        .created();
    let clashes = [
        json!({"label": "Shoe Size"}),
        json!({"label": "Other", "key": "shoe_size"}),
        json!({"label": "shoe-size", "type": "number"}),
    ];
    for body in clashes {
        conflict(post(&app, FIELDS, body).await);
    }
    assert_eq!(list(&app, FIELDS).await.len(), 1);
}

#[tokio::test]
async fn a_custom_field_label_is_required_with_1_to_200_characters() {
    let app = spawn_app().await;
    refused(&app, FIELDS, json!({"key": "k"}), "label").await;
    for bad in [String::new(), "   ".into(), "l".repeat(201)] {
        refused(&app, FIELDS, json!({"label": bad, "key": "k"}), "label").await;
    }
    post(&app, FIELDS, json!({"label": "l".repeat(200), "key": "k"}))
        .await
        .created();
}

#[tokio::test]
async fn a_custom_field_with_a_bad_type_options_or_description_is_refused_naming_the_field() {
    let app = spawn_app().await;
    let with = |extra: Value| {
        let mut body = json!({"label": "A"});
        merge(&mut body, &extra);
        body
    };
    let select = |options: Value| with(json!({"type": "select", "options": options}));
    let cases = [
        (with(json!({"type": "color"})), "type"),
        (with(json!({"type": 1})), "type"),
        (with(json!({"type": "select"})), "options"),
        (with(json!({"type": "multi_select"})), "options"),
        (select(json!([])), "options"),
        (with(json!({"options": ["x"]})), "options"),
        (with(json!({"type": "number", "options": ["x"]})), "options"),
        (select(json!(["S", "M", "S"])), "options[2]"),
        (select(json!(["S", ""])), "options[1]"),
        (with(json!({"description": "d".repeat(501)})), "description"),
        (with(json!({"ai_enabled": "yes"})), "ai_enabled"),
        (with(json!({"required": true})), "required"),
    ];
    for (body, path) in cases {
        refused(&app, FIELDS, body, path).await;
    }
    assert!(list(&app, FIELDS).await.is_empty());
}

#[tokio::test]
async fn a_select_field_holds_up_to_200_options_and_a_description_up_to_500_chars() {
    let app = spawn_app().await;
    let options = |n: usize| (0..n).map(|i| format!("opt {i}")).collect::<Vec<_>>();
    let select = |n| json!({"label": "Big", "type": "select", "options": options(n)});
    refused(&app, FIELDS, select(201), "options").await;
    let f = post(&app, FIELDS, select(200)).await.created();
    assert_eq!(f["options"], json!(options(200)));
    let body = json!({"label": "D", "description": "d".repeat(500)});
    let d = post(&app, FIELDS, body.clone()).await.created();
    assert_eq!(d["description"], body["description"]);
}

#[tokio::test]
async fn custom_fields_are_listed_in_creation_order_and_read_one_by_one() {
    let app = spawn_app().await;
    let mut fields = Vec::new();
    for label in ["Zeta", "Alpha", "Mid"] {
        fields.push(
            post(&app, FIELDS, json!({ "label": label }))
                .await
                .created(),
        );
    }
    assert_eq!(list(&app, FIELDS).await, fields);
    for f in &fields {
        assert_eq!(&app.get(&at(FIELDS, f)).await.ok(), f);
    }
}

#[tokio::test]
async fn reading_an_unknown_or_foreign_custom_field_is_404_and_a_bad_id_is_400() {
    let app = spawn_app().await;
    not_found(app.get("/custom-fields/999999").await);
    bad_request(app.get("/custom-fields/abc").await);
    bad_request(app.get("/custom-fields/0").await);
    let (_, theirs) = foreign_record(&app, FIELDS, json!({"label": "Theirs"})).await;
    not_found(app.get(&at(FIELDS, &theirs)).await);
}

// ----- Closing notes -----

#[tokio::test]
async fn a_closing_note_is_created_and_listed_in_creation_order() {
    let app = spawn_app().await;
    let body = json!({"name": "Resolved", "description": "Fixed"});
    let note = post(&app, NOTES, body.clone()).await.created();
    assert_fields(&note, NOTE_FIELDS);
    assert_has(&note, body);
    assert_eq!(note["object"], "closing_note");
    assert!(note["id"].is_u64(), "{note}");
    assert_utc(&note["created_at"]);
    let bare = post(&app, NOTES, json!({"name": "Spam"})).await.created();
    assert!(bare["description"].is_null());
    assert_eq!(list(&app, NOTES).await, vec![note, bare]);
}

#[tokio::test]
async fn a_closing_note_name_taken_in_any_case_is_a_conflict() {
    let app = spawn_app().await;
    post(&app, NOTES, json!({"name": "No Answer"}))
        .await
        .created();
    for dup in ["No Answer", "no answer", "NO ANSWER"] {
        conflict(post(&app, NOTES, json!({ "name": dup })).await);
    }
    assert_eq!(list(&app, NOTES).await.len(), 1);
}

#[tokio::test]
async fn closing_note_names_and_descriptions_have_length_limits() {
    let app = spawn_app().await;
    let long_name = "x".repeat(81);
    let long_description = json!({"name": "ok", "description": "d".repeat(301)});
    let cases = [
        (json!({ "name": long_name }), "name"),
        (json!({"name": "  "}), "name"),
        (long_description, "description"),
        (json!({"description": "d"}), "name"),
        (json!({"name": "ok", "reason": "d"}), "reason"),
    ];
    for (body, path) in cases {
        refused(&app, NOTES, body, path).await;
    }
    let max = json!({"name": "n".repeat(80), "description": "d".repeat(300)});
    assert_has(&post(&app, NOTES, max.clone()).await.created(), max);
}

#[tokio::test]
async fn the_101st_closing_note_reaches_the_limit() {
    let app = spawn_app().await;
    let names: BTreeSet<String> = (0..100).map(|i| format!("Reason {i}")).collect();
    let names_vec: Vec<&String> = names.iter().collect();
    for chunk in names_vec.chunks(25) {
        let calls = chunk
            .iter()
            .map(|n| post(&app, NOTES, json!({ "name": n })));
        for r in join_all(calls).await {
            r.created();
        }
    }
    let over = post(&app, NOTES, json!({"name": "One too many"})).await;
    over.expect_error(422, "limit_reached");
    let stored = column(&list(&app, NOTES).await, "name");
    assert_eq!(stored.into_iter().collect::<BTreeSet<_>>(), names);
}

// ----- Funnels -----

#[tokio::test]
async fn funnels_are_listed_with_their_stages() {
    let app = spawn_app().await;
    assert!(list(&app, "/funnels").await.is_empty());
    let funnel = app.new_funnel("Sales", &["Lead", "Won"]).await;
    assert_eq!(list(&app, "/funnels").await, vec![funnel.clone()]);
    assert_has(&funnel, json!({"object": "funnel", "name": "Sales"}));
    assert!(funnel["id"].is_u64(), "{funnel}");
    let stages = funnel["stages"].as_array().expect("stages");
    assert_eq!(column(stages, "name"), ["Lead", "Won"]);
    for (i, stage) in stages.iter().enumerate() {
        assert_fields(stage, "id name position");
        assert!(stage["id"].is_u64(), "{stage}");
        assert_eq!(stage["position"], i);
    }
    assert_ne!(stages[0]["id"], stages[1]["id"]);
}

#[tokio::test]
async fn flat_funnels_give_one_row_per_stage() {
    let app = spawn_app().await;
    let sales = app.new_funnel("Sales", &["Lead", "Won"]).await;
    let support = app.new_funnel("Support", &["Open"]).await;
    let mut want = Vec::new();
    for f in [&sales, &support] {
        for s in f["stages"].as_array().unwrap() {
            want.push(json!({
                "object": "funnel_stage", "funnel_id": f["id"], "funnel_name": f["name"],
                "stage_id": s["id"], "stage_name": s["name"], "position": s["position"],
            }));
        }
    }
    assert_eq!(list(&app, "/funnels?flat=true").await, want);
    let nested = list(&app, "/funnels?flat=false").await;
    assert_eq!(nested, vec![sales, support]);
}

#[tokio::test]
async fn a_flat_value_other_than_true_or_false_is_refused() {
    let app = spawn_app().await;
    for q in ["maybe", "1", "TRUE", ""] {
        let r = app.get(&format!("/funnels?flat={q}")).await;
        invalid(r, "flat");
    }
}

#[tokio::test]
async fn an_operator_funnel_without_stages_or_with_a_blank_stage_is_refused() {
    let app = spawn_app().await;
    let path = format!("/admin/workspaces/{}/funnels", app.workspace_id);
    let empty = json!({"name": "E", "stages": []});
    invalid(app.admin_post(&path, empty).await, "stages");
    let blank = json!({"name": "B", "stages": ["Lead", " "]});
    invalid(app.admin_post(&path, blank).await, "stages[1]");
    assert!(list(&app, "/funnels").await.is_empty());
}

// ----- Event catalog -----

#[tokio::test]
async fn the_event_catalog_lists_58_distinct_types() {
    let app = spawn_app().await;
    let data = list(&app, "/events").await;
    assert_eq!(data.len(), 58);
    for t in &data {
        assert_fields(t, EVENT_FIELDS);
        assert_eq!(t["object"], "event_type");
        assert!(t["content_fields"].is_array(), "{t}");
        assert!(t["contact_fields"].is_array(), "{t}");
    }
    let types: BTreeSet<String> = column(&data, "type").into_iter().collect();
    assert_eq!(types.len(), 58, "types are unique");
    let find = |name: &str| {
        let found = data.iter().find(|t| t["type"] == name);
        found.unwrap_or_else(|| panic!("{name} missing")).clone()
    };
    let contact_created = find("contact.created");
    assert_eq!(contact_created["category"], "contacts");
    let contact_fields = contact_created["contact_fields"].as_array().unwrap();
    assert!(contact_fields.contains(&json!("email")));
    assert_eq!(find("note.created")["content_fields"], json!(["body"]));
    find("message.received");
    find("message.sent");
}

// ----- Durability -----

#[tokio::test]
async fn tags_custom_fields_closing_notes_and_funnels_survive_a_restart() {
    let app = spawn_app().await;
    let tag = post(&app, TAGS, json!({"name": "Kept", "color": "chart-2"}))
        .await
        .created();
    let body = json!({"label": "Plan", "type": "select", "options": ["a", "b"]});
    let field = post(&app, FIELDS, body).await.created();
    let note = post(&app, NOTES, json!({"name": "Done", "description": "ok"}))
        .await
        .created();
    let funnel = app.new_funnel("Sales", &["Lead", "Won"]).await;

    let app = app.restart().await;

    assert_eq!(list(&app, TAGS).await, vec![tag.clone()]);
    assert_eq!(list(&app, FIELDS).await, vec![field.clone()]);
    assert_eq!(app.get(&at(FIELDS, &field)).await.ok(), field);
    assert_eq!(list(&app, NOTES).await, vec![note]);
    assert_eq!(list(&app, "/funnels").await, vec![funnel]);
    // The rules and the id sequence carry on from the stored state.
    conflict(post(&app, TAGS, json!({"name": "KEPT"})).await);
    conflict(post(&app, FIELDS, json!({"label": "plan"})).await);
    let fresh = new_tag(&app, "Fresh").await;
    assert_ne!(fresh["id"], tag["id"]);
    assert_ne!(fresh["id"], field["id"]);
}

// ----- Concurrency -----

#[tokio::test]
async fn fifty_concurrent_tags_with_distinct_names_all_get_distinct_ids() {
    let app = spawn_app().await;
    let calls = (0..50).map(|i| post(&app, TAGS, json!({"name": format!("tag {i}")})));
    let mut ids = BTreeSet::new();
    for r in join_all(calls).await {
        ids.insert(r.created()["id"].as_u64().expect("integer id"));
    }
    assert_eq!(ids.len(), 50);
    assert_eq!(tag_names(&app).await.len(), 50);
}

#[tokio::test]
async fn twenty_concurrent_tags_with_the_same_name_create_exactly_one() {
    let app = spawn_app().await;
    let calls = (0..20).map(|i| {
        let name = if i % 2 == 0 { "Same" } else { "SAME" };
        post(&app, TAGS, json!({ "name": name }))
    });
    let results = join_all(calls).await;
    let (wins, losses): (Vec<Resp>, Vec<Resp>) = results.into_iter().partition(|r| r.status == 201);
    assert_eq!(wins.len(), 1, "exactly one wins");
    losses.into_iter().for_each(conflict);
    assert_eq!(tag_names(&app).await.len(), 1);
}
