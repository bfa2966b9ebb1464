//! Bookings over HTTP: create and its refusals, filters, rescheduling and updates, status
//! and cancellation, documents, privacy in events, and appointment reminders on the clock
//! and across kill -9.

use std::time::Duration;

use reqwest::Method;
use serde_json::{json, Value};
use switchboard_actors::clock::{Clock, ManualClock};

use crate::fixtures::*;
use crate::helpers::*;
use crate::receiver::TestReceiver;
use crate::webhooks::{fast_webhooks, new_endpoint};

const HOUR: Duration = Duration::from_secs(3600);

fn at(clock: &ManualClock, minutes: i64) -> String {
    (clock.now() + chrono::Duration::minutes(minutes)).to_rfc3339()
}

async fn booking(app: &TestApp, body: Value) -> Value {
    app.post("/bookings", body).await.created()
}

/// Every message of the contact's conversations, oldest first.
async fn messages_of(app: &TestApp, contact: u64) -> Vec<Value> {
    let mut all = Vec::new();
    for c in listed(
        app.get(&format!("/conversations?contact_id={contact}"))
            .await,
    ) {
        all.extend(listed(
            app.get(&format!("/conversations/{}/messages", c["id"]))
                .await,
        ));
    }
    all.sort_by_key(|m| m["id"].as_u64());
    all
}

#[tokio::test]
async fn creating_checks_every_field_and_shows_the_customer() {
    let app = spawn_app().await;
    let ann = new_contact_id(
        &app,
        json!({"first_name": "Ann", "last_name": "Lee", "phone": "+15550100"}),
    )
    .await;
    let bob = new_contact_id(&app, json!({"first_name": "Bob"})).await;
    let bobs = id(&new_conversation(&app, bob, "api").await);
    let ok = json!({"contact_id": ann, "service": "Haircut", "starts_at": "2030-05-01T10:00:00+02:00", "duration_minutes": 45});
    let with = |extra: Value| {
        let mut b = ok.clone();
        for (k, v) in extra.as_object().unwrap() {
            b[k] = v.clone();
        }
        b
    };
    not_found(
        app.post("/bookings", with(json!({"contact_id": 999})))
            .await,
    );
    invalid(
        app.post("/bookings", with(json!({"conversation_id": bobs})))
            .await,
        "conversation_id",
    );
    not_found(
        app.post("/bookings", with(json!({"conversation_id": 999})))
            .await,
    );
    let cases = vec![
        (with(json!({"service": ""})), "service"),
        (with(json!({"service": "x".repeat(201)})), "service"),
        (with(json!({"duration_minutes": 4})), "duration_minutes"),
        (with(json!({"duration_minutes": 1441})), "duration_minutes"),
        (with(json!({"starts_at": "next tuesday"})), "starts_at"),
        (with(json!({"location": "x".repeat(501)})), "location"),
        (with(json!({"notes": "x".repeat(2001)})), "notes"),
        (with(json!({"status": "completed"})), "status"),
    ];
    for (body, path) in cases {
        invalid(app.post("/bookings", body).await, path);
    }
    app.post("/bookings", with(json!({"customer_name": "X"})))
        .await
        .expect(422);

    let b = booking(&app, with(json!({"location": "Main St", "status": "confirmed", "conversation_summary": "wants a trim"}))).await;
    assert_fields(
        &b,
        "object id contact_id conversation_id service starts_at duration_minutes location notes status documents conversation_summary cancel_reason customer_name customer_phone created_at updated_at",
    );
    assert_eq!(b["object"], "booking");
    assert_eq!(b["status"], "confirmed");
    assert_eq!(b["starts_at"], "2030-05-01T08:00:00.000Z");
    assert_eq!(b["customer_name"], "Ann Lee");
    assert_eq!(b["customer_phone"], "+15550100");
    assert_eq!(b["documents"], json!([]));
    // The customer fields follow the contact.
    app.patch(&format!("/contacts/{ann}"), json!({"first_name": "Anne"}))
        .await
        .expect(200);
    let again = app.get(&format!("/bookings/{}", b["id"])).await.ok();
    assert_eq!(again["customer_name"], "Anne Lee");
    assert_eq!(again["status"], "confirmed");

    assert_read_needs(&app, "/bookings", &["contacts"], &["calendar"]).await;
}

#[tokio::test]
async fn lists_filter_by_contact_status_and_inclusive_time_bounds() {
    let app = spawn_app().await;
    let ann = new_contact_id(&app, json!({"first_name": "Ann"})).await;
    let bob = new_contact_id(&app, json!({"first_name": "Bob"})).await;
    let mut ids = Vec::new();
    for (who, day) in [(&ann, 1), (&bob, 2), (&ann, 3)] {
        let b = booking(
            &app,
            json!({"contact_id": who, "service": "Visit", "starts_at": format!("2030-01-0{day}T09:00:00Z"), "duration_minutes": 30}),
        )
        .await;
        ids.push(id(&b));
    }
    app.put(
        &format!("/bookings/{}/status", ids[2]),
        json!({"status": "confirmed"}),
    )
    .await
    .expect(200);
    assert_eq!(
        listed_ids(app.get("/bookings").await),
        [ids[2], ids[1], ids[0]]
    );
    assert_eq!(
        listed_ids(app.get(&format!("/bookings?contact_id={ann}")).await),
        [ids[2], ids[0]]
    );
    assert_eq!(
        listed_ids(app.get("/bookings?status=confirmed").await),
        [ids[2]]
    );
    assert_eq!(
        listed_ids(
            app.get(
                "/bookings?starts_after=2030-01-02T09:00:00Z&starts_before=2030-01-03T09:00:00Z"
            )
            .await
        ),
        [ids[2], ids[1]]
    );
    app.get("/bookings?starts_after=soon").await.expect(422);
    let (sizes, _) = walk_pages(&app, "/bookings", 2).await;
    assert_eq!(sizes, [2, 1]);
}

#[tokio::test]
async fn changes_statuses_and_files_announce_exactly_what_happened() {
    let app = crate::webhooks::spawn_webhook_app().await;
    let rx = TestReceiver::start().await;
    new_endpoint(
        &app,
        json!({"url": rx.url, "events": ["booking.*"], "include_content": true, "include_contact_details": true}),
    )
    .await;
    let bare = TestReceiver::start().await;
    new_endpoint(&app, json!({"url": bare.url, "events": ["booking.*"]})).await;
    let ann = new_contact_id(&app, json!({"first_name": "Ann", "phone": "+15550100"})).await;
    let b = booking(
        &app,
        json!({"contact_id": ann, "service": "Haircut", "starts_at": "2030-05-01T10:00:00Z", "duration_minutes": 30, "conversation_summary": "a trim"}),
    )
    .await;
    let path = format!("/bookings/{}", b["id"]);

    // A new time alone: rescheduled, not updated.
    app.patch(&path, json!({"starts_at": "2030-05-02T10:00:00Z"}))
        .await
        .expect(200);
    // A new time and a new place: both, and `changes` lists only the place.
    app.patch(
        &path,
        json!({"starts_at": "2030-05-03T10:00:00Z", "location": "Main St"}),
    )
    .await
    .expect(200);
    // A duration alone: updated.
    let longer = app.patch(&path, json!({"duration_minutes": 60})).await.ok();
    assert_eq!(longer["duration_minutes"], 60);
    invalid(app.patch(&path, json!({})).await, "");
    // The same status again: nothing to announce.
    app.put(&format!("{path}/status"), json!({"status": "pending"}))
        .await
        .expect(200);
    app.put(&format!("{path}/status"), json!({"status": "confirmed"}))
        .await
        .expect(200);
    let files = json!({"documents": [
        {"url": "https://files.example/id.pdf", "name": "id.pdf", "content_type": "application/pdf"},
        {"url": "https://files.example/id.pdf"},
        {"url": "https://files.example/photo.jpg"}
    ]});
    let with_files = app.post(&format!("{path}/documents"), files).await.ok();
    assert_eq!(with_files["documents"].as_array().unwrap().len(), 2);
    let more = app
        .post(&format!("{path}/documents"), json!({"documents": [{"url": "https://files.example/photo.jpg"}, {"url": "https://files.example/scan.png"}]}))
        .await
        .ok();
    assert_eq!(more["documents"].as_array().unwrap().len(), 3);
    invalid(
        app.post(
            &format!("{path}/documents"),
            json!({"documents": [{"url": "http://files.example/x"}]}),
        )
        .await,
        "documents[0].url",
    );
    invalid(
        app.post(&format!("{path}/documents"), json!({"documents": []}))
            .await,
        "documents",
    );
    // PUT status cancelled is a cancel: only booking.cancelled.
    invalid(
        app.put(
            &format!("{path}/status"),
            json!({"status": "confirmed", "reason": "moved"}),
        )
        .await,
        "reason",
    );
    let cancelled = app
        .put(
            &format!("{path}/status"),
            json!({"status": "cancelled", "reason": "client moved"}),
        )
        .await
        .ok();
    assert_eq!(cancelled["status"], "cancelled");
    assert_eq!(
        cancelled["cancel_reason"], "client moved",
        "as POST /cancel keeps it"
    );
    conflict(app.post(&format!("{path}/cancel"), json!({})).await);
    conflict(
        app.put(&format!("{path}/status"), json!({"status": "confirmed"}))
            .await,
    );
    conflict(app.patch(&path, json!({"notes": "late"})).await);
    conflict(
        app.post(
            &format!("{path}/documents"),
            json!({"documents": [{"url": "https://files.example/late.pdf"}]}),
        )
        .await,
    );

    rx.wait_for(9).await;
    assert_eq!(
        rx.event_types(),
        [
            "booking.cancelled",
            "booking.created",
            "booking.documents.added",
            "booking.documents.added",
            "booking.rescheduled",
            "booking.rescheduled",
            "booking.status_changed",
            "booking.updated",
            "booking.updated",
        ]
    );
    // What the events of type `t` carry, sorted: deliveries arrive in any order, and the
    // events of one change share their `occurred_at`.
    let carried = |t: &str, what: fn(&Value) -> Value| {
        let mut all: Vec<Value> = rx.of_type(t).iter().map(|r| what(&r.json())).collect();
        all.sort_by_key(Value::to_string);
        all
    };
    assert_eq!(
        carried("booking.rescheduled", |e| {
            json!([e["data"]["previous_starts_at"], e["data"]["starts_at"]])
        }),
        [
            json!(["2030-05-01T10:00:00.000Z", "2030-05-02T10:00:00.000Z"]),
            json!(["2030-05-02T10:00:00.000Z", "2030-05-03T10:00:00.000Z"]),
        ]
    );
    assert_eq!(
        carried("booking.updated", |e| e["changes"].clone()),
        [json!({"duration_minutes": 30}), json!({"location": null})]
    );
    let status = &rx.of_type("booking.status_changed")[0].json()["data"];
    assert_eq!(status["previous_status"], "pending");
    assert_eq!(status["status"], "confirmed");
    let files = carried("booking.documents.added", |e| {
        let documents = e["data"]["documents"].as_array().unwrap();
        documents.iter().map(|d| d["url"].clone()).collect()
    });
    assert_eq!(
        files,
        [
            json!([
                "https://files.example/id.pdf",
                "https://files.example/photo.jpg"
            ]),
            json!(["https://files.example/scan.png"]),
        ],
        "the first files, then only the new file"
    );
    let created = &rx.of_type("booking.created")[0].json()["data"];
    assert_eq!(created["conversation_summary"], "a trim");
    assert_eq!(created["customer_phone"], "+15550100");

    // Without the endpoint's consent the summary, files and customer are absent.
    let hidden = bare.wait_for(9).await;
    for r in hidden {
        let d = r.json()["data"].clone();
        for field in [
            "conversation_summary",
            "documents",
            "customer_name",
            "customer_phone",
        ] {
            assert!(d.get(field).is_none(), "{field} in {}: {d}", r.event_type());
        }
    }
}

#[tokio::test]
async fn a_cancel_keeps_its_reason_and_a_booking_holds_at_most_100_files() {
    let app = spawn_app().await;
    let ann = new_contact_id(&app, json!({"first_name": "Ann"})).await;
    let b = booking(
        &app,
        json!({"contact_id": ann, "service": "Visit", "starts_at": "2030-01-01T09:00:00Z", "duration_minutes": 30}),
    )
    .await;
    let path = format!("/bookings/{}", b["id"]);
    for batch in 0..5 {
        let docs: Vec<Value> = (0..20)
            .map(|i| json!({"url": format!("https://files.example/{batch}/{i}")}))
            .collect();
        app.post(&format!("{path}/documents"), json!({"documents": docs}))
            .await
            .expect(200);
    }
    app.post(
        &format!("{path}/documents"),
        json!({"documents": [{"url": "https://files.example/one-more"}]}),
    )
    .await
    .expect_error(422, "limit_reached");
    invalid(
        app.post(
            &format!("{path}/cancel"),
            json!({"reason": "x".repeat(501)}),
        )
        .await,
        "reason",
    );
    let c = app
        .post(&format!("{path}/cancel"), json!({"reason": "feeling ill"}))
        .await
        .ok();
    assert_eq!(c["cancel_reason"], "feeling ill");
    assert_eq!(c["status"], "cancelled");
    not_found(app.post("/bookings/999/cancel", json!({})).await);
}

#[tokio::test]
async fn appointment_reminders_go_out_once_at_each_lead_time_and_follow_changes() {
    let (app, clock) = clocked(|s| {
        fast_webhooks(s);
        s.actor_idle = Duration::from_millis(50);
    })
    .await;
    let rx = TestReceiver::start().await;
    new_endpoint(
        &app,
        json!({"url": rx.url, "events": ["appointment_reminder.sent"]}),
    )
    .await;
    let ann = new_contact_id(&app, json!({"first_name": "Ann"})).await;
    let sms = new_conversation(&app, ann, "api").await;
    // 25 h ahead: the default 24 h reminder is due in 1 h.
    let b = booking(
        &app,
        json!({"contact_id": ann, "service": "Haircut", "starts_at": at(&clock, 25 * 60), "duration_minutes": 30}),
    )
    .await;
    // 2 h ahead: its 24 h lead is already past, so it gets no reminder.
    booking(
        &app,
        json!({"contact_id": ann, "service": "Late", "starts_at": at(&clock, 120), "duration_minutes": 30}),
    )
    .await;
    clock.advance(HOUR - Duration::from_secs(60));
    tokio::time::sleep(Duration::from_millis(400)).await;
    assert!(messages_of(&app, ann).await.is_empty(), "not early");

    clock.advance(Duration::from_secs(120));
    eventually("the reminder", async || {
        messages_of(&app, ann).await.len() == 1
    })
    .await;
    let m = &messages_of(&app, ann).await[0];
    assert_eq!(
        m["conversation_id"], sms["id"],
        "on the contact's conversation"
    );
    assert_eq!(m["sender_type"], "automation");
    assert_eq!(m["direction"], "outbound");
    let starts = utc(&b["starts_at"]);
    assert_eq!(
        m["text"],
        format!(
            "Reminder: Haircut on {}.",
            starts.format("%Y-%m-%d %H:%M UTC")
        )
    );
    let e = rx.wait_for(1).await[0].json();
    assert_eq!(
        e["data"],
        json!({"booking_id": b["id"], "lead": "24h", "message_id": m["id"], "starts_at": b["starts_at"]})
    );

    // Past the "Late" booking and well past: still one message.
    clock.advance(3 * HOUR);
    tokio::time::sleep(Duration::from_millis(400)).await;
    assert_eq!(messages_of(&app, ann).await.len(), 1, "exactly once");

    // Rescheduling re-arms; a 1 h lead added later applies to the booking too.
    app.patch(
        &format!("/bookings/{}", b["id"]),
        json!({"starts_at": at(&clock, 30 * 60)}),
    )
    .await
    .expect(200);
    app.patch(
        "/ai-settings",
        json!({"appointment_reminders": ["24h", "1h"]}),
    )
    .await
    .expect(200);
    clock.advance(6 * HOUR + Duration::from_secs(60));
    eventually("the 24 h reminder of the new time", async || {
        messages_of(&app, ann).await.len() == 2
    })
    .await;
    clock.advance(23 * HOUR);
    eventually("the 1 h reminder", async || {
        messages_of(&app, ann).await.len() == 3
    })
    .await;
    rx.wait_for(3).await;
    // Hours apart on the clock, but their deliveries may arrive in either order.
    let leads: Vec<String> = rx
        .in_event_order()
        .iter()
        .map(|r| r.json()["data"]["lead"].as_str().unwrap().to_string())
        .collect();
    // A lead reads as it was written in the AI settings.
    assert_eq!(leads, ["24h", "24h", "1h"]);
}

#[tokio::test]
async fn the_reminder_goes_to_the_conversation_with_the_latest_message_not_the_newest_one() {
    let (app, clock) = clocked(|_| {}).await;
    let ann = new_contact_id(&app, json!({"first_name": "Ann"})).await;
    let older = new_conversation(&app, ann, "api").await;
    let newer = new_conversation(&app, ann, "api").await;
    team_reply(&app, newer["id"].as_u64().unwrap(), "first").await;
    clock.advance(Duration::from_secs(60));
    team_reply(
        &app,
        older["id"].as_u64().unwrap(),
        "later, on the older one",
    )
    .await;
    booking(
        &app,
        json!({"contact_id": ann, "service": "Haircut", "starts_at": at(&clock, 25 * 60), "duration_minutes": 30}),
    )
    .await;
    clock.advance(HOUR + Duration::from_secs(60));
    eventually("the reminder", async || {
        messages_of(&app, ann).await.len() == 3
    })
    .await;
    let reminder = messages_of(&app, ann).await.pop().unwrap();
    assert_eq!(reminder["sender_type"], "automation");
    assert_eq!(reminder["conversation_id"], older["id"]);
}

#[tokio::test]
async fn cancelled_or_finished_bookings_get_no_reminder_and_a_new_contact_gets_an_api_conversation()
{
    let (app, clock) = clocked(|_| {}).await;
    let ann = new_contact_id(&app, json!({"first_name": "Ann"})).await;
    let bob = new_contact_id(&app, json!({"first_name": "Bob"})).await;
    let cy = new_contact_id(&app, json!({"first_name": "Cy"})).await;
    let starts = at(&clock, 25 * 60);
    let new = |who: u64| json!({"contact_id": who, "service": "Visit", "starts_at": starts, "duration_minutes": 30});
    let a = booking(&app, new(ann)).await;
    let b = booking(&app, new(bob)).await;
    booking(&app, new(cy)).await;
    app.post(&format!("/bookings/{}/cancel", a["id"]), json!({}))
        .await
        .expect(200);
    app.put(
        &format!("/bookings/{}/status", b["id"]),
        json!({"status": "completed"}),
    )
    .await
    .expect(200);
    clock.advance(2 * HOUR);
    eventually("Cy's reminder", async || {
        messages_of(&app, cy).await.len() == 1
    })
    .await;
    let conversations = listed(app.get(&format!("/conversations?contact_id={cy}")).await);
    assert_eq!(conversations.len(), 1);
    assert_eq!(conversations[0]["channel"], "api");
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(messages_of(&app, ann).await.is_empty(), "cancelled");
    assert!(messages_of(&app, bob).await.is_empty(), "completed");
}

#[tokio::test]
async fn an_appointment_reminder_armed_before_kill_9_goes_out_once_after_the_restart() {
    let dir = tempfile::tempdir().unwrap();
    let mut server = launch(dir.path(), &[], &[]).await;
    let key = server.key.clone().unwrap();
    server
        .send(
            Method::PATCH,
            &key,
            "/ai-settings",
            json!({"appointment_reminders": ["1h"]}),
        )
        .await;
    let ann = server
        .post_json(&key, "/contacts", json!({"first_name": "Ann"}))
        .await;
    let starts = chrono::Utc::now() + chrono::Duration::seconds(3600 + 2);
    server
        .send(
            Method::POST,
            &key,
            "/bookings",
            json!({"contact_id": ann["id"], "service": "Visit", "starts_at": starts.to_rfc3339(), "duration_minutes": 30}),
        )
        .await;
    server.kill_9().await;

    let server = launch(dir.path(), &[], &[]).await;
    let count = async || {
        let cs = server
            .get_json(&key, &format!("/conversations?contact_id={}", ann["id"]))
            .await;
        let Some(c) = cs["data"].as_array().and_then(|a| a.first()).cloned() else {
            return 0;
        };
        server
            .get_json(&key, &format!("/conversations/{}/messages", c["id"]))
            .await["data"]
            .as_array()
            .map_or(0, |a| a.len())
    };
    happens_once("the reminder went out after the restart", 1, count).await;
}

#[tokio::test]
async fn a_merge_moves_bookings_orders_and_reminders_and_announces_only_the_merge() {
    let app = crate::webhooks::spawn_webhook_app().await;
    let rx = TestReceiver::start().await;
    let primary = new_contact_id(&app, json!({"first_name": "Primary"})).await;
    let secondary = new_contact_id(
        &app,
        json!({"first_name": "Secondary", "phone": "+15550199"}),
    )
    .await;
    let b = booking(
        &app,
        json!({"contact_id": secondary, "service": "Visit", "starts_at": "2030-01-01T09:00:00Z", "duration_minutes": 30}),
    )
    .await;
    app.post("/orders", json!({"contact_id": secondary, "items": [{"name": "Tea", "quantity": 1, "unit_price": 5}]}))
    .await
    .expect(201);
    let users = listed(app.get("/users").await);
    app.post("/reminders", json!({"title": "t", "due_at": "2030-01-01T00:00:00Z", "assignee_user_ids": [users[0]["id"]], "contact_id": secondary}))
    .await
    .expect(201);
    new_endpoint(
        &app,
        json!({"url": rx.url, "events": ["contact.*", "order.*", "booking.*", "reminder.*", "conversation.*"]}),
    )
    .await;
    app.post(
        "/contacts/merge",
        json!({"primary_contact_id": primary, "secondary_contact_id": secondary}),
    )
    .await
    .expect(200);
    let moved = app.get(&format!("/bookings/{}", b["id"])).await.ok();
    assert_eq!(moved["contact_id"], primary);
    assert_eq!(moved["customer_name"], "Primary");
    assert_eq!(
        list_len(&app, &format!("/bookings?contact_id={primary}")).await,
        1
    );
    assert_eq!(
        list_len(&app, &format!("/bookings?contact_id={secondary}")).await,
        1,
        "the old id follows the merge"
    );
    assert_eq!(
        list_len(&app, &format!("/orders?contact_id={primary}")).await,
        1
    );
    assert_eq!(
        list_len(&app, &format!("/reminders?contact_id={primary}")).await,
        1
    );
    rx.wait_for(1).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let types = rx.event_types();
    assert!(
        types.iter().all(|t| t.starts_with("contact.")),
        "moved records announce nothing: {types:?}"
    );
    assert!(types.contains(&"contact.merged".to_string()), "{types:?}");
}

#[tokio::test]
async fn bookings_and_reminders_of_a_deleted_contact_stay_editable() {
    let app = spawn_app().await;
    let contact =
        new_contact_id(&app, json!({"first_name": "Gone", "phone": "+15554440001"})).await;
    let conversation = app
        .post(
            "/conversations",
            json!({"contact_id": contact, "channel": "api", "text": "Hello"}),
        )
        .await
        .created()["id"]
        .clone();
    let b = booking(
        &app,
        json!({"contact_id": contact, "conversation_id": conversation, "service": "Visit",
            "starts_at": "2030-01-01T09:00:00Z", "duration_minutes": 30}),
    )
    .await;
    let users = listed(app.get("/users").await);
    let r = app
        .post(
            "/reminders",
            json!({"title": "t", "due_at": "2030-01-01T00:00:00Z",
                "assignee_user_ids": [users[0]["id"]], "conversation_id": conversation}),
        )
        .await
        .created();
    app.delete(&format!("/contacts/{contact}"))
        .await
        .expect(200);

    let edited = app
        .patch(
            &format!("/bookings/{}", b["id"]),
            json!({"notes": "kept", "starts_at": "2030-01-02T09:00:00Z"}),
        )
        .await
        .ok();
    assert_eq!(edited["notes"], "kept");
    assert_eq!(edited["conversation_id"], conversation, "its ids are kept");
    let edited = app
        .patch(
            &format!("/reminders/{}", r["id"]),
            json!({"due_at": "2030-02-01T00:00:00Z", "title": "still mine"}),
        )
        .await
        .ok();
    assert_eq!(edited["title"], "still mine");
    assert_eq!(edited["contact_id"], contact);
    // Naming the gone conversation again is still checked.
    let again = app
        .patch(
            &format!("/bookings/{}", b["id"]),
            json!({"conversation_id": conversation}),
        )
        .await;
    assert_eq!(again.status, 404, "{}", again.body);
}

#[tokio::test]
async fn a_previous_value_quoting_the_customer_is_withheld_like_the_new_one() {
    let app = crate::webhooks::spawn_webhook_app().await;
    let rx = TestReceiver::start().await;
    new_endpoint(
        &app,
        json!({"url": rx.url, "events": ["booking.updated"], "include_content": true}),
    )
    .await;
    let contact = new_contact_id(
        &app,
        json!({"first_name": "Ann", "last_name": "Lee", "email": "ann@example.com"}),
    )
    .await;
    let b = booking(
        &app,
        json!({"contact_id": contact, "service": "Visit Ann Lee", "notes": "email ann@example.com",
            "starts_at": "2030-01-01T09:00:00Z", "duration_minutes": 30}),
    )
    .await;
    app.patch(
        &format!("/bookings/{}", b["id"]),
        json!({"service": "Visit", "notes": "new notes"}),
    )
    .await
    .ok();
    let got = rx.wait_for(1).await;
    assert_eq!(
        got[0].json()["changes"],
        json!({"service": "Visit [withheld]", "notes": "email [withheld]"})
    );
}

#[tokio::test]
async fn a_reminder_that_fails_at_once_is_not_announced_as_sent() {
    let (app, clock) = clocked(fast_webhooks).await;
    let rx = TestReceiver::start().await;
    new_endpoint(
        &app,
        json!({"url": rx.url, "events": ["appointment_reminder.sent", "message.send_failed"]}),
    )
    .await;
    let rita = new_contact_id(&app, json!({"first_name": "Rita", "phone": "+15550004321"})).await;
    // Her latest conversation is on a channel with no connection: messages there fail.
    let chan_c = new_conversation(&app, rita, "chan_c").await;
    team_reply(&app, id(&chan_c), "hello").await;
    booking(
        &app,
        json!({"contact_id": rita, "service": "Checkup", "starts_at": at(&clock, 25 * 60), "duration_minutes": 30}),
    )
    .await;
    clock.advance(HOUR + Duration::from_secs(60));
    let failed = rx.wait_for(2).await;
    let reminder = failed
        .iter()
        .map(|d| d.json())
        .find(|e| e["data"]["sender_type"] == "automation")
        .expect("the reminder's message.send_failed");
    assert_eq!(reminder["type"], "message.send_failed");
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(
        rx.event_types(),
        ["message.send_failed", "message.send_failed"],
        "the team reply's and the reminder's; no appointment_reminder.sent"
    );
}
