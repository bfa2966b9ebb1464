//! The embedded responder: deterministic rules, no model. The first FAQ entry whose
//! keywords all appear in the message answers; otherwise the fallback reply.

use super::{text, ReplyFuture, Responder, TurnRequest};

#[derive(Debug, Default, Clone, Copy)]
pub struct RulesResponder;

impl RulesResponder {
    pub fn answer(request: &TurnRequest) -> String {
        let words = text::words(&request.text);
        request
            .settings
            .faq
            .iter()
            .find(|e| e.keywords.iter().all(|k| text::contains(&words, k)))
            .map_or_else(
                || request.settings.fallback_reply.clone(),
                |e| e.answer.clone(),
            )
    }
}

impl Responder for RulesResponder {
    fn reply<'a>(&'a self, request: &'a TurnRequest) -> ReplyFuture<'a> {
        let answer = Self::answer(request);
        Box::pin(async move { Ok(answer) })
    }

    /// Rules read the customer's new text only.
    fn reads_history(&self) -> bool {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::ai_settings::{AiSettings, FaqEntry};

    fn ask(text: &str) -> String {
        let settings = AiSettings {
            faq: vec![
                FaqEntry {
                    keywords: vec!["opening hours".into()],
                    answer: "9 to 5".into(),
                },
                FaqEntry {
                    keywords: vec!["price".into(), "shipping".into()],
                    answer: "Shipping is free".into(),
                },
                FaqEntry {
                    keywords: vec!["shipping".into()],
                    answer: "We ship daily".into(),
                },
            ],
            ..AiSettings::default()
        };
        RulesResponder::answer(&TurnRequest {
            settings,
            history: Vec::new(),
            text: text.into(),
        })
    }

    #[test]
    fn the_first_entry_whose_keywords_all_appear_answers() {
        assert_eq!(ask("What are your Opening-Hours?"), "9 to 5");
        assert_eq!(ask("shipping price?"), "Shipping is free");
        assert_eq!(ask("when is shipping"), "We ship daily");
    }

    #[test]
    fn otherwise_the_fallback_reply() {
        assert_eq!(ask("hello"), AiSettings::default().fallback_reply);
        assert_eq!(ask("pricey"), AiSettings::default().fallback_reply);
    }
}
