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

mod events;
mod model;
mod rules;
pub(crate) mod timers;
mod turns_cut_short;
