//! The AI's events at a real receiver: handovers and leads, and the privacy of their
//! summaries, comments and feedback.

use serde_json::json;

use super::chat;
use crate::receiver::TestReceiver;
use crate::webhooks::{deliveries_when, new_endpoint, spawn_webhook_app};

#[tokio::test]
async fn handover_and_lead_events_reach_a_receiver() {
    let app = spawn_webhook_app().await;
    let rx = TestReceiver::start().await;
    new_endpoint(
        &app,
        json!({"url": rx.url, "events": ["handover.requested", "contact.lead_captured",
            "conversation.ai_paused", "message.sent"], "include_content": true}),
    )
    .await;
    chat(&app, json!({"message": "agent please, call 555 010 0199", "contact": {"email": "a@example.com"}})).await;
    let got = rx.wait_for(4).await;
    let mut types: Vec<&str> = got.iter().map(|r| r.event_type()).collect();
    types.sort();
    assert_eq!(
        types,
        [
            "contact.lead_captured",
            "conversation.ai_paused",
            "handover.requested",
            "message.sent"
        ]
    );
    let of_type = |t: &str| got.iter().find(|r| r.event_type() == t).unwrap().json();
    let lead = of_type("contact.lead_captured");
    assert_eq!(lead["actor"]["type"], "ai");
    // The summary is content, but the phone in it is a contact detail.
    let summary = lead["data"]["summary"].as_str().unwrap();
    assert!(!summary.contains("5550100199"), "{summary}");
    assert!(summary.contains("[withheld]"), "{summary}");
    assert!(
        lead["data"].get("phone").is_none(),
        "contact details need include_contact_details"
    );
    let handover = of_type("handover.requested");
    let summary = handover["data"]["summary"].as_str().unwrap();
    assert!(
        summary.ends_with("\"agent please, call [withheld]\""),
        "{summary}"
    );
    let sent = of_type("message.sent");
    assert_eq!(sent["data"]["sender_type"], "ai");
}

/// A receiver of `handover.requested` with content, and contact details when
/// `details`.
async fn handover_receiver(app: &crate::helpers::TestApp, details: bool) -> TestReceiver {
    let rx = TestReceiver::start().await;
    new_endpoint(
        app,
        json!({"url": rx.url, "events": ["handover.requested"], "include_content": true,
            "include_contact_details": details}),
    )
    .await;
    rx
}

/// The summary of the first handover `rx` got.
async fn first_summary(rx: &TestReceiver) -> String {
    let got = rx.wait_for(1).await;
    got[0].json()["data"]["summary"]
        .as_str()
        .unwrap()
        .to_string()
}

#[tokio::test]
async fn a_handover_summary_withholds_the_contacts_email_and_name_in_any_case() {
    let app = spawn_webhook_app().await;
    let rx = handover_receiver(&app, false).await;
    let contact = json!({"phone": "+15550105555", "email": "hank@example.com", "name": "Hank Ito"});
    chat(&app, json!({"message": "hello", "contact": contact})).await;
    chat(
        &app,
        json!({"message": "I want a human. I am HANK ITO, Hank@Example.com, +15550105555",
            "contact": contact}),
    )
    .await;
    let summary = first_summary(&rx).await;
    assert!(
        summary.ends_with("\"I want a human. I am [withheld], [withheld], [withheld]\""),
        "the handover record carries no email, yet the contact's is withheld: {summary}"
    );

    let open = handover_receiver(&app, true).await;
    let other = json!({"phone": "+15550106666", "email": "ida@example.com", "name": "Ida Moe"});
    chat(
        &app,
        json!({"message": "agent please, I am Ida Moe", "contact": other}),
    )
    .await;
    let summary = first_summary(&open).await;
    assert!(
        summary.ends_with("\"agent please, I am Ida Moe\""),
        "disclosed details are left as written: {summary}"
    );
}

#[tokio::test]
async fn a_redelivery_after_contact_details_were_turned_off_withholds_them_where_quoted() {
    let app = spawn_webhook_app().await;
    let first = TestReceiver::start().await;
    let (id, _) = new_endpoint(
        &app,
        json!({"url": first.url, "events": ["handover.requested"], "include_content": true,
            "include_contact_details": true}),
    )
    .await;
    let contact =
        json!({"phone": "+15550108888", "email": "jo.park@example.com", "name": "Jo Park"});
    chat(
        &app,
        json!({"message": "a human please, I am Jo Park, jo.park@example.com", "contact": contact}),
    )
    .await;
    let summary = first_summary(&first).await;
    assert!(
        summary.ends_with("\"a human please, I am Jo Park, jo.park@example.com\""),
        "disclosed as written: {summary}"
    );

    // Content stays on; contact details go off, and the endpoint moves.
    let second = TestReceiver::start().await;
    let at = format!("/webhooks/{id}");
    app.patch(
        &at,
        json!({"include_contact_details": false, "url": second.url}),
    )
    .await
    .expect(200);
    let d = deliveries_when(&app, &id, "delivered", |d| d[0]["status"] == "delivered").await;
    app.post(
        &format!("{at}/deliveries/{}/redeliver", d[0]["id"]),
        json!({}),
    )
    .await
    .expect(202);
    let again = first_summary(&second).await;
    assert!(
        again.ends_with("\"a human please, I am [withheld], [withheld]\""),
        "the handover record carries no email, yet the stored summary quoted it: {again}"
    );
    for detail in ["Jo Park", "jo.park@example.com", "5550108888"] {
        assert!(!again.contains(detail), "{detail} was sent again: {again}");
    }
}

#[tokio::test]
async fn comments_and_feedback_withhold_the_details_of_the_conversations_contact() {
    let app = spawn_webhook_app().await;
    let rx = TestReceiver::start().await;
    new_endpoint(
        &app,
        json!({"url": rx.url, "include_content": true,
            "events": ["conversation.comment_created", "message_feedback.submitted"]}),
    )
    .await;
    let contact = json!({"phone": "+15557654321", "email": "henri.v@example.com",
        "name": "Henrietta Vandermeer"});
    let r = chat(
        &app,
        json!({"message": "when do you open?", "contact": contact}),
    )
    .await;
    let conversation = r.body["conversationId"].as_u64().unwrap();
    let reply = r.body["reply"]["messageId"].as_u64().unwrap();
    app.post(
        &format!("/conversations/{conversation}/comments"),
        json!({"body": "Henrietta Vandermeer (+15557654321, henri.v@example.com) is a VIP"}),
    )
    .await
    .expect(201);
    app.post(
        &format!("/conversations/{conversation}/messages/{reply}/feedback"),
        json!({"rating": "down", "comment": "Henrietta at henri.v@example.com deserved better"}),
    )
    .await
    .created();
    rx.wait_for(2).await;
    let comment = rx.of_type("conversation.comment_created")[0].json();
    assert_eq!(
        comment["data"]["body"],
        "[withheld] ([withheld], [withheld]) is a VIP"
    );
    let feedback = rx.of_type("message_feedback.submitted")[0].json();
    assert_eq!(
        feedback["data"]["comment"],
        "[withheld] at [withheld] deserved better"
    );
}

#[tokio::test]
async fn a_handover_summary_withholds_each_short_part_of_the_contacts_name() {
    let app = spawn_webhook_app().await;
    let rx = handover_receiver(&app, false).await;
    let contact = json!({"phone": "+15550107777", "name": "Ann Lee"});
    chat(
        &app,
        json!({"message": "This is Ann Lee. ANN needs a human; Lee family, plan B",
            "contact": contact}),
    )
    .await;
    let summary = first_summary(&rx).await;
    assert!(
        summary.ends_with(
            "\"This is [withheld]. [withheld] needs a human; [withheld] family, plan B\""
        ),
        "{summary}"
    );
}
