//! The service's log, read from the real binary: one `info` line per request with its
//! method, route template, status, latency, workspace and request id; the start-up lines
//! in the chosen format; no colour codes when stderr is not a terminal.

use reqwest::Method;
use serde_json::{json, Value};

use crate::helpers::*;

/// Sends `method path` (under /api/v1) with `key`, `body` and the request id `id`; the
/// answer's status and JSON body.
async fn send_with_id(
    server: &Server,
    method: Method,
    key: &str,
    path: &str,
    body: Value,
    id: &str,
) -> (u16, Value) {
    let r = reqwest::Client::builder()
        .no_proxy()
        .build()
        .unwrap()
        .request(method, server.url(path))
        .bearer_auth(key)
        .header("X-Request-Id", id)
        .json(&body)
        .send()
        .await
        .expect("server answers");
    assert_eq!(r.headers()["x-request-id"], id);
    (r.status().as_u16(), r.json().await.unwrap_or(Value::Null))
}

/// The logged lines that mention `needle`, once at least one does.
async fn lines_with(server: &Server, needle: &str) -> Vec<String> {
    eventually(&format!("a log line with {needle}"), async || {
        server.logged().iter().any(|l| l.contains(needle))
    })
    .await;
    server
        .logged()
        .into_iter()
        .filter(|l| l.contains(needle))
        .collect()
}

#[tokio::test]
async fn each_request_logs_one_info_line_with_method_route_status_latency_workspace_and_id() {
    let dir = tempfile::tempdir().unwrap();
    let server = launch(dir.path(), &[], &[]).await;
    let key = server.key.clone().expect("bootstrap key");
    let (status, tag) = send_with_id(
        &server,
        Method::POST,
        &key,
        "/tags",
        json!({"name": "logged"}),
        "log-create-1",
    )
    .await;
    assert_eq!(status, 201);
    let id = tag["id"].as_u64().expect("tag id");
    let (status, _) = send_with_id(
        &server,
        Method::PATCH,
        &key,
        &format!("/tags/{id}"),
        json!({"name": "renamed"}),
        "log-rename-1",
    )
    .await;
    assert_eq!(status, 200);

    let created = lines_with(&server, "request_id=log-create-1").await;
    assert_eq!(created.len(), 1, "one line per request: {created:#?}");
    let line = &created[0];
    for part in [
        " INFO ",
        "method=POST",
        "route=/api/v1/tags ",
        "status=201",
        "workspace_id=ws_",
        "latency_ms=",
    ] {
        assert!(line.contains(part), "`{part}` missing from {line}");
    }
    let renamed = lines_with(&server, "request_id=log-rename-1").await;
    assert_eq!(renamed.len(), 1, "one line per request: {renamed:#?}");
    assert!(
        renamed[0].contains("route=/api/v1/tags/{id}"),
        "the route template, never the raw path: {}",
        renamed[0]
    );
    assert!(
        !renamed[0].contains(&format!("/tags/{id}")),
        "{}",
        renamed[0]
    );

    // Answers given before the handler name the route too: a refused key, a replay.
    let (status, _) = send_with_id(
        &server,
        Method::POST,
        "ai_not-a-key",
        "/tags",
        json!({"name": "refused"}),
        "log-refused-1",
    )
    .await;
    assert_eq!(status, 401);
    let refused = lines_with(&server, "request_id=log-refused-1").await;
    assert!(
        refused[0].contains("route=/api/v1/tags ") && refused[0].contains("status=401"),
        "{}",
        refused[0]
    );
    for (n, id) in ["log-first-1", "log-replay-1"].into_iter().enumerate() {
        let replayed = reqwest::Client::new()
            .post(server.url("/tags"))
            .bearer_auth(&key)
            .header("x-request-id", id)
            .header("idempotency-key", "log-key")
            .json(&json!({"name": "once"}))
            .send()
            .await
            .unwrap();
        assert_eq!(
            replayed.headers().contains_key("idempotent-replayed"),
            n == 1
        );
        let line = lines_with(&server, &format!("request_id={id}")).await;
        assert!(line[0].contains("route=/api/v1/tags "), "{}", line[0]);
    }

    let all = server.logged();
    assert!(
        all.iter()
            .any(|l| l.contains("api listening url=http://127.0.0.1:")),
        "the start-up lines go through the log: {all:#?}"
    );
    assert!(
        all.iter().all(|l| !l.contains('\u{1b}')),
        "no colour codes when stderr is not a terminal: {all:#?}"
    );
}

#[tokio::test]
async fn the_json_format_covers_the_start_up_lines_and_the_request_lines() {
    let dir = tempfile::tempdir().unwrap();
    let server = launch(dir.path(), &[("SWITCHBOARD_LOG_FORMAT", "json")], &[]).await;
    let key = server
        .key
        .clone()
        .expect("the key's start-up line, read as JSON");
    let (status, _) = send_with_id(
        &server,
        Method::POST,
        &key,
        "/tags",
        json!({"name": "json"}),
        "log-json-1",
    )
    .await;
    assert_eq!(status, 201);
    lines_with(&server, "log-json-1").await;

    let parsed: Vec<Value> = server
        .logged()
        .iter()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect();
    let said = |message: &str| {
        parsed
            .iter()
            .find(|v| v["fields"]["message"] == message)
            .unwrap_or_else(|| panic!("no `{message}` line: {parsed:#?}"))
    };
    assert!(said("api listening")["fields"]["url"]
        .as_str()
        .is_some_and(|u| u.starts_with("http://127.0.0.1:")));
    assert!(said("operator api listening")["fields"]["url"].is_string());
    assert!(said("workspace \"Default\" created")["fields"]["workspace_id"].is_string());

    let requests: Vec<&Value> = parsed
        .iter()
        .filter(|v| v["span"]["request_id"] == "log-json-1")
        .collect();
    assert_eq!(requests.len(), 1, "{requests:#?}");
    let line = requests[0];
    assert_eq!(line["level"], "INFO");
    assert_eq!(line["span"]["method"], "POST");
    assert_eq!(line["span"]["route"], "/api/v1/tags");
    assert_eq!(line["span"]["status"], 201);
    assert!(line["span"]["workspace_id"]
        .as_str()
        .is_some_and(|w| w.starts_with("ws_")));
    assert!(line["fields"]["latency_ms"].is_number(), "{line}");
}
