//! Products over HTTP: every field rule of the Product table, listing (pages, filters),
//! reading, patching, deleting, products on order items, and who may read and write.

use std::time::Duration;

use chrono::{DateTime, Utc};
use reqwest::Method;
use serde_json::{json, Value};
use switchboard_actors::clock::ManualClock;

use crate::contacts::no_such;
use crate::fixtures::*;
use crate::helpers::*;

const PRODUCTS: &str = "/products";
const PRODUCT_FIELDS: &str = "object id name description price original_price currency sku \
    brand in_stock stock_quantity image_url images url tags categories source created_at \
    updated_at";

// ----- Small helpers -----

fn at(p: &Value) -> String {
    format!("{PRODUCTS}/{}", id(p))
}

fn named(extra: Value) -> Value {
    with(json!({"name": "Teapot"}), extra)
}

async fn create(app: &TestApp, body: Value) -> Value {
    app.post(PRODUCTS, body).await.created()
}

async fn get(app: &TestApp, p: &Value) -> Value {
    app.get(&at(p)).await.ok()
}

async fn list_ids(app: &TestApp, query: &str) -> Vec<u64> {
    listed_ids(app.get(&format!("{PRODUCTS}{query}")).await)
}

fn urls(n: usize) -> Vec<String> {
    (0..n)
        .map(|i| format!("https://cdn.example.com/{i}.png"))
        .collect()
}

fn labels(n: usize) -> Vec<String> {
    (0..n).map(|i| format!("label {i}")).collect()
}

/// An https URL of exactly `len` characters.
fn url_of(len: usize) -> String {
    let base = "https://example.com/";
    format!("{base}{}", "a".repeat(len - base.len()))
}

fn full_body() -> Value {
    json!({
        "name": "Cast iron teapot",
        "description": "Keeps tea hot for an hour.",
        "price": 49.9,
        "original_price": "was 59.90",
        "currency": "EUR",
        "sku": "TP-100",
        "brand": "Kettle & Co",
        "in_stock": true,
        "stock_quantity": 12,
        "image_url": "https://cdn.example.com/teapot.png",
        "images": ["https://cdn.example.com/1.png", "http://cdn.example.com/2.png"],
        "url": "https://shop.example.com/teapot",
        "tags": ["kitchen", "gift"],
        "categories": ["Tea", "Home"]
    })
}

// ----- Create -----

#[tokio::test]
async fn creating_a_product_answers_201_with_every_field_and_source_manual() {
    let app = spawn_app().await;
    let body = full_body();
    let p = create(&app, body.clone()).await;
    assert_fields(&p, PRODUCT_FIELDS);
    assert_eq!(p["object"], "product");
    assert!(p["id"].as_u64().is_some_and(|i| i > 0), "{p}");
    assert_eq!(p["source"], "manual");
    for (k, v) in body.as_object().unwrap() {
        assert_eq!(&p[k], v, "field {k}");
    }
    assert_eq!(utc(&p["created_at"]), utc(&p["updated_at"]));
    assert_eq!(get(&app, &p).await, p, "GET answers what POST did");
}

#[tokio::test]
async fn a_product_with_only_a_name_has_empty_optional_fields() {
    let app = spawn_app().await;
    let p = create(&app, json!({"name": "  Plain mug  "})).await;
    assert_fields(&p, PRODUCT_FIELDS);
    assert_eq!(p["name"], "Plain mug", "the name is trimmed");
    assert_eq!(p["source"], "manual");
    for k in [
        "description",
        "price",
        "original_price",
        "currency",
        "sku",
        "brand",
        "in_stock",
        "stock_quantity",
        "image_url",
        "url",
    ] {
        assert_eq!(p[k], Value::Null, "field {k}");
    }
    for k in ["images", "tags", "categories"] {
        assert_eq!(p[k], json!([]), "field {k}");
    }
    // Nulls on create mean absent.
    let q = create(
        &app,
        named(json!({"description": null, "price": null, "images": null, "in_stock": null})),
    )
    .await;
    assert_eq!(q["price"], Value::Null);
    assert_eq!(q["images"], json!([]));
    assert_eq!(q["in_stock"], Value::Null);
}

#[tokio::test]
async fn the_source_cannot_be_sent() {
    let app = spawn_app().await;
    invalid(
        app.post(PRODUCTS, named(json!({"source": "store_a"})))
            .await,
        "source",
    );
    invalid(
        app.post(PRODUCTS, named(json!({"colour": "red"}))).await,
        "colour",
    );
}

#[tokio::test]
async fn a_product_needs_a_name_of_one_to_five_hundred_characters() {
    let app = spawn_app().await;
    refusals(
        &app,
        Method::POST,
        PRODUCTS,
        vec![
            (json!({}), "name"),
            (json!({"price": 5}), "name"),
            (json!({"name": null}), "name"),
            (json!({"name": ""}), "name"),
            (json!({"name": "   "}), "name"),
            (json!({"name": "n".repeat(501)}), "name"),
            (json!({"name": 5}), "name"),
        ],
    )
    .await;
    let p = create(&app, json!({"name": "é".repeat(500)})).await;
    assert_eq!(p["name"], "é".repeat(500), "characters, not bytes");
}

#[tokio::test]
async fn each_text_field_has_its_length_limit() {
    let app = spawn_app().await;
    refusals(
        &app,
        Method::POST,
        PRODUCTS,
        vec![
            (
                named(json!({"description": "d".repeat(20_001)})),
                "description",
            ),
            (named(json!({"currency": "c".repeat(11)})), "currency"),
            (named(json!({"sku": "s".repeat(201)})), "sku"),
            (named(json!({"brand": "b".repeat(201)})), "brand"),
            (named(json!({"description": 5})), "description"),
        ],
    )
    .await;
    let p = create(
        &app,
        named(json!({
            "description": "d".repeat(20_000),
            "currency": "c".repeat(10),
            "sku": "s".repeat(200),
            "brand": "b".repeat(200)
        })),
    )
    .await;
    assert_eq!(p["description"], "d".repeat(20_000));
    assert_eq!(p["currency"], "c".repeat(10));
    assert_eq!(p["sku"], "s".repeat(200));
    assert_eq!(p["brand"], "b".repeat(200));
}

#[tokio::test]
async fn prices_are_a_number_of_zero_or_more_or_a_short_text() {
    let app = spawn_app().await;
    let mut cases = Vec::new();
    for field in ["price", "original_price"] {
        for bad in [
            json!(-1),
            json!(-0.01),
            json!("p".repeat(51)),
            json!(true),
            json!([1]),
            json!({"amount": 1}),
        ] {
            cases.push((named(json!({ field: bad })), field));
        }
    }
    refusals(&app, Method::POST, PRODUCTS, cases).await;

    for good in [
        json!(0),
        json!(9.99),
        json!(1_000_000),
        json!("from 9.99"),
        json!("p".repeat(50)),
        json!("€".repeat(50)),
    ] {
        let p = create(
            &app,
            named(json!({"price": good.clone(), "original_price": good.clone()})),
        )
        .await;
        let same = |v: &Value| match (v, &good) {
            (Value::Number(a), Value::Number(b)) => a.as_f64() == b.as_f64(),
            (a, b) => a == b,
        };
        assert!(same(&p["price"]), "price {good} stored as {}", p["price"]);
        assert!(same(&p["original_price"]), "original_price {good}: {p}");
    }
}

#[tokio::test]
async fn stock_is_a_whole_number_of_zero_or_more_and_in_stock_a_boolean() {
    let app = spawn_app().await;
    refusals(
        &app,
        Method::POST,
        PRODUCTS,
        vec![
            (named(json!({"stock_quantity": -1})), "stock_quantity"),
            (named(json!({"stock_quantity": 1.5})), "stock_quantity"),
            (named(json!({"stock_quantity": "3"})), "stock_quantity"),
            (named(json!({"in_stock": "yes"})), "in_stock"),
            (named(json!({"in_stock": 1})), "in_stock"),
        ],
    )
    .await;
    let p = create(&app, named(json!({"stock_quantity": 0, "in_stock": false}))).await;
    assert_eq!(p["stock_quantity"], 0);
    assert_eq!(p["in_stock"], false);
}

#[tokio::test]
async fn urls_are_http_or_https_of_up_to_2048_characters() {
    let app = spawn_app().await;
    let mut cases = Vec::new();
    for field in ["image_url", "url"] {
        for bad in [
            json!("ftp://example.com/a.png"),
            json!("javascript:alert(1)"),
            json!("not a url"),
            json!("example.com/a.png"),
            json!("/relative/a.png"),
            json!(""),
            json!(url_of(2049)),
            json!(5),
        ] {
            cases.push((named(json!({ field: bad })), field));
        }
    }
    refusals(&app, Method::POST, PRODUCTS, cases).await;
    let longest = url_of(2048);
    assert_eq!(longest.chars().count(), 2048);
    let p = create(
        &app,
        named(json!({"image_url": longest, "url": "http://shop.example.com/p?id=1"})),
    )
    .await;
    assert_eq!(p["image_url"], longest);
    assert_eq!(p["url"], "http://shop.example.com/p?id=1");
}

#[tokio::test]
async fn images_hold_up_to_fifty_valid_urls() {
    let app = spawn_app().await;
    let mut with_bad = urls(3);
    with_bad[2] = "ftp://cdn.example.com/x.png".into();
    let mut too_long = urls(2);
    too_long[1] = url_of(2049);
    refusals(
        &app,
        Method::POST,
        PRODUCTS,
        vec![
            (named(json!({"images": urls(51)})), "images"),
            (named(json!({"images": with_bad})), "images[2]"),
            (named(json!({"images": too_long})), "images[1]"),
            (named(json!({"images": ["nope"]})), "images[0]"),
            (
                named(json!({"images": "https://cdn.example.com/a.png"})),
                "images",
            ),
            (named(json!({"images": [5]})), "images[0]"),
        ],
    )
    .await;
    let p = create(&app, named(json!({"images": urls(50)}))).await;
    assert_eq!(p["images"], json!(urls(50)));
}

#[tokio::test]
async fn tags_and_categories_hold_up_to_a_hundred_entries_of_up_to_a_hundred_characters() {
    let app = spawn_app().await;
    let mut cases = Vec::new();
    for field in ["tags", "categories"] {
        let mut long_entry = labels(3);
        long_entry[1] = "t".repeat(101);
        cases.push((named(json!({ field: labels(101) })), field.to_string()));
        cases.push((named(json!({ field: long_entry })), format!("{field}[1]")));
        cases.push((named(json!({ field: "kitchen" })), field.to_string()));
        cases.push((named(json!({ field: [1] })), format!("{field}[0]")));
    }
    let cases = cases.iter().map(|(b, p)| (b.clone(), p.as_str())).collect();
    refusals(&app, Method::POST, PRODUCTS, cases).await;

    let hundred = "é".repeat(100);
    let mut most = labels(99);
    most.push(hundred.clone());
    let p = create(&app, named(json!({"tags": most, "categories": most}))).await;
    assert_eq!(p["tags"].as_array().unwrap().len(), 100);
    assert_eq!(p["categories"][99], hundred);
}

// ----- Read and list -----

#[tokio::test]
async fn products_are_listed_newest_first_in_pages() {
    let app = spawn_app().await;
    let mut made = Vec::new();
    for i in 0..5 {
        made.push(id(
            &create(&app, json!({ "name": format!("Product {i}") })).await
        ));
    }
    let newest_first: Vec<u64> = made.iter().rev().copied().collect();

    let all = app.get(PRODUCTS).await.ok();
    assert_eq!(all["object"], "list");
    assert_eq!(all["has_more"], false);
    assert!(all["next_cursor"].is_null(), "{all}");
    assert_fields(&all["data"][0], PRODUCT_FIELDS);
    assert_eq!(all["data"][0]["object"], "product");
    assert_eq!(list_ids(&app, "").await, newest_first);

    let (sizes, seen) = walk_pages(&app, PRODUCTS, 2).await;
    assert_eq!(sizes, vec![2, 2, 1]);
    assert_eq!(seen, newest_first);

    for bad in ["0", "101", "x"] {
        invalid(app.get(&format!("{PRODUCTS}?limit={bad}")).await, "limit");
    }
    bad_request(app.get(&format!("{PRODUCTS}?starting_after=%%%")).await);
}

#[tokio::test]
async fn search_matches_text_within_the_name_in_any_case() {
    let app = spawn_app().await;
    let green = id(&create(&app, json!({"name": "Green TEA leaves"})).await);
    let steamer = id(&create(&app, json!({"name": "Milk steamer"})).await);
    let _mug = create(
        &app,
        json!({"name": "Mug", "description": "for tea", "sku": "TEA-1", "brand": "Tea Co", "tags": ["tea"]}),
    )
    .await;
    let pot = id(&create(&app, json!({"name": "Teapot"})).await);

    assert_eq!(
        list_ids(&app, "?search=tea").await,
        vec![pot, steamer, green]
    );
    assert_eq!(
        list_ids(&app, "?search=TEA").await,
        vec![pot, steamer, green]
    );
    assert_eq!(list_ids(&app, "?search=green%20tea").await, vec![green]);
    assert_eq!(list_ids(&app, "?search=teapot").await, vec![pot]);
    assert!(list_ids(&app, "?search=coffee").await.is_empty());
    // Search and pages work together.
    let page = app
        .get(&format!("{PRODUCTS}?search=tea&limit=2"))
        .await
        .ok();
    assert_eq!(page["has_more"], true);
    let cursor = page["next_cursor"].as_str().unwrap();
    assert_eq!(
        list_ids(
            &app,
            &format!("?search=tea&limit=2&starting_after={cursor}")
        )
        .await,
        vec![green]
    );
    let long = "a".repeat(201);
    invalid(
        app.get(&format!("{PRODUCTS}?search={long}")).await,
        "search",
    );
    app.get(&format!("{PRODUCTS}?search={}", "a".repeat(200)))
        .await
        .expect(200);
}

#[tokio::test]
async fn products_filter_by_stock_and_source() {
    let app = spawn_app().await;
    let stocked = id(&create(&app, json!({"name": "Kettle", "in_stock": true})).await);
    let out = id(&create(&app, json!({"name": "Tea cosy", "in_stock": false})).await);
    let unknown = id(&create(&app, json!({"name": "Strainer"})).await);
    let stocked_tea = id(&create(&app, json!({"name": "Teacup", "in_stock": true})).await);

    assert_eq!(
        list_ids(&app, "?in_stock=true").await,
        vec![stocked_tea, stocked]
    );
    assert_eq!(list_ids(&app, "?in_stock=false").await, vec![out]);
    assert_eq!(
        list_ids(&app, "?in_stock=true&search=tea").await,
        vec![stocked_tea]
    );
    assert_eq!(
        list_ids(&app, "?source=manual").await,
        vec![stocked_tea, unknown, out, stocked]
    );
    assert!(list_ids(&app, "?source=store_a").await.is_empty());
    assert!(list_ids(&app, "?source=store_b").await.is_empty());

    for (query, path) in [
        ("in_stock=yes", "in_stock"),
        ("in_stock=1", "in_stock"),
        ("in_stock=", "in_stock"),
        ("source=shopify", "source"),
        ("source=MANUAL", "source"),
        ("source=api", "source"),
    ] {
        let r = app.get(&format!("{PRODUCTS}?{query}")).await;
        let got = (r.status, r.code().to_string(), r.paths());
        assert_eq!(
            got,
            (422, "validation_failed".to_string(), vec![path.to_string()]),
            "GET /products?{query}: {}",
            r.body
        );
    }
}

#[tokio::test]
async fn a_product_is_read_by_id_and_unknown_or_foreign_ids_are_not_found() {
    let app = spawn_app().await;
    let (other_key, foreign) = foreign_record(&app, PRODUCTS, json!({"name": "Elsewhere"})).await;
    let p = create(&app, full_body()).await;
    let read = get(&app, &p).await;
    assert_fields(&read, PRODUCT_FIELDS);
    assert_eq!(read, p);

    not_found(app.get(&format!("{PRODUCTS}/999999999")).await);
    not_found(app.get(&at(&foreign)).await);
    not_found(app.patch(&at(&foreign), json!({"name": "Mine"})).await);
    not_found(app.delete(&at(&foreign)).await);
    let still = app.get_as(&other_key, &at(&foreign)).await.ok();
    assert_eq!(still, foreign);
    assert_eq!(list_ids(&app, "").await, vec![id(&p)]);
    for bad in ["abc", "0", "-2"] {
        bad_request(app.get(&format!("{PRODUCTS}/{bad}")).await);
    }
}

// ----- Patch and delete -----

#[tokio::test]
async fn a_product_patch_needs_at_least_one_field() {
    let app = spawn_app().await;
    let p = create(&app, full_body()).await;
    app.patch(&at(&p), json!({}))
        .await
        .expect_error(422, "validation_failed");
    assert_eq!(get(&app, &p).await, p);
    not_found(
        app.patch(&format!("{PRODUCTS}/999999999"), json!({"name": "x"}))
            .await,
    );
}

#[tokio::test]
async fn a_patch_changes_only_the_fields_sent() {
    let start: DateTime<Utc> = "2026-03-01T10:00:00Z".parse().unwrap();
    let clock = ManualClock::new(start);
    let app = spawn_app_with_clock(clock.clone()).await;
    let p = create(&app, full_body()).await;
    clock.advance(Duration::from_secs(30));

    let changes = [
        json!({"name": "Small teapot"}),
        json!({"description": "Smaller."}),
        json!({"price": "from 39"}),
        json!({"original_price": 59.9}),
        json!({"currency": "USD"}),
        json!({"sku": "TP-200"}),
        json!({"brand": "Other"}),
        json!({"in_stock": false}),
        json!({"stock_quantity": 0}),
        json!({"image_url": "https://cdn.example.com/small.png"}),
        json!({"images": ["https://cdn.example.com/3.png"]}),
        json!({"url": "https://shop.example.com/small"}),
        json!({"tags": ["sale"]}),
        json!({"categories": []}),
    ];
    let mut expected = p.clone();
    for change in changes {
        let r = app.patch(&at(&p), change.clone()).await.ok();
        for (k, v) in change.as_object().unwrap() {
            expected[k] = v.clone();
        }
        expected["updated_at"] = json!("2026-03-01T10:00:30.000Z");
        assert_eq!(r, expected, "after {change}");
        assert_eq!(get(&app, &p).await, expected, "kept after {change}");
    }
    assert_eq!(expected["created_at"], p["created_at"]);
    assert_eq!(expected["source"], "manual");
}

#[tokio::test]
async fn null_clears_each_nullable_field_but_not_the_name() {
    let app = spawn_app().await;
    let p = create(&app, full_body()).await;
    let clear = json!({
        "description": null,
        "price": null,
        "original_price": null,
        "currency": null,
        "sku": null,
        "brand": null,
        "in_stock": null,
        "stock_quantity": null,
        "image_url": null,
        "url": null,
        "images": null,
        "tags": null,
        "categories": null
    });
    let r = app.patch(&at(&p), clear.clone()).await.ok();
    for k in clear.as_object().unwrap().keys() {
        let want = if ["images", "tags", "categories"].contains(&k.as_str()) {
            json!([])
        } else {
            Value::Null
        };
        assert_eq!(r[k], want, "field {k}");
    }
    assert_eq!(r["name"], p["name"]);
    assert_eq!(get(&app, &p).await, r);

    refusals(
        &app,
        Method::PATCH,
        &at(&p),
        vec![
            (json!({"name": null}), "name"),
            (json!({"name": ""}), "name"),
            (json!({"name": "n".repeat(501)}), "name"),
            (json!({"price": -1}), "price"),
            (json!({"original_price": "p".repeat(51)}), "original_price"),
            (json!({"stock_quantity": -1}), "stock_quantity"),
            (json!({"url": "ftp://x.example.com"}), "url"),
            (json!({"images": urls(51)}), "images"),
            (json!({"tags": ["t".repeat(101)]}), "tags[0]"),
            (json!({"categories": labels(101)}), "categories"),
            (json!({"description": "d".repeat(20_001)}), "description"),
            (json!({"source": "store_a"}), "source"),
        ],
    )
    .await;
    assert_eq!(get(&app, &p).await, r, "refused patches change nothing");
}

#[tokio::test]
async fn deleting_a_product_answers_the_deletion_then_404() {
    let app = spawn_app().await;
    let p = create(&app, full_body()).await;
    let keep = create(&app, json!({"name": "Keep me"})).await;
    let r = app.delete(&at(&p)).await.ok();
    assert_eq!(
        r,
        json!({"object": "product", "id": id(&p), "deleted": true})
    );
    not_found(app.get(&at(&p)).await);
    not_found(app.delete(&at(&p)).await);
    not_found(app.patch(&at(&p), json!({"name": "Back"})).await);
    assert_eq!(list_ids(&app, "").await, vec![id(&keep)]);
    not_found(app.delete(&format!("{PRODUCTS}/999999999")).await);
    bad_request(app.delete(&format!("{PRODUCTS}/abc")).await);
}

#[tokio::test]
async fn an_order_item_may_reference_a_product_while_it_exists() {
    let app = spawn_app().await;
    let contact = contact_named(&app, "Ann").await;
    let p = create(&app, json!({"name": "Teapot", "price": 20})).await;
    let line = json!({"name": "Teapot", "quantity": 1, "unit_price": 20, "product_id": id(&p)});
    let order = app
        .post(
            "/orders",
            json!({"contact_id": contact, "items": [line.clone()]}),
        )
        .await
        .created();
    assert_eq!(order["items"][0]["product_id"], id(&p));
    let order_at = format!("/orders/{}", id(&order));
    let added = app
        .post(&format!("{order_at}/items"), line.clone())
        .await
        .created();
    assert_eq!(added["items"][1]["product_id"], id(&p));

    app.delete(&at(&p)).await.expect(200);
    let r = app
        .post(
            "/orders",
            json!({"contact_id": contact, "items": [line.clone()]}),
        )
        .await;
    no_such(r, "items[0].product_id: no such product");
    no_such(
        app.post(&format!("{order_at}/items"), line).await,
        "product_id: no such product",
    );
    // The existing order is still readable.
    app.get(&order_at).await.expect(200);
}

#[tokio::test]
async fn products_survive_a_restart() {
    let app = spawn_app().await;
    let p = create(&app, full_body()).await;
    let patched = app
        .patch(&at(&p), json!({"price": "from 10", "tags": null}))
        .await
        .ok();
    let gone = create(&app, json!({"name": "Gone"})).await;
    app.delete(&at(&gone)).await.expect(200);
    let app = app.restart().await;
    assert_eq!(get(&app, &p).await, patched);
    not_found(app.get(&at(&gone)).await);
    assert_eq!(list_ids(&app, "").await, vec![id(&p)]);
}

// ----- Permissions -----

#[tokio::test]
async fn any_team_member_reads_products_but_writing_needs_business_pages() {
    let app = spawn_app().await;
    let p = create(&app, json!({"name": "Teapot"})).await;
    let nobody = app.member_token("member", &[]).await;
    let orders_only = app.member_token("member", &["orders", "contacts"]).await;
    let pages = app.member_token("member", &["business_pages"]).await;

    for token in [&nobody, &orders_only, &pages] {
        let listed = app.get_as(token, PRODUCTS).await.ok();
        assert_eq!(listed["data"][0]["id"], id(&p));
        app.get_as(token, &at(&p)).await.expect(200);
        app.get_as(token, &format!("{PRODUCTS}?search=tea&in_stock=true"))
            .await
            .expect(200);
    }
    for token in [&nobody, &orders_only] {
        let refused = [
            app.post_as(token, PRODUCTS, json!({"name": "Mine"})).await,
            app.patch_as(token, &at(&p), json!({"name": "Mine"})).await,
            app.delete_as(token, &at(&p)).await,
        ];
        for r in refused {
            forbidden(r);
        }
    }
    assert_eq!(get(&app, &p).await, p, "nothing changed");
    assert_eq!(list_ids(&app, "").await, vec![id(&p)]);

    let made = app
        .post_as(&pages, PRODUCTS, json!({"name": "Cup"}))
        .await
        .created();
    assert_eq!(made["source"], "manual");
    app.patch_as(&pages, &at(&made), json!({"in_stock": true}))
        .await
        .expect(200);
    app.delete_as(&pages, &at(&made)).await.expect(200);
    let admin = app.member_token("admin", &[]).await;
    app.post_as(&admin, PRODUCTS, json!({"name": "Saucer"}))
        .await
        .expect(201);
}

#[tokio::test]
async fn creating_a_product_with_an_idempotency_key_creates_it_once() {
    let app = spawn_app().await;
    let send = |body: Value| {
        app.call(Method::POST, PRODUCTS)
            .token(&app.key)
            .header("Idempotency-Key", "product-1")
            .json(body)
            .send()
    };
    let first = send(json!({"name": "Teapot"})).await.created();
    let again = send(json!({"name": "Teapot"})).await.created();
    assert_eq!(first, again);
    assert_eq!(list_ids(&app, "").await, vec![id(&first)]);
    send(json!({"name": "Kettle"}))
        .await
        .expect_error(409, "idempotency_key_reused");
}
