//! Connections: a header-read timeout (which also closes idle kept-alive connections), a
//! cap that sheds the newest connection, and an operator listener that answers while the
//! API listener is full.

use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::helpers::*;

fn addr(url: &str) -> String {
    url.trim_start_matches("http://").to_string()
}

/// Reads until the peer closes; None when it stays open longer than `wait`.
async fn closed_within(stream: &mut TcpStream, wait: Duration) -> Option<Vec<u8>> {
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    let read = async {
        loop {
            match stream.read(&mut buf).await {
                Ok(0) | Err(_) => return,
                Ok(n) => got.extend_from_slice(&buf[..n]),
            }
        }
    };
    tokio::time::timeout(wait, read).await.ok().map(|_| got)
}

#[tokio::test]
async fn a_request_head_that_never_completes_is_cut_off() {
    let app = spawn_app_with(|s| {
        s.api_connections.header_read_timeout = Duration::from_millis(300);
    })
    .await;
    let mut slow = TcpStream::connect(addr(&app.api)).await.unwrap();
    slow.write_all(b"GET /health HTTP/1.1\r\nHost: x\r\n")
        .await
        .unwrap();
    assert!(
        closed_within(&mut slow, Duration::from_secs(3))
            .await
            .is_some(),
        "a slowloris connection is closed"
    );
}

#[tokio::test]
async fn a_body_that_stalls_or_trickles_gets_408_and_loses_its_connection() {
    let app = spawn_app_with(|s| {
        s.api_connections.header_read_timeout = Duration::from_millis(300);
    })
    .await;
    for (key, trickle) in [
        ("", false),
        ("Idempotency-Key: slow-1\r\n", false),
        ("", true),
    ] {
        let mut conn = TcpStream::connect(addr(&app.api)).await.unwrap();
        let head = format!(
            "POST /api/v1/tags HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {}\r\n\
             Content-Type: application/json\r\n{key}Content-Length: 40\r\n\r\n{{",
            app.key
        );
        conn.write_all(head.as_bytes()).await.unwrap();
        if trickle {
            // A byte now and then, never the whole body in time.
            for _ in 0..8 {
                tokio::time::sleep(Duration::from_millis(100)).await;
                if conn.write_all(b" ").await.is_err() {
                    break;
                }
            }
        }
        let answer = closed_within(&mut conn, Duration::from_secs(5))
            .await
            .expect("the connection is closed");
        let text = String::from_utf8_lossy(&answer);
        assert!(text.starts_with("HTTP/1.1 408"), "{key} {trickle}: {text}");
        assert!(text.contains("request_timeout"), "{text}");
    }
    // The key of the late request was never run: it is free.
    app.call(reqwest::Method::POST, "/tags")
        .token(&app.key)
        .header("Idempotency-Key", "slow-1")
        .json(serde_json::json!({"name": "on time"}))
        .send()
        .await
        .expect(201);
}

#[tokio::test]
async fn an_idle_kept_alive_connection_is_closed() {
    let app = spawn_app_with(|s| {
        s.api_connections.header_read_timeout = Duration::from_millis(300);
    })
    .await;
    let mut conn = TcpStream::connect(addr(&app.api)).await.unwrap();
    conn.write_all(b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
        .await
        .unwrap();
    let mut buf = [0u8; 1024];
    let n = conn.read(&mut buf).await.unwrap();
    assert!(String::from_utf8_lossy(&buf[..n]).starts_with("HTTP/1.1 200"));
    assert!(
        closed_within(&mut conn, Duration::from_secs(3))
            .await
            .is_some(),
        "the idle connection is closed"
    );
}

#[tokio::test]
async fn connections_past_the_cap_are_shed_and_the_operator_listener_still_answers() {
    let app = spawn_app_with(|s| s.api_connections.max_connections = 4).await;
    let mut idle = Vec::new();
    for _ in 0..4 {
        idle.push(TcpStream::connect(addr(&app.api)).await.unwrap());
    }
    tokio::time::sleep(Duration::from_millis(100)).await;
    let mut extra = TcpStream::connect(addr(&app.api)).await.unwrap();
    let _ = extra
        .write_all(b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
        .await;
    let answer = closed_within(&mut extra, Duration::from_secs(3))
        .await
        .expect("the newest connection is closed, not left waiting");
    assert!(answer.is_empty(), "shed without an answer");

    let admin = app
        .client
        .get(format!("{}/admin/health", app.admin))
        .bearer_auth(ADMIN_TOKEN);
    assert_eq!(status_of(admin).await, 200, "the operator listener answers");

    drop(idle);
    tokio::time::sleep(Duration::from_millis(100)).await;
    let health = reqwest::Client::new().get(format!("{}/health", app.api));
    assert_eq!(
        status_of(health).await,
        200,
        "freed room takes new connections"
    );
}

#[tokio::test]
async fn an_over_long_query_string_gets_the_error_envelope() {
    // Past 64 KiB the HTTP library refuses a request target itself (414, empty body);
    // up to that, the service answers with its envelope.
    let app = spawn_app().await;
    let mut conn = TcpStream::connect(addr(&app.api)).await.unwrap();
    let head = format!(
        "GET /api/v1/contacts?q={} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
        "x".repeat(32 * 1024)
    );
    conn.write_all(head.as_bytes()).await.unwrap();
    let answer = closed_within(&mut conn, Duration::from_secs(10))
        .await
        .expect("answered and closed");
    let text = String::from_utf8_lossy(&answer);
    assert!(
        text.starts_with("HTTP/1.1 414"),
        "{}",
        &text[..text.len().min(200)]
    );
    assert!(text.contains(r#""code":"uri_too_long""#), "{text}");
}

#[tokio::test]
async fn eleven_hundred_idle_connections_do_not_stop_either_listener() {
    // Both ends live in this test process: it needs the room the service gives itself.
    let _ = rlimit::increase_nofile_limit(u64::MAX);
    let app = spawn_app().await;
    let mut idle = Vec::new();
    for _ in 0..1_100 {
        idle.push(TcpStream::connect(addr(&app.api)).await.unwrap());
    }
    let health = app
        .client
        .get(format!("{}/health", app.api))
        .timeout(Duration::from_secs(5));
    assert_eq!(status_of(health).await, 200);
    let admin = app
        .client
        .get(format!("{}/admin/health", app.admin))
        .bearer_auth(ADMIN_TOKEN)
        .timeout(Duration::from_secs(5));
    assert_eq!(status_of(admin).await, 200);
    drop(idle);
}

#[tokio::test]
async fn a_one_megabyte_request_line_gets_the_error_envelope_too() {
    let app = spawn_app().await;
    let mut conn = TcpStream::connect(addr(&app.api)).await.unwrap();
    let head = format!(
        "GET /api/v1/contacts?q={} HTTP/1.1\r\nHost: x\r\n\r\n",
        "x".repeat(1 << 20)
    );
    let (mut reader, mut writer) = conn.split();
    let send = async {
        let _ = writer.write_all(head.as_bytes()).await;
    };
    let mut got = Vec::new();
    let read = async {
        let mut buf = [0u8; 4096];
        loop {
            match reader.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => got.extend_from_slice(&buf[..n]),
            }
        }
    };
    let _ = tokio::time::timeout(Duration::from_secs(10), async { tokio::join!(send, read) }).await;
    let text = String::from_utf8_lossy(&got);
    assert!(
        text.starts_with("HTTP/1.1 414"),
        "{}",
        &text[..text.len().min(200)]
    );
    assert!(text.contains(r#""code":"uri_too_long""#), "{text}");
}
