//! An acknowledged write survives `kill -9`; SIGTERM stops cleanly; actors that fail or
//! passivate come back from the store.

use std::time::Duration;

use serde_json::json;
use switchboard_actors::workspace::WorkspaceMsg;
use tokio::process::Command;

use crate::helpers::*;

#[tokio::test]
async fn acknowledged_writes_survive_kill_9() {
    let dir = tempfile::tempdir().unwrap();
    let mut server = launch(dir.path(), &[], &[]).await;
    let key = server.key.clone().expect("a fresh folder prints a key");
    let client = reqwest::Client::new();

    let writes = (0..40).map(|i| {
        client
            .post(server.url("/tags"))
            .bearer_auth(&key)
            .json(&json!({"name": format!("tag-{i}")}))
            .send()
    });
    for r in futures::future::join_all(writes).await {
        assert_eq!(r.unwrap().status(), 201);
    }
    // One idempotent request, sent before the kill and again after it.
    let add_field = |server: &Server| {
        client
            .post(server.url("/custom-fields"))
            .bearer_auth(&key)
            .header("Idempotency-Key", "field-once")
            .json(&json!({"label": "Shoe size", "type": "number"}))
            .send()
    };
    let field = add_field(&server).await.unwrap();
    assert_eq!(field.status(), 201);
    let field: serde_json::Value = field.json().await.unwrap();

    server.kill_9().await;
    crate::store_safety::assert_store_checks(dir.path());

    let server = launch(dir.path(), &[], &[]).await;
    assert!(server.key.is_none(), "the bootstrap runs only once");
    let tags: serde_json::Value = server.get_json(&key, "/tags").await;
    let mut names = each_str(&tags["data"], "name");
    names.sort();
    let mut expected: Vec<String> = (0..40).map(|i| format!("tag-{i}")).collect();
    expected.sort();
    assert_eq!(names, expected);
    let replay = add_field(&server).await.unwrap();
    assert_eq!(replay.headers()["idempotent-replayed"], "true");
    assert_eq!(replay.json::<serde_json::Value>().await.unwrap(), field);
}

#[tokio::test]
async fn sigterm_stops_the_service_with_exit_code_0() {
    let dir = tempfile::tempdir().unwrap();
    let mut server = launch(dir.path(), &[], &[]).await;
    let pid = server.child.id().unwrap().to_string();
    let status = std::process::Command::new("kill")
        .args(["-TERM", &pid])
        .status()
        .unwrap();
    assert!(status.success());
    let exit = tokio::time::timeout(Duration::from_secs(30), server.child.wait())
        .await
        .expect("stops within the grace period")
        .unwrap();
    assert!(exit.success(), "{exit:?}");
}

#[tokio::test]
async fn a_bad_setting_stops_the_start_naming_the_variable() {
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_switchboard"))
        .arg("serve")
        .env("SWITCHBOARD_DATA_DIR", dir.path())
        .env("SWITCHBOARD_IDEMPOTENCY_TTL", "soon")
        .output()
        .await
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("SWITCHBOARD_IDEMPOTENCY_TTL"), "{stderr}");
}

#[tokio::test]
async fn a_failed_workspace_actor_restarts_from_the_store() {
    let app = spawn_app().await;
    app.post("/tags", json!({"name": "before"}))
        .await
        .expect(201);
    assert_eq!(workspace_restarts(&app), 0);
    break_workspace_actor(&app, WorkspaceMsg::Crash, "failure noticed").await;
}

#[tokio::test]
async fn idle_workspace_actors_stop_and_come_back_on_the_next_request() {
    let app = spawn_app_with(|s| s.actor_idle = Duration::from_millis(50)).await;
    app.post("/tags", json!({"name": "kept"})).await.expect(201);
    let registry = &app.app.as_ref().unwrap().state.registry;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while registry.live() > 0 {
        assert!(tokio::time::Instant::now() < deadline, "actor passivated");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(
        registry
            .stats()
            .passivations
            .load(std::sync::atomic::Ordering::Relaxed)
            >= 1
    );
    let tags = app.get("/tags").await.expect(200);
    assert_eq!(tags.body["data"][0]["name"], "kept");
    assert_eq!(registry.live(), 1);
}

/// 64 connections write contacts as fast as the server takes them; the process is killed
/// mid-run. Every contact the server acknowledged with a 2xx is there after the restart,
/// with the name it was written with.
#[tokio::test]
async fn every_acknowledged_write_of_a_64_connection_run_survives_kill_9() {
    use futures::StreamExt;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::{Arc, Mutex};

    const CONNECTIONS: usize = 64;
    const KILL_AFTER: usize = 1_500;
    let dir = tempfile::tempdir().unwrap();
    let mut server = launch(dir.path(), &[], &[]).await;
    let key = server.key.clone().expect("a fresh folder prints a key");
    let url = server.url("/contacts");
    let acknowledged = Arc::new(Mutex::new(Vec::<(u64, String)>::new()));
    let count = Arc::new(AtomicUsize::new(0));
    let writers: Vec<_> = (0..CONNECTIONS)
        .map(|writer| {
            let (url, key) = (url.clone(), key.clone());
            let (acknowledged, count) = (acknowledged.clone(), count.clone());
            tokio::spawn(async move {
                let client = reqwest::Client::builder().no_proxy().build().unwrap();
                // Writes go on until the connection breaks, so some are in flight at the
                // moment of the kill.
                for n in 0.. {
                    let name = format!("w{writer}n{n}");
                    let sent = client
                        .post(&url)
                        .bearer_auth(&key)
                        .json(&json!({"first_name": name}))
                        .send()
                        .await;
                    let Ok(r) = sent else { break };
                    if !r.status().is_success() {
                        continue;
                    }
                    let Ok(body) = r.json::<serde_json::Value>().await else {
                        break;
                    };
                    let id = body["id"].as_u64().expect("a 2xx carries the id");
                    acknowledged.lock().unwrap().push((id, name));
                    count.fetch_add(1, Ordering::Relaxed);
                }
            })
        })
        .collect();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(120);
    while count.load(Ordering::Relaxed) < KILL_AFTER {
        assert!(tokio::time::Instant::now() < deadline, "writes go through");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    server.kill_9().await;
    for w in writers {
        w.await.unwrap();
    }
    crate::store_safety::assert_store_checks(dir.path());

    let server = launch(dir.path(), &[], &[]).await;
    let acknowledged = std::mem::take(&mut *acknowledged.lock().unwrap());
    assert!(acknowledged.len() >= KILL_AFTER);
    let client = reqwest::Client::builder().no_proxy().build().unwrap();
    let checks = futures::stream::iter(acknowledged)
        .map(|(id, name)| {
            let r = client
                .get(server.url(&format!("/contacts/{id}")))
                .bearer_auth(&key)
                .send();
            async move { (id, name, r.await) }
        })
        .buffer_unordered(32);
    futures::pin_mut!(checks);
    while let Some((id, name, r)) = checks.next().await {
        let r = r.expect("the restarted server answers");
        assert_eq!(r.status(), 200, "acknowledged contact {id} survived");
        let body: serde_json::Value = r.json().await.unwrap();
        assert_eq!(body["first_name"], name.as_str(), "contact {id}");
    }
}

/// One record of every kind a workspace keeps, each list read before and after a restart:
/// every record must read back from the store exactly as it was answered (a record the
/// store cannot read back keeps its whole workspace from loading).
#[tokio::test]
async fn every_kind_of_record_reads_back_the_same_after_a_restart() {
    let app = spawn_app_with(crate::webhooks::fast_webhooks).await;
    let ann = app
        .post(
            "/contacts",
            json!({"first_name": "Ann", "phone": "+15550100", "tags": ["vip"]}),
        )
        .await
        .created();
    let ann_id = ann["id"].as_u64().unwrap();
    app.post(
        &format!("/contacts/{ann_id}/notes"),
        json!({"body": "Prefers mornings"}),
    )
    .await
    .expect(201);
    app.post(
        "/custom-fields",
        json!({"label": "Score", "key": "score", "type": "number"}),
    )
    .await
    .expect(201);
    app.post("/closing-notes", json!({"name": "Resolved"}))
        .await
        .expect(201);
    let product = app
        .post("/products", json!({"name": "Teapot", "price": 12.5}))
        .await
        .created();
    let order = app
        .post(
            "/orders",
            json!({"contact_id": ann_id, "items": [{"product_id": product["id"], "name": "Teapot", "quantity": 2, "unit_price": 12.5}]}),
        )
        .await
        .created();
    app.post(
        &format!("/orders/{}/payment-proofs", order["id"]),
        json!({"url": "https://files.example/receipt.pdf", "name": "receipt.pdf", "content_type": "application/pdf"}),
    )
    .await
    .expect(201);
    let conversation = crate::fixtures::new_conversation(&app, ann_id, "api").await;
    let c = conversation["id"].as_u64().unwrap();
    crate::fixtures::team_reply(&app, c, "Hello Ann").await;
    app.post(
        &format!("/conversations/{c}/comments"),
        json!({"body": "VIP, be quick"}),
    )
    .await
    .expect(201);
    app.post(
        "/chat",
        json!({"contact": {"phone": "+15550111"}, "message": "agent please"}),
    )
    .await
    .expect(200);
    let booking = app
        .post("/bookings", json!({"contact_id": ann_id, "service": "Fitting", "starts_at": "2030-05-01T10:00:00Z", "duration_minutes": 30}))
        .await
        .created();
    app.post(
        &format!("/bookings/{}/documents", booking["id"]),
        json!({"documents": [{"url": "https://files.example/plan.pdf"}]}),
    )
    .await
    .expect(200);
    let users = listed(app.get("/users").await.expect(200));
    app.post("/reminders", json!({"title": "Call back", "due_at": "2030-01-01T00:00:00Z", "assignee_user_ids": [users[0]["id"].clone()], "contact_id": ann_id}))
        .await
        .expect(201);
    app.post("/calls", json!({"direction": "inbound", "from_number": "+1 555-0100", "to_number": "+15550999", "outcome": "completed", "started_at": "2030-01-01T09:00:00Z"}))
        .await
        .expect(201);
    app.post(
        "/campaigns",
        json!({"name": "Spring", "text": "Hi", "channel": "api"}),
    )
    .await
    .expect(201);
    let form = app
        .post(
            "/forms",
            json!({"name": "Intake", "fields": [
                {"key": "topic", "label": "Topic", "type": "text"},
                {"key": "guests", "label": "Guests", "type": "number"}
            ]}),
        )
        .await
        .created();
    app.post(
        &format!("/forms/{}/submissions", form["id"]),
        json!({"contact": {"email": "bea@example.com"}, "values": {"topic": "hours", "guests": 12345678901234567890.5}}),
    )
    .await
    .expect(201);
    app.post(
        "/channels",
        json!({"type": "chan_a", "relay_url": "http://127.0.0.1:9/relay"}),
    )
    .await
    .expect(201);
    app.post(
        "/webhooks",
        json!({"url": "http://127.0.0.1:9/hook", "events": ["tag.created"]}),
    )
    .await
    .expect(201);
    app.patch("/ai-settings", json!({"instructions": "Be brief."}))
        .await
        .expect(200);

    let lists = [
        "/contacts".to_string(),
        format!("/contacts/{ann_id}/notes"),
        "/tags".into(),
        "/custom-fields".into(),
        "/closing-notes".into(),
        "/products".into(),
        "/orders".into(),
        "/conversations".into(),
        format!("/conversations/{c}/messages"),
        "/handovers".into(),
        "/bookings".into(),
        "/reminders".into(),
        "/calls".into(),
        "/campaigns".into(),
        "/forms".into(),
        format!("/forms/{}/submissions", form["id"]),
        "/channels".into(),
        "/webhooks".into(),
        "/ai-settings".into(),
        "/credits".into(),
        "/users".into(),
    ];
    let mut before = Vec::new();
    for path in &lists {
        let body = app.get(path).await.ok();
        if let Some(items) = body["data"].as_array() {
            assert!(!items.is_empty(), "{path} lists nothing to compare");
        }
        before.push(body);
    }
    let app = app.restart().await;
    for (path, was) in lists.iter().zip(before) {
        assert_eq!(app.get(path).await.ok(), was, "{path} after the restart");
    }
}
