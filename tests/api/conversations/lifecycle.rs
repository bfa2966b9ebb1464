use super::*;

#[tokio::test]
async fn a_conversation_is_created_open_with_every_field() {
    let app = spawn_app().await;
    let c = contact_named(&app, "Ann").await;
    let conv = new_conversation(&app, c, "chan_a").await;
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

    let got = app.get(&format!("/conversations/{}", id(&conv))).await;
    assert_eq!(got.ok(), conv);
}

#[tokio::test]
async fn a_first_message_is_sent_by_the_team_with_the_conversation() {
    let app = spawn_app().await;
    let c = contact_named(&app, "Ann").await;
    let conv = app
        .post(
            "/conversations",
            json!({"contact_id": c, "channel": "api", "text": "Hello Ann"}),
        )
        .await
        .created();
    assert_eq!(conv["message_count"], 1);
    let messages = listed(
        app.get(&format!("/conversations/{}/messages", id(&conv)))
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
    let c = contact_named(&app, "Ann").await;
    let unknown = app
        .post(
            "/conversations",
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
    let (_, zed) = foreign_record(&app, "/contacts", json!({"first_name": "Zed"})).await;
    let foreign = id(&zed);
    not_found(
        app.post(
            "/conversations",
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
    let c = contact_named(&app, "Ann").await;
    let conv = new_conversation(&app, c, "api").await;
    let without = app.member_token("member", &["contacts"]).await;
    for (method, path) in [
        (Method::GET, "/conversations".to_string()),
        (Method::GET, format!("/conversations/{}", id(&conv))),
        (Method::POST, format!("/conversations/{}/close", id(&conv))),
        (Method::GET, "/handovers".to_string()),
    ] {
        forbidden(
            app.call(method, &path)
                .token(&without)
                .json(json!({}))
                .send()
                .await,
        );
    }
    let with = app.member_token("member", &["inbox"]).await;
    app.get_as(&with, "/conversations").await.expect(200);
}

#[tokio::test]
async fn lists_filter_and_page_newest_first() {
    let app = spawn_app().await;
    let (ann, bob) = (
        contact_named(&app, "Ann").await,
        contact_named(&app, "Bob").await,
    );
    let a1 = new_conversation(&app, ann, "api").await;
    let b1 = new_conversation(&app, bob, "sms").await;
    let a2 = new_conversation(&app, ann, "sms").await;
    app.post(&format!("/conversations/{}/close", id(&a1)), json!({}))
        .await
        .expect(200);

    let all = listed(app.get("/conversations").await);
    let ids: Vec<u64> = all.iter().map(id).collect();
    assert_eq!(ids, [id(&a2), id(&b1), id(&a1)]);

    let page = app.get("/conversations?limit=2").await.ok();
    assert_eq!(page["has_more"], true);
    let cursor = page["next_cursor"].as_str().unwrap();
    let rest = listed(
        app.get(&format!("/conversations?limit=2&starting_after={cursor}"))
            .await,
    );
    assert_eq!(rest.iter().map(id).collect::<Vec<_>>(), [id(&a1)]);

    let of = |q: &str| {
        let app = &app;
        let q = q.to_string();
        async move {
            listed(app.get(&format!("/conversations?{q}")).await)
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
    invalid(app.get("/conversations?status=maybe").await, "status");
    invalid(app.get("/conversations?channel=fax").await, "channel");
}

#[tokio::test]
async fn closing_records_the_note_and_who_closed_and_reopening_clears_it() {
    let app = spawn_app().await;
    let c = contact_named(&app, "Ann").await;
    let conv = new_conversation(&app, c, "api").await;
    let note = app
        .post("/closing-notes", json!({"name": "Resolved"}))
        .await
        .created();
    let path = format!("/conversations/{}", id(&conv));
    not_found(
        app.post(
            &format!("{path}/close"),
            json!({"closing_note_id": 999_999}),
        )
        .await,
    );
    invalid(
        app.post(
            &format!("{path}/close"),
            json!({"closing_note_text": "x".repeat(2_001)}),
        )
        .await,
        "closing_note_text",
    );
    let closed = app
        .post(
            &format!("{path}/close"),
            json!({"closing_note_id": id(&note), "closing_note_text": "shipped"}),
        )
        .await
        .ok();
    assert_eq!(closed["status"], "closed");
    assert_eq!(closed["closed_by"], "api");
    assert_eq!(closed["closing_note_id"], id(&note));
    assert_eq!(closed["closing_note_text"], "shipped");
    utc(&closed["closed_at"]);
    conflict(app.post(&format!("{path}/close"), json!({})).await);

    let open = app.post(&format!("{path}/reopen"), json!({})).await.ok();
    assert_eq!(open["status"], "open");
    assert_eq!(
        (
            &open["closed_by"],
            &open["closed_at"],
            &open["closing_note_text"]
        ),
        (&Value::Null, &Value::Null, &Value::Null)
    );
    conflict(app.post(&format!("{path}/reopen"), json!({})).await);

    let person = app.member_token("member", &["inbox"]).await;
    let by_person = app
        .post_as(&person, &format!("{path}/close"), json!({}))
        .await
        .ok();
    assert_eq!(by_person["closed_by"], "team");
}

#[tokio::test]
async fn only_members_can_be_assigned_and_null_unassigns() {
    let app = spawn_app().await;
    let path = format!("{}/assignee", anns_conversation(&app, "api").await);
    let member = app.new_user("Mia Member").await;
    app.add_member(&app.workspace_id, &member, "member", &["inbox"])
        .await;
    let outsider = app.new_user("Otto Outsider").await;

    invalid(
        app.put(&path, json!({"user_id": outsider})).await,
        "user_id",
    );
    invalid(
        app.put(&path, json!({"user_id": "nobody"})).await,
        "user_id",
    );
    let assigned = app.put(&path, json!({"user_id": member})).await.expect(200);
    assert_eq!(assigned.body["assigned_to_user_id"], member.as_str());
    let filtered = listed(
        app.get(&format!("/conversations?assigned_to_user_id={member}"))
            .await,
    );
    assert_eq!(filtered.len(), 1);
    let cleared = app.put(&path, json!({"user_id": null})).await.expect(200);
    assert_eq!(cleared.body["assigned_to_user_id"], Value::Null);
}

#[tokio::test]
async fn the_ai_pauses_and_resumes_once_each() {
    let app = spawn_app().await;
    let c = contact_named(&app, "Ann").await;
    let path = format!(
        "/conversations/{}/ai",
        id(&new_conversation(&app, c, "api").await)
    );
    let paused = app
        .post(&format!("{path}/pause"), json!({}))
        .await
        .expect(200);
    assert_eq!(paused.body["ai_paused"], true);
    assert_eq!(paused.body["ai_paused_reason"], "api", "the default reason");
    conflict(
        app.post(&format!("{path}/pause"), json!({"reason": "spam"}))
            .await,
    );
    let resumed = app
        .post(&format!("{path}/resume"), json!({}))
        .await
        .expect(200);
    assert_eq!(
        (
            &resumed.body["ai_paused"],
            &resumed.body["ai_paused_reason"]
        ),
        (&json!(false), &Value::Null)
    );
    conflict(app.post(&format!("{path}/resume"), json!({})).await);
    let spam = app
        .post(&format!("{path}/pause"), json!({"reason": "spam"}))
        .await
        .expect(200);
    assert_eq!(spam.body["ai_paused_reason"], "spam");
    let other = format!(
        "/conversations/{}/ai",
        id(&new_conversation(&app, c, "sms").await)
    );
    invalid(
        app.post(&format!("{other}/pause"), json!({"reason": "bored"}))
            .await,
        "reason",
    );
}
