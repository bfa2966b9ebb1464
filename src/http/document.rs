//! What every operation shares, written into the OpenAPI document once instead of into
//! each route's attribute: the error answers that apply to it (with the error envelope),
//! the request headers it reads (`X-Service-Workspace`, `Idempotency-Key`), the response
//! headers it sends (`RateLimit-*`, `Retry-After`, `Idempotent-Replayed`), a summary for
//! operations without one, and the 58 webhook events in the document's `webhooks` section.

use serde_json::{json, Map, Value};
use switchboard_actors::domain::contact::Channel;
use switchboard_actors::domain::product::MAX_PRICE;
use switchboard_actors::events::catalog::CATALOG;
use switchboard_actors::events::{samples, subscription, API_VERSION};
use switchboard_actors::ids::{EndpointId, UserId};

const METHODS: [&str; 5] = ["get", "post", "put", "patch", "delete"];

/// Routes that answer `{message}` errors, need the inbox permission and are not rate
/// limited.
const LEGACY: [&str; 2] = ["/messages", "/chat"];

/// Routes that need a credential but no workspace.
const NO_WORKSPACE: [&str; 2] = ["/me", "/events"];

/// Completes `doc` (the document as JSON) in place.
pub fn complete(doc: &mut Value) {
    add_schemas(doc);
    let schemas = doc["components"]["schemas"].clone();
    if let Some(paths) = doc.get_mut("paths").and_then(Value::as_object_mut) {
        for (path, item) in paths.iter_mut() {
            for method in METHODS {
                if let Some(op) = item.get_mut(method) {
                    complete_operation(path, method, op);
                    optional_empty_body(op, &schemas);
                    at_least_one_field(path, method, op, &schemas);
                    operation_requires(path, method, op);
                    operation_forbids(path, method, op);
                    operation_needs_one_of(path, method, op);
                }
            }
        }
    }
    flat_funnels(doc);
    doc["webhooks"] = webhooks();
}

/// `GET /funnels?flat=true` answers a list of `funnel_stage` rows instead of funnels.
fn flat_funnels(doc: &mut Value) {
    let schemas = &mut doc["components"]["schemas"];
    let Some(funnels) = schemas.get("ListEnvelope_Funnel").cloned() else {
        return;
    };
    let mut rows = funnels;
    rows["properties"]["data"]["items"] = json!({"$ref": "#/components/schemas/StageRow"});
    schemas["ListEnvelope_StageRow"] = rows;
    let ok = doc.pointer_mut("/paths/~1funnels/get/responses/200/content/application~1json/schema");
    if let Some(schema) = ok {
        *schema = json!({"anyOf": [
            {"$ref": "#/components/schemas/ListEnvelope_Funnel"},
            {"$ref": "#/components/schemas/ListEnvelope_StageRow"}
        ], "description": "Funnels with their stages; with flat=true, one row per stage."});
    }
}

fn add_schemas(doc: &mut Value) {
    let schemas = &mut doc["components"]["schemas"];
    bound_integers(schemas);
    // Names of tags, closing notes, people and products: printable text, not only spaces.
    for (schema, field) in [
        ("NewTagInput", "name"),
        ("TagPatchInput", "name"),
        ("NewClosingNoteInput", "name"),
        ("ContactInput", "first_name"),
        ("ContactInput", "last_name"),
        ("ContactPatchInput", "first_name"),
        ("ContactPatchInput", "last_name"),
        ("ProductInput", "name"),
        ("NewBookingInput", "service"),
        ("BookingPatchInput", "service"),
        ("ItemInput", "name"),
        ("CampaignInput", "name"),
        ("FormInput", "name"),
        ("FormFieldInput", "label"),
        ("NewCustomFieldInput", "label"),
    ] {
        if let Some(f) = schemas.pointer_mut(&format!("/{schema}/properties/{field}")) {
            f["pattern"] = json!(PRINTABLE);
        }
    }
    // Lists of names: each a printable name too.
    for (schema, field, max) in [
        ("ContactInput", "tags", 80),
        ("ProductInput", "tags", 100),
        ("ProductInput", "categories", 100),
    ] {
        if let Some(f) = schemas.pointer_mut(&format!("/{schema}/properties/{field}")) {
            f["items"] =
                json!({"type": "string", "minLength": 1, "maxLength": max, "pattern": PRINTABLE});
        }
    }
    // Phones, countries and currencies as the domain checks them (any case, trimmed).
    for schema in ["ContactInput", "ContactPatchInput"] {
        for field in ["phone", "chan_d_phone"] {
            if let Some(f) = schemas.pointer_mut(&format!("/{schema}/properties/{field}")) {
                f["pattern"] = json!(PHONE);
                f["maxLength"] = json!(50);
            }
        }
        if let Some(f) = schemas.pointer_mut(&format!("/{schema}/properties/country_code")) {
            f["pattern"] = json!(any_case_of(
                switchboard_actors::domain::contact::known_countries()
            ));
        }
    }
    if let Some(f) = schemas.pointer_mut("/NewOrderInput/properties/currency") {
        f["pattern"] = json!(any_case_of(
            switchboard_actors::domain::money::known_currencies()
        ));
    }
    // Options come with the select types, and only with them.
    if let Some(field) = schemas.get_mut("NewCustomFieldInput") {
        field["if"] = json!({
            "required": ["type"],
            "properties": {"type": {"enum": ["select", "multi_select"]}}
        });
        field["then"] = json!({
            "required": ["options"],
            "properties": {"options": {"type": "array", "minItems": 1, "maxItems": 200}}
        });
        field["else"] = json!({"properties": {"options": {"type": "null"}}});
    }
    // A customer is named by at least one identity.
    if let Some(contact) = schemas.get_mut("LegacyContact") {
        contact["anyOf"] = json!(["phone", "email", "username"]
            .into_iter()
            .map(|f| json!({"required": [f], "properties": {f: {"type": "string", "pattern": "\\S"}}}))
            .collect::<Vec<_>>());
    }
    // A name may be left out of a change, but not cleared.
    for schema in ["TagPatchInput", "ProductInput"] {
        if let Some(name) = schemas.pointer_mut(&format!("/{schema}/properties/name")) {
            name["type"] = json!("string");
        }
    }
    // Set on create or upsert only: a change that names them is refused.
    if let Some(props) = schemas
        .pointer_mut("/ContactPatchInput/properties")
        .and_then(Value::as_object_mut)
    {
        for field in ["source", "tags", "stage_id", "assigned_to_user_id"] {
            props.remove(field);
        }
    }
    // AI keywords hold a letter or digit (Unicode-aware `\w`, less the underscore).
    let keyword = json!({"type": "string", "minLength": 1, "maxLength": 100, "pattern": "[^\\W_]"});
    for pointer in [
        "/FaqEntry/properties/keywords",
        "/AiSettingsPatch/properties/handover_keywords",
    ] {
        if let Some(words) = schemas.pointer_mut(pointer) {
            words["items"] = keyword.clone();
        }
    }
    // Reminder assignees are user ids.
    for schema in ["NewReminderInput", "ReminderPatchInput"] {
        if let Some(ids) = schemas.pointer_mut(&format!("/{schema}/properties/assignee_user_ids")) {
            ids["items"] = json!({"type": "string", "pattern": UserId::pattern()});
        }
    }
    // Emails, web addresses and durations in a form the domain accepts (a subset of
    // what it accepts: the checks are code, not patterns).
    for schema in [
        "ContactInput",
        "ContactPatchInput",
        "LegacyContact",
        "SubmissionContactInput",
    ] {
        if let Some(f) = schemas.pointer_mut(&format!("/{schema}/properties/email")) {
            f["pattern"] = json!(EMAIL);
            f["maxLength"] = json!(320);
        }
    }
    for field in ["url", "image_url"] {
        if let Some(f) = schemas.pointer_mut(&format!("/ProductInput/properties/{field}")) {
            f["pattern"] = json!(url_pattern("https?"));
            f["maxLength"] = json!(2048);
        }
    }
    if let Some(f) = schemas.pointer_mut("/ProductInput/properties/images") {
        f["items"] = json!({"type": "string", "maxLength": 2048, "pattern": url_pattern("https?")});
    }
    for field in ["followup_after", "auto_close_after"] {
        if let Some(f) = schemas.pointer_mut(&format!("/AiSettingsPatch/properties/{field}")) {
            f["pattern"] = json!(SPAN);
        }
    }
    for pointer in [
        "/DocumentInput/properties/url",
        "/NewCallInput/properties/recording_url",
    ] {
        if let Some(f) = schemas.pointer_mut(pointer) {
            f["pattern"] = json!(url_pattern("https"));
        }
    }
    for schema in ["ContactInput", "ContactPatchInput"] {
        for field in ["chan_a_username", "chan_c_username", "chan_e_username"] {
            if let Some(f) = schemas.pointer_mut(&format!("/{schema}/properties/{field}")) {
                f["pattern"] = json!(USERNAME);
            }
        }
    }
    // Webhook and relay URLs: https with a named host (an address is checked where it
    // resolves, and private ones are refused unless the operator allows them).
    for pointer in [
        "/EndpointInput/properties/url",
        "/ChannelInput/properties/relay_url",
    ] {
        if let Some(f) = schemas.pointer_mut(pointer) {
            f["pattern"] = json!(url_pattern("https"));
        }
    }
    if let Some(f) = schemas.pointer_mut("/FaqEntry/properties/answer") {
        *f = json!({"type": "string", "minLength": 1, "maxLength": 10_000, "pattern": "\\S"});
    }
    if let Some(f) = schemas.pointer_mut("/ProductInput/properties/stock_quantity") {
        f["minimum"] = json!(0);
    }
    // A new booking starts pending or confirmed.
    if let Some(f) = schemas.pointer_mut("/NewBookingInput/properties/status") {
        *f = json!({"type": ["string", "null"], "enum": ["pending", "confirmed", null]});
    }
    if let Some(f) = schemas.pointer_mut("/AiSettingsPatch/properties/appointment_reminders") {
        f["items"] = json!({"type": "string", "pattern": SPAN});
    }
    // An endpoint's events: catalog types, `<prefix>.*` wildcards and `*`.
    if let Some(f) = schemas.pointer_mut("/EndpointInput/properties/events") {
        f["items"] = json!({"type": "string", "enum": subscription::valid_entries()});
    }
    if let Some(tags) = schemas.pointer_mut("/ContactTagsInput/properties/tags") {
        tags["items"] =
            json!({"type": "string", "minLength": 1, "maxLength": 80, "pattern": PRINTABLE});
    }
    texts_and_choices(schemas);
    schemas["LegacyError"] = json!({
        "type": "object",
        "description": "The error shape of the legacy routes.",
        "required": ["message"],
        "properties": {"message": {"type": "string"}}
    });
}

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

/// Message texts, choices and keys in the forms the domain accepts.
fn texts_and_choices(schemas: &mut Value) {
    // A message's words: 1 to 10,000 characters, not only spaces.
    let text =
        json!({"type": ["string", "null"], "minLength": 1, "maxLength": 10_000, "pattern": "\\S"});
    for pointer in [
        "/TeamReplyInput/properties/text",
        "/NewConversationInput/properties/text",
        "/LegacyMessageInput/properties/text",
    ] {
        if let Some(f) = schemas.pointer_mut(pointer) {
            *f = text.clone();
        }
    }
    // A connection is for a channel the service sends through: never `api`.
    if let Some(f) = schemas.pointer_mut("/ChannelInput/properties/type") {
        let relayed: Vec<Value> = Channel::ALL
            .iter()
            .filter(|c| **c != Channel::Api)
            .filter_map(|c| serde_json::to_value(c).ok())
            .collect();
        let mut choices = relayed;
        choices.push(Value::Null);
        *f = json!({"type": ["string", "null"], "enum": choices, "description": "Any channel but `api`; set on create only."});
    }
    // Choices: printable, distinct, 1 to 200 of them.
    let choices = json!({
        "type": "array", "minItems": 1, "maxItems": 200, "uniqueItems": true,
        "items": {"type": "string", "minLength": 1, "maxLength": 200, "pattern": PRINTABLE}
    });
    if let Some(field) = schemas.get_mut("NewCustomFieldInput") {
        field["then"]["properties"]["options"] = choices.clone();
        // Without a key, the label must hold a letter to make one of.
        field["properties"]["key"]["pattern"] = json!(FIELD_KEY);
        field["properties"]["key"]["maxLength"] = json!(64);
        field["properties"]["key"]["not"] =
            json!({"enum": switchboard_actors::domain::custom_field::BUILT_IN_CONTACT_FIELDS});
        field["anyOf"] = json!([
            {"required": ["key"], "properties": {"key": {"not": {"type": "null"}}}},
            {"properties": {"label": {"pattern": "[A-Za-z]"}}}
        ]);
    }
    if let Some(field) = schemas.get_mut("FormFieldInput") {
        field["if"] = json!({"properties": {"type": {"const": "select"}}});
        field["then"] = json!({"required": ["options"], "properties": {"options": choices}});
        field["else"] = json!({"properties": {"options": {"type": "null"}}});
    }
    // The legacy routes name a channel by its name.
    let mut channels: Vec<Value> = Channel::ALL
        .iter()
        .filter_map(|c| serde_json::to_value(c).ok())
        .collect();
    channels.push(Value::Null);
    for schema in ["LegacyMessageInput", "ChatInput"] {
        if let Some(f) = schemas.pointer_mut(&format!("/{schema}/properties/channel")) {
            f["enum"] = json!(channels);
        }
    }
    // A price: an amount up to 100,000,000, or a short printable text.
    let price = json!({"oneOf": [
        {"type": "number", "minimum": 0, "maximum": MAX_PRICE},
        {"type": "string", "minLength": 1, "maxLength": 50, "pattern": PRINTABLE},
        {"type": "null"}
    ]});
    if let Some(f) = schemas.pointer_mut("/ProductInput/properties/currency") {
        f["maxLength"] = json!(10);
    }
    if let Some(f) = schemas.pointer_mut("/Attachment/properties/url") {
        f["pattern"] = json!(url_pattern("https"));
        f["maxLength"] = json!(2048);
    }
    for schema in ["ProductInput", "ProductView"] {
        for field in ["price", "original_price"] {
            if let Some(f) = schemas.pointer_mut(&format!("/{schema}/properties/{field}")) {
                let description = f.get("description").cloned();
                *f = price.clone();
                if let Some(d) = description {
                    f["description"] = d;
                }
            }
        }
    }
    // Attachments: up to ten, each named in 1 to 255 characters.
    for schema in ["LegacyMessageInput", "TeamReplyInput"] {
        if let Some(f) = schemas.pointer_mut(&format!("/{schema}/properties/attachments")) {
            f["maxItems"] = json!(switchboard_actors::domain::message::MAX_ATTACHMENTS);
        }
    }
    if let Some(f) = schemas.pointer_mut("/Attachment/properties/name") {
        f["minLength"] = json!(1);
        f["maxLength"] = json!(255);
    }
    if let Some(f) = schemas.pointer_mut("/LegacyMessageInput/properties/message_id") {
        f["minLength"] = json!(1);
        f["maxLength"] = json!(200);
    }
    if let Some(f) = schemas.pointer_mut("/CampaignInput/properties/text") {
        f["pattern"] = json!("\\S");
    }
    if let Some(f) = schemas.pointer_mut("/ChannelInput/properties/name") {
        f["pattern"] = json!(PRINTABLE);
    }
    for pointer in [
        "/TagPatchInput/properties/name",
        "/NewClosingNoteInput/properties/name",
    ] {
        if let Some(f) = schemas.pointer_mut(pointer) {
            f["minLength"] = json!(1);
            f["maxLength"] = json!(80);
        }
    }
    if let Some(f) = schemas.pointer_mut("/AiSettingsPatch/properties/appointment_reminders") {
        f["maxItems"] = json!(10);
    }
    if let Some(f) = schemas.pointer_mut("/EndpointInput/properties/created_via") {
        f["enum"] = json!(["api", "tool_a", "tool_b", "tool_c", null]);
    }
    if let Some(f) = schemas.pointer_mut("/TestInput/properties/event") {
        let mut types: Vec<Value> = CATALOG.iter().map(|t| json!(t.name)).collect();
        types.extend([json!("webhook.test"), Value::Null]);
        f["enum"] = json!(types);
    }
    // A legacy sender's phone and username as contacts take them.
    if let Some(f) = schemas.pointer_mut("/LegacyContact/properties/phone") {
        f["pattern"] = json!(PHONE);
        f["maxLength"] = json!(50);
    }
    if let Some(f) = schemas.pointer_mut("/LegacyContact/properties/username") {
        f["pattern"] = json!(USERNAME);
    }
    // A form's submitter gives a phone or an email.
    if let Some(contact) = schemas.get_mut("SubmissionContactInput") {
        contact["anyOf"] = json!(["phone", "email"]
            .map(|f| json!({"required": [f], "properties": {f: {"not": {"type": "null"}}}})));
    }
    // A reason goes with a cancellation only.
    if let Some(status) = schemas.get_mut("BookingStatusInput") {
        status["if"] = json!({"properties": {"status": {"not": {"const": "cancelled"}}}});
        status["then"] = json!({"properties": {"reason": {"type": "null"}}});
    }
    // Endpoint filters name channels and actor kinds.
    use switchboard_actors::domain::webhook::{MAX_ACTOR_TYPES, MAX_CHANNELS};
    for (field, kind, most) in [
        ("channels", "Channel", MAX_CHANNELS),
        ("actor_types", "ActorKind", MAX_ACTOR_TYPES),
    ] {
        if let Some(f) = schemas.pointer_mut(&format!("/FiltersInput/properties/{field}")) {
            f["items"] = json!({"$ref": format!("#/components/schemas/{kind}")});
            f["maxItems"] = json!(most);
        }
    }
    // An endpoint's status is the client's to pause and resume; `disabled` is the service's.
    if let Some(f) = schemas.pointer_mut("/EndpointInput/properties/status") {
        f["enum"] = json!(["active", "paused", null]);
    }
    if let Some(f) = schemas.pointer_mut("/LegacyContact/properties/name") {
        f["pattern"] = json!(PRINTABLE);
    }
    // FAQ entries and handover words: as many keywords as the settings hold.
    if let Some(f) = schemas.pointer_mut("/FaqEntry/properties/keywords") {
        f["minItems"] = json!(1);
        f["maxItems"] = json!(20);
    }
    if let Some(f) = schemas.pointer_mut("/AiSettingsPatch/properties/handover_keywords") {
        f["maxItems"] = json!(50);
    }
}

/// A custom field key: lower_snake_case from a letter, up to 64 characters.
const FIELD_KEY: &str = "^[a-z][a-z0-9]{0,63}(_[a-z0-9]+)*$";

/// An email address of dot-separated words at a dotted domain.
const EMAIL: &str = concat!(
    "^[A-Za-z0-9_%+-]{1,20}(\\.[A-Za-z0-9_%+-]{1,20}){0,2}",
    "@[A-Za-z0-9]([A-Za-z0-9-]{0,20}[A-Za-z0-9])?(\\.[A-Za-z0-9]([A-Za-z0-9-]{0,20}[A-Za-z0-9])?){1,3}$"
);

/// An address of `scheme` (a regular expression: `https?`, `https`) with a named host (its
/// last label starts with a letter, so it never reads as an IP address; no `--`, so never
/// a punycode label).
fn url_pattern(scheme: &str) -> String {
    format!(
        "^{scheme}://([A-Za-z0-9]{{1,10}}(-[A-Za-z0-9]{{1,10}}){{0,2}}\\.){{0,3}}{}{}{}",
        "[A-Za-z][A-Za-z0-9]{0,9}(-[A-Za-z0-9]{1,10}){0,2}",
        "(:(6553[0-5]|655[0-2][0-9]|65[0-4][0-9]{2}|6[0-4][0-9]{3}|[1-5][0-9]{4}|[0-9]{1,4}))?",
        "([/?#][^\\s\\x00-\\x1f\\x7f-\\x9f]*)?$"
    )
}

/// A username as the domain takes it: no spaces, one leading `@` at most (dropped).
const USERNAME: &str = "^@?[^\\s@][^\\s]{0,98}$";

/// A duration of up to 365 days: seconds and minutes up to 9999, hours up to 999, days up
/// to 365.
const SPAN: &str =
    "^([1-9][0-9]{0,3}[sm]|[1-9][0-9]{0,2}h|([1-9][0-9]?|[12][0-9]{2}|3[0-5][0-9]|36[0-5])d)$";

/// Digits with `+ - ( ) .` and spaces; at least three digits.
const PHONE: &str = "^[ +\\-().]*([0-9][ +\\-().]*){3,}$";

/// A pattern that matches any of `codes` in any case, with spaces around.
fn any_case_of<'a>(codes: impl Iterator<Item = &'a str>) -> String {
    let alternatives: Vec<String> = codes
        .map(|code| {
            code.chars()
                .map(|c| format!("[{}{}]", c.to_ascii_uppercase(), c.to_ascii_lowercase()))
                .collect()
        })
        .collect();
    format!("^\\s*({})\\s*$", alternatives.join("|"))
}

/// Text with something besides spaces and no control characters.
const PRINTABLE: &str = "^[^\\u0000-\\u001f\\u007f-\\u009f\\u2028\\u2029]*[^\\s\\u0000-\\u001f\\u007f-\\u009f\\u2028\\u2029][^\\u0000-\\u001f\\u007f-\\u009f\\u2028\\u2029]*$";

/// Integer fields are 64-bit: unsigned ones (ids, counts) up to u64::MAX, signed up to
/// i64::MAX, unless a tighter bound is documented.
fn bound_integers(schemas: &mut Value) {
    let Some(all) = schemas.as_object_mut() else {
        return;
    };
    for schema in all.values_mut() {
        let Some(props) = schema.get_mut("properties").and_then(Value::as_object_mut) else {
            continue;
        };
        for prop in props.values_mut() {
            let is_integer = prop["type"] == "integer"
                || prop["type"]
                    .as_array()
                    .is_some_and(|t| t.iter().any(|t| t == "integer"));
            if !is_integer || prop.get("maximum").is_some() {
                continue;
            }
            let unsigned = prop["minimum"].as_i64().is_some_and(|m| m >= 0);
            prop["maximum"] = if unsigned {
                json!(u64::MAX)
            } else {
                json!(i64::MAX)
            };
        }
    }
}

fn error(description: &str, legacy: bool) -> Value {
    let schema = if legacy { "LegacyError" } else { "ErrorBody" };
    json!({
        "description": description,
        "content": {"application/json": {"schema": {"$ref": format!("#/components/schemas/{schema}")}}}
    })
}

fn header(description: &str, kind: &str) -> Value {
    json!({"description": description, "schema": {"type": kind}})
}

fn rate_headers() -> Map<String, Value> {
    let mut h = Map::new();
    h.insert(
        "RateLimit-Limit".into(),
        header("Requests the workspace may make per minute.", "integer"),
    );
    h.insert(
        "RateLimit-Remaining".into(),
        header("Requests that may be sent right now.", "integer"),
    );
    h.insert(
        "RateLimit-Reset".into(),
        header("Seconds until the budget is full again.", "integer"),
    );
    h
}

fn complete_operation(path: &str, method: &str, op: &mut Value) {
    let legacy = LEGACY.contains(&path);
    let needs_workspace = !NO_WORKSPACE.contains(&path);
    let has_body = op.get("requestBody").is_some();
    let has_path_id = path.contains('{');
    let has_query = op["parameters"]
        .as_array()
        .is_some_and(|ps| ps.iter().any(|p| p["in"] == "query"));

    if op.get("summary").is_none() {
        if let Some(id) = op["operationId"].as_str() {
            op["summary"] = json!(sentence(id));
        }
    }
    if op.get("description").is_none() {
        let summary = op["summary"].as_str().unwrap_or_default().to_string();
        op["description"] = json!(format!("{summary}. {}", success_of(op)));
    }

    let params = op["parameters"].as_array_mut().map(std::mem::take);
    let mut params = params.unwrap_or_default();
    if needs_workspace {
        params.push(json!({
            "name": "X-Service-Workspace",
            "in": "header",
            "required": false,
            "description": "The workspace to act on, for a person's token that reaches several; an API key always acts on its own.",
            "schema": {"type": "string"}
        }));
    }
    // Every POST takes an Idempotency-Key but `/chat` (no repeat protection); a route
    // that describes its own (`/messages`) keeps its words, with the key's format.
    let key_schema = json!({"type": "string", "pattern": "^[!-~]{1,200}$"});
    let own_key = params.iter_mut().find(|p| p["name"] == "Idempotency-Key");
    match own_key {
        Some(own) => own["schema"] = key_schema,
        None if method == "post" && path != "/chat" => params.push(json!({
            "name": "Idempotency-Key",
            "in": "header",
            "required": false,
            "description": "Repeats with the same key and body answer the first response for 24 hours, with Idempotent-Replayed: true; the same key with another request answers 409 idempotency_key_reused.",
            "schema": key_schema
        })),
        None => {}
    }
    // A body that may be left out is optional, not `null`: an action without fields
    // takes no body, or `{}`.
    let body = op.pointer_mut("/requestBody/content/application~1json/schema");
    if let Some(choices) = body.as_ref().and_then(|b| b["oneOf"].as_array()).cloned() {
        let not_null: Vec<Value> = choices
            .iter()
            .filter(|c| c["type"] != "null")
            .cloned()
            .collect();
        if let (Some(body), [only], 2) = (body, not_null.as_slice(), choices.len()) {
            *body = only.clone();
        }
    }
    for p in params.iter_mut() {
        bound_parameter(path, p);
    }
    op["parameters"] = Value::Array(params);

    let responses = op["responses"].as_object_mut();
    let Some(responses) = responses else { return };
    let mut add = |status: &str, description: &str| {
        responses
            .entry(status.to_string())
            .or_insert_with(|| error(description, legacy));
    };
    add(
        "401",
        "The credential is missing, unknown, revoked or expired.",
    );
    if method == "post" {
        add(
            "409",
            "A conflict with the current state, or an Idempotency-Key reused with another request (idempotency_key_reused).",
        );
    }
    if needs_workspace {
        add(
            "403",
            "The caller lacks the permission this route needs, or may not use the workspace.",
        );
    }
    if has_path_id {
        add("404", "No such record in this workspace.");
    }
    if has_body || has_query {
        add(
            "422",
            "A field or parameter is invalid; `details` names each one.",
        );
    }
    if has_body {
        add("413", "The body is larger than 2 MiB (payload_too_large).");
        add(
            "408",
            "The body did not arrive within the head's time limit (request_timeout).",
        );
    }
    if has_body || has_path_id || needs_workspace {
        add(
            "400",
            "Malformed JSON, a malformed path id or cursor, or a person's token that reaches several workspaces without X-Service-Workspace.",
        );
    }
    if !legacy && needs_workspace {
        let mut too_many = error("Over the workspace's per-minute budget.", false);
        let mut headers = rate_headers();
        headers.insert(
            "Retry-After".into(),
            header("Seconds until the next request is allowed.", "integer"),
        );
        too_many["headers"] = Value::Object(headers);
        responses.entry("429").or_insert(too_many);
    }
    for (status, response) in responses.iter_mut() {
        if !status.starts_with('2') {
            continue;
        }
        let mut headers = if !legacy && needs_workspace {
            rate_headers()
        } else {
            Map::new()
        };
        if method == "post" && !legacy {
            headers.insert(
                "Idempotent-Replayed".into(),
                header(
                    "`true` when this is the stored first response to a repeated Idempotency-Key.",
                    "string",
                ),
            );
        }
        if !headers.is_empty() {
            response["headers"] = Value::Object(headers);
        }
    }
}

/// The real bounds of the parameters every route shares: integer path ids are positive
/// 64-bit integers, string path ids have their kind's prefix, and a `starting_after`
/// cursor is the text a previous page answered.
fn bound_parameter(path: &str, p: &mut Value) {
    let integer = p["schema"]["type"] == "integer";
    if p["in"] == "path" && p["schema"]["type"] == "string" {
        if let Some(pattern) = string_id_pattern(path, &p["name"]) {
            p["schema"]["pattern"] = json!(pattern);
        }
    }
    if integer && p["in"] == "path" {
        p["schema"]["minimum"] = json!(1);
    }
    if integer && (p["in"] == "path" || p["in"] == "query") {
        // Ids are unsigned 64-bit integers.
        if let Some(s) = p["schema"].as_object_mut() {
            s.remove("format");
            s.entry("maximum").or_insert(json!(u64::MAX));
        }
    }
    if p["in"] == "query" && p["name"] == "starting_after" {
        p["schema"]["pattern"] = json!(if path == "/users" {
            USER_CURSOR
        } else {
            ID_CURSOR
        });
    }
}

/// The form of the string id named `name` in the path `path` (the spec's string ids:
/// webhook endpoints and users).
fn string_id_pattern(path: &str, name: &Value) -> Option<String> {
    if name != "id" {
        return None;
    }
    if path.starts_with("/webhooks/") {
        Some(EndpointId::pattern())
    } else if path.starts_with("/users/") {
        Some(UserId::pattern())
    } else {
        None
    }
}

/// A cursor over an id-ordered list: base64url (no padding) of `c1:<id>`. The groups
/// spell the digits of the id, at most 17 of them.
/// (A first character `O` stands for 8 or 9, which narrows the second.)
const ID_CURSOR: &str = concat!(
    "^YzE6(",
    "((?:[MN][DTjz]|O[DT])[AEIMQUYcgk][w-z0-5]){1,5}",
    "((?:[MN][AQgw]|O[AQ])|(?:[MN][DTjz]|O[DT])[AEIMQUYcgk])?",
    "|(?:[MN][AQgw]|O[AQ])|(?:[MN][DTjz]|O[DT])[AEIMQUYcgk]",
    ")$"
);

/// A cursor over the member list: base64url of `k:usr_<id>`.
const USER_CURSOR: &str = "^azp1c3Jf[A-Za-z0-9_-]+$";

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
    ("post", "/chat", &["conversationId", "contact"]),
];

/// Operations that need one of some fields, besides any other rule: the sender of a
/// legacy message.
const NEEDS_ONE_OF: &[(&str, &str, &[&str])] = &[("post", "/messages", &["contact_id", "contact"])];

fn operation_needs_one_of(path: &str, method: &str, op: &mut Value) {
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

fn operation_forbids(path: &str, method: &str, op: &mut Value) {
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

fn operation_requires(path: &str, method: &str, op: &mut Value) {
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

fn at_least_one_field(path: &str, method: &str, op: &mut Value, schemas: &Value) {
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
fn optional_empty_body(op: &mut Value, schemas: &Value) {
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

/// `list_contacts` -> `List contacts`.
fn sentence(operation_id: &str) -> String {
    let words = operation_id.replace('_', " ");
    let mut chars = words.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => words,
    }
}

/// `Answers 200 with a ContactView.`
fn success_of(op: &Value) -> String {
    let Some(responses) = op["responses"].as_object() else {
        return String::new();
    };
    let Some((status, response)) = responses.iter().find(|(s, _)| s.starts_with('2')) else {
        return String::new();
    };
    let schema = &response["content"]["application/json"]["schema"];
    let named = schema["$ref"]
        .as_str()
        .and_then(|r| r.rsplit('/').next())
        .map(str::to_string);
    match named {
        Some(name) => format!("Answers {status} with a {name}."),
        None => format!("Answers {status}."),
    }
}

/// One entry per catalog event: the signed POST a subscribed endpoint receives.
fn webhooks() -> Value {
    let mut out = Map::new();
    for t in CATALOG.iter() {
        let sample = samples::sample(t.name, "ws_4f2a9c1e7b3d5a8c6e0f");
        let resource = sample.as_ref().map_or(
            json!({"type": t.category, "id": "1001"}),
            |s| json!({"type": s.resource_type, "id": s.resource_id}),
        );
        let mut example = json!({
            "id": "evt_3c9f1e2a7b5d4c6e8f0a1b2c",
            "object": "event",
            "type": t.name,
            "api_version": API_VERSION,
            "occurred_at": "2026-11-01T12:00:00.000Z",
            "created_at": "2026-11-01T12:00:00.000Z",
            "workspace_id": "ws_4f2a9c1e7b3d5a8c6e0f",
            "actor": {"type": "api", "id": "key_7d1c9e3b5a2f4c6e8a0b"},
            "resource": resource,
            "source": {"connection_id": "api_key:key_7d1c9e3b5a2f4c6e8a0b", "via": "api"},
            "data": sample.map(|s| s.data),
        });
        if t.name.ends_with(".updated") {
            example["changes"] = json!({"name": "Ann"});
        }
        let mut private = String::new();
        if !t.content_fields.is_empty() {
            private.push_str(&format!(
                " Sent only to endpoints with include_content: {}.",
                t.content_fields.join(", ")
            ));
        }
        if !t.contact_fields.is_empty() {
            private.push_str(&format!(
                " Sent only to endpoints with include_contact_details: {}.",
                t.contact_fields.join(", ")
            ));
        }
        let named = if t.named_only() {
            " Wildcards never include it: an endpoint must name it."
        } else {
            ""
        };
        out.insert(
            t.name.to_string(),
            json!({"post": {
                "summary": t.name,
                "description": format!("When {}.{private}{named}", t.description),
                "tags": [t.category],
                "parameters": [
                    {"name": "X-Service-Signature", "in": "header", "required": true,
                     "description": "t=<unix seconds>,v1=<hex HMAC-SHA256 of \"<t>.<body>\" with the endpoint's secret>; two v1 values while a rotated secret overlaps.",
                     "schema": {"type": "string"}},
                    {"name": "X-Service-Event-Id", "in": "header", "required": true, "schema": {"type": "string"}},
                    {"name": "X-Service-Event-Type", "in": "header", "required": true, "schema": {"type": "string", "enum": [t.name]}},
                    {"name": "X-Service-Delivery-Attempt", "in": "header", "required": true, "schema": {"type": "integer", "minimum": 1, "maximum": 7}}
                ],
                "requestBody": {"required": true, "content": {"application/json": {
                    "schema": {"$ref": "#/components/schemas/Envelope"},
                    "example": example
                }}},
                "responses": {
                    "2XX": {"description": "Delivered. Any other answer is retried on the ladder; 410 disables the endpoint."}
                }
            }}),
        );
    }
    Value::Object(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_operation_gets_the_errors_and_headers_that_apply_to_it() {
        let mut doc = json!({"components": {"schemas": {}}, "paths": {
            "/tags/{id}": {"patch": {"operationId": "update_tag", "requestBody": {},
                "responses": {"200": {"description": "ok"}}}},
            "/me": {"get": {"operationId": "me", "responses": {"200": {"description": "ok"}}}},
            "/messages": {"post": {"operationId": "legacy_message", "requestBody": {},
                "responses": {"202": {"description": "ok"}}}}
        }});
        complete(&mut doc);
        let patch = &doc["paths"]["/tags/{id}"]["patch"];
        for status in ["400", "401", "403", "404", "408", "413", "422", "429"] {
            assert!(patch["responses"].get(status).is_some(), "{status}");
        }
        assert_eq!(patch["summary"], "Update tag");
        assert!(patch["responses"]["429"]["headers"]["Retry-After"].is_object());
        assert!(patch["responses"]["200"]["headers"]["RateLimit-Remaining"].is_object());
        let me = &doc["paths"]["/me"]["get"];
        assert!(me["responses"].get("403").is_none());
        assert!(me["responses"].get("429").is_none());
        assert!(
            me["responses"].get("413").is_none(),
            "no body, no size limit"
        );
        let legacy = &doc["paths"]["/messages"]["post"];
        assert!(legacy["responses"].get("429").is_none());
        assert_eq!(
            legacy["responses"]["401"]["content"]["application/json"]["schema"]["$ref"],
            "#/components/schemas/LegacyError"
        );
        // The legacy guard answers a repeat as the first answer, without the header.
        assert!(legacy["responses"]["202"]["headers"]
            .get("Idempotent-Replayed")
            .is_none());
        let keys: Vec<&Value> = legacy["parameters"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|p| p["name"] == "Idempotency-Key")
            .collect();
        assert_eq!(keys.len(), 1, "declared once");
        assert_eq!(doc["webhooks"].as_object().map(Map::len), Some(58));
        assert!(patch["responses"].get("409").is_none());
        assert!(legacy["responses"].get("409").is_some());
    }

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
        let faq = |keywords: Value| json!({"faq": [{"answer": "Yes", "keywords": keywords}]});
        assert!(fits("patch", "/ai-settings", faq(json!(["open"]))));
        assert!(!fits("patch", "/ai-settings", faq(json!([]))));
    }

    #[test]
    fn the_field_key_pattern_takes_the_keys_the_domain_takes() {
        use switchboard_actors::domain::custom_field::FieldKey;
        let v = jsonschema::validator_for(&json!({"type": "string", "pattern": FIELD_KEY}))
            .expect("valid pattern");
        for key in ["a", "size", "shoe_size_2", "a1_b2", &"k".repeat(64)] {
            assert!(v.is_valid(&json!(key)), "{key}");
            assert!(FieldKey::parse(key).is_ok(), "{key}");
        }
        for key in ["", "1a", "_a", "a_", "a__b", "A", "a-b", &"k".repeat(65)] {
            assert!(!v.is_valid(&json!(key)), "{key}");
            assert!(FieldKey::parse(key).is_err(), "{key}");
        }
    }

    #[test]
    fn string_path_ids_state_the_form_the_routes_accept() {
        let doc = crate::http::openapi();
        for (path, method, id) in [
            ("/webhooks/{id}", "get", EndpointId::generate().to_string()),
            (
                "/webhooks/{id}/test",
                "post",
                EndpointId::generate().to_string(),
            ),
            ("/users/{id}", "get", "usr_owner_1".to_string()),
        ] {
            let params = doc["paths"][path][method]["parameters"].as_array().unwrap();
            let param = params.iter().find(|p| p["name"] == "id").unwrap();
            let schema = jsonschema::validator_for(&param["schema"]).expect("valid schema");
            assert!(schema.is_valid(&json!(id)), "{path}: {id}");
            for malformed in ["0", "we_", "usr_", "we_a-b", "nope"] {
                assert!(!schema.is_valid(&json!(malformed)), "{path}: {malformed}");
                assert!(
                    EndpointId::parse(malformed).is_none() && UserId::parse(malformed).is_none()
                );
            }
        }
    }

    #[test]
    fn emails_addresses_and_durations_the_patterns_allow_are_accepted() {
        let check = |pattern: &str, good: &[&str], bad: &[&str]| {
            let v = jsonschema::validator_for(&json!({"type": "string", "pattern": pattern}))
                .expect("valid pattern");
            for text in good {
                assert!(v.is_valid(&json!(text)), "{pattern}: {text}");
            }
            for text in bad {
                assert!(!v.is_valid(&json!(text)), "{pattern}: {text}");
            }
        };
        let emails = ["a@b.co", "ann.lee+x@mail-1.example.org", "A_1%@x9.y"];
        check(
            EMAIL,
            &emails,
            &["", "a@b", "a..b@c.d", ".a@b.c", "a@-b.c", "a b@c.d"],
        );
        for email in emails {
            assert!(
                switchboard_actors::domain::text::email(email).is_ok(),
                "{email}"
            );
        }
        let urls = [
            "http://a",
            "https://shop.example.com:8443/p?q=1#x",
            "http://x-1.y2/a%zz",
        ];
        let not_urls = [
            "ftp://a.b",
            "http://",
            "http://1.2.3.4",
            "http://a.1",
            "http://xn--a.b",
        ];
        check(&url_pattern("https?"), &urls, &not_urls);
        let https = [
            "https://a.b/c",
            "https://files.example-1.com:8443/r.pdf?x=1",
        ];
        check(
            &url_pattern("https"),
            &https,
            &["http://a.b/c", "https://a.1/"],
        );
        for url in https {
            assert!(
                switchboard_actors::domain::document::https_url(url).is_ok(),
                "{url}"
            );
        }
        let names = ["ann_a", "@ann", "a@b", "x"];
        check(USERNAME, &names, &["", "@", "a b", " a", "@@"]);
        for name in names {
            assert!(
                switchboard_actors::domain::contact::username(name).is_ok(),
                "{name}"
            );
        }
        for url in urls {
            assert!(
                switchboard_actors::domain::product::web_url(url).is_ok(),
                "{url}"
            );
        }
        let mut spans = Vec::new();
        for unit in ["s", "m", "h", "d"] {
            for n in (1..=9999)
                .step_by(7)
                .chain([1, 9, 10, 99, 100, 365, 999, 9999])
            {
                spans.push(format!("{n}{unit}"));
            }
        }
        let v = jsonschema::validator_for(&json!({"type": "string", "pattern": SPAN})).unwrap();
        let allowed: Vec<&String> = spans.iter().filter(|s| v.is_valid(&json!(s))).collect();
        assert!(allowed.len() > 1000);
        for span in allowed {
            assert!(
                switchboard_actors::domain::ai_settings::Span::parse(span).is_ok(),
                "{span}"
            );
        }
        check(
            SPAN,
            &["30m", "24h", "365d", "9999s"],
            &["0s", "366d", "1000h", "1w", " 5m", "5"],
        );
    }

    #[test]
    fn the_cursor_pattern_accepts_every_cursor_the_lists_answer() {
        let pattern = jsonschema::validator_for(&json!({"type": "string", "pattern": ID_CURSOR}))
            .expect("valid pattern");
        for id in [
            1,
            9,
            10,
            99,
            100,
            12_345,
            999_999,
            10_000_000_000_000_000u64,
        ] {
            let cursor = crate::http::pagination::encode_cursor(id);
            assert!(pattern.is_valid(&json!(cursor)), "{id}: {cursor}");
        }
        assert!(!pattern.is_valid(&json!("42")));
        assert!(!pattern.is_valid(&json!("YzE6")), "a cursor names an id");
        let phone =
            jsonschema::validator_for(&json!({"type": "string", "pattern": PHONE})).unwrap();
        for (text, ok) in [("+1 (555) 010-0199", true), ("12", false), ("12a3", false)] {
            assert_eq!(phone.is_valid(&json!(text)), ok, "{text}");
        }
        let currency = any_case_of(["EUR", "USD"].into_iter());
        let currency =
            jsonschema::validator_for(&json!({"type": "string", "pattern": currency})).unwrap();
        for (text, ok) in [
            ("eur", true),
            (" USD ", true),
            ("EU", false),
            ("GBP", false),
        ] {
            assert_eq!(currency.is_valid(&json!(text)), ok, "{text}");
        }
        assert!(!pattern.is_valid(&json!(crate::http::pagination::encode_cursor(9) + "x")));
        let printable =
            jsonschema::validator_for(&json!({"type": "string", "pattern": PRINTABLE})).unwrap();
        for (text, ok) in [
            ("Ann", true),
            (" a b ", true),
            ("", false),
            ("   ", false),
            ("a\u{1}", false),
            ("a\u{85}", false),
            ("line\u{2028}separator", false),
        ] {
            assert_eq!(printable.is_valid(&json!(text)), ok, "{text:?}");
        }
    }
}
