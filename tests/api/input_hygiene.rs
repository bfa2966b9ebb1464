//! Input hygiene over HTTP: names free of control characters and of invisible-only text,
//! names compared and stored in NFC, the price ceiling, no negative zero echoed, and no
//! contact created from nothing.

use reqwest::Method;
use serde_json::{json, Value};

use crate::contacts::{enc, new_contact, tags_of, workspace_tags};
use crate::helpers::*;
use crate::orders::number;

/// Texts no name may be: control characters anywhere, or nothing that shows.
const UNFIT_NAMES: [&str; 10] = [
    "vi\u{0}p",
    "line\u{2028}separator",
    "paragraph\u{2029}separator",
    "\u{0}",
    "a\u{1b}[31mb",
    "two\nlines",
    "\u{200B}",
    "\u{200C}\u{200D}",
    "\u{2060}\u{FEFF}",
    " \u{200B} ",
];

/// `café` with a precomposed `é`, and with `e` + a combining acute accent.
const CAFE_NFC: &str = "caf\u{e9}";
const CAFE_NFD: &str = "cafe\u{301}";

/// The JSON text a number was answered with, as the client reads it.
fn text_of(v: &Value) -> String {
    v.to_string()
}

#[tokio::test]
async fn names_with_control_or_only_invisible_characters_are_refused_everywhere() {
    let app = spawn_app().await;
    let contact = new_contact(&app, json!({"first_name": "Ann"})).await;
    let product = app
        .post("/products", json!({"name": "Teapot"}))
        .await
        .created();
    let tag = app.post("/tags", json!({"name": "fine"})).await.created();
    let contact_tags = format!("/contacts/{}/tags", contact["id"]);
    for name in UNFIT_NAMES {
        refusals(
            &app,
            Method::POST,
            "/contacts",
            vec![
                (json!({ "first_name": name }), "first_name"),
                (json!({"first_name": "Ann", "last_name": name}), "last_name"),
                (
                    json!({"first_name": "Ann", "tags": ["ok", name]}),
                    "tags[1]",
                ),
            ],
        )
        .await;
        for (path, body, field) in [
            ("/tags", json!({ "name": name }), "name"),
            ("/closing-notes", json!({ "name": name }), "name"),
            (
                "/custom-fields",
                json!({"label": name, "key": "k"}),
                "label",
            ),
            ("/products", json!({ "name": name }), "name"),
            (
                "/products",
                json!({"name": "Cup", "tags": [name], "categories": ["ok"]}),
                "tags[0]",
            ),
            (contact_tags.as_str(), json!({ "tags": [name] }), "tags[0]"),
        ] {
            refusals(&app, Method::POST, path, vec![(body, field)]).await;
        }
        for (path, field) in [
            (format!("/tags/{}", tag["id"]), "name"),
            (format!("/products/{}", product["id"]), "name"),
            (format!("/contacts/{}", contact["id"]), "first_name"),
        ] {
            let body = json!({ field: name });
            refusals(&app, Method::PATCH, &path, vec![(body, field)]).await;
        }
        let funnel = app
            .admin_post(
                &format!("/admin/workspaces/{}/funnels", app.workspace_id),
                json!({"name": "Sales", "stages": ["Lead", name]}),
            )
            .await;
        invalid(funnel, "stages[1]");
    }
    assert_eq!(
        workspace_tags(&app).await,
        ["fine"],
        "no unfit tag was made"
    );
    let got = app.get(&format!("/contacts/{}", contact["id"])).await.ok();
    assert_eq!(got, contact, "the contact is unchanged");
}

#[tokio::test]
async fn invisible_characters_inside_a_visible_name_are_kept() {
    let app = spawn_app().await;
    let joined = "a\u{200D}b";
    let t = app.post("/tags", json!({ "name": joined })).await.created();
    assert_eq!(t["name"], joined);
}

#[tokio::test]
async fn the_two_unicode_spellings_of_a_name_are_one_name() {
    let app = spawn_app().await;
    assert_ne!(CAFE_NFC, CAFE_NFD, "two byte sequences");
    let tag = app
        .post("/tags", json!({ "name": CAFE_NFD }))
        .await
        .created();
    assert_eq!(tag["name"], CAFE_NFC, "stored in NFC");
    conflict(app.post("/tags", json!({ "name": CAFE_NFC })).await);
    conflict(app.post("/tags", json!({"name": "CAFE\u{301}"})).await);

    let c = new_contact(
        &app,
        json!({"first_name": "Ren\u{65}\u{301}e", "tags": [CAFE_NFC]}),
    )
    .await;
    assert_eq!(c["first_name"], "Ren\u{e9}e");
    assert_eq!(tags_of(&c), [CAFE_NFC], "the existing tag is reused");
    assert_eq!(workspace_tags(&app).await, [CAFE_NFC]);
    let tagged = app
        .get(&format!("/contacts?tag={}", enc(CAFE_NFD)))
        .await
        .ok();
    assert_eq!(tagged["data"][0]["id"], c["id"], "found by either spelling");

    app.post("/closing-notes", json!({ "name": CAFE_NFD }))
        .await
        .expect(201);
    conflict(
        app.post("/closing-notes", json!({ "name": CAFE_NFC }))
            .await,
    );

    let field = app
        .post("/custom-fields", json!({"label": CAFE_NFD, "key": "drink", "type": "select", "options": [CAFE_NFD, "tea"]}))
        .await
        .created();
    assert_eq!(field["label"], CAFE_NFC);
    assert_eq!(field["options"], json!([CAFE_NFC, "tea"]));
    let d = new_contact(
        &app,
        json!({"first_name": "Dee", "custom_fields": {"drink": CAFE_NFD}}),
    )
    .await;
    assert_eq!(d["custom_fields"]["drink"], CAFE_NFC);
    let twice = app
        .post(
            "/custom-fields",
            json!({"label": "Drinks", "type": "multi_select", "options": [CAFE_NFC, CAFE_NFD]}),
        )
        .await;
    invalid(twice, "options[1]");

    let p = app
        .post("/products", json!({ "name": CAFE_NFD }))
        .await
        .created();
    assert_eq!(p["name"], CAFE_NFC);
    let found = listed(
        app.get(&format!("/products?search={}", enc(CAFE_NFD)))
            .await,
    );
    assert_eq!(found.len(), 1, "found by either spelling");
}

#[tokio::test]
async fn product_prices_stop_at_the_order_amount_ceiling() {
    let app = spawn_app().await;
    let p = app
        .post(
            "/products",
            json!({"name": "Yacht", "price": 100_000_000, "original_price": 99_999_999.99}),
        )
        .await
        .created();
    assert_eq!(p["price"], json!(100_000_000.0));
    refusals(
        &app,
        Method::POST,
        "/products",
        vec![
            (json!({"name": "x", "price": 9.2e18}), "price"),
            (json!({"name": "x", "price": 100_000_000.01}), "price"),
            (
                json!({"name": "x", "original_price": 1e300}),
                "original_price",
            ),
        ],
    )
    .await;
    refusals(
        &app,
        Method::PATCH,
        &format!("/products/{}", p["id"]),
        vec![(json!({"price": 100_000_001}), "price")],
    )
    .await;
}

#[tokio::test]
async fn negative_zero_is_answered_as_zero() {
    let app = spawn_app().await;
    let (minus_zero, minus_zero_int) = (number("-0.0"), number("-0"));
    let p = app
        .post(
            "/products",
            json!({"name": "Free", "price": minus_zero, "original_price": minus_zero_int}),
        )
        .await
        .created();
    assert_eq!(text_of(&p["price"]), "0.0");
    assert_eq!(text_of(&p["original_price"]), "0.0");

    app.post(
        "/custom-fields",
        json!({"label": "Score", "type": "number"}),
    )
    .await
    .expect(201);
    let c = new_contact(
        &app,
        json!({"first_name": "Ann", "custom_fields": {"score": minus_zero}}),
    )
    .await;
    assert_eq!(text_of(&c["custom_fields"]["score"]), "0");

    let o = app
        .post(
            "/orders",
            json!({
                "contact_id": c["id"], "paid_amount": minus_zero, "shipping_fee": minus_zero_int,
                "items": [{"name": "Gift", "quantity": 1, "unit_price": minus_zero}]
            }),
        )
        .await
        .created();
    for field in [
        &o["paid_amount"],
        &o["shipping_fee"],
        &o["items_total"],
        &o["items"][0]["unit_price"],
    ] {
        assert_eq!(text_of(field), "0.0", "order: {o}");
    }
}

#[tokio::test]
async fn a_contact_is_not_created_from_nothing() {
    let app = spawn_app().await;
    for body in [
        json!({}),
        json!({"tags": ["vip"]}),
        json!({"source": "import", "country_code": "DE", "custom_fields": {}}),
        json!({"first_name": null, "email": null}),
    ] {
        let r = app.post("/contacts", body.clone()).await;
        let r = r.expect_error(422, "validation_failed");
        assert_eq!(r.paths(), [""], "POST /contacts {body}: {}", r.body);
    }
    let empty = app
        .call(Method::POST, "/contacts")
        .token(&app.key)
        .raw("")
        .send()
        .await;
    empty.expect_error(422, "validation_failed");
    assert_eq!(listed(app.get("/contacts").await), Vec::<Value>::new());
    assert_eq!(workspace_tags(&app).await, Vec::<String>::new());
    for enough in [
        json!({"last_name": "Lee"}),
        json!({"email": "ann@example.com"}),
        json!({"chan_a_username": "@ann"}),
    ] {
        new_contact(&app, enough).await;
    }
}

#[tokio::test]
async fn a_body_over_two_mebibytes_is_413_on_every_kind_of_route() {
    let app = spawn_app().await;
    let big = format!(r#"{{"name": "{}"}}"#, "x".repeat(3 * 1024 * 1024));
    for key in [None, Some("big-1")] {
        let mut call = app
            .call(Method::POST, "/tags")
            .token(&app.key)
            .raw_owned(big.clone());
        if let Some(key) = key {
            call = call.header("Idempotency-Key", key);
        }
        let r = call.send().await;
        assert_eq!(
            (r.status, r.code()),
            (413, "payload_too_large"),
            "{}",
            r.body
        );
        assert!(r.body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("2097152 bytes"));
    }
    // A legacy route answers in its own format.
    let text = format!(r#"{{"text": "{}"}}"#, "x".repeat(3 * 1024 * 1024));
    let r = app
        .call(Method::POST, "/messages")
        .token(&app.key)
        .raw_owned(text)
        .send()
        .await;
    assert_eq!(r.status, 413, "{}", r.body);
    assert!(r.body["message"].as_str().unwrap().contains("larger than"));
    // Just under the limit is read (and refused for what it says, not its size).
    let under = format!(r#"{{"name": "{}"}}"#, "x".repeat(2 * 1024 * 1024 - 20));
    let r = app
        .call(Method::POST, "/tags")
        .token(&app.key)
        .raw_owned(under)
        .send()
        .await;
    assert_eq!(
        (r.status, r.code()),
        (422, "validation_failed"),
        "{}",
        r.body
    );
}

#[tokio::test]
async fn a_whole_number_written_with_a_fraction_or_exponent_is_taken_where_one_is_wanted() {
    let app = spawn_app().await;
    let c = new_contact(&app, json!({"first_name": "Ann"})).await;
    let o = app
        .post(
            "/orders",
            json!({"contact_id": number(&format!("{}.0", c["id"])),
                   "items": [{"name": "Tea", "quantity": number("2.00"), "unit_price": 5}]}),
        )
        .await
        .created();
    assert_eq!(o["contact_id"], c["id"]);
    assert_eq!(text_of(&o["items"][0]["quantity"]), "2");
    // So is one written with an exponent.
    for (written, whole) in [("1e2", "100"), ("1.5E+1", "15"), ("300e-2", "3")] {
        let o = app
            .post(
                "/orders",
                json!({"contact_id": c["id"],
                       "items": [{"name": "Tea", "quantity": number(written), "unit_price": 5}]}),
            )
            .await
            .created();
        assert_eq!(text_of(&o["items"][0]["quantity"]), whole, "{written}");
    }
    // A fraction is still no whole number.
    for fraction in ["2.5", "1.25e1", "1e-1"] {
        app.post(
            "/orders",
            json!({"contact_id": c["id"],
                   "items": [{"name": "Tea", "quantity": number(fraction), "unit_price": 5}]}),
        )
        .await
        .expect_error(422, "validation_failed");
    }
}

#[tokio::test]
async fn an_array_where_a_record_is_expected_is_refused_at_any_depth() {
    let app = spawn_app().await;
    let campaign = json!({"name": "a", "text": "b", "channel": "api", "audience": []});
    invalid(app.post("/campaigns", campaign).await, "audience");
    let hook = json!({"url": "https://hooks.example.com/in", "events": ["*"],
                      "filters": [null, null]});
    invalid(app.post("/webhooks", hook).await, "filters");
    let order = json!({"contact_id": 1, "items": [["Tea", 1, 5]]});
    invalid(app.post("/orders", order).await, "items[0]");
    // The legacy routes answer their own error shape.
    let r = app
        .post("/messages", json!({"contact": ["+15550100"], "text": "hi"}))
        .await;
    assert_eq!(r.status, 422, "body: {}", r.body);
    let message = r.body["message"].as_str().unwrap_or_default();
    assert!(message.starts_with("contact"), "{message}");
    // Lists of values and free JSON still read arrays.
    let tagged = json!({"first_name": "Ann", "tags": ["vip"]});
    app.post("/contacts", tagged).await.created();
}

/// A choice (an enum) given anything but a string is a wrong type: 422 naming the field,
/// not 400 (the body is good JSON).
#[tokio::test]
async fn a_choice_given_null_a_number_or_a_boolean_is_422_naming_it() {
    let app = spawn_app().await;
    let call = |direction: Value| {
        json!({"direction": direction, "from_number": "+15550001", "to_number": "+15550002",
               "outcome": "completed", "started_at": "2026-11-26T10:00:00Z"})
    };
    for wrong in [json!(null), json!(1), json!(true)] {
        invalid(app.post("/calls", call(wrong)).await, "direction");
    }
    let form = json!({"name": "Intake", "fields": [{"key": "a", "label": "A", "type": null}]});
    invalid(app.post("/forms", form).await, "fields[0].type");
    // Broken JSON is still 400, and a good choice is taken.
    app.call(reqwest::Method::POST, "/calls")
        .token(&app.key)
        .raw(r#"{"direction": nul}"#)
        .send()
        .await
        .expect_error(400, "invalid_request");
    let r = app.post("/calls", call(json!("inbound"))).await;
    assert_eq!(r.status, 201, "body: {}", r.body);
}

/// Every wrong field of a body is named, not only the first: wrong types, unknown fields
/// and nested ones, in one answer.
#[tokio::test]
async fn every_wrong_field_of_a_body_is_named_at_once() {
    let app = spawn_app().await;
    let body = json!({"first_name": 5, "email": true, "nickname": "Ann", "last_name": "Lee"});
    let r = app
        .post("/contacts", body)
        .await
        .expect_error(422, "validation_failed");
    let mut paths = r.paths();
    paths.sort();
    assert_eq!(paths, ["email", "first_name", "nickname"], "{}", r.body);
    assert_eq!(r.body["error"]["message"], "3 fields are invalid");
    // Nested: two wrong fields of one form field, and a required one left out.
    let form = json!({"name": "Intake", "fields": [{"key": 1, "label": "A", "type": null}]});
    let mut paths = app
        .post("/forms", form)
        .await
        .expect_error(422, "validation_failed")
        .paths();
    paths.sort();
    assert_eq!(paths, ["fields[0].key", "fields[0].type"]);
    let order = json!({"contact_id": "one"});
    let paths = app
        .post("/orders", order)
        .await
        .expect_error(422, "validation_failed")
        .paths();
    assert_eq!(
        paths,
        ["contact_id"],
        "a field taken out is not also missing"
    );
    // The legacy routes say them all in their message.
    let r = app
        .post("/messages", json!({"contact": {"phone": 5}, "text": 7}))
        .await;
    assert_eq!(r.status, 422, "body: {}", r.body);
    let message = r.body["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("contact.phone") && message.contains("text"),
        "{message}"
    );
}
