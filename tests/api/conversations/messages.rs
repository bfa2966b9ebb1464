use super::*;

#[tokio::test]
async fn a_team_reply_reopens_takes_over_from_the_ai_and_keeps_an_earlier_pause_reason() {
    let app = spawn_app().await;
    let path = anns_conversation(&app, "api").await;
    app.post(&format!("{path}/close"), json!({}))
        .await
        .expect(200);

    let person = app.member_token("member", &["inbox"]).await;
    let reply = app
        .post_as(
            &person,
            &format!("{path}/messages"),
            json!({"text": "We are on it"}),
        )
        .await
        .created();
    assert_eq!(reply["object"], "message");
    assert_eq!(reply["sender_type"], "team");
    assert!(reply["sender_user_id"]
        .as_str()
        .unwrap()
        .starts_with("usr_"));
    assert_eq!(reply["status"], "sent");
    let after = app.get(&path).await.ok();
    assert_eq!(after["status"], "open", "a reply reopens");
    assert_eq!(after["ai_paused_reason"], "takeover");
    assert_eq!(after["message_count"], 1);
    assert_eq!(after["last_message_at"], reply["created_at"]);

    app.post(&format!("{path}/ai/resume"), json!({}))
        .await
        .expect(200);
    app.post(&format!("{path}/ai/pause"), json!({"reason": "schedule"}))
        .await
        .expect(200);
    app.post(&format!("{path}/messages"), json!({"text": "Again"}))
        .await
        .expect(201);
    let after = app.get(&path).await.ok();
    assert_eq!(
        after["ai_paused_reason"], "schedule",
        "an earlier pause keeps its reason"
    );
}

#[tokio::test]
async fn closing_lifts_a_takeover_pause_but_not_a_spam_pause() {
    let app = spawn_app().await;
    let c = contact_named(&app, "Ann").await;
    let taken = format!(
        "/conversations/{}",
        id(&new_conversation(&app, c, "api").await)
    );
    app.post(&format!("{taken}/messages"), json!({"text": "hi"}))
        .await
        .expect(201);
    let closed = app
        .post(&format!("{taken}/close"), json!({}))
        .await
        .expect(200);
    assert_eq!(closed.body["ai_paused"], false);

    let spam = format!(
        "/conversations/{}",
        id(&new_conversation(&app, c, "sms").await)
    );
    app.post(&format!("{spam}/ai/pause"), json!({"reason": "spam"}))
        .await
        .expect(200);
    let closed = app
        .post(&format!("{spam}/close"), json!({}))
        .await
        .expect(200);
    assert_eq!(closed.body["ai_paused_reason"], "spam");
}

#[tokio::test]
async fn replies_need_text_or_attachments_and_attachments_must_be_https() {
    let app = spawn_app().await;
    let path = format!("{}/messages", anns_conversation(&app, "api").await);
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
        .post(&path, json!({"attachments": [{"url": "https://x.example/a.pdf", "type": "document", "name": "a.pdf"}]}))
        .await
        .created();
    assert_eq!(only_file["text"], "");
    assert_eq!(only_file["attachments"][0]["type"], "document");
    not_found(
        app.post("/conversations/999999/messages", json!({"text": "x"}))
            .await,
    );
}

#[tokio::test]
async fn messages_page_newest_first() {
    let app = spawn_app().await;
    let path = format!("{}/messages", anns_conversation(&app, "api").await);
    let mut sent = Vec::new();
    for i in 0..5 {
        sent.push(id(&app
            .post(&path, json!({"text": format!("m{i}")}))
            .await
            .created()));
    }
    let first = app.get(&format!("{path}?limit=3")).await.ok();
    let got: Vec<u64> = first["data"].as_array().unwrap().iter().map(id).collect();
    assert_eq!(got, [sent[4], sent[3], sent[2]]);
    let cursor = first["next_cursor"].as_str().unwrap();
    let rest = listed(
        app.get(&format!("{path}?limit=3&starting_after={cursor}"))
            .await,
    );
    assert_eq!(rest.iter().map(id).collect::<Vec<_>>(), [sent[1], sent[0]]);
}

#[tokio::test]
async fn comments_are_internal_notes_listed_newest_first() {
    let app = spawn_app().await;
    let path = format!("{}/comments", anns_conversation(&app, "api").await);
    let person = app.member_token("member", &["inbox"]).await;
    let first = app
        .post_as(&person, &path, json!({"body": "call her back"}))
        .await
        .created();
    assert_fields(
        &first,
        "object id conversation_id author_user_id body created_at",
    );
    assert_eq!(first["object"], "comment");
    assert!(first["author_user_id"]
        .as_str()
        .unwrap()
        .starts_with("usr_"));
    let second = app.post(&path, json!({"body": "done"})).await.created();
    assert_eq!(second["author_user_id"], Value::Null);
    let all = listed(app.get(&path).await);
    assert_eq!(
        all.iter().map(id).collect::<Vec<_>>(),
        [id(&second), id(&first)]
    );
    invalid(app.post(&path, json!({"body": ""})).await, "body");
    invalid(
        app.post(&path, json!({"body": "x".repeat(10_001)})).await,
        "body",
    );
}

#[tokio::test]
async fn feedback_is_only_taken_on_ai_messages() {
    let app = spawn_app().await;
    let c = contact_named(&app, "Ann").await;
    let conv = id(&new_conversation(&app, c, "api").await);
    let team = id(&app
        .post(
            &format!("/conversations/{conv}/messages"),
            json!({"text": "hi"}),
        )
        .await
        .created());
    invalid(
        app.post(
            &format!("/conversations/{conv}/messages/{team}/feedback"),
            json!({"rating": "up"}),
        )
        .await,
        "message_id",
    );
    not_found(
        app.post(
            &format!("/conversations/{conv}/messages/999999/feedback"),
            json!({"rating": "up"}),
        )
        .await,
    );
    invalid(
        app.post(
            &format!("/conversations/{conv}/messages/{team}/feedback"),
            json!({"rating": "sideways"}),
        )
        .await,
        "rating",
    );
}

#[tokio::test]
async fn handovers_list_empty_and_unknown_ones_are_not_found() {
    let app = spawn_app().await;
    let list = app.get("/handovers").await.ok();
    assert_eq!(list["data"], json!([]));
    invalid(app.get("/handovers?status=lost").await, "status");
    not_found(app.post("/handovers/999999/resolve", json!({})).await);
}

#[tokio::test]
async fn a_contact_merge_moves_conversations_to_the_primary() {
    let app = spawn_app().await;
    let (primary, secondary) = (
        contact_named(&app, "Ann").await,
        contact_named(&app, "Annie").await,
    );
    let conv = new_conversation(&app, secondary, "api").await;
    app.post(
        &format!("/conversations/{}/messages", id(&conv)),
        json!({"text": "hi"}),
    )
    .await
    .expect(201);
    app.post(
        "/contacts/merge",
        json!({"primary_contact_id": primary, "secondary_contact_id": secondary}),
    )
    .await
    .expect(200);
    let moved = app
        .get(&format!("/conversations/{}", id(&conv)))
        .await
        .expect(200);
    assert_eq!(moved.body["contact_id"], primary);
    let of_primary = listed(
        app.get(&format!("/conversations?contact_id={primary}"))
            .await,
    );
    assert_eq!(of_primary.len(), 1);
    let by_old_id = listed(
        app.get(&format!("/conversations?contact_id={secondary}"))
            .await,
    );
    assert_eq!(by_old_id, of_primary, "the filter follows the merge");
    let messages = listed(
        app.get(&format!("/conversations/{}/messages", id(&conv)))
            .await,
    );
    assert_eq!(messages[0]["contact_id"], primary);
}

#[tokio::test]
async fn conversations_and_messages_survive_a_restart() {
    let app = spawn_app().await;
    let path = anns_conversation(&app, "api").await;
    app.post(&format!("{path}/messages"), json!({"text": "kept"}))
        .await
        .expect(201);
    let before = app.get(&path).await.ok();
    let app = app.restart().await;
    assert_eq!(app.get(&path).await.ok(), before);
    let messages = listed(app.get(&format!("{path}/messages")).await);
    assert_eq!(messages[0]["text"], "kept");
}

#[tokio::test]
async fn the_openapi_document_lists_the_messaging_routes() {
    let app = spawn_app().await;
    let doc: Value = app.openapi().await;
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
            json!({"message": "a human please", "contact": {"phone": "+15550100"}}),
        )
        .await;
    let conversation = r.body["conversationId"].as_u64().unwrap();
    let reply = r.body["reply"]["messageId"].as_u64().unwrap();
    let path = format!("/conversations/{conversation}");
    app.put(&format!("{path}/assignee"), json!({"user_id": member}))
        .await
        .expect(200);
    app.post(&format!("{path}/ai/resume"), json!({}))
        .await
        .expect(200);
    let handover = listed(app.get("/handovers").await)[0]["id"]
        .as_u64()
        .unwrap();
    app.post(&format!("/handovers/{handover}/resolve"), json!({}))
        .await
        .expect(200);
    conflict(
        app.post(&format!("/handovers/{handover}/resolve"), json!({}))
            .await,
    );
    app.post(
        &format!("{path}/messages/{reply}/feedback"),
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
