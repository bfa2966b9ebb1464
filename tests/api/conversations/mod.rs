//! Conversations over HTTP: create, list and filter, close and reopen, assignee, AI pause
//! and resume, team replies, comments, feedback, handovers, and contact merges.

use reqwest::Method;
use serde_json::{json, Value};

use crate::fixtures::*;
use crate::helpers::*;

/// The path (below /api/v1) of a new conversation on `channel` with a new contact, Ann.
async fn anns_conversation(app: &TestApp, channel: &str) -> String {
    let c = contact_named(app, "Ann").await;
    format!(
        "/conversations/{}",
        id(&new_conversation(app, c, channel).await)
    )
}

// ----- Events at a real receiver -----

mod events {
    use serde_json::json;

    use super::{anns_conversation, contact_named, id};
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
        let c = contact_named(&app, "Ann").await;
        let conv = app
            .post(
                "/conversations",
                json!({"contact_id": c, "channel": "api", "text": "Hello"}),
            )
            .await
            .created();
        let path = format!("/conversations/{}", id(&conv));
        app.post(&format!("{path}/comments"), json!({"body": "secret note"}))
            .await
            .expect(201);
        app.post(
            &format!("{path}/close"),
            json!({"closing_note_text": "refunded"}),
        )
        .await
        .expect(200);
        app.post(
            &format!("{path}/messages"),
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
            sent["data"]["channel"], "api",
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
        let path = anns_conversation(&app, "api").await;
        app.post(&format!("{path}/messages"), json!({"text": "visible"}))
            .await
            .expect(201);
        app.post(
            &format!("{path}/close"),
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

    #[tokio::test]
    async fn the_events_of_one_change_all_carry_its_outcome() {
        let app = spawn_webhook_app().await;
        let rx = TestReceiver::start().await;
        new_endpoint(
            &app,
            json!({"url": rx.url, "events": ["conversation.*"], "include_content": true}),
        )
        .await;
        let path = anns_conversation(&app, "api").await;
        app.post(&format!("{path}/close"), json!({})).await.ok();
        // A team reply on a closed conversation reopens it and takes over from the AI.
        app.post(&format!("{path}/messages"), json!({"text": "back"}))
            .await
            .expect(201);
        let after_reply = app.get(&path).await.ok();
        // Closing lifts the takeover pause.
        let closed = app.post(&format!("{path}/close"), json!({})).await.ok();
        assert_eq!(closed["ai_paused"], false);

        let got = rx.wait_for(6).await;
        let data_of = |t: &str| -> Vec<serde_json::Value> {
            got.iter()
                .filter(|r| r.event_type() == t)
                .map(|r| r.json()["data"].clone())
                .collect()
        };
        for t in ["conversation.reopened", "conversation.ai_paused"] {
            assert_eq!(data_of(t), std::slice::from_ref(&after_reply), "{t}");
        }
        // Deliveries may arrive in any order: the second close is the one with its outcome.
        assert!(
            data_of("conversation.closed").contains(&closed),
            "the close shows the lifted pause"
        );
        assert_eq!(
            data_of("conversation.ai_resumed"),
            std::slice::from_ref(&closed)
        );
    }
}

mod erasure;
mod lifecycle;
mod messages;
