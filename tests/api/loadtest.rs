//! `switchboard loadtest` end to end: the real binary against the app on 127.0.0.1:0,
//! with a tiny configuration, its `--json` report read back; and the operator route it
//! reads the server's CPU time from.

use std::process::Stdio;
use std::time::Duration;

use reqwest::Method;
use serde_json::{json, Value};

use crate::helpers::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_load_tester_runs_end_to_end_and_only_the_noisy_workspace_is_refused() {
    let app = spawn_app_with(|s| {
        s.rate_limit_per_minute = 120;
        s.webhooks.allow_private = true;
    })
    .await;
    // A noisy workspace sends 10x its budget: at 120/min it needs 120 / (20 - 2) ≈ 6.7 s
    // to spend a full budget, longer than this short run. Seeding 114 contacts spends
    // most of every workspace's budget first, so the noisy one is refused within the
    // run (with margin for a busy machine) while the quiet ones, paced at the refill
    // rate, still never are.
    let args = [
        "loadtest",
        "--api-url",
        &app.api,
        "--admin-url",
        &app.admin,
        "--admin-token",
        ADMIN_TOKEN,
        "--workspaces",
        "3",
        "--contacts-per-workspace",
        "114",
        "--connections",
        "4",
        "--duration",
        "5s",
        "--noisy",
        "1",
        "--mix",
        "reads=50,writes=15,searches=10,webhook_writes=5,messages=20",
        "--json",
        "--no-progress",
    ];
    let child = tokio::process::Command::new(env!("CARGO_BIN_EXE_switchboard"))
        .args(args)
        .env_remove("SWITCHBOARD_API_URL")
        .env_remove("SWITCHBOARD_ADMIN_URL")
        .env_remove("SWITCHBOARD_ADMIN_TOKEN")
        .env_remove("SWITCHBOARD_LOADTEST_RATE_BUDGET")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .output();
    let out = tokio::time::timeout(Duration::from_secs(60), child)
        .await
        .expect("the load test stops by itself")
        .expect("the binary runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{}: {stdout} {stderr}", out.status);
    let report: Value =
        serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("not JSON ({e}): {stdout}"));
    let n = |path: &str| {
        report
            .pointer(path)
            .and_then(Value::as_f64)
            .unwrap_or_else(|| panic!("{path} missing: {report:#}"))
    };

    assert_eq!(n("/config/workspaces"), 3.0);
    assert_eq!(n("/config/rate_budget_per_minute"), 120.0, "{report:#}");
    assert_eq!(n("/config/server_rate_budget_per_minute"), 120.0);
    assert!(n("/total/requests") > 0.0, "{report:#}");
    assert!(n("/total/per_second") > 0.0, "{report:#}");
    assert!(n("/health_phase/requests") > 0.0, "{report:#}");
    assert!(n("/classes/health/per_second") > 0.0, "{report:#}");
    assert!(n("/classes/reads/requests") > 0.0, "{report:#}");
    assert!(n("/classes/writes/requests") > 0.0, "{report:#}");
    assert!(n("/classes/reads/latency/p99_ms") > 0.0, "{report:#}");
    assert!(n("/mixed_phase/requests") > 0.0, "{report:#}");
    assert!(n("/ratios/reads_vs_health_throughput") > 0.0, "{report:#}");

    assert!(n("/isolation/noisy_429") > 0.0, "{report:#}");
    assert_eq!(n("/isolation/quiet_429"), 0.0, "{report:#}");
    assert_eq!(report["isolation"]["holds"], true);
    assert_eq!(n("/workspaces/quiet/status/rate_limited_429"), 0.0);
    assert!(n("/workspaces/quiet/requests") > 0.0, "{report:#}");
    assert_eq!(n("/status/transport_errors"), 0.0, "{report:#}");
    assert_eq!(n("/status/server_5xx"), 0.0, "{report:#}");
    // The endpoint at the load tester's own receiver was accepted (private targets are
    // allowed here), so webhook writes ran as themselves.
    assert!(n("/config/mix/webhook_writes") > 0.0, "{report:#}");
    assert!(
        n("/classes/messages/status/accepted_202") > 0.0,
        "{report:#}"
    );
    assert!(
        n("/ratios/messages_vs_health_throughput") > 0.0,
        "{report:#}"
    );
}

/// The figures come from /proc, so they are asserted where it exists.
#[cfg(target_os = "linux")]
#[tokio::test]
async fn the_process_route_answers_cpu_time_and_memory_to_the_operator_only() {
    let app = spawn_app().await;
    let anonymous = app
        .client
        .get(format!("{}/admin/process", app.admin))
        .send()
        .await
        .expect("request sent");
    assert_eq!(anonymous.status().as_u16(), 401);

    let before = app
        .admin_call(Method::GET, "/admin/process")
        .send()
        .await
        .expect(200);
    assert_eq!(before.body["object"], "process_usage", "{}", before.body);
    let cpu = |r: &Resp| {
        let user = r.body["user_cpu_s"].as_f64().expect("user_cpu_s");
        let system = r.body["system_cpu_s"].as_f64().expect("system_cpu_s");
        assert!(user >= 0.0 && system >= 0.0, "{}", r.body);
        user + system
    };
    let resident = before.body["resident_memory_bytes"].as_u64().expect("rss");
    let peak = before.body["peak_resident_memory_bytes"]
        .as_u64()
        .expect("peak");
    assert!(resident > 0 && peak >= resident, "{}", before.body);
    // Cumulative: the server's work in between never makes it go back.
    for i in 0..50 {
        app.post("/tags", &app.key, json!({ "name": format!("t{i}") }))
            .await
            .expect(201);
    }
    let after = app
        .admin_call(Method::GET, "/admin/process")
        .send()
        .await
        .expect(200);
    assert!(
        cpu(&after) >= cpu(&before),
        "{} then {}",
        before.body,
        after.body
    );
}
