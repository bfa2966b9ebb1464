//! The dashboard in a real browser: headless Chromium (Debian's `chromium` package),
//! driven over the Chrome DevTools protocol, logs in through the form, then watches the
//! page's figures move with API traffic, without a reload. A screenshot of the page is
//! written to `$CARGO_TARGET_TMPDIR/dashboard.png`.
//!
//! Without Chromium the test says so and stops, except in CI (`CI` set), where `.ci/run`
//! installs it and a missing browser fails the test.

use std::path::PathBuf;
use std::time::Duration;

use base64::Engine;
use futures::{SinkExt, StreamExt};
use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio_tungstenite::tungstenite::Message;

use crate::helpers::*;

/// Where Debian puts it, else the first `chromium` on the PATH.
fn chromium_binary() -> Option<PathBuf> {
    let debian = PathBuf::from("/usr/bin/chromium");
    if debian.is_file() {
        return Some(debian);
    }
    std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|dir| dir.join("chromium"))
            .find(|p| p.is_file())
    })
}

/// A headless Chromium with a fresh profile, killed when dropped.
struct Chromium {
    child: tokio::process::Child,
    /// Its profile and temporary files, removed after it has quit (see `Drop`).
    _home: tempfile::TempDir,
    /// `127.0.0.1:<port>` of its DevTools endpoint.
    devtools: String,
}

impl Chromium {
    /// None (after saying why) when there is no Chromium outside CI.
    async fn start() -> Option<Self> {
        let Some(binary) = chromium_binary() else {
            assert!(
                std::env::var_os("CI").is_none(),
                "CI is set but chromium is missing: .ci/run installs Debian's chromium package"
            );
            eprintln!(
                "SKIPPED the browser test: chromium is not installed (apt-get install chromium); CI runs it"
            );
            return None;
        };
        // Its profile and its temporary files (TMPDIR) in one folder of the test's, removed
        // once it has quit: Chromium leaves temporary files behind even when asked to quit.
        let home = tempfile::tempdir().expect("a folder for Chromium");
        let temporary = home.path().join("tmp");
        std::fs::create_dir(&temporary).expect("Chromium's TMPDIR");
        let mut child = tokio::process::Command::new(binary)
            .env("TMPDIR", &temporary)
            .args([
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-quic",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--disable-dev-shm-usage",
                "--hide-scrollbars",
                "--remote-debugging-port=0",
                "--window-size=1440,1200",
            ])
            .arg(format!(
                "--user-data-dir={}",
                home.path().join("profile").display()
            ))
            .arg("about:blank")
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .expect("chromium starts");
        let mut lines = BufReader::new(child.stderr.take().expect("stderr")).lines();
        let announced = async {
            while let Ok(Some(line)) = lines.next_line().await {
                if let Some(url) = line.strip_prefix("DevTools listening on ws://") {
                    return url.split('/').next().map(str::to_string);
                }
            }
            None
        };
        let devtools = tokio::time::timeout(Duration::from_secs(60), announced)
            .await
            .expect("chromium announces its DevTools port within 60 s")
            .expect("a DevTools address");
        // Its log is read to the end, so that it never waits on a full pipe.
        tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
        Some(Self {
            child,
            _home: home,
            devtools,
        })
    }

    /// The DevTools connection of its open tab.
    async fn page(&self) -> Page {
        let targets: Vec<Value> = reqwest::Client::builder()
            .no_proxy()
            .build()
            .unwrap()
            .get(format!("http://{}/json/list", self.devtools))
            .send()
            .await
            .expect("DevTools answers")
            .json()
            .await
            .expect("a target list");
        let url = targets
            .iter()
            .find(|t| t["type"] == "page")
            .and_then(|t| t["webSocketDebuggerUrl"].as_str())
            .expect("a page target");
        let (socket, _) = tokio_tungstenite::connect_async(url)
            .await
            .expect("the page's DevTools socket opens");
        Page { socket, next: 0 }
    }
}

impl Drop for Chromium {
    /// Chromium is asked to quit and given a few seconds before it is killed, so that its
    /// folder is removed (after this) once nothing writes to it any more.
    fn drop(&mut self) {
        if let Some(pid) = self.child.id() {
            let _ = std::process::Command::new("kill")
                .args(["-TERM", &pid.to_string()])
                .status();
            let deadline = std::time::Instant::now() + Duration::from_secs(5);
            while std::time::Instant::now() < deadline {
                if matches!(self.child.try_wait(), Ok(Some(_))) {
                    return;
                }
                std::thread::sleep(Duration::from_millis(20));
            }
        }
        let _ = self.child.start_kill();
    }
}

/// One tab, spoken to with DevTools commands.
struct Page {
    socket: tokio_tungstenite::WebSocketStream<
        tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>,
    >,
    next: u64,
}

impl Page {
    /// Sends a command and waits for its answer (events in between are skipped); the
    /// `result`, or the protocol's error text.
    async fn call(&mut self, method: &str, params: Value) -> Result<Value, String> {
        self.next += 1;
        let id = self.next;
        let message = json!({"id": id, "method": method, "params": params}).to_string();
        self.socket
            .send(Message::text(message))
            .await
            .map_err(|e| e.to_string())?;
        let answer = async {
            while let Some(got) = self.socket.next().await {
                let Ok(Message::Text(text)) = got else {
                    continue;
                };
                let v: Value = serde_json::from_str(&text).map_err(|e| e.to_string())?;
                if v["id"] == id {
                    return match v.get("error") {
                        Some(e) => Err(format!("{method}: {e}")),
                        None => Ok(v["result"].clone()),
                    };
                }
            }
            Err("the DevTools socket closed".to_string())
        };
        tokio::time::timeout(Duration::from_secs(30), answer)
            .await
            .map_err(|_| format!("{method}: no answer within 30 s"))?
    }

    /// The value of a JavaScript expression in the page.
    async fn eval(&mut self, expression: &str) -> Result<Value, String> {
        let r = self
            .call(
                "Runtime.evaluate",
                json!({"expression": expression, "returnByValue": true}),
            )
            .await?;
        if let Some(e) = r.get("exceptionDetails") {
            return Err(format!("{expression}: {e}"));
        }
        Ok(r["result"]["value"].clone())
    }

    /// Waits (up to 30 s) until `expression` is true; an error (a page being replaced
    /// while it loads) counts as not yet.
    async fn wait_for(&mut self, what: &str, expression: &str) {
        for _ in 0..300 {
            if self.eval(expression).await == Ok(Value::Bool(true)) {
                return;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        panic!("waited 30 s for {what}: {expression}");
    }

    /// A figure of the page as a number (`1,234` -> 1234).
    async fn figure(&mut self, name: &str) -> f64 {
        let text = self
            .eval(&format!(
                "document.querySelector('[data-figure=\"{name}\"]').textContent"
            ))
            .await
            .expect("the figure is on the page");
        let text = text.as_str().unwrap_or_default().replace(',', "");
        text.parse()
            .unwrap_or_else(|_| panic!("{name} shows {text:?}, not a number"))
    }
}

/// JavaScript: the number a figure shows.
fn shown(name: &str) -> String {
    format!(
        "Number(document.querySelector('[data-figure=\"{name}\"]').textContent.replace(/,/g, ''))"
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_dashboard_logs_in_and_shows_live_figures_that_move_with_api_traffic() {
    let Some(browser) = Chromium::start().await else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let server = launch(
        dir.path(),
        &[("SWITCHBOARD_RATE_LIMIT_PER_MINUTE", "20")],
        &[],
    )
    .await;
    let key = server.key.clone().expect("bootstrap key");
    let mut page = browser.page().await;
    page.call(
        "Emulation.setDeviceMetricsOverride",
        json!({"width": 1440, "height": 1200, "deviceScaleFactor": 1, "mobile": false}),
    )
    .await
    .unwrap();

    page.call("Page.navigate", json!({"url": server.admin}))
        .await
        .unwrap();
    page.wait_for("the login form", "!!document.getElementById('token')")
        .await;
    page.eval("document.getElementById('token').focus()")
        .await
        .unwrap();
    page.call("Input.insertText", json!({"text": ADMIN_TOKEN}))
        .await
        .unwrap();
    page.eval("document.getElementById('login').click()")
        .await
        .unwrap();
    page.wait_for(
        "the dashboard, live",
        "!!document.getElementById('status') && document.getElementById('status').dataset.state === 'live'",
    )
    .await;
    assert_eq!(
        page.eval("location.href").await.unwrap(),
        format!("{}/", server.admin),
        "the token never shows in a URL"
    );
    assert_eq!(
        page.eval("document.cookie").await.unwrap(),
        "",
        "the session cookie is out of the page's reach (HttpOnly)"
    );
    page.eval("window.stillTheSamePage = true").await.unwrap();
    let before = page.figure("requests_total").await;

    // 25 writes against a budget of 20 a minute: 5 are refused.
    for i in 0..25 {
        server
            .send(
                reqwest::Method::POST,
                &key,
                "/tags",
                json!({"name": format!("browser-{i}")}),
            )
            .await;
    }
    page.wait_for(
        "the request total to count the traffic",
        &format!("{} >= {}", shown("requests_total"), before + 25.0),
    )
    .await;
    page.wait_for(
        "the 429s to show",
        &format!("{} >= 5", shown("rate_limited_total")),
    )
    .await;
    page.wait_for(
        "the workspace in the busiest table",
        "document.getElementById('workspaces').textContent.includes('ws_')",
    )
    .await;
    page.wait_for(
        "a latency figure",
        &format!("{} > 0", shown("latency_p99_ms")),
    )
    .await;
    page.wait_for(
        "the live actors",
        &format!("{} >= 1", shown("actors_workspace")),
    )
    .await;
    assert!(page.figure("requests_per_s").await > 0.0);
    assert!(page.figure("memory_mib").await > 1.0);
    assert_eq!(
        page.eval("window.stillTheSamePage === true").await.unwrap(),
        true,
        "the figures moved without a reload"
    );

    let shot = page
        .call("Page.captureScreenshot", json!({"format": "png"}))
        .await
        .unwrap();
    let png = base64::engine::general_purpose::STANDARD
        .decode(shot["data"].as_str().expect("image data"))
        .expect("base64 PNG");
    assert!(png.starts_with(b"\x89PNG"));
    let path = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("dashboard.png");
    std::fs::write(&path, &png).expect("screenshot written");
    eprintln!("dashboard screenshot: {}", path.display());
}
