//! Orders over HTTP: every field rule of create and patch, exact totals, reading and
//! listing (pages, filters), items and the editability rule in each state, the timeline,
//! contact merges, restarts and the `orders` permission.

use std::time::Duration;

use chrono::{DateTime, Utc};
use reqwest::Method;
use serde_json::{json, Value};
use switchboard_actors::clock::ManualClock;

use crate::contacts::no_such;
use crate::helpers::*;

const ORDERS: &str = "/orders";
const ORDER_FIELDS: &str = "object id contact_id status payment_status currency items \
    items_total shipping_fee grand_total paid_amount notes timeline created_at updated_at";
const ITEM_FIELDS: &str = "id name quantity unit_price product_id sku total";
const TIMELINE_FIELDS: &str = "id note created_at";

// ----- Small helpers -----

#[track_caller]
fn not_editable(r: Resp) {
    r.expect_error(409, "order_not_editable");
}

fn id(v: &Value) -> u64 {
    v["id"].as_u64().unwrap_or_else(|| panic!("no id in {v}"))
}

fn at(order: &Value) -> String {
    format!("{ORDERS}/{}", id(order))
}

fn item_at(order: &Value, item: &Value) -> String {
    format!("{ORDERS}/{}/items/{}", id(order), id(item))
}

fn item(name: &str, quantity: u64, unit_price: f64) -> Value {
    json!({"name": name, "quantity": quantity, "unit_price": unit_price})
}

/// `base` with every field of `extra` copied in.
fn with(mut base: Value, extra: Value) -> Value {
    let target = base.as_object_mut().expect("object");
    target.extend(extra.as_object().expect("object").clone());
    base
}

/// The smallest valid order body for `contact`: one item of 5.00.
fn order_body(contact: u64) -> Value {
    json!({"contact_id": contact, "items": [item("Tea", 1, 5.0)]})
}

/// The same body with `items` replaced.
fn with_items(contact: u64, items: Vec<Value>) -> Value {
    json!({"contact_id": contact, "items": items})
}

async fn new_contact_in(app: &TestApp, key: &str, name: &str) -> u64 {
    let r = app
        .post("/contacts", key, json!({"first_name": name}))
        .await;
    id(&r.expect(201).body)
}

async fn new_contact(app: &TestApp, name: &str) -> u64 {
    new_contact_in(app, &app.key, name).await
}

async fn create(app: &TestApp, body: Value) -> Value {
    app.post(ORDERS, &app.key, body).await.expect(201).body
}

/// An order of `contact` with two items (Tea 2 x 5.00, Cake 1 x 3.50).
async fn two_item_order(app: &TestApp, contact: u64) -> Value {
    create(
        app,
        with_items(contact, vec![item("Tea", 2, 5.0), item("Cake", 1, 3.5)]),
    )
    .await
}

async fn get(app: &TestApp, order: &Value) -> Value {
    app.get(&at(order), &app.key).await.expect(200).body
}

async fn list_ids(app: &TestApp, query: &str) -> Vec<u64> {
    let r = app.get(&format!("{ORDERS}{query}"), &app.key).await;
    listed(r).iter().map(id).collect()
}

// ----- Create -----

#[tokio::test]
async fn creating_an_order_answers_201_with_every_field_and_the_defaults() {
    let app = spawn_app().await;
    let ann = new_contact(&app, "Ann").await;
    let o = create(&app, with_items(ann, vec![item("Green tea", 2, 4.5)])).await;

    assert_fields(&o, ORDER_FIELDS);
    assert_eq!(o["object"], "order");
    assert!(o["id"].as_u64().is_some_and(|i| i > 0), "{o}");
    assert_eq!(o["contact_id"], ann);
    assert_eq!(o["status"], "unfulfilled");
    assert_eq!(o["payment_status"], "pending");
    assert_eq!(o["currency"], "USD");
    assert_eq!(o["items_total"], json!(9.0));
    assert_eq!(o["shipping_fee"], json!(0.0));
    assert_eq!(o["grand_total"], json!(9.0));
    assert_eq!(o["paid_amount"], json!(0.0));
    assert_eq!(o["notes"], Value::Null);
    assert_eq!(o["timeline"], json!([]));
    assert_eq!(utc(&o["created_at"]), utc(&o["updated_at"]));

    let items = o["items"].as_array().expect("items");
    assert_eq!(items.len(), 1);
    let i = &items[0];
    assert_fields(i, ITEM_FIELDS);
    assert!(i["id"].as_u64().is_some_and(|n| n > 0), "{i}");
    assert_eq!(i["name"], "Green tea");
    assert_eq!(i["quantity"], 2);
    assert_eq!(i["unit_price"], json!(4.5));
    assert_eq!(i["product_id"], Value::Null);
    assert_eq!(i["sku"], Value::Null);
    assert_eq!(i["total"], json!(9.0));
}

#[tokio::test]
async fn creating_an_order_stores_every_optional_field_sent() {
    let app = spawn_app().await;
    let ann = new_contact(&app, "Ann").await;
    let product = app
        .post("/products", &app.key, json!({"name": "Teapot"}))
        .await
        .expect(201)
        .body;
    let body = json!({
        "contact_id": ann,
        "currency": "eur",
        "notes": "Leave at the door",
        "status": "shipped",
        "payment_status": "paid",
        "paid_amount": 25.5,
        "shipping_fee": 4.25,
        "items": [
            {"name": "Teapot", "quantity": 1, "unit_price": 21.25, "product_id": id(&product), "sku": "TP-1"},
            {"name": "  Spoon  ", "quantity": 3, "unit_price": 0, "product_id": null, "sku": null}
        ]
    });
    let o = create(&app, body).await;
    assert_eq!(o["currency"], "EUR");
    assert_eq!(o["notes"], "Leave at the door");
    assert_eq!(o["status"], "shipped");
    assert_eq!(o["payment_status"], "paid");
    assert_eq!(o["paid_amount"], json!(25.5));
    assert_eq!(o["shipping_fee"], json!(4.25));
    assert_eq!(o["items_total"], json!(21.25));
    assert_eq!(o["grand_total"], json!(25.5));
    let items = o["items"].as_array().expect("items");
    assert_eq!(items[0]["product_id"], id(&product));
    assert_eq!(items[0]["sku"], "TP-1");
    assert_eq!(items[1]["name"], "Spoon", "names are trimmed");
    assert_eq!(items[1]["unit_price"], json!(0.0));
    assert_eq!(items[1]["total"], json!(0.0));
    assert_ne!(items[0]["id"], items[1]["id"], "each item has its own id");
    assert_eq!(get(&app, &o).await, o, "GET answers what POST did");
}

#[tokio::test]
async fn an_order_needs_a_contact_of_its_own_workspace() {
    let app = spawn_app().await;
    let (_, other_key) = app.new_workspace("Other").await;
    let foreign = new_contact_in(&app, &other_key, "Zed").await;
    let ann = new_contact(&app, "Ann").await;
    assert_ne!(foreign, ann);

    for missing in [999_999_999, foreign] {
        no_such(
            app.post(ORDERS, &app.key, order_body(missing)).await,
            "contact_id: no such contact",
        );
    }
    refusals(
        &app,
        Method::POST,
        ORDERS,
        vec![
            (json!({"items": [item("Tea", 1, 5.0)]}), "contact_id"),
            (
                with(order_body(ann), json!({"contact_id": null})),
                "contact_id",
            ),
            (
                with(order_body(ann), json!({"contact_id": "abc"})),
                "contact_id",
            ),
        ],
    )
    .await;
    // The other workspace may use its own contact.
    app.post(ORDERS, &other_key, order_body(foreign))
        .await
        .expect(201);
    app.post(ORDERS, &app.key, order_body(ann))
        .await
        .expect(201);
}

#[tokio::test]
async fn an_order_is_created_with_one_to_two_hundred_items() {
    let app = spawn_app().await;
    let ann = new_contact(&app, "Ann").await;
    let many = |n: usize| (0..n).map(|i| item(&format!("Item {i}"), 1, 1.0)).collect();

    refusals(
        &app,
        Method::POST,
        ORDERS,
        vec![
            (with_items(ann, vec![]), "items"),
            (with_items(ann, many(201)), "items"),
            (json!({"contact_id": ann}), "items"),
            (json!({"contact_id": ann, "items": null}), "items"),
        ],
    )
    .await;
    let most = create(&app, with_items(ann, many(200))).await;
    assert_eq!(most["items"].as_array().unwrap().len(), 200);
    assert_eq!(most["items_total"], json!(200.0));
    let one = create(&app, with_items(ann, many(1))).await;
    assert_eq!(one["items"].as_array().unwrap().len(), 1);
}

#[tokio::test]
async fn each_item_rule_names_the_faulty_item_field() {
    let app = spawn_app().await;
    let ann = new_contact(&app, "Ann").await;
    let one = |i: Value| with_items(ann, vec![i]);
    let second = |i: Value| with_items(ann, vec![item("Fine", 1, 1.0), i]);
    let with_item = |extra: Value| with(item("Tea", 1, 5.0), extra);

    refusals(
        &app,
        Method::POST,
        ORDERS,
        vec![
            (one(with_item(json!({"name": ""}))), "items[0].name"),
            (one(with_item(json!({"name": "   "}))), "items[0].name"),
            (
                one(with_item(json!({"name": "n".repeat(256)}))),
                "items[0].name",
            ),
            (
                one(json!({"quantity": 1, "unit_price": 1})),
                "items[0].name",
            ),
            (one(with_item(json!({"quantity": 0}))), "items[0].quantity"),
            (one(with_item(json!({"quantity": -1}))), "items[0].quantity"),
            (
                one(with_item(json!({"quantity": 100_001}))),
                "items[0].quantity",
            ),
            (
                one(with_item(json!({"quantity": 1.5}))),
                "items[0].quantity",
            ),
            (
                one(json!({"name": "Tea", "unit_price": 1})),
                "items[0].quantity",
            ),
            (
                one(with_item(json!({"unit_price": -1}))),
                "items[0].unit_price",
            ),
            (
                one(with_item(json!({"unit_price": -0.01}))),
                "items[0].unit_price",
            ),
            (
                one(with_item(json!({"unit_price": 100_000_000.01}))),
                "items[0].unit_price",
            ),
            (
                one(with_item(json!({"unit_price": "5.00"}))),
                "items[0].unit_price",
            ),
            (
                one(json!({"name": "Tea", "quantity": 1})),
                "items[0].unit_price",
            ),
            (
                one(with_item(json!({"sku": "s".repeat(101)}))),
                "items[0].sku",
            ),
            (one(with_item(json!({"color": "red"}))), "items[0].color"),
            (
                second(with_item(json!({"quantity": 0}))),
                "items[1].quantity",
            ),
        ],
    )
    .await;
    let unknown_product = with_item(json!({"product_id": 999_999_999}));
    no_such(
        app.post(ORDERS, &app.key, one(unknown_product.clone()))
            .await,
        "items[0].product_id: no such product",
    );
    no_such(
        app.post(ORDERS, &app.key, second(unknown_product)).await,
        "items[1].product_id: no such product",
    );

    // Each limit itself is allowed.
    let edge = create(
        &app,
        with_items(
            ann,
            vec![
                json!({"name": "n".repeat(255), "quantity": 100_000, "unit_price": 100_000_000, "sku": "s".repeat(100)}),
                json!({"name": "x", "quantity": 1, "unit_price": 0}),
            ],
        ),
    )
    .await;
    let items = edge["items"].as_array().unwrap();
    assert_eq!(items[0]["quantity"], 100_000);
    assert_eq!(items[0]["unit_price"], json!(100_000_000.0));
    assert_eq!(items[0]["total"], json!(10_000_000_000_000.0));
    assert_eq!(items[0]["sku"], "s".repeat(100));
}

#[tokio::test]
async fn an_item_naming_a_product_of_another_workspace_answers_404() {
    let app = spawn_app().await;
    let (_, other_key) = app.new_workspace("Other").await;
    let foreign = app
        .post("/products", &other_key, json!({"name": "Elsewhere"}))
        .await
        .expect(201)
        .body;
    let ann = new_contact(&app, "Ann").await;
    let body = with_items(
        ann,
        vec![with(
            item("Tea", 1, 5.0),
            json!({"product_id": id(&foreign)}),
        )],
    );
    no_such(
        app.post(ORDERS, &app.key, body).await,
        "items[0].product_id: no such product",
    );
    assert_eq!(list_ids(&app, "").await, Vec::<u64>::new(), "no order made");
}

#[tokio::test]
async fn the_currency_is_a_known_three_letter_iso_code_in_any_case() {
    let app = spawn_app().await;
    let ann = new_contact(&app, "Ann").await;
    let cur = |c: Value| with(order_body(ann), json!({ "currency": c }));
    refusals(
        &app,
        Method::POST,
        ORDERS,
        vec![
            (cur(json!("XYZ")), "currency"),
            (cur(json!("us")), "currency"),
            (cur(json!("USDD")), "currency"),
            (cur(json!("")), "currency"),
            (cur(json!("€")), "currency"),
            (cur(json!(840)), "currency"),
        ],
    )
    .await;
    for (sent, stored) in [
        ("eur", "EUR"),
        ("GBP", "GBP"),
        ("jpy", "JPY"),
        ("Kwd", "KWD"),
    ] {
        let o = create(&app, cur(json!(sent))).await;
        assert_eq!(o["currency"], stored, "sent {sent}");
    }
}

#[tokio::test]
async fn notes_hold_up_to_two_thousand_characters() {
    let app = spawn_app().await;
    let ann = new_contact(&app, "Ann").await;
    invalid(
        app.post(
            ORDERS,
            &app.key,
            with(order_body(ann), json!({"notes": "n".repeat(2001)})),
        )
        .await,
        "notes",
    );
    let o = create(
        &app,
        with(order_body(ann), json!({"notes": "é".repeat(2000)})),
    )
    .await;
    assert_eq!(o["notes"], "é".repeat(2000), "characters, not bytes");
}

#[tokio::test]
async fn statuses_come_from_their_enums() {
    let app = spawn_app().await;
    let ann = new_contact(&app, "Ann").await;
    let b = |extra: Value| with(order_body(ann), extra);
    refusals(
        &app,
        Method::POST,
        ORDERS,
        vec![
            (b(json!({"status": "pending"})), "status"),
            (b(json!({"status": "SHIPPED"})), "status"),
            (b(json!({"status": ""})), "status"),
            (b(json!({"status": 1})), "status"),
            (b(json!({"payment_status": "refunded"})), "payment_status"),
            (
                b(json!({"payment_status": "unfulfilled"})),
                "payment_status",
            ),
            (b(json!({"payment_status": "Paid"})), "payment_status"),
        ],
    )
    .await;
    for status in ["unfulfilled", "shipped", "delivered", "cancelled", "failed"] {
        for payment in ["pending", "paid"] {
            let o = create(
                &app,
                b(json!({"status": status, "payment_status": payment})),
            )
            .await;
            assert_eq!(
                (o["status"].as_str(), o["payment_status"].as_str()),
                (Some(status), Some(payment))
            );
        }
    }
}

#[tokio::test]
async fn paid_amount_and_shipping_fee_are_never_negative() {
    let app = spawn_app().await;
    let ann = new_contact(&app, "Ann").await;
    let b = |extra: Value| with(order_body(ann), extra);
    refusals(
        &app,
        Method::POST,
        ORDERS,
        vec![
            (b(json!({"paid_amount": -1})), "paid_amount"),
            (b(json!({"paid_amount": -0.01})), "paid_amount"),
            (b(json!({"paid_amount": "5"})), "paid_amount"),
            (b(json!({"shipping_fee": -1})), "shipping_fee"),
            (b(json!({"shipping_fee": -0.01})), "shipping_fee"),
            (b(json!({"shipping_fee": true})), "shipping_fee"),
        ],
    )
    .await;
    let o = create(&app, b(json!({"paid_amount": 0, "shipping_fee": 0}))).await;
    assert_eq!(
        (&o["paid_amount"], &o["shipping_fee"]),
        (&json!(0.0), &json!(0.0))
    );
}

#[tokio::test]
async fn unknown_fields_are_refused_on_every_order_body() {
    let app = spawn_app().await;
    let ann = new_contact(&app, "Ann").await;
    let o = two_item_order(&app, ann).await;
    let first = o["items"][0].clone();
    refusals(
        &app,
        Method::POST,
        ORDERS,
        vec![(with(order_body(ann), json!({"discount": 5})), "discount")],
    )
    .await;
    refusals(
        &app,
        Method::PATCH,
        &at(&o),
        vec![(json!({"notes": "x", "total": 1}), "total")],
    )
    .await;
    refusals(
        &app,
        Method::PUT,
        &format!("{}/status", at(&o)),
        vec![(json!({"status": "shipped", "reason": "x"}), "reason")],
    )
    .await;
    refusals(
        &app,
        Method::POST,
        &format!("{}/items", at(&o)),
        vec![(with(item("Jam", 1, 2.0), json!({"color": "red"})), "color")],
    )
    .await;
    refusals(
        &app,
        Method::PATCH,
        &item_at(&o, &first),
        vec![(json!({"quantity": 2, "name": "Other"}), "name")],
    )
    .await;
    refusals(
        &app,
        Method::POST,
        &format!("{}/timeline", at(&o)),
        vec![(json!({"note": "hi", "author": "me"}), "author")],
    )
    .await;
    assert_eq!(get(&app, &o).await, o, "nothing changed");
}

// ----- Totals -----

#[tokio::test]
async fn totals_are_computed_exactly_without_float_drift() {
    let app = spawn_app().await;
    let ann = new_contact(&app, "Ann").await;

    let tens = create(
        &app,
        with_items(ann, (0..10).map(|_| item("Dime", 1, 0.1)).collect()),
    )
    .await;
    assert_eq!(tens["items_total"], json!(1.0));
    assert_eq!(tens["grand_total"], json!(1.0));

    let mut body = with_items(ann, vec![item("Book", 3, 19.99)]);
    body["shipping_fee"] = json!(4.99);
    let books = create(&app, body).await;
    assert_eq!(books["items"][0]["total"], json!(59.97));
    assert_eq!(books["items_total"], json!(59.97));
    assert_eq!(books["shipping_fee"], json!(4.99));
    assert_eq!(books["grand_total"], json!(64.96));

    let mixed = create(
        &app,
        with_items(ann, vec![item("A", 1, 0.1), item("B", 1, 0.2)]),
    )
    .await;
    assert_eq!(mixed["items_total"], json!(0.3));

    let mut body = with_items(ann, vec![item("C", 7, 1.15)]);
    body["shipping_fee"] = json!(0.07);
    let sevens = create(&app, body).await;
    assert_eq!(sevens["items"][0]["total"], json!(8.05));
    assert_eq!(sevens["grand_total"], json!(8.12));
}

#[tokio::test]
async fn amounts_follow_the_decimal_places_of_the_currency() {
    let app = spawn_app().await;
    let ann = new_contact(&app, "Ann").await;
    let in_cur = |currency: &str, items: Vec<Value>, extra: Value| {
        with(
            with(with_items(ann, items), json!({ "currency": currency })),
            extra,
        )
    };
    refusals(
        &app,
        Method::POST,
        ORDERS,
        vec![
            (
                in_cur("JPY", vec![item("Tea", 1, 1.5)], json!({})),
                "items[0].unit_price",
            ),
            (
                in_cur("USD", vec![item("Tea", 1, 1.005)], json!({})),
                "items[0].unit_price",
            ),
            (
                in_cur(
                    "USD",
                    vec![item("Tea", 1, 1.0), item("Jam", 1, 0.001)],
                    json!({}),
                ),
                "items[1].unit_price",
            ),
            (
                in_cur("KWD", vec![item("Tea", 1, 1.0005)], json!({})),
                "items[0].unit_price",
            ),
            (
                in_cur(
                    "JPY",
                    vec![item("Tea", 1, 100.0)],
                    json!({"shipping_fee": 0.5}),
                ),
                "shipping_fee",
            ),
            (
                in_cur(
                    "USD",
                    vec![item("Tea", 1, 1.0)],
                    json!({"paid_amount": 0.001}),
                ),
                "paid_amount",
            ),
        ],
    )
    .await;

    let yen = create(
        &app,
        in_cur(
            "JPY",
            vec![item("Tea", 3, 1500.0)],
            json!({"shipping_fee": 700}),
        ),
    )
    .await;
    assert_eq!(yen["items_total"], json!(4500.0));
    assert_eq!(yen["grand_total"], json!(5200.0));

    let dinar = create(
        &app,
        in_cur(
            "KWD",
            vec![item("Tea", 3, 1.005)],
            json!({"shipping_fee": 0.001}),
        ),
    )
    .await;
    assert_eq!(dinar["items"][0]["unit_price"], json!(1.005));
    assert_eq!(dinar["items_total"], json!(3.015));
    assert_eq!(dinar["grand_total"], json!(3.016));
}

/// A JSON number written exactly as `text`, with no float in between: the client's digits
/// reach the service as they are.
pub(crate) fn number(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("{text}: {e}"))
}

/// Amounts are read from the number's text, never through a float: one decimal too many
/// is refused at every size up to the limits, even where a double would round it away.
#[tokio::test]
async fn an_amount_with_more_decimals_than_the_currency_is_refused_at_every_size() {
    let app = spawn_app().await;
    let ann = new_contact(&app, "Ann").await;
    let o = create(&app, order_body(ann)).await;
    let items_of = format!("{}/items", at(&o));
    let mut wrong = Vec::new();
    for text in [
        "1.005",
        "4999.995",
        "123456.789",
        "99999999.999",
        "0.30000000000000001",
        "5.0000000000000001",
        "1e-3",
    ] {
        let amount = number(text);
        let tea = with(item("Tea", 1, 5.0), json!({ "unit_price": amount }));
        for (method, path, body, field) in [
            (
                Method::POST,
                ORDERS,
                with_items(ann, vec![tea.clone()]),
                "items[0].unit_price",
            ),
            (Method::POST, items_of.as_str(), tea, "unit_price"),
            (
                Method::POST,
                ORDERS,
                with(order_body(ann), json!({ "shipping_fee": amount })),
                "shipping_fee",
            ),
            (
                Method::PATCH,
                at(&o).as_str(),
                json!({ "paid_amount": amount }),
                "paid_amount",
            ),
        ] {
            let r = app
                .call(method.clone(), path)
                .token(&app.key)
                .json(body)
                .send()
                .await;
            let message = r.body["error"]["message"].as_str().unwrap_or_default();
            let refused = r.status == 422
                && r.paths() == [field]
                && message.contains("more than 2 decimal places");
            if !refused {
                wrong.push(format!(
                    "{method} {path} {field}={text}: {} {}",
                    r.status, r.body
                ));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "accepted or misreported:
{}",
        wrong.join("\n")
    );
    assert_eq!(list_ids(&app, "").await, [id(&o)], "no order was made");
    assert_eq!(get(&app, &o).await, o, "the order is unchanged");
}

/// Totals are sums of integer minor units, answered as JSON numbers written from them.
#[tokio::test]
async fn totals_are_answered_exactly_near_the_limits() {
    let app = spawn_app().await;
    let ann = new_contact(&app, "Ann").await;
    let body = json!({
        "contact_id": ann,
        "shipping_fee": number("4999.99"),
        "items": [
            {"name": "Big", "quantity": 99_999, "unit_price": number("99999999.99")},
            {"name": "Small", "quantity": 3, "unit_price": number("0.10")}
        ]
    });
    let o = create(&app, body).await;
    assert_eq!(o["items"][0]["unit_price"], number("99999999.99"));
    assert_eq!(o["items"][0]["total"], number("9999899999000.01"));
    assert_eq!(o["items"][1]["total"], number("0.3"));
    assert_eq!(o["items_total"], number("9999899999000.31"));
    assert_eq!(o["shipping_fee"], number("4999.99"));
    assert_eq!(o["grand_total"], number("9999900004000.3"));
}

/// The largest order the limits allow (200 items of 100,000 x 100,000,000) has exact
/// totals in every currency, including those with four decimal places.
#[tokio::test]
async fn totals_stay_exact_for_the_largest_order_the_limits_allow() {
    let app = spawn_app().await;
    let ann = new_contact(&app, "Ann").await;
    let items: Vec<Value> = (0..200)
        .map(|_| item("Big", 100_000, 100_000_000.0))
        .collect();
    let mut wrong = Vec::new();
    for currency in ["USD", "JPY", "KWD", "CLF"] {
        let body = with(
            with_items(ann, items.clone()),
            json!({ "currency": currency }),
        );
        let r = app.post(ORDERS, &app.key, body).await;
        let got = (
            r.status,
            r.body["items"][0]["total"].as_f64(),
            r.body["items_total"].as_f64(),
            r.body["grand_total"].as_f64(),
        );
        let want = (201, Some(1e13), Some(2e15), Some(2e15));
        if got != want {
            wrong.push(format!("{currency}: got {got:?}, want {want:?}"));
        }
    }
    assert!(wrong.is_empty(), "wrong totals:\n{}", wrong.join("\n"));
}

/// No upper bound is given for paid_amount and shipping_fee: a huge amount is either kept
/// exactly (and the grand total is items_total + shipping_fee) or refused with 422 naming
/// the field; it is never silently changed.
#[tokio::test]
async fn a_huge_amount_is_kept_exactly_or_refused_never_altered() {
    let app = spawn_app().await;
    let ann = new_contact(&app, "Ann").await;
    let kept_or_refused = |r: &Resp, field: &str, sent: f64| -> Option<String> {
        if r.status == 422 {
            let ok = r.code() == "validation_failed" && r.paths() == vec![field.to_string()];
            return (!ok).then(|| format!("{field} {sent:e}: {}", r.body));
        }
        let b = &r.body;
        let (fee, items, grand) = (
            b["shipping_fee"].as_f64(),
            b["items_total"].as_f64(),
            b["grand_total"].as_f64(),
        );
        let exact = b[field].as_f64() == Some(sent)
            && matches!((fee, items, grand), (Some(f), Some(i), Some(g)) if g == i + f && g >= 0.0);
        (r.status >= 300 || !exact).then(|| {
            format!(
                "{field} {sent:e}: {} {field}={} items_total={} grand_total={}",
                r.status, b[field], b["items_total"], b["grand_total"]
            )
        })
    };
    let mut wrong = Vec::new();
    for fee in [1e17, 1e19, 1e300] {
        let body = with(order_body(ann), json!({ "shipping_fee": fee }));
        let r = app.post(ORDERS, &app.key, body).await;
        wrong.extend(kept_or_refused(&r, "shipping_fee", fee));
    }
    let o = create(&app, order_body(ann)).await;
    for paid in [1e17, 1e300] {
        let r = app
            .patch(&at(&o), &app.key, json!({ "paid_amount": paid }))
            .await;
        wrong.extend(kept_or_refused(&r, "paid_amount", paid));
    }
    assert!(wrong.is_empty(), "altered amounts:\n{}", wrong.join("\n"));
}

// ----- Read and list -----

#[tokio::test]
async fn an_order_is_read_by_id_and_unknown_or_foreign_ids_are_not_found() {
    let app = spawn_app().await;
    let (_, other_key) = app.new_workspace("Other").await;
    let zed = new_contact_in(&app, &other_key, "Zed").await;
    let foreign = app
        .post(ORDERS, &other_key, order_body(zed))
        .await
        .expect(201)
        .body;
    let ann = new_contact(&app, "Ann").await;
    let o = create(&app, order_body(ann)).await;

    let read = get(&app, &o).await;
    assert_fields(&read, ORDER_FIELDS);
    assert_eq!(read, o);
    assert_eq!(read["items"][0]["name"], "Tea", "with items");

    not_found(app.get(&format!("{ORDERS}/999999999"), &app.key).await);
    not_found(app.get(&at(&foreign), &app.key).await);
    // The owner of the foreign order still sees it.
    app.get(&at(&foreign), &other_key).await.expect(200);
    for bad in ["abc", "0", "-1", "1.5"] {
        app.get(&format!("{ORDERS}/{bad}"), &app.key)
            .await
            .expect_error(400, "invalid_request");
    }
    // A foreign order can't be changed either.
    let foreign_item = &foreign["items"][0];
    not_found(
        app.patch(&at(&foreign), &app.key, json!({"notes": "x"}))
            .await,
    );
    not_found(
        app.put(
            &format!("{}/status", at(&foreign)),
            &app.key,
            json!({"status": "shipped"}),
        )
        .await,
    );
    not_found(
        app.post(
            &format!("{}/items", at(&foreign)),
            &app.key,
            item("Jam", 1, 1.0),
        )
        .await,
    );
    not_found(
        app.patch(
            &item_at(&foreign, foreign_item),
            &app.key,
            json!({"quantity": 2}),
        )
        .await,
    );
    not_found(app.delete(&item_at(&foreign, foreign_item), &app.key).await);
    not_found(
        app.post(
            &format!("{}/timeline", at(&foreign)),
            &app.key,
            json!({"note": "x"}),
        )
        .await,
    );
    let untouched = app.get(&at(&foreign), &other_key).await.expect(200).body;
    assert_eq!(untouched, foreign);
    // The list of one workspace never shows the other's orders.
    assert_eq!(list_ids(&app, "").await, vec![id(&o)]);
}

#[tokio::test]
async fn orders_are_listed_newest_first_in_pages() {
    let app = spawn_app().await;
    let ann = new_contact(&app, "Ann").await;
    let mut made = Vec::new();
    for _ in 0..7 {
        made.push(id(&create(&app, order_body(ann)).await));
    }
    let newest_first: Vec<u64> = made.iter().rev().copied().collect();

    let all = app.get(ORDERS, &app.key).await.expect(200).body;
    assert_eq!(all["object"], "list");
    assert_eq!(all["has_more"], false);
    assert!(all["next_cursor"].is_null(), "{all}");
    let first = &all["data"][0];
    assert_fields(first, ORDER_FIELDS);
    assert_eq!(first["object"], "order");
    assert_eq!(first["items"][0]["name"], "Tea");
    assert_eq!(list_ids(&app, "").await, newest_first);

    // Walk pages of three.
    let mut seen = Vec::new();
    let mut sizes = Vec::new();
    let mut url = format!("{ORDERS}?limit=3");
    loop {
        let page = app.get(&url, &app.key).await.expect(200).body;
        let data = page["data"].as_array().unwrap();
        sizes.push(data.len());
        seen.extend(data.iter().map(id));
        if page["has_more"] == true {
            let cursor = page["next_cursor"]
                .as_str()
                .expect("a cursor when has_more");
            url = format!("{ORDERS}?limit=3&starting_after={cursor}");
        } else {
            assert!(page["next_cursor"].is_null(), "{page}");
            break;
        }
    }
    assert_eq!(sizes, vec![3, 3, 1]);
    assert_eq!(seen, newest_first);

    // Default page size is 25, at most 100.
    app.get(&format!("{ORDERS}?limit=100"), &app.key)
        .await
        .expect(200);
    for bad in ["0", "101", "-1", "abc"] {
        invalid(
            app.get(&format!("{ORDERS}?limit={bad}"), &app.key).await,
            "limit",
        );
    }
    app.get(&format!("{ORDERS}?starting_after=garbage!"), &app.key)
        .await
        .expect_error(400, "invalid_request");
}

#[tokio::test]
async fn the_default_page_holds_twenty_five_orders() {
    let app = spawn_app().await;
    let ann = new_contact(&app, "Ann").await;
    for _ in 0..26 {
        create(&app, order_body(ann)).await;
    }
    let page = app.get(ORDERS, &app.key).await.expect(200).body;
    assert_eq!(page["data"].as_array().unwrap().len(), 25);
    assert_eq!(page["has_more"], true);
    let cursor = page["next_cursor"].as_str().unwrap();
    let rest = list_ids(&app, &format!("?starting_after={cursor}")).await;
    assert_eq!(rest.len(), 1);
}

#[tokio::test]
async fn orders_filter_by_status_payment_status_and_contact() {
    let app = spawn_app().await;
    let ann = new_contact(&app, "Ann").await;
    let bob = new_contact(&app, "Bob").await;
    let make = |contact: u64, status: &str, payment: &str| {
        with(
            order_body(contact),
            json!({"status": status, "payment_status": payment}),
        )
    };
    let a1 = id(&create(&app, make(ann, "unfulfilled", "pending")).await);
    let a2 = id(&create(&app, make(ann, "shipped", "paid")).await);
    let b1 = id(&create(&app, make(bob, "shipped", "pending")).await);
    let b2 = id(&create(&app, make(bob, "cancelled", "paid")).await);

    assert_eq!(list_ids(&app, "?status=shipped").await, vec![b1, a2]);
    assert_eq!(list_ids(&app, "?status=unfulfilled").await, vec![a1]);
    assert_eq!(list_ids(&app, "?status=cancelled").await, vec![b2]);
    assert!(list_ids(&app, "?status=delivered").await.is_empty());
    assert_eq!(list_ids(&app, "?payment_status=paid").await, vec![b2, a2]);
    assert_eq!(
        list_ids(&app, "?payment_status=pending").await,
        vec![b1, a1]
    );
    assert_eq!(
        list_ids(&app, &format!("?contact_id={ann}")).await,
        vec![a2, a1]
    );
    assert_eq!(
        list_ids(&app, &format!("?contact_id={bob}")).await,
        vec![b2, b1]
    );
    assert_eq!(
        list_ids(
            &app,
            &format!("?contact_id={bob}&status=shipped&payment_status=pending")
        )
        .await,
        vec![b1]
    );
    assert!(list_ids(&app, "?contact_id=999999999").await.is_empty());
    // Filters and pages work together.
    let page = app
        .get(&format!("{ORDERS}?payment_status=paid&limit=1"), &app.key)
        .await
        .expect(200)
        .body;
    assert_eq!(page["data"][0]["id"], b2);
    let cursor = page["next_cursor"].as_str().unwrap();
    assert_eq!(
        list_ids(
            &app,
            &format!("?payment_status=paid&limit=1&starting_after={cursor}")
        )
        .await,
        vec![a2]
    );

    for (query, path) in [
        ("status=pending", "status"),
        ("status=SHIPPED", "status"),
        ("status=", "status"),
        ("payment_status=refunded", "payment_status"),
        ("contact_id=abc", "contact_id"),
        ("contact_id=-1", "contact_id"),
    ] {
        let r = app.get(&format!("{ORDERS}?{query}"), &app.key).await;
        let got = (r.status, r.code().to_string(), r.paths());
        assert_eq!(
            got,
            (422, "validation_failed".to_string(), vec![path.to_string()]),
            "GET /orders?{query}: {}",
            r.body
        );
    }
}

#[tokio::test]
async fn created_since_is_inclusive_and_needs_an_offset() {
    let start: DateTime<Utc> = "2026-03-01T10:00:00Z".parse().unwrap();
    let clock = ManualClock::new(start);
    let app = spawn_app_with_clock(clock.clone()).await;
    let ann = new_contact(&app, "Ann").await;
    let a = create(&app, order_body(ann)).await;
    clock.advance(Duration::from_secs(1));
    let b = create(&app, order_body(ann)).await;
    clock.advance(Duration::from_secs(1));
    let c = create(&app, with(order_body(ann), json!({"status": "shipped"}))).await;
    assert_eq!(a["created_at"], "2026-03-01T10:00:00.000Z");
    let (a, b, c) = (id(&a), id(&b), id(&c));

    let since = |t: &str| format!("?created_since={t}");
    assert_eq!(
        list_ids(&app, &since("2026-03-01T10:00:01Z")).await,
        vec![c, b]
    );
    assert_eq!(
        list_ids(&app, &since("2026-03-01T10:00:01.000Z")).await,
        vec![c, b]
    );
    assert_eq!(
        list_ids(&app, &since("2026-03-01T10:00:01.001Z")).await,
        vec![c]
    );
    // The same instant written with another offset ('+' encoded in the query).
    assert_eq!(
        list_ids(&app, &since("2026-03-01T12:00:01%2B02:00")).await,
        vec![c, b]
    );
    assert_eq!(
        list_ids(&app, &since("2026-03-01T05:00:00-05:00")).await,
        vec![c, b, a]
    );
    assert_eq!(
        list_ids(&app, &since("2026-02-01T00:00:00Z")).await,
        vec![c, b, a]
    );
    assert!(list_ids(&app, &since("2026-03-01T10:00:02.001Z"))
        .await
        .is_empty());
    assert_eq!(
        list_ids(
            &app,
            "?created_since=2026-03-01T10:00:01Z&status=unfulfilled"
        )
        .await,
        vec![b]
    );

    for bad in [
        "2026-03-01T10:00:01",
        "2026-03-01",
        "yesterday",
        "",
        "2026-13-01T00:00:00Z",
    ] {
        let r = app.get(&format!("{ORDERS}{}", since(bad)), &app.key).await;
        let got = (r.status, r.code().to_string(), r.paths());
        assert_eq!(
            got,
            (
                422,
                "validation_failed".to_string(),
                vec!["created_since".to_string()]
            ),
            "created_since={bad}: {}",
            r.body
        );
    }
}

// ----- Patch and status -----

#[tokio::test]
async fn a_patch_needs_at_least_one_field() {
    let app = spawn_app().await;
    let ann = new_contact(&app, "Ann").await;
    let o = create(&app, order_body(ann)).await;
    app.patch(&at(&o), &app.key, json!({}))
        .await
        .expect_error(422, "validation_failed");
    app.call(Method::PATCH, &at(&o))
        .token(&app.key)
        .raw("")
        .send()
        .await
        .expect_error(422, "validation_failed");
    // Nulls of fields that can't be cleared name nothing to change either.
    app.patch(&at(&o), &app.key, json!({"status": null}))
        .await
        .expect_error(422, "validation_failed");
    assert_eq!(get(&app, &o).await, o);
    not_found(
        app.patch(
            &format!("{ORDERS}/999999999"),
            &app.key,
            json!({"notes": "x"}),
        )
        .await,
    );
}

#[tokio::test]
async fn patching_each_field_changes_only_that_field() {
    let start: DateTime<Utc> = "2026-03-01T10:00:00Z".parse().unwrap();
    let clock = ManualClock::new(start);
    let app = spawn_app_with_clock(clock.clone()).await;
    let ann = new_contact(&app, "Ann").await;
    let o = two_item_order(&app, ann).await;
    assert_eq!(o["grand_total"], json!(13.5));
    clock.advance(Duration::from_secs(60));

    let steps = [
        json!({"status": "shipped"}),
        json!({"payment_status": "paid"}),
        json!({"paid_amount": 13.5}),
        json!({"shipping_fee": 4.99}),
        json!({"notes": "Ring twice"}),
    ];
    let mut expected = o.clone();
    for step in steps {
        let before = get(&app, &o).await;
        let after = app
            .patch(&at(&o), &app.key, step.clone())
            .await
            .expect(200)
            .body;
        for (k, v) in step.as_object().unwrap() {
            match v {
                Value::Number(n) => assert_eq!(after[k].as_f64(), n.as_f64(), "{k} after {step}"),
                _ => assert_eq!(&after[k], v, "{k} after {step}"),
            }
            expected[k] = after[k].clone();
        }
        if step.get("shipping_fee").is_some() {
            assert_eq!(after["shipping_fee"], json!(4.99));
            assert_eq!(after["items_total"], json!(13.5));
            assert_eq!(
                after["grand_total"],
                json!(18.49),
                "grand total follows the fee"
            );
            expected["grand_total"] = json!(18.49);
        }
        expected["updated_at"] = after["updated_at"].clone();
        assert_eq!(after, expected, "only {step} changed (before: {before})");
        assert_eq!(get(&app, &o).await, after, "the change is kept");
    }
    assert_eq!(expected["updated_at"], "2026-03-01T10:01:00.000Z");
    assert_eq!(expected["created_at"], o["created_at"]);

    // Several at once, and null clears the notes.
    let r = app
        .patch(
            &at(&o),
            &app.key,
            json!({"notes": null, "status": "delivered", "shipping_fee": 0}),
        )
        .await
        .expect(200)
        .body;
    assert_eq!(r["notes"], Value::Null);
    assert_eq!(r["status"], "delivered");
    assert_eq!(r["grand_total"], json!(13.5));
    assert_eq!(r["payment_status"], "paid");
    assert_eq!(r["paid_amount"], json!(13.5));
    assert_eq!(get(&app, &o).await["notes"], Value::Null);
}

#[tokio::test]
async fn each_patch_rule_names_its_field() {
    let app = spawn_app().await;
    let ann = new_contact(&app, "Ann").await;
    let o = create(&app, order_body(ann)).await;
    refusals(
        &app,
        Method::PATCH,
        &at(&o),
        vec![
            (json!({"status": "pending"}), "status"),
            (json!({"status": "Shipped"}), "status"),
            (json!({"payment_status": "refunded"}), "payment_status"),
            (json!({"paid_amount": -1}), "paid_amount"),
            (json!({"paid_amount": 0.001}), "paid_amount"),
            (json!({"shipping_fee": -0.5}), "shipping_fee"),
            (json!({"shipping_fee": 1.005}), "shipping_fee"),
            (json!({"shipping_fee": "1"}), "shipping_fee"),
            (json!({"notes": "n".repeat(2001)}), "notes"),
            (json!({"currency": "EUR"}), "currency"),
            (json!({"contact_id": ann}), "contact_id"),
            (json!({"items": []}), "items"),
        ],
    )
    .await;
    assert_eq!(get(&app, &o).await, o, "nothing changed");
    let r = app
        .patch(&at(&o), &app.key, json!({"notes": "n".repeat(2000)}))
        .await
        .expect(200);
    assert_eq!(r.body["notes"], "n".repeat(2000));
}

#[tokio::test]
async fn put_status_sets_the_fulfillment_status() {
    let app = spawn_app().await;
    let ann = new_contact(&app, "Ann").await;
    let o = create(&app, with(order_body(ann), json!({"notes": "keep"}))).await;
    let path = format!("{}/status", at(&o));
    for status in ["shipped", "delivered", "failed", "cancelled", "unfulfilled"] {
        let r = app
            .put(&path, &app.key, json!({ "status": status }))
            .await
            .expect(200)
            .body;
        assert_eq!(r["object"], "order");
        assert_eq!(r["status"], status);
        assert_eq!(r["payment_status"], "pending");
        assert_eq!(r["notes"], "keep");
        assert_eq!(get(&app, &o).await["status"], status);
    }
    refusals(
        &app,
        Method::PUT,
        &path,
        vec![
            (json!({"status": "lost"}), "status"),
            (json!({"status": "paid"}), "status"),
            (json!({"status": ""}), "status"),
            (json!({"status": null}), "status"),
            (json!({"status": 3}), "status"),
            (json!({}), "status"),
        ],
    )
    .await;
    not_found(
        app.put(
            &format!("{ORDERS}/999999999/status"),
            &app.key,
            json!({"status": "shipped"}),
        )
        .await,
    );
    app.put(
        &format!("{ORDERS}/abc/status"),
        &app.key,
        json!({"status": "shipped"}),
    )
    .await
    .expect_error(400, "invalid_request");
}

// ----- Items -----

#[tokio::test]
async fn adding_an_item_answers_201_with_the_order() {
    let app = spawn_app().await;
    let ann = new_contact(&app, "Ann").await;
    let product = app
        .post("/products", &app.key, json!({"name": "Jam"}))
        .await
        .expect(201)
        .body;
    let o = two_item_order(&app, ann).await;
    let r = app
        .post(
            &format!("{}/items", at(&o)),
            &app.key,
            json!({"name": "Jam", "quantity": 2, "unit_price": 2.25, "product_id": id(&product), "sku": "J-1"}),
        )
        .await
        .expect(201)
        .body;
    assert_fields(&r, ORDER_FIELDS);
    assert_eq!(r["object"], "order");
    assert_eq!(r["id"], o["id"]);
    let items = r["items"].as_array().unwrap();
    assert_eq!(items.len(), 3);
    let added = &items[2];
    assert_fields(added, ITEM_FIELDS);
    assert_eq!(added["name"], "Jam");
    assert_eq!(added["quantity"], 2);
    assert_eq!(added["unit_price"], json!(2.25));
    assert_eq!(added["product_id"], id(&product));
    assert_eq!(added["sku"], "J-1");
    assert_eq!(added["total"], json!(4.5));
    assert!(
        o["items"]
            .as_array()
            .unwrap()
            .iter()
            .all(|i| i["id"] != added["id"]),
        "a new item id"
    );
    assert_eq!(r["items_total"], json!(18.0));
    assert_eq!(r["grand_total"], json!(18.0));
    assert_eq!(get(&app, &o).await, r);

    not_found(
        app.post(
            &format!("{ORDERS}/999999999/items"),
            &app.key,
            item("Jam", 1, 1.0),
        )
        .await,
    );
}

#[tokio::test]
async fn each_rule_of_an_added_item_names_its_field() {
    let app = spawn_app().await;
    let ann = new_contact(&app, "Ann").await;
    let o = create(&app, order_body(ann)).await;
    let yen = create(
        &app,
        with(
            order_body(ann),
            json!({"currency": "JPY", "items": [item("Tea", 1, 500.0)]}),
        ),
    )
    .await;
    let with_item = |extra: Value| with(item("Jam", 1, 2.0), extra);
    refusals(
        &app,
        Method::POST,
        &format!("{}/items", at(&o)),
        vec![
            (with_item(json!({"name": ""})), "name"),
            (with_item(json!({"name": "n".repeat(256)})), "name"),
            (json!({"quantity": 1, "unit_price": 1}), "name"),
            (with_item(json!({"quantity": 0})), "quantity"),
            (with_item(json!({"quantity": 100_001})), "quantity"),
            (with_item(json!({"quantity": 1.5})), "quantity"),
            (with_item(json!({"unit_price": -1})), "unit_price"),
            (
                with_item(json!({"unit_price": 100_000_000.01})),
                "unit_price",
            ),
            (with_item(json!({"unit_price": 1.005})), "unit_price"),
            (with_item(json!({"sku": "s".repeat(101)})), "sku"),
        ],
    )
    .await;
    no_such(
        app.post(
            &format!("{}/items", at(&o)),
            &app.key,
            with_item(json!({"product_id": 999_999_999})),
        )
        .await,
        "product_id: no such product",
    );
    invalid(
        app.post(
            &format!("{}/items", at(&yen)),
            &app.key,
            item("Jam", 1, 1.5),
        )
        .await,
        "unit_price",
    );
    assert_eq!(get(&app, &o).await, o, "nothing was added");
}

#[tokio::test]
async fn changing_an_item_quantity_updates_the_item_and_the_totals() {
    let app = spawn_app().await;
    let ann = new_contact(&app, "Ann").await;
    let o = two_item_order(&app, ann).await;
    let tea = o["items"][0].clone();
    let cake = o["items"][1].clone();

    let r = app
        .patch(&item_at(&o, &tea), &app.key, json!({"quantity": 5}))
        .await
        .expect(200)
        .body;
    assert_eq!(r["object"], "order");
    assert_eq!(r["items"][0]["quantity"], 5);
    assert_eq!(r["items"][0]["total"], json!(25.0));
    assert_eq!(r["items"][1], cake, "the other item is untouched");
    assert_eq!(r["items_total"], json!(28.5));
    assert_eq!(r["grand_total"], json!(28.5));
    assert_eq!(get(&app, &o).await, r);

    app.patch(&item_at(&o, &tea), &app.key, json!({"quantity": 100_000}))
        .await
        .expect(200);
    refusals(
        &app,
        Method::PATCH,
        &item_at(&o, &tea),
        vec![
            (json!({"quantity": 0}), "quantity"),
            (json!({"quantity": -3}), "quantity"),
            (json!({"quantity": 100_001}), "quantity"),
            (json!({"quantity": 2.5}), "quantity"),
            (json!({"quantity": "2"}), "quantity"),
            (json!({}), "quantity"),
            (json!({"quantity": 2, "unit_price": 1}), "unit_price"),
        ],
    )
    .await;
    not_found(
        app.patch(
            &format!("{}/items/999999999", at(&o)),
            &app.key,
            json!({"quantity": 2}),
        )
        .await,
    );
    not_found(
        app.patch(
            &format!("{ORDERS}/999999999/items/{}", id(&tea)),
            &app.key,
            json!({"quantity": 2}),
        )
        .await,
    );
    app.patch(
        &format!("{}/items/abc", at(&o)),
        &app.key,
        json!({"quantity": 2}),
    )
    .await
    .expect_error(400, "invalid_request");
}

#[tokio::test]
async fn an_item_of_another_order_is_not_found() {
    let app = spawn_app().await;
    let ann = new_contact(&app, "Ann").await;
    let one = two_item_order(&app, ann).await;
    let other = two_item_order(&app, ann).await;
    let stranger = &other["items"][0];
    not_found(
        app.patch(&item_at(&one, stranger), &app.key, json!({"quantity": 2}))
            .await,
    );
    not_found(app.delete(&item_at(&one, stranger), &app.key).await);
    assert_eq!(get(&app, &other).await, other);
    assert_eq!(get(&app, &one).await, one);
}

#[tokio::test]
async fn removing_an_item_keeps_the_rest_but_never_the_last_one() {
    let app = spawn_app().await;
    let ann = new_contact(&app, "Ann").await;
    let o = two_item_order(&app, ann).await;
    let tea = o["items"][0].clone();
    let cake = o["items"][1].clone();

    let r = app
        .delete(&item_at(&o, &tea), &app.key)
        .await
        .expect(200)
        .body;
    assert_eq!(r["object"], "order");
    assert_eq!(r["items"], json!([cake.clone()]));
    assert_eq!(r["items_total"], json!(3.5));
    assert_eq!(r["grand_total"], json!(3.5));
    assert_eq!(get(&app, &o).await, r);

    not_found(app.delete(&item_at(&o, &tea), &app.key).await);
    not_found(
        app.delete(&format!("{}/items/999999999", at(&o)), &app.key)
            .await,
    );
    app.delete(&format!("{}/items/x", at(&o)), &app.key)
        .await
        .expect_error(400, "invalid_request");

    // The last item stays: cancel the order instead.
    app.delete(&item_at(&o, &cake), &app.key)
        .await
        .expect_error(409, "conflict");
    assert_eq!(get(&app, &o).await["items"], json!([cake]));
}

/// For each state that is not (unfulfilled, pending): adding, changing and removing an item
/// answer 409 `order_not_editable` and change nothing; back to unfulfilled and pending,
/// each works again.
#[tokio::test]
async fn items_change_only_while_the_order_is_unfulfilled_and_unpaid() {
    let app = spawn_app().await;
    let ann = new_contact(&app, "Ann").await;
    let locked = [
        ("shipped", "pending"),
        ("delivered", "pending"),
        ("cancelled", "pending"),
        ("failed", "pending"),
        ("unfulfilled", "paid"),
        ("shipped", "paid"),
    ];
    let mut wrong = Vec::new();
    for (status, payment) in locked {
        let o = two_item_order(&app, ann).await;
        let (tea, cake) = (o["items"][0].clone(), o["items"][1].clone());
        let state = json!({"status": status, "payment_status": payment});
        let locked_view = app.patch(&at(&o), &app.key, state).await.expect(200).body;

        let attempts = [
            (
                "add",
                app.post(&format!("{}/items", at(&o)), &app.key, item("Jam", 1, 2.0))
                    .await,
            ),
            (
                "change",
                app.patch(&item_at(&o, &tea), &app.key, json!({"quantity": 3}))
                    .await,
            ),
            ("remove", app.delete(&item_at(&o, &cake), &app.key).await),
        ];
        for (what, r) in attempts {
            if (r.status, r.code()) != (409, "order_not_editable") {
                wrong.push(format!(
                    "{what} while {status}/{payment}: {} {}",
                    r.status, r.body
                ));
            }
        }
        if get(&app, &o).await != locked_view {
            wrong.push(format!("the order changed while {status}/{payment}"));
        }

        // Back to unfulfilled and pending: every item change works again.
        let back = json!({"status": "unfulfilled", "payment_status": "pending"});
        app.patch(&at(&o), &app.key, back).await.expect(200);
        let added = app
            .post(&format!("{}/items", at(&o)), &app.key, item("Jam", 1, 2.0))
            .await;
        let changed = app
            .patch(&item_at(&o, &tea), &app.key, json!({"quantity": 3}))
            .await;
        let removed = app.delete(&item_at(&o, &cake), &app.key).await;
        for (what, r, want) in [
            ("add", added, 201),
            ("change", changed, 200),
            ("remove", removed, 200),
        ] {
            if r.status != want {
                wrong.push(format!(
                    "{what} after unlocking {status}/{payment}: {} {}",
                    r.status, r.body
                ));
            }
        }
        let now = get(&app, &o).await;
        let names: Vec<&str> = now["items"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|i| i["name"].as_str())
            .collect();
        if names != ["Tea", "Jam"] || now["items"][0]["quantity"] != 3 {
            wrong.push(format!(
                "items after unlocking {status}/{payment}: {}",
                now["items"]
            ));
        }
    }
    assert!(wrong.is_empty(), "wrong answers:\n{}", wrong.join("\n"));
}

#[tokio::test]
async fn an_order_created_shipped_or_paid_is_not_editable() {
    let app = spawn_app().await;
    let ann = new_contact(&app, "Ann").await;
    for state in [
        json!({"status": "shipped"}),
        json!({"payment_status": "paid"}),
    ] {
        let body = with(
            with_items(ann, vec![item("Tea", 1, 5.0), item("Cake", 1, 3.5)]),
            state.clone(),
        );
        let o = create(&app, body).await;
        let tea = &o["items"][0];
        not_editable(
            app.post(&format!("{}/items", at(&o)), &app.key, item("Jam", 1, 2.0))
                .await,
        );
        not_editable(
            app.patch(&item_at(&o, tea), &app.key, json!({"quantity": 2}))
                .await,
        );
        not_editable(app.delete(&item_at(&o, tea), &app.key).await);
        assert_eq!(get(&app, &o).await, o, "{state}");
    }
}

#[tokio::test]
async fn put_status_also_locks_and_unlocks_the_items() {
    let app = spawn_app().await;
    let ann = new_contact(&app, "Ann").await;
    let o = two_item_order(&app, ann).await;
    let status = format!("{}/status", at(&o));
    app.put(&status, &app.key, json!({"status": "cancelled"}))
        .await
        .expect(200);
    not_editable(
        app.post(&format!("{}/items", at(&o)), &app.key, item("Jam", 1, 2.0))
            .await,
    );
    app.put(&status, &app.key, json!({"status": "unfulfilled"}))
        .await
        .expect(200);
    app.post(&format!("{}/items", at(&o)), &app.key, item("Jam", 1, 2.0))
        .await
        .expect(201);
}

// ----- Timeline -----

#[tokio::test]
async fn timeline_notes_are_added_with_their_time() {
    let start: DateTime<Utc> = "2026-03-01T10:00:00Z".parse().unwrap();
    let clock = ManualClock::new(start);
    let app = spawn_app_with_clock(clock.clone()).await;
    let ann = new_contact(&app, "Ann").await;
    let o = create(&app, order_body(ann)).await;
    let path = format!("{}/timeline", at(&o));

    clock.advance(Duration::from_secs(5));
    let r = app
        .post(&path, &app.key, json!({"note": "Packed"}))
        .await
        .expect(201)
        .body;
    assert_eq!(r["object"], "order");
    assert_eq!(r["id"], o["id"]);
    let timeline = r["timeline"].as_array().unwrap();
    assert_eq!(timeline.len(), 1);
    assert_fields(&timeline[0], TIMELINE_FIELDS);
    assert!(timeline[0]["id"].as_u64().is_some(), "{r}");
    assert_eq!(timeline[0]["note"], "Packed");
    assert_eq!(timeline[0]["created_at"], "2026-03-01T10:00:05.000Z");

    clock.advance(Duration::from_secs(5));
    let long = "é".repeat(2000);
    let r = app
        .post(&path, &app.key, json!({ "note": long }))
        .await
        .expect(201)
        .body;
    let notes: Vec<&str> = r["timeline"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|e| e["note"].as_str())
        .collect();
    assert_eq!(notes, ["Packed", long.as_str()], "oldest first, both kept");
    assert_eq!(r["timeline"][1]["created_at"], "2026-03-01T10:00:10.000Z");
    assert_ne!(r["timeline"][0]["id"], r["timeline"][1]["id"]);
    assert_eq!(r["items"], o["items"], "the items are untouched");
    assert_eq!(get(&app, &o).await, r);

    // A note may be added in any state.
    app.patch(
        &at(&o),
        &app.key,
        json!({"status": "cancelled", "payment_status": "paid"}),
    )
    .await
    .expect(200);
    app.post(&path, &app.key, json!({"note": "Refund requested"}))
        .await
        .expect(201);
}

#[tokio::test]
async fn a_timeline_note_holds_one_to_two_thousand_characters() {
    let app = spawn_app().await;
    let ann = new_contact(&app, "Ann").await;
    let o = create(&app, order_body(ann)).await;
    refusals(
        &app,
        Method::POST,
        &format!("{}/timeline", at(&o)),
        vec![
            (json!({"note": ""}), "note"),
            (json!({"note": "n".repeat(2001)}), "note"),
            (json!({"note": null}), "note"),
            (json!({"note": 5}), "note"),
            (json!({}), "note"),
        ],
    )
    .await;
    assert_eq!(get(&app, &o).await["timeline"], json!([]));
    not_found(
        app.post(
            &format!("{ORDERS}/999999999/timeline"),
            &app.key,
            json!({"note": "x"}),
        )
        .await,
    );
}

// ----- Merge, restart, permissions -----

#[tokio::test]
async fn the_orders_of_a_merged_contact_follow_the_primary() {
    let app = spawn_app().await;
    let primary = new_contact(&app, "Ann").await;
    let secondary = new_contact(&app, "Annie").await;
    let bystander = new_contact(&app, "Bob").await;
    let own = id(&create(&app, order_body(primary)).await);
    let moved1 = id(&create(&app, order_body(secondary)).await);
    let other = id(&create(&app, order_body(bystander)).await);
    let moved2 = id(&create(
        &app,
        with(order_body(secondary), json!({"status": "shipped"})),
    )
    .await);

    app.post(
        "/contacts/merge",
        &app.key,
        json!({"primary_contact_id": primary, "secondary_contact_id": secondary}),
    )
    .await
    .expect(200);

    assert_eq!(
        list_ids(&app, &format!("?contact_id={primary}")).await,
        vec![moved2, moved1, own]
    );
    for moved in [moved1, moved2] {
        let o = app
            .get(&format!("{ORDERS}/{moved}"), &app.key)
            .await
            .expect(200)
            .body;
        assert_eq!(o["contact_id"], primary, "{o}");
    }
    // The secondary's id now answers as the primary.
    assert_eq!(
        list_ids(&app, &format!("?contact_id={secondary}")).await,
        vec![moved2, moved1, own]
    );
    assert_eq!(
        list_ids(&app, &format!("?contact_id={secondary}&status=shipped")).await,
        vec![moved2]
    );
    assert_eq!(
        list_ids(&app, &format!("?contact_id={bystander}")).await,
        vec![other]
    );
    let all = list_ids(&app, "").await;
    assert_eq!(
        all,
        vec![moved2, other, moved1, own],
        "nothing lost or copied"
    );
}

#[tokio::test]
async fn orders_survive_a_restart() {
    let app = spawn_app().await;
    let ann = new_contact(&app, "Ann").await;
    let o = two_item_order(&app, ann).await;
    let tea = o["items"][0].clone();
    app.patch(&item_at(&o, &tea), &app.key, json!({"quantity": 4}))
        .await
        .expect(200);
    app.post(&format!("{}/items", at(&o)), &app.key, item("Jam", 1, 2.25))
        .await
        .expect(201);
    app.post(
        &format!("{}/timeline", at(&o)),
        &app.key,
        json!({"note": "Packed"}),
    )
    .await
    .expect(201);
    let done = app
        .patch(
            &at(&o),
            &app.key,
            json!({"status": "shipped", "payment_status": "paid", "paid_amount": 25.75, "shipping_fee": 0.01, "notes": "Fragile"}),
        )
        .await
        .expect(200)
        .body;
    let yen = create(
        &app,
        with(
            order_body(ann),
            json!({"currency": "JPY", "items": [item("Tea", 2, 750.0)]}),
        ),
    )
    .await;

    let app = app.restart().await;
    assert_eq!(get(&app, &o).await, done);
    assert_eq!(get(&app, &yen).await, yen);
    assert_eq!(done["grand_total"], json!(25.76));
    assert_eq!(list_ids(&app, "").await, vec![id(&yen), id(&o)]);
    assert_eq!(list_ids(&app, "?status=shipped").await, vec![id(&o)]);
    // Still locked after the restart.
    not_editable(
        app.post(&format!("{}/items", at(&o)), &app.key, item("Jam", 1, 2.0))
            .await,
    );
    // New orders don't reuse ids.
    let after = create(&app, order_body(ann)).await;
    assert!(id(&after) > id(&yen));
}

#[tokio::test]
async fn orders_need_the_orders_permission() {
    let app = spawn_app().await;
    let ann = new_contact(&app, "Ann").await;
    let o = two_item_order(&app, ann).await;
    let tea = o["items"][0].clone();
    let without = app.member_token("member", &["contacts"]).await;
    let none = app.member_token("member", &[]).await;
    let with_orders = app.member_token("member", &["orders"]).await;

    for token in [&without, &none] {
        let refused = [
            app.get(ORDERS, token).await,
            app.post(ORDERS, token, order_body(ann)).await,
            app.get(&at(&o), token).await,
            app.patch(&at(&o), token, json!({"notes": "x"})).await,
            app.put(
                &format!("{}/status", at(&o)),
                token,
                json!({"status": "shipped"}),
            )
            .await,
            app.post(&format!("{}/items", at(&o)), token, item("Jam", 1, 1.0))
                .await,
            app.patch(&item_at(&o, &tea), token, json!({"quantity": 2}))
                .await,
            app.delete(&item_at(&o, &tea), token).await,
            app.post(&format!("{}/timeline", at(&o)), token, json!({"note": "x"}))
                .await,
        ];
        for r in refused {
            r.expect_error(403, "insufficient_permissions");
        }
    }
    assert_eq!(get(&app, &o).await, o, "nothing changed");

    app.get(ORDERS, &with_orders).await.expect(200);
    app.get(&at(&o), &with_orders).await.expect(200);
    let made = app
        .post(ORDERS, &with_orders, order_body(ann))
        .await
        .expect(201)
        .body;
    app.patch(&at(&made), &with_orders, json!({"notes": "ok"}))
        .await
        .expect(200);
    app.post(
        &format!("{}/timeline", at(&made)),
        &with_orders,
        json!({"note": "ok"}),
    )
    .await
    .expect(201);
    // An admin needs no listed permission.
    let admin = app.member_token("admin", &[]).await;
    app.get(ORDERS, &admin).await.expect(200);
}

#[tokio::test]
async fn creating_an_order_with_an_idempotency_key_creates_it_once() {
    let app = spawn_app().await;
    let ann = new_contact(&app, "Ann").await;
    let send = |body: Value| {
        app.call(Method::POST, ORDERS)
            .token(&app.key)
            .header("Idempotency-Key", "order-1")
            .json(body)
            .send()
    };
    let first = send(order_body(ann)).await.expect(201).body;
    let again = send(order_body(ann)).await.expect(201).body;
    assert_eq!(first, again);
    assert_eq!(list_ids(&app, "").await, vec![id(&first)]);
    send(with(order_body(ann), json!({"notes": "other"})))
        .await
        .expect_error(409, "idempotency_key_reused");
}
