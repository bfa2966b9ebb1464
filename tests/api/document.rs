//! The OpenAPI document and the router agree: every operation the document lists is
//! served, and every route mounted outside the document is a named exception.

use reqwest::Method;
use serde_json::{json, Value};

use crate::helpers::*;

/// Routes mounted on the API listener that the document deliberately leaves out.
const UNDOCUMENTED: &[&str] = &["/health", "/api/v1/openapi.json", "/__test/panic"];

#[tokio::test]
async fn every_operation_in_the_document_is_served() {
    let app = spawn_app().await;
    let doc = app.openapi().await;
    let paths = doc["paths"].as_object().expect("paths");
    let mut missing = Vec::new();
    let mut count = 0;
    for (path, item) in paths {
        for method in ["get", "post", "put", "patch", "delete"] {
            if item.get(method).is_none() {
                continue;
            }
            count += 1;
            // Any id will do: an unknown one is a 404 of the resource, not of the route.
            let concrete: String = path
                .split('/')
                .map(|seg| if seg.starts_with('{') { "1" } else { seg })
                .collect::<Vec<_>>()
                .join("/");
            let method = Method::from_bytes(method.to_uppercase().as_bytes()).unwrap();
            let r = app
                .call(method.clone(), &concrete)
                .token(&app.key)
                .send()
                .await;
            let unrouted = (r.status == 404 && r.body["error"]["message"] == "no such route")
                || r.status == 405;
            if unrouted {
                missing.push(format!(
                    "{method} {path} -> {} {}",
                    r.status,
                    short(&r.body)
                ));
            }
        }
    }
    assert!(count >= 70, "only {count} operations documented");
    assert!(
        missing.is_empty(),
        "documented but not served:\n{}",
        missing.join("\n")
    );
}

#[test]
fn every_route_mounted_outside_the_document_is_a_named_exception() {
    // Documented routes are registered with utoipa-axum's routes!(), which mounts the
    // handler and documents it in one step; a handler left out is dead code and fails
    // the build. Routes mounted with a bare .route() bypass the document, so each must
    // be named here.
    let src = concat!(env!("CARGO_MANIFEST_DIR"), "/src/http");
    let mut stack = vec![std::path::PathBuf::from(src)];
    let mut bare = Vec::new();
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            let text = std::fs::read_to_string(&path).unwrap();
            for (i, _) in text.match_indices(".route(") {
                let rest = text[i + ".route(".len()..].trim_start();
                let route: String = rest
                    .trim_start_matches('"')
                    .chars()
                    .take_while(|c| *c != '"')
                    .collect();
                bare.push(route);
            }
        }
    }
    for route in &bare {
        assert!(
            UNDOCUMENTED.contains(&route.as_str()),
            "{route} is mounted outside the OpenAPI document"
        );
    }
    assert!(!bare.is_empty());
}

#[tokio::test]
async fn the_served_document_lists_shared_errors_headers_and_the_58_webhook_events() {
    let app = spawn_app().await;
    let doc = app.openapi().await;
    let list = &doc["paths"]["/contacts"]["get"];
    for status in ["200", "401", "403", "422", "429"] {
        assert!(
            list["responses"].get(status).is_some(),
            "GET /contacts {status}"
        );
    }
    assert!(list["responses"]["429"]["headers"]["Retry-After"].is_object());
    assert!(list["responses"]["200"]["headers"]["RateLimit-Limit"].is_object());
    assert!(list["summary"].is_string() && list["description"].is_string());
    let create = &doc["paths"]["/contacts"]["post"];
    let headers: Vec<&str> = create["parameters"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["in"] == "header")
        .filter_map(|p| p["name"].as_str())
        .collect();
    assert_eq!(headers, ["X-Service-Workspace", "Idempotency-Key"]);
    let hooks = doc["webhooks"].as_object().expect("webhooks section");
    assert_eq!(hooks.len(), 59, "the 58 catalog events and webhook.test");
    assert!(hooks.contains_key("webhook.test"));
    let sent = &hooks["message.sent"]["post"];
    assert_eq!(
        sent["requestBody"]["content"]["application/json"]["example"]["type"],
        "message.sent"
    );
    assert!(doc["components"]["schemas"].get("Envelope").is_some());
}

/// Patterns the server applies, stated where a generated schema cannot carry them.
#[tokio::test]
async fn the_document_states_patterns_the_server_applies_to_ids_names_and_keywords() {
    let app = spawn_app().await;
    let doc = app.openapi().await;
    for schema in ["NewReminderInput", "ReminderPatchInput"] {
        let items =
            &doc["components"]["schemas"][schema]["properties"]["assignee_user_ids"]["items"];
        assert_eq!(items["pattern"], "^usr_[A-Za-z0-9_]{1,64}$", "{schema}");
    }
    let schemas = &doc["components"]["schemas"];
    for pointer in [
        "/AssigneeInput/properties/user_id/pattern",
        "/ContactInput/properties/assigned_to_user_id/pattern",
    ] {
        assert_eq!(
            schemas.pointer(pointer),
            Some(&json!("^usr_[A-Za-z0-9_]{1,64}$")),
            "{pointer}"
        );
    }
    // The server refuses what the pattern refuses, at the same field.
    let refused = app
        .post(
            "/contacts",
            json!({"first_name": "Bo", "assigned_to_user_id": "bob"}),
        )
        .await;
    invalid(refused, "assigned_to_user_id");
    let contact = app
        .post("/contacts", json!({"first_name": "Al"}))
        .await
        .created();
    let refused = app
        .put(
            &format!("/contacts/{}/assignee", id(&contact)),
            json!({"user_id": "bob"}),
        )
        .await;
    invalid(refused, "user_id");
    // Attachments: requests state the form of their URL, answers carry any https URL.
    assert!(schemas["AttachmentInput"]["properties"]["url"]["pattern"].is_string());
    assert!(schemas["Attachment"]["properties"]["url"]
        .get("pattern")
        .is_none());
    for (name, schema) in schemas.as_object().unwrap() {
        let text = schema.to_string();
        if name.ends_with("Input") {
            assert!(
                !text.contains("\"#/components/schemas/Attachment\""),
                "{name} takes AttachmentInput"
            );
        }
    }
    for pointer in [
        "/FaqEntry/properties/keywords/items/pattern",
        "/AiSettingsPatch/properties/handover_keywords/items/pattern",
    ] {
        assert_eq!(
            schemas.pointer(pointer),
            Some(&json!("[^\\W_]")),
            "{pointer}"
        );
    }
    for pointer in [
        "/ContactInput/properties/first_name/pattern",
        "/ContactPatchInput/properties/last_name/pattern",
        "/ProductInput/properties/name/pattern",
    ] {
        assert!(schemas.pointer(pointer).is_some(), "{pointer}");
    }
    let refused = app
        .post("/reminders", json!({"title": "Call back", "due_at": "2999-01-01T00:00:00Z", "assignee_user_ids": ["bob"]}))
        .await;
    invalid(refused, "assignee_user_ids[0]");
}

/// Checks `body` against the schema the document gives `method path` for `status`.
fn conforms(doc: &Value, path: &str, method: &str, status: u16, body: &Value) -> Vec<String> {
    let schema = &doc["paths"][path][method]["responses"][status.to_string()]["content"]
        ["application/json"]["schema"];
    assert!(
        schema.is_object(),
        "{method} {path} documents no {status} body"
    );
    let mut root = schema.clone();
    root["components"] = doc["components"].clone();
    let validator = jsonschema::options()
        .with_draft(jsonschema::Draft::Draft202012)
        .build(&root)
        .unwrap_or_else(|e| panic!("{method} {path} {status}: bad schema: {e}"));
    validator
        .iter_errors(body)
        .map(|e| format!("{method} {path} {status}: {e} at {}", e.instance_path()))
        .collect()
}

/// The budget and replay headers of a response that its status does not document.
fn undocumented_headers(doc: &Value, path: &str, method: &str, r: &Resp) -> Vec<String> {
    let documented = &doc["paths"][path][method]["responses"][r.status.to_string()]["headers"];
    let documented: Vec<String> = documented
        .as_object()
        .map(|h| h.keys().map(|k| k.to_ascii_lowercase()).collect())
        .unwrap_or_default();
    [
        "ratelimit-limit",
        "ratelimit-remaining",
        "ratelimit-reset",
        "retry-after",
        "idempotent-replayed",
        "x-request-id",
    ]
    .into_iter()
    .filter(|h| r.header(h).is_some() && !documented.iter().any(|d| d == h))
    .map(|h| {
        format!(
            "{method} {path} {}: {h} is sent but not documented",
            r.status
        )
    })
    .collect()
}

#[tokio::test]
async fn real_responses_conform_to_their_documented_schemas() {
    // A budget, so that answers carry the RateLimit headers the document names.
    let app = spawn_app_with(|s| s.rate_limit_per_minute = 100_000).await;
    let doc = app.openapi().await;
    let key = app.key.clone();
    let mut problems = Vec::new();
    let mut check = |path: &str, method: &str, r: &Resp| {
        problems.extend(conforms(&doc, path, method, r.status, &r.body));
        problems.extend(undocumented_headers(&doc, path, method, r));
    };

    let contact = app
        .post_as(
            &key,
            "/contacts",
            json!({"first_name": "Ann", "email": "ann@example.com", "tags": ["vip"]}),
        )
        .await
        .expect(201);
    check("/contacts", "post", &contact);
    let id = contact.body["id"].as_u64().unwrap();
    check(
        "/contacts/{id}",
        "get",
        &app.get_as(&key, &format!("/contacts/{id}"))
            .await
            .expect(200),
    );
    check(
        "/contacts",
        "get",
        &app.get_as(&key, "/contacts").await.expect(200),
    );
    check(
        "/contacts/{id}",
        "get",
        &app.get_as(&key, "/contacts/999999").await.expect(404),
    );
    check(
        "/contacts",
        "post",
        &app.post_as(&key, "/contacts", json!({"email": "nope"}))
            .await
            .expect(422),
    );
    check("/tags", "get", &app.get_as(&key, "/tags").await.expect(200));

    let order = app
        .post_as(
            &key,
            "/orders",
            json!({"contact_id": id, "currency": "EUR",
                   "items": [{"name": "Tea", "quantity": 2, "unit_price": 4.5}]}),
        )
        .await
        .expect(201);
    check("/orders", "post", &order);
    check(
        "/orders",
        "get",
        &app.get_as(&key, "/orders").await.expect(200),
    );

    let conversation = app
        .post_as(
            &key,
            "/conversations",
            json!({"contact_id": id, "channel": "chan_a", "text": "Hello"}),
        )
        .await
        .expect(201);
    check("/conversations", "post", &conversation);
    let cid = conversation.body["id"].as_u64().unwrap();
    let with_file = app
        .post_as(
            &key,
            &format!("/conversations/{cid}/messages"),
            json!({"text": "see file", "attachments": [
                {"url": "https://files.mycompanyname.com/a.png", "type": "image", "name": "a.png"},
                {"url": "https://8.8.8.8/b.pdf", "type": "document", "name": "b.pdf"},
                {"url": "https://my_host.example.com/c.png", "type": "image"},
                {"url": "https://[2001:db8::1]/d.png", "type": "image"}
            ]}),
        )
        .await
        .expect(201);
    check("/conversations/{id}/messages", "post", &with_file);
    for _ in 0..2 {
        let replayed = app
            .call(Method::POST, "/tags")
            .token(&key)
            .header("Idempotency-Key", "tag-vip-twice")
            .json(json!({"name": "vip"}))
            .send()
            .await
            .expect(409);
        check("/tags", "post", &replayed);
    }
    check("/me", "get", &app.get_as(&key, "/me").await.expect(200));
    let long = format!("/messages?x={}", "a".repeat(17_000));
    let too_long = app
        .call(Method::POST, &long)
        .token(&key)
        .json(json!({"contact_id": id, "text": "hi"}))
        .send()
        .await
        .expect(414);
    check("/messages", "post", &too_long);
    check(
        "/conversations/{id}/messages",
        "get",
        &app.get_as(&key, &format!("/conversations/{cid}/messages"))
            .await
            .expect(200),
    );

    let endpoint = app
        .post_as(
            &key,
            "/webhooks",
            json!({"url": "https://hooks.example.com/in", "events": ["contact.created"]}),
        )
        .await
        .expect(201);
    check("/webhooks", "post", &endpoint);
    check(
        "/webhooks",
        "get",
        &app.get_as(&key, "/webhooks").await.expect(200),
    );
    check("/me", "get", &app.get_as(&key, "/me").await.expect(200));
    let channel = app
        .post_as(
            &key,
            "/channels",
            json!({"type": "chan_a", "relay_url": "https://relay.example.com/in"}),
        )
        .await
        .expect(201);
    check("/channels", "post", &channel);
    check(
        "/channels",
        "get",
        &app.get_as(&key, "/channels").await.expect(200),
    );
    check(
        "/funnels",
        "get",
        &app.get_as(&key, "/funnels").await.expect(200),
    );
    check(
        "/funnels",
        "get",
        &app.get_as(&key, "/funnels?flat=true").await.expect(200),
    );

    assert!(problems.is_empty(), "{}", problems.join("\n"));
    // The check bites: a contact without its fields, or with a wrong `object`, fails.
    let mut wrong = contact.body.clone();
    wrong["object"] = json!("order");
    assert!(!conforms(&doc, "/contacts", "post", 201, &wrong).is_empty());
    assert!(!conforms(&doc, "/contacts", "post", 201, &json!({"id": "x"})).is_empty());
}

#[tokio::test]
async fn real_deliveries_conform_to_the_documented_webhooks() {
    use crate::receiver::TestReceiver;
    use crate::webhooks::{new_endpoint, spawn_webhook_app};

    let app = spawn_webhook_app().await;
    let doc = app.openapi().await;
    let rx = TestReceiver::start().await;
    let (endpoint, _) = new_endpoint(
        &app,
        json!({"url": rx.url, "events": ["tag.created", "contact.created"]}),
    )
    .await;
    app.post("/tags", json!({"name": "vip"})).await.expect(201);
    app.post("/contacts", json!({"first_name": "Ann"}))
        .await
        .expect(201);
    app.post(
        &format!("/webhooks/{endpoint}/test"),
        json!({"event": "webhook.test"}),
    )
    .await
    .expect(200);
    let got = rx.wait_for(3).await;
    let mut problems = Vec::new();
    for delivery in &got {
        let body = delivery.json();
        let kind = body["type"].as_str().unwrap().to_string();
        let post = &doc["webhooks"][&kind]["post"];
        let mut root = post["requestBody"]["content"]["application/json"]["schema"].clone();
        assert!(root.is_object(), "{kind} is documented");
        root["components"] = doc["components"].clone();
        let validator = jsonschema::options()
            .with_draft(jsonschema::Draft::Draft202012)
            .build(&root)
            .unwrap();
        problems.extend(validator.iter_errors(&body).map(|e| format!("{kind}: {e}")));
        for header in post["parameters"].as_array().unwrap() {
            let name = header["name"].as_str().unwrap();
            let sent = delivery.header(&name.to_ascii_lowercase());
            let schema = header["schema"].clone();
            let value = match schema["type"].as_str() {
                Some("integer") => json!(sent.parse::<i64>().unwrap_or(-1)),
                _ => json!(sent),
            };
            if !jsonschema::is_valid(&schema, &value) {
                problems.push(format!("{kind}: header {name} = {sent:?}"));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    // The check bites: another event's body does not pass as this one.
    let mut root = doc["webhooks"]["tag.created"]["post"]["requestBody"]["content"]
        ["application/json"]["schema"]
        .clone();
    root["components"] = doc["components"].clone();
    let other = got
        .iter()
        .map(|d| d.json())
        .find(|b| b["type"] != "tag.created")
        .unwrap();
    assert!(!jsonschema::is_valid(&root, &other));
}
