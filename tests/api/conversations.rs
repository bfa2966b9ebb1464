//! Conversations over HTTP: create, list and filter, close and reopen, assignee, AI pause
//! and resume, team replies, comments, feedback, handovers, and contact merges.

use reqwest::Method;
use serde_json::{json, Value};

use crate::helpers::*;

async fn contact(app: &TestApp, name: &str) -> u64 {
    app.post("/contacts", &app.key, json!({"first_name": name}))
        .await
        .expect(201)
        .body["id"]
        .as_u64()
        .unwrap()
}

async fn conversation(app: &TestApp, contact: u64, channel: &str) -> Value {
    app.post(
        "/conversations",
        &app.key,
        json!({"contact_id": contact, "channel": channel}),
    )
    .await
    .expect(201)
    .body
}

fn id(v: &Value) -> u64 {
    v["id"].as_u64().unwrap()
}

#[tokio::test]
async fn a_conversation_is_created_open_with_every_field() {
    let app = spawn_app().await;
    let c = contact(&app, "Ann").await;
    let conv = conversation(&app, c, "chan_a").await;
    assert_fields(
        &conv,
        "object id contact_id channel status assigned_to_user_id ai_paused ai_paused_reason \
         closing_note_id closing_note_text closed_by message_count last_message_at created_at \
         updated_at closed_at",
    );
    assert_eq!(conv["object"], "conversation");
    assert_eq!(conv["status"], "open");
    assert_eq!(conv["contact_id"], c);
    assert_eq!(conv["ai_paused"], false);
    assert_eq!(conv["message_count"], 0);
    utc(&conv["created_at"]);

    let got = app
        .get(&format!("/conversations/{}", id(&conv)), &app.key)
        .await;
    assert_eq!(got.expect(200).body, conv);
}

#[tokio::test]
async fn a_first_message_is_sent_by_the_team_with_the_conversation() {
    let app = spawn_app().await;
    let c = contact(&app, "Ann").await;
    let conv = app
        .post(
            "/conversations",
            &app.key,
            json!({"contact_id": c, "channel": "api", "text": "Hello Ann"}),
        )
        .await
        .expect(201)
        .body;
    assert_eq!(conv["message_count"], 1);
    let messages = listed(
        app.get(&format!("/conversations/{}/messages", id(&conv)), &app.key)
            .await,
    );
    assert_eq!(messages.len(), 1);
    let m = &messages[0];
    assert_fields(
        m,
        "object id conversation_id contact_id direction sender_type sender_user_id text \
         attachments status external_id error created_at",
    );
    assert_eq!(
        (&m["direction"], &m["sender_type"], &m["status"], &m["text"]),
        (
            &json!("outbound"),
            &json!("team"),
            &json!("sent"),
            &json!("Hello Ann")
        )
    );
    assert_eq!(
        m["sender_user_id"],
        Value::Null,
        "API keys send as no person"
    );
}

#[tokio::test]
async fn creating_refuses_unknown_contacts_bad_channels_and_empty_text() {
    let app = spawn_app().await;
    let c = contact(&app, "Ann").await;
    let unknown = app
        .post(
            "/conversations",
            &app.key,
            json!({"contact_id": 999_999, "channel": "api"}),
        )
        .await
        .expect_error(404, "not_found");
    assert!(
        unknown.body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("contact_id"),
        "the message names the field: {}",
        unknown.body
    );
    let (_, other_key) = app.new_workspace("Other").await;
    let foreign = app
        .post("/contacts", &other_key, json!({"first_name": "Zed"}))
        .await
        .expect(201)
        .body["id"]
        .as_u64()
        .unwrap();
    not_found(
        app.post(
            "/conversations",
            &app.key,
            json!({"contact_id": foreign, "channel": "api"}),
        )
        .await,
    );
    refusals(
        &app,
        Method::POST,
        "/conversations",
        vec![
            (json!({"contact_id": c, "channel": "fax"}), "channel"),
            (
                json!({"contact_id": c, "channel": "api", "text": ""}),
                "text",
            ),
            (
                json!({"contact_id": c, "channel": "api", "text": "x".repeat(10_001)}),
                "text",
            ),
            (
                json!({"contact_id": c, "channel": "api", "color": 1}),
                "color",
            ),
            (json!({"channel": "api"}), "contact_id"),
        ],
    )
    .await;
}

#[tokio::test]
async fn the_inbox_permission_is_required() {
    let app = spawn_app().await;
    let c = contact(&app, "Ann").await;
    let conv = conversation(&app, c, "api").await;
    let without = app.member_token("member", &["contacts"]).await;
    for (method, path) in [
        (Method::GET, "/conversations".to_string()),
        (Method::GET, format!("/conversations/{}", id(&conv))),
        (Method::POST, format!("/conversations/{}/close", id(&conv))),
        (Method::GET, "/handovers".to_string()),
    ] {
        app.call(method, &path)
            .token(&without)
            .json(json!({}))
            .send()
            .await
            .expect_error(403, "insufficient_permissions");
    }
    let with = app.member_token("member", &["inbox"]).await;
    app.get("/conversations", &with).await.expect(200);
}

#[tokio::test]
async fn lists_filter_and_page_newest_first() {
    let app = spawn_app().await;
    let (ann, bob) = (contact(&app, "Ann").await, contact(&app, "Bob").await);
    let a1 = conversation(&app, ann, "api").await;
    let b1 = conversation(&app, bob, "sms").await;
    let a2 = conversation(&app, ann, "sms").await;
    app.post(
        &format!("/conversations/{}/close", id(&a1)),
        &app.key,
        json!({}),
    )
    .await
    .expect(200);

    let all = listed(app.get("/conversations", &app.key).await);
    let ids: Vec<u64> = all.iter().map(id).collect();
    assert_eq!(ids, [id(&a2), id(&b1), id(&a1)]);

    let page = app
        .get("/conversations?limit=2", &app.key)
        .await
        .expect(200)
        .body;
    assert_eq!(page["has_more"], true);
    let cursor = page["next_cursor"].as_str().unwrap();
    let rest = listed(
        app.get(
            &format!("/conversations?limit=2&starting_after={cursor}"),
            &app.key,
        )
        .await,
    );
    assert_eq!(rest.iter().map(id).collect::<Vec<_>>(), [id(&a1)]);

    let of = |q: &str| {
        let app = &app;
        let q = q.to_string();
        async move {
            listed(app.get(&format!("/conversations?{q}"), &app.key).await)
                .iter()
                .map(id)
                .collect::<Vec<_>>()
        }
    };
    assert_eq!(of(&format!("contact_id={ann}")).await, [id(&a2), id(&a1)]);
    assert_eq!(of("channel=sms").await, [id(&a2), id(&b1)]);
    assert_eq!(of("status=closed").await, [id(&a1)]);
    assert_eq!(of("status=open&channel=sms").await, [id(&a2), id(&b1)]);
    assert_eq!(of("ai_paused=true").await, Vec::<u64>::new());
    invalid(
        app.get("/conversations?status=maybe", &app.key).await,
        "status",
    );
    invalid(
        app.get("/conversations?channel=fax", &app.key).await,
        "channel",
    );
}

#[tokio::test]
async fn closing_records_the_note_and_who_closed_and_reopening_clears_it() {
    let app = spawn_app().await;
    let c = contact(&app, "Ann").await;
    let conv = conversation(&app, c, "api").await;
    let note = app
        .post("/closing-notes", &app.key, json!({"name": "Resolved"}))
        .await
        .expect(201)
        .body;
    let path = format!("/conversations/{}", id(&conv));
    not_found(
        app.post(
            &format!("{path}/close"),
            &app.key,
            json!({"closing_note_id": 999_999}),
        )
        .await,
    );
    invalid(
        app.post(
            &format!("{path}/close"),
            &app.key,
            json!({"closing_note_text": "x".repeat(2_001)}),
        )
        .await,
        "closing_note_text",
    );
    let closed = app
        .post(
            &format!("{path}/close"),
            &app.key,
            json!({"closing_note_id": id(&note), "closing_note_text": "shipped"}),
        )
        .await
        .expect(200)
        .body;
    assert_eq!(closed["status"], "closed");
    assert_eq!(closed["closed_by"], "api");
    assert_eq!(closed["closing_note_id"], id(&note));
    assert_eq!(closed["closing_note_text"], "shipped");
    utc(&closed["closed_at"]);
    app.post(&format!("{path}/close"), &app.key, json!({}))
        .await
        .expect_error(409, "conflict");

    let open = app
        .post(&format!("{path}/reopen"), &app.key, json!({}))
        .await
        .expect(200)
        .body;
    assert_eq!(open["status"], "open");
    assert_eq!(
        (
            &open["closed_by"],
            &open["closed_at"],
            &open["closing_note_text"]
        ),
        (&Value::Null, &Value::Null, &Value::Null)
    );
    app.post(&format!("{path}/reopen"), &app.key, json!({}))
        .await
        .expect_error(409, "conflict");

    let person = app.member_token("member", &["inbox"]).await;
    let by_person = app
        .post(&format!("{path}/close"), &person, json!({}))
        .await
        .expect(200)
        .body;
    assert_eq!(by_person["closed_by"], "team");
}

#[tokio::test]
async fn only_members_can_be_assigned_and_null_unassigns() {
    let app = spawn_app().await;
    let c = contact(&app, "Ann").await;
    let path = format!(
        "/conversations/{}/assignee",
        id(&conversation(&app, c, "api").await)
    );
    let member = app.new_user("Mia Member").await;
    app.add_member(&app.workspace_id, &member, "member", &["inbox"])
        .await;
    let outsider = app.new_user("Otto Outsider").await;

    invalid(
        app.put(&path, &app.key, json!({"user_id": outsider})).await,
        "user_id",
    );
    invalid(
        app.put(&path, &app.key, json!({"user_id": "nobody"})).await,
        "user_id",
    );
    let assigned = app
        .put(&path, &app.key, json!({"user_id": member}))
        .await
        .expect(200);
    assert_eq!(assigned.body["assigned_to_user_id"], member.as_str());
    let filtered = listed(
        app.get(
            &format!("/conversations?assigned_to_user_id={member}"),
            &app.key,
        )
        .await,
    );
    assert_eq!(filtered.len(), 1);
    let cleared = app
        .put(&path, &app.key, json!({"user_id": null}))
        .await
        .expect(200);
    assert_eq!(cleared.body["assigned_to_user_id"], Value::Null);
}

#[tokio::test]
async fn the_ai_pauses_and_resumes_once_each() {
    let app = spawn_app().await;
    let c = contact(&app, "Ann").await;
    let path = format!(
        "/conversations/{}/ai",
        id(&conversation(&app, c, "api").await)
    );
    let paused = app
        .post(&format!("{path}/pause"), &app.key, json!({}))
        .await
        .expect(200);
    assert_eq!(paused.body["ai_paused"], true);
    assert_eq!(paused.body["ai_paused_reason"], "api", "the default reason");
    app.post(
        &format!("{path}/pause"),
        &app.key,
        json!({"reason": "spam"}),
    )
    .await
    .expect_error(409, "conflict");
    let resumed = app
        .post(&format!("{path}/resume"), &app.key, json!({}))
        .await
        .expect(200);
    assert_eq!(
        (
            &resumed.body["ai_paused"],
            &resumed.body["ai_paused_reason"]
        ),
        (&json!(false), &Value::Null)
    );
    app.post(&format!("{path}/resume"), &app.key, json!({}))
        .await
        .expect_error(409, "conflict");
    let spam = app
        .post(
            &format!("{path}/pause"),
            &app.key,
            json!({"reason": "spam"}),
        )
        .await
        .expect(200);
    assert_eq!(spam.body["ai_paused_reason"], "spam");
    let other = format!(
        "/conversations/{}/ai",
        id(&conversation(&app, c, "sms").await)
    );
    invalid(
        app.post(
            &format!("{other}/pause"),
            &app.key,
            json!({"reason": "bored"}),
        )
        .await,
        "reason",
    );
}

#[tokio::test]
async fn a_team_reply_reopens_takes_over_from_the_ai_and_keeps_an_earlier_pause_reason() {
    let app = spawn_app().await;
    let c = contact(&app, "Ann").await;
    let conv = conversation(&app, c, "api").await;
    let path = format!("/conversations/{}", id(&conv));
    app.post(&format!("{path}/close"), &app.key, json!({}))
        .await
        .expect(200);

    let person = app.member_token("member", &["inbox"]).await;
    let reply = app
        .post(
            &format!("{path}/messages"),
            &person,
            json!({"text": "We are on it"}),
        )
        .await
        .expect(201)
        .body;
    assert_eq!(reply["object"], "message");
    assert_eq!(reply["sender_type"], "team");
    assert!(reply["sender_user_id"]
        .as_str()
        .unwrap()
        .starts_with("usr_"));
    assert_eq!(reply["status"], "sent");
    let after = app.get(&path, &app.key).await.expect(200).body;
    assert_eq!(after["status"], "open", "a reply reopens");
    assert_eq!(after["ai_paused_reason"], "takeover");
    assert_eq!(after["message_count"], 1);
    assert_eq!(after["last_message_at"], reply["created_at"]);

    app.post(&format!("{path}/ai/resume"), &app.key, json!({}))
        .await
        .expect(200);
    app.post(
        &format!("{path}/ai/pause"),
        &app.key,
        json!({"reason": "schedule"}),
    )
    .await
    .expect(200);
    app.post(
        &format!("{path}/messages"),
        &app.key,
        json!({"text": "Again"}),
    )
    .await
    .expect(201);
    let after = app.get(&path, &app.key).await.expect(200).body;
    assert_eq!(
        after["ai_paused_reason"], "schedule",
        "an earlier pause keeps its reason"
    );
}

#[tokio::test]
async fn closing_lifts_a_takeover_pause_but_not_a_spam_pause() {
    let app = spawn_app().await;
    let c = contact(&app, "Ann").await;
    let taken = format!("/conversations/{}", id(&conversation(&app, c, "api").await));
    app.post(
        &format!("{taken}/messages"),
        &app.key,
        json!({"text": "hi"}),
    )
    .await
    .expect(201);
    let closed = app
        .post(&format!("{taken}/close"), &app.key, json!({}))
        .await
        .expect(200);
    assert_eq!(closed.body["ai_paused"], false);

    let spam = format!("/conversations/{}", id(&conversation(&app, c, "sms").await));
    app.post(
        &format!("{spam}/ai/pause"),
        &app.key,
        json!({"reason": "spam"}),
    )
    .await
    .expect(200);
    let closed = app
        .post(&format!("{spam}/close"), &app.key, json!({}))
        .await
        .expect(200);
    assert_eq!(closed.body["ai_paused_reason"], "spam");
}

#[tokio::test]
async fn replies_need_text_or_attachments_and_attachments_must_be_https() {
    let app = spawn_app().await;
    let c = contact(&app, "Ann").await;
    let path = format!(
        "/conversations/{}/messages",
        id(&conversation(&app, c, "api").await)
    );
    refusals(
        &app,
        Method::POST,
        &path,
        vec![
            (json!({}), "text"),
            (json!({"text": "  "}), "text"),
            (
                json!({"attachments": [{"url": "http://x.example/a.png", "type": "image"}]}),
                "attachments[0].url",
            ),
            (
                json!({"attachments": [{"url": "https://x.example/a", "type": "gif"}]}),
                "attachments[0].type",
            ),
        ],
    )
    .await;
    let only_file = app
        .post(
            &path,
            &app.key,
            json!({"attachments": [{"url": "https://x.example/a.pdf", "type": "document", "name": "a.pdf"}]}),
        )
        .await
        .expect(201)
        .body;
    assert_eq!(only_file["text"], "");
    assert_eq!(only_file["attachments"][0]["type"], "document");
    not_found(
        app.post(
            "/conversations/999999/messages",
            &app.key,
            json!({"text": "x"}),
        )
        .await,
    );
}

#[tokio::test]
async fn messages_page_newest_first() {
    let app = spawn_app().await;
    let c = contact(&app, "Ann").await;
    let path = format!(
        "/conversations/{}/messages",
        id(&conversation(&app, c, "api").await)
    );
    let mut sent = Vec::new();
    for i in 0..5 {
        sent.push(id(&app
            .post(&path, &app.key, json!({"text": format!("m{i}")}))
            .await
            .expect(201)
            .body));
    }
    let first = app
        .get(&format!("{path}?limit=3"), &app.key)
        .await
        .expect(200)
        .body;
    let got: Vec<u64> = first["data"].as_array().unwrap().iter().map(id).collect();
    assert_eq!(got, [sent[4], sent[3], sent[2]]);
    let cursor = first["next_cursor"].as_str().unwrap();
    let rest = listed(
        app.get(&format!("{path}?limit=3&starting_after={cursor}"), &app.key)
            .await,
    );
    assert_eq!(rest.iter().map(id).collect::<Vec<_>>(), [sent[1], sent[0]]);
}

#[tokio::test]
async fn comments_are_internal_notes_listed_newest_first() {
    let app = spawn_app().await;
    let c = contact(&app, "Ann").await;
    let path = format!(
        "/conversations/{}/comments",
        id(&conversation(&app, c, "api").await)
    );
    let person = app.member_token("member", &["inbox"]).await;
    let first = app
        .post(&path, &person, json!({"body": "call her back"}))
        .await
        .expect(201)
        .body;
    assert_fields(
        &first,
        "object id conversation_id author_user_id body created_at",
    );
    assert_eq!(first["object"], "comment");
    assert!(first["author_user_id"]
        .as_str()
        .unwrap()
        .starts_with("usr_"));
    let second = app
        .post(&path, &app.key, json!({"body": "done"}))
        .await
        .expect(201)
        .body;
    assert_eq!(second["author_user_id"], Value::Null);
    let all = listed(app.get(&path, &app.key).await);
    assert_eq!(
        all.iter().map(id).collect::<Vec<_>>(),
        [id(&second), id(&first)]
    );
    invalid(app.post(&path, &app.key, json!({"body": ""})).await, "body");
    invalid(
        app.post(&path, &app.key, json!({"body": "x".repeat(10_001)}))
            .await,
        "body",
    );
}

#[tokio::test]
async fn feedback_is_only_taken_on_ai_messages() {
    let app = spawn_app().await;
    let c = contact(&app, "Ann").await;
    let conv = id(&conversation(&app, c, "api").await);
    let team = id(&app
        .post(
            &format!("/conversations/{conv}/messages"),
            &app.key,
            json!({"text": "hi"}),
        )
        .await
        .expect(201)
        .body);
    invalid(
        app.post(
            &format!("/conversations/{conv}/messages/{team}/feedback"),
            &app.key,
            json!({"rating": "up"}),
        )
        .await,
        "message_id",
    );
    not_found(
        app.post(
            &format!("/conversations/{conv}/messages/999999/feedback"),
            &app.key,
            json!({"rating": "up"}),
        )
        .await,
    );
    invalid(
        app.post(
            &format!("/conversations/{conv}/messages/{team}/feedback"),
            &app.key,
            json!({"rating": "sideways"}),
        )
        .await,
        "rating",
    );
}

#[tokio::test]
async fn handovers_list_empty_and_unknown_ones_are_not_found() {
    let app = spawn_app().await;
    let list = app.get("/handovers", &app.key).await.expect(200).body;
    assert_eq!(list["data"], json!([]));
    invalid(app.get("/handovers?status=lost", &app.key).await, "status");
    not_found(
        app.post("/handovers/999999/resolve", &app.key, json!({}))
            .await,
    );
}

#[tokio::test]
async fn a_contact_merge_moves_conversations_to_the_primary() {
    let app = spawn_app().await;
    let (primary, secondary) = (contact(&app, "Ann").await, contact(&app, "Annie").await);
    let conv = conversation(&app, secondary, "api").await;
    app.post(
        &format!("/conversations/{}/messages", id(&conv)),
        &app.key,
        json!({"text": "hi"}),
    )
    .await
    .expect(201);
    app.post(
        "/contacts/merge",
        &app.key,
        json!({"primary_contact_id": primary, "secondary_contact_id": secondary}),
    )
    .await
    .expect(200);
    let moved = app
        .get(&format!("/conversations/{}", id(&conv)), &app.key)
        .await
        .expect(200);
    assert_eq!(moved.body["contact_id"], primary);
    let of_primary = listed(
        app.get(&format!("/conversations?contact_id={primary}"), &app.key)
            .await,
    );
    assert_eq!(of_primary.len(), 1);
    let messages = listed(
        app.get(&format!("/conversations/{}/messages", id(&conv)), &app.key)
            .await,
    );
    assert_eq!(messages[0]["contact_id"], primary);
}

#[tokio::test]
async fn conversations_and_messages_survive_a_restart() {
    let app = spawn_app().await;
    let c = contact(&app, "Ann").await;
    let conv = conversation(&app, c, "api").await;
    let path = format!("/conversations/{}", id(&conv));
    app.post(
        &format!("{path}/messages"),
        &app.key,
        json!({"text": "kept"}),
    )
    .await
    .expect(201);
    let before = app.get(&path, &app.key).await.expect(200).body;
    let app = app.restart().await;
    assert_eq!(app.get(&path, &app.key).await.expect(200).body, before);
    let messages = listed(app.get(&format!("{path}/messages"), &app.key).await);
    assert_eq!(messages[0]["text"], "kept");
}

// ----- Events at a real receiver -----

mod events {
    use serde_json::json;

    use super::{contact, conversation, id};
    use crate::receiver::TestReceiver;
    use crate::webhooks::{new_endpoint, spawn_webhook_app};

    const TYPES: [&str; 4] = [
        "conversation.*",
        "handover.*",
        "message.sent",
        "message_feedback.*",
    ];

    #[tokio::test]
    async fn every_conversation_operation_announces_itself_and_withholds_content_by_default() {
        let app = spawn_webhook_app().await;
        let rx = TestReceiver::start().await;
        new_endpoint(&app, json!({"url": rx.url, "events": TYPES})).await;
        let c = contact(&app, "Ann").await;
        let conv = app
            .post(
                "/conversations",
                &app.key,
                json!({"contact_id": c, "channel": "sms", "text": "Hello"}),
            )
            .await
            .expect(201)
            .body;
        let path = format!("/conversations/{}", id(&conv));
        app.post(
            &format!("{path}/comments"),
            &app.key,
            json!({"body": "secret note"}),
        )
        .await
        .expect(201);
        app.post(
            &format!("{path}/close"),
            &app.key,
            json!({"closing_note_text": "refunded"}),
        )
        .await
        .expect(200);
        app.post(
            &format!("{path}/messages"),
            &app.key,
            json!({"text": "one more thing"}),
        )
        .await
        .expect(201);

        let got = rx.wait_for(7).await;
        let mut types: Vec<String> = got.iter().map(|r| r.event_type().to_string()).collect();
        // Deliveries to one endpoint may arrive out of order (several are in flight).
        types.sort();
        assert_eq!(
            types,
            [
                "conversation.ai_paused",
                "conversation.closed",
                "conversation.comment_created",
                "conversation.created",
                "conversation.reopened",
                "message.sent",
                "message.sent",
            ]
        );
        let of_type = |t: &str| got.iter().find(|r| r.event_type() == t).unwrap().json();
        let sent = of_type("message.sent");
        assert_eq!(
            sent["data"]["channel"], "sms",
            "message events carry the channel"
        );
        assert_eq!(sent["resource"]["type"], "message");
        let closed = of_type("conversation.closed");
        assert_eq!(closed["data"]["closed_by"], "api");
        assert_eq!(closed["changes"], serde_json::Value::Null);
    }

    #[tokio::test]
    async fn content_arrives_with_include_content_and_message_sent_only_when_named() {
        let app = spawn_webhook_app().await;
        let (rx, wildcard) = (TestReceiver::start().await, TestReceiver::start().await);
        new_endpoint(
            &app,
            json!({"url": rx.url, "events": TYPES, "include_content": true}),
        )
        .await;
        new_endpoint(&app, json!({"url": wildcard.url, "events": ["*"]})).await;
        let c = contact(&app, "Ann").await;
        let conv = conversation(&app, c, "api").await;
        let path = format!("/conversations/{}", id(&conv));
        app.post(
            &format!("{path}/messages"),
            &app.key,
            json!({"text": "visible"}),
        )
        .await
        .expect(201);
        app.post(
            &format!("{path}/close"),
            &app.key,
            json!({"closing_note_text": "done"}),
        )
        .await
        .expect(200);

        let got = rx.wait_for(5).await;
        let sent = got
            .iter()
            .find(|r| r.event_type() == "message.sent")
            .unwrap()
            .json();
        assert_eq!(sent["data"]["text"], "visible");
        let closed = got
            .iter()
            .find(|r| r.event_type() == "conversation.closed")
            .unwrap()
            .json();
        assert_eq!(closed["data"]["closing_note_text"], "done");

        let all = wildcard.wait_for(5).await;
        assert!(
            all.iter().all(|r| r.event_type() != "message.sent"),
            "wildcards never include message.sent"
        );
    }
}

#[tokio::test]
async fn the_openapi_document_lists_the_messaging_routes() {
    let app = spawn_app().await;
    let doc: Value = app
        .client
        .get(format!("{}/api/v1/openapi.json", app.api))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let paths = doc["paths"].as_object().unwrap();
    for (path, method) in [
        ("/conversations", "get"),
        ("/conversations", "post"),
        ("/conversations/{id}", "get"),
        ("/conversations/{id}/close", "post"),
        ("/conversations/{id}/reopen", "post"),
        ("/conversations/{id}/assignee", "put"),
        ("/conversations/{id}/ai/pause", "post"),
        ("/conversations/{id}/ai/resume", "post"),
        ("/conversations/{id}/messages", "get"),
        ("/conversations/{id}/messages", "post"),
        ("/conversations/{id}/comments", "get"),
        ("/conversations/{id}/comments", "post"),
        ("/conversations/{id}/messages/{message_id}/feedback", "post"),
        ("/handovers", "get"),
        ("/handovers/{id}/resolve", "post"),
        ("/users", "get"),
        ("/users/{id}", "get"),
        ("/messages", "post"),
        ("/chat", "post"),
        ("/ai-settings", "get"),
        ("/ai-settings", "patch"),
    ] {
        assert!(
            paths.get(path).and_then(|p| p.get(method)).is_some(),
            "{method} {path} is missing from the OpenAPI document"
        );
    }
    let schemas = &doc["components"]["schemas"];
    for (schema, kind) in [
        ("Conversation", "conversation"),
        ("Message", "message"),
        ("Handover", "handover"),
        ("ContactView", "contact"),
        ("UserView", "user"),
        ("Tag", "tag"),
    ] {
        let object = &schemas[schema]["properties"]["object"];
        assert_eq!(object["enum"], json!([kind]), "{schema}: {object}");
        assert!(
            schemas[schema]["required"]
                .as_array()
                .is_some_and(|r| r.contains(&json!("object"))),
            "{schema} requires object"
        );
    }
    assert_eq!(
        schemas["ListEnvelope_Conversation"]["properties"]["data"]["items"]["$ref"],
        "#/components/schemas/Conversation"
    );
}

#[tokio::test]
async fn assignment_pauses_resolutions_and_feedback_are_announced() {
    use crate::receiver::TestReceiver;
    use crate::webhooks::{new_endpoint, spawn_webhook_app};

    let app = spawn_webhook_app().await;
    let rx = TestReceiver::start().await;
    new_endpoint(
        &app,
        json!({"url": rx.url, "events": ["conversation.assigned", "conversation.ai_resumed",
            "handover.resolved", "message_feedback.submitted"]}),
    )
    .await;
    let member = app.new_user("Mia Member").await;
    app.add_member(&app.workspace_id, &member, "member", &["inbox"])
        .await;
    let r = app
        .post(
            "/chat",
            &app.key,
            json!({"message": "a human please", "contact": {"phone": "+15550100"}}),
        )
        .await;
    let conversation = r.body["conversationId"].as_u64().unwrap();
    let reply = r.body["reply"]["messageId"].as_u64().unwrap();
    let path = format!("/conversations/{conversation}");
    app.put(
        &format!("{path}/assignee"),
        &app.key,
        json!({"user_id": member}),
    )
    .await
    .expect(200);
    app.post(&format!("{path}/ai/resume"), &app.key, json!({}))
        .await
        .expect(200);
    let handover = listed(app.get("/handovers", &app.key).await)[0]["id"]
        .as_u64()
        .unwrap();
    app.post(
        &format!("/handovers/{handover}/resolve"),
        &app.key,
        json!({}),
    )
    .await
    .expect(200);
    app.post(
        &format!("/handovers/{handover}/resolve"),
        &app.key,
        json!({}),
    )
    .await
    .expect_error(409, "conflict");
    app.post(
        &format!("{path}/messages/{reply}/feedback"),
        &app.key,
        json!({"rating": "down", "comment": "too curt"}),
    )
    .await
    .expect(201);

    let got = rx.wait_for(4).await;
    let mut types: Vec<&str> = got.iter().map(|r| r.event_type()).collect();
    types.sort();
    assert_eq!(
        types,
        [
            "conversation.ai_resumed",
            "conversation.assigned",
            "handover.resolved",
            "message_feedback.submitted"
        ]
    );
    let of_type = |t: &str| got.iter().find(|r| r.event_type() == t).unwrap().json();
    let assigned = of_type("conversation.assigned");
    assert_eq!(assigned["data"]["assigned_to_user_id"], member.as_str());
    assert_eq!(assigned["changes"]["assigned_to_user_id"], Value::Null);
    let resolved = of_type("handover.resolved");
    assert!(
        resolved["data"].get("summary").is_none(),
        "a summary is content"
    );
    assert!(
        resolved["data"].get("customer_phone").is_none(),
        "a phone is a contact detail"
    );
    let feedback = of_type("message_feedback.submitted");
    assert_eq!(feedback["data"]["rating"], "down");
    assert!(
        feedback["data"].get("comment").is_none(),
        "a comment is content"
    );
}
