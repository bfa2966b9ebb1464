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
const RECORD_FIELDS: [(&str, &[&str], &[&str]); 8] = [
    ("conversation.", &["closing_note_text"], &[]),
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
        &["conversation_summary", "documents"],
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
/// previous value becomes JSON null (the name is listed, the value is never sent).
pub fn redact(
    event_type: &str,
    data: &mut Value,
    changes: &mut Option<Map<String, Value>>,
    d: Disclosure,
) {
    let (content, contact) = private_fields(event_type);
    let hidden = (!d.content)
        .then_some(content)
        .into_iter()
        .chain((!d.contact_details).then_some(contact))
        .flatten();
    for field in hidden {
        if let Value::Object(obj) = data {
            obj.remove(field);
        }
        if let Some(previous) = changes.as_mut().and_then(|c| c.get_mut(field)) {
            *previous = Value::Null;
        }
    }
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
        assert!(content.is_empty());
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
    fn nested_fields_and_non_object_data_are_left_alone() {
        let data = json!({"id": 3, "contact": {"email": "a@x.io"}});
        assert_eq!(redacted("contact.created", data.clone(), NONE), data);
        assert_eq!(redacted("note.created", Value::Null, NONE), Value::Null);
    }
}
