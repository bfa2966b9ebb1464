//! One HTTP attempt: POST the body with the signature and event headers, no redirects,
//! no proxy, a resolver that refuses private addresses, and the answer time limit.

use std::sync::Arc;
use std::time::{Duration, Instant};

use reqwest::header::{HeaderMap, HeaderValue, CONTENT_TYPE, USER_AGENT};

use crate::events::signature;
use crate::ssrf::{check_at_send, is_loopback_literal, SafeResolver};

pub const AGENT: &str = "Service-Webhooks/2.0";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// A 2xx within the answer time.
    Delivered,
    /// Anything else; retried while attempts are left.
    Failed,
    /// 410: stop at once and disable the endpoint.
    Gone,
}

#[derive(Debug, Clone, PartialEq)]
pub struct SendResult {
    pub outcome: Outcome,
    pub status_code: Option<u16>,
    pub error: Option<String>,
    pub duration_ms: u64,
}

/// What identifies one attempt on the wire.
pub struct Attempt<'a> {
    pub url: &'a str,
    pub body: &'a str,
    pub secrets: &'a [String],
    /// Headers that name what is sent and which attempt this is
    /// (`X-Service-Event-Id`, `X-Service-Delivery-Attempt`, ...).
    pub labels: &'a [(&'static str, String)],
    /// Unix seconds for the signature.
    pub t: i64,
    /// A loopback IP literal in `url` may be reached (an operator's endpoint).
    pub loopback_allowed: bool,
}

/// The labels of a webhook delivery attempt.
pub fn event_labels(event_id: &str, event_type: &str, number: u32) -> [(&'static str, String); 3] {
    [
        ("x-service-event-id", event_id.to_string()),
        ("x-service-event-type", event_type.to_string()),
        ("x-service-delivery-attempt", number.to_string()),
    ]
}

#[derive(Clone)]
pub struct Sender {
    client: reqwest::Client,
    allow_private: bool,
}

impl Sender {
    pub fn new(timeout: Duration, allow_private: bool) -> Result<Self, String> {
        let client = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .no_proxy()
            .timeout(timeout)
            .connect_timeout(timeout)
            .dns_resolver(Arc::new(SafeResolver::new(allow_private)))
            // The spec writes the headers as `X-Service-Signature`, `User-Agent`, ...;
            // some receivers compare them as written.
            .http1_title_case_headers()
            .user_agent(AGENT)
            .build()
            .map_err(|e| e.to_string())?;
        Ok(Self {
            client,
            allow_private,
        })
    }

    pub async fn send(&self, a: Attempt<'_>) -> SendResult {
        let started = Instant::now();
        let done = |outcome, status_code, error: Option<String>| SendResult {
            outcome,
            status_code,
            error,
            duration_ms: started.elapsed().as_millis() as u64,
        };
        let url = match url::Url::parse(a.url) {
            Ok(u) => u,
            Err(e) => return done(Outcome::Failed, None, Some(format!("invalid url: {e}"))),
        };
        let to_loopback = a.loopback_allowed && is_loopback_literal(&url);
        if let Err(problem) = check_at_send(&url, self.allow_private || to_loopback) {
            return done(
                Outcome::Failed,
                None,
                Some(format!("refused destination: {problem:?}")),
            );
        }
        let secrets: Vec<&str> = a.secrets.iter().map(String::as_str).collect();
        let mut headers = HeaderMap::new();
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        headers.insert(USER_AGENT, HeaderValue::from_static(AGENT));
        let mut add = |name: &'static str, value: String| {
            if let Ok(v) = HeaderValue::from_str(&value) {
                headers.insert(name, v);
            }
        };
        add(
            "x-service-signature",
            signature::header(a.t, a.body.as_bytes(), &secrets),
        );
        for (name, value) in a.labels {
            add(name, value.clone());
        }
        let response = self
            .client
            .post(url)
            .headers(headers)
            .body(a.body.to_string())
            .send()
            .await;
        match response {
            Ok(r) => {
                let status = r.status();
                let code = Some(status.as_u16());
                if status.is_success() {
                    done(Outcome::Delivered, code, None)
                } else if status.as_u16() == 410 {
                    done(
                        Outcome::Gone,
                        code,
                        Some("the receiver answered 410 Gone".into()),
                    )
                } else if status.is_redirection() {
                    done(
                        Outcome::Failed,
                        code,
                        Some("redirects are not followed".into()),
                    )
                } else {
                    done(
                        Outcome::Failed,
                        code,
                        Some(format!("the receiver answered {status}")),
                    )
                }
            }
            Err(e) if e.is_timeout() => done(
                Outcome::Failed,
                None,
                Some("no answer within the time limit".into()),
            ),
            Err(e) if e.is_connect() => done(
                Outcome::Failed,
                None,
                Some(format!("could not connect: {}", root_cause(&e))),
            ),
            Err(e) => done(
                Outcome::Failed,
                None,
                Some(format!("request failed: {}", root_cause(&e))),
            ),
        }
    }
}

fn root_cause(e: &dyn std::error::Error) -> String {
    let mut cause = e;
    while let Some(next) = cause.source() {
        cause = next;
    }
    cause.to_string()
}
