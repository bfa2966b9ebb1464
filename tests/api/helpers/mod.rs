//! One harness for every black-box test: the real app on 127.0.0.1:0 with a temporary
//! data folder, spoken to over HTTP with reqwest.

use std::sync::Arc;

use reqwest::header::HeaderMap;
use reqwest::Method;
use serde_json::{json, Value};
use switchboard::app::{start_with_clock, RunningApp};
use switchboard::config::Settings;
use switchboard_actors::clock::{ManualClock, SharedClock, SystemClock};

mod server;
pub use server::*;

pub const ADMIN_TOKEN: &str = "test-admin-token-0123456789";

/// Where an app keeps its data; each test binary names one for all its apps (so each
/// binary constructs only one variant).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[allow(dead_code)]
pub enum Engine {
    /// sled in the app's data folder.
    Sled,
    /// PostgreSQL (a throwaway server per test process), a schema per data folder: an
    /// app restarted on the same folder finds its data again.
    Postgres,
}

/// The store of the data folder `dir` on this binary's engine, opened directly as an
/// offline tool (the app on it must have stopped).
pub fn open_store(
    dir: &std::path::Path,
) -> switchboard_actors::store::StoreResult<switchboard_actors::store::Store> {
    use switchboard_actors::store::{NodeConfig, Store};
    match database_url(dir) {
        None => Store::open(dir),
        Some(url) => {
            let tool = NodeConfig {
                id: "test-tool".into(),
                addr: String::new(),
                admin_addr: String::new(),
                lease_ttl: std::time::Duration::from_secs(10),
                offline: true,
            };
            Store::open_postgres(&url, dir, tool)
        }
    }
}

/// A name derived from the data folder `dir`: its schema, and its node's name, so that an
/// app restarted on the same folder finds its data and takes its workspaces back at once.
fn folder_name(dir: &std::path::Path) -> String {
    use std::hash::{Hash, Hasher};
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    dir.hash(&mut hasher);
    format!("d{:016x}", hasher.finish())
}

/// The secret the nodes of a test cluster share.
pub const CLUSTER_SECRET: &str = "test-cluster-secret-0123456789";

/// The database URL of an app on the data folder `dir`, in a binary on PostgreSQL.
pub fn database_url(dir: &std::path::Path) -> Option<String> {
    match crate::ENGINE {
        Engine::Sled => None,
        Engine::Postgres => Some(switchboard_actors::store::test_postgres::url(&folder_name(
            dir,
        ))),
    }
}

/// The variables that put the real binary on `dir`'s database, in a binary on PostgreSQL.
fn database_env(dir: &std::path::Path) -> Vec<(&'static str, String)> {
    match database_url(dir) {
        None => Vec::new(),
        Some(url) => vec![
            ("SWITCHBOARD_DATABASE_URL", url),
            ("SWITCHBOARD_NODE_ID", folder_name(dir)),
            ("SWITCHBOARD_CLUSTER_SECRET", CLUSTER_SECRET.into()),
        ],
    }
}

pub struct TestApp {
    pub app: Option<RunningApp>,
    pub api: String,
    pub admin: String,
    /// The bootstrap workspace and its API key.
    pub workspace_id: String,
    pub key: String,
    pub client: reqwest::Client,
    pub dir: Arc<tempfile::TempDir>,
    pub clock: Option<ManualClock>,
}

/// The app with the rate limit off (tests that count requests turn it on).
pub async fn spawn_app() -> TestApp {
    spawn_app_with(|_| {}).await
}

pub async fn spawn_app_with(configure: impl FnOnce(&mut Settings)) -> TestApp {
    let dir = Arc::new(tempfile::tempdir().expect("tempdir"));
    spawn_in(dir, None, configure).await
}

/// The app with `configure` applied, reading time from a clock the test moves (started
/// now); the clock comes back with it.
pub async fn clocked(configure: impl FnOnce(&mut Settings)) -> (TestApp, ManualClock) {
    let clock = ManualClock::new(chrono::Utc::now());
    let dir = Arc::new(tempfile::tempdir().expect("tempdir"));
    let app = spawn_in(dir, Some(clock.clone()), configure).await;
    (app, clock)
}

/// Waits (real time, up to 5 s) until `check` holds; fails naming `what` otherwise.
pub async fn eventually(what: &str, mut check: impl AsyncFnMut() -> bool) {
    for _ in 0..250 {
        if check().await {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    panic!("{what} never happened");
}

/// The app reading time from a clock the test moves.
pub async fn spawn_app_with_clock(clock: ManualClock) -> TestApp {
    let dir = Arc::new(tempfile::tempdir().expect("tempdir"));
    spawn_in(dir, Some(clock), |_| {}).await
}

pub async fn spawn_in(
    dir: Arc<tempfile::TempDir>,
    clock: Option<ManualClock>,
    configure: impl FnOnce(&mut Settings),
) -> TestApp {
    let mut settings = Settings {
        addr: "127.0.0.1:0".parse().unwrap(),
        admin_addr: "127.0.0.1:0".parse().unwrap(),
        data_dir: dir.path().to_path_buf(),
        admin_token: Some(ADMIN_TOKEN.into()),
        rate_limit_per_minute: 0,
        database_url: database_url(dir.path()),
        ..Settings::default()
    };
    settings.cluster.node_id = Some(folder_name(dir.path()));
    settings.cluster.secret = Some(CLUSTER_SECRET.into());
    configure(&mut settings);
    let shared: SharedClock = match &clock {
        Some(c) => Arc::new(c.clone()),
        None => Arc::new(SystemClock),
    };
    let app = start_with_clock(settings, shared)
        .await
        .expect("app starts");
    let client = reqwest::Client::builder().no_proxy().build().unwrap();
    let mut test = TestApp {
        api: app.api_url(),
        admin: app.admin_url(),
        workspace_id: String::new(),
        key: String::new(),
        client,
        dir,
        clock,
        app: Some(app),
    };
    if let Some(b) = test.app.as_ref().and_then(|a| a.bootstrap.clone()) {
        test.workspace_id = b.workspace_id;
        test.key = b.api_key;
    }
    test
}

#[derive(Debug)]
pub struct Resp {
    pub status: u16,
    pub headers: HeaderMap,
    pub body: Value,
}

impl Resp {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }

    /// The error code of an error envelope.
    pub fn code(&self) -> &str {
        self.body["error"]["code"].as_str().unwrap_or("")
    }

    /// The paths named in a validation error.
    pub fn paths(&self) -> Vec<String> {
        self.body["error"]["details"]
            .as_array()
            .map(|d| {
                d.iter()
                    .filter_map(|e| e["path"].as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// The body of a 200 answer.
    #[track_caller]
    pub fn ok(self) -> Value {
        self.expect(200).body
    }

    /// The body of a 201 answer.
    #[track_caller]
    pub fn created(self) -> Value {
        self.expect(201).body
    }

    #[track_caller]
    pub fn expect(self, status: u16) -> Self {
        assert_eq!(
            self.status, status,
            "unexpected status; body: {}",
            self.body
        );
        self
    }

    #[track_caller]
    pub fn expect_error(self, status: u16, code: &str) -> Self {
        assert_eq!(
            self.status, status,
            "unexpected status; body: {}",
            self.body
        );
        assert_eq!(self.code(), code, "unexpected code; body: {}", self.body);
        self
    }
}

/// A request being built: `app.call(Method::POST, "/tags").token(&k).json(...).send()`.
pub struct Call<'a> {
    app: &'a TestApp,
    req: reqwest::RequestBuilder,
}

impl Call<'_> {
    pub fn token(mut self, token: &str) -> Self {
        self.req = self.req.bearer_auth(token);
        self
    }

    pub fn json(mut self, body: Value) -> Self {
        self.req = self.req.json(&body);
        self
    }

    pub fn raw(mut self, body: &'static str) -> Self {
        self.req = self
            .req
            .header("content-type", "application/json")
            .body(body);
        self
    }

    /// A body sent as `content_type` (empty: no `Content-Type` at all).
    pub fn raw_as(mut self, content_type: &str, body: &'static str) -> Self {
        if !content_type.is_empty() {
            self.req = self.req.header("content-type", content_type);
        }
        self.req = self.req.body(body);
        self
    }

    /// A JSON body made at run time (`raw` takes a literal).
    pub fn raw_owned(mut self, body: String) -> Self {
        self.req = self
            .req
            .header("content-type", "application/json")
            .body(body);
        self
    }

    pub fn header(mut self, name: &str, value: &str) -> Self {
        self.req = self.req.header(name, value);
        self
    }

    pub async fn send(self) -> Resp {
        let _ = self.app;
        let r = self.req.send().await.expect("request sent");
        let status = r.status().as_u16();
        let headers = r.headers().clone();
        let text = r.text().await.expect("body read");
        let body = if text.is_empty() {
            Value::Null
        } else {
            serde_json::from_str(&text).unwrap_or(Value::String(text))
        };
        Resp {
            status,
            headers,
            body,
        }
    }
}

impl TestApp {
    /// A call to an API route (`path` below /api/v1).
    pub fn call(&self, method: Method, path: &str) -> Call<'_> {
        Call {
            app: self,
            req: self
                .client
                .request(method, format!("{}/api/v1{path}", self.api)),
        }
    }

    /// A call to an operator route (`path` from /admin on), with the admin token.
    pub fn admin_call(&self, method: Method, path: &str) -> Call<'_> {
        Call {
            app: self,
            req: self
                .client
                .request(method, format!("{}{path}", self.admin))
                .bearer_auth(ADMIN_TOKEN),
        }
    }

    /// A second API key of the app's workspace.
    pub async fn another_key(&self) -> String {
        self.admin_post(
            &format!("/admin/workspaces/{}/api-keys", self.workspace_id),
            json!({}),
        )
        .await
        .created()["api_key"]
            .as_str()
            .expect("api_key")
            .to_string()
    }

    /// GET /health, which needs no credential; its status.
    pub async fn health(&self) -> u16 {
        status_of(self.client.get(format!("{}/health", self.api))).await
    }

    /// The served OpenAPI document.
    pub async fn openapi(&self) -> Value {
        let r = self
            .client
            .get(format!("{}/api/v1/openapi.json", self.api))
            .send()
            .await
            .expect("document served");
        assert_eq!(r.status(), 200);
        r.json().await.expect("document is JSON")
    }

    /// GET /metrics with the admin token, answering 200; the scrape text.
    pub async fn metrics(&self) -> String {
        let r = self
            .admin_call(Method::GET, "/metrics")
            .req
            .send()
            .await
            .expect("metrics answer");
        assert_eq!(r.status(), 200);
        r.text().await.expect("metrics read")
    }

    /// GET with the workspace's API key.
    pub async fn get(&self, path: &str) -> Resp {
        self.get_as(&self.key, path).await
    }

    /// POST with the workspace's API key.
    pub async fn post(&self, path: &str, body: Value) -> Resp {
        self.post_as(&self.key, path, body).await
    }

    /// PATCH with the workspace's API key.
    pub async fn patch(&self, path: &str, body: Value) -> Resp {
        self.patch_as(&self.key, path, body).await
    }

    /// PUT with the workspace's API key.
    pub async fn put(&self, path: &str, body: Value) -> Resp {
        self.put_as(&self.key, path, body).await
    }

    /// DELETE with the workspace's API key.
    pub async fn delete(&self, path: &str) -> Resp {
        self.delete_as(&self.key, path).await
    }

    pub async fn get_as(&self, token: &str, path: &str) -> Resp {
        self.call(Method::GET, path).token(token).send().await
    }

    pub async fn post_as(&self, token: &str, path: &str, body: Value) -> Resp {
        self.with_body(Method::POST, token, path, body).await
    }

    pub async fn patch_as(&self, token: &str, path: &str, body: Value) -> Resp {
        self.with_body(Method::PATCH, token, path, body).await
    }

    pub async fn put_as(&self, token: &str, path: &str, body: Value) -> Resp {
        self.with_body(Method::PUT, token, path, body).await
    }

    pub async fn delete_as(&self, token: &str, path: &str) -> Resp {
        self.call(Method::DELETE, path).token(token).send().await
    }

    async fn with_body(&self, method: Method, token: &str, path: &str, body: Value) -> Resp {
        self.call(method, path).token(token).json(body).send().await
    }

    pub async fn admin_post(&self, path: &str, body: Value) -> Resp {
        self.admin_call(Method::POST, path).json(body).send().await
    }

    /// A new workspace: (id, API key).
    pub async fn new_workspace(&self, name: &str) -> (String, String) {
        let r = self
            .admin_post("/admin/workspaces", json!({"name": name}))
            .await
            .expect(201);
        (
            r.body["id"].as_str().unwrap().to_string(),
            r.body["api_key"].as_str().unwrap().to_string(),
        )
    }

    pub async fn new_user(&self, name: &str) -> String {
        let email = format!("{}@example.com", name.to_lowercase().replace(' ', "."));
        let r = self
            .admin_post("/admin/users", json!({"name": name, "email": email}))
            .await
            .expect(201);
        r.body["id"].as_str().unwrap().to_string()
    }

    pub async fn add_member(&self, ws: &str, user: &str, role: &str, permissions: &[&str]) {
        self.admin_post(
            &format!("/admin/workspaces/{ws}/members"),
            json!({"user_id": user, "role": role, "permissions": permissions}),
        )
        .await
        .expect(201);
    }

    pub async fn token_for(&self, user: &str, expires_in: u64) -> String {
        let r = self
            .admin_post(
                &format!("/admin/users/{user}/tokens"),
                json!({"expires_in": expires_in}),
            )
            .await
            .expect(201);
        r.body["access_token"].as_str().unwrap().to_string()
    }

    /// A person with `role` and `permissions` in the bootstrap workspace (and nowhere
    /// else), and a token for them.
    pub async fn member_token(&self, role: &str, permissions: &[&str]) -> String {
        let user = self.new_user("Team Member").await;
        self.add_member(&self.workspace_id, &user, role, permissions)
            .await;
        self.token_for(&user, 3600).await
    }

    /// A funnel in the bootstrap workspace.
    pub async fn new_funnel(&self, name: &str, stages: &[&str]) -> Value {
        self.admin_post(
            &format!("/admin/workspaces/{}/funnels", self.workspace_id),
            json!({"name": name, "stages": stages}),
        )
        .await
        .created()
    }

    /// Stops the app the way SIGTERM does.
    pub async fn stop(&mut self) {
        if let Some(app) = self.app.take() {
            app.shutdown().await;
        }
    }

    /// Stops and starts again on the same data folder.
    pub async fn restart(self) -> TestApp {
        self.restart_with(|_| {}).await
    }

    /// Stops and starts again on the same data folder with `configure` applied to the
    /// default settings.
    pub async fn restart_with(
        mut self,
        configure: impl Fn(&mut Settings) + Clone + Send + Sync + 'static,
    ) -> TestApp {
        self.stop().await;
        let dir = self.dir.clone();
        let clock = self.clock.clone();
        let (ws, key) = (self.workspace_id.clone(), self.key.clone());
        drop(self);
        let mut again = None;
        for _ in 0..100 {
            // The store's lock is released once the previous flusher has seen the close.
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
            let (d, c, conf) = (dir.clone(), clock.clone(), configure.clone());
            let attempt = tokio::spawn(async move { spawn_in(d, c, conf).await }).await;
            if let Ok(app) = attempt {
                again = Some(app);
                break;
            }
        }
        let mut again = again.expect("app restarts on the same folder");
        again.workspace_id = ws;
        again.key = key;
        again
    }
}

impl Drop for TestApp {
    fn drop(&mut self) {
        if let Some(app) = self.app.take() {
            tokio::spawn(app.shutdown());
        }
    }
}

/// A record's integer id.
#[track_caller]
pub fn id(v: &Value) -> u64 {
    v["id"].as_u64().unwrap_or_else(|| panic!("no id in {v}"))
}

/// A 200 list envelope; its items.
#[track_caller]
pub fn listed(r: Resp) -> Vec<Value> {
    let body = r.ok();
    assert_eq!(body["object"], "list", "body: {body}");
    body["data"].as_array().expect("data array").clone()
}

pub fn short(v: &Value) -> String {
    let s = v.to_string();
    match s.char_indices().nth(160) {
        Some((cut, _)) => format!("{}...", &s[..cut]),
        None => s,
    }
}

/// Sends each body with `method` to `path` and checks each answers 422
/// `validation_failed` naming exactly the given path; reports every mismatch at once.
pub async fn refusals(app: &TestApp, method: Method, path: &str, cases: Vec<(Value, &str)>) {
    let mut wrong = Vec::new();
    for (body, want) in cases {
        let r = app
            .call(method.clone(), path)
            .token(&app.key)
            .json(body.clone())
            .send()
            .await;
        let got = (r.status, r.code().to_string(), r.paths());
        let expected = (422, "validation_failed".to_string(), vec![want.to_string()]);
        if got != expected {
            wrong.push(format!(
                "{method} {path} {} -> {} {} (want 422 at `{want}`)",
                short(&body),
                r.status,
                short(&r.body)
            ));
        }
    }
    assert!(wrong.is_empty(), "wrong answers:\n{}", wrong.join("\n"));
}

#[track_caller]
pub fn assert_fields(v: &Value, fields: &str) {
    let got: std::collections::BTreeSet<&str> = v
        .as_object()
        .unwrap_or_else(|| panic!("not an object: {v}"))
        .keys()
        .map(|k| &k[..])
        .collect();
    assert_eq!(got, fields.split_whitespace().collect(), "record: {v}");
}

/// An ISO 8601 timestamp in UTC.
#[track_caller]
pub fn utc(v: &Value) -> chrono::DateTime<chrono::Utc> {
    let s = v.as_str().unwrap_or_else(|| panic!("not a string: {v}"));
    assert!(s.ends_with('Z'), "not UTC: {s}");
    chrono::DateTime::parse_from_rfc3339(s)
        .unwrap_or_else(|e| panic!("{s}: {e}"))
        .with_timezone(&chrono::Utc)
}

/// A 422 `validation_failed` naming exactly `path`.
#[track_caller]
pub fn invalid(r: Resp, path: &str) {
    let r = r.expect_error(422, "validation_failed");
    assert_eq!(r.paths(), vec![path.to_string()], "body: {}", r.body);
}

/// A 404 `not_found`.
#[track_caller]
pub fn not_found(r: Resp) {
    r.expect_error(404, "not_found");
}

/// A 400 `invalid_request` (a malformed id, cursor or query).
#[track_caller]
pub fn bad_request(r: Resp) {
    r.expect_error(400, "invalid_request");
}

/// A 403 `insufficient_permissions`.
#[track_caller]
pub fn forbidden(r: Resp) {
    r.expect_error(403, "insufficient_permissions");
}

/// A 409 `conflict`.
#[track_caller]
pub fn conflict(r: Resp) {
    r.expect_error(409, "conflict");
}

/// Walks a list page by page (`path` may carry a query already) with `limit` per page;
/// answers each page's size and the `id`s in the order they came. Checks that every page
/// but the last carries a cursor and the last carries none.
pub async fn walk_pages(app: &TestApp, path: &str, limit: usize) -> (Vec<usize>, Vec<u64>) {
    let sep = if path.contains('?') { '&' } else { '?' };
    let first = format!("{path}{sep}limit={limit}");
    let (mut sizes, mut ids) = (Vec::new(), Vec::new());
    let mut url = first.clone();
    for _ in 0..1_000 {
        let page = app.get(&url).await.ok();
        let data = page["data"].as_array().expect("data");
        sizes.push(data.len());
        ids.extend(data.iter().map(|v| v["id"].as_u64().expect("integer id")));
        if page["has_more"] == true {
            let cursor = page["next_cursor"]
                .as_str()
                .expect("a cursor when has_more");
            url = format!("{first}&starting_after={cursor}");
        } else {
            assert!(page["next_cursor"].is_null(), "{page}");
            return (sizes, ids);
        }
    }
    panic!("pagination of {path} never ended");
}

/// Runs `switchboard admin --admin-url <app> --admin-token <token> <args>` (split on spaces).
pub async fn cli(app: &TestApp, token: &str, args: &str) -> std::process::Output {
    let all = format!(
        "admin --admin-url {} --admin-token {token} {args}",
        app.admin
    );
    let all: Vec<String> = all.split_whitespace().map(str::to_string).collect();
    tokio::task::spawn_blocking(move || {
        std::process::Command::new(env!("CARGO_BIN_EXE_switchboard"))
            .args(&all)
            .env_remove("SWITCHBOARD_ADMIN_URL")
            .env_remove("SWITCHBOARD_ADMIN_TOKEN")
            .output()
            .expect("the CLI runs")
    })
    .await
    .unwrap()
}

/// What a successful CLI run printed, as JSON.
pub async fn cli_json(app: &TestApp, args: &str) -> Value {
    let out = cli(app, ADMIN_TOKEN, args).await;
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let status = out.status;
    assert!(status.success(), "{args}: {status}: {stdout} {stderr}");
    serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("not JSON ({e}): {stdout}"))
}

/// Every permission a workspace member can hold, in the order the API lists them.
pub const ALL_PERMISSIONS: [&str; 8] = [
    "contacts",
    "inbox",
    "calendar",
    "orders",
    "business_pages",
    "call_agent",
    "campaigns",
    "integrations",
];

/// The `id`s of the items of a 200 list envelope, in order.
#[track_caller]
pub fn listed_ids(r: Resp) -> Vec<u64> {
    listed(r).iter().map(id).collect()
}

/// How many items GET `path` lists (its first page).
pub async fn list_len(app: &TestApp, path: &str) -> usize {
    listed(app.get(path).await).len()
}

/// The string `field` of each item of the JSON array `list`.
#[track_caller]
pub fn each_str<'a>(list: &'a Value, field: &str) -> Vec<&'a str> {
    list.as_array()
        .unwrap_or_else(|| panic!("not an array: {list}"))
        .iter()
        .map(|item| {
            item[field]
                .as_str()
                .unwrap_or_else(|| panic!("no string {field} in {item}"))
        })
        .collect()
}

/// `base` (a JSON object) with the fields of `extra` set over it.
pub fn with(mut base: Value, extra: Value) -> Value {
    let target = base.as_object_mut().expect("object");
    target.extend(extra.as_object().expect("object").clone());
    base
}

/// The workspace's tag named `name` (among its first 100).
pub async fn tag_named(app: &TestApp, name: &str) -> Value {
    listed(app.get("/tags?limit=100").await)
        .into_iter()
        .find(|t| t["name"] == name)
        .unwrap_or_else(|| panic!("no tag {name}"))
}

/// Checks that a member holding only `without` is refused GET `path` (403
/// `insufficient_permissions`) and one holding only `with` reads it.
pub async fn assert_read_needs(app: &TestApp, path: &str, without: &[&str], with: &[&str]) {
    let outsider = app.member_token("member", without).await;
    app.get_as(&outsider, path)
        .await
        .expect_error(403, "insufficient_permissions");
    let allowed = app.member_token("member", with).await;
    app.get_as(&allowed, path).await.expect(200);
}

/// How many times the app's workspace actors were restarted after a failure.
pub fn workspace_restarts(app: &TestApp) -> u64 {
    let state = &app.app.as_ref().expect("a running app").state;
    state
        .registry
        .stats()
        .restarts
        .load(std::sync::atomic::Ordering::Relaxed)
}

/// Sends `msg` (a crash or a panic) to the bootstrap workspace's actor and waits (up to
/// 10 s) for its restart, failing with `noticed` otherwise; then checks that the tag
/// "before" made earlier is still listed and that a new tag is taken.
pub async fn break_workspace_actor(
    app: &TestApp,
    msg: switchboard_actors::workspace::WorkspaceMsg,
    noticed: &str,
) {
    let ws = switchboard_actors::ids::WorkspaceId::parse(&app.workspace_id).unwrap();
    let state = &app.app.as_ref().expect("a running app").state;
    state.registry.tell(&ws, msg).await.unwrap();
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(10);
    while workspace_restarts(app) == 0 {
        assert!(tokio::time::Instant::now() < deadline, "{noticed}");
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    }
    let tags = app.get("/tags").await.expect(200);
    assert_eq!(tags.body["data"][0]["name"], "before");
    app.post("/tags", json!({"name": "after"}))
        .await
        .expect(201);
}

/// Sends a request built by hand; its status.
pub async fn status_of(req: reqwest::RequestBuilder) -> u16 {
    let r = req.send().await.expect("request sent");
    r.status().as_u16()
}

/// Sends a request built by hand; its body as text, whatever the status.
pub async fn body_text(req: reqwest::RequestBuilder) -> String {
    let r = req.send().await.expect("request sent");
    r.text().await.expect("body read")
}

/// Sends a request built by hand; its body as JSON, whatever the status.
pub async fn body_json(req: reqwest::RequestBuilder) -> Value {
    let r = req.send().await.expect("request sent");
    r.json().await.expect("JSON body")
}

/// Waits (real time, up to 6 s) until `count` answers `n`; checks that it does (else
/// failing with `what`) and that it still answers `n` 800 ms later: it happened once.
pub async fn happens_once(what: &str, n: usize, mut count: impl AsyncFnMut() -> usize) {
    for _ in 0..300 {
        if count().await == n {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert_eq!(count().await, n, "{what}");
    tokio::time::sleep(std::time::Duration::from_millis(800)).await;
    assert_eq!(count().await, n, "once");
}

/// A new workspace named "Other" and a record made there by POST `path` `body`
/// (answering 201): (that workspace's API key, the record).
pub async fn foreign_record(app: &TestApp, path: &str, body: Value) -> (String, Value) {
    let (_, other_key) = app.new_workspace("Other").await;
    let record = app.post_as(&other_key, path, body).await.created();
    (other_key, record)
}

/// The names in an update event's `changes`, sorted.
pub fn changed_fields(event: &Value) -> Vec<String> {
    let mut names: Vec<String> = event["changes"]
        .as_object()
        .map(|c| c.keys().cloned().collect())
        .unwrap_or_default();
    names.sort();
    names
}
