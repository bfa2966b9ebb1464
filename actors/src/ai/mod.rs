//! The AI that answers customers. One [`Responder`] trait with two implementations: the
//! embedded, deterministic [`rules::RulesResponder`] (the default) and an
//! OpenAI-compatible HTTP backend ([`openai::OpenAiResponder`]).
//!
//! [`take_turn`] applies the fixed turn order around any responder: handover keywords
//! first (the responder is not asked; the handover reply is sent), lead capture always,
//! then the responder's reply, all bounded by one time limit. A turn runs beside the
//! workspace actor, never inside its handler; its [`TurnOutcome`] goes back to the actor
//! as a message.

pub mod openai;
pub mod rules;
pub mod text;

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use crate::domain::ai_settings::AiSettings;
use crate::domain::conversation::MAX_MESSAGE_TEXT;

/// Who said a line of the conversation so far.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Speaker {
    Customer,
    /// The AI or the team.
    Business,
}

/// What a responder is asked: the workspace's settings, the recent conversation (oldest
/// first), and the customer's new text.
#[derive(Debug, Clone)]
pub struct TurnRequest {
    pub settings: AiSettings,
    pub history: Vec<(Speaker, String)>,
    pub text: String,
}

pub type ReplyFuture<'a> = Pin<Box<dyn Future<Output = Result<String, String>> + Send + 'a>>;

/// Produces the reply to a customer's message, or says why it could not.
pub trait Responder: Send + Sync + 'static {
    fn reply<'a>(&'a self, request: &'a TurnRequest) -> ReplyFuture<'a>;

    /// Whether the reply depends on the conversation so far; a responder that answers
    /// from the new text alone spares every turn a read of the history.
    fn reads_history(&self) -> bool {
        true
    }
}

/// The responder every workspace uses, and the limit of a whole turn.
#[derive(Clone)]
pub struct Ai {
    responder: Arc<dyn Responder>,
    limit: Duration,
}

impl Ai {
    pub fn new(responder: Arc<dyn Responder>, limit: Duration) -> Self {
        Self { responder, limit }
    }

    /// The embedded rules responder.
    pub fn rules(limit: Duration) -> Self {
        Self::new(Arc::new(rules::RulesResponder), limit)
    }

    /// How long a whole turn may take.
    pub fn limit(&self) -> Duration {
        self.limit
    }

    /// Whether a turn's request needs the conversation's history.
    pub fn reads_history(&self) -> bool {
        self.responder.reads_history()
    }

    pub async fn turn(&self, request: &TurnRequest, contact: &KnownContact) -> TurnOutcome {
        take_turn(&*self.responder, request, contact, self.limit).await
    }
}

/// What the contact lacked and the message gave: saved on the contact, and a lead.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Lead {
    pub email: Option<String>,
    pub phone: Option<String>,
    pub summary: String,
}

/// The outcome of a turn, for the workspace actor to apply.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct TurnOutcome {
    /// The text to send the customer.
    pub reply: Option<String>,
    /// A handover was requested, with this summary.
    pub handover: Option<String>,
    pub lead: Option<Lead>,
    /// Why no reply could be produced (ai_turn.failed); nothing is sent then.
    pub failure: Option<String>,
}

/// The contact's details as the turn sees them (to know what a lead adds).
#[derive(Debug, Clone, Default)]
pub struct KnownContact {
    pub email: Option<String>,
    pub phone: Option<String>,
}

/// One turn, in the fixed order, within `limit`.
pub async fn take_turn(
    responder: &dyn Responder,
    request: &TurnRequest,
    contact: &KnownContact,
    limit: Duration,
) -> TurnOutcome {
    let words = text::words(&request.text);
    let lead = capture(&request.text, contact);
    let asked_for_person = request
        .settings
        .handover_keywords
        .iter()
        .any(|k| text::contains(&words, k));
    if asked_for_person {
        return TurnOutcome {
            reply: Some(request.settings.handover_reply.clone()),
            handover: Some(summary("asked for a person", &request.text)),
            lead,
            failure: None,
        };
    }
    let answer = match tokio::time::timeout(limit, responder.reply(request)).await {
        Err(_) => Err(timed_out(limit)),
        Ok(Err(e)) => Err(e),
        Ok(Ok(text)) => Ok(within_message_limit(text)),
    }
    .and_then(|text| match text.trim().is_empty() {
        true => Err("the reply was empty".to_string()),
        false => Ok(text),
    });
    match answer {
        Ok(text) => TurnOutcome {
            reply: Some(text),
            lead,
            ..TurnOutcome::default()
        },
        Err(e) => TurnOutcome {
            failure: Some(e),
            lead,
            ..TurnOutcome::default()
        },
    }
}

/// What a turn that ran out of time says. The backend's own deadline and the turn's are
/// the same setting and race each other, so both say it the same way.
pub fn timed_out(limit: Duration) -> String {
    format!("the model did not answer within {} ms", limit.as_millis())
}

/// A short summary: what happened and the start of the customer's words.
/// A model's reply as a message may carry it: cut to the message limit (a model does not
/// know it), the customer still gets the start of the answer.
fn within_message_limit(text: String) -> String {
    match text.char_indices().nth(MAX_MESSAGE_TEXT) {
        Some((cut, _)) => text[..cut].trim_end().to_string(),
        None => text,
    }
}

fn summary(what: &str, text: &str) -> String {
    let mut quoted: String = text.chars().take(200).collect();
    if text.chars().count() > 200 {
        quoted.push('…');
    }
    format!("The customer {what}: \"{quoted}\"")
}

/// The email and phone in `text` that the contact lacks.
fn capture(text: &str, contact: &KnownContact) -> Option<Lead> {
    let email = contact
        .email
        .is_none()
        .then(|| text::emails(text).into_iter().next())
        .flatten();
    let phone = contact
        .phone
        .is_none()
        .then(|| text::phones(text).into_iter().next())
        .flatten();
    if email.is_none() && phone.is_none() {
        return None;
    }
    let shared: Vec<String> = [("email", &email), ("phone", &phone)]
        .iter()
        .filter_map(|(k, v)| v.as_ref().map(|v| format!("{k} {v}")))
        .collect();
    Some(Lead {
        summary: format!("The customer shared their {}", shared.join(" and ")),
        email,
        phone,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A responder that answers after a wait, or fails.
    struct Scripted(Result<&'static str, &'static str>, Duration);

    impl Responder for Scripted {
        fn reply<'a>(&'a self, _: &'a TurnRequest) -> ReplyFuture<'a> {
            Box::pin(async move {
                tokio::time::sleep(self.1).await;
                self.0.map(str::to_string).map_err(str::to_string)
            })
        }
    }

    fn request(text: &str) -> TurnRequest {
        TurnRequest {
            settings: AiSettings::default(),
            history: Vec::new(),
            text: text.into(),
        }
    }

    const QUICK: Duration = Duration::from_millis(1);
    const LIMIT: Duration = Duration::from_millis(200);

    #[tokio::test]
    async fn a_handover_keyword_comes_first_and_the_responder_is_not_asked() {
        let never = Scripted(Err("must not be called"), Duration::from_secs(10));
        let out = take_turn(
            &never,
            &request("I want a human"),
            &KnownContact::default(),
            LIMIT,
        )
        .await;
        assert_eq!(
            out.reply.as_deref(),
            Some(AiSettings::default().handover_reply.as_str())
        );
        assert!(out.handover.unwrap().contains("I want a human"));
        assert_eq!(out.failure, None);
    }

    #[tokio::test]
    async fn lead_capture_applies_with_any_reply_and_only_for_what_the_contact_lacks() {
        let ok = Scripted(Ok("Sure"), QUICK);
        let known = KnownContact {
            email: Some("old@example.com".into()),
            phone: None,
        };
        let out = take_turn(
            &ok,
            &request("reach me at new@example.com or +1 555 0100 123"),
            &known,
            LIMIT,
        )
        .await;
        assert_eq!(out.reply.as_deref(), Some("Sure"));
        let lead = out.lead.unwrap();
        assert_eq!(lead.email, None, "the contact has an email already");
        assert_eq!(lead.phone.as_deref(), Some("+15550100123"));
        let handover = take_turn(
            &ok,
            &request("agent please, 5550100"),
            &KnownContact::default(),
            LIMIT,
        )
        .await;
        assert!(handover.handover.is_some() && handover.lead.is_some());
    }

    #[tokio::test]
    async fn a_reply_longer_than_a_message_may_be_is_cut_to_the_limit() {
        let long = Box::leak("é".repeat(MAX_MESSAGE_TEXT + 500).into_boxed_str());
        let out = take_turn(
            &Scripted(Ok(long), QUICK),
            &request("hello"),
            &KnownContact::default(),
            LIMIT,
        )
        .await;
        let reply = out.reply.unwrap();
        assert_eq!(reply.chars().count(), MAX_MESSAGE_TEXT);
        assert!(crate::domain::conversation::message_text(&reply).is_ok());
        let short = within_message_limit("  fine as it is ".into());
        assert_eq!(short, "  fine as it is ");
    }

    #[tokio::test]
    async fn timeouts_errors_and_empty_replies_are_failures_that_send_nothing() {
        let cases = [
            (
                Scripted(Ok("late"), Duration::from_secs(5)),
                "the model did not answer within 200 ms",
            ),
            (Scripted(Err("model says no"), QUICK), "model says no"),
            (Scripted(Ok("   "), QUICK), "empty"),
        ];
        for (responder, why) in cases {
            let out = take_turn(
                &responder,
                &request("hello"),
                &KnownContact::default(),
                LIMIT,
            )
            .await;
            assert_eq!(out.reply, None);
            assert!(out.failure.as_deref().unwrap().contains(why), "{out:?}");
        }
    }
}
