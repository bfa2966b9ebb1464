//! Contacts over HTTP: lists and filters, search, lookup, upsert, merge, and what survives
//! a restart.

use crate::contacts::{
    at, enc, id_of, invalid, new_contact, no_such, not_found, tags_of, workspace_tags,
};
use crate::helpers::*;

use std::collections::BTreeSet;

use futures::future::join_all;
use serde_json::{json, Value};
use switchboard_actors::clock::ManualClock;

/// GET /contacts?{query} with limit 100, expecting one complete page; the ids in order.
async fn ids(app: &TestApp, query: &str) -> Vec<u64> {
    let sep = if query.is_empty() { "" } else { "&" };
    let body = app
        .get(&format!("/contacts?limit=100{sep}{query}"), &app.key)
        .await
        .expect(200)
        .body;
    assert_eq!(body["object"], "list", "body: {body}");
    assert_eq!(body["has_more"], false, "GET /contacts?{query}: {body}");
    body["data"]
        .as_array()
        .expect("data")
        .iter()
        .map(|c| {
            assert_eq!(c["object"], "contact", "{c}");
            id_of(c)
        })
        .collect()
}

async fn id_set(app: &TestApp, query: &str) -> BTreeSet<u64> {
    ids(app, query).await.into_iter().collect()
}

fn set(contacts: &[&Value]) -> BTreeSet<u64> {
    contacts.iter().map(|c| id_of(c)).collect()
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
        let body = app.get(&path, &app.key).await.expect(200).body;
        let data = body["data"].as_array().expect("data");
        out.extend(data.iter().map(id_of));
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
    let r = app
        .get(&format!("/contacts/lookup?{query}"), &app.key)
        .await;
    assert_eq!(r.status, 200, "lookup {query}: {}", r.body);
    assert_eq!(r.body["object"], "contact", "lookup {query}: {}", r.body);
    id_of(&r.body)
}

async fn upsert(app: &TestApp, body: Value) -> Resp {
    app.post("/contacts/upsert", &app.key, body).await
}

async fn merge(app: &TestApp, primary: &Value, secondary: &Value) -> Resp {
    app.post(
        "/contacts/merge",
        &app.key,
        json!({"primary_contact_id": primary["id"], "secondary_contact_id": secondary["id"]}),
    )
    .await
}

async fn add_note(app: &TestApp, contact: &Value, body: &str) -> Value {
    app.post(
        &format!("{}/notes", at(contact)),
        &app.key,
        json!({ "body": body }),
    )
    .await
    .expect(201)
    .body
}

// ----- 4. Lists and filters -----

#[tokio::test]
async fn contacts_list_newest_first_and_pages_walk_without_gaps_or_repeats() {
    let app = spawn_app().await;
    let mut made = Vec::new();
    for i in 0..27 {
        made.push(id_of(
            &new_contact(&app, json!({"first_name": format!("P{i}")})).await,
        ));
    }
    made.reverse();
    let first = app.get("/contacts", &app.key).await.expect(200).body;
    assert_eq!(first["object"], "list");
    assert_eq!(first["has_more"], true);
    let page: Vec<u64> = first["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(id_of)
        .collect();
    assert_eq!(page, made[..25], "default page of 25, newest first");
    assert_eq!(ids(&app, "").await, made);
    for limit in [1, 2, 5, 26, 27, 100] {
        assert_eq!(walk(&app, "", limit).await, made, "limit {limit}");
    }
}

#[tokio::test]
async fn bad_limits_answer_422_and_bad_cursors_400() {
    let app = spawn_app().await;
    new_contact(&app, json!({"first_name": "Ann"})).await;
    for limit in ["0", "101", "-1", "abc", "2.5"] {
        invalid(
            app.get(&format!("/contacts?limit={limit}"), &app.key).await,
            "limit",
        );
    }
    for cursor in ["garbage", "42", "MTIz", "%21%21"] {
        app.get(&format!("/contacts?starting_after={cursor}"), &app.key)
            .await
            .expect_error(400, "invalid_request");
    }
}

#[tokio::test]
async fn list_filters_phone_email_tag_stage_assignee_and_channel() {
    let app = spawn_app().await;
    let funnel = app.new_funnel("Sales", &["Lead", "Won"]).await;
    let lead = funnel["stages"][0]["id"].clone();
    let won = funnel["stages"][1]["id"].clone();
    let member = app.new_user("Mia Member").await;
    app.add_member(&app.workspace_id, &member, "member", &["contacts"])
        .await;
    let other_member = app.new_user("Max Member").await;
    app.add_member(&app.workspace_id, &other_member, "member", &[])
        .await;
    let a = new_contact(
        &app,
        json!({"first_name": "A", "phone": "+15550100100", "email": "a@example.com",
               "tags": ["VIP"], "stage_id": lead, "assigned_to_user_id": member}),
    )
    .await;
    let b = new_contact(
        &app,
        json!({"first_name": "B", "phone": "+155501001009", "email": "a@example.co",
               "tags": ["Other"], "stage_id": won}),
    )
    .await;
    let c = new_contact(
        &app,
        json!({"first_name": "C", "chan_d_phone": "+4930111222"}),
    )
    .await;
    let cases: Vec<(String, BTreeSet<u64>)> = vec![
        (format!("phone={}", enc("+15550100100")), set(&[&a])),
        (format!("phone={}", enc("+155501001009")), set(&[&b])),
        ("phone=5550100".into(), set(&[])),
        (format!("phone={}", enc("+15550100")), set(&[])),
        (format!("email={}", enc("a@example.com")), set(&[&a])),
        (format!("email={}", enc("a@example.co")), set(&[&b])),
        (format!("email={}", enc("a@example")), set(&[])),
        ("tag=VIP".into(), set(&[&a])),
        ("tag=vip".into(), set(&[&a])),
        ("tag=oTHER".into(), set(&[&b])),
        ("tag=nope".into(), set(&[])),
        (format!("stage_id={lead}"), set(&[&a])),
        (format!("stage_id={won}"), set(&[&b])),
        ("stage_id=999999999".into(), set(&[])),
        (format!("assigned_to_user_id={}", enc(&member)), set(&[&a])),
        (
            format!("assigned_to_user_id={}", enc(&other_member)),
            set(&[]),
        ),
        ("channel=api".into(), set(&[&a, &b, &c])),
        ("channel=sms".into(), set(&[])),
        ("channel=chan_a".into(), set(&[])),
        (format!("tag=vip&phone={}", enc("+15550100100")), set(&[&a])),
        (format!("tag=vip&stage_id={won}"), set(&[])),
        (
            format!("tag=other&email={}", enc("a@example.com")),
            set(&[]),
        ),
        ("".into(), set(&[&a, &b, &c])),
    ];
    for (query, want) in cases {
        assert_eq!(id_set(&app, &query).await, want, "GET /contacts?{query}");
    }
    for (query, path) in [
        ("channel=fax", "channel"),
        ("channel=API", "channel"),
        ("stage_id=lead", "stage_id"),
        ("stage_id=-1", "stage_id"),
    ] {
        invalid(app.get(&format!("/contacts?{query}"), &app.key).await, path);
    }
}

#[tokio::test]
async fn updated_since_is_inclusive_and_needs_an_offset() {
    let start = chrono::DateTime::parse_from_rfc3339("2026-03-01T10:00:00Z")
        .unwrap()
        .with_timezone(&chrono::Utc);
    let clock = ManualClock::new(start);
    let app = spawn_app_with_clock(clock.clone()).await;
    let minute = std::time::Duration::from_secs(60);
    let a = new_contact(&app, json!({"first_name": "A"})).await;
    clock.advance(minute);
    let b = new_contact(&app, json!({"first_name": "B"})).await;
    assert_eq!(b["updated_at"], "2026-03-01T10:01:00.000Z");
    clock.advance(minute);
    let a2 = app
        .patch(&at(&a), &app.key, json!({"last_name": "Again"}))
        .await
        .expect(200)
        .body;
    assert_eq!(a2["updated_at"], "2026-03-01T10:02:00.000Z");
    let cases = [
        ("2026-03-01T10:00:00Z", set(&[&a, &b])),
        ("2026-03-01T10:01:00Z", set(&[&a, &b])),
        ("2026-03-01T10:01:00.000Z", set(&[&a, &b])),
        ("2026-03-01T12:01:00+02:00", set(&[&a, &b])),
        ("2026-03-01T05:01:00-05:00", set(&[&a, &b])),
        ("2026-03-01T10:01:00.001Z", set(&[&a])),
        ("2026-03-01T10:02:00Z", set(&[&a])),
        ("2026-03-01T10:02:00.001Z", set(&[])),
    ];
    for (since, want) in cases {
        let query = format!("updated_since={}", enc(since));
        assert_eq!(id_set(&app, &query).await, want, "updated_since={since}");
    }
    for bad in [
        "2026-01-01T00:00:00",
        "2026-01-01",
        "yesterday",
        "2026-13-01T00:00:00Z",
    ] {
        invalid(
            app.get(&format!("/contacts?updated_since={}", enc(bad)), &app.key)
                .await,
            "updated_since",
        );
    }
}

// ----- 5. Search -----

#[tokio::test]
async fn search_requires_every_word_to_match_case_insensitively() {
    let app = spawn_app().await;
    let ann_lee = new_contact(
        &app,
        json!({"first_name": "Ann", "last_name": "Lee", "email": "ann.lee@example.com"}),
    )
    .await;
    let ann_stone = new_contact(&app, json!({"first_name": "Ann", "last_name": "Stone"})).await;
    let bob_lee = new_contact(&app, json!({"first_name": "Bob", "last_name": "Lee"})).await;
    let cases = [
        ("ann lee", set(&[&ann_lee])),
        ("lee ann", set(&[&ann_lee])),
        ("ANN LEE", set(&[&ann_lee])),
        ("aNn", set(&[&ann_lee, &ann_stone])),
        ("lee", set(&[&ann_lee, &bob_lee])),
        ("ann bob", set(&[])),
        ("ann stone lee", set(&[])),
        ("stone", set(&[&ann_stone])),
        ("nobody", set(&[])),
    ];
    for (q, want) in cases {
        let query = format!("q={}", enc(q));
        assert_eq!(id_set(&app, &query).await, want, "q={q}");
    }
}

#[tokio::test]
async fn search_matches_name_email_phones_usernames_and_notes() {
    let app = spawn_app().await;
    let q = new_contact(
        &app,
        json!({
            "first_name": "Quentin", "last_name": "Marsh", "email": "qmail@fastpost.io",
            "phone": "+15550100199", "chan_d_phone": "+4930123456",
            "chan_a_username": "@skater_q", "chan_c_username": "cchandle",
            "chan_e_username": "eehandle"
        }),
    )
    .await;
    let other = new_contact(
        &app,
        json!({"first_name": "Other", "phone": "+15550100288"}),
    )
    .await;
    add_note(&app, &q, "Allergic to peanuts, call after lunch").await;
    add_note(&app, &other, "Nothing special").await;
    let cases = [
        ("quentin", set(&[&q])),
        ("marsh", set(&[&q])),
        ("fastpost", set(&[&q])),
        ("qmail@fastpost.io", set(&[&q])),
        ("0199", set(&[&q])),
        ("100199", set(&[&q])),
        ("5550100199", set(&[&q])),
        ("+15550100199", set(&[&q])),
        ("0288", set(&[&other])),
        ("3456", set(&[&q])),
        ("4930123456", set(&[&q])),
        ("skater", set(&[&q])),
        ("skater_q", set(&[&q])),
        ("cchandle", set(&[&q])),
        ("eehandle", set(&[&q])),
        ("peanuts", set(&[&q])),
        ("PEANUTS lunch", set(&[&q])),
        ("peanuts quentin", set(&[&q])),
        ("peanuts other", set(&[])),
        ("special", set(&[&other])),
        ("555", set(&[&q, &other])),
    ];
    for (text, want) in cases {
        let query = format!("q={}", enc(text));
        assert_eq!(id_set(&app, &query).await, want, "q={text}");
    }
}

#[tokio::test]
async fn search_follows_patches_and_ignores_other_workspaces() {
    let app = spawn_app().await;
    let (_, other_key) = app.new_workspace("Other").await;
    app.post(
        "/contacts",
        &other_key,
        json!({"first_name": "Wanda", "phone": "+15550100300"}),
    )
    .await
    .expect(201);
    let c = new_contact(
        &app,
        json!({"first_name": "Oldname", "phone": "+15550100100", "email": "old@example.com"}),
    )
    .await;
    app.patch(
        &at(&c),
        &app.key,
        json!({"first_name": "Newname", "phone": "+15550100200", "email": "new@example.com"}),
    )
    .await
    .expect(200);
    not_found(
        app.get(
            &format!("/contacts/lookup?email={}", enc("old@example.com")),
            &app.key,
        )
        .await,
    );
    assert_eq!(
        looked_up(&app, &format!("email={}", enc("new@example.com"))).await,
        id_of(&c)
    );
    assert_eq!(id_set(&app, "q=old").await, set(&[]));
    assert_eq!(id_set(&app, "q=oldname").await, set(&[]));
    assert_eq!(id_set(&app, "q=newname").await, set(&[&c]));
    assert_eq!(id_set(&app, "q=100100").await, set(&[]));
    assert_eq!(id_set(&app, "q=100200").await, set(&[&c]));
    assert_eq!(id_set(&app, "q=wanda").await, set(&[]));
    not_found(
        app.get(
            &format!("/contacts/lookup?phone={}", enc("+15550100100")),
            &app.key,
        )
        .await,
    );
    not_found(
        app.get(
            &format!("/contacts/lookup?phone={}", enc("+15550100300")),
            &app.key,
        )
        .await,
    );
    assert_eq!(
        looked_up(&app, &format!("phone={}", enc("+15550100200"))).await,
        id_of(&c)
    );
}

#[tokio::test]
async fn q_is_limited_to_200_characters() {
    let app = spawn_app().await;
    new_contact(&app, json!({"first_name": "Ann"})).await;
    invalid(
        app.get(&format!("/contacts?q={}", "a".repeat(201)), &app.key)
            .await,
        "q",
    );
    invalid(
        app.get(&format!("/contacts?q={}", enc(&"é".repeat(201))), &app.key)
            .await,
        "q",
    );
    assert_eq!(
        ids(&app, &format!("q={}", "a".repeat(200))).await,
        [0u64; 0]
    );
    let body = app
        .get(&format!("/contacts?q={}", enc(&"é".repeat(200))), &app.key)
        .await
        .expect(200)
        .body;
    assert_eq!(body["data"], json!([]));
}

#[tokio::test]
async fn a_search_shared_by_300_contacts_paginates_without_gaps_or_repeats() {
    let app = spawn_app().await;
    let mut all = BTreeSet::new();
    let mut even = BTreeSet::new();
    for chunk in 0..6 {
        let made = join_all((0..50).map(|i| {
            let n = chunk * 50 + i;
            let last = if n % 2 == 0 { "Even" } else { "Odd" };
            let app = &app;
            async move {
                let c = new_contact(
                    app,
                    json!({"first_name": "Zebra", "last_name": last, "email": format!("z{n}@example.com")}),
                )
                .await;
                (id_of(&c), last == "Even")
            }
        }))
        .await;
        for (id, is_even) in made {
            all.insert(id);
            if is_even {
                even.insert(id);
            }
        }
    }
    for i in 0..5 {
        new_contact(
            &app,
            json!({"first_name": "Yak", "last_name": format!("Even{i}")}),
        )
        .await;
    }
    assert_eq!(all.len(), 300);
    for (query, limit, want) in [
        ("q=zebra", 100, &all),
        ("q=zebra", 7, &all),
        ("q=ZEBRA%20even", 40, &even),
        ("q=even%20zebra", 100, &even),
    ] {
        let got = walk(&app, query, limit).await;
        assert!(
            got.windows(2).all(|w| w[0] > w[1]),
            "{query}: newest first, no repeats"
        );
        let got: BTreeSet<u64> = got.into_iter().collect();
        assert_eq!(&got, want, "{query} limit {limit}");
    }
    let first = app
        .get("/contacts?q=zebra&limit=100", &app.key)
        .await
        .expect(200)
        .body;
    assert_eq!(first["has_more"], true);
    assert_eq!(
        id_of(&first["data"][0]),
        *all.iter().next_back().unwrap(),
        "the newest zebra first"
    );
}

// ----- 6. Lookup -----

#[tokio::test]
async fn lookup_finds_by_phone_email_or_handle_with_or_without_at() {
    let app = spawn_app().await;
    let c = new_contact(
        &app,
        json!({
            "first_name": "Ann", "phone": "+15550100100", "email": "ann@example.com",
            "chan_a_username": "@only_a", "chan_c_username": "ann_c",
            "chan_e_username": "ann_e", "chan_d_phone": "+4930111222"
        }),
    )
    .await;
    let other = new_contact(
        &app,
        json!({"first_name": "Other", "phone": "+15550100999", "email": "other@example.com"}),
    )
    .await;
    let found = app
        .get(
            &format!("/contacts/lookup?phone={}", enc("+15550100100")),
            &app.key,
        )
        .await
        .expect(200)
        .body;
    let full = app.get(&at(&c), &app.key).await.expect(200).body;
    assert_eq!(found, full, "lookup answers the whole contact record");
    let id = id_of(&c);
    for query in [
        format!("phone={}", enc("+15550100100")),
        format!("email={}", enc("ann@example.com")),
        format!("email={}", enc("ANN@Example.com")),
        "handle=only_a".to_string(),
        format!("handle={}", enc("@only_a")),
        "handle=only_a&channel=chan_a".to_string(),
        format!("handle={}&channel=chan_a", enc("@only_a")),
        "handle=ann_c".to_string(),
        format!("handle={}&channel=chan_c", enc("@ann_c")),
        "handle=ann_e&channel=chan_e".to_string(),
        format!("handle={}&channel=chan_d", enc("+4930111222")),
        format!(
            "phone={}&email={}",
            enc("+15550100100"),
            enc("ann@example.com")
        ),
        format!("email={}&handle=ann_c", enc("ann@example.com")),
    ] {
        assert_eq!(looked_up(&app, &query).await, id, "lookup {query}");
    }
    assert_eq!(
        looked_up(&app, &format!("phone={}", enc("+15550100999"))).await,
        id_of(&other)
    );
    for query in [
        "handle=only_a&channel=chan_c".to_string(),
        "handle=only_a&channel=chan_e".to_string(),
        "handle=ann_c&channel=chan_a".to_string(),
        format!(
            "phone={}&email={}",
            enc("+15550100100"),
            enc("other@example.com")
        ),
        format!("phone={}", enc("+15550100101")),
        format!("email={}", enc("ann@example.co")),
        "handle=only".to_string(),
        "handle=nobody".to_string(),
    ] {
        let r = app
            .get(&format!("/contacts/lookup?{query}"), &app.key)
            .await;
        assert_eq!(
            (r.status, r.code()),
            (404, "not_found"),
            "lookup {query}: {}",
            r.body
        );
    }
}

#[tokio::test]
async fn lookup_answers_the_oldest_of_several_matches() {
    let app = spawn_app().await;
    let first = new_contact(
        &app,
        json!({"first_name": "First", "phone": "+15550100100", "email": "dup@example.com",
               "chan_c_username": "dup"}),
    )
    .await;
    let second = new_contact(
        &app,
        json!({"first_name": "Second", "phone": "+15550100100", "email": "dup@example.com",
               "chan_c_username": "dup"}),
    )
    .await;
    let third = new_contact(
        &app,
        json!({"first_name": "Third", "phone": "+15550100100", "chan_a_username": "dup"}),
    )
    .await;
    let phone = format!("phone={}", enc("+15550100100"));
    assert_eq!(looked_up(&app, &phone).await, id_of(&first));
    assert_eq!(
        looked_up(&app, &format!("email={}", enc("dup@example.com"))).await,
        id_of(&first)
    );
    assert_eq!(looked_up(&app, "handle=dup").await, id_of(&first));
    assert_eq!(
        looked_up(&app, "handle=dup&channel=chan_a").await,
        id_of(&third)
    );
    // A newer contact changed to match stays behind the older one.
    app.patch(&at(&third), &app.key, json!({"email": "dup@example.com"}))
        .await
        .expect(200);
    assert_eq!(
        looked_up(&app, &format!("email={}", enc("dup@example.com"))).await,
        id_of(&first)
    );
    app.delete(&at(&first), &app.key).await.expect(200);
    assert_eq!(looked_up(&app, &phone).await, id_of(&second));
    assert_eq!(looked_up(&app, "handle=dup").await, id_of(&second));
}

#[tokio::test]
async fn lookup_refuses_requests_without_a_criterion_or_with_a_bad_channel() {
    let app = spawn_app().await;
    new_contact(&app, json!({"first_name": "Ann", "chan_a_username": "ann"})).await;
    // No phone, email or handle: the details point at the query as a whole.
    for query in ["", "?phone=", "?email=&handle=", "?channel=chan_a"] {
        app.get(&format!("/contacts/lookup{query}"), &app.key)
            .await
            .expect_error(422, "validation_failed");
    }
    for channel in ["email", "sms", "api", "fax", "chan_b"] {
        invalid(
            app.get(
                &format!("/contacts/lookup?handle=ann&channel={channel}"),
                &app.key,
            )
            .await,
            "channel",
        );
    }
}

// ----- 7. Upsert -----

#[tokio::test]
async fn upsert_without_phone_email_or_username_answers_422() {
    let app = spawn_app().await;
    for body in [
        json!({}),
        json!({"first_name": "Ann"}),
        json!({"first_name": "Ann", "tags": ["vip"], "country_code": "DE"}),
        json!({"phone": null, "email": null}),
    ] {
        let r = upsert(&app, body.clone()).await;
        assert_eq!(
            (r.status, r.code()),
            (422, "validation_failed"),
            "upsert {body}: {}",
            r.body
        );
    }
    assert_eq!(ids(&app, "").await, [0u64; 0], "nothing was created");
    invalid(upsert(&app, json!({"email": "nope"})).await, "email");
    invalid(
        upsert(&app, json!({"phone": "+15550100100", "nickname": "x"})).await,
        "nickname",
    );
    no_such(
        upsert(
            &app,
            json!({"phone": "+15550100100", "stage_id": 999_999_999}),
        )
        .await,
        "stage_id: no such stage",
    );
    invalid(
        upsert(
            &app,
            json!({"phone": "+15550100100", "assigned_to_user_id": "nobody"}),
        )
        .await,
        "assigned_to_user_id",
    );
    assert_eq!(ids(&app, "").await, [0u64; 0], "nothing was created");
}

#[tokio::test]
async fn upsert_creates_with_201_then_updates_with_200_adding_tags() {
    let app = spawn_app().await;
    let funnel = app.new_funnel("Sales", &["Lead"]).await;
    let member = app.new_user("Mia Member").await;
    app.add_member(&app.workspace_id, &member, "member", &[])
        .await;
    let r = upsert(
        &app,
        json!({"email": "Ann@Example.com", "first_name": "Ann", "tags": ["A"], "source": "form"}),
    )
    .await
    .expect(201)
    .body;
    let keys: BTreeSet<&str> = r.as_object().unwrap().keys().map(|k| &k[..]).collect();
    assert_eq!(
        keys,
        BTreeSet::from(["object", "created", "contact"]),
        "{r}"
    );
    assert_eq!(r["object"], "contact_upsert");
    assert_eq!(r["created"], true);
    let c = &r["contact"];
    assert_eq!(c["object"], "contact");
    assert_eq!(c["email"], "ann@example.com");
    assert_eq!(c["source"], "form");
    assert_eq!(c["channel"], "api");
    assert_eq!(tags_of(c), ["A"]);
    let got = app.get(&at(c), &app.key).await.expect(200).body;
    assert_eq!(&got, c);
    let r = upsert(
        &app,
        json!({"email": "ann@example.com", "last_name": "Lee", "tags": ["b", "a"],
               "stage_id": funnel["stages"][0]["id"], "assigned_to_user_id": member}),
    )
    .await
    .expect(200)
    .body;
    assert_eq!(r["object"], "contact_upsert");
    assert_eq!(r["created"], false);
    let u = &r["contact"];
    assert_eq!(u["id"], c["id"]);
    assert_eq!(u["first_name"], "Ann", "omitted fields are kept");
    assert_eq!(u["last_name"], "Lee");
    assert_eq!(u["name"], "Ann Lee");
    assert_eq!(u["source"], "form");
    assert_eq!(tags_of(u), ["A", "b"], "tags are added, not replaced");
    assert_eq!(u["stage"]["stage_name"], "Lead");
    assert_eq!(u["assigned_to_user_id"], member.as_str());
    assert_eq!(u["created_at"], c["created_at"]);
    let got = app.get(&at(c), &app.key).await.expect(200).body;
    assert_eq!(&got, u);
    assert_eq!(ids(&app, "").await, [id_of(c)]);
    no_such(
        upsert(
            &app,
            json!({"email": "ann@example.com", "stage_id": 999_999_999}),
        )
        .await,
        "stage_id: no such stage",
    );
    for (body, path) in [
        (
            json!({"email": "ann@example.com", "assigned_to_user_id": "nobody"}),
            "assigned_to_user_id",
        ),
        (
            json!({"email": "ann@example.com", "tags": ["x".repeat(81)]}),
            "tags[0]",
        ),
        (
            json!({"email": "ann@example.com", "country_code": "XX"}),
            "country_code",
        ),
    ] {
        invalid(upsert(&app, body).await, path);
    }
    let got = app.get(&at(c), &app.key).await.expect(200).body;
    assert_eq!(&got, u, "refused upserts change nothing");
    let h = upsert(&app, json!({"chan_c_username": "@ann_c"}))
        .await
        .expect(201)
        .body;
    assert_eq!(h["contact"]["chan_c_username"], "ann_c");
    let h2 = upsert(&app, json!({"chan_c_username": "ann_c", "first_name": "C"}))
        .await
        .expect(200)
        .body;
    assert_eq!(h2["contact"]["id"], h["contact"]["id"]);
    assert_eq!(h2["contact"]["first_name"], "C");
    let h3 = upsert(&app, json!({"chan_e_username": "ann_c"}))
        .await
        .expect(201)
        .body;
    assert_ne!(
        h3["contact"]["id"], h["contact"]["id"],
        "usernames match on their own channel only"
    );
}

#[tokio::test]
async fn upsert_matches_phone_before_email_before_usernames() {
    let app = spawn_app().await;
    // Oldest first: the username holder, then the email holder, then the phone holder, so
    // that age alone would pick the wrong one.
    let by_user = new_contact(
        &app,
        json!({"first_name": "User", "chan_a_username": "handle1"}),
    )
    .await;
    let by_email = new_contact(
        &app,
        json!({"first_name": "Email", "email": "e1@example.com"}),
    )
    .await;
    let by_phone = new_contact(
        &app,
        json!({"first_name": "Phone", "phone": "+15550100100"}),
    )
    .await;
    let matched = |r: Resp| {
        let r = r.expect(200);
        assert_eq!(r.body["created"], false, "{}", r.body);
        id_of(&r.body["contact"])
    };
    let r = upsert(
        &app,
        json!({"phone": "+15550100100", "email": "e1@example.com", "chan_a_username": "handle1",
               "last_name": "S1"}),
    )
    .await;
    assert_eq!(matched(r), id_of(&by_phone), "phone first");
    for c in [&by_user, &by_email] {
        let got = app.get(&at(c), &app.key).await.expect(200).body;
        assert_eq!(got["last_name"], Value::Null, "untouched: {got}");
    }
    let r = upsert(
        &app,
        json!({"email": "E1@example.com", "chan_a_username": "@handle1", "last_name": "S2"}),
    )
    .await;
    assert_eq!(matched(r), id_of(&by_email), "then email");
    let got = app.get(&at(&by_user), &app.key).await.expect(200).body;
    assert_eq!(got["last_name"], Value::Null, "untouched: {got}");
    let r = upsert(
        &app,
        json!({"chan_a_username": "handle1", "last_name": "S3"}),
    )
    .await;
    assert_eq!(matched(r), id_of(&by_user), "then usernames, oldest first");
    let r = upsert(
        &app,
        json!({"phone": "+19990000001", "email": "e1@example.com", "last_name": "S4"}),
    )
    .await;
    assert_eq!(
        matched(r),
        id_of(&by_email),
        "an unmatched phone falls through to email"
    );
    let by_chan_d = new_contact(
        &app,
        json!({"first_name": "D", "chan_d_phone": "+4930111222"}),
    )
    .await;
    let r = upsert(
        &app,
        json!({"phone": "+4930111222", "email": "e1@example.com", "last_name": "S5"}),
    )
    .await;
    assert_eq!(
        matched(r),
        id_of(&by_chan_d),
        "phone matches a channel phone"
    );
    let r = upsert(
        &app,
        json!({"chan_d_phone": "+4930111222", "last_name": "S6"}),
    )
    .await;
    assert_eq!(matched(r), id_of(&by_chan_d));
    let r = upsert(
        &app,
        json!({"chan_d_phone": "+15550100100", "email": "e1@example.com", "last_name": "S7"}),
    )
    .await;
    assert_eq!(
        matched(r),
        id_of(&by_phone),
        "a channel phone matches a phone"
    );
    assert_eq!(ids(&app, "").await.len(), 4, "no upsert created a contact");
}

// ----- 8. Merge -----

#[tokio::test]
async fn merge_moves_notes_and_tags_and_fills_only_the_primarys_empty_fields() {
    let app = spawn_app().await;
    let primary = new_contact(
        &app,
        json!({"first_name": "Ann", "phone": "+15550100100", "tags": ["VIP"]}),
    )
    .await;
    let secondary = new_contact(
        &app,
        json!({"first_name": "Annie", "last_name": "Lee", "phone": "+15550100200",
               "email": "annie@example.com", "chan_c_username": "annie_c", "country_code": "DE",
               "tags": ["Lead", "vip"]}),
    )
    .await;
    let bystander = new_contact(&app, json!({"first_name": "Bystander"})).await;
    let n1 = add_note(&app, &primary, "primary note").await;
    let n2 = add_note(&app, &secondary, "secondary memo one").await;
    let n3 = add_note(&app, &secondary, "secondary memo two").await;
    let m = merge(&app, &primary, &secondary).await.expect(200).body;
    assert_eq!(m["object"], "contact");
    assert_eq!(m["id"], primary["id"]);
    assert_eq!(m["first_name"], "Ann", "the primary's values are kept");
    assert_eq!(m["phone"], "+15550100100");
    assert_eq!(m["last_name"], "Lee", "empty fields are filled");
    assert_eq!(m["name"], "Ann Lee");
    assert_eq!(m["email"], "annie@example.com");
    assert_eq!(m["chan_c_username"], "annie_c");
    assert_eq!(m["country_code"], "DE");
    assert_eq!(tags_of(&m), ["Lead", "VIP"]);
    let got = app.get(&at(&primary), &app.key).await.expect(200).body;
    assert_eq!(got, m);
    let notes = app
        .get(&format!("{}/notes", at(&primary)), &app.key)
        .await
        .expect(200)
        .body;
    let notes = notes["data"].as_array().unwrap();
    let note_ids: Vec<u64> = notes.iter().map(id_of).collect();
    assert_eq!(note_ids, [id_of(&n3), id_of(&n2), id_of(&n1)]);
    for n in notes {
        assert_eq!(n["contact_id"], primary["id"], "{n}");
    }
    // The secondary's id redirects to the primary.
    let via = app.get(&at(&secondary), &app.key).await.expect(200).body;
    assert_eq!(via, m, "GET of the secondary answers the primary");
    let via_notes = app
        .get(&format!("{}/notes", at(&secondary)), &app.key)
        .await
        .expect(200)
        .body;
    assert_eq!(via_notes["data"].as_array().unwrap().len(), 3);
    // Lists and lookups show only the primary.
    assert_eq!(ids(&app, "").await, [id_of(&bystander), id_of(&primary)]);
    assert_eq!(id_set(&app, "tag=lead").await, set(&[&primary]));
    assert_eq!(id_set(&app, "q=memo").await, set(&[&primary]));
    assert!(!id_set(&app, "q=annie").await.contains(&id_of(&secondary)));
    assert!(!id_set(&app, "q=0200").await.contains(&id_of(&secondary)));
    assert_eq!(
        looked_up(&app, &format!("email={}", enc("annie@example.com"))).await,
        id_of(&primary)
    );
    assert_eq!(looked_up(&app, "handle=annie_c").await, id_of(&primary));
    let r = app
        .get(
            &format!("/contacts/lookup?phone={}", enc("+15550100200")),
            &app.key,
        )
        .await;
    assert!(
        r.status == 404 || id_of(&r.body) == id_of(&primary),
        "a lookup never answers the secondary: {}",
        r.body
    );
    let mut names = workspace_tags(&app).await;
    names.sort();
    assert_eq!(names, ["Lead", "VIP"]);
    let tags = app.get("/tags", &app.key).await.expect(200).body;
    let vip = tags["data"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "VIP")
        .expect("VIP")["id"]
        .clone();
    let r = app
        .delete(&format!("/tags/{vip}"), &app.key)
        .await
        .expect(200)
        .body;
    assert_eq!(
        r["contacts_updated"], 1,
        "only the primary carries the tag after the merge: {r}"
    );
}

#[tokio::test]
async fn merge_fills_stage_assignee_custom_fields_and_opt_out_the_primary_lacks() {
    let app = spawn_app().await;
    let funnel = app.new_funnel("Sales", &["Lead", "Won"]).await;
    let member = app.new_user("Mia Member").await;
    app.add_member(&app.workspace_id, &member, "member", &[])
        .await;
    for body in [
        json!({"label": "Nickname", "key": "nickname"}),
        json!({"label": "Plan", "key": "plan", "type": "select", "options": ["basic", "pro"]}),
    ] {
        app.post("/custom-fields", &app.key, body).await.expect(201);
    }
    let primary = new_contact(
        &app,
        json!({"first_name": "P", "custom_fields": {"nickname": "Primary"}}),
    )
    .await;
    let secondary = new_contact(
        &app,
        json!({"first_name": "S", "stage_id": funnel["stages"][1]["id"],
               "assigned_to_user_id": member,
               "custom_fields": {"nickname": "Secondary", "plan": "pro"}}),
    )
    .await;
    app.put(
        &format!("{}/dnc", at(&secondary)),
        &app.key,
        json!({"do_not_contact": true, "reason": "asked"}),
    )
    .await
    .expect(200);
    let m = merge(&app, &primary, &secondary).await.expect(200).body;
    assert_eq!(m["id"], primary["id"]);
    assert_eq!(m["first_name"], "P");
    assert_eq!(m["stage"]["stage_name"], "Won");
    assert_eq!(m["assigned_to_user_id"], member.as_str());
    assert_eq!(
        m["custom_fields"],
        json!({"nickname": "Primary", "plan": "pro"})
    );
    assert_eq!(m["do_not_contact"], true, "an opt-out is never lost");
    assert_eq!(
        id_set(&app, &format!("stage_id={}", funnel["stages"][1]["id"])).await,
        set(&[&primary])
    );
}

#[tokio::test]
async fn merge_answers_404_for_unknown_or_foreign_ids_and_422_for_the_same_contact_twice() {
    let app = spawn_app().await;
    let (_, other_key) = app.new_workspace("Other").await;
    let foreign = app
        .post("/contacts", &other_key, json!({"first_name": "Fay"}))
        .await
        .expect(201)
        .body;
    let a = new_contact(&app, json!({"first_name": "A"})).await;
    let b = new_contact(&app, json!({"first_name": "B"})).await;
    let unknown = json!({"id": 999_999_999u64});
    invalid(merge(&app, &a, &a).await, "secondary_contact_id");
    for missing in [&unknown, &foreign] {
        no_such(
            merge(&app, missing, &b).await,
            "primary_contact_id: no such contact",
        );
        no_such(
            merge(&app, &a, missing).await,
            "secondary_contact_id: no such contact",
        );
    }
    for (body, path) in [
        (
            json!({"primary_contact_id": a["id"]}),
            "secondary_contact_id",
        ),
        (
            json!({"secondary_contact_id": b["id"]}),
            "primary_contact_id",
        ),
        (
            json!({"primary_contact_id": "abc", "secondary_contact_id": b["id"]}),
            "primary_contact_id",
        ),
        (
            json!({"primary_contact_id": a["id"], "secondary_contact_id": b["id"], "x": 1}),
            "x",
        ),
    ] {
        invalid(app.post("/contacts/merge", &app.key, body).await, path);
    }
    assert_eq!(
        ids(&app, "").await,
        [id_of(&b), id_of(&a)],
        "nothing merged"
    );
    let still = app.get(&at(&foreign), &other_key).await.expect(200).body;
    assert_eq!(still["first_name"], "Fay");
    merge(&app, &a, &b).await.expect(200);
    // b now answers as a: merging the two again names one contact twice.
    invalid(merge(&app, &a, &b).await, "secondary_contact_id");
    invalid(merge(&app, &b, &a).await, "secondary_contact_id");
}

#[tokio::test]
async fn redirects_follow_chains_of_merges_and_end_with_the_primary() {
    let app = spawn_app().await;
    let a = new_contact(&app, json!({"first_name": "A"})).await;
    let b = new_contact(&app, json!({"first_name": "B"})).await;
    let c = new_contact(&app, json!({"first_name": "C"})).await;
    merge(&app, &a, &b).await.expect(200);
    merge(&app, &c, &a).await.expect(200);
    for old in [&a, &b] {
        let got = app.get(&at(old), &app.key).await.expect(200).body;
        assert_eq!(got["id"], c["id"], "{got}");
    }
    assert_eq!(ids(&app, "").await, [id_of(&c)]);
    app.delete(&at(&c), &app.key).await.expect(200);
    for gone in [&a, &b, &c] {
        not_found(app.get(&at(gone), &app.key).await);
    }
    assert_eq!(ids(&app, "").await, [0u64; 0]);
}

// ----- 15. Restart -----

#[tokio::test]
async fn contacts_tags_notes_redirects_and_the_search_index_survive_a_restart() {
    let app = spawn_app().await;
    let a = new_contact(
        &app,
        json!({"first_name": "Ann", "phone": "+15550100100", "chan_a_username": "ann_a",
               "tags": ["VIP"]}),
    )
    .await;
    let b = new_contact(
        &app,
        json!({"first_name": "Bob", "email": "bob@example.com", "tags": ["Lead"]}),
    )
    .await;
    let c = new_contact(
        &app,
        json!({"first_name": "Carl", "email": "carl@example.com"}),
    )
    .await;
    app.patch(&at(&c), &app.key, json!({"first_name": "Carla"}))
        .await
        .expect(200);
    add_note(&app, &a, "loves kiwis").await;
    add_note(&app, &b, "secondary memo").await;
    merge(&app, &a, &b).await.expect(200);
    let list_before = app
        .get("/contacts?limit=100", &app.key)
        .await
        .expect(200)
        .body;
    let notes_before = app
        .get(&format!("{}/notes", at(&a)), &app.key)
        .await
        .expect(200)
        .body;
    let mut tags_before = workspace_tags(&app).await;
    tags_before.sort();

    let app = app.restart().await;

    let list_after = app
        .get("/contacts?limit=100", &app.key)
        .await
        .expect(200)
        .body;
    assert_eq!(list_after, list_before);
    let notes_after = app
        .get(&format!("{}/notes", at(&a)), &app.key)
        .await
        .expect(200)
        .body;
    assert_eq!(notes_after, notes_before);
    let mut tags_after = workspace_tags(&app).await;
    tags_after.sort();
    assert_eq!(tags_after, tags_before);
    assert_eq!(tags_after, ["Lead", "VIP"]);
    let via = app.get(&at(&b), &app.key).await.expect(200).body;
    assert_eq!(via["id"], a["id"], "the merge redirect survives");
    assert_eq!(id_set(&app, "q=kiwis").await, set(&[&a]));
    assert_eq!(id_set(&app, "q=memo").await, set(&[&a]));
    assert_eq!(id_set(&app, "q=carla").await, set(&[&c]));
    assert_eq!(id_set(&app, "q=0100").await, set(&[&a]));
    assert_eq!(id_set(&app, "tag=lead").await, set(&[&a]));
    assert_eq!(
        looked_up(&app, &format!("phone={}", enc("+15550100100"))).await,
        id_of(&a)
    );
    assert_eq!(
        looked_up(&app, &format!("email={}", enc("bob@example.com"))).await,
        id_of(&a)
    );
    assert_eq!(
        looked_up(&app, &format!("email={}", enc("carl@example.com"))).await,
        id_of(&c)
    );
    assert_eq!(looked_up(&app, "handle=ann_a").await, id_of(&a));
    let d = new_contact(&app, json!({"first_name": "Dora", "tags": ["vip"]})).await;
    assert_eq!(tags_of(&d), ["VIP"], "existing tags still match");
    assert_eq!(
        ids(&app, "").await,
        [id_of(&d), id_of(&c), id_of(&a)],
        "a contact made after the restart is the newest"
    );
    let n = add_note(&app, &b, "after restart").await;
    assert_eq!(n["contact_id"], a["id"]);
}
