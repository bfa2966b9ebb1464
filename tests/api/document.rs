//! The OpenAPI document and the router agree: every operation the document lists is
//! served, and every route mounted outside the document is a named exception.

use reqwest::Method;
use serde_json::Value;

use crate::helpers::*;

/// Routes mounted on the API listener that the document deliberately leaves out.
const UNDOCUMENTED: &[&str] = &["/health", "/api/v1/openapi.json", "/__test/panic"];

async fn document(app: &TestApp) -> Value {
    app.client
        .get(format!("{}/api/v1/openapi.json", app.api))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap()
}

#[tokio::test]
async fn every_operation_in_the_document_is_served() {
    let app = spawn_app().await;
    let doc = document(&app).await;
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
    let doc = document(&app).await;
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
    assert_eq!(hooks.len(), 58);
    let sent = &hooks["message.sent"]["post"];
    assert_eq!(
        sent["requestBody"]["content"]["application/json"]["example"]["type"],
        "message.sent"
    );
    assert!(doc["components"]["schemas"].get("Envelope").is_some());
}
