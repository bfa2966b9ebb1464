//! An AI turn cut short by its actor stopping is not lost: the actor waits for a running
//! turn before it passivates, and a turn whose outcome never came back (the process
//! stopped) runs again once it must have ended.

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
