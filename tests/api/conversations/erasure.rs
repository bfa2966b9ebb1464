//! Deleting a contact deletes "the contact and derived data": its conversations, with their
//! messages, comments, feedback, handovers and timers, for good (nothing of them is left in
//! the store's records), while other contacts' conversations stay.

use std::time::Duration;

use serde_json::json;

use crate::helpers::*;

/// The operator's backup of the whole store: every stored byte, to look for words in.
async fn stored_bytes(app: &TestApp) -> Vec<u8> {
    let r = app
        .client
        .post(format!("{}/admin/backup", app.admin))
        .bearer_auth(ADMIN_TOKEN)
        .send()
        .await
        .expect("backup");
    assert_eq!(r.status(), 200);
    r.bytes().await.expect("backup body").to_vec()
}

fn holds(bytes: &[u8], words: &str) -> bool {
    bytes.windows(words.len()).any(|w| w == words.as_bytes())
}

/// A customer (by phone) says `text` through /chat, into `conversation` when given; the
/// answer's body.
async fn customer_says(
    app: &TestApp,
    phone: &str,
    text: &str,
    conversation: Option<u64>,
) -> serde_json::Value {
    let body = match conversation {
        Some(c) => json!({"message": text, "conversationId": c}),
        None => json!({"message": text, "contact": {"phone": phone}}),
    };
    let r = app.post("/chat", body).await;
    assert_eq!(r.status, 200, "{}", r.body);
    r.body
}

#[tokio::test]
async fn deleting_a_contact_erases_its_conversations_and_all_on_them() {
    let app = spawn_app().await;
    let first = customer_says(&app, "+15550100", "my parcel 7781 is missing", None).await;
    let (contact, conversation, reply) = (
        first["contactId"].as_u64().unwrap(),
        first["conversationId"].as_u64().unwrap(),
        first["reply"]["messageId"].as_u64().unwrap(),
    );
    let path = format!("/conversations/{conversation}");
    app.post(
        &format!("{path}/messages/{reply}/feedback"),
        json!({"rating": "down", "comment": "feedback on parcel 7781"}),
    )
    .await
    .expect(201);
    app.post(
        &format!("{path}/comments"),
        json!({"body": "comment on parcel 7781"}),
    )
    .await
    .expect(201);
    let handed = customer_says(&app, "", "a human please", Some(conversation)).await;
    assert_eq!(handed["handover"], true);
    let second = app
        .post(
            "/conversations",
            json!({"contact_id": contact, "channel": "api", "text": "team note 7781"}),
        )
        .await
        .created();
    let other = customer_says(&app, "+15550199", "keep this one", None).await;
    let others = other["conversationId"].as_u64().unwrap();

    let before = stored_bytes(&app).await;
    for words in [
        "parcel 7781 is missing",
        "feedback on parcel 7781",
        "comment on parcel 7781",
        "team note 7781",
    ] {
        assert!(holds(&before, words), "stored before: {words}");
    }

    app.delete(&format!("/contacts/{contact}"))
        .await
        .expect(200);

    for gone in [path.clone(), format!("/conversations/{}", id(&second))] {
        not_found(app.get(&gone).await);
        not_found(app.get(&format!("{gone}/messages")).await);
    }
    let left = listed(app.get("/conversations").await);
    assert_eq!(
        left.iter().map(|c| c["id"].as_u64()).collect::<Vec<_>>(),
        [Some(others)],
        "another contact's conversation stays"
    );
    assert_eq!(
        listed(app.get(&format!("/conversations/{others}/messages")).await).len(),
        2
    );
    assert!(listed(app.get("/handovers").await).is_empty());

    let app = app.restart().await;
    not_found(app.get(&path).await);
    let after = stored_bytes(&app).await;
    for words in ["parcel 7781", "a human please", "team note 7781"] {
        assert!(!holds(&after, words), "still stored: {words}");
    }
    assert!(holds(&after, "keep this one"));

    let again = customer_says(&app, "+15550100", "hello again", None).await;
    assert_ne!(
        again["contactId"], contact,
        "the same phone is a new contact"
    );
    assert_ne!(again["conversationId"], conversation);
    let messages = listed(
        app.get(&format!(
            "/conversations/{}/messages",
            again["conversationId"]
        ))
        .await,
    );
    assert_eq!(
        messages.len(),
        2,
        "a new conversation: the message and its answer"
    );
}

#[tokio::test]
async fn a_deleted_contacts_follow_up_and_auto_close_never_fire() {
    const MINUTE: Duration = Duration::from_secs(60);
    let (app, clock, rx) = crate::ai::timers::announcing_follow_ups_and_auto_closes().await;
    let deleted = customer_says(&app, "+15550100", "hello", None).await;
    let kept = customer_says(&app, "+15550199", "hello", None).await;
    let timers = format!("conversation/{}/", deleted["conversationId"]);
    assert!(holds(&stored_bytes(&app).await, &timers), "armed: {timers}");
    app.delete(&format!("/contacts/{}", deleted["contactId"]))
        .await
        .expect(200);
    assert!(
        !holds(&stored_bytes(&app).await, &timers),
        "disarmed with the conversation: {timers}"
    );

    clock.advance(11 * MINUTE);
    rx.wait_for(1).await;
    clock.advance(61 * MINUTE);
    rx.wait_for(2).await;
    rx.stays_at(2, Duration::from_millis(600)).await;
    let kept = kept["conversationId"].to_string();
    let conversations: Vec<String> = rx
        .received()
        .iter()
        .map(|r| match &r.json()["resource"]["id"] {
            serde_json::Value::String(id) => id.clone(),
            other => other.to_string(),
        })
        .collect();
    assert!(
        conversations.iter().all(|c| *c == kept),
        "only the kept contact's conversation ({kept}): {conversations:?}"
    );
    assert_eq!(
        rx.event_types(),
        ["conversation.closed", "conversation.followup_sent"]
    );
}

#[tokio::test]
async fn a_retry_of_a_message_accepted_before_the_deletion_brings_nothing_back() {
    let app = spawn_app().await;
    let send = || {
        app.call(reqwest::Method::POST, "/messages")
            .token(&app.key)
            .header("Idempotency-Key", "retry-1")
            .json(json!({"contact": {"phone": "+15550100"}, "text": "my parcel 7781"}))
            .send()
    };
    let first = send().await;
    assert_eq!(first.status, 202, "{}", first.body);
    app.delete(&format!("/contacts/{}", first.body["contactId"]))
        .await
        .expect(200);

    let retry = send().await;
    assert_eq!(retry.status, 202, "{}", retry.body);
    assert_eq!(retry.body["conversationId"], first.body["conversationId"]);
    assert!(listed(app.get("/conversations").await).is_empty());
    assert!(listed(app.get("/contacts").await).is_empty());
    assert!(!holds(&stored_bytes(&app).await, "parcel 7781"));
}
