//! How deliveries flow: a backlog drains as fast as the receiver answers, and the headers
//! go out spelled as the spec writes them.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::receiver::TestReceiver;
use crate::webhooks::{hook, spawn_webhook_app_with};

#[tokio::test]
async fn a_backlog_drains_as_fast_as_the_receiver_answers_not_per_tick() {
    // With a one-hour tick, only a freed slot can start the next delivery.
    let app = spawn_webhook_app_with(|s| s.webhooks.tick = Duration::from_secs(3600)).await;
    let rx = TestReceiver::start().await;
    rx.answer_after(Duration::from_millis(100));
    hook(&app, &rx.url, &["tag.*"]).await;
    let writes = (0..40).map(|i| app.post("/tags", json!({"name": format!("t{i}")})));
    for r in futures::future::join_all(writes).await {
        r.expect(201);
    }
    rx.wait_for(40).await;
}

/// A receiver that keeps the raw head of each request, to see header spelling.
async fn raw_receiver() -> (String, Arc<Mutex<Vec<String>>>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/hook", listener.local_addr().unwrap());
    let heads = Arc::new(Mutex::new(Vec::new()));
    let log = heads.clone();
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            let log = log.clone();
            tokio::spawn(async move {
                let mut got = Vec::new();
                let mut buf = [0u8; 4096];
                while !got.windows(4).any(|w| w == b"\r\n\r\n") {
                    match socket.read(&mut buf).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => got.extend_from_slice(&buf[..n]),
                    }
                }
                let text = String::from_utf8_lossy(&got).to_string();
                let head = text.split("\r\n\r\n").next().unwrap_or("").to_string();
                log.lock().unwrap().push(head);
                let _ = socket
                    .write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\nconnection: close\r\n\r\n")
                    .await;
            });
        }
    });
    (url, heads)
}

#[tokio::test]
async fn deliveries_spell_their_headers_as_the_spec_writes_them() {
    let app = spawn_webhook_app_with(|_| {}).await;
    let (url, heads) = raw_receiver().await;
    hook(&app, &url, &["tag.*"]).await;
    app.post("/tags", json!({"name": "VIP"})).await.expect(201);
    for _ in 0..250 {
        if !heads.lock().unwrap().is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let head = heads
        .lock()
        .unwrap()
        .first()
        .cloned()
        .expect("a delivery arrived");
    for name in [
        "Content-Type: application/json",
        "User-Agent: Service-Webhooks/2.0",
        "X-Service-Signature: t=",
        "X-Service-Event-Id: evt_",
        "X-Service-Event-Type: tag.created",
        "X-Service-Delivery-Attempt: 1",
    ] {
        assert!(head.contains(name), "`{name}` not in:\n{head}");
    }
}

/// A name this machine resolves to a loopback address that is not a `localhost` name
/// (those are refused by name already), from /etc/hosts: the machine's own host name.
fn loopback_name() -> String {
    let hosts = std::fs::read_to_string("/etc/hosts").expect("/etc/hosts");
    hosts
        .lines()
        .map(|l| l.split('#').next().unwrap_or(""))
        .filter_map(|l| {
            let mut parts = l.split_whitespace();
            let ip = parts.next()?;
            ip.starts_with("127.").then(|| parts.collect::<Vec<_>>())
        })
        .flatten()
        .find(|name| !name.contains("localhost"))
        .map(str::to_string)
        .expect("/etc/hosts names this machine with a loopback address")
}

#[tokio::test]
async fn a_host_name_that_resolves_to_a_private_address_is_refused_when_saved() {
    let app = crate::helpers::spawn_app().await;
    let name = loopback_name();
    let url = format!("https://{name}/hook");
    let refused = app
        .post("/webhooks", json!({"url": url, "events": ["tag.*"]}))
        .await
        .expect_error(422, "unsafe_url");
    assert!(refused.body["error"]["message"]
        .as_str()
        .unwrap()
        .contains(&name));

    let ok = app
        .post(
            "/webhooks",
            json!({"url": "https://hooks.example.com/in", "events": ["tag.*"]}),
        )
        .await
        .expect(201);
    let id = ok.body["id"].as_str().unwrap().to_string();
    app.patch(&format!("/webhooks/{id}"), json!({"url": url}))
        .await
        .expect_error(422, "unsafe_url");
}

#[tokio::test]
async fn a_keyed_test_send_interrupted_by_kill_9_is_not_sent_again() {
    let dir = tempfile::tempdir().unwrap();
    let rx = TestReceiver::start().await;
    rx.answer_after(Duration::from_secs(30));
    let mut server = crate::helpers::launch(
        dir.path(),
        &[("SWITCHBOARD_WEBHOOK_ALLOW_PRIVATE", "true")],
        &[],
    )
    .await;
    let key = server.key.clone().unwrap();
    let client = reqwest::Client::new();
    let endpoint = server.new_webhook(&key, &rx.url, &["tag.created"]).await;
    let test_url = server.url(&format!("/webhooks/{endpoint}/test"));
    let send = {
        let (client, url, key) = (client.clone(), test_url.clone(), key.clone());
        tokio::spawn(async move {
            client
                .post(url)
                .bearer_auth(key)
                .header("Idempotency-Key", "test-once")
                .json(&json!({}))
                .send()
                .await
        })
    };
    rx.wait_for(1).await;
    server.kill_9().await;
    let _ = send.await;
    crate::store_safety::assert_store_checks(dir.path());

    let server = crate::helpers::launch(
        dir.path(),
        &[("SWITCHBOARD_WEBHOOK_ALLOW_PRIVATE", "true")],
        &[],
    )
    .await;
    let again = client
        .post(server.url(&format!("/webhooks/{endpoint}/test")))
        .bearer_auth(&key)
        .header("Idempotency-Key", "test-once")
        .json(&json!({}))
        .send()
        .await
        .unwrap();
    assert_eq!(again.status(), 409);
    let body: serde_json::Value = again.json().await.unwrap();
    assert_eq!(body["error"]["code"], "request_in_progress");
    rx.stays_at(1, Duration::from_millis(300)).await;
}

/// A server process on `dir` whose endpoint at `rx` takes tag.created, and one tag made:
/// (server, API key, endpoint id).
async fn tag_created_hook(
    dir: &std::path::Path,
    env: &[(&str, &str)],
    rx: &TestReceiver,
) -> (crate::helpers::Server, String, String) {
    let server = crate::helpers::launch(dir, env, &[]).await;
    let key = server.key.clone().unwrap();
    let endpoint = server.new_webhook(&key, &rx.url, &["tag.created"]).await;
    let tag = server
        .send(reqwest::Method::POST, &key, "/tags", json!({"name": "VIP"}))
        .await;
    assert_eq!(tag.status(), 201);
    (server, key, endpoint)
}

#[tokio::test]
async fn a_delivery_cut_short_by_kill_9_goes_out_again_as_the_next_attempt() {
    let dir = tempfile::tempdir().unwrap();
    let rx = TestReceiver::start().await;
    rx.answer_after(Duration::from_secs(30));
    let env = [
        ("SWITCHBOARD_WEBHOOK_ALLOW_PRIVATE", "true"),
        ("SWITCHBOARD_WEBHOOK_TICK", "50ms"),
    ];
    let (mut server, key, endpoint) = tag_created_hook(dir.path(), &env, &rx).await;
    let first = rx.wait_for(1).await;
    assert_eq!(first[0].attempt(), 1);
    server.kill_9().await;
    crate::store_safety::assert_store_checks(dir.path());

    rx.respond_with(200);
    let server = crate::helpers::launch(dir.path(), &env, &[]).await;
    let again = rx.wait_for(2).await;
    assert_eq!(again[1].event_id(), first[0].event_id());
    assert_eq!(
        again[1].attempt(),
        2,
        "the repeat carries the next attempt number"
    );
    let mut log = serde_json::Value::Null;
    for _ in 0..100 {
        log = server
            .get_json(&key, &format!("/webhooks/{endpoint}/deliveries"))
            .await;
        if log["data"][0]["status"] == "delivered" {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let attempts = log["data"][0]["attempts"].as_array().unwrap().clone();
    assert_eq!(attempts.len(), 2, "{log}");
    assert!(attempts[0]["error"]
        .as_str()
        .unwrap()
        .starts_with("interrupted"));
    assert_eq!(attempts[1]["status_code"], 200);
}

#[tokio::test]
async fn a_last_attempt_cut_short_by_kill_9_ends_the_ladder_without_an_extra_attempt() {
    let dir = tempfile::tempdir().unwrap();
    let rx = TestReceiver::start().await;
    rx.respond_with(500);
    // Two attempts in all: the first fails, the second is cut short.
    let env = [
        ("SWITCHBOARD_WEBHOOK_ALLOW_PRIVATE", "true"),
        ("SWITCHBOARD_WEBHOOK_TICK", "50ms"),
        ("SWITCHBOARD_WEBHOOK_RETRY_DELAYS", "300ms"),
    ];
    let (mut server, key, endpoint) = tag_created_hook(dir.path(), &env, &rx).await;
    let log_path = format!("/webhooks/{endpoint}/deliveries");
    let mut log = serde_json::Value::Null;
    for _ in 0..200 {
        log = server.get_json(&key, &log_path).await;
        if log["data"][0]["attempts"][0]["status_code"] == 500 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(log["data"][0]["attempts"][0]["status_code"], 500, "{log}");
    rx.answer_after(Duration::from_secs(30));
    let got = rx.wait_for(2).await;
    assert_eq!(got[1].attempt(), 2);
    server.kill_9().await;

    rx.respond_with(200);
    let server = crate::helpers::launch(dir.path(), &env, &[]).await;
    rx.stays_at(2, Duration::from_millis(800)).await;
    let log = server.get_json(&key, &log_path).await;
    let d = &log["data"][0];
    assert_eq!(d["status"], "failed", "{d}");
    assert_eq!(d["attempt_count"], 2, "{d}");
    assert_eq!(d["next_attempt_at"], serde_json::Value::Null);
    assert!(d["attempts"][1]["error"]
        .as_str()
        .unwrap()
        .starts_with("interrupted"));
}
