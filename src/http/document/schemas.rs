//! The request schemas as the domain checks them: patterns, bounds, enums and the rules
//! between fields that JSON Schema can state, written into the derived components.

use serde_json::{json, Value};
use switchboard_actors::domain::contact::Channel;
use switchboard_actors::domain::product::MAX_PRICE;
use switchboard_actors::events::catalog::CATALOG;
use switchboard_actors::events::subscription;
use switchboard_actors::ids::UserId;

use super::patterns::{
    any_case_of, printable, url_pattern, username, EMAIL, FIELD_KEY, FORM_FIELD_KEY, PHONE, SPAN,
};

pub(super) fn add_schemas(doc: &mut Value) {
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
            f["pattern"] = json!(printable());
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
                json!({"type": "string", "minLength": 1, "maxLength": max, "pattern": printable()});
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
    // Keys of custom fields and of a form's fields: a key of another form names no field.
    for (pointer, key) in [
        ("/ContactInput/properties/custom_fields", FIELD_KEY),
        ("/ContactPatchInput/properties/custom_fields", FIELD_KEY),
        ("/SubmissionInput/properties/values", FORM_FIELD_KEY),
    ] {
        if let Some(map) = schemas.pointer_mut(pointer) {
            map["propertyNames"] = json!({"pattern": key, "maxLength": 64});
        }
    }
    // Assignees are user ids too (a malformed one is no member either).
    for pointer in [
        "/AssigneeInput/properties/user_id",
        "/ContactInput/properties/assigned_to_user_id",
    ] {
        if let Some(id) = schemas.pointer_mut(pointer) {
            id["pattern"] = json!(UserId::pattern());
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
            f["pattern"] = json!(url_pattern("https?", true));
            f["maxLength"] = json!(2048);
        }
    }
    if let Some(f) = schemas.pointer_mut("/ProductInput/properties/images") {
        f["items"] =
            json!({"type": "string", "maxLength": 2048, "pattern": url_pattern("https?", true)});
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
            f["pattern"] = json!(url_pattern("https", true));
        }
    }
    for schema in ["ContactInput", "ContactPatchInput"] {
        for field in ["chan_a_username", "chan_c_username", "chan_e_username"] {
            if let Some(f) = schemas.pointer_mut(&format!("/{schema}/properties/{field}")) {
                f["pattern"] = json!(username());
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
            f["pattern"] = json!(url_pattern("https", false));
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
            json!({"type": "string", "minLength": 1, "maxLength": 80, "pattern": printable()});
    }
    texts_and_choices(schemas);
    schemas["LegacyError"] = json!({
        "type": "object",
        "description": "The error shape of the legacy routes.",
        "required": ["message"],
        "properties": {"message": {"type": "string"}}
    });
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
        "items": {"type": "string", "minLength": 1, "maxLength": 200, "pattern": printable()}
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
        {"type": "string", "minLength": 1, "maxLength": 50, "pattern": printable()},
        {"type": "null"}
    ]});
    if let Some(f) = schemas.pointer_mut("/ProductInput/properties/currency") {
        f["maxLength"] = json!(10);
    }
    if let Some(f) = schemas.pointer_mut("/Attachment/properties/url") {
        f["pattern"] = json!(url_pattern("https", true));
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
    // Requests state attachments in the form above; answers carry what was taken, whose
    // URL may be any https address with a host (an IPv6 or punycode one too): no pattern.
    if let Some(attachment) = schemas.get("Attachment").cloned() {
        schemas["AttachmentInput"] = attachment;
        if let Some(url) = schemas
            .pointer_mut("/Attachment/properties/url")
            .and_then(Value::as_object_mut)
        {
            url.remove("pattern");
        }
        for schema in ["LegacyMessageInput", "TeamReplyInput"] {
            let items = format!("/{schema}/properties/attachments/items");
            if let Some(items) = schemas.pointer_mut(&items) {
                *items = json!({"$ref": "#/components/schemas/AttachmentInput"});
            }
        }
    }
    if let Some(f) = schemas.pointer_mut("/LegacyMessageInput/properties/message_id") {
        f["minLength"] = json!(1);
        f["maxLength"] = json!(200);
    }
    if let Some(f) = schemas.pointer_mut("/CampaignInput/properties/text") {
        f["pattern"] = json!("\\S");
    }
    if let Some(f) = schemas.pointer_mut("/ChannelInput/properties/name") {
        f["pattern"] = json!(printable());
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
        f["pattern"] = json!(username());
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
    // A username names the sender on chan_a, chan_c or chan_e only (the channel defaults
    // to api).
    for schema in ["LegacyMessageInput", "ChatInput"] {
        if let Some(input) = schemas.get_mut(schema) {
            input["if"] = json!({"not": {
                "required": ["channel"],
                "properties": {"channel": {"enum": ["chan_a", "chan_c", "chan_e"]}}
            }});
            input["then"] = json!({"properties": {"contact": {"anyOf": [
                {"type": "null"},
                {"properties": {"username": {"type": "null"}}}
            ]}}});
        }
    }
    // A contact's source and a form submitter's name as the domain takes them.
    if let Some(f) = schemas.pointer_mut("/ContactInput/properties/source") {
        f["minLength"] = json!(1);
        f["maxLength"] = json!(50);
    }
    if let Some(f) = schemas.pointer_mut("/SubmissionContactInput/properties/name") {
        f["pattern"] = json!(printable());
    }
    // Source filters are keyed by catalog event types, each with source names.
    if let Some(f) = schemas.pointer_mut("/FiltersInput/properties/sources") {
        let types: Vec<&str> = CATALOG.iter().map(|t| t.name).collect();
        f["propertyNames"] = json!({"enum": types});
        f["additionalProperties"] = json!({
            "type": "array",
            "items": {"type": "string", "minLength": 1, "maxLength": 50}
        });
    }
    if let Some(f) = schemas.pointer_mut("/LegacyContact/properties/name") {
        f["pattern"] = json!(printable());
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
