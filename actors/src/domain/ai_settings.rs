//! A workspace's AI settings: whether the AI answers, what it knows (instructions, FAQ),
//! when it hands over, what it says, and its timers (follow-up, auto-close, appointment
//! reminders).

use std::time::Duration;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use utoipa::ToSchema;

use super::error::Checks;
use super::patch::Patch;
use super::{text, DomainError};

pub const MAX_INSTRUCTIONS: usize = 10_000;
pub const MAX_FAQ: usize = 200;
pub const MAX_REPLY: usize = 10_000;

pub const DEFAULT_FALLBACK: &str =
    "Thanks for your message. A member of our team will get back to you soon.";
pub const DEFAULT_HANDOVER: &str = "I'm handing you over to a member of our team.";
pub const DEFAULT_FOLLOWUP: &str = "Are you still there? Let us know if we can help.";

/// A duration written like `90s`, `15m`, `24h` or `7d`; answered as it was written (`24h`
/// stays `24h`), and equal to any other writing of the same length (`24h` == `1d`).
#[derive(Debug, Clone, Copy)]
pub struct Span {
    secs: u64,
    /// The unit it was written in: `s`, `m`, `h` or `d`.
    unit: u8,
}

impl Span {
    pub fn parse(raw: &str) -> Result<Self, String> {
        let bad = || "must be a whole number of s, m, h or d, like 30m or 24h".to_string();
        let raw = raw.trim();
        let unit_at = raw.find(|c: char| !c.is_ascii_digit()).ok_or_else(bad)?;
        let (n, unit) = raw.split_at(unit_at);
        let n: u64 = n.parse().map_err(|_| bad())?;
        let unit = match unit {
            "s" | "m" | "h" | "d" => unit.as_bytes()[0],
            _ => return Err(bad()),
        };
        let secs = n.checked_mul(unit_secs(unit)).ok_or_else(bad)?;
        if secs == 0 {
            return Err("must be longer than zero".into());
        }
        if secs > 365 * 86_400 {
            return Err("must be at most 365d".into());
        }
        Ok(Self { secs, unit })
    }

    pub fn duration(self) -> Duration {
        Duration::from_secs(self.secs)
    }

    pub fn chrono(self) -> chrono::Duration {
        chrono::Duration::from_std(self.duration()).unwrap_or(chrono::Duration::MAX)
    }
}

impl utoipa::PartialSchema for Span {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        utoipa::openapi::ObjectBuilder::new()
            .schema_type(utoipa::openapi::schema::Type::String)
            .description(Some(
                "A duration written like `90s`, `15m`, `24h` or `7d`; answered as it was \
                 written.",
            ))
            .examples(["30m"])
            .into()
    }
}

impl ToSchema for Span {
    fn name() -> std::borrow::Cow<'static, str> {
        "Span".into()
    }
}

fn unit_secs(unit: u8) -> u64 {
    match unit {
        b'd' => 86_400,
        b'h' => 3_600,
        b'm' => 60,
        _ => 1,
    }
}

impl PartialEq for Span {
    fn eq(&self, other: &Self) -> bool {
        self.secs == other.secs
    }
}

impl Eq for Span {}

impl PartialOrd for Span {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Span {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.secs.cmp(&other.secs)
    }
}

impl std::fmt::Display for Span {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}{}",
            self.secs / unit_secs(self.unit),
            char::from(self.unit)
        )
    }
}

impl Serialize for Span {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Span {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let raw = String::deserialize(d)?;
        Span::parse(&raw).map_err(serde::de::Error::custom)
    }
}

/// One FAQ entry: the answer given when every keyword appears in a message.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct FaqEntry {
    pub keywords: Vec<String>,
    pub answer: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct AiSettings {
    pub enabled: bool,
    pub instructions: String,
    pub faq: Vec<FaqEntry>,
    pub handover_keywords: Vec<String>,
    pub fallback_reply: String,
    pub handover_reply: String,
    /// After an AI reply, how long a quiet customer waits for one follow-up; null: never.
    pub followup_after: Option<Span>,
    pub followup_text: String,
    /// How long an open conversation may go without a message before it closes; null:
    /// never.
    pub auto_close_after: Option<Span>,
    /// Lead times of appointment reminders before a booking starts.
    pub appointment_reminders: Vec<Span>,
}

impl Default for AiSettings {
    fn default() -> Self {
        Self {
            enabled: true,
            instructions: String::new(),
            faq: Vec::new(),
            handover_keywords: ["human", "agent", "person"].map(String::from).to_vec(),
            fallback_reply: DEFAULT_FALLBACK.into(),
            handover_reply: DEFAULT_HANDOVER.into(),
            followup_after: None,
            followup_text: DEFAULT_FOLLOWUP.into(),
            auto_close_after: None,
            appointment_reminders: vec![Span {
                secs: 86_400,
                unit: b'h',
            }],
        }
    }
}

/// Body of PATCH /ai-settings: omitted fields keep their value; null clears the
/// durations.
#[derive(Debug, Clone, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct AiSettingsPatch {
    #[serde(default)]
    pub enabled: Option<bool>,
    #[serde(default)]
    pub instructions: Option<String>,
    #[serde(default)]
    pub faq: Option<Vec<FaqEntry>>,
    #[serde(default)]
    pub handover_keywords: Option<Vec<String>>,
    #[serde(default)]
    #[schema(min_length = 1, max_length = 10_000, pattern = "\\S")]
    pub fallback_reply: Option<String>,
    #[serde(default)]
    #[schema(min_length = 1, max_length = 10_000, pattern = "\\S")]
    pub handover_reply: Option<String>,
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    pub followup_after: Patch<String>,
    #[serde(default)]
    #[schema(min_length = 1, max_length = 10_000, pattern = "\\S")]
    pub followup_text: Option<String>,
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    pub auto_close_after: Patch<String>,
    #[serde(default)]
    pub appointment_reminders: Option<Vec<String>>,
}

/// A keyword: 1 to 100 characters with at least one letter or digit.
fn keyword(raw: &str) -> Result<String, String> {
    let k = raw.trim();
    text::bounded(k, 1, 100)?;
    if !k.chars().any(char::is_alphanumeric) {
        return Err("must contain a letter or digit".into());
    }
    Ok(k.to_string())
}

fn reply(raw: &str) -> Result<String, String> {
    if raw.trim().is_empty() {
        return Err("must not be empty".into());
    }
    text::bounded(raw, 1, MAX_REPLY)?;
    Ok(raw.to_string())
}

impl AiSettings {
    /// Applies a patch, checking every field; the settings are unchanged on error.
    pub fn patched(&self, p: AiSettingsPatch) -> Result<Self, DomainError> {
        let mut next = self.clone();
        let mut checks = Checks::new();
        if let Some(v) = p.enabled {
            next.enabled = v;
        }
        if let Some(v) = p.instructions {
            if let Some(v) = checks.take(
                "instructions",
                text::bounded(&v, 0, MAX_INSTRUCTIONS).map(|_| v),
            ) {
                next.instructions = v;
            }
        }
        if let Some(faq) = p.faq {
            if faq.len() > MAX_FAQ {
                checks.fail("faq", format!("must hold at most {MAX_FAQ} entries"));
            }
            let mut entries = Vec::new();
            for (i, e) in faq.into_iter().enumerate() {
                if e.keywords.is_empty() || e.keywords.len() > 20 {
                    checks.fail(format!("faq[{i}].keywords"), "must hold 1 to 20 keywords");
                }
                let keywords: Vec<String> = e
                    .keywords
                    .iter()
                    .enumerate()
                    .filter_map(|(j, k)| checks.take(format!("faq[{i}].keywords[{j}]"), keyword(k)))
                    .collect();
                if let Some(answer) = checks.take(format!("faq[{i}].answer"), reply(&e.answer)) {
                    entries.push(FaqEntry { keywords, answer });
                }
            }
            next.faq = entries;
        }
        if let Some(words) = p.handover_keywords {
            if words.len() > 50 {
                checks.fail("handover_keywords", "must hold at most 50 keywords");
            }
            next.handover_keywords = words
                .iter()
                .enumerate()
                .filter_map(|(i, k)| checks.take(format!("handover_keywords[{i}]"), keyword(k)))
                .collect();
        }
        for (path, value, slot) in [
            ("fallback_reply", p.fallback_reply, &mut next.fallback_reply),
            ("handover_reply", p.handover_reply, &mut next.handover_reply),
            ("followup_text", p.followup_text, &mut next.followup_text),
        ] {
            if let Some(v) = value.and_then(|v| checks.take(path, reply(&v))) {
                *slot = v;
            }
        }
        for (path, value, slot) in [
            ("followup_after", p.followup_after, &mut next.followup_after),
            (
                "auto_close_after",
                p.auto_close_after,
                &mut next.auto_close_after,
            ),
        ] {
            match value.try_map(|v| Span::parse(&v)) {
                Ok(patch) => *slot = patch.apply_to(*slot),
                Err(m) => checks.fail(path, m),
            }
        }
        if let Some(leads) = p.appointment_reminders {
            if leads.len() > 10 {
                checks.fail("appointment_reminders", "must hold at most 10 lead times");
            }
            let mut spans: Vec<Span> = leads
                .iter()
                .enumerate()
                .filter_map(|(i, l)| {
                    checks.take(format!("appointment_reminders[{i}]"), Span::parse(l))
                })
                .collect();
            spans.sort();
            spans.dedup();
            next.appointment_reminders = spans;
        }
        checks.finish()?;
        Ok(next)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn paths(e: DomainError) -> Vec<String> {
        match e {
            DomainError::Validation(v) => v.into_iter().map(|f| f.path).collect(),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn spans_parse_print_as_written_and_compare_by_length() {
        for (raw, shown) in [
            ("90s", "90s"),
            ("120s", "120s"),
            (" 15m", "15m"),
            ("24h", "24h"),
            ("1d", "1d"),
        ] {
            assert_eq!(Span::parse(raw).unwrap().to_string(), shown);
        }
        let [day, hours] = ["1d", "24h"].map(|s| Span::parse(s).unwrap());
        assert_eq!(day, hours);
        assert!(Span::parse("90m").unwrap() < Span::parse("2h").unwrap());
        assert_eq!(day.duration(), Duration::from_secs(86_400));
        for bad in ["", "10", "m", "5w", "0s", "-1h", "1.5h", "400d"] {
            assert!(Span::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn the_defaults_are_the_documented_ones() {
        let d = AiSettings::default();
        assert!(d.enabled);
        assert_eq!(d.handover_keywords, ["human", "agent", "person"]);
        assert_eq!(d.fallback_reply, DEFAULT_FALLBACK);
        assert_eq!(d.followup_after, None);
        assert_eq!(d.appointment_reminders, [Span::parse("24h").unwrap()]);
    }

    #[test]
    fn a_patch_checks_every_field_and_changes_nothing_on_error() {
        let d = AiSettings::default();
        let bad = AiSettingsPatch {
            fallback_reply: Some(" ".into()),
            followup_after: Patch::Set("soon".into()),
            faq: Some(vec![FaqEntry {
                keywords: vec![],
                answer: "x".into(),
            }]),
            ..Default::default()
        };
        assert_eq!(
            paths(d.patched(bad).unwrap_err()),
            ["faq[0].keywords", "fallback_reply", "followup_after"]
        );
        let good = AiSettingsPatch {
            followup_after: Patch::Set("30m".into()),
            enabled: Some(false),
            ..Default::default()
        };
        let next = d.patched(good).unwrap();
        assert_eq!(next.followup_after, Some(Span::parse("30m").unwrap()));
        assert!(!next.enabled);
        let cleared = next
            .patched(AiSettingsPatch {
                followup_after: Patch::Clear,
                ..Default::default()
            })
            .unwrap();
        assert_eq!(cleared.followup_after, None);
    }
}
