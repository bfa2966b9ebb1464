//! What only the sled engine has: a data folder on a disk that fills up, and data folders
//! written before the pending-delivery index existed (PostgreSQL databases never lack it).

use std::time::Duration;

use serde_json::{json, Value};

use crate::fixtures::*;
use crate::helpers::*;
use crate::store_safety::assert_store_checks;
use crate::webhook_delivery::new_tag;
use crate::webhooks::{deliveries_when, restart_webhook_app, spawn_webhook_app_with};
use switchboard::config::Settings;

/// A tmpfs of a given size mounted on a temporary folder, unmounted on drop. Mounting needs
/// root, which the test machines and CI have.
struct SmallDisk {
    dir: tempfile::TempDir,
}

impl SmallDisk {
    fn mount(megabytes: u32) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let status = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={megabytes}m"), "tmpfs"])
            .arg(dir.path())
            .status()
            .expect("mount runs");
        assert!(status.success(), "mounting a tmpfs needs root");
        Self { dir }
    }

    fn grow(&self, megabytes: u32) {
        let status = std::process::Command::new("mount")
            .args(["-o", &format!("remount,size={megabytes}m")])
            .arg(self.dir.path())
            .status()
            .expect("mount runs");
        assert!(status.success());
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount")
            .arg("-l")
            .arg(self.dir.path())
            .status();
    }
}

async fn create_contact(server: &Server, key: &str, i: usize) -> reqwest::Response {
    server
        .send(
            reqwest::Method::POST,
            key,
            "/contacts",
            json!({"first_name": "Fill", "email": format!("fill{i}@example.com")}),
        )
        .await
}

#[tokio::test]
async fn a_full_disk_answers_503_and_the_service_restarts_once_space_is_back() {
    let disk = SmallDisk::mount(20);
    let data = disk.dir.path().join("data");
    let mut server = launch(&data, &[], &[]).await;
    let key = server.key.clone().unwrap();
    let client = reqwest::Client::new();
    let note = "n".repeat(9_000);

    let mut acknowledged = Vec::new();
    let mut refusal = None;
    for i in 0..20_000 {
        let r = create_contact(&server, &key, i).await;
        if r.status() != 201 {
            refusal = Some((
                r.status().as_u16(),
                r.headers().get("retry-after").cloned(),
                r.json::<Value>().await.unwrap(),
            ));
            break;
        }
        let id = r.json::<Value>().await.unwrap()["id"].as_u64().unwrap();
        acknowledged.push(id);
        server
            .send(
                reqwest::Method::POST,
                &key,
                &format!("/contacts/{id}/notes"),
                json!({"body": note}),
            )
            .await;
    }
    let (status, retry_after, body) = refusal.expect("the disk fills up");
    assert_eq!(status, 503, "{body}");
    assert_eq!(body["error"]["code"], "store_unavailable");
    assert!(retry_after.is_some(), "503 carries Retry-After");

    let later = create_contact(&server, &key, 99_999).await;
    assert_eq!(
        later.status(),
        503,
        "writes keep answering 503 while the disk is full"
    );
    let health = client
        .get(format!("{}/health", server.api))
        .send()
        .await
        .unwrap();
    assert_eq!(health.status(), 503);
    let health: Value = health.json().await.unwrap();
    assert_eq!(health["store"]["status"], "failing", "{health}");
    let read = client
        .get(server.url(&format!("/contacts/{}", acknowledged[0])))
        .bearer_auth(&key)
        .send()
        .await
        .unwrap();
    assert_eq!(read.status(), 200, "reads go on");

    disk.grow(200);
    let exit = tokio::time::timeout(Duration::from_secs(10), server.child.wait())
        .await
        .expect("the service exits within 10 s of space coming back")
        .unwrap();
    assert_eq!(
        exit.code(),
        Some(75),
        "the exit asks a supervisor for a restart"
    );
    assert_store_checks(&data);

    let server = launch(&data, &[], &[]).await;
    let health = client
        .get(format!("{}/health", server.api))
        .send()
        .await
        .unwrap();
    assert_eq!(health.status(), 200);
    for id in &acknowledged {
        let r = client
            .get(server.url(&format!("/contacts/{id}")))
            .bearer_auth(&key)
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 200, "acknowledged contact {id} survived");
    }
    let after = create_contact(&server, &key, 100_000).await;
    assert_eq!(after.status(), 201, "writes are accepted again");
}

#[tokio::test]
async fn a_data_folder_without_the_pending_index_builds_it_once_and_sends_what_waits() {
    use switchboard_actors::store::Batch;

    let slow_ladder = |s: &mut Settings| {
        s.webhooks.retry_delays = vec![Duration::from_millis(1500); 6];
    };
    let mut app = spawn_webhook_app_with(slow_ladder).await;
    let (rx, id) = tag_hook_answering(&app, 500).await;
    new_tag(&app, &app.key, "from before").await;
    let first = rx.wait_for(1).await[0].event_id().to_string();
    deliveries_when(&app, &id, "attempt 1", |d| d[0]["attempt_count"] == 1).await;
    app.stop().await;

    // What a data folder written before the index looks like: records, no index.
    let mut opened = None;
    for _ in 0..100 {
        tokio::time::sleep(Duration::from_millis(20)).await;
        if let Ok(store) = open_store(app.dir.path()) {
            opened = Some(store);
            break;
        }
    }
    {
        let store = opened.expect("the store opens once the app let go of it");
        let mut batch = Batch::default();
        let index = store.keys(b"wp/").unwrap();
        assert_eq!(index.len(), 1, "the pending delivery was indexed");
        for k in index {
            batch.delete(k);
        }
        batch.delete(b"meta/delivery_pending_index".to_vec());
        store.commit(batch).await.unwrap();
        store.flush_now().unwrap();
    }
    tokio::time::sleep(Duration::from_millis(200)).await;

    rx.respond_with(200);
    let app = restart_webhook_app(app, slow_ladder).await;
    let got = rx
        .wait_until("the retry after the rebuild", |all| {
            all.iter()
                .any(|r| r.event_id() == first && r.attempt() >= 2)
        })
        .await;
    assert!(got.iter().all(|r| r.event_id() == first));
    deliveries_when(&app, &id, "delivered", |d| d[0]["status"] == "delivered").await;
}
