//! An OpenAI-compatible chat-completions backend (OpenAI, Ollama, vLLM, llama.cpp server,
//! ...): `POST {url}/chat/completions` with the model, the instructions and FAQ as the
//! system message, the recent conversation, and the customer's new text. Only
//! `choices[0].message.content` is read. A failed call is not retried.

use std::time::Duration;

use serde_json::{json, Value};

use super::{ReplyFuture, Responder, Speaker, TurnRequest};

/// Where the model is and how to reach it.
#[derive(Debug, Clone)]
pub struct OpenAiSettings {
    /// The base URL, e.g. `http://127.0.0.1:11434/v1`.
    pub url: String,
    pub model: String,
    pub api_key: Option<String>,
    /// Bounds the whole turn.
    pub timeout: Duration,
}

pub struct OpenAiResponder {
    settings: OpenAiSettings,
    client: reqwest::Client,
}

impl OpenAiResponder {
    pub fn new(settings: OpenAiSettings) -> Result<Self, String> {
        let client = reqwest::Client::builder()
            .timeout(settings.timeout)
            .build()
            .map_err(|e| e.to_string())?;
        Ok(Self { settings, client })
    }

    /// The chat-completions request body for a turn.
    pub fn body(&self, request: &TurnRequest) -> Value {
        let mut system = request.settings.instructions.clone();
        if !request.settings.faq.is_empty() {
            system.push_str("\n\nFrequently asked questions:");
            for e in &request.settings.faq {
                system.push_str(&format!("\n- {}: {}", e.keywords.join(", "), e.answer));
            }
        }
        let mut messages = vec![json!({"role": "system", "content": system.trim()})];
        for (speaker, text) in &request.history {
            let role = match speaker {
                Speaker::Customer => "user",
                Speaker::Business => "assistant",
            };
            messages.push(json!({"role": role, "content": text}));
        }
        messages.push(json!({"role": "user", "content": request.text}));
        json!({"model": self.settings.model, "messages": messages})
    }

    async fn ask(&self, request: &TurnRequest) -> Result<String, String> {
        let url = format!(
            "{}/chat/completions",
            self.settings.url.trim_end_matches('/')
        );
        let mut call = self.client.post(&url).json(&self.body(request));
        if let Some(key) = &self.settings.api_key {
            call = call.bearer_auth(key);
        }
        // What a failure says goes to API callers and webhook receivers: never the
        // backend's address; the full cause goes to the log.
        let response = call.send().await.map_err(|e| {
            tracing::warn!(error = %e, "the AI backend call failed");
            if e.is_timeout() {
                super::timed_out(self.settings.timeout)
            } else {
                format!("model call failed: {}", e.without_url())
            }
        })?;
        let status = response.status();
        if !status.is_success() {
            return Err(format!("the model answered {status}"));
        }
        let answer: Value = response
            .json()
            .await
            .map_err(|e| format!("the model's answer is not JSON: {}", e.without_url()))?;
        answer
            .pointer("/choices/0/message/content")
            .and_then(Value::as_str)
            .map(str::to_string)
            .ok_or_else(|| "the model's answer has no choices[0].message.content".into())
    }
}

impl Responder for OpenAiResponder {
    fn reply<'a>(&'a self, request: &'a TurnRequest) -> ReplyFuture<'a> {
        Box::pin(self.ask(request))
    }
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::TcpListener;

    use super::*;
    use crate::domain::ai_settings::{AiSettings, FaqEntry};

    /// A fake chat-completions server: answers every request with `status` and `body`
    /// after `delay`, and keeps the requests it got.
    async fn fake(
        status: u16,
        body: &'static str,
        delay: Duration,
    ) -> (String, Arc<Mutex<Vec<String>>>) {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/v1", listener.local_addr().unwrap());
        let seen = Arc::new(Mutex::new(Vec::new()));
        let log = seen.clone();
        tokio::spawn(async move {
            while let Ok((mut socket, _)) = listener.accept().await {
                let log = log.clone();
                tokio::spawn(async move {
                    let mut buf = vec![0u8; 64 * 1024];
                    let mut got = Vec::new();
                    loop {
                        let n = socket.read(&mut buf).await.unwrap_or(0);
                        if n == 0 {
                            break;
                        }
                        got.extend_from_slice(&buf[..n]);
                        let text = String::from_utf8_lossy(&got);
                        if let Some((head, rest)) = text.split_once("\r\n\r\n") {
                            let len = head
                                .lines()
                                .find_map(|l| {
                                    l.to_ascii_lowercase()
                                        .strip_prefix("content-length:")
                                        .map(|v| v.trim().parse::<usize>().unwrap_or(0))
                                })
                                .unwrap_or(0);
                            if rest.len() >= len {
                                break;
                            }
                        }
                    }
                    log.lock()
                        .unwrap()
                        .push(String::from_utf8_lossy(&got).to_string());
                    tokio::time::sleep(delay).await;
                    let answer = format!(
                        "HTTP/1.1 {status} X\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                        body.len()
                    );
                    let _ = socket.write_all(answer.as_bytes()).await;
                });
            }
        });
        (url, seen)
    }

    fn responder(url: String, timeout: Duration) -> OpenAiResponder {
        OpenAiResponder::new(OpenAiSettings {
            url,
            model: "tiny-model".into(),
            api_key: Some("sk-test".into()),
            timeout,
        })
        .unwrap()
    }

    fn request() -> TurnRequest {
        let settings = AiSettings {
            instructions: "You sell shoes.".into(),
            faq: vec![FaqEntry {
                keywords: vec!["returns".into()],
                answer: "30 days".into(),
            }],
            ..AiSettings::default()
        };
        TurnRequest {
            settings,
            history: vec![
                (Speaker::Customer, "hi".into()),
                (Speaker::Business, "hello!".into()),
            ],
            text: "do you have red ones?".into(),
        }
    }

    const SECOND: Duration = Duration::from_secs(1);

    #[tokio::test]
    async fn a_good_answer_is_read_from_the_first_choice_and_the_request_is_complete() {
        let (url, seen) = fake(
            200,
            r#"{"choices":[{"message":{"role":"assistant","content":"Yes, in all sizes."}}]}"#,
            Duration::ZERO,
        )
        .await;
        let r = responder(url, SECOND);
        assert_eq!(r.reply(&request()).await.unwrap(), "Yes, in all sizes.");
        let raw = seen.lock().unwrap()[0].clone();
        assert!(raw.starts_with("POST /v1/chat/completions "), "{raw}");
        assert!(raw
            .to_ascii_lowercase()
            .contains("authorization: bearer sk-test"));
        let body: Value = serde_json::from_str(raw.split_once("\r\n\r\n").unwrap().1).unwrap();
        assert_eq!(body["model"], "tiny-model");
        let roles: Vec<&str> = body["messages"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["role"].as_str().unwrap())
            .collect();
        assert_eq!(roles, ["system", "user", "assistant", "user"]);
        let system = body["messages"][0]["content"].as_str().unwrap();
        assert!(
            system.contains("You sell shoes.") && system.contains("returns: 30 days"),
            "{system}"
        );
        assert_eq!(body["messages"][3]["content"], "do you have red ones?");
    }

    #[tokio::test]
    async fn error_answers_malformed_bodies_and_missing_content_fail() {
        for (status, body, why) in [
            (500, r#"{"error":"boom"}"#, "answered 500"),
            (200, "not json", "not JSON"),
            (200, r#"{"choices":[]}"#, "no choices[0]"),
        ] {
            let (url, _) = fake(status, body, Duration::ZERO).await;
            let err = responder(url, SECOND).reply(&request()).await.unwrap_err();
            assert!(err.contains(why), "{err}");
        }
    }

    #[tokio::test]
    async fn a_slow_model_times_out() {
        let (url, _) = fake(200, r#"{"choices":[]}"#, Duration::from_secs(5)).await;
        let err = responder(url, Duration::from_millis(100))
            .reply(&request())
            .await
            .unwrap_err();
        assert_eq!(err, "the model did not answer within 100 ms");
    }

    #[tokio::test]
    async fn a_failure_never_names_the_backends_address() {
        // Nothing listens on port 9 of localhost: the connection is refused.
        let url = "http://127.0.0.1:9/v1".to_string();
        let err = responder(url, SECOND).reply(&request()).await.unwrap_err();
        assert!(err.starts_with("model call failed"), "{err}");
        assert!(!err.contains("127.0.0.1"), "{err}");
    }
}
