//! Per-endpoint privacy: drops content and contact-detail fields from an event's `data` and
//! hides their previous values in `changes` unless the endpoint may receive them.

use serde_json::{Map, Value};

use super::catalog;

/// Contact details of a contact beyond the catalog's columns, on every contact event: the
/// spec's privacy rule names usernames and phones as contact details, and a contact event
/// that carries the contact (contact.lead_captured does) must not give away the parts of
/// a name it withholds, nor the custom fields contact.created withholds.
const CONTACT_CHANNEL_FIELDS: [&str; 7] = [
    "first_name",
    "last_name",
    "custom_fields",
    "chan_d_phone",
    "chan_a_username",
    "chan_c_username",
    "chan_e_username",
];

/// Fields of records that are private in every event carrying the record, beyond the
/// catalog's columns for the type: a conversation's closing note text rides along on
/// every conversation event, a message's text on message.send_failed, a handover's
/// summary and customer details on handover.resolved, a booking's summary, files and
/// customer on every booking event, a call's texts and numbers, a form submission's
/// values. By event type prefix: (prefix, content fields,
/// contact-detail fields).
const RECORD_FIELDS: [(&str, &[&str], &[&str]); 11] = [
    ("conversation.", &["closing_note_text"], &[]),
    // An order's notes and timeline notes; its customer on every order event,
    // order.payment_proof_uploaded included.
    (
        "order.",
        &["notes", "timeline"],
        &["customer_name", "customer_phone"],
    ),
    // The reason a team member wrote down is a note.
    ("contact.opted_out", &["reason"], &[]),
    ("contact.", &["do_not_contact_reason"], &[]),
    ("message.", &["text", "attachments"], &[]),
    ("campaign.", &["text"], &[]),
    (
        "handover.",
        &["summary"],
        &["customer_name", "customer_phone"],
    ),
    ("message_feedback.", &["comment"], &[]),
    (
        "booking.",
        &[
            "conversation_summary",
            "documents",
            "notes",
            "cancel_reason",
        ],
        &["customer_name", "customer_phone"],
    ),
    (
        "call.",
        &["summary", "transcript", "transcript_text", "recording_url"],
        &["from_number", "to_number"],
    ),
    ("form.", &["values"], &[]),
];

/// What an endpoint may receive.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Disclosure {
    /// `include_content`: customer-written content (message text, transcripts, summaries, notes).
    pub content: bool,
    /// `include_contact_details`: names, phones, emails, usernames.
    pub contact_details: bool,
}

/// The content and contact-detail fields of a type: the catalog's columns, the private
/// fields of the record the type carries ([`RECORD_FIELDS`]), plus the channel phone and
/// usernames in the contact-detail set of `contact.` types. Unknown types have none.
pub fn private_fields(event_type: &str) -> (Vec<&'static str>, Vec<&'static str>) {
    let Some(ty) = catalog::find(event_type) else {
        return (Vec::new(), Vec::new());
    };
    let mut content = ty.content_fields.to_vec();
    let mut contact = ty.contact_fields.to_vec();
    for (prefix, record_content, record_contact) in RECORD_FIELDS {
        if event_type.starts_with(prefix) {
            for f in record_content {
                if !content.contains(f) {
                    content.push(f);
                }
            }
            for f in record_contact {
                if !contact.contains(f) {
                    contact.push(f);
                }
            }
        }
    }
    if event_type.starts_with("contact.") {
        for field in CONTACT_CHANNEL_FIELDS {
            if !contact.contains(&field) {
                contact.push(field);
            }
        }
    }
    (content, contact)
}

/// Drops from `data` (top-level keys only) every content field unless `d.content` and every
/// contact field unless `d.contact_details`. In `changes`, a dropped field keeps its key but its
/// previous value becomes JSON null (the name is listed, the value is never sent). A
/// withheld contact detail quoted in a field that stays (an email in a lead's summary) is
/// replaced there by [`WITHHELD`].
pub fn redact(
    event_type: &str,
    data: &mut Value,
    changes: &mut Option<Map<String, Value>>,
    d: Disclosure,
) {
    redact_quoting(event_type, data, changes, d, &[]);
}

/// [`redact`], and when contact details are withheld, `details` too (the name, email,
/// phone and usernames of the contact the event is about) are replaced wherever a kept
/// field quotes them: a handover's summary quotes the customer, who may have typed the
/// email the event itself does not carry.
pub fn redact_quoting(
    event_type: &str,
    data: &mut Value,
    changes: &mut Option<Map<String, Value>>,
    d: Disclosure,
    details: &[String],
) {
    let (content, contact) = private_fields(event_type);
    let mut withheld_details = Vec::new();
    let hidden = (!d.content)
        .then_some(content)
        .into_iter()
        .flatten()
        .map(|f| (f, false))
        .chain(
            (!d.contact_details)
                .then_some(contact)
                .into_iter()
                .flatten()
                .map(|f| (f, true)),
        );
    for (field, is_detail) in hidden {
        if let Value::Object(obj) = data {
            if let Some(removed) = obj.remove(field) {
                if is_detail {
                    withheld_details.push(removed);
                }
            }
        }
        if let Some(previous) = changes.as_mut().and_then(|c| c.get_mut(field)) {
            *previous = Value::Null;
        }
    }
    if !d.contact_details {
        withheld_details.extend(details.iter().cloned().map(Value::String));
    }
    let quoted = quotable(&withheld_details);
    if !quoted.is_empty() {
        scrub(data, &quoted);
        // A previous value quotes them as readily as the new one.
        if let Some(previous) = changes.as_mut() {
            previous.values_mut().for_each(|v| scrub(v, &quoted));
        }
    }
}

/// What stands in for a withheld contact detail quoted in another field.
pub const WITHHELD: &str = "[withheld]";

/// A withheld value to look for in the fields that stay.
#[derive(Debug)]
enum Quoted {
    /// Found as a whole word or words, in any letter case: a whole detail, and each part
    /// of one made of words (from two characters with a letter; shorter ones would match
    /// by chance).
    Text(String),
    /// A phone number's digits: found however the text spaces or punctuates them, also
    /// without the country code.
    Digits(String),
}

/// The least digits a run of text needs to be taken for a phone number.
const PHONE_DIGITS: usize = 7;

fn quotable(values: &[Value]) -> Vec<Quoted> {
    let mut out = Vec::new();
    for v in values {
        let Some(text) = v.as_str() else { continue };
        let text = text.trim();
        if text.chars().count() >= 4 || is_wordlike(text) {
            out.push(Quoted::Text(text.to_string()));
        }
        // Each part of a name on its own: "Ann" of "Ann Lee".
        let mut words = text.split_whitespace();
        if let (Some(_), Some(_)) = (words.next(), words.next()) {
            out.extend(
                text.split_whitespace()
                    .filter(|w| is_wordlike(w))
                    .map(|w| Quoted::Text(w.to_string())),
            );
        }
        let digits: String = text.chars().filter(char::is_ascii_digit).collect();
        let phone_like = text
            .chars()
            .all(|c| c.is_ascii_digit() || " +-().".contains(c));
        if phone_like && digits.len() >= PHONE_DIGITS {
            out.push(Quoted::Digits(digits));
        }
    }
    // Longer texts first, so that one containing another is replaced whole.
    out.sort_by_key(|q| match q {
        Quoted::Text(t) => std::cmp::Reverse(t.len()),
        Quoted::Digits(_) => std::cmp::Reverse(0),
    });
    out
}

/// A text of two characters or more with a letter in it: a name part such as `Li` or
/// `Ann`. A lone initial would replace every `a`, and a run of digits is a phone's part,
/// found as [`Quoted::Digits`] instead.
fn is_wordlike(text: &str) -> bool {
    text.chars().count() >= 2 && text.chars().any(char::is_alphabetic)
}

fn scrub(v: &mut Value, quoted: &[Quoted]) {
    match v {
        Value::String(s) => {
            for q in quoted {
                match q {
                    Quoted::Text(t) => {
                        if let Some(scrubbed) = replace_words(s, t) {
                            *s = scrubbed;
                        }
                    }
                    Quoted::Digits(d) => *s = scrub_phone(s, d),
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|i| scrub(i, quoted)),
        Value::Object(fields) => fields.values_mut().for_each(|f| scrub(f, quoted)),
        _ => {}
    }
}

/// `text` with every occurrence of `word` in any letter case that stands as whole words
/// (no letter or digit just before or after it) replaced by [`WITHHELD`]; `None` when there
/// is none.
fn replace_words(text: &str, word: &str) -> Option<String> {
    let target: Vec<char> = word.chars().flat_map(char::to_lowercase).collect();
    if target.is_empty() {
        return None;
    }
    let mut out = String::with_capacity(text.len());
    let (mut at, mut copied_to, mut found) = (0, 0, false);
    let mut previous: Option<char> = None;
    while let Some(here) = text[at..].chars().next() {
        if let Some(len) = folded_prefix(&text[at..], &target) {
            let end = at + len;
            let alone = previous.is_none_or(|p| !p.is_alphanumeric())
                && text[end..]
                    .chars()
                    .next()
                    .is_none_or(|n| !n.is_alphanumeric());
            if alone {
                out.push_str(&text[copied_to..at]);
                out.push_str(WITHHELD);
                found = true;
                previous = text[at..end].chars().last();
                (at, copied_to) = (end, end);
                continue;
            }
        }
        previous = Some(here);
        at += here.len_utf8();
    }
    out.push_str(&text[copied_to..]);
    found.then_some(out)
}

/// The length in bytes of the start of `text` that reads as `target` in lower case.
fn folded_prefix(text: &str, target: &[char]) -> Option<usize> {
    let mut matched = 0;
    for (i, c) in text.char_indices() {
        for folded in c.to_lowercase() {
            if target.get(matched) != Some(&folded) {
                return None;
            }
            matched += 1;
        }
        if matched == target.len() {
            return Some(i + c.len_utf8());
        }
    }
    None
}

/// `text` with every run of digits (with spaces and phone punctuation between them) that
/// spells `phone`, or its end without a country code, replaced by [`WITHHELD`].
fn scrub_phone(text: &str, phone: &str) -> String {
    let is_part = |c: char| c.is_ascii_digit() || " +-().".contains(c);
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find(|c: char| c.is_ascii_digit() || c == '+' || c == '(') {
        out.push_str(&rest[..start]);
        let run_len = rest[start..]
            .find(|c: char| !is_part(c))
            .unwrap_or(rest.len() - start);
        // Trailing separators belong to the sentence, not the number.
        let run = rest[start..start + run_len].trim_end_matches(|c: char| !c.is_ascii_digit());
        if run.is_empty() {
            // A lone `+` or `(`: one ASCII character, kept.
            out.push_str(&rest[start..start + 1]);
            rest = &rest[start + 1..];
            continue;
        }
        let digits: String = run.chars().filter(char::is_ascii_digit).collect();
        if digits.len() >= PHONE_DIGITS && phone.ends_with(&digits) {
            out.push_str(WITHHELD);
        } else {
            out.push_str(run);
        }
        rest = &rest[start + run.len()..];
    }
    out.push_str(rest);
    out
}

/// An already rendered event body narrowed to what `d` allows now: a stored delivery is
/// sent again (a retry, a redelivery) after its endpoint's settings were lowered.
/// `details` are the contact details the body was rendered with (see [`redact_quoting`]),
/// withheld where it quotes them when `d` no longer discloses them. `None` when the body
/// has nothing `d` withholds, which is the common case and costs no parse.
pub fn narrow(event_type: &str, body: &str, d: Disclosure, details: &[String]) -> Option<String> {
    let (content, contact) = private_fields(event_type);
    let hidden = (!d.content)
        .then_some(content)
        .into_iter()
        .chain((!d.contact_details).then_some(contact))
        .flatten();
    let mut present = !d.contact_details && !details.is_empty();
    for field in hidden {
        present |= body.contains(&format!("\"{field}\":"));
    }
    if !present {
        return None;
    }
    let mut envelope: Value = serde_json::from_str(body).ok()?;
    let fields = envelope.as_object_mut()?;
    let mut changes = match fields.remove("changes") {
        Some(Value::Object(c)) => Some(c),
        _ => None,
    };
    let mut data = fields.remove("data").unwrap_or(Value::Null);
    redact_quoting(event_type, &mut data, &mut changes, d, details);
    fields.insert("data".into(), data);
    fields.insert("changes".into(), changes.map_or(Value::Null, Value::Object));
    serde_json::to_string(&envelope).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const NONE: Disclosure = Disclosure {
        content: false,
        contact_details: false,
    };
    const CONTENT: Disclosure = Disclosure {
        content: true,
        contact_details: false,
    };
    const CONTACT: Disclosure = Disclosure {
        content: false,
        contact_details: true,
    };
    const ALL: Disclosure = Disclosure {
        content: true,
        contact_details: true,
    };

    fn full_contact() -> Value {
        json!({
            "id": 7,
            "object": "contact",
            "name": "Ana Diaz",
            "first_name": "Ana",
            "last_name": "Diaz",
            "phone": "+15550001",
            "email": "ana@x.io",
            "chan_d_phone": "+15550002",
            "chan_a_username": "ana_a",
            "chan_c_username": "ana_c",
            "chan_e_username": "ana_e",
            "custom_fields": {"plan": "gold"},
            "tags": ["vip"],
        })
    }

    fn keys(v: &Value) -> Vec<&str> {
        let mut k: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
        k.sort_unstable();
        k
    }

    fn redacted(event_type: &str, data: Value, d: Disclosure) -> Value {
        let mut data = data;
        redact(event_type, &mut data, &mut None, d);
        data
    }

    #[test]
    fn contact_types_add_channel_phone_and_usernames_to_contact_details() {
        let (content, contact) = private_fields("contact.updated");
        assert_eq!(content, ["do_not_contact_reason"], "a note a person wrote");
        for f in [
            "name",
            "email",
            "custom_fields",
            "chan_d_phone",
            "chan_e_username",
        ] {
            assert!(contact.contains(&f), "{f}");
        }
        let (_, order) = private_fields("order.updated");
        assert_eq!(order, vec!["customer_name", "customer_phone"]);
        assert_eq!(private_fields("nope.created"), (vec![], vec![]));
    }

    #[test]
    fn record_content_is_private_in_every_event_that_carries_the_record() {
        let conv = json!({"id": 1, "status": "open", "closing_note_text": "refund"});
        for t in [
            "conversation.assigned",
            "conversation.reopened",
            "conversation.closed",
        ] {
            assert_eq!(
                redacted(t, conv.clone(), NONE),
                json!({"id": 1, "status": "open"}),
                "{t}"
            );
            assert_eq!(redacted(t, conv.clone(), CONTENT), conv, "{t}");
        }
        let msg = json!({"id": 2, "text": "hi", "attachments": [], "status": "failed"});
        assert_eq!(
            redacted("message.send_failed", msg, NONE),
            json!({"id": 2, "status": "failed"})
        );
        let handover = json!({"id": 3, "summary": "wants a person", "customer_name": "Ann",
            "customer_phone": "+1555", "status": "resolved"});
        assert_eq!(
            redacted("handover.resolved", handover, NONE),
            json!({"id": 3, "status": "resolved"})
        );
    }

    #[test]
    fn contact_created_drops_every_contact_detail_by_default() {
        let data = redacted("contact.created", full_contact(), NONE);
        assert_eq!(keys(&data), vec!["id", "object", "tags"]);
        assert_eq!(data["tags"], json!(["vip"]));
    }

    #[test]
    fn contact_created_keeps_contact_details_when_disclosed() {
        assert_eq!(
            redacted("contact.created", full_contact(), CONTACT),
            full_contact()
        );
    }

    #[test]
    fn note_created_drops_the_body_unless_content_is_disclosed() {
        let note = json!({"id": 3, "contact_id": 7, "body": "called back"});
        assert_eq!(
            redacted("note.created", note.clone(), NONE),
            json!({"id": 3, "contact_id": 7})
        );
        assert_eq!(
            redacted("note.created", note.clone(), CONTACT),
            json!({"id": 3, "contact_id": 7})
        );
        assert_eq!(redacted("note.created", note.clone(), CONTENT), note);
    }

    #[test]
    fn order_updated_drops_customer_name_and_phone_unless_contact_details_are_disclosed() {
        let order =
            json!({"id": 9, "customer_name": "Ana", "customer_phone": "+1555", "total": 12});
        assert_eq!(
            redacted("order.updated", order.clone(), CONTENT),
            json!({"id": 9, "total": 12})
        );
        assert_eq!(redacted("order.updated", order.clone(), CONTACT), order);
    }

    #[test]
    fn contact_updated_changes_hide_previous_values_of_private_fields() {
        let changes = || {
            Some(
                json!({"email": "old@x.io", "tags": ["a"]})
                    .as_object()
                    .unwrap()
                    .clone(),
            )
        };
        let mut data = json!({"id": 7, "email": "new@x.io", "tags": ["a", "b"]});
        let mut c = changes();
        redact("contact.updated", &mut data, &mut c, NONE);
        assert_eq!(data, json!({"id": 7, "tags": ["a", "b"]}));
        assert_eq!(
            Value::Object(c.unwrap()),
            json!({"email": null, "tags": ["a"]})
        );

        let mut data = json!({"id": 7, "email": "new@x.io"});
        let mut c = changes();
        redact("contact.updated", &mut data, &mut c, CONTACT);
        assert_eq!(data, json!({"id": 7, "email": "new@x.io"}));
        assert_eq!(
            Value::Object(c.unwrap()),
            json!({"email": "old@x.io", "tags": ["a"]})
        );
    }

    #[test]
    fn a_type_without_private_fields_is_untouched() {
        let product = json!({"id": 1, "name": "Lamp", "summary": "bright", "phone": "x"});
        let mut data = product.clone();
        let mut c = Some(json!({"name": "Old lamp"}).as_object().unwrap().clone());
        redact("product.created", &mut data, &mut c, NONE);
        assert_eq!(data, product);
        assert_eq!(Value::Object(c.unwrap()), json!({"name": "Old lamp"}));
    }

    #[test]
    fn call_ended_content_and_contact_fields_are_disclosed_independently() {
        let call = json!({
            "id": "call_1",
            "summary": "booked",
            "transcript": "hi",
            "from_number": "+1",
            "to_number": "+2",
            "outcome": "completed",
        });
        assert_eq!(
            keys(&redacted("call.ended", call.clone(), NONE)),
            vec!["id", "outcome"]
        );
        assert_eq!(
            keys(&redacted("call.ended", call.clone(), CONTENT)),
            vec!["id", "outcome", "summary", "transcript"]
        );
        assert_eq!(
            keys(&redacted("call.ended", call.clone(), CONTACT)),
            vec!["from_number", "id", "outcome", "to_number"]
        );
        assert_eq!(redacted("call.ended", call.clone(), ALL), call);
    }

    #[test]
    fn a_withheld_detail_quoted_in_a_kept_field_is_replaced_there() {
        let lead = json!({
            "id": 7,
            "email": "leak@x.io",
            "phone": "+44 20 7946 0958",
            "summary": "shared leak@x.io and +442079460958",
        });
        let data = redacted("contact.lead_captured", lead.clone(), CONTENT);
        assert_eq!(
            data,
            json!({"id": 7, "summary": "shared [withheld] and [withheld]"})
        );
        assert_eq!(redacted("contact.lead_captured", lead.clone(), ALL), lead);
    }

    #[test]
    fn a_quoted_detail_is_found_in_any_letter_case_as_whole_words_only() {
        for (text, expected) in [
            ("I am HANK ITO.", "I am [withheld]."),
            ("hank ito, hank Ito", "[withheld], [withheld]"),
            ("Shank itoh", "Shank itoh"),
            ("", ""),
        ] {
            assert_eq!(
                replace_words(text, "Hank Ito").unwrap_or(text.to_string()),
                expected,
                "{text}"
            );
        }
        assert_eq!(
            replace_words("Straße", "STRASSE"),
            None,
            "folds char by char"
        );
        assert_eq!(
            replace_words("écrit à ÉLÉONORE", "éléonore").as_deref(),
            Some("écrit à [withheld]")
        );
    }

    #[test]
    fn the_contacts_details_given_beside_the_event_are_withheld_where_quoted() {
        let handover = json!({
            "id": 3,
            "customer_name": "Hank Ito",
            "summary": "I am Hank Ito, HANK@example.com",
        });
        let details = ["hank@example.com".to_string(), "Hank Ito".to_string()];
        assert_eq!(
            handover_as_sent(handover.clone(), CONTENT, &details),
            json!({"id": 3, "summary": "I am [withheld], [withheld]"})
        );
        assert_eq!(
            handover_as_sent(handover.clone(), ALL, &details),
            handover,
            "disclosed: nothing is replaced"
        );
    }

    /// A handover's data as an endpoint allowed `d` gets it, `details` being the contact's.
    fn handover_as_sent(mut data: Value, d: Disclosure, details: &[String]) -> Value {
        redact_quoting("handover.requested", &mut data, &mut None, d, details);
        data
    }

    #[test]
    fn each_part_of_a_name_is_withheld_on_its_own_however_short() {
        let details = ["Ann Lee".to_string(), "zed@quinn.io".to_string()];
        let data = json!({
            "summary": "This is Ann Lee. ann needs a human; Lee family, zed@quinn.io, a B plan, 1300",
        });
        let data = handover_as_sent(data, CONTENT, &details);
        assert_eq!(
            data["summary"],
            "This is [withheld]. [withheld] needs a human; [withheld] family, [withheld], a B plan, 1300"
        );
    }

    #[test]
    fn a_withheld_detail_quoted_in_a_previous_value_is_replaced_there() {
        let mut data = json!({"id": 4, "service": "Visit", "location": "Shop"});
        let mut changes = Some(
            json!({"service": "Visit Ann Lee", "location": "call +15550100 or ann@example.com"})
                .as_object()
                .unwrap()
                .clone(),
        );
        let details = [
            "Ann Lee".to_string(),
            "+15550100".to_string(),
            "ann@example.com".to_string(),
        ];
        redact_quoting(
            "booking.updated",
            &mut data,
            &mut changes,
            CONTENT,
            &details,
        );
        assert_eq!(
            Value::Object(changes.unwrap()),
            json!({"service": "Visit [withheld]", "location": "call [withheld] or [withheld]"})
        );
    }

    #[test]
    fn a_withheld_phone_is_found_however_it_is_written() {
        let phone = "+15550100199";
        for (text, expected) in [
            ("call 555 010 0199.", "call [withheld]."),
            (
                "call (555) 010-0199 or +1 555 010 0199",
                "call [withheld] or [withheld]",
            ),
            (
                "order 12 of 3, call 5550100199",
                "order 12 of 3, call [withheld]",
            ),
            ("order 4440100199", "order 4440100199"),
            ("at 10:30 on 2026-01-02", "at 10:30 on 2026-01-02"),
            ("a (b) + c (", "a (b) + c ("),
        ] {
            assert_eq!(scrub_phone(text, &phone[1..]), expected, "{text}");
        }
    }

    #[test]
    fn notes_are_content_and_every_order_event_withholds_its_customer() {
        let order = json!({"id": 9, "notes": "gift", "timeline": [{"note": "called"}],
            "customer_name": "Ana", "customer_phone": "+1555", "payment_proof": {"name": "r.pdf"}});
        assert_eq!(
            redacted("order.payment_proof_uploaded", order, NONE),
            json!({"id": 9, "payment_proof": {"name": "r.pdf"}})
        );
        let opted = json!({"contact_id": 7, "reason": "asked by phone"});
        assert_eq!(
            redacted("contact.opted_out", opted, NONE),
            json!({"contact_id": 7})
        );
        let booking = json!({"id": 1, "notes": "bring forms", "cancel_reason": "ill"});
        assert_eq!(
            redacted("booking.cancelled", booking, NONE),
            json!({"id": 1})
        );
    }

    #[test]
    fn a_stored_body_is_narrowed_to_lowered_settings_and_left_alone_otherwise() {
        let body = json!({
            "id": "evt_1", "type": "contact.updated",
            "data": {"id": 7, "email": "a@x.io", "tags": []},
            "changes": {"email": "old@x.io"},
        })
        .to_string();
        let narrowed: Value =
            serde_json::from_str(&narrow("contact.updated", &body, NONE, &[]).unwrap()).unwrap();
        assert_eq!(narrowed["data"], json!({"id": 7, "tags": []}));
        assert_eq!(narrowed["changes"], json!({"email": null}));
        assert_eq!(narrowed["id"], "evt_1");
        assert_eq!(narrow("contact.updated", &body, CONTACT, &[]), None);
        let plain = json!({"data": {"id": 7, "tags": []}, "changes": null}).to_string();
        assert_eq!(narrow("contact.updated", &plain, NONE, &[]), None);
    }

    #[test]
    fn a_stored_body_quoting_the_contact_withholds_the_details_once_they_are_lowered() {
        let body = json!({
            "id": "evt_2", "type": "handover.requested",
            "data": {"id": 4, "summary": "Customer said: \"I am Ann Lee, ann@x.io\""},
            "changes": null,
        })
        .to_string();
        let details = ["Ann Lee".to_string(), "ann@x.io".to_string()];
        let narrowed: Value =
            serde_json::from_str(&narrow("handover.requested", &body, CONTENT, &details).unwrap())
                .unwrap();
        assert_eq!(
            narrowed["data"]["summary"],
            "Customer said: \"I am [withheld], [withheld]\""
        );
        assert_eq!(narrow("handover.requested", &body, ALL, &details), None);
        assert_eq!(narrow("handover.requested", &body, CONTENT, &[]), None);
    }

    #[test]
    fn nested_fields_and_non_object_data_are_left_alone() {
        let data = json!({"id": 3, "contact": {"email": "a@x.io"}});
        assert_eq!(redacted("contact.created", data.clone(), NONE), data);
        assert_eq!(redacted("note.created", Value::Null, NONE), Value::Null);
    }
}
