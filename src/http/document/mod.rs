//! What every operation shares, written into the OpenAPI document once instead of into
//! each route's attribute: the error answers that apply to it (with the error envelope),
//! the request headers it reads (`X-Service-Workspace`, `Idempotency-Key`), the response
//! headers it sends (`RateLimit-*`, `Retry-After`, `Idempotent-Replayed`), a summary for
//! operations without one, and the 58 webhook events in the document's `webhooks` section.

mod bodies;
mod patterns;
mod schemas;

use bodies::{
    at_least_one_field, operation_forbids, operation_needs_one_of, operation_requires,
    optional_empty_body,
};
use schemas::add_schemas;

use serde_json::{json, Map, Value};
use switchboard_actors::events::catalog::CATALOG;
use switchboard_actors::events::{samples, API_VERSION};
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
    exact_envelopes(doc);
    doc["webhooks"] = webhooks();
    patterns::blank_as_the_domain_counts_it(doc);
}

/// The fixed words of list and event envelopes, and the event's times as date-times.
fn exact_envelopes(doc: &mut Value) {
    let Some(schemas) = doc["components"]["schemas"].as_object_mut() else {
        return;
    };
    for (name, schema) in schemas.iter_mut() {
        if name.starts_with("ListEnvelope") {
            if let Some(object) = schema.pointer_mut("/properties/object") {
                object["enum"] = json!(["list"]);
            }
        }
    }
    if let Some(props) = schemas
        .get_mut("Envelope")
        .and_then(|e| e.get_mut("properties"))
    {
        props["object"]["enum"] = json!(["event"]);
        props["api_version"]["enum"] = json!([API_VERSION]);
        for time in ["occurred_at", "created_at"] {
            props[time]["format"] = json!("date-time");
        }
    }
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
        let summary = summary.trim_end_matches('.');
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
    // Answered by layers every route shares, with the error envelope on the legacy
    // routes too (a handler's own failure is `{message}` there; a panic's is not).
    responses.entry("414").or_insert_with(|| {
        error(
            "The path and query are longer than 16 KiB (uri_too_long).",
            false,
        )
    });
    let either_shape = |mut response: Value| {
        if legacy {
            response["content"]["application/json"]["schema"] = json!({"anyOf": [
                {"$ref": "#/components/schemas/LegacyError"},
                {"$ref": "#/components/schemas/ErrorBody"}
            ]});
        }
        response
    };
    let failed = "The service failed (internal_error); check the result before repeating a write.";
    responses
        .entry("500")
        .or_insert(either_shape(error(failed, false)));
    let mut unavailable = either_shape(error(
        "The store cannot take writes right now (store_unavailable), or the workspace's node cannot be reached (workspace_unavailable); retry after Retry-After.",
        false,
    ));
    unavailable["headers"] =
        json!({"Retry-After": header("Seconds to wait before retrying.", "integer")});
    responses.entry("503").or_insert(unavailable);
    // Every request that acts on a workspace spends its budget, `/me` and `/events` with
    // an API key too; the legacy routes do not count.
    let counted = !legacy;
    if counted {
        let mut too_many = error("Over the workspace's per-minute budget.", false);
        let mut headers = rate_headers();
        headers.insert(
            "Retry-After".into(),
            header("Seconds until the next request is allowed.", "integer"),
        );
        too_many["headers"] = Value::Object(headers);
        responses.entry("429").or_insert(too_many);
    }
    // A status the route declared without words gets the shared ones.
    for (status, response) in responses.iter_mut() {
        let empty = response["description"].as_str().is_none_or(str::is_empty);
        if empty {
            response["description"] = json!(status_words(status));
        }
    }
    // What answers before the budget is spent (a 401, an over-long address) carries no
    // budget, and a stored first response is never one of them; a 429 has its own.
    let before_budget = ["401", "414", "429"];
    for (status, response) in responses.iter_mut() {
        let mut headers = Map::new();
        headers.insert(
            "X-Request-Id".into(),
            header(
                "This request's id, as logged (the caller's own when it sent an acceptable one).",
                "string",
            ),
        );
        if counted && !before_budget.contains(&status.as_str()) {
            headers.extend(rate_headers());
        }
        if method == "post" && !legacy && !before_budget.contains(&status.as_str()) {
            headers.insert(
                "Idempotent-Replayed".into(),
                header(
                    "`true` when this is the stored first response to a repeated Idempotency-Key (failures are stored too).",
                    "string",
                ),
            );
        }
        let own = response["headers"].as_object().cloned().unwrap_or_default();
        headers.extend(own);
        response["headers"] = Value::Object(headers);
    }
}

/// What a status means on any route, for responses declared without a description.
fn status_words(status: &str) -> &'static str {
    match status {
        "200" => "OK.",
        "201" => "Created.",
        "202" => "Accepted.",
        "204" => "Done; no body.",
        "400" => "Malformed JSON, a malformed path id or cursor, or a body that is not JSON.",
        "402" => "Not enough credits (insufficient_credits).",
        "403" => "The caller lacks the permission this route needs.",
        "404" => "No such record in this workspace.",
        "409" => "A conflict with the current state.",
        "422" => "A field or parameter is invalid; `details` names each one.",
        "502" => "The AI model or the messaging channel failed.",
        _ => "See the error code.",
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

/// A cursor over the member list: base64url (no padding) of `m1:<14 digits>:usr_<id>`.
/// The head is six whole groups (`m1:`, four groups of three digits, two digits and
/// `:`), so the user id starts a group of its own: `usr` is `dXNy`, then any tail whose
/// length base64 allows.
const USER_CURSOR: &str = concat!(
    "^bTE6",
    "((?:[MN][DTjz]|O[DT])[AEIMQUYcgk][w-z0-5]){4}",
    "(?:[MN][DTjz]|O[DT])[AEIMQUYcgk]6",
    "dXNyX(?:[A-Za-z0-9_-]{4})*[A-Za-z0-9_-]{1,3}$"
);

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

/// The headers of every delivery; `event` fixes the event type header.
fn delivery_headers(event: &str) -> Value {
    json!([
        {"name": "X-Service-Signature", "in": "header", "required": true,
         "description": "t=<unix seconds>,v1=<hex HMAC-SHA256 of \"<t>.<body>\" with the endpoint's secret>; one more v1 for each replaced secret still in its 24-hour overlap.",
         "schema": {"type": "string", "pattern": "^t=[0-9]+(,v1=[0-9a-f]{64})+$"}},
        {"name": "X-Service-Event-Id", "in": "header", "required": true, "schema": {"type": "string", "pattern": "^evt_"}},
        {"name": "X-Service-Event-Type", "in": "header", "required": true, "schema": {"type": "string", "enum": [event]}},
        {"name": "X-Service-Delivery-Attempt", "in": "header", "required": true, "schema": {"type": "integer", "minimum": 1, "maximum": 7}},
        {"name": "User-Agent", "in": "header", "required": true, "schema": {"type": "string", "enum": ["Service-Webhooks/2.0"]}},
        {"name": "Content-Type", "in": "header", "required": true, "schema": {"type": "string", "enum": ["application/json"]}}
    ])
}

/// A delivery's body: the envelope, its `type` fixed to `event`.
fn envelope_of(event: &str) -> Value {
    json!({"allOf": [
        {"$ref": "#/components/schemas/Envelope"},
        {"type": "object", "properties": {"type": {"type": "string", "enum": [event]}}}
    ]})
}

/// The sample `POST /webhooks/{id}/test` sends when asked for no catalog event.
fn test_delivery() -> Value {
    let example = json!({
        "id": "evt_3c9f1e2a7b5d4c6e8f0a1b2c",
        "object": "event",
        "type": "webhook.test",
        "api_version": API_VERSION,
        "occurred_at": "2026-11-01T12:00:00.000Z",
        "created_at": "2026-11-01T12:00:00.000Z",
        "workspace_id": "ws_4f2a9c1e7b3d5a8c6e0f",
        "actor": {"type": "api", "id": "key_7d1c9e3b5a2f4c6e8a0b"},
        "resource": {"type": "webhook_endpoint", "id": "we_8b1d3f5a7c9e2b4d6f8a"},
        "source": {"connection_id": "api_key:key_7d1c9e3b5a2f4c6e8a0b", "via": "api"},
        "data": {"api_version": API_VERSION, "message": "A test event from Switchboard."},
    });
    json!({"post": {
        "summary": "webhook.test",
        "description": "A test sent by POST /webhooks/{id}/test when the endpoint names no catalog event or the call asks for `webhook.test`. It is never sent otherwise, and no subscription matches it.",
        "tags": ["webhook"],
        "parameters": delivery_headers("webhook.test"),
        "requestBody": {"required": true, "content": {"application/json": {
            "schema": envelope_of("webhook.test"),
            "example": example
        }}},
        "responses": {"2XX": {"description": "Delivered. A test is not retried."}}
    }})
}

/// One entry per catalog event: the signed POST a subscribed endpoint receives.
fn webhooks() -> Value {
    let mut out = Map::new();
    out.insert("webhook.test".into(), test_delivery());
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
                "parameters": delivery_headers(t.name),
                "requestBody": {"required": true, "content": {"application/json": {
                    "schema": envelope_of(t.name),
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
        assert!(
            me["responses"]["429"].is_object(),
            "an API key's call spends the budget"
        );
        for status in ["404", "422", "500"] {
            assert!(
                patch["responses"][status]["headers"]["RateLimit-Limit"].is_object(),
                "a counted error carries the budget too: {status}"
            );
        }
        for status in ["401", "414", "429"] {
            assert!(
                patch["responses"][status]["headers"]
                    .get("RateLimit-Remaining")
                    .is_none()
                    || status == "429",
                "{status}"
            );
        }
        assert!(patch["responses"]["503"]["headers"]["Retry-After"].is_object());
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
        assert_eq!(
            doc["webhooks"].as_object().map(Map::len),
            Some(59),
            "the 58 catalog events and the test"
        );
        assert!(patch["responses"].get("409").is_none());
        assert!(legacy["responses"].get("409").is_some());
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
        assert!(!pattern.is_valid(&json!(crate::http::pagination::encode_cursor(9) + "x")));
    }

    #[test]
    fn no_pattern_counts_white_space_as_json_schema_does() {
        let doc = crate::http::openapi().to_string();
        assert!(!doc.contains(r#""pattern":"\\S""#), "a \\S pattern is left");
        assert!(doc.contains(&json!(patterns::not_blank()).to_string()));
    }

    #[test]
    fn keys_of_submitted_values_and_custom_fields_have_their_fields_key_form() {
        let doc = crate::http::openapi();
        let schemas = &doc["components"]["schemas"];
        assert_eq!(
            schemas["SubmissionInput"]["properties"]["values"]["propertyNames"]["pattern"],
            schemas["FormFieldInput"]["properties"]["key"]["pattern"]
        );
        for input in ["ContactInput", "ContactPatchInput"] {
            assert_eq!(
                schemas[input]["properties"]["custom_fields"]["propertyNames"]["pattern"],
                schemas["NewCustomFieldInput"]["properties"]["key"]["pattern"],
                "{input}"
            );
        }
    }

    #[test]
    fn the_user_cursor_pattern_states_exactly_what_the_member_list_takes() {
        use crate::http::pagination::{decode_place_cursor, encode_place_cursor, Place};
        let pattern = jsonschema::validator_for(&json!({"type": "string", "pattern": USER_CURSOR}))
            .expect("valid pattern");
        for (at_ms, user) in [
            (0, "usr_a"),
            (1_764_000_000_123, "usr_0123456789abcdef0123456789abcdef"),
            (99_999_999_999_999, "usr_ab"),
            (1_764_000_000_123, "usr_abc"),
        ] {
            let place = Place {
                at_ms,
                id: user.as_bytes().to_vec(),
            };
            let cursor = encode_place_cursor(&place);
            assert!(pattern.is_valid(&json!(cursor)), "{cursor}");
            assert_eq!(decode_place_cursor(&cursor).unwrap(), place);
        }
        // Every string of the pattern's form is a place, whatever its tail spells: the
        // tail's lengths, its last group's stray bits, and the digits 8 and 9 in the head.
        let head = encode_place_cursor(&Place {
            at_ms: 98_989_898_989_898,
            id: b"usr".to_vec(),
        });
        for tail in ["X-", "X__", "X_-_", "XAAAAA", "XAAAAAA", "XAAAAAAA"] {
            let cursor = format!("{head}{tail}");
            assert!(pattern.is_valid(&json!(cursor)), "{cursor}");
            assert!(decode_place_cursor(&cursor).is_ok(), "{cursor}");
        }
        for refused in [
            "garbage".to_string(),
            format!("{head}XAAAA"),
            crate::http::pagination::encode_cursor(9),
        ] {
            assert!(!pattern.is_valid(&json!(refused)), "{refused}");
        }
    }
}
