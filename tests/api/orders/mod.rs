//! Orders over HTTP: every field rule of create and patch, exact totals, reading and
//! listing (pages, filters), items and the editability rule in each state, the timeline,
//! contact merges, restarts and the `orders` permission.

use std::time::Duration;

use chrono::{DateTime, Utc};
use reqwest::Method;
use serde_json::{json, Value};
use switchboard_actors::clock::ManualClock;

use crate::contacts::no_such;
use crate::fixtures::*;
use crate::helpers::*;

const ORDERS: &str = "/orders";
const ORDER_FIELDS: &str = "object id contact_id status payment_status currency items \
    items_total shipping_fee grand_total paid_amount notes timeline payment_proofs created_at \
    updated_at";
const ITEM_FIELDS: &str = "id name quantity unit_price product_id sku total";
const TIMELINE_FIELDS: &str = "id note created_at";

// ----- Small helpers -----

#[track_caller]
fn not_editable(r: Resp) {
    r.expect_error(409, "order_not_editable");
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
        .post_as(key, "/contacts", json!({"first_name": name}))
        .await;
    id(&r.created())
}

async fn create(app: &TestApp, body: Value) -> Value {
    app.post(ORDERS, body).await.created()
}

/// An order of `contact` with two items (Tea 2 x 5.00, Cake 1 x 3.50).
async fn two_item_order(app: &TestApp, contact: u64) -> Value {
    create(
        app,
        with_items(contact, vec![item("Tea", 2, 5.0), item("Cake", 1, 3.5)]),
    )
    .await
}

/// A fresh app with the contact Ann and her [`two_item_order`]: (app, Ann, the order).
async fn app_with_two_item_order() -> (TestApp, u64, Value) {
    let app = spawn_app().await;
    let ann = contact_named(&app, "Ann").await;
    let order = two_item_order(&app, ann).await;
    (app, ann, order)
}

/// Checks that POST /orders refuses `contact`'s [`order_body`] with each case's fields set
/// over it, answering 422 at the case's path.
async fn order_refusals(app: &TestApp, contact: u64, cases: Vec<(Value, &str)>) {
    let cases = cases
        .into_iter()
        .map(|(extra, path)| (with(order_body(contact), extra), path))
        .collect();
    refusals(app, Method::POST, ORDERS, cases).await;
}

async fn get(app: &TestApp, order: &Value) -> Value {
    app.get(&at(order)).await.ok()
}

async fn list_ids(app: &TestApp, query: &str) -> Vec<u64> {
    listed_ids(app.get(&format!("{ORDERS}{query}")).await)
}

/// A JSON number written exactly as `text`, with no float in between: the client's digits
/// reach the service as they are.
pub(crate) fn number(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("{text}: {e}"))
}

mod amounts;
mod changes;
mod create;
mod items;
mod payment_proofs;
mod reading;
mod timeline_and_access;
