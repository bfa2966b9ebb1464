//! An OpenAI-compatible model behind SWITCHBOARD_AI_URL: a fake chat-completions server
//! on a local port answers, answers too much, fails or is slow.

use serde_json::json;

use super::*;

#[tokio::test]
async fn a_model_behind_the_ai_url_answers_with_the_conversation_so_far() {
    let (url, seen) = fake_model(
        200,
        json!({"choices": [{"message": {"role": "assistant", "content": "Red ones are in stock."}}]}),
        Duration::ZERO,
    )
    .await;
    let app = app_with_model(&url, Duration::from_secs(10)).await;
    app.patch("/ai-settings", json!({"instructions": "You sell shoes."}))
        .await
        .expect(200);
    let first = chat(
        &app,
        json!({"message": "hello", "contact": {"phone": "+15550100"}}),
    )
    .await;
    let conversation = first.body["conversationId"].as_u64().unwrap();
    let r = chat(
        &app,
        json!({"message": "any red shoes?", "conversationId": conversation}),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["reply"]["text"], "Red ones are in stock.");
    let last = seen.lock().unwrap().last().cloned().unwrap();
    assert_eq!(last["model"], "fake-model");
    let messages = last["messages"].as_array().unwrap();
    assert_eq!(messages[0]["role"], "system");
    assert_eq!(messages[0]["content"], "You sell shoes.");
    let said: Vec<(&str, &str)> = messages[1..]
        .iter()
        .map(|m| (m["role"].as_str().unwrap(), m["content"].as_str().unwrap()))
        .collect();
    assert_eq!(
        said,
        [
            ("user", "hello"),
            ("assistant", "Red ones are in stock."),
            ("user", "any red shoes?")
        ]
    );
}

#[tokio::test]
async fn a_model_reply_longer_than_a_message_is_cut_to_ten_thousand_characters() {
    let long = format!("{} tail", "ab ".repeat(4_000));
    let (url, _) = fake_model(
        200,
        json!({"choices": [{"message": {"content": long}}]}),
        Duration::ZERO,
    )
    .await;
    let app = app_with_model(&url, Duration::from_secs(10)).await;
    let r = chat(
        &app,
        json!({"message": "tell me everything", "contact": {"phone": "+15550100"}}),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.body);
    let reply = r.body["reply"]["text"].as_str().unwrap();
    assert_eq!(reply.chars().count(), 10_000);
    let conversation = r.body["conversationId"].as_u64().unwrap();
    let stored = app
        .get(&format!("/conversations/{conversation}/messages"))
        .await
        .expect(200);
    let texts: Vec<usize> = stored.body["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["text"].as_str().unwrap().chars().count())
        .collect();
    assert_eq!(
        texts,
        [10_000, 18],
        "newest first: the reply, then the customer"
    );
}

#[tokio::test]
async fn a_failing_or_slow_model_answers_502_and_sends_nothing() {
    for (status, body, delay) in [
        (500, json!({"error": "down"}), Duration::ZERO),
        (
            200,
            json!({"choices": [{"message": {"content": ""}}]}),
            Duration::ZERO,
        ),
        (
            200,
            json!({"choices": [{"message": {"content": "late"}}]}),
            Duration::from_secs(2),
        ),
    ] {
        let (url, _) = fake_model(status, body, delay).await;
        let app = app_with_model(&url, Duration::from_millis(300)).await;
        let r = chat(
            &app,
            json!({"message": "hello", "contact": {"phone": "+15550100"}}),
        )
        .await;
        assert_eq!(r.status, 502, "{}", r.body);
        let said = r.body["message"].as_str().unwrap();
        assert!(said.contains("could not answer"), "{said}");
        assert!(
            !said.contains(&url),
            "the backend's address stays private: {said}"
        );
        if delay > Duration::ZERO {
            assert!(said.contains("did not answer within"), "{said}");
        }
        let conversations = listed(app.get("/conversations").await);
        let id = conversations[0]["id"].as_u64().unwrap();
        let messages = listed(app.get(&format!("/conversations/{id}/messages")).await);
        assert_eq!(
            messages.len(),
            1,
            "the customer's message is kept, nothing is sent"
        );
    }
}

#[tokio::test]
async fn a_failed_turn_emits_ai_turn_failed_naming_the_message() {
    use crate::receiver::TestReceiver;
    use crate::webhooks::{fast_webhooks, new_endpoint};

    let (url, _) = fake_model(500, json!({"error": "down"}), Duration::ZERO).await;
    let app = spawn_app_with(move |s| {
        fast_webhooks(s);
        s.ai.url = Some(url);
    })
    .await;
    let rx = TestReceiver::start().await;
    new_endpoint(&app, json!({"url": rx.url, "events": ["ai_turn.failed"]})).await;
    let r = chat(
        &app,
        json!({"message": "hello", "contact": {"phone": "+15550100"}}),
    )
    .await;
    assert_eq!(r.status, 502);
    let got = rx.wait_for(1).await;
    let failed = got[0].json();
    assert_eq!(failed["type"], "ai_turn.failed");
    assert_eq!(failed["actor"]["type"], "ai");
    let messages = listed(app.get("/conversations").await);
    assert_eq!(failed["data"]["conversation_id"], messages[0]["id"]);
    assert!(failed["data"]["message_id"].as_u64().is_some());
    assert!(failed["data"]["error"].as_str().unwrap().contains("500"));
}
