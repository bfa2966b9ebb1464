//! Reminders over HTTP: create and its refusals, filters, edits by any member, firing on
//! the clock (passivated, restarted, killed), notifications, closing and deleting (merges:
//! see the bookings tests).

use std::time::Duration;

use serde_json::{json, Value};
use switchboard_actors::clock::ManualClock;

use crate::fixtures::*;
use crate::helpers::*;
use crate::receiver::TestReceiver;
use crate::webhooks::{fast_webhooks, new_endpoint};

const MINUTE: Duration = Duration::from_secs(60);

/// An ISO 8601 time `minutes` after the app's clock.
fn in_minutes(clock: &ManualClock, minutes: i64) -> String {
    use switchboard_actors::clock::Clock;
    (clock.now() + chrono::Duration::minutes(minutes)).to_rfc3339()
}

/// The workspace owner's user id (the bootstrap key acts for the owner).
async fn owner(app: &TestApp) -> String {
    let users = listed(app.get("/users").await.expect(200));
    users.iter().find(|u| u["role"] == "owner").unwrap()["id"]
        .as_str()
        .unwrap()
        .to_string()
}

/// A member with no permission at all (reminders need none) and their token.
async fn plain_member(app: &TestApp, name: &str) -> (String, String) {
    let user = app.new_user(name).await;
    app.add_member(&app.workspace_id, &user, "member", &[])
        .await;
    let token = app.token_for(&user, 30 * 86_400).await;
    (user, token)
}

#[tokio::test]
async fn creating_checks_every_field_and_names_what_is_wrong() {
    let (app, clock) = clocked(|_| {}).await;
    let me = owner(&app).await;
    let due = in_minutes(&clock, 60);
    invalid(
        app.post("/reminders", json!({"title": "Call", "due_at": due}))
            .await,
        "assignee_user_ids",
    );
    invalid(
        app.post(
            "/reminders",
            json!({"title": "Call", "due_at": in_minutes(&clock, -1), "assignee_user_ids": [me]}),
        )
        .await,
        "due_at",
    );
    invalid(
        app.post(
            "/reminders",
            json!({"title": " ", "due_at": due, "assignee_user_ids": [me]}),
        )
        .await,
        "title",
    );
    let stranger = app.new_user("Stranger").await;
    invalid(
        app.post(
            "/reminders",
            json!({"title": "Call", "due_at": due, "assignee_user_ids": [me, stranger]}),
        )
        .await,
        "assignee_user_ids[1]",
    );
    not_found(
        app.post(
            "/reminders",
            json!({"title": "Call", "due_at": due, "assignee_user_ids": [me], "contact_id": 999}),
        )
        .await,
    );
    app.post(
        "/reminders",
        json!({"title": "Call", "due_at": due, "assignee_user_ids": [me], "colour": "red"}),
    )
    .await
    .expect(422);

    let ann = contact_named(&app, "Ann").await;
    let bob = contact_named(&app, "Bob").await;
    let conv = id(&new_conversation(&app, bob, "api").await);
    invalid(
        app.post(
            "/reminders",
            json!({"title": "Call", "due_at": due, "assignee_user_ids": [me],
                   "contact_id": ann, "conversation_id": conv}),
        )
        .await,
        "conversation_id",
    );
    let r = app
        .post(
            "/reminders",
            json!({"title": "Call Bob", "note": "about the order", "due_at": due,
                   "assignee_user_ids": [me], "conversation_id": conv}),
        )
        .await
        .created();
    assert_fields(
        &r,
        "object id title note due_at assignee_user_ids contact_id conversation_id status created_at fired_at closed_at",
    );
    assert_eq!(r["object"], "reminder");
    assert_eq!(r["status"], "open");
    assert_eq!(r["contact_id"], bob, "the conversation names its contact");
    assert_eq!(r["assignee_user_ids"], json!([me]));
    assert_eq!(app.get(&format!("/reminders/{}", r["id"])).await.ok(), r);
}

#[tokio::test]
async fn a_person_is_their_own_default_assignee_and_any_member_may_edit_or_delete() {
    let (app, clock) = clocked(|_| {}).await;
    let (ann, ann_token) = plain_member(&app, "Ann").await;
    let (bob, bob_token) = plain_member(&app, "Bob").await;
    let r = app
        .post_as(
            &ann_token,
            "/reminders",
            json!({"title": "Renew", "due_at": in_minutes(&clock, 30)}),
        )
        .await
        .created();
    assert_eq!(r["assignee_user_ids"], json!([ann]));
    let path = format!("/reminders/{}", r["id"]);
    let edited = app
        .patch_as(&bob_token, &path, json!({"title": "Renew the lease", "note": "call first", "assignee_user_ids": [ann, bob]}))
        .await
        .ok();
    assert_eq!(edited["title"], "Renew the lease");
    assert_eq!(edited["assignee_user_ids"], json!([ann, bob]));
    let cleared = app
        .patch_as(&bob_token, &path, json!({"note": null}))
        .await
        .ok();
    assert_eq!(cleared["note"], Value::Null);
    invalid(app.patch_as(&bob_token, &path, json!({})).await, "");
    invalid(
        app.patch_as(&bob_token, &path, json!({"due_at": in_minutes(&clock, -5)}))
            .await,
        "due_at",
    );
    let gone = app.delete_as(&bob_token, &path).await.ok();
    assert_eq!(
        gone,
        json!({"object": "reminder", "id": r["id"], "deleted": true})
    );
    not_found(app.get_as(&ann_token, &path).await);
    not_found(app.delete_as(&ann_token, &path).await);
}

#[tokio::test]
async fn lists_filter_by_status_assignee_and_contact_newest_first() {
    let (app, clock) = clocked(|_| {}).await;
    let (ann, ann_token) = plain_member(&app, "Ann").await;
    let me = owner(&app).await;
    let contact = contact_named(&app, "Cy").await;
    let mut ids = Vec::new();
    for (i, who) in [&me, &ann, &me].iter().enumerate() {
        let body = if i == 1 {
            json!({"title": format!("r{i}"), "due_at": in_minutes(&clock, 10), "assignee_user_ids": [who], "contact_id": contact})
        } else {
            json!({"title": format!("r{i}"), "due_at": in_minutes(&clock, 10), "assignee_user_ids": [who]})
        };
        ids.push(id(&app.post("/reminders", body).await.created()));
    }
    app.post_as(
        &ann_token,
        &format!("/reminders/{}/close", ids[0]),
        json!({}),
    )
    .await
    .expect(200);
    assert_eq!(
        listed_ids(app.get("/reminders").await),
        [ids[2], ids[1], ids[0]]
    );
    assert_eq!(
        listed_ids(app.get("/reminders?status=done").await),
        [ids[0]]
    );
    assert_eq!(
        listed_ids(app.get(&format!("/reminders?assignee_user_id={ann}")).await),
        [ids[1]]
    );
    assert_eq!(
        listed_ids(app.get(&format!("/reminders?contact_id={contact}")).await),
        [ids[1]]
    );
    invalid(
        app.get("/reminders?assignee_user_id=bob").await,
        "assignee_user_id",
    );
    let (counts, _) = walk_pages(&app, "/reminders", 2).await;
    assert_eq!(counts, [2, 1]);
}

#[tokio::test]
async fn a_due_reminder_fires_once_notifies_its_assignees_and_is_announced() {
    let (app, clock) = clocked(|s| {
        fast_webhooks(s);
        s.actor_idle = Duration::from_millis(50);
    })
    .await;
    let rx = TestReceiver::start().await;
    new_endpoint(&app, json!({"url": rx.url, "events": ["reminder.*"]})).await;
    let private = TestReceiver::start().await;
    new_endpoint(
        &app,
        json!({"url": private.url, "events": ["reminder.fired"], "include_content": true}),
    )
    .await;
    let (ann, ann_token) = plain_member(&app, "Ann").await;
    let me = owner(&app).await;
    let r = app
        .post("/reminders", json!({"title": "Call Ann back", "note": "she asked twice", "due_at": in_minutes(&clock, 30),
                   "assignee_user_ids": [ann, me]}))
        .await
        .created();
    let path = format!("/reminders/{}", r["id"]);

    clock.advance(29 * MINUTE);
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(app.get(&path).await.body["status"], "open", "not early");

    // The workspace has passivated meanwhile (50 ms idle): the timer wakes it.
    clock.advance(2 * MINUTE);
    eventually("the reminder fires", async || {
        app.get(&path).await.body["status"] == "fired"
    })
    .await;
    let fired = app.get(&path).await.body;
    assert!(fired["fired_at"].is_string());

    let mine = listed(app.get_as(&ann_token, "/notifications").await.expect(200));
    assert_eq!(mine.len(), 1);
    assert_fields(
        &mine[0],
        "object id user_id kind reminder_id endpoint_id reason created_at",
    );
    assert_eq!(
        (&mine[0]["endpoint_id"], &mine[0]["reason"]),
        (&Value::Null, &Value::Null)
    );
    assert_eq!(mine[0]["object"], "notification");
    assert_eq!(mine[0]["kind"], "reminder_fired");
    assert_eq!(mine[0]["user_id"], ann);
    assert_eq!(mine[0]["reminder_id"], r["id"]);
    let owners = listed(app.get("/notifications").await.expect(200));
    assert_eq!(owners.len(), 1, "an API key reads the owner's");
    assert_eq!(owners[0]["user_id"], me);

    rx.wait_for(2).await;
    assert_eq!(rx.event_types(), ["reminder.created", "reminder.fired"]);
    let data = &rx.of_type("reminder.fired")[0].json()["data"];
    assert_eq!(data["status"], "fired");
    assert!(
        data.get("title").is_none() && data.get("note").is_none(),
        "{data}"
    );
    let shown = private.wait_for(1).await[0].json();
    assert_eq!(shown["data"]["title"], "Call Ann back");
    assert_eq!(shown["data"]["note"], "she asked twice");

    clock.advance(120 * MINUTE);
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(
        listed(app.get_as(&ann_token, "/notifications").await).len(),
        1,
        "once"
    );

    // A new due time re-arms it.
    let rearmed = app
        .patch(&path, json!({"due_at": in_minutes(&clock, 10)}))
        .await
        .ok();
    assert_eq!(rearmed["status"], "open");
    assert_eq!(rearmed["fired_at"], Value::Null);
    clock.advance(11 * MINUTE);
    eventually("the re-armed reminder fires", async || {
        listed(app.get_as(&ann_token, "/notifications").await).len() == 2
    })
    .await;

    let closed = app.post(&format!("{path}/close"), json!({})).await.ok();
    assert_eq!(closed["status"], "done");
    assert!(closed["closed_at"].is_string());
    conflict(app.post(&format!("{path}/close"), json!({})).await);
    rx.wait_for(4).await;
    assert_eq!(
        rx.event_types(),
        [
            "reminder.closed",
            "reminder.created",
            "reminder.fired",
            "reminder.fired"
        ]
    );
}

#[tokio::test]
async fn closed_edited_or_deleted_reminders_do_not_fire_at_their_old_time() {
    let (app, clock) = clocked(|_| {}).await;
    let me = owner(&app).await;
    let new = |title: &str| json!({"title": title, "due_at": in_minutes(&clock, 10), "assignee_user_ids": [me]});
    let closed = app.post("/reminders", new("closed")).await.created();
    let deleted = app.post("/reminders", new("deleted")).await.created();
    let moved = app.post("/reminders", new("moved")).await.created();
    app.post(&format!("/reminders/{}/close", closed["id"]), json!({}))
        .await
        .expect(200);
    app.delete(&format!("/reminders/{}", deleted["id"]))
        .await
        .expect(200);
    app.patch(
        &format!("/reminders/{}", moved["id"]),
        json!({"due_at": in_minutes(&clock, 60)}),
    )
    .await
    .expect(200);
    clock.advance(20 * MINUTE);
    tokio::time::sleep(Duration::from_millis(600)).await;
    assert!(listed(app.get("/notifications").await).is_empty());
    let moved_now = app.get(&format!("/reminders/{}", moved["id"])).await.body;
    assert_eq!(moved_now["status"], "open");
    clock.advance(45 * MINUTE);
    eventually("the moved reminder fires", async || {
        list_len(&app, "/notifications").await == 1
    })
    .await;
}

#[tokio::test]
async fn a_reminder_armed_before_kill_9_fires_once_after_the_restart() {
    let dir = tempfile::tempdir().unwrap();
    let mut server = launch(dir.path(), &[], &[]).await;
    let key = server.key.clone().unwrap();
    let users = server.get_json(&key, "/users").await;
    let me = users["data"][0]["id"].clone();
    let due = (chrono::Utc::now() + chrono::Duration::seconds(2)).to_rfc3339();
    let r = server
        .post_json(
            &key,
            "/reminders",
            json!({"title": "After the crash", "due_at": due, "assignee_user_ids": [me]}),
        )
        .await;
    server.kill_9().await;

    let server = launch(dir.path(), &[], &[]).await;
    let path = format!("/reminders/{}", r["id"]);
    for _ in 0..250 {
        if server.get_json(&key, &path).await["status"] == "fired" {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(server.get_json(&key, &path).await["status"], "fired");
    tokio::time::sleep(Duration::from_millis(800)).await;
    let notes = server.get_json(&key, "/notifications").await;
    assert_eq!(notes["data"].as_array().unwrap().len(), 1, "exactly once");
}
