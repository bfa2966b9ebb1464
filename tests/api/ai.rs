//! The AI over HTTP: settings, the rules responder answering /messages and /chat (FAQ,
//! fallback, handover, lead capture), feedback on its messages, and an OpenAI-compatible
//! model behind SWITCHBOARD_AI_URL (a fake chat-completions server on a local port).

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{json, Value};

use crate::helpers::*;

async fn chat(app: &TestApp, body: Value) -> Resp {
    app.post("/chat", body).await
}

/// The messages of a conversation, oldest first, once there are at least `n`.
async fn messages_when(app: &TestApp, conversation: u64, n: usize) -> Vec<Value> {
    for _ in 0..200 {
        let mut all = listed(
            app.get(&format!("/conversations/{conversation}/messages"))
                .await,
        );
        if all.len() >= n {
            all.reverse();
            return all;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("conversation {conversation} never had {n} messages");
}

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

/// A fake chat-completions server: answers with `status` and `body` after `delay` and
/// remembers each request body.
async fn fake_model(status: u16, body: Value, delay: Duration) -> (String, Arc<Mutex<Vec<Value>>>) {
    use axum::routing::post;
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    let app = axum::Router::new().route(
        "/v1/chat/completions",
        post(move |axum::Json(req): axum::Json<Value>| {
            let (log, body) = (log.clone(), body.clone());
            async move {
                log.lock().unwrap().push(req);
                tokio::time::sleep(delay).await;
                (
                    axum::http::StatusCode::from_u16(status).unwrap(),
                    axum::Json(body),
                )
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await });
    (url, seen)
}

/// The app asking the model at `url`, waiting at most `timeout` for an answer.
async fn app_with_model(url: &str, timeout: Duration) -> TestApp {
    let url = url.to_string();
    spawn_app_with(move |s| {
        s.ai.url = Some(url);
        s.ai.model = "fake-model".into();
        s.ai.timeout = timeout;
    })
    .await
}

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

mod events {
    use serde_json::json;

    use super::chat;
    use crate::receiver::TestReceiver;
    use crate::webhooks::{new_endpoint, spawn_webhook_app};

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
        let contact =
            json!({"phone": "+15550105555", "email": "hank@example.com", "name": "Hank Ito"});
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

pub(crate) mod timers {
    use std::time::Duration;

    use serde_json::{json, Value};

    use super::{chat, messages_when};
    use crate::helpers::*;
    use switchboard_actors::clock::ManualClock;

    const MINUTE: Duration = Duration::from_secs(60);

    /// Sets `settings` on the AI, then a customer (by phone) says `message` through /chat;
    /// the conversation it landed in.
    async fn customer_says(app: &TestApp, settings: Value, message: &str) -> u64 {
        app.patch("/ai-settings", settings).await.expect(200);
        let r = chat(
            app,
            json!({"message": message, "contact": {"phone": "+15550100"}}),
        )
        .await;
        r.body["conversationId"].as_u64().unwrap()
    }

    async fn messages(app: &TestApp, conversation: u64) -> Vec<Value> {
        let mut all = listed(
            app.get(&format!("/conversations/{conversation}/messages"))
                .await,
        );
        all.reverse();
        all
    }

    #[tokio::test]
    async fn a_quiet_customer_gets_one_follow_up_even_from_a_passivated_workspace() {
        let (app, clock) = clocked(|s| s.actor_idle = Duration::from_millis(50)).await;
        let conversation = customer_says(&app, json!({"followup_after": "30m"}), "hello").await;
        assert_eq!(messages(&app, conversation).await.len(), 2);

        clock.advance(29 * MINUTE);
        tokio::time::sleep(Duration::from_millis(600)).await;
        assert_eq!(
            messages(&app, conversation).await.len(),
            2,
            "not before it is due"
        );

        clock.advance(2 * MINUTE);
        eventually("the follow-up", async || {
            messages(&app, conversation).await.len() == 3
        })
        .await;
        let all = messages(&app, conversation).await;
        assert_eq!(
            all[2]["text"],
            "Are you still there? Let us know if we can help."
        );
        assert_eq!(all[2]["sender_type"], "ai");

        clock.advance(120 * MINUTE);
        tokio::time::sleep(Duration::from_millis(600)).await;
        assert_eq!(messages(&app, conversation).await.len(), 3, "exactly once");
    }

    #[tokio::test]
    async fn a_contact_who_opted_out_gets_no_follow_up() {
        let (app, clock) = clocked(|_| {}).await;
        let conversation = customer_says(&app, json!({"followup_after": "30m"}), "hello").await;
        let c = app
            .get(&format!("/conversations/{conversation}"))
            .await
            .ok();
        app.put(
            &format!("/contacts/{}/dnc", c["contact_id"]),
            json!({"do_not_contact": true}),
        )
        .await
        .expect(200);
        clock.advance(31 * MINUTE);
        tokio::time::sleep(Duration::from_millis(600)).await;
        assert_eq!(messages(&app, conversation).await.len(), 2, "no follow-up");
    }

    #[tokio::test]
    async fn a_team_reply_takes_over_and_no_follow_up_goes_out() {
        let (app, clock) = clocked(|_| {}).await;
        let conversation = customer_says(&app, json!({"followup_after": "30m"}), "hello").await;
        app.post(
            &format!("/conversations/{conversation}/messages"),
            json!({"text": "I am here"}),
        )
        .await
        .expect(201);
        clock.advance(60 * MINUTE);
        tokio::time::sleep(Duration::from_millis(600)).await;
        assert_eq!(messages(&app, conversation).await.len(), 3);
    }

    #[tokio::test]
    async fn a_quiet_conversation_closes_by_itself() {
        let (app, clock) = clocked(|_| {}).await;
        let conversation =
            customer_says(&app, json!({"auto_close_after": "1h"}), "agent please").await;
        clock.advance(61 * MINUTE);
        let path = format!("/conversations/{conversation}");
        eventually("the auto-close", async || {
            app.get(&path).await.body["status"] == "closed"
        })
        .await;
        let c = app.get(&path).await.ok();
        assert_eq!(c["closed_by"], "auto");
        assert_eq!(c["ai_paused"], false, "the handover pause is lifted");
        let handovers = listed(app.get("/handovers?status=resolved").await);
        assert_eq!(handovers[0]["resolved_by"], "system");
    }

    #[tokio::test]
    async fn armed_timers_follow_the_settings_of_the_moment() {
        let (app, clock) = clocked(|_| {}).await;
        // A follow-up armed for 1h, then turned off: nothing goes out.
        let c = customer_says(&app, json!({"followup_after": "1h"}), "hello").await;
        let before = messages(&app, c).await.len();
        app.patch("/ai-settings", json!({"followup_after": null}))
            .await
            .expect(200);
        clock.advance(61 * MINUTE);
        tokio::time::sleep(Duration::from_millis(600)).await;
        assert_eq!(messages(&app, c).await.len(), before, "no follow-up");

        // An auto-close armed for 1h, lengthened to 3h: open at 1h, closed at 3h.
        let again = customer_says(&app, json!({"auto_close_after": "1h"}), "still there").await;
        assert_eq!(again, c);
        app.patch("/ai-settings", json!({"auto_close_after": "3h"}))
            .await
            .expect(200);
        let path = format!("/conversations/{c}");
        clock.advance(61 * MINUTE);
        tokio::time::sleep(Duration::from_millis(600)).await;
        assert_eq!(app.get(&path).await.ok()["status"], "open");
        clock.advance(120 * MINUTE);
        eventually("the lengthened auto-close", async || {
            app.get(&path).await.body["status"] == "closed"
        })
        .await;

        // Turned off while armed: the conversation stays open.
        let third = customer_says(&app, json!({"auto_close_after": "1h"}), "me again").await;
        assert_eq!(third, c, "reopened");
        app.patch("/ai-settings", json!({"auto_close_after": null}))
            .await
            .expect(200);
        clock.advance(61 * MINUTE);
        tokio::time::sleep(Duration::from_millis(600)).await;
        assert_eq!(app.get(&path).await.ok()["status"], "open");
    }

    // Worker threads as in the service: handed over side by side, the timers would race.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn an_overdue_follow_up_goes_out_before_the_later_auto_close() {
        // Both overdue at once, as after a stop: each workspace gets its timers in due
        // order, so the follow-up goes out and the auto-close counts from it.
        let (app, clock) = clocked(|_| {}).await;
        app.patch(
            "/ai-settings",
            json!({"followup_after": "10m", "auto_close_after": "1h"}),
        )
        .await
        .expect(200);
        let mut conversations = Vec::new();
        for i in 0..8 {
            let r = chat(
                &app,
                json!({"message": "hello", "contact": {"phone": format!("+1555010{i}")}}),
            )
            .await;
            conversations.push(r.body["conversationId"].as_u64().unwrap());
        }
        clock.advance(2 * 60 * MINUTE);
        for &c in &conversations {
            let all = messages_when(&app, c, 3).await;
            assert_eq!(all.len(), 3, "the follow-up went out on {c}");
        }
        tokio::time::sleep(Duration::from_millis(600)).await;
        for &c in &conversations {
            let now = app.get(&format!("/conversations/{c}")).await.ok();
            assert_eq!(now["status"], "open", "an hour after the follow-up: {now}");
        }
        clock.advance(61 * MINUTE);
        for &c in &conversations {
            let path = format!("/conversations/{c}");
            eventually("the auto-close after the follow-up", async || {
                app.get(&path).await.body["status"] == "closed"
            })
            .await;
        }
    }

    #[tokio::test]
    async fn a_pending_follow_up_fires_once_after_kill_9() {
        let dir = tempfile::tempdir().unwrap();
        let mut server = launch(dir.path(), &[], &[]).await;
        let key = server.key.clone().unwrap();
        server
            .send(
                reqwest::Method::PATCH,
                &key,
                "/ai-settings",
                json!({"followup_after": "2s"}),
            )
            .await;
        let r = server
            .post_json(
                &key,
                "/chat",
                json!({"message": "hello", "contact": {"phone": "+15550100"}}),
            )
            .await;
        let conversation = r["conversationId"].as_u64().unwrap();
        server.kill_9().await;
        crate::store_safety::assert_store_checks(dir.path());

        let server = launch(dir.path(), &[], &[]).await;
        let path = format!("/conversations/{conversation}/messages");
        let count = async || -> usize {
            let v = server.get_json(&key, &path).await;
            v["data"].as_array().unwrap().len()
        };
        happens_once("the follow-up went out after the restart", 3, count).await;
    }

    /// An app on the manual clock whose AI follows up after 10 minutes and closes after an
    /// hour, announcing both to a receiver.
    pub(crate) async fn announcing_follow_ups_and_auto_closes(
    ) -> (TestApp, ManualClock, crate::receiver::TestReceiver) {
        let (app, clock) = clocked(crate::webhooks::fast_webhooks).await;
        let rx = crate::receiver::TestReceiver::start().await;
        crate::webhooks::new_endpoint(
            &app,
            json!({"url": rx.url, "events": ["conversation.followup_sent", "conversation.closed"]}),
        )
        .await;
        app.patch(
            "/ai-settings",
            json!({"followup_after": "10m", "auto_close_after": "1h"}),
        )
        .await
        .expect(200);
        (app, clock, rx)
    }

    #[tokio::test]
    async fn the_follow_up_and_the_auto_close_are_announced() {
        let (app, clock, rx) = announcing_follow_ups_and_auto_closes().await;
        chat(
            &app,
            json!({"message": "hello", "contact": {"phone": "+15550100"}}),
        )
        .await;
        clock.advance(11 * MINUTE);
        let got = rx.wait_for(1).await;
        let followed = got[0].json();
        assert_eq!(followed["type"], "conversation.followup_sent");
        assert_eq!(followed["actor"]["type"], "system");
        assert!(followed["data"]["message_id"].as_u64().is_some());
        clock.advance(61 * MINUTE);
        let got = rx.wait_for(2).await;
        let closed = got[1].json();
        assert_eq!(closed["type"], "conversation.closed");
        assert_eq!(closed["data"]["closed_by"], "auto");
    }
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

/// An AI turn cut short by its actor stopping is not lost: the actor waits for a running
/// turn before it passivates, and a turn whose outcome never came back (the process
/// stopped) runs again once it must have ended.
mod turns_cut_short {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;

    /// A model whose first answer takes `first` and every later one comes at once; the
    /// number of calls so far.
    async fn model_slow_at_first(first: Duration) -> (String, Arc<AtomicUsize>) {
        use axum::routing::post;
        let calls = Arc::new(AtomicUsize::new(0));
        let seen = calls.clone();
        let app = axum::Router::new().route(
            "/v1/chat/completions",
            post(move || {
                let seen = seen.clone();
                async move {
                    if seen.fetch_add(1, Ordering::SeqCst) == 0 {
                        tokio::time::sleep(first).await;
                    }
                    axum::Json(json!({"choices": [{"message": {"content": "Here to help."}}]}))
                }
            }),
        );
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/v1", listener.local_addr().unwrap());
        tokio::spawn(async move { axum::serve(listener, app).await });
        (url, calls)
    }

    async fn customer_message(app: &TestApp) -> u64 {
        let r = app
            .post(
                "/messages",
                json!({"contact": {"phone": "+15550100"}, "text": "a question"}),
            )
            .await
            .expect(202);
        r.body["conversationId"].as_u64().unwrap()
    }

    #[tokio::test]
    async fn a_turn_whose_conversation_was_closed_or_paused_meanwhile_sends_nothing() {
        let answer = json!({"choices": [{"message": {"content": "Late answer."}}]});
        let (url, calls) = fake_model(200, answer, Duration::from_millis(500)).await;
        let app = app_with_model(&url, Duration::from_secs(10)).await;
        let mut conversations = Vec::new();
        // Closed and reopened, paused and resumed, taken over by a person and resumed,
        // all while the model thinks.
        for (i, interlude) in [
            [("close", json!({})), ("reopen", json!({}))],
            [
                ("ai/pause", json!({"reason": "schedule"})),
                ("ai/resume", json!({})),
            ],
            [
                ("messages", json!({"text": "A person here."})),
                ("ai/resume", json!({})),
            ],
        ]
        .into_iter()
        .enumerate()
        {
            let phone = format!("+1555010{i}");
            let r = app
                .post(
                    "/messages",
                    json!({"contact": {"phone": phone}, "text": "a question"}),
                )
                .await
                .expect(202);
            let conversation = r.body["conversationId"].as_u64().unwrap();
            for (action, body) in interlude {
                let r = app
                    .post(&format!("/conversations/{conversation}/{action}"), body)
                    .await;
                assert!(matches!(r.status, 200 | 201), "{action}: {}", r.body);
            }
            conversations.push(conversation);
        }
        // Every turn has come back by now.
        for _ in 0..100 {
            if calls.lock().unwrap().len() >= 3 {
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        tokio::time::sleep(Duration::from_millis(800)).await;
        for conversation in conversations {
            let all = listed(
                app.get(&format!("/conversations/{conversation}/messages"))
                    .await,
            );
            assert!(
                all.iter().all(|m| m["sender_type"] != "ai"),
                "conversation {conversation}: {all:?}"
            );
        }
    }

    #[tokio::test]
    async fn a_chat_turn_silenced_meanwhile_answers_no_reply_even_once_undone() {
        let answer = json!({"choices": [{"message": {"content": "Late answer."}}]});
        let (url, _) = fake_model(200, answer, Duration::from_millis(500)).await;
        let app = std::sync::Arc::new(app_with_model(&url, Duration::from_secs(10)).await);
        for (i, interlude) in [
            [("close", json!({})), ("reopen", json!({}))],
            [("ai/pause", json!({})), ("ai/resume", json!({}))],
            [
                ("messages", json!({"text": "A person here."})),
                ("ai/resume", json!({})),
            ],
        ]
        .into_iter()
        .enumerate()
        {
            let contact = json!({"phone": format!("+1555020{i}")});
            let opened = app
                .post(
                    "/conversations",
                    json!({"contact_id": crate::fixtures::new_contact_id(&app, contact).await, "channel": "api"}),
                )
                .await
                .created();
            let conversation = opened["id"].as_u64().unwrap();
            let asking = app.clone();
            let turn = tokio::spawn(async move {
                chat(
                    &asking,
                    json!({"message": "a question", "conversationId": conversation}),
                )
                .await
            });
            tokio::time::sleep(Duration::from_millis(150)).await;
            for (action, body) in interlude {
                let r = app
                    .post(&format!("/conversations/{conversation}/{action}"), body)
                    .await;
                assert!(matches!(r.status, 200 | 201), "{action}: {}", r.body);
            }
            let answered = turn.await.unwrap();
            assert_eq!(answered.status, 200, "{}", answered.body);
            assert_eq!(
                answered.body["reply"],
                Value::Null,
                "{i}: {}",
                answered.body
            );
            let all = listed(
                app.get(&format!("/conversations/{conversation}/messages"))
                    .await,
            );
            assert!(all.iter().all(|m| m["sender_type"] != "ai"), "{i}: {all:?}");
        }
    }

    #[tokio::test]
    async fn a_turn_that_ends_after_the_ai_was_turned_off_sends_nothing() {
        let answer = json!({"choices": [{"message": {"content": "Late answer."}}]});
        let (url, _) = fake_model(200, answer, Duration::from_millis(500)).await;
        let app = app_with_model(&url, Duration::from_secs(10)).await;
        let r = app
            .post(
                "/messages",
                json!({"contact": {"phone": "+15550300"}, "text": "a question"}),
            )
            .await
            .expect(202);
        let conversation = r.body["conversationId"].as_u64().unwrap();
        tokio::time::sleep(Duration::from_millis(150)).await;
        app.patch("/ai-settings", json!({"enabled": false}))
            .await
            .expect(200);
        tokio::time::sleep(Duration::from_millis(900)).await;
        let all = listed(
            app.get(&format!("/conversations/{conversation}/messages"))
                .await,
        );
        assert_eq!(all.len(), 1, "the customer's message alone: {all:?}");
    }

    #[tokio::test]
    async fn an_idle_workspace_waits_for_its_running_turn() {
        let (url, _) = model_slow_at_first(Duration::from_millis(600)).await;
        let app = spawn_app_with(move |s| {
            s.ai.url = Some(url);
            s.actor_idle = Duration::from_millis(50);
        })
        .await;
        let conversation = customer_message(&app).await;
        // Idle for many passivation periods while the model thinks: the reply still lands.
        tokio::time::sleep(Duration::from_millis(900)).await;
        let all = messages_when(&app, conversation, 2).await;
        assert_eq!(all[1]["sender_type"], "ai");
        assert_eq!(all[1]["text"], "Here to help.");
    }

    #[tokio::test]
    async fn a_turn_cut_short_by_a_restart_runs_again_once_it_must_have_ended() {
        // The first answer comes after the stop (the old turn's task still holds the store,
        // so the restart waits for it, as a new process would not have to).
        let (url, calls) = model_slow_at_first(Duration::from_millis(800)).await;
        let configure = move |s: &mut switchboard::config::Settings| {
            s.ai.url = Some(url.clone());
            s.ai.timeout = Duration::from_secs(5);
        };
        let (app, clock) = clocked(configure.clone()).await;
        let conversation = customer_message(&app).await;
        while calls.load(Ordering::SeqCst) == 0 {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        // Stopped while the model thinks: that turn's outcome has no actor to go to.
        let app = app.restart_with(configure).await;
        assert_eq!(
            listed(
                app.get(&format!("/conversations/{conversation}/messages"))
                    .await
            )
            .len(),
            1
        );
        // Not before the turn must have ended (its limit and a grace period)...
        clock.advance(Duration::from_secs(20));
        tokio::time::sleep(Duration::from_millis(400)).await;
        assert_eq!(calls.load(Ordering::SeqCst), 1, "not run again early");
        // ...then once.
        clock.advance(Duration::from_secs(20));
        let all = messages_when(&app, conversation, 2).await;
        assert_eq!(all[1]["sender_type"], "ai");
        assert_eq!(all[1]["text"], "Here to help.");
        clock.advance(Duration::from_secs(120));
        tokio::time::sleep(Duration::from_millis(400)).await;
        assert_eq!(calls.load(Ordering::SeqCst), 2, "run again exactly once");
        assert_eq!(
            listed(
                app.get(&format!("/conversations/{conversation}/messages"))
                    .await
            )
            .len(),
            2
        );
    }
}
