//! `switchboard listen` and the operator's endpoints behind it: only the admin token may
//! point an endpoint at a loopback address; the command receives a triggered event,
//! prints it with its verified signature, forwards it, and removes its endpoint on Ctrl-C.

use std::time::Duration;

use reqwest::Method;
use serde_json::json;
use switchboard_actors::events::signature;
use tokio::io::{AsyncBufReadExt, BufReader, Lines};
use tokio::process::{Child, ChildStdout};

use crate::helpers::*;
use crate::receiver::TestReceiver;

/// `switchboard listen` for the app's workspace, forwarding to `forward_to`.
fn listen(app: &TestApp, forward_to: &str) -> (Child, Lines<BufReader<ChildStdout>>) {
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_switchboard"))
        .args([
            "listen",
            "--admin-url",
            &app.admin,
            "--admin-token",
            ADMIN_TOKEN,
            "--workspace",
            &app.workspace_id,
            "--forward-to",
            forward_to,
        ])
        .env_remove("SWITCHBOARD_ADMIN_URL")
        .env_remove("SWITCHBOARD_ADMIN_TOKEN")
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("the CLI runs");
    let lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
    (child, lines)
}

/// The next printed line that contains `needle` (10 s at most).
async fn line_with(lines: &mut Lines<BufReader<ChildStdout>>, needle: &str) -> String {
    let found = async {
        while let Ok(Some(line)) = lines.next_line().await {
            if line.contains(needle) {
                return line;
            }
        }
        panic!("the output ended before a line with {needle}");
    };
    tokio::time::timeout(Duration::from_secs(10), found)
        .await
        .unwrap_or_else(|_| panic!("no line with {needle} within 10 s"))
}

#[tokio::test]
async fn listen_prints_and_forwards_a_triggered_event_signed_and_removes_its_endpoint_on_ctrl_c() {
    // Private destinations are off, as in production: the loopback endpoint is the
    // operator's alone.
    let app = spawn_app().await;
    let app_receiver = TestReceiver::start().await;
    let (mut child, mut out) = listen(&app, &app_receiver.url);
    let ready = line_with(&mut out, "Ready").await;
    let secret = ready
        .split(|c: char| c.is_whitespace() || c == ')')
        .find(|w| w.starts_with("whsec_"))
        .unwrap_or_else(|| panic!("no secret in {ready}"))
        .to_string();
    let endpoints = listed(app.get("/webhooks").await);
    assert_eq!(endpoints.len(), 1);
    assert!(
        ready.contains(endpoints[0]["id"].as_str().unwrap()),
        "{ready}"
    );
    assert!(endpoints[0]["url"]
        .as_str()
        .unwrap()
        .starts_with("http://127.0.0.1:"));

    let event = app
        .admin_post(
            &format!("/admin/workspaces/{}/events", app.workspace_id),
            json!({"type": "booking.created"}),
        )
        .await
        .expect(202)
        .body["id"]
        .as_str()
        .unwrap()
        .to_string();

    let got = app_receiver.wait_for(1).await;
    let forwarded = &got[0];
    assert_eq!(forwarded.event_id(), event);
    assert_eq!(forwarded.event_type(), "booking.created");
    assert!(
        signature::verify(
            forwarded.header("x-service-signature"),
            &forwarded.body,
            &secret,
            chrono::Utc::now().timestamp(),
            300
        ),
        "the forwarded event verifies with the printed secret"
    );
    assert_eq!(forwarded.json()["id"], event.as_str());
    let printed = line_with(&mut out, &event).await;
    assert!(printed.contains("booking.created"), "{printed}");
    assert!(printed.contains("signature verified"), "{printed}");
    assert!(printed.contains("[200]"), "{printed}");
    eventually("the delivery is recorded as delivered", async || {
        listed(app.get("/webhooks").await)[0]["last_delivery"]["delivered"] == true
    })
    .await;

    let pid = child.id().expect("running").to_string();
    let interrupted = std::process::Command::new("kill")
        .args(["-INT", &pid])
        .status()
        .expect("kill runs");
    assert!(interrupted.success());
    let removed = line_with(&mut out, "removed").await;
    assert!(removed.contains(endpoints[0]["id"].as_str().unwrap()));
    let exit = tokio::time::timeout(Duration::from_secs(10), child.wait())
        .await
        .expect("exits after Ctrl-C")
        .unwrap();
    assert!(exit.success(), "{exit:?}");
    assert!(listed(app.get("/webhooks").await).is_empty());
}

#[tokio::test]
async fn listen_refuses_to_start_without_the_admin_token() {
    let app = spawn_app().await;
    let out = tokio::process::Command::new(env!("CARGO_BIN_EXE_switchboard"))
        .args([
            "listen",
            "--admin-url",
            &app.admin,
            "--admin-token",
            &app.key,
            "--workspace",
            &app.workspace_id,
            "--forward-to",
            "http://127.0.0.1:9/",
        ])
        .env_remove("SWITCHBOARD_ADMIN_URL")
        .env_remove("SWITCHBOARD_ADMIN_TOKEN")
        .output()
        .await
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("cannot create the endpoint: 401"), "{err}");
    assert!(listed(app.get("/webhooks").await).is_empty());
}

#[tokio::test]
async fn only_the_admin_token_may_point_an_endpoint_at_a_loopback_address() {
    let app = spawn_app().await;
    let path = format!("/admin/workspaces/{}/webhooks", app.workspace_id);
    let loopback = json!({"url": "http://127.0.0.1:9/hook", "events": ["*"]});

    app.post(
        "/webhooks",
        json!({"url": "https://127.0.0.1:9/hook", "events": ["*"]}),
    )
    .await
    .expect_error(422, "unsafe_url");
    app.call(Method::POST, "/webhooks")
        .token(&app.key)
        .json(loopback.clone())
        .send()
        .await
        .expect_error(422, "validation_failed");
    app.client
        .post(format!("{}{path}", app.admin))
        .bearer_auth(&app.key)
        .json(&loopback)
        .send()
        .await
        .map(|r| assert_eq!(r.status(), 401))
        .unwrap();

    let created = app.admin_post(&path, loopback).await.created();
    let id = created["id"].as_str().unwrap().to_string();
    assert!(created["secret"].as_str().unwrap().starts_with("whsec_"));
    assert_eq!(created["url"], "http://127.0.0.1:9/hook");

    for other in [
        "https://10.0.0.1/hook",
        "https://169.254.169.254/latest",
        "https://[fd00::1]/hook",
    ] {
        app.admin_post(&path, json!({"url": other, "events": ["*"]}))
            .await
            .expect_error(422, "unsafe_url");
    }
    // A name is resolved, so `localhost` is not a loopback literal: plain http stays refused.
    app.admin_post(
        &path,
        json!({"url": "http://localhost:9/hook", "events": ["*"]}),
    )
    .await
    .expect_error(422, "validation_failed");

    // An API key cannot move the operator's endpoint to another loopback address.
    app.patch(
        &format!("/webhooks/{id}"),
        json!({"url": "https://127.0.0.2/hook"}),
    )
    .await
    .expect_error(422, "unsafe_url");

    let gone = app
        .admin_call(Method::DELETE, &format!("{path}/{id}"))
        .send()
        .await
        .ok();
    assert_eq!(gone["deleted"], true);
    app.admin_call(Method::DELETE, &format!("{path}/{id}"))
        .send()
        .await
        .expect_error(404, "not_found");
    // A malformed endpoint id is 400, as on the API's own routes.
    app.admin_call(Method::DELETE, &format!("{path}/nope"))
        .send()
        .await
        .expect_error(400, "invalid_request");
    app.admin_post(
        "/admin/workspaces/ws_nope/webhooks",
        json!({"url": "http://127.0.0.1:9/hook", "events": ["*"]}),
    )
    .await
    .expect_error(404, "not_found");
}

#[tokio::test]
async fn a_loopback_delivery_goes_out_for_the_operators_endpoint_only() {
    // Created while private destinations were allowed, then served without them: the
    // API key's loopback endpoint is refused at send time, the operator's is delivered.
    let app = spawn_app_with(|s| s.webhooks.allow_private = true).await;
    let (api_receiver, operator_receiver) =
        (TestReceiver::start().await, TestReceiver::start().await);
    let api_endpoint = app
        .post(
            "/webhooks",
            json!({"url": api_receiver.url, "events": ["tag.created"]}),
        )
        .await
        .created()["id"]
        .as_str()
        .unwrap()
        .to_string();
    app.admin_post(
        &format!("/admin/workspaces/{}/webhooks", app.workspace_id),
        json!({"url": operator_receiver.url, "events": ["tag.created"]}),
    )
    .await
    .expect(201);
    let app = app.restart().await;
    assert!(
        !app.app
            .as_ref()
            .unwrap()
            .state
            .settings
            .webhooks
            .allow_private
    );

    app.post("/tags", json!({"name": "after-restart"}))
        .await
        .expect(201);
    operator_receiver.wait_for(1).await;
    eventually(
        "the API key's endpoint records a refused attempt",
        async || {
            let e = app.get(&format!("/webhooks/{api_endpoint}")).await.body;
            e["last_delivery"]["error"]
                .as_str()
                .is_some_and(|err| err.contains("refused destination"))
        },
    )
    .await;
    assert!(api_receiver.received().is_empty());
}
