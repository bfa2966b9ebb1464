//! The store under stress: ids after restarts and crashes, backups and the offline check
//! (a full disk, which only the data folder has, is in `sled_engine.rs`).

use std::time::Duration;

use serde_json::{json, Value};

use crate::helpers::*;

/// Makes a tag through `server`'s API; its id.
pub(crate) async fn new_tag_id(server: &Server, key: &str, name: &str) -> u64 {
    let r = server
        .send(reqwest::Method::POST, key, "/tags", json!({ "name": name }))
        .await;
    assert_eq!(r.status(), 201);
    r.json::<Value>().await.unwrap()["id"].as_u64().unwrap()
}

/// The largest number of ids a crash may skip (the store's reservation block).
const CRASH_GAP: u64 = switchboard_actors::store::ID_BLOCK;

#[tokio::test]
async fn ids_continue_after_a_clean_stop_and_skip_little_after_kill_9() {
    let dir = tempfile::tempdir().unwrap();
    let mut server = launch(dir.path(), &[], &[]).await;
    let key = server.key.clone().unwrap();
    let mut last = 0;
    for i in 0..6 {
        last = new_tag_id(&server, &key, &format!("first-{i}")).await;
    }

    server.terminate().await;
    let mut server = launch(dir.path(), &[], &[]).await;
    let next = new_tag_id(&server, &key, "after-stop").await;
    assert_eq!(next, last + 1, "a clean stop leaves no gap");

    server.kill_9().await;
    assert_store_checks(dir.path());
    let server = launch(dir.path(), &[], &[]).await;
    let after_crash = new_tag_id(&server, &key, "after-crash").await;
    assert!(after_crash > next, "ids are never reused");
    assert!(
        after_crash <= next + CRASH_GAP + 1,
        "a crash skips at most {CRASH_GAP} ids: {next} -> {after_crash}"
    );
}

/// `switchboard <args>` run to completion on the store of the data folder `dir`: exit
/// success and what it printed.
fn cli(dir: &std::path::Path, args: &[&str]) -> (bool, String) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_switchboard"))
        .args(args)
        .arg("--data-dir")
        .arg(dir)
        .env_remove("SWITCHBOARD_DATA_DIR")
        .env_remove("SWITCHBOARD_DATABASE_URL")
        .envs(database_url(dir).map(|url| ("SWITCHBOARD_DATABASE_URL", url)))
        .output()
        .expect("the binary runs");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), text)
}

/// The offline check passes on a stopped store.
pub fn assert_store_checks(dir: &std::path::Path) {
    let (ok, report) = cli(dir, &["check"]);
    assert!(ok, "switchboard check found damage:\n{report}");
    assert!(report.contains("no damage found"), "{report}");
}

/// [`assert_store_checks`] on the folder of an app stopped in this process: its store
/// closes once the app's last task lets go of it (an AI turn or a delivery in flight may
/// still hold it for a moment), so the check waits for that, up to 10 s.
pub async fn assert_store_checks_once_released(dir: &std::path::Path) {
    for _ in 0..200 {
        let (ok, report) = cli(dir, &["check"]);
        if ok || !report.contains("cannot open the store") {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert_store_checks(dir);
}

#[tokio::test]
async fn an_online_backup_under_write_load_restores_every_acknowledged_write() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let mut server = launch(&data, &[], &[]).await;
    let key = server.key.clone().unwrap();
    let client = reqwest::Client::new();

    let mut before = Vec::new();
    for i in 0..50 {
        before.push(new_tag_id(&server, &key, &format!("before-{i}")).await);
    }
    // Writers keep going while the backup is taken.
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let writers: Vec<_> = (0..4)
        .map(|w| {
            let (client, url, key, stop) = (
                client.clone(),
                server.url("/contacts"),
                key.clone(),
                stop.clone(),
            );
            tokio::spawn(async move {
                let mut n = 0;
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    let r = client
                        .post(&url)
                        .bearer_auth(&key)
                        .json(&json!({"first_name": format!("w{w}-{n}")}))
                        .send()
                        .await
                        .unwrap();
                    assert_eq!(r.status(), 201);
                    n += 1;
                }
                n
            })
        })
        .collect();
    tokio::time::sleep(Duration::from_millis(200)).await;
    let file = dir.path().join("store.bak");
    let admin = server.admin.clone();
    let file_arg = file.to_str().unwrap().to_string();
    let (ok, said) = tokio::task::spawn_blocking(move || {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_switchboard"))
            .args([
                "admin",
                "--admin-url",
                &admin,
                "--admin-token",
                ADMIN_TOKEN,
                "backup",
                "--to",
                &file_arg,
            ])
            .output()
            .unwrap();
        (
            out.status.success(),
            String::from_utf8_lossy(&out.stdout).to_string()
                + &String::from_utf8_lossy(&out.stderr),
        )
    })
    .await
    .unwrap();
    assert!(ok, "{said}");
    assert!(said.contains("backup written"), "{said}");
    let read = client
        .get(server.url("/tags"))
        .bearer_auth(&key)
        .send()
        .await
        .unwrap();
    assert_eq!(read.status(), 200, "the service keeps serving");
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let mut written = 0;
    for w in writers {
        written += w.await.unwrap();
    }
    assert!(written > 0, "writes ran during the backup");
    server.kill_9().await;

    let restored = dir.path().join("restored");
    let (ok, said) = cli(&restored, &["restore", file.to_str().unwrap()]);
    assert!(ok, "{said}");
    assert_store_checks(&restored);
    let (ok, said) = cli(&restored, &["restore", file.to_str().unwrap()]);
    assert!(
        !ok && said.contains("restore into an empty"),
        "a restore never overwrites a store: {said}"
    );

    let server = launch(&restored, &[], &[]).await;
    let tags: Value = server.get_json(&key, "/tags").await;
    let tags: Vec<u64> = tags["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["id"].as_u64().unwrap())
        .collect();
    for id in before {
        assert!(
            tags.contains(&id),
            "tag {id}, acknowledged before the backup, was restored"
        );
    }
}

#[tokio::test]
async fn check_reports_damage_and_exits_non_zero() {
    use switchboard_actors::delivery::record::{self, Delivery, DeliveryStatus};
    use switchboard_actors::ids::WorkspaceId;
    use switchboard_actors::store::Batch;

    let dir = tempfile::tempdir().unwrap();
    let mut server = launch(dir.path(), &[], &[]).await;
    let key = server.key.clone().unwrap();
    new_tag_id(&server, &key, "fine").await;
    server.kill_9().await;
    assert_store_checks(dir.path());

    {
        let store = open_store(dir.path()).unwrap();
        let now = chrono::Utc::now();
        let stray = Delivery {
            id: switchboard_actors::ids::DeliveryId(1),
            endpoint_id: switchboard_actors::ids::EndpointId::parse("we_gone").unwrap(),
            workspace_id: WorkspaceId::parse("ws_ghost").unwrap(),
            event_id: switchboard_actors::ids::EventId::parse("evt_1").unwrap(),
            event_type: "tag.created".into(),
            body: "{}".into(),
            status: DeliveryStatus::Pending,
            attempts: Vec::new(),
            next_attempt_at: None,
            created_at: switchboard_actors::clock::Timestamp(now),
            quoted_details: Default::default(),
        };
        let mut batch = Batch::default();
        batch
            .put(
                record::key("we_gone", switchboard_actors::ids::DeliveryId(1)),
                &stray,
            )
            .unwrap();
        batch.put(b"w/ws_ghost/tag/1".to_vec(), &1u64).unwrap();
        store.commit(batch).await.unwrap();
        store.flush_now().unwrap();
    }
    tokio::time::sleep(Duration::from_millis(200)).await;
    let (ok, report) = cli(dir.path(), &["check"]);
    assert!(!ok, "damage makes the check fail:\n{report}");
    assert!(report.contains("missing endpoint we_gone"), "{report}");
    assert!(report.contains("unknown workspace ws_ghost"), "{report}");
}

/// The check reads a store; where there is none it says so and creates nothing (on
/// PostgreSQL no tables appear in the schema).
#[tokio::test]
async fn check_where_no_store_is_fails_and_sets_nothing_up() {
    let dir = tempfile::tempdir().unwrap();
    let (ok, report) = cli(dir.path(), &["check"]);
    assert!(!ok, "{report}");
    assert!(report.contains("holds no store"), "{report}");
    assert!(!dir.path().join("db").exists());
    if let Some(url) = database_url(dir.path()) {
        assert_eq!(
            switchboard_actors::store::test_postgres::tables(&url),
            Vec::<String>::new()
        );
    }
}

#[tokio::test]
async fn a_timer_armed_before_a_restart_reaches_its_workspace_and_is_disarmed() {
    use switchboard_actors::ids::WorkspaceId;
    use switchboard_actors::schedule::Timer;
    use switchboard_actors::store::{Batch, Store};

    let dir = tempfile::tempdir().unwrap();
    let mut server = launch(dir.path(), &[], &[]).await;
    let key = server.key.clone().unwrap();
    let me = server.get_json(&key, "/me").await;
    let ws = WorkspaceId::parse(me["workspaces"][0]["id"].as_str().unwrap()).unwrap();
    server.kill_9().await;

    let timer = Timer::new(
        &ws,
        "unclaimed/1",
        chrono::Utc::now() - chrono::Duration::seconds(1),
    );
    let armed = |store: &Store| {
        let due = store
            .keys_between(b"tq/", b"tq0")
            .unwrap()
            .into_iter()
            .filter(|k| k.ends_with(b"unclaimed/1"))
            .count();
        due == 1
    };
    {
        let store = open_store(dir.path()).unwrap();
        let mut batch = Batch::default();
        timer.arm(&mut batch).unwrap();
        store.commit(batch).await.unwrap();
        assert!(armed(&store));
        store.flush_now().unwrap();
    }
    tokio::time::sleep(Duration::from_millis(200)).await;

    // The workspace's actor is not running: the timer starts it.
    let mut server = launch(dir.path(), &[], &[]).await;
    tokio::time::sleep(Duration::from_millis(1500)).await;
    server.kill_9().await;
    let store = open_store(dir.path()).unwrap();
    assert!(!armed(&store), "the due timer was handled and disarmed");
}

#[tokio::test]
async fn a_start_on_a_busy_port_fails_before_touching_the_data_folder() {
    let busy = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = busy.local_addr().unwrap().to_string();
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_switchboard"))
        .arg("serve")
        .env("SWITCHBOARD_ADDR", &port)
        .env("SWITCHBOARD_ADMIN_ADDR", "127.0.0.1:0")
        .env("SWITCHBOARD_DATA_DIR", &data)
        .env("SWITCHBOARD_ADMIN_TOKEN", ADMIN_TOKEN)
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot listen"));
    assert!(!data.exists(), "the data folder was not created");
}

#[tokio::test]
async fn the_service_raises_its_open_files_limit_to_the_hard_limit() {
    let dir = tempfile::tempdir().unwrap();
    let bin = env!("CARGO_BIN_EXE_switchboard");
    let mut child = tokio::process::Command::new("sh")
        .arg("-c")
        .arg(format!("ulimit -Sn 512 && exec {bin} serve"))
        .env("SWITCHBOARD_ADDR", "127.0.0.1:0")
        .env("SWITCHBOARD_ADMIN_ADDR", "127.0.0.1:0")
        .env("SWITCHBOARD_DATA_DIR", dir.path())
        .env("SWITCHBOARD_ADMIN_TOKEN", ADMIN_TOKEN)
        .env("RUST_LOG", "info")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    use tokio::io::AsyncBufReadExt;
    let mut lines = tokio::io::BufReader::new(child.stderr.take().unwrap()).lines();
    let started = tokio::time::timeout(Duration::from_secs(30), async {
        while let Ok(Some(line)) = lines.next_line().await {
            if announced(&line, "operator api listening", "url").is_some() {
                return true;
            }
        }
        false
    })
    .await
    .unwrap();
    assert!(started);
    let limits = std::fs::read_to_string(format!("/proc/{}/limits", child.id().unwrap())).unwrap();
    let open_files = limits
        .lines()
        .find(|l| l.starts_with("Max open files"))
        .unwrap()
        .split_whitespace()
        .skip(3)
        .take(2)
        .collect::<Vec<_>>();
    assert_eq!(open_files[0], open_files[1], "soft == hard: {open_files:?}");
    assert_ne!(open_files[0], "512");
    child.start_kill().unwrap();
}

/// A backup that cannot be written where it was asked to go (here a folder) fails and
/// leaves no partial file beside it.
#[tokio::test]
async fn a_backup_that_cannot_be_written_leaves_no_partial_file() {
    let app = spawn_app().await;
    let dir = tempfile::tempdir().unwrap();
    let to = dir.path().join("into");
    std::fs::create_dir(&to).unwrap();
    let out =
        crate::helpers::cli(&app, ADMIN_TOKEN, &format!("backup --to {}", to.display())).await;
    assert!(!out.status.success());
    assert!(
        !to.with_extension("partial").exists(),
        "no partial file left"
    );
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
}
