//! The operator dashboard over HTTP, on the real binary (its own process, so its counters
//! move only with this test's traffic): the login form and its cookie, the page and its
//! files from the binary alone, and the event stream whose figures are the /metrics ones.

use std::time::Duration;

use reqwest::header::{CONTENT_TYPE, COOKIE, LOCATION, SET_COOKIE};
use reqwest::StatusCode;
use serde_json::{json, Value};

use crate::helpers::*;

/// A client that follows no redirect, so the login's 303 and cookie can be read.
fn browser() -> reqwest::Client {
    reqwest::Client::builder()
        .no_proxy()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap()
}

/// GET `path` (from the operator address on) with the [`browser`], carrying the session
/// `cookie` when there is one.
async fn visit(server: &Server, path: &str, cookie: Option<&str>) -> reqwest::Response {
    let mut req = browser().get(format!("{}{path}", server.admin));
    if let Some(cookie) = cookie {
        req = req.header(COOKIE, cookie);
    }
    req.send().await.unwrap()
}

/// Logs in with `token`; the session cookie (`name=value`) when it worked.
async fn log_in(server: &Server, token: &str) -> (StatusCode, Option<String>, String) {
    let r = browser()
        .post(format!("{}/login", server.admin))
        .form(&[("token", token)])
        .send()
        .await
        .unwrap();
    let status = r.status();
    let set_cookie = r
        .headers()
        .get(SET_COOKIE)
        .map(|v| v.to_str().unwrap().to_string());
    let location = r
        .headers()
        .get(LOCATION)
        .map(|v| v.to_str().unwrap().to_string());
    let body = r.text().await.unwrap();
    if let Some(c) = &set_cookie {
        assert!(c.contains("HttpOnly"), "{c}");
        assert!(c.contains("SameSite=Strict"), "{c}");
        assert_eq!(location.as_deref(), Some("/"));
    }
    let cookie = set_cookie.map(|c| c.split(';').next().unwrap().to_string());
    (status, cookie, body)
}

/// The `text/event-stream` of the dashboard, read event by event.
struct EventStream {
    response: reqwest::Response,
    buffer: String,
}

impl EventStream {
    async fn open(server: &Server, cookie: &str) -> Self {
        let response = visit(server, "/dashboard/events", Some(cookie)).await;
        assert_eq!(response.status(), 200);
        assert_eq!(response.headers()[CONTENT_TYPE], "text/event-stream");
        Self {
            response,
            buffer: String::new(),
        }
    }

    /// The next event's name and JSON data (comments and keep-alives skipped); None once
    /// the stream ends.
    async fn next(&mut self) -> Option<(String, Value)> {
        loop {
            if let Some(end) = self.buffer.find("\n\n") {
                let block: String = self.buffer.drain(..end + 2).collect();
                let (mut name, mut data) = (String::new(), String::new());
                for line in block.lines() {
                    if let Some(n) = line.strip_prefix("event:") {
                        name = n.trim().to_string();
                    } else if let Some(d) = line.strip_prefix("data:") {
                        data.push_str(d.trim_start());
                    }
                }
                if data.is_empty() {
                    continue;
                }
                return Some((name, serde_json::from_str(&data).expect("JSON data")));
            }
            let chunk = tokio::time::timeout(Duration::from_secs(10), self.response.chunk())
                .await
                .expect("an event within 10 s")
                .expect("the stream reads");
            self.buffer.push_str(&String::from_utf8_lossy(&chunk?));
        }
    }

    /// The first `tick` point that satisfies `wanted`.
    async fn point_where(&mut self, wanted: impl Fn(&Value) -> bool) -> (Value, Value) {
        for _ in 0..30 {
            let (name, data) = self.next().await.expect("the stream goes on");
            if name == "tick" && wanted(&data["point"]) {
                return (data["point"].clone(), data["tables"].clone());
            }
        }
        panic!("no tick satisfied the test in 30 events");
    }
}

/// The sum of every sample of `metric` in a scrape.
fn total(scrape: &str, metric: &str) -> f64 {
    scrape
        .lines()
        .filter(|l| l.starts_with(metric) && l[metric.len()..].starts_with(['{', ' ']))
        .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
        .sum()
}

#[tokio::test]
async fn the_admin_token_posted_from_the_form_buys_an_http_only_same_site_cookie() {
    let dir = tempfile::tempdir().unwrap();
    let server = launch(dir.path(), &[], &[]).await;
    let page = visit(&server, "", None).await;
    assert_eq!(page.status(), 200);
    let policy = page.headers()["content-security-policy"]
        .to_str()
        .unwrap()
        .to_string();
    assert!(policy.contains("script-src 'self'"), "{policy}");
    let form = page.text().await.unwrap();
    assert!(
        form.contains(r#"<form method="post" action="/login""#),
        "{form}"
    );
    assert!(form.contains(r#"type="password""#));

    let (status, cookie, body) = log_in(&server, "not-the-token-at-all").await;
    assert_eq!(status, 401);
    assert!(cookie.is_none());
    assert!(body.contains("That is not the admin token."));
    let key = server.key.clone().unwrap();
    assert!(
        log_in(&server, &key).await.1.is_none(),
        "an API key is not the admin token"
    );
    // The token is never taken from a URL.
    let in_url = visit(&server, &format!("/login?token={ADMIN_TOKEN}"), None).await;
    assert_eq!(in_url.status(), 405);

    let (status, cookie, _) = log_in(&server, ADMIN_TOKEN).await;
    assert_eq!(status, 303);
    let cookie = cookie.expect("a session cookie");
    assert!(!cookie.contains(ADMIN_TOKEN));
    let dashboard = visit(&server, "", Some(&cookie))
        .await
        .text()
        .await
        .unwrap();
    assert!(dashboard.contains(r#"data-figure="requests_per_s""#));

    let refused = visit(&server, "/dashboard/events", None).await;
    assert_eq!(refused.status(), 401, "the stream needs the session");
    let mut open = EventStream::open(&server, &cookie).await;
    assert_eq!(open.next().await.expect("the history").0, "history");
    let logout = browser()
        .post(format!("{}/logout", server.admin))
        .header(COOKIE, &cookie)
        .send()
        .await
        .unwrap();
    assert_eq!(logout.status(), 303);
    assert!(logout.headers()[SET_COOKIE]
        .to_str()
        .unwrap()
        .contains("Max-Age=0"));
    let after = visit(&server, "/dashboard/events", Some(&cookie)).await;
    assert_eq!(after.status(), 401, "a closed session admits nothing");
    assert!(
        open.next().await.is_none(),
        "the feed the session opened ends with it"
    );
}

#[tokio::test]
async fn the_page_runs_only_files_from_the_binary() {
    let dir = tempfile::tempdir().unwrap();
    let server = launch(dir.path(), &[], &[]).await;
    let (_, cookie, _) = log_in(&server, ADMIN_TOKEN).await;
    let page = visit(&server, "", Some(&cookie.unwrap())).await;
    let page = page.text().await.unwrap();
    for file in ["app.js", "chart.js", "style.css"] {
        assert!(
            page.contains(&format!("/dashboard/{file}")),
            "{file} linked"
        );
        let r = visit(&server, &format!("/dashboard/{file}"), None).await;
        assert_eq!(r.status(), 200);
        let kind = r.headers()[CONTENT_TYPE].to_str().unwrap().to_string();
        assert!(kind.starts_with("text/"), "{file}: {kind}");
        let text = r.text().await.unwrap();
        assert!(
            !text.contains("http://") && !text.contains("https://"),
            "{file} loads nothing from elsewhere"
        );
    }
    assert!(!page.contains("http://") && !page.contains("https://"));
}

#[tokio::test]
async fn the_stream_shows_the_metrics_counters_and_moves_with_api_traffic() {
    let dir = tempfile::tempdir().unwrap();
    let server = launch(
        dir.path(),
        &[("SWITCHBOARD_RATE_LIMIT_PER_MINUTE", "3")],
        &[],
    )
    .await;
    let key = server.key.clone().unwrap();
    let (_, cookie, _) = log_in(&server, ADMIN_TOKEN).await;
    let cookie = cookie.unwrap();
    let mut stream = EventStream::open(&server, &cookie).await;
    let (name, history) = stream.next().await.unwrap();
    assert_eq!(name, "history");
    assert!(history["points"].is_array());
    assert!(history["tables"]["workspaces"].is_array());

    for i in 0..5 {
        server
            .send(
                reqwest::Method::POST,
                &key,
                "/tags",
                json!({"name": format!("t{i}")}),
            )
            .await;
    }
    let (point, tables) = stream
        .point_where(|p| p["requests_total"] == 5.0 && p["requests_per_s"].as_f64() > Some(0.0))
        .await;
    assert_eq!(point["rate_limited_total"], 2.0, "{point}");
    assert!(point["latency_p50_ms"].as_f64().is_some_and(|ms| ms > 0.0));
    assert!(point["latency_p99_ms"].as_f64() >= point["latency_p50_ms"].as_f64());
    assert!(
        point["actors"]["workspace"].as_f64() >= Some(1.0),
        "{point}"
    );
    assert!(
        point["memory_bytes"].as_f64().is_some_and(|b| b > 1e6),
        "{point}"
    );
    assert!(point["flush_mean_ms"].as_f64().is_some(), "{point}");
    let busiest = &tables["workspaces"][0];
    assert!(
        busiest["id"].as_str().unwrap().starts_with("ws_"),
        "{tables}"
    );
    assert_eq!(busiest["name"], "Default");
    assert!(busiest["rate_limited_per_s"].as_f64() > Some(0.0));

    let scrape = direct_get(&format!("{}/metrics", server.admin)).await;
    assert_eq!(
        total(&scrape, "switchboard_http_requests_total"),
        point["requests_total"].as_f64().unwrap(),
        "the page's total is the scrape's"
    );
    assert_eq!(
        total(&scrape, "switchboard_rate_limited_total"),
        point["rate_limited_total"].as_f64().unwrap()
    );
    assert_eq!(
        total(&scrape, "switchboard_webhook_pending_deliveries"),
        point["pending_deliveries"].as_f64().unwrap()
    );
    assert!(total(&scrape, "switchboard_process_resident_memory_bytes") > 1e6);
}

/// GET with the admin token; the body.
async fn direct_get(url: &str) -> String {
    body_text(browser().get(url).bearer_auth(ADMIN_TOKEN)).await
}

#[tokio::test]
async fn an_open_page_does_not_hold_up_a_shutdown() {
    let dir = tempfile::tempdir().unwrap();
    let mut server = launch(dir.path(), &[("SWITCHBOARD_SHUTDOWN_GRACE", "60s")], &[]).await;
    let (_, cookie, _) = log_in(&server, ADMIN_TOKEN).await;
    let mut stream = EventStream::open(&server, &cookie.unwrap()).await;
    assert_eq!(stream.next().await.unwrap().0, "history");
    let pid = server.child.id().unwrap().to_string();
    assert!(std::process::Command::new("kill")
        .args(["-TERM", &pid])
        .status()
        .unwrap()
        .success());
    let mut ended = false;
    for _ in 0..30 {
        if stream.next().await.is_none() {
            ended = true;
            break;
        }
    }
    assert!(ended, "the stream ends when the service stops");
    let exit = server.child.wait().await.unwrap();
    assert!(exit.success(), "{exit:?}");
    let log = server.logged();
    assert!(
        !log.iter().any(|l| l.contains("grace period")),
        "no request was left waiting: {log:#?}"
    );
}
