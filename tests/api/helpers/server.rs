//! The real binary as a child process: started on a data folder, its addresses and key
//! read from its start-up log, stopped with kill -9 or SIGTERM.

use std::sync::Arc;

use reqwest::Method;
use serde_json::Value;

use super::*;

/// The real binary, started on a data folder with the admin token and the rate limit off,
/// plus `env` (set) and `unset` (removed); its addresses and bootstrap key are read from
/// its start-up log lines, and its log is kept for the test to read.
pub struct Server {
    pub child: tokio::process::Child,
    pub api: String,
    pub admin: String,
    pub key: Option<String>,
    log: Arc<std::sync::Mutex<std::collections::VecDeque<String>>>,
}

/// The most log lines a [`Server`] keeps (the oldest go first).
const LOG_LINES_KEPT: usize = 20_000;

pub async fn launch(dir: &std::path::Path, env: &[(&str, &str)], unset: &[&str]) -> Server {
    use tokio::io::{AsyncBufReadExt, BufReader};
    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_switchboard"));
    command
        .arg("serve")
        .env("SWITCHBOARD_ADDR", "127.0.0.1:0")
        .env("SWITCHBOARD_ADMIN_ADDR", "127.0.0.1:0")
        .env("SWITCHBOARD_DATA_DIR", dir)
        .env("SWITCHBOARD_ADMIN_TOKEN", ADMIN_TOKEN)
        .env("SWITCHBOARD_RATE_LIMIT_PER_MINUTE", "0")
        .env("RUST_LOG", "info")
        .envs(database_env(dir))
        .envs(env.iter().copied())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true);
    for name in unset {
        command.env_remove(name);
    }
    let mut child = command.spawn().expect("binary starts");
    let mut lines = BufReader::new(child.stderr.take().expect("stderr")).lines();
    let log = Arc::new(std::sync::Mutex::new(std::collections::VecDeque::new()));
    let keep = |line: &str| {
        let mut kept = log.lock().expect("log lock");
        if kept.len() == LOG_LINES_KEPT {
            kept.pop_front();
        }
        kept.push_back(line.to_string());
    };
    let (mut api, mut admin, mut key) = (None, None, None);
    let read = async {
        while let Ok(Some(line)) = lines.next_line().await {
            keep(&line);
            if let Some(k) = announced(&line, "api key, shown once", "api_key") {
                key = Some(k);
            }
            if let Some(url) = announced(&line, "api listening", "url") {
                api = Some(url);
            }
            if let Some(url) = announced(&line, "operator api listening", "url") {
                admin = Some(url);
            }
            if admin.is_some() {
                break;
            }
        }
    };
    tokio::time::timeout(std::time::Duration::from_secs(30), read)
        .await
        .expect("server announces its addresses");
    // The log is read to its end, so that the server never waits on a full pipe.
    let kept = log.clone();
    tokio::spawn(async move {
        while let Ok(Some(line)) = lines.next_line().await {
            let mut kept = kept.lock().expect("log lock");
            if kept.len() == LOG_LINES_KEPT {
                kept.pop_front();
            }
            kept.push_back(line);
        }
    });
    Server {
        child,
        api: api.expect("api address logged"),
        admin: admin.expect("operator address logged"),
        key,
        log,
    }
}

/// The value of `field` on a start-up log line whose message is `message`, in the text
/// format (`... INFO switchboard: api listening url=http://...`) or the JSON one.
pub fn announced(line: &str, message: &str, field: &str) -> Option<String> {
    if let Ok(v) = serde_json::from_str::<Value>(line) {
        let fields = &v["fields"];
        return (fields["message"] == message)
            .then(|| fields[field].as_str().map(str::to_string))
            .flatten();
    }
    let (_, rest) = line.split_once(&format!("switchboard: {message} {field}="))?;
    rest.split_whitespace().next().map(str::to_string)
}

impl Server {
    /// Kills the process the way `kill -9` does and waits until it is gone.
    pub async fn kill_9(&mut self) {
        self.child.start_kill().expect("the server is killed");
        self.child.wait().await.expect("the server exits");
    }

    /// Stops the process with SIGTERM, as a supervisor does, and waits until it is gone.
    pub async fn terminate(&mut self) {
        let pid = self.child.id().expect("the server runs").to_string();
        let term = std::process::Command::new("kill")
            .args(["-TERM", &pid])
            .status()
            .expect("kill runs");
        assert!(term.success());
        self.child.wait().await.expect("the server exits");
    }

    /// POST /webhooks with `key`: a new endpoint sending `events` to `url`; its id.
    pub async fn new_webhook(&self, key: &str, url: &str, events: &[&str]) -> String {
        let body = json!({"url": url, "events": events});
        let created = self.post_json(key, "/webhooks", body).await;
        created["id"].as_str().expect("an endpoint").to_string()
    }

    /// What the server has logged so far, one entry per line.
    pub fn logged(&self) -> Vec<String> {
        self.log.lock().expect("log lock").iter().cloned().collect()
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}/api/v1{path}", self.api)
    }

    /// GET `path` (under /api/v1) with `key`; the JSON body.
    pub async fn get_json(&self, key: &str, path: &str) -> Value {
        direct()
            .get(self.url(path))
            .bearer_auth(key)
            .send()
            .await
            .expect("server answers")
            .json()
            .await
            .expect("JSON body")
    }

    /// POST `path` (under /api/v1) with `key` and a JSON body; the JSON answer.
    pub async fn post_json(&self, key: &str, path: &str, body: Value) -> Value {
        self.send(Method::POST, key, path, body)
            .await
            .json()
            .await
            .expect("JSON body")
    }

    /// `method path` (under /api/v1) with `key` and a JSON body.
    pub async fn send(
        &self,
        method: Method,
        key: &str,
        path: &str,
        body: Value,
    ) -> reqwest::Response {
        direct()
            .request(method, self.url(path))
            .bearer_auth(key)
            .json(&body)
            .send()
            .await
            .expect("server answers")
    }
}

/// A client that talks to the server directly, whatever proxy the environment names.
fn direct() -> reqwest::Client {
    reqwest::Client::builder()
        .no_proxy()
        .build()
        .expect("client")
}
