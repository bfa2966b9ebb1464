//! Three nodes of the real binary on one throwaway PostgreSQL: any node serves any
//! workspace, a workspace has one owner at a time, and when the owner dies another takes
//! over without losing anything acknowledged.

use std::collections::{BTreeMap, HashSet};
use std::time::{Duration, Instant};

use reqwest::Method;
use serde_json::{json, Value};

use crate::helpers::*;
use crate::receiver::TestReceiver;
use crate::store_safety::new_tag_id;

/// The lease of these clusters: short, so that failover tests stay short.
const TTL: Duration = Duration::from_secs(2);

struct Nodes {
    nodes: Vec<Option<Server>>,
    key: String,
    _dirs: Vec<tempfile::TempDir>,
}

impl Nodes {
    /// `n` nodes on a fresh schema, started one after the other (the first sets the
    /// database up and prints the bootstrap key), each with `env` too.
    async fn start(n: usize, env: &[(&str, &str)]) -> Self {
        let url = switchboard_actors::store::test_postgres::fresh_url();
        let ttl = format!("{}ms", TTL.as_millis());
        let mut nodes = Vec::new();
        let mut dirs = Vec::new();
        let mut key = None;
        for i in 0..n {
            let dir = tempfile::tempdir().unwrap();
            let name = format!("node-{i}");
            let mut all: Vec<(&str, &str)> = vec![
                ("SWITCHBOARD_DATABASE_URL", &url),
                ("SWITCHBOARD_NODE_ID", &name),
                ("SWITCHBOARD_CLUSTER_SECRET", CLUSTER_SECRET),
                ("SWITCHBOARD_LEASE_TTL", &ttl),
            ];
            all.extend_from_slice(env);
            let server = launch(dir.path(), &all, &[]).await;
            key = key.or(server.key.clone());
            nodes.push(Some(server));
            dirs.push(dir);
        }
        Self {
            nodes,
            key: key.expect("the first node prints the bootstrap key"),
            _dirs: dirs,
        }
    }

    fn node(&self, i: usize) -> &Server {
        self.nodes[i].as_ref().expect("node running")
    }

    async fn kill(&mut self, i: usize) {
        let mut server = self.nodes[i].take().expect("node running");
        server.kill_9().await;
    }

    /// An operator request to node `i`, with the admin token.
    fn admin(&self, i: usize, method: Method, path: &str) -> reqwest::RequestBuilder {
        reqwest::Client::new()
            .request(method, format!("{}{path}", self.node(i).admin))
            .bearer_auth(ADMIN_TOKEN)
    }

    /// The bootstrap workspace, taken by node 0 with a first request (checked through
    /// node 1).
    async fn workspace_on_node_0(&self) -> String {
        let ws = workspace_of(self.node(0), &self.key).await;
        assert_eq!(self.owner(1, &ws).await.as_deref(), Some("node-0"));
        ws
    }

    /// `GET /admin/cluster` of node `i`.
    async fn cluster(&self, i: usize) -> Value {
        body_json(self.admin(i, Method::GET, "/admin/cluster")).await
    }

    /// The node holding `ws`, as node `i` sees the cluster.
    async fn owner(&self, i: usize, ws: &str) -> Option<String> {
        let view = self.cluster(i).await;
        view["nodes"].as_array()?.iter().find_map(|n| {
            n["workspaces"]
                .as_array()?
                .iter()
                .any(|l| l["workspace"] == ws)
                .then(|| n["node"].as_str().unwrap_or_default().to_string())
        })
    }
}

/// An endpoint for tag.created at `url`, made through node 0.
async fn tag_hook_through_node_0(cluster: &Nodes, url: &str) {
    let hook = cluster
        .node(0)
        .send(
            Method::POST,
            &cluster.key,
            "/webhooks",
            json!({"url": url, "events": ["tag.created"]}),
        )
        .await;
    assert_eq!(hook.status(), 201);
}

async fn workspace_of(server: &Server, key: &str) -> String {
    let me = server.get_json(key, "/me").await;
    me["workspaces"][0]["id"].as_str().unwrap().to_string()
}

#[tokio::test]
async fn every_node_serves_every_workspace_and_each_name_is_created_once() {
    let cluster = Nodes::start(3, &[]).await;
    let key = cluster.key.clone();
    let names: Vec<String> = (0..100).map(|i| format!("tag-{i}")).collect();
    let mut calls = Vec::new();
    for node in 0..3 {
        for name in &names {
            let (url, key, name) = (cluster.node(node).url("/tags"), key.clone(), name.clone());
            calls.push(tokio::spawn(async move {
                let r = reqwest::Client::new()
                    .post(url)
                    .bearer_auth(key)
                    .json(&json!({ "name": name }))
                    .send()
                    .await
                    .unwrap();
                (name, r.status().as_u16())
            }));
        }
    }
    let mut created: BTreeMap<String, usize> = BTreeMap::new();
    for call in calls {
        let (name, status) = call.await.unwrap();
        assert!(status == 201 || status == 409, "{name}: {status}");
        if status == 201 {
            *created.entry(name).or_default() += 1;
        }
    }
    assert_eq!(created.len(), 100, "every name created");
    assert!(
        created.values().all(|n| *n == 1),
        "each exactly once: {created:?}"
    );
    let ws = workspace_of(cluster.node(1), &key).await;
    for node in 0..3 {
        let tags = cluster.node(node).get_json(&key, "/tags?limit=100").await;
        assert_eq!(
            tags["data"].as_array().unwrap().len(),
            100,
            "node {node} lists them all"
        );
    }
    let owners: HashSet<Option<String>> = {
        let mut seen = HashSet::new();
        for node in 0..3 {
            seen.insert(cluster.owner(node, &ws).await);
        }
        seen
    };
    assert_eq!(
        owners.len(),
        1,
        "every node names the same owner: {owners:?}"
    );
    assert!(owners.iter().all(Option::is_some));
    let view = cluster.cluster(0).await;
    assert_eq!(view["engine"], "postgres");
    assert_eq!(view["node"], "node-0");
    assert_eq!(view["nodes"].as_array().unwrap().len(), 3);
    let metrics = body_text(cluster.admin(2, Method::GET, "/metrics")).await;
    assert!(metrics.contains("switchboard_cluster_fenced_commits_total"));
    assert!(
        metrics
            .lines()
            .any(|l| l.starts_with("switchboard_actors_live{") && l.contains(r#"node="node-2""#)),
        "every series names its node:\n{metrics}"
    );
}

#[tokio::test]
async fn a_passed_request_needs_the_cluster_secret() {
    let cluster = Nodes::start(1, &[]).await;
    let r = reqwest::Client::new()
        .get(cluster.node(0).url("/tags"))
        .bearer_auth(&cluster.key)
        .header("x-switchboard-passed", "not-the-secret")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 401);
    let r = reqwest::Client::new()
        .get(cluster.node(0).url("/tags"))
        .bearer_auth(&cluster.key)
        .header("x-switchboard-passed", CLUSTER_SECRET)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200, "the owner serves a passed request");
}

#[tokio::test]
async fn the_rate_limit_admits_120_a_minute_across_all_nodes() {
    let cluster = Nodes::start(3, &[("SWITCHBOARD_RATE_LIMIT_PER_MINUTE", "120")]).await;
    let key = cluster.key.clone();
    let mut admitted = 0;
    let started = Instant::now();
    for i in 0..240 {
        let r = reqwest::Client::new()
            .get(cluster.node(i % 3).url("/tags"))
            .bearer_auth(&key)
            .send()
            .await
            .unwrap();
        match r.status().as_u16() {
            200 => admitted += 1,
            429 => {}
            other => panic!("unexpected {other}"),
        }
    }
    // The budget refills one request every 500 ms: allow for the time the run took.
    let refilled = (started.elapsed().as_millis() / 500) as usize + 1;
    assert!(
        (120..=120 + refilled).contains(&admitted),
        "{admitted} admitted across three nodes (one budget: 120 + {refilled})"
    );
}

#[tokio::test]
async fn killing_the_owner_loses_no_acknowledged_write_and_another_node_answers_within_the_lease() {
    let mut cluster = Nodes::start(3, &[]).await;
    let key = cluster.key.clone();
    // Node 0 takes the workspace with the first request.
    let ws = cluster.workspace_on_node_0().await;

    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let writers: Vec<_> = (0..8)
        .map(|w| {
            let (url, key, stop) = (
                cluster.node(1 + w % 2).url("/contacts"),
                key.clone(),
                stop.clone(),
            );
            tokio::spawn(async move {
                let client = reqwest::Client::new();
                let mut acknowledged = Vec::new();
                let mut n = 0;
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    n += 1;
                    let sent = client
                        .post(&url)
                        .bearer_auth(&key)
                        .json(&json!({"first_name": format!("w{w}-{n}")}))
                        .send()
                        .await;
                    if let Ok(r) = sent {
                        if r.status() == 201 {
                            let body: Value = r.json().await.unwrap();
                            acknowledged.push(body["id"].as_u64().unwrap());
                        }
                    }
                }
                acknowledged
            })
        })
        .collect();
    tokio::time::sleep(Duration::from_millis(700)).await;
    cluster.kill(0).await;
    let killed = Instant::now();
    // Writes answer again once another node took the workspace.
    let back = loop {
        let r = cluster
            .node(1)
            .send(
                Method::POST,
                &key,
                "/contacts",
                json!({"first_name": "after"}),
            )
            .await;
        if r.status() == 201 {
            break killed.elapsed();
        }
        assert!(
            killed.elapsed() < Duration::from_secs(30),
            "never answered again"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let mut acknowledged = Vec::new();
    for w in writers {
        acknowledged.extend(w.await.unwrap());
    }
    assert!(!acknowledged.is_empty(), "writes ran before the kill");
    assert!(
        back <= TTL + Duration::from_secs(2),
        "answered again after {back:?}"
    );
    for id in acknowledged {
        let r = cluster
            .node(2)
            .get_json(&key, &format!("/contacts/{id}"))
            .await;
        assert_eq!(
            r["id"].as_u64(),
            Some(id),
            "acknowledged contact {id} survives: {r}"
        );
    }
    let owner = cluster.owner(2, &ws).await;
    assert!(
        matches!(owner.as_deref(), Some("node-1" | "node-2")),
        "{owner:?}"
    );
}

#[tokio::test]
async fn a_pending_webhook_retry_is_delivered_after_its_owner_dies() {
    let env = [
        ("SWITCHBOARD_WEBHOOK_ALLOW_PRIVATE", "true"),
        ("SWITCHBOARD_WEBHOOK_TICK", "50ms"),
        ("SWITCHBOARD_WEBHOOK_RETRY_DELAYS", "3s,3s,3s"),
    ];
    let mut cluster = Nodes::start(2, &env).await;
    let key = cluster.key.clone();
    let rx = TestReceiver::start().await;
    rx.respond_with(500);
    tag_hook_through_node_0(&cluster, &rx.url).await;
    let tag = cluster
        .node(0)
        .send(Method::POST, &key, "/tags", json!({"name": "retried"}))
        .await;
    assert_eq!(tag.status(), 201);
    rx.wait_for(1).await;
    rx.respond_with(200);
    // The owner dies with the retry pending; the other node takes the workspace over
    // (nothing asks it to: work waits there) and sends the retry.
    cluster.kill(0).await;
    let got = rx
        .wait_until("the retry from the surviving node", |r| r.len() >= 2)
        .await;
    assert_eq!(got[1].event_type(), "tag.created");
    assert_eq!(
        got[0].event_id(),
        got[1].event_id(),
        "the same event, retried"
    );
    let ws = workspace_of(cluster.node(1), &key).await;
    assert_eq!(cluster.owner(1, &ws).await.as_deref(), Some("node-1"));
}

#[tokio::test]
async fn a_backup_from_any_node_holds_every_nodes_workspaces() {
    let cluster = Nodes::start(2, &[]).await;
    let key = cluster.key.clone();
    // Node 0 owns the workspace; the backup is asked of node 1.
    let tag = cluster
        .node(0)
        .send(Method::POST, &key, "/tags", json!({"name": "backed-up"}))
        .await;
    assert_eq!(tag.status(), 201);
    let ws = cluster.workspace_on_node_0().await;
    let backup = cluster
        .admin(1, Method::POST, "/admin/backup")
        .send()
        .await
        .unwrap();
    assert_eq!(backup.status(), 200);
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("cluster.bak");
    std::fs::write(&file, backup.bytes().await.unwrap()).unwrap();

    // Restored into a sled folder: the tag node 0 wrote is there.
    let restored = dir.path().join("restored");
    restore(&file, &["--data-dir", restored.to_str().unwrap()]);
    let store = switchboard_actors::store::Store::open(&restored).unwrap();
    let tags = store.keys(format!("w/{ws}/").as_bytes()).unwrap().len();
    assert!(tags > 0, "the owner's rows are in the backup");
    drop(store);
    tokio::time::sleep(Duration::from_millis(200)).await;
    let server = launch(&restored, &[], &["SWITCHBOARD_DATABASE_URL"]).await;
    let listed = server.get_json(&key, "/tags").await;
    assert_eq!(listed["data"][0]["name"], "backed-up", "{listed}");
}

#[tokio::test]
async fn an_operator_request_on_a_workspace_is_answered_by_its_owner_from_any_node() {
    let cluster = Nodes::start(2, &[]).await;
    let key = cluster.key.clone();
    let ws = workspace_of(cluster.node(0), &key).await;
    let made = cluster
        .node(0)
        .send(
            Method::POST,
            &key,
            "/contacts",
            json!({"first_name": "Ada"}),
        )
        .await;
    assert_eq!(made.status(), 201);
    assert_eq!(cluster.owner(1, &ws).await.as_deref(), Some("node-0"));
    let stats = |node: usize| {
        let asked = cluster.admin(node, Method::GET, &format!("/admin/workspaces/{ws}/stats"));
        async move {
            let r = asked.send().await.unwrap();
            (r.status().as_u16(), r.json::<Value>().await.unwrap())
        }
    };
    let (here, there) = (stats(0).await, stats(1).await);
    assert_eq!(here.0, 200, "{}", here.1);
    assert_eq!(there.0, 200, "node 1 passes it to node 0: {}", there.1);
    assert_eq!(there.1["contacts"], 1, "{}", there.1);
    assert_eq!(here.1["contacts"], there.1["contacts"]);
    assert_eq!(
        cluster.owner(1, &ws).await.as_deref(),
        Some("node-0"),
        "the owner stays"
    );
}

#[tokio::test]
async fn a_legacy_message_for_an_unreachable_owner_answers_503_with_a_message() {
    let mut cluster = Nodes::start(2, &[]).await;
    let key = cluster.key.clone();
    cluster.workspace_on_node_0().await;
    cluster.kill(0).await;
    // Within the dead owner's lease, node 1 cannot serve the workspace nor reach its owner.
    let r = reqwest::Client::new()
        .post(cluster.node(1).url("/messages"))
        .bearer_auth(&key)
        .json(&json!({"contact": {"phone": "+15550100"}, "channel": "sms", "text": "hello"}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 503);
    let body: Value = r.json().await.unwrap();
    assert!(body["message"].is_string(), "the legacy shape: {body}");
    assert!(body.get("error").is_none(), "{body}");
    // On the API, the answer says it is the workspace's node, not the store, and when to
    // come back.
    let r = cluster
        .node(1)
        .send(Method::GET, &key, "/tags", Value::Null)
        .await;
    assert_eq!(r.status(), 503);
    assert_eq!(r.headers()["retry-after"], "2");
    let body: Value = r.json().await.unwrap();
    assert_eq!(body["error"]["code"], "workspace_unavailable", "{body}");
}

#[tokio::test]
async fn a_key_made_on_one_node_works_on_another_and_its_revocation_reaches_every_node() {
    let cluster = Nodes::start(2, &[]).await;
    let ws = workspace_of(cluster.node(0), &cluster.key).await;
    let keys = format!("/admin/workspaces/{ws}/api-keys");
    let made = body_json(cluster.admin(0, Method::POST, &keys)).await;
    let fresh = made["api_key"].as_str().unwrap().to_string();
    let status_on = |node: usize| {
        let (url, key) = (cluster.node(node).url("/tags"), fresh.clone());
        async move {
            reqwest::Client::new()
                .get(url)
                .bearer_auth(key)
                .send()
                .await
                .unwrap()
                .status()
                .as_u16()
        }
    };
    eventually("node 1 knows the new key", async || {
        status_on(1).await == 200
    })
    .await;
    let revoked = cluster
        .admin(1, Method::POST, "/admin/api-keys/revoke")
        .json(&json!({ "api_key": fresh }))
        .send()
        .await
        .unwrap();
    assert_eq!(revoked.status(), 200);
    assert_eq!(
        status_on(1).await,
        401,
        "refused at once where it was revoked"
    );
    eventually("node 0 refuses the revoked key", async || {
        status_on(0).await == 401
    })
    .await;
}

/// `method path` on node `i`'s operator listener with a JSON body: status and answer.
async fn operator(cluster: &Nodes, i: usize, path: &str, body: Value) -> (u16, Value) {
    let r = cluster
        .admin(i, Method::POST, path)
        .json(&body)
        .send()
        .await
        .unwrap();
    (r.status().as_u16(), r.json().await.unwrap_or(Value::Null))
}

#[tokio::test]
async fn what_one_node_just_made_works_on_another_at_once() {
    let cluster = Nodes::start(2, &[]).await;
    let ws = cluster.workspace_on_node_0().await;
    let (a, b) = (cluster.node(0), cluster.node(1));
    for round in 0..3 {
        // A key made on node 0, used on node 1 at once.
        let (status, made) = operator(
            &cluster,
            0,
            &format!("/admin/workspaces/{ws}/api-keys"),
            json!({}),
        )
        .await;
        assert_eq!(status, 201, "{made}");
        let key = made["api_key"].as_str().unwrap();
        let tags = b.send(Method::GET, key, "/tags", Value::Null).await;
        assert_eq!(tags.status(), 200, "round {round}: a key made on node 0");

        // A workspace made on node 1: its key works on node 0 at once, and so does an
        // operator request about it.
        let (status, made) = operator(
            &cluster,
            1,
            "/admin/workspaces",
            json!({"name": format!("New {round}")}),
        )
        .await;
        assert_eq!(status, 201, "{made}");
        let (fresh, fresh_key) = (
            made["id"].as_str().unwrap(),
            made["api_key"].as_str().unwrap(),
        );
        let me = a.send(Method::GET, fresh_key, "/me", Value::Null).await;
        assert_eq!(
            me.status(),
            200,
            "round {round}: a workspace made on node 1"
        );
        let (status, answer) = operator(
            &cluster,
            0,
            &format!("/admin/workspaces/{fresh}/credits"),
            json!({"allowance": 500}),
        )
        .await;
        assert_eq!(status, 200, "round {round}: {answer}");

        // A user made on node 0 becomes a member on node 1, gets a token on node 0 and
        // uses it on node 1, and is assigned a conversation through node 1 at once.
        let (status, user) = operator(
            &cluster,
            0,
            "/admin/users",
            json!({"name": "Bea", "email": format!("bea{round}@example.com")}),
        )
        .await;
        assert_eq!(status, 201, "{user}");
        let user = user["id"].as_str().unwrap();
        let (status, m) = operator(
            &cluster,
            1,
            &format!("/admin/workspaces/{ws}/members"),
            json!({"user_id": user, "role": "member", "permissions": ["inbox"]}),
        )
        .await;
        assert_eq!(status, 201, "round {round}: {m}");
        let (status, token) = operator(
            &cluster,
            0,
            &format!("/admin/users/{user}/tokens"),
            json!({"expires_in": 3600}),
        )
        .await;
        assert_eq!(status, 201, "{token}");
        let token = token["access_token"].as_str().unwrap();
        let inbox = b
            .send(Method::GET, token, "/conversations", Value::Null)
            .await;
        assert_eq!(inbox.status(), 200, "round {round}: a token made on node 0");

        let (status, other) = operator(
            &cluster,
            1,
            "/admin/users",
            json!({"name": "Cy", "email": format!("cy{round}@example.com")}),
        )
        .await;
        assert_eq!(status, 201, "{other}");
        let other = other["id"].as_str().unwrap();
        let contact = a
            .post_json(
                &cluster.key,
                "/contacts",
                json!({"first_name": "Dee", "phone": format!("+1555010{round}")}),
            )
            .await;
        let conversation = a
            .post_json(
                &cluster.key,
                "/conversations",
                json!({"contact_id": contact["id"], "channel": "api"}),
            )
            .await;
        assert!(conversation["id"].is_u64(), "{contact} {conversation}");
        let path = format!("/conversations/{}/assignee", conversation["id"]);
        let (status, m) = operator(
            &cluster,
            1,
            &format!("/admin/workspaces/{ws}/members"),
            json!({"user_id": other, "role": "member", "permissions": ["inbox"]}),
        )
        .await;
        assert_eq!(status, 201, "{m}");
        let assigned = b
            .send(Method::PUT, &cluster.key, &path, json!({"user_id": other}))
            .await;
        assert_eq!(
            assigned.status(),
            200,
            "round {round}: a member added on node 1, assigned through node 1 on owner node 0: {}",
            assigned.text().await.unwrap_or_default()
        );
    }
}

/// A TCP forwarder to the test PostgreSQL that the test can cut: the database "goes away"
/// for whoever connects through it.
struct DatabaseLine {
    port: u16,
    to: u16,
    running: tokio::task::JoinHandle<()>,
}

impl DatabaseLine {
    async fn open(port: u16, to: u16) -> Self {
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", port))
            .await
            .unwrap();
        let port = listener.local_addr().unwrap().port();
        let running = tokio::spawn(async move {
            let mut calls = tokio::task::JoinSet::new();
            while let Ok((mut near, _)) = listener.accept().await {
                calls.spawn(async move {
                    if let Ok(mut far) = tokio::net::TcpStream::connect(("127.0.0.1", to)).await {
                        let _ = tokio::io::copy_bidirectional(&mut near, &mut far).await;
                    }
                });
            }
        });
        Self { port, to, running }
    }

    /// Closes the port and every connection through it.
    fn cut(self) -> (u16, u16) {
        self.running.abort();
        (self.port, self.to)
    }
}

#[tokio::test]
async fn health_is_503_while_the_database_does_not_answer_for_longer_than_a_lease() {
    let direct = switchboard_actors::store::test_postgres::fresh_url();
    let pg_port: u16 = direct
        .split("127.0.0.1:")
        .nth(1)
        .and_then(|rest| rest.split('/').next())
        .and_then(|p| p.parse().ok())
        .expect("the test URL names a loopback port");
    let line = DatabaseLine::open(0, pg_port).await;
    let url = direct.replace(
        &format!("127.0.0.1:{pg_port}"),
        &format!("127.0.0.1:{}", line.port),
    );
    let dir = tempfile::tempdir().unwrap();
    let ttl = format!("{}ms", TTL.as_millis());
    let node = launch(
        dir.path(),
        &[
            ("SWITCHBOARD_DATABASE_URL", &url),
            ("SWITCHBOARD_NODE_ID", "node-0"),
            ("SWITCHBOARD_CLUSTER_SECRET", CLUSTER_SECRET),
            ("SWITCHBOARD_LEASE_TTL", &ttl),
        ],
        &[],
    )
    .await;
    let health = async || {
        let r = reqwest::get(format!("{}/health", node.api)).await.unwrap();
        (r.status().as_u16(), r.json::<Value>().await.unwrap())
    };
    assert_eq!(health().await.0, 200);

    // The start's own last write (that the bootstrap secrets were shown) lands first: a
    // commit that fails makes the store failing, a different 503.
    tokio::time::sleep(Duration::from_secs(1)).await;
    let (port, to) = line.cut();
    let cut_at = Instant::now();
    let mut answer = health().await;
    assert_eq!(
        answer.0, 200,
        "a heartbeat is at most a third of a lease old: not unreachable yet"
    );
    while answer.0 == 200 && cut_at.elapsed() < TTL * 4 {
        tokio::time::sleep(Duration::from_millis(100)).await;
        answer = health().await;
    }
    assert_eq!(answer.0, 503, "{}", answer.1);
    assert_eq!(
        answer.1["database"]["status"], "unreachable",
        "{}",
        answer.1
    );
    assert!(answer.1["database"]["silent_for_ms"].as_u64().unwrap() >= TTL.as_millis() as u64);

    let _line = DatabaseLine::open(port, to).await;
    let back_at = Instant::now();
    while health().await.0 != 200 {
        assert!(
            back_at.elapsed() < TTL * 4,
            "healthy again once the database answers"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Sends `signal` (STOP, CONT) to a node's process.
fn signal(server: &Server, signal: &str) {
    let pid = server.child.id().expect("node running").to_string();
    let sent = std::process::Command::new("kill")
        .args([&format!("-{signal}"), &pid])
        .status()
        .unwrap();
    assert!(sent.success());
}

#[tokio::test]
async fn a_request_passed_to_a_frozen_owner_ends_once_its_lease_runs_out() {
    let cluster = Nodes::start(2, &[]).await;
    let ws = cluster.workspace_on_node_0().await;
    signal(cluster.node(0), "STOP");
    let asked = Instant::now();
    let waited = cluster
        .node(1)
        .send(
            Method::POST,
            &cluster.key,
            "/tags",
            json!({"name": "while frozen"}),
        )
        .await;
    let took = asked.elapsed();
    let status = waited.status().as_u16();
    let body: Value = waited.json().await.unwrap();
    assert_eq!(status, 503, "{body}");
    assert_eq!(body["error"]["code"], "workspace_unavailable");
    assert!(
        took < Duration::from_secs(20),
        "ended by the lease ({took:?}), not by the 40 s an owner may take"
    );
    // The retry is served: node 1 took the workspace.
    let retried = cluster
        .node(1)
        .send(
            Method::POST,
            &cluster.key,
            "/tags",
            json!({"name": "after"}),
        )
        .await;
    assert_eq!(retried.status(), 201);
    assert_eq!(cluster.owner(1, &ws).await.as_deref(), Some("node-1"));

    // The frozen owner wakes with the request still in its socket: whatever it does with
    // it, the workspace is no longer its own, so nothing of it is stored.
    signal(cluster.node(0), "CONT");
    tokio::time::sleep(TTL).await;
    let tags = cluster.node(0).get_json(&cluster.key, "/tags").await;
    let names: Vec<&str> = tags["data"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert_eq!(names, ["after"], "{tags}");
}

#[tokio::test]
async fn ids_keep_growing_in_a_workspace_taken_over_by_a_node_with_an_older_block() {
    let env = [
        ("SWITCHBOARD_WEBHOOK_ALLOW_PRIVATE", "true"),
        ("SWITCHBOARD_WEBHOOK_TICK", "50ms"),
    ];
    let mut cluster = Nodes::start(2, &env).await;
    let key = cluster.key.clone();
    let ws = cluster.workspace_on_node_0().await;
    let rx = TestReceiver::start().await;
    tag_hook_through_node_0(&cluster, &rx.url).await;

    // Node 1 reserves a block of ids for a workspace of its own...
    let other = body_json(
        cluster
            .admin(1, Method::POST, "/admin/workspaces")
            .json(&json!({"name": "Node one's"})),
    )
    .await;
    let other_key = other["api_key"].as_str().unwrap().to_string();
    let first = cluster
        .node(1)
        .send(Method::POST, &other_key, "/tags", json!({"name": "early"}))
        .await;
    assert_eq!(first.status(), 201);
    // ...then node 0 uses up its own and reserves one after it (a tag and a delivery each).
    let mut highest = 0;
    for n in 0..60 {
        let tag = new_tag_id(cluster.node(0), &key, &format!("t{n}")).await;
        highest = highest.max(tag);
    }
    rx.wait_until("every tag's delivery", |r| r.len() >= 60)
        .await;

    cluster.kill(0).await;
    let killed = Instant::now();
    let after = loop {
        let r = cluster
            .node(1)
            .send(Method::POST, &key, "/tags", json!({"name": "after"}))
            .await;
        if r.status() == 201 {
            break r.json::<Value>().await.unwrap();
        }
        assert!(killed.elapsed() < Duration::from_secs(30), "never answered");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert_eq!(cluster.owner(1, &ws).await.as_deref(), Some("node-1"));
    let id = after["id"].as_u64().unwrap();
    assert!(
        id > highest,
        "tag {id} after the takeover, {highest} before it"
    );
    let listed = cluster.node(1).get_json(&key, "/tags").await;
    assert_eq!(listed["data"][0]["name"], "after", "newest first: {listed}");
    let got = rx
        .wait_until("the new owner's delivery", |r| {
            r.iter().any(|d| d.json()["data"]["name"] == "after")
        })
        .await;
    assert!(got.len() > 60);
}

/// Takes an online backup of `server` into `file`.
async fn backup_of(server: &Server, file: &std::path::Path) {
    let backup = reqwest::Client::new()
        .post(format!("{}/admin/backup", server.admin))
        .bearer_auth(ADMIN_TOKEN)
        .send()
        .await
        .unwrap();
    assert_eq!(backup.status(), 200);
    std::fs::write(file, backup.bytes().await.unwrap()).unwrap();
}

/// `switchboard restore FILE <to>` with nothing taken from the environment; it succeeds.
fn restore(file: &std::path::Path, to: &[&str]) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_switchboard"))
        .arg("restore")
        .arg(file)
        .args(to)
        .env_remove("SWITCHBOARD_DATA_DIR")
        .env_remove("SWITCHBOARD_DATABASE_URL")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[tokio::test]
async fn a_backup_restored_into_postgresql_never_hands_out_a_restored_id_again() {
    let dir = tempfile::tempdir().unwrap();
    let sled = launch(&dir.path().join("sled"), &[], &["SWITCHBOARD_DATABASE_URL"]).await;
    let key = sled.key.clone().expect("a first start prints its key");
    let tag = sled
        .send(Method::POST, &key, "/tags", json!({"name": "kept"}))
        .await;
    assert_eq!(tag.status(), 201);
    let contact = sled
        .send(
            Method::POST,
            &key,
            "/contacts",
            json!({"first_name": "Ana", "tags": ["kept"]}),
        )
        .await;
    assert_eq!(contact.status(), 201);
    let contact = contact.json::<Value>().await.unwrap()["id"]
        .as_u64()
        .unwrap();

    let mut source = sled;
    let mut highest = contact;
    // From sled into PostgreSQL, then from PostgreSQL into another database.
    for round in 0..2 {
        let file = dir.path().join(format!("round-{round}.bak"));
        backup_of(&source, &file).await;
        let url = switchboard_actors::store::test_postgres::fresh_url();
        restore(&file, &["--database-url", &url]);
        let node = launch(
            &dir.path().join(format!("node-{round}")),
            &[("SWITCHBOARD_DATABASE_URL", &url)],
            &[],
        )
        .await;
        let id = new_tag_id(&node, &key, &format!("new-{round}")).await;
        assert!(
            id > highest,
            "round {round}: new tag {id}, restored ids up to {highest}"
        );
        highest = id;
        let names: Vec<Value> = node.get_json(&key, "/tags").await["data"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].clone())
            .collect();
        assert!(names.contains(&json!("kept")), "{names:?}");
        let ana = node.get_json(&key, &format!("/contacts/{contact}")).await;
        assert_eq!(ana["tags"], json!(["kept"]), "{ana}");
        source = node;
    }
}

#[tokio::test]
async fn asking_after_a_workspace_that_does_not_exist_takes_no_lease() {
    let cluster = Nodes::start(1, &[]).await;
    let ghost = "ws_0000000000000000ghst";
    assert!(switchboard_actors::ids::WorkspaceId::parse(ghost).is_some());
    let stats = cluster
        .admin(0, Method::GET, &format!("/admin/workspaces/{ghost}/stats"))
        .send()
        .await
        .unwrap();
    assert_eq!(stats.status(), 404);
    assert_eq!(
        cluster.owner(0, ghost).await,
        None,
        "{}",
        cluster.cluster(0).await
    );
}

#[tokio::test]
async fn a_damaged_backup_is_refused_before_the_database_is_touched() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("damaged.bak");
    std::fs::write(&file, b"SWITCHBOARD-BACKUP 1\nnot a backup").unwrap();
    let url = switchboard_actors::store::test_postgres::fresh_url();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_switchboard"))
        .args(["restore", file.to_str().unwrap(), "--database-url", &url])
        .env_remove("SWITCHBOARD_DATA_DIR")
        .env_remove("SWITCHBOARD_DATABASE_URL")
        .output()
        .unwrap();
    assert!(!out.status.success());
    let tables = switchboard_actors::store::test_postgres::tables(&url);
    assert!(tables.is_empty(), "nothing created: {tables:?}");
}

/// A body too large is refused as the owner refuses it (413 `payload_too_large`), also
/// when a node passes the request on, whatever its size.
#[tokio::test]
async fn a_body_too_large_is_413_through_any_node() {
    let cluster = Nodes::start(2, &[]).await;
    cluster.workspace_on_node_0().await;
    for size in [3 << 20, 5 << 20] {
        let body = format!(r#"{{"name": "{}"}}"#, "x".repeat(size));
        for node in 0..2 {
            // The answer may come (and the connection close) before the client has written
            // the whole body: a broken pipe is that race, not an answer; send again.
            let mut answered = None;
            for _ in 0..5 {
                let sent = reqwest::Client::new()
                    .post(cluster.node(node).url("/tags"))
                    .bearer_auth(&cluster.key)
                    .header("content-type", "application/json")
                    .body(body.clone())
                    .send()
                    .await;
                if let Ok(r) = sent {
                    answered = Some(r);
                    break;
                }
            }
            let r = answered.expect("an answer within five tries");
            assert_eq!(r.status(), 413, "{size} bytes through node {node}");
            let answer: Value = r.json().await.unwrap();
            assert_eq!(answer["error"]["code"], "payload_too_large", "{answer}");
        }
    }
}
