//! Input hygiene over HTTP: names free of control characters and of invisible-only text,
//! names compared and stored in NFC.

use reqwest::Method;
use serde_json::json;

use crate::contacts::{enc, new_contact, tags_of, workspace_tags};
use crate::helpers::*;

/// Texts no name may be: control characters anywhere, or nothing that shows.
const UNFIT_NAMES: [&str; 8] = [
    "vi\u{0}p",
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

#[tokio::test]
async fn names_with_control_or_only_invisible_characters_are_refused_everywhere() {
    let app = spawn_app().await;
    let contact = new_contact(&app, json!({"first_name": "Ann"})).await;
    let product = app
        .post("/products", &app.key, json!({"name": "Teapot"}))
        .await
        .expect(201)
        .body;
    let tag = app
        .post("/tags", &app.key, json!({"name": "fine"}))
        .await
        .expect(201)
        .body;
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
    let got = app
        .get(&format!("/contacts/{}", contact["id"]), &app.key)
        .await
        .expect(200)
        .body;
    assert_eq!(got, contact, "the contact is unchanged");
}

#[tokio::test]
async fn invisible_characters_inside_a_visible_name_are_kept() {
    let app = spawn_app().await;
    let joined = "a\u{200D}b";
    let t = app
        .post("/tags", &app.key, json!({ "name": joined }))
        .await
        .expect(201)
        .body;
    assert_eq!(t["name"], joined);
}

#[tokio::test]
async fn the_two_unicode_spellings_of_a_name_are_one_name() {
    let app = spawn_app().await;
    assert_ne!(CAFE_NFC, CAFE_NFD, "two byte sequences");
    let tag = app
        .post("/tags", &app.key, json!({ "name": CAFE_NFD }))
        .await
        .expect(201)
        .body;
    assert_eq!(tag["name"], CAFE_NFC, "stored in NFC");
    app.post("/tags", &app.key, json!({ "name": CAFE_NFC }))
        .await
        .expect_error(409, "conflict");
    app.post("/tags", &app.key, json!({"name": "CAFE\u{301}"}))
        .await
        .expect_error(409, "conflict");

    let c = new_contact(
        &app,
        json!({"first_name": "Ren\u{65}\u{301}e", "tags": [CAFE_NFC]}),
    )
    .await;
    assert_eq!(c["first_name"], "Ren\u{e9}e");
    assert_eq!(tags_of(&c), [CAFE_NFC], "the existing tag is reused");
    assert_eq!(workspace_tags(&app).await, [CAFE_NFC]);
    let tagged = app
        .get(&format!("/contacts?tag={}", enc(CAFE_NFD)), &app.key)
        .await
        .expect(200)
        .body;
    assert_eq!(tagged["data"][0]["id"], c["id"], "found by either spelling");

    app.post("/closing-notes", &app.key, json!({ "name": CAFE_NFD }))
        .await
        .expect(201);
    app.post("/closing-notes", &app.key, json!({ "name": CAFE_NFC }))
        .await
        .expect_error(409, "conflict");

    let field = app
        .post(
            "/custom-fields",
            &app.key,
            json!({"label": CAFE_NFD, "key": "drink", "type": "select", "options": [CAFE_NFD, "tea"]}),
        )
        .await
        .expect(201)
        .body;
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
            &app.key,
            json!({"label": "Drinks", "type": "multi_select", "options": [CAFE_NFC, CAFE_NFD]}),
        )
        .await;
    invalid(twice, "options[1]");

    let p = app
        .post("/products", &app.key, json!({ "name": CAFE_NFD }))
        .await
        .expect(201)
        .body;
    assert_eq!(p["name"], CAFE_NFC);
    let found = listed(
        app.get(&format!("/products?search={}", enc(CAFE_NFD)), &app.key)
            .await,
    );
    assert_eq!(found.len(), 1, "found by either spelling");
}
