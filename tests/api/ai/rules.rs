//! The rules responder: the AI settings, answers to /messages and /chat (FAQ, fallback,
//! handover, lead capture), feedback on its messages, and /chat's refusals.

use serde_json::json;

use super::*;

#[tokio::test]
async fn ai_settings_have_their_defaults_and_only_owners_and_admins_change_them() {
    let app = spawn_app().await;
    let s = app.get("/ai-settings").await.ok();
    assert_eq!(s["object"], "ai_settings");
    assert_eq!(s["enabled"], true);
    assert_eq!(s["handover_keywords"], json!(["human", "agent", "person"]));
    assert_eq!(
        s["fallback_reply"],
        "Thanks for your message. A member of our team will get back to you soon."
    );
    assert_eq!(
        s["handover_reply"],
        "I'm handing you over to a member of our team."
    );
    assert_eq!(
        s["followup_text"],
        "Are you still there? Let us know if we can help."
    );
    assert_eq!(
        (&s["followup_after"], &s["auto_close_after"]),
        (&Value::Null, &Value::Null)
    );
    assert_eq!(s["faq"], json!([]));
    assert_eq!(s["appointment_reminders"], json!(["24h"]));

    let member = app.member_token("member", &["inbox"]).await;
    app.get_as(&member, "/ai-settings").await.expect(200);
    forbidden(
        app.patch_as(&member, "/ai-settings", json!({"enabled": false}))
            .await,
    );

    let changed = app
        .patch(
            "/ai-settings",
            json!({"followup_after": "30m", "faq": [{"keywords": ["hours"], "answer": "9 to 5"}]}),
        )
        .await
        .ok();
    assert_eq!(changed["followup_after"], "30m");
    invalid(
        app.patch("/ai-settings", json!({"followup_after": "soon"}))
            .await,
        "followup_after",
    );
    invalid(
        app.patch("/ai-settings", json!({"fallback_reply": ""}))
            .await,
        "fallback_reply",
    );
    invalid(
        app.patch("/ai-settings", json!({"mood": "happy"})).await,
        "mood",
    );
    let cleared = app
        .patch("/ai-settings", json!({"followup_after": null}))
        .await
        .expect(200);
    assert_eq!(cleared.body["followup_after"], Value::Null);
    let leads = app
        .patch(
            "/ai-settings",
            json!({"appointment_reminders": ["1d", "90m", "24h"]}),
        )
        .await
        .ok();
    assert_eq!(
        leads["appointment_reminders"],
        json!(["90m", "1d"]),
        "shortest first, as written, one of each length"
    );

    let app = app.restart().await;
    let kept = app.get("/ai-settings").await.ok();
    assert_eq!(kept["faq"][0]["answer"], "9 to 5");
}

#[tokio::test]
async fn the_rules_answer_a_message_after_it_is_accepted() {
    let app = spawn_app().await;
    let r = app
        .post(
            "/messages",
            json!({"contact": {"phone": "+15550100"}, "text": "hello"}),
        )
        .await
        .expect(202);
    let conversation = r.body["conversationId"].as_u64().unwrap();
    let all = messages_when(&app, conversation, 2).await;
    assert_eq!(all[1]["sender_type"], "ai");
    assert_eq!(all[1]["direction"], "outbound");
    assert_eq!(
        all[1]["text"],
        "Thanks for your message. A member of our team will get back to you soon."
    );
}

#[tokio::test]
async fn chat_answers_from_the_faq_and_says_null_when_the_ai_is_off() {
    let app = spawn_app().await;
    app.patch(
        "/ai-settings",
        json!({"faq": [{"keywords": ["opening hours"], "answer": "We open at nine."}]}),
    )
    .await
    .expect(200);
    let r = chat(
        &app,
        json!({"message": "What are your opening-hours?", "contact": {"email": "a@example.com"}}),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["reply"]["text"], "We open at nine.");
    assert_eq!(r.body["handover"], false);
    let conversation = r.body["conversationId"].as_u64().unwrap();

    app.patch("/ai-settings", json!({"enabled": false}))
        .await
        .expect(200);
    let off = chat(
        &app,
        json!({"message": "anyone?", "conversationId": conversation}),
    )
    .await;
    assert_eq!(off.status, 200);
    assert_eq!(off.body["reply"], Value::Null);
    assert_eq!(off.body["conversationId"], conversation);
}

#[tokio::test]
async fn a_handover_keyword_pauses_the_ai_until_the_conversation_is_closed() {
    let app = spawn_app().await;
    let r = chat(&app, json!({"message": "Let me talk to a human!", "contact": {"phone": "+15550100", "name": "Ann Lee"}})).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["handover"], true);
    assert_eq!(
        r.body["reply"]["text"],
        "I'm handing you over to a member of our team."
    );
    let conversation = r.body["conversationId"].as_u64().unwrap();
    let c = app
        .get(&format!("/conversations/{conversation}"))
        .await
        .ok();
    assert_eq!(
        (&c["ai_paused"], &c["ai_paused_reason"]),
        (&json!(true), &json!("handover"))
    );
    let handovers = listed(app.get("/handovers?status=requested").await);
    assert_eq!(handovers.len(), 1);
    assert_eq!(handovers[0]["customer_name"], "Ann Lee");
    assert_eq!(handovers[0]["customer_phone"], "+15550100");
    assert!(handovers[0]["summary"]
        .as_str()
        .unwrap()
        .contains("talk to a human"));

    let paused = chat(
        &app,
        json!({"message": "hello?", "conversationId": conversation}),
    )
    .await;
    assert_eq!(
        paused.body["reply"],
        Value::Null,
        "a paused AI does not answer"
    );

    let closed = app
        .post(&format!("/conversations/{conversation}/close"), json!({}))
        .await
        .ok();
    assert_eq!(closed["ai_paused"], false, "closing lifts a handover pause");
    let resolved = listed(app.get("/handovers?status=resolved").await);
    assert_eq!(resolved.len(), 1);
    let back = chat(
        &app,
        json!({"message": "thanks", "conversationId": conversation}),
    )
    .await;
    assert!(back.body["reply"]["text"].is_string(), "{}", back.body);
}

#[tokio::test]
async fn a_second_request_for_a_person_joins_the_open_handover() {
    let app = spawn_app().await;
    let r = chat(
        &app,
        json!({"message": "a human please", "contact": {"username": "dbl1"}, "channel": "chan_e"}),
    )
    .await;
    let conversation = r.body["conversationId"].as_u64().unwrap();
    let at = format!("/conversations/{conversation}");
    app.post(&format!("{at}/ai/resume"), json!({})).await.ok();
    let again = chat(
        &app,
        json!({"message": "a human, again", "conversationId": conversation}),
    )
    .await;
    assert_eq!(again.body["handover"], true);
    let c = app.get(&at).await.ok();
    assert_eq!(c["ai_paused_reason"], "handover", "the AI pauses again");
    let handovers = listed(
        app.get(&format!("/handovers?conversation_id={conversation}"))
            .await,
    );
    assert_eq!(handovers.len(), 1, "one open handover: {handovers:?}");
    // A team reply resolves it, and closing leaves nothing waiting.
    app.post(&format!("{at}/messages"), json!({"text": "I am here"}))
        .await
        .created();
    app.post(&format!("{at}/close"), json!({})).await.ok();
    let waiting = listed(app.get("/handovers?status=requested").await);
    assert!(waiting.is_empty(), "{waiting:?}");
}

#[tokio::test]
async fn an_email_or_phone_the_contact_lacks_is_saved_as_a_lead() {
    let app = spawn_app().await;
    let r = chat(
        &app,
        json!({"message": "mail me at Ann@Example.com", "contact": {"phone": "+15550100"}}),
    )
    .await;
    assert_eq!(r.status, 200);
    let contact = r.body["contactId"].as_u64().unwrap();
    let c = app.get(&format!("/contacts/{contact}")).await.ok();
    assert_eq!(c["email"], "ann@example.com");
    assert_eq!(c["phone"], "+15550100", "a phone the contact has stays");
}

#[tokio::test]
async fn feedback_rates_ai_messages_and_a_second_rating_replaces_the_first() {
    let app = spawn_app().await;
    let r = chat(
        &app,
        json!({"message": "hi", "contact": {"phone": "+15550100"}}),
    )
    .await;
    let (conversation, reply) = (
        r.body["conversationId"].as_u64().unwrap(),
        r.body["reply"]["messageId"].as_u64().unwrap(),
    );
    let path = format!("/conversations/{conversation}/messages/{reply}/feedback");
    let first = app.post(&path, json!({"rating": "up"})).await.created();
    assert_fields(
        &first,
        "object id message_id conversation_id user_id rating comment created_at",
    );
    assert_eq!(first["object"], "message_feedback");
    // Replacing answers 200, as an upsert that updates does.
    let second = app
        .post(&path, json!({"rating": "down", "comment": "too short"}))
        .await
        .expect(200)
        .body;
    assert_eq!(second["object"], "message_feedback");
    assert_eq!(
        second["id"], first["id"],
        "one rating per message and credential"
    );
    assert_eq!(second["rating"], "down");
}

#[tokio::test]
async fn chat_refuses_bad_input_with_a_message() {
    let app = spawn_app().await;
    for (body, status) in [
        (json!({"contact": {"phone": "+15550100"}}), 422),
        (
            json!({"message": "", "contact": {"phone": "+15550100"}}),
            422,
        ),
        (json!({"message": "hi"}), 422),
        (json!({"message": "hi", "conversationId": 999_999}), 404),
        (
            json!({"message": "hi", "contact": {"phone": "+15550100"}, "channel": "fax"}),
            422,
        ),
        (
            json!({"message": "hi", "contact": {"phone": "+15550100"}, "extra": true}),
            422,
        ),
    ] {
        let r = chat(&app, body.clone()).await;
        assert_eq!(r.status, status, "{body} -> {}", r.body);
        assert!(r.body["message"].is_string(), "{}", r.body);
        assert_eq!(r.body.as_object().unwrap().len(), 1);
    }
    let raw = app
        .call(reqwest::Method::POST, "/chat")
        .token(&app.key)
        .raw("{oops")
        .send()
        .await;
    assert_eq!(raw.status, 400);
    assert!(raw.body["message"].is_string());
}
