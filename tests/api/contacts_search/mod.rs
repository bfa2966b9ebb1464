//! Contacts over HTTP: lists and filters, search, lookup, upsert, merge, and what survives
//! a restart.

use crate::contacts::{at, enc, new_contact, no_such, tags_of, workspace_tags};
use crate::helpers::*;

use std::collections::BTreeSet;

use futures::future::join_all;
use serde_json::{json, Value};
use switchboard_actors::clock::ManualClock;

/// GET /contacts?{query} with limit 100, expecting one complete page; the ids in order.
async fn ids(app: &TestApp, query: &str) -> Vec<u64> {
    let sep = if query.is_empty() { "" } else { "&" };
    let body = app
        .get(&format!("/contacts?limit=100{sep}{query}"))
        .await
        .ok();
    assert_eq!(body["object"], "list", "body: {body}");
    assert_eq!(body["has_more"], false, "GET /contacts?{query}: {body}");
    body["data"]
        .as_array()
        .expect("data")
        .iter()
        .map(|c| {
            assert_eq!(c["object"], "contact", "{c}");
            id(c)
        })
        .collect()
}

async fn id_set(app: &TestApp, query: &str) -> BTreeSet<u64> {
    ids(app, query).await.into_iter().collect()
}

fn set(contacts: &[&Value]) -> BTreeSet<u64> {
    contacts.iter().map(|c| id(c)).collect()
}

/// Every page of GET /contacts?{query} at `limit` per page; the ids in order.
async fn walk(app: &TestApp, query: &str, limit: usize) -> Vec<u64> {
    let mut out = Vec::new();
    let mut cursor: Option<String> = None;
    for _ in 0..1_000 {
        let mut path = format!("/contacts?limit={limit}");
        if !query.is_empty() {
            path.push('&');
            path.push_str(query);
        }
        if let Some(c) = &cursor {
            path.push_str(&format!("&starting_after={}", enc(c)));
        }
        let body = app.get(&path).await.ok();
        let data = body["data"].as_array().expect("data");
        out.extend(data.iter().map(id));
        if body["has_more"] == true {
            assert_eq!(data.len(), limit, "a page before the last is full: {path}");
            cursor = Some(body["next_cursor"].as_str().expect("cursor").to_string());
        } else {
            assert_eq!(body["next_cursor"], Value::Null, "{path}: {body}");
            return out;
        }
    }
    panic!("pagination of {query} never ended");
}

/// GET /contacts/lookup?{query} answering 200; the contact's id.
async fn looked_up(app: &TestApp, query: &str) -> u64 {
    let r = app.get(&format!("/contacts/lookup?{query}")).await;
    assert_eq!(r.status, 200, "lookup {query}: {}", r.body);
    assert_eq!(r.body["object"], "contact", "lookup {query}: {}", r.body);
    id(&r.body)
}

async fn upsert(app: &TestApp, body: Value) -> Resp {
    app.post("/contacts/upsert", body).await
}

async fn merge(app: &TestApp, primary: &Value, secondary: &Value) -> Resp {
    app.post(
        "/contacts/merge",
        json!({"primary_contact_id": primary["id"], "secondary_contact_id": secondary["id"]}),
    )
    .await
}

async fn add_note(app: &TestApp, contact: &Value, body: &str) -> Value {
    app.post(&format!("{}/notes", at(contact)), json!({ "body": body }))
        .await
        .created()
}

mod lists;
mod lookup_upsert;
mod merge;
mod search;
