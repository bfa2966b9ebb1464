//! Rules on request bodies that belong to an operation rather than to its body's schema
//! (create and change often share one): fields it requires, needs one of, refuses, and
//! the "at least one field" rule of changes.

use serde_json::{json, Value};

/// A new contact's names and identities: it needs one of them.
const CONTACT_FIELDS: &[&str] = &[
    "first_name",
    "last_name",
    "phone",
    "email",
    "chan_d_phone",
    "chan_a_username",
    "chan_c_username",
    "chan_e_username",
];

/// Fields where `null` reads as "not sent" (they cannot be cleared): a body whose only
/// fields are such nulls is no change, and `null` names no message or contact.
const NULL_MEANS_ABSENT: &[(&str, &[&str])] = &[
    (
        "BookingPatchInput",
        &["service", "starts_at", "duration_minutes"],
    ),
    (
        "OrderPatchInput",
        &["status", "payment_status", "paid_amount", "shipping_fee"],
    ),
    ("CampaignInput", &["name", "text", "channel", "audience"]),
    ("FormInput", &["name", "fields"]),
    ("TeamReplyInput", &["text"]),
    ("LegacyMessageInput", &["text"]),
    ("ChatInput", &["conversationId", "contact"]),
    ("ChannelInput", &["name", "relay_url"]),
    ("ContactInput", CONTACT_FIELDS),
    (
        "EndpointInput",
        &[
            "url",
            "events",
            "filters",
            "include_content",
            "include_contact_details",
            "created_via",
            "status",
        ],
    ),
];

/// Whether `field` of `schema` may be sent as `null` to clear it.
fn clearable(schema: &str, field: &str, property: &Value) -> bool {
    let absent = NULL_MEANS_ABSENT
        .iter()
        .any(|(s, fields)| *s == schema && fields.contains(&field));
    nullable(property) && !absent
}

/// Bodies that must carry at least one of some fields (with a value): the rule of the
/// operation, not of the schema, since create and upsert share one.
const AT_LEAST_ONE: &[(&str, &str, &[&str])] = &[
    ("post", "/contacts", CONTACT_FIELDS),
    (
        "post",
        "/contacts/upsert",
        &[
            "phone",
            "chan_d_phone",
            "email",
            "chan_a_username",
            "chan_c_username",
            "chan_e_username",
        ],
    ),
    ("patch", "/tags/{id}", &["name", "color"]),
    (
        "patch",
        "/orders/{id}",
        &[
            "status",
            "payment_status",
            "paid_amount",
            "shipping_fee",
            "notes",
        ],
    ),
    // Every field of the body.
    ("patch", "/products/{id}", &[]),
    ("patch", "/bookings/{id}", &[]),
    ("patch", "/campaigns/{id}", &[]),
    ("patch", "/webhooks/{id}", &[]),
    ("patch", "/forms/{id}", &[]),
    ("patch", "/reminders/{id}", &[]),
    ("patch", "/channels/{id}", &["name", "relay_url"]),
    ("post", "/chat", &["conversationId", "contact"]),
    ("post", "/messages", &["text", "attachments"]),
    (
        "post",
        "/conversations/{id}/messages",
        &["text", "attachments"],
    ),
];

/// Fields an operation requires although its body schema (shared with another
/// operation) leaves them optional.
const REQUIRED: &[(&str, &str, &[&str])] = &[
    ("post", "/webhooks", &["url", "events"]),
    ("post", "/campaigns", &["name", "text", "channel"]),
    ("post", "/forms", &["name", "fields"]),
    ("post", "/products", &["name"]),
    ("post", "/channels", &["type", "relay_url"]),
];

/// Fields an operation refuses when all of them come with a value: one field set on
/// create only, or two that may not come together.
const FORBIDDEN: &[(&str, &str, &[&str])] = &[
    ("patch", "/channels/{id}", &["type"]),
    ("post", "/messages", &["contact_id", "contact"]),
    ("patch", "/webhooks/{id}", &["created_via"]),
    ("post", "/webhooks", &["status"]),
    ("post", "/chat", &["conversationId", "contact"]),
];

/// Operations that need one of some fields, besides any other rule: the sender of a
/// legacy message.
const NEEDS_ONE_OF: &[(&str, &str, &[&str])] = &[("post", "/messages", &["contact_id", "contact"])];

pub(super) fn operation_needs_one_of(path: &str, method: &str, op: &mut Value) {
    let Some((_, _, fields)) = NEEDS_ONE_OF
        .iter()
        .find(|(m, p, _)| *m == method && *p == path)
    else {
        return;
    };
    let any_of: Vec<Value> = fields
        .iter()
        .map(|f| json!({"required": [f], "properties": {*f: {"not": {"type": "null"}}}}))
        .collect();
    let schema = &mut op["requestBody"]["content"]["application/json"]["schema"];
    *schema = json!({"allOf": [schema.clone(), {"anyOf": any_of}]});
}

pub(super) fn operation_forbids(path: &str, method: &str, op: &mut Value) {
    let Some((_, _, fields)) = FORBIDDEN
        .iter()
        .find(|(m, p, _)| *m == method && *p == path)
    else {
        return;
    };
    let given: serde_json::Map<String, Value> = fields
        .iter()
        .map(|f| (f.to_string(), json!({"not": {"type": "null"}})))
        .collect();
    let schema = &mut op["requestBody"]["content"]["application/json"]["schema"];
    *schema =
        json!({"allOf": [schema.clone(), {"not": {"required": fields, "properties": given}}]});
}

pub(super) fn operation_requires(path: &str, method: &str, op: &mut Value) {
    let Some((_, _, fields)) = REQUIRED.iter().find(|(m, p, _)| *m == method && *p == path) else {
        return;
    };
    let schema = &mut op["requestBody"]["content"]["application/json"]["schema"];
    let present: serde_json::Map<String, Value> = fields
        .iter()
        .map(|f| (f.to_string(), json!({"not": {"type": "null"}})))
        .collect();
    *schema = json!({"allOf": [schema.clone()], "required": fields, "properties": present});
    op["requestBody"]["required"] = json!(true);
}

pub(super) fn at_least_one_field(path: &str, method: &str, op: &mut Value, schemas: &Value) {
    let Some((_, _, fields)) = AT_LEAST_ONE
        .iter()
        .find(|(m, p, _)| *m == method && *p == path)
    else {
        return;
    };
    let schema = &mut op["requestBody"]["content"]["application/json"]["schema"];
    let name = schema["$ref"].as_str().and_then(|r| r.rsplit('/').next());
    let properties = name.map_or(&Value::Null, |n| &schemas[n]["properties"]);
    let all: Vec<String> = match properties.as_object() {
        Some(p) if fields.is_empty() => p.keys().cloned().collect(),
        _ => fields.iter().map(|f| f.to_string()).collect(),
    };
    // A field that can be cleared counts whatever it is sent as (null, "" and [] clear
    // it: a change); any other counts when it holds something.
    let schema_name = name.unwrap_or_default();
    let any_of: Vec<Value> = all
        .iter()
        .map(|f| {
            if clearable(schema_name, f, &properties[f]) {
                json!({"required": [f]})
            } else {
                json!({"required": [f], "properties": {f: {"not": {"enum": [null, "", []]}}}})
            }
        })
        .collect();
    *schema = json!({"allOf": [schema.clone()], "anyOf": any_of});
    op["requestBody"]["required"] = json!(true);
}

/// Whether a property's schema takes `null`.
fn nullable(property: &Value) -> bool {
    let null = json!("null");
    let in_type = match &property["type"] {
        Value::Array(types) => types.contains(&null),
        t => *t == null,
    };
    let in_choice = ["oneOf", "anyOf"].iter().any(|k| {
        property[*k]
            .as_array()
            .is_some_and(|choices| choices.iter().any(nullable))
    });
    in_type || in_choice
}

/// An empty body reads as `{}`, so a body whose schema requires no field may be left out.
pub(super) fn optional_empty_body(op: &mut Value, schemas: &Value) {
    let Some(body) = op.get_mut("requestBody") else {
        return;
    };
    let schema = &body["content"]["application/json"]["schema"];
    let resolved = match schema["$ref"].as_str().and_then(|r| r.rsplit('/').next()) {
        Some(name) => &schemas[name],
        None => schema,
    };
    let needs_a_field = resolved["required"]
        .as_array()
        .is_some_and(|r| !r.is_empty());
    if !needs_a_field {
        body["required"] = json!(false);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whether the document's request body schema of `method path` takes `body`.
    fn body_fits(doc: &Value, method: &str, path: &str, body: Value) -> bool {
        let op = &doc["paths"][path][method]["requestBody"]["content"]["application/json"];
        let schema = json!({"components": doc["components"], "allOf": [op["schema"]]});
        jsonschema::validator_for(&schema)
            .expect("valid schema")
            .is_valid(&body)
    }

    #[test]
    fn bodies_the_domain_refuses_for_a_rule_a_schema_can_state_are_outside_the_document() {
        let doc = crate::http::openapi();
        let fits = |method, path, body| body_fits(&doc, method, path, body);
        // null reads as "not sent" where a field cannot be cleared.
        assert!(!fits(
            "patch",
            "/bookings/{id}",
            json!({"duration_minutes": null})
        ));
        assert!(fits("patch", "/bookings/{id}", json!({"notes": null})));
        assert!(!fits(
            "patch",
            "/orders/{id}",
            json!({"payment_status": null})
        ));
        assert!(fits(
            "patch",
            "/orders/{id}",
            json!({"payment_status": "paid"})
        ));
        assert!(!fits("patch", "/campaigns/{id}", json!({"channel": null})));
        let campaign = json!({"name": "Sale", "text": "Hi", "channel": "sms"});
        assert!(fits("post", "/campaigns", campaign.clone()));
        assert!(!fits(
            "post",
            "/campaigns",
            json!({"name": "Sale", "text": "Hi"})
        ));
        assert!(!fits("post", "/forms", json!({})));
        // A connection is for a relayed channel.
        let relay = "https://relay.example.com/in";
        assert!(fits(
            "post",
            "/channels",
            json!({"type": "sms", "relay_url": relay})
        ));
        assert!(!fits(
            "post",
            "/channels",
            json!({"type": "api", "relay_url": relay})
        ));
        // A message has words (not only spaces) or attachments.
        for (path, body) in [
            (
                "/conversations",
                json!({"contact_id": 1, "channel": "api", "text": " "}),
            ),
            (
                "/conversations/{id}/messages",
                json!({"text": null, "attachments": []}),
            ),
            (
                "/messages",
                json!({"contact_id": 1, "text": null, "attachments": []}),
            ),
            ("/chat", json!({"contact": null, "message": "hi"})),
        ] {
            assert!(!fits("post", path, body), "{path}");
        }
        assert!(fits(
            "post",
            "/conversations/{id}/messages",
            json!({"text": "hi"})
        ));
        assert!(fits(
            "post",
            "/chat",
            json!({"conversationId": 1, "message": "hi"})
        ));
        // Choices: at least one, printable, with the select types only.
        let select =
            |options: Value| json!({"label": "Size", "type": "select", "options": options});
        assert!(fits("post", "/custom-fields", select(json!(["S", "M"]))));
        assert!(!fits("post", "/custom-fields", select(json!([""]))));
        assert!(!fits("post", "/custom-fields", select(json!(["S", "S"]))));
        let field = |kind: &str, options: Value| json!({"fields": [{"key": "k", "label": "L", "type": kind, "options": options}]});
        assert!(fits("patch", "/forms/{id}", field("select", json!(["a"]))));
        assert!(!fits("patch", "/forms/{id}", field("select", json!([]))));
        assert!(!fits("patch", "/forms/{id}", field("text", json!(["a"]))));
        // A key is sent, or made from a label with a letter; never a built-in field's.
        assert!(!fits("post", "/custom-fields", json!({"label": "0"})));
        assert!(fits(
            "post",
            "/custom-fields",
            json!({"label": "0", "key": "size_2"})
        ));
        assert!(!fits(
            "post",
            "/custom-fields",
            json!({"label": "0", "key": "notes"})
        ));
        // A null the domain reads as "not sent" is still taken beside a real change, and
        // a list that clears a product's tags is a change.
        let form = json!({"name": null, "fields": [{"key": "k", "label": "L", "type": "text"}]});
        assert!(fits("patch", "/forms/{id}", form));
        assert!(fits("patch", "/products/{id}", json!({"tags": []})));
        // Prices are amounts or short texts; legacy channels and attachments as taken.
        assert!(fits(
            "patch",
            "/products/{id}",
            json!({"price": 9.5, "original_price": "from 12"})
        ));
        assert!(!fits(
            "patch",
            "/products/{id}",
            json!({"price": {"amount": 1}})
        ));
        assert!(!fits("patch", "/products/{id}", json!({"price": -1})));
        let legacy = |channel: &str| json!({"contact_id": 1, "text": "hi", "channel": channel});
        assert!(fits("post", "/messages", legacy("sms")));
        assert!(!fits("post", "/messages", legacy("fax")));
        let attachment = |url: &str| json!({"attachments": [{"type": "image", "url": url}]});
        assert!(fits(
            "post",
            "/conversations/{id}/messages",
            attachment("https://x.example/a.png")
        ));
        assert!(!fits(
            "post",
            "/conversations/{id}/messages",
            attachment("http://x.example/a.png")
        ));
        // Set on create only, or not together.
        let chat = json!({"conversationId": 1, "contact": {"phone": "+15550001"}, "message": "hi"});
        assert!(!fits("post", "/chat", chat));
        assert!(fits(
            "post",
            "/chat",
            json!({"conversationId": 1, "contact": null, "message": "hi"})
        ));
        assert!(!fits(
            "patch",
            "/channels/{id}",
            json!({"name": "Desk", "type": "sms"})
        ));
        assert!(fits(
            "patch",
            "/channels/{id}",
            json!({"name": "Desk", "type": null})
        ));
        assert!(!fits(
            "patch",
            "/webhooks/{id}",
            json!({"created_via": "api"})
        ));
        assert!(fits(
            "post",
            "/webhooks/{id}/test",
            json!({"event": "contact.created"})
        ));
        assert!(!fits(
            "post",
            "/webhooks/{id}/test",
            json!({"event": "contact.exploded"})
        ));
        // A legacy message names its sender once; a submitter gives a phone or an email.
        assert!(!fits("post", "/messages", json!({"text": "hi"})));
        let both = json!({"contact_id": 1, "contact": {"phone": "+15550001"}, "text": "hi"});
        assert!(!fits("post", "/messages", both));
        let by_username = |channel: &str| json!({"contact": {"username": "ann"}, "channel": channel, "text": "hi"});
        assert!(fits("post", "/messages", by_username("chan_a")));
        assert!(!fits("post", "/messages", by_username("sms")));
        let no_channel = json!({"contact": {"username": "ann"}, "message": "hi"});
        assert!(!fits("post", "/chat", no_channel));
        let chat = |phone: &str| json!({"contact": {"phone": phone}, "message": "hi"});
        assert!(fits("post", "/chat", chat("+1 555 0001")));
        assert!(!fits("post", "/chat", chat("call me")));
        let submission = |contact: Value| json!({"contact": contact, "values": {}});
        assert!(!fits(
            "post",
            "/forms/{id}/submissions",
            submission(json!({"name": "Ann"}))
        ));
        let status = |status: &str| json!({"status": status, "reason": "rain"});
        assert!(fits("put", "/bookings/{id}/status", status("cancelled")));
        assert!(!fits("put", "/bookings/{id}/status", status("confirmed")));
        assert!(!fits("patch", "/webhooks/{id}", json!({"status": null})));
        assert!(fits(
            "patch",
            "/webhooks/{id}",
            json!({"description": null})
        ));
        let filters = json!({"url": "https://a.example/h", "events": ["*"],
            "filters": {"channels": ["fax"]}});
        assert!(!fits("post", "/webhooks", filters));
        assert!(!fits("post", "/contacts", json!({"first_name": null})));
        assert!(!fits(
            "patch",
            "/webhooks/{id}",
            json!({"status": "disabled"})
        ));
        assert!(fits("patch", "/webhooks/{id}", json!({"status": "paused"})));
        // An endpoint's status is set with PATCH; source filters name catalog types.
        let endpoint = |extra: Value| {
            let mut body = json!({"url": "https://a.example/h", "events": ["*"]});
            body.as_object_mut()
                .unwrap()
                .extend(extra.as_object().unwrap().clone());
            body
        };
        assert!(!fits(
            "post",
            "/webhooks",
            endpoint(json!({"status": "paused"}))
        ));
        assert!(fits("post", "/webhooks", endpoint(json!({"status": null}))));
        let sources = |sources: Value| endpoint(json!({"filters": {"sources": sources}}));
        assert!(fits(
            "post",
            "/webhooks",
            sources(json!({"contact.created": ["import"]}))
        ));
        assert!(!fits(
            "post",
            "/webhooks",
            sources(json!({"contact.exploded": ["import"]}))
        ));
        assert!(!fits(
            "post",
            "/webhooks",
            sources(json!({"contact.created": [""]}))
        ));
        // Sources, names and submitters' names as the domain takes them.
        let contact = |source: &str| json!({"first_name": "Ann", "source": source});
        assert!(fits("post", "/contacts", contact("import")));
        assert!(!fits("post", "/contacts", contact("")));
        let note = |name: &str| json!({"name": name});
        assert!(fits("post", "/closing-notes", note("Solved")));
        assert!(!fits("post", "/closing-notes", note("\u{200b}\u{E0856}")));
        let named = |name: &str| submission(json!({"name": name, "phone": "+15550001"}));
        assert!(fits("post", "/forms/{id}/submissions", named("Ann Lee")));
        assert!(!fits("post", "/forms/{id}/submissions", named("Ann\u{1}")));
        let faq = |keywords: Value| json!({"faq": [{"answer": "Yes", "keywords": keywords}]});
        assert!(fits("patch", "/ai-settings", faq(json!(["open"]))));
        assert!(!fits("patch", "/ai-settings", faq(json!([]))));
    }
}
