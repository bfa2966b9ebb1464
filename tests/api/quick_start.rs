//! The README's quick start, step by step on a fresh data folder: the ids and answers it
//! shows are the ones a reader gets.

use serde_json::json;

use crate::helpers::*;

#[tokio::test]
async fn the_quick_start_answers_as_the_readme_shows() {
    let app = spawn_app().await;
    app.get("/me").await.expect(200);
    let tag = app
        .call(reqwest::Method::POST, "/tags")
        .token(&app.key)
        .header("Idempotency-Key", "first-tag")
        .json(json!({"name": "VIP", "color": "chart-2"}))
        .send()
        .await
        .created();
    assert_eq!(tag["id"], 1);
    let field = app
        .post(
            "/custom-fields",
            json!({"label": "Shoe size (EU)", "type": "select", "options": ["40", "41", "42"]}),
        )
        .await
        .created();
    assert_eq!(field["id"], 2);
    app.patch(
        "/ai-settings",
        json!({"faq": [{"keywords": ["opening hours"], "answer": "We open at nine, Monday to Saturday."}]}),
    )
    .await
    .expect(200);

    let first = app
        .post(
            "/chat",
            json!({"message": "What are your opening hours?", "contact": {"phone": "+15550100", "name": "Ann Lee"}}),
        )
        .await
        .expect(200)
        .body;
    assert_eq!(
        first,
        json!({"conversationId": 4, "contactId": 3, "messageId": 5,
               "reply": {"messageId": 6, "text": "We open at nine, Monday to Saturday."},
               "handover": false})
    );
    let conv = 4;
    let second = app
        .post(
            "/chat",
            json!({"message": "Can I talk to a human?", "conversationId": conv}),
        )
        .await
        .expect(200)
        .body;
    assert_eq!(second["handover"], true, "{second}");
    let waiting = app
        .get("/handovers?status=requested")
        .await
        .expect(200)
        .body;
    assert_eq!(waiting["data"][0]["conversation_id"], conv, "{waiting}");

    app.post(
        &format!("/conversations/{conv}/messages"),
        json!({"text": "Hi Ann, this is Sam. How can I help?"}),
    )
    .await
    .expect(201);
    let resolved = app.get("/handovers?status=resolved").await.expect(200).body;
    assert_eq!(resolved["data"][0]["conversation_id"], conv, "{resolved}");
    let closed = app
        .post(
            &format!("/conversations/{conv}/close"),
            json!({"closing_note_text": "Answered in person"}),
        )
        .await
        .expect(200)
        .body;
    assert_eq!(closed["status"], "closed", "{closed}");

    // Sent twice: the second is the first's repeat (same message_id).
    let integration =
        json!({"message_id": "ext-1", "contact": {"phone": "+15550100"}, "text": "Thanks!"});
    let sent = app
        .post("/messages", integration.clone())
        .await
        .expect(202)
        .body;
    let again = app.post("/messages", integration).await.expect(202).body;
    assert_eq!(sent["conversationId"], again["conversationId"]);
    assert_eq!(sent["messageId"], again["messageId"]);
}
