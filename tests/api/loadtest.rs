//! `switchboard loadtest` end to end: the real binary against the app on 127.0.0.1:0,
//! with a tiny configuration, its `--json` report read back; and the operator route it
//! reads the server's CPU time from.

use std::process::{Output, Stdio};
use std::time::Duration;

use reqwest::Method;
use serde_json::{json, Value};

use crate::helpers::*;

/// `switchboard loadtest` against `app` with `args` (besides the addresses and the token),
/// its environment cleared of what would change the run.
fn loadtest(app: &TestApp, args: &[&str]) -> tokio::process::Command {
    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_switchboard"));
    command
        .args(["loadtest", "--api-url", &app.api, "--admin-url", &app.admin])
        .args(["--admin-token", ADMIN_TOKEN, "--no-progress"])
        .args(args)
        .env_remove("SWITCHBOARD_API_URL")
        .env_remove("SWITCHBOARD_ADMIN_URL")
        .env_remove("SWITCHBOARD_ADMIN_TOKEN")
        .env_remove("SWITCHBOARD_LOADTEST_RATE_BUDGET")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    command
}

/// Waits for a load test that stops by itself.
async fn finished(child: tokio::process::Child) -> Output {
    tokio::time::timeout(Duration::from_secs(90), child.wait_with_output())
        .await
        .expect("the load test stops by itself")
        .expect("the binary runs")
}

/// Runs the load test with `args` and answers how it ended, whatever that was.
async fn run_loadtest_output(app: &TestApp, args: &[&str]) -> Output {
    finished(loadtest(app, args).spawn().expect("the binary starts")).await
}

/// The `--json` report of a run that succeeded.
fn report_of(out: &Output) -> Value {
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{}: {stdout} {stderr}", out.status);
    serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("not JSON ({e}): {stdout}"))
}

/// Runs `switchboard loadtest` against `app` with `args` (besides the addresses, the
/// token, `--json` and `--no-progress`) and answers its report.
async fn run_loadtest(app: &TestApp, args: &[&str]) -> Value {
    report_of(&run_loadtest_output(app, &[&["--json"], args].concat()).await)
}

/// The stderr of a run that must be refused; fails when the run went ahead.
async fn refusal(app: &TestApp, args: &[&str]) -> String {
    let out = run_loadtest_output(app, args).await;
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        !out.status.success(),
        "ran instead of refusing: {} {stderr}",
        String::from_utf8_lossy(&out.stdout)
    );
    stderr
}

/// The workspaces a load test made (the operator API lists them newest first).
async fn loadtest_workspaces(app: &TestApp) -> Vec<String> {
    let listed = app
        .admin_call(Method::GET, "/admin/workspaces?limit=100")
        .send()
        .await
        .expect(200);
    listed.body["data"]
        .as_array()
        .expect("a list")
        .iter()
        .filter(|w| {
            w["name"]
                .as_str()
                .is_some_and(|n| n.starts_with("loadtest "))
        })
        .filter_map(|w| w["id"].as_str().map(str::to_string))
        .collect()
}

/// Two workspaces of five contacts, two connections: a run small enough for a test.
const TINY: &[&str] = &[
    "--workspaces",
    "2",
    "--contacts-per-workspace",
    "5",
    "--connections",
    "2",
];

/// A number at `path` of the report.
fn number(report: &Value, path: &str) -> f64 {
    report
        .pointer(path)
        .and_then(Value::as_f64)
        .unwrap_or_else(|| panic!("{path} missing: {report:#}"))
}

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
    ];
    let report = run_loadtest(&app, &args).await;
    let n = |path: &str| number(&report, path);
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
    // The default is two phases: the health baseline, then the mix.
    assert_eq!(report["config"]["mode"], "health_then_mix");
    assert_eq!(report["phases"][0]["phase"], "health", "{report:#}");
    assert_eq!(report["phases"][1]["phase"], "mixed", "{report:#}");
    assert_eq!(
        n("/phases/1/requests"),
        n("/mixed_phase/requests"),
        "{report:#}"
    );

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
    // Every delivery the server made was signed with its endpoint's secret.
    assert_eq!(n("/webhook_deliveries/rejected"), 0.0, "{report:#}");
}

/// A server that stops mid-run leaves requests without an answer: they are counted and
/// shown, and no rate or ratio counts them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_stops_mid_run_is_measured_by_what_it_answered() {
    let mut app = spawn_app().await;
    let args = [TINY, &["--json", "--duration", "4s", "--mix", "writes=100"]].concat();
    let child = loadtest(&app, &args).spawn().expect("the binary starts");
    // Stop the server once the mixed run is under way: a workspace has contacts beyond
    // the five seeded.
    let mut writing = false;
    for _ in 0..1500 {
        for ws in loadtest_workspaces(&app).await {
            let stats = app
                .admin_call(Method::GET, &format!("/admin/workspaces/{ws}/stats"))
                .send()
                .await
                .expect(200);
            writing |= stats.body["contacts"].as_u64().unwrap_or(0) > 20;
        }
        if writing {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(writing, "the mixed run never started");
    app.stop().await;
    let report = report_of(&finished(child).await);
    let n = |path: &str| number(&report, path);

    let errors = n("/status/transport_errors");
    assert!(errors > 0.0, "{report:#}");
    // Per phase, class and stream: sent counts errors, answered and the rate do not.
    let close = |a: f64, b: f64| (a - b).abs() <= 1e-6 * a.abs().max(1.0);
    for at in ["/phases/1", "/classes/writes", "/workspaces/quiet"] {
        let sent = n(&format!("{at}/requests"));
        let answered = sent - n(&format!("{at}/status/transport_errors"));
        assert!(answered > 0.0 && answered < sent, "{at}: {report:#}");
        assert_eq!(n(&format!("{at}/answered")), answered, "{at}: {report:#}");
    }
    let seconds = n("/phases/1/seconds");
    let answered = n("/phases/1/answered");
    assert_eq!(n("/mixed_phase/answered"), answered, "{report:#}");
    assert!(
        close(n("/phases/1/per_second"), answered / seconds),
        "{report:#}"
    );
    assert!(
        close(n("/mixed_phase/per_second"), answered / seconds),
        "{report:#}"
    );
    let total_answered = n("/total/requests") - errors;
    assert!(
        close(n("/total/per_second"), total_answered / n("/total/seconds")),
        "{report:#}"
    );
    let health = n("/classes/health/per_second");
    assert!(
        close(
            n("/ratios/mixed_vs_health_throughput"),
            answered / seconds / health
        ),
        "{report:#}"
    );
    assert!(
        close(n("/classes/writes/per_second"), answered / seconds),
        "{report:#}"
    );
    // The CPU reading after the mixed run failed, and the note says so and why.
    assert!(report["phases"][1]["server_cpu_s"].is_null(), "{report:#}");
    let notes = report["notes"].to_string();
    assert!(notes.contains("failed: no answer"), "{notes}");
    assert!(
        notes.contains("got no answer (transport errors)"),
        "{notes}"
    );
}

/// The server's CPU figures come from /proc, so they are asserted where it exists.
#[cfg(target_os = "linux")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn phases_measure_each_class_alone_with_the_servers_cpu_per_request() {
    let app = spawn_app().await;
    let args = [
        TINY,
        &["--duration", "3s", "--phases", "health,reads,writes"],
    ]
    .concat();
    let report = run_loadtest(&app, &args).await;
    let n = |path: &str| number(&report, path);

    assert_eq!(report["config"]["mode"], "phases");
    let phases = report["phases"].as_array().expect("phases");
    let names: Vec<&str> = phases.iter().filter_map(|p| p["phase"].as_str()).collect();
    assert_eq!(names, ["health", "reads", "writes"], "{report:#}");
    for i in 0..3 {
        let at = |field: &str| n(&format!("/phases/{i}/{field}"));
        assert!(at("requests") > 0.0, "{report:#}");
        assert!(at("per_second") > 0.0, "{report:#}");
        assert!(at("latency/p99_ms") >= at("latency/p50_ms"), "{report:#}");
        assert!(at("server_cpu_s") > 0.0, "{report:#}");
        assert!(at("server_cpu_per_request_us") > 0.0, "{report:#}");
        assert!(at("client_cpu_per_request_us") >= 0.0, "{report:#}");
        assert!(at("server_resident_memory_bytes") > 0.0, "{report:#}");
        assert!(at("throughput_vs_health") > 0.0, "{report:#}");
        assert!(at("server_cpu_per_request_vs_health") > 0.0, "{report:#}");
    }
    // The health phase is its own yardstick.
    assert_eq!(n("/phases/0/throughput_vs_health"), 1.0);
    assert_eq!(n("/phases/0/server_cpu_per_request_vs_health"), 1.0);
    // Each class ran alone: every request of its phase is of its class, and succeeded.
    assert_eq!(n("/phases/0/requests"), n("/classes/health/requests"));
    assert_eq!(n("/phases/1/requests"), n("/classes/reads/requests"));
    assert_eq!(n("/phases/2/requests"), n("/classes/writes/requests"));
    assert_eq!(n("/phases/1/status/ok_200"), n("/phases/1/requests"));
    assert_eq!(n("/phases/2/status/created_201"), n("/phases/2/requests"));
    assert_eq!(n("/classes/searches/requests"), 0.0);
    assert_eq!(
        n("/ratios/reads_vs_health_throughput"),
        n("/phases/1/throughput_vs_health"),
        "{report:#}"
    );
}

/// Rounds alternate the phases; each phase is compared with its own round's health phase,
/// and every class gets its median and extremes over the rounds.
#[cfg(target_os = "linux")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rounds_alternate_the_phases_and_report_medians_over_them() {
    let app = spawn_app().await;
    let phases = [
        "--duration",
        "4s",
        "--phases",
        "health,writes",
        "--rounds",
        "2",
    ];
    let report = run_loadtest(&app, &[TINY, &phases].concat()).await;
    let n = |path: &str| number(&report, path);
    let phases = report["phases"].as_array().expect("phases");
    let run: Vec<(&str, u64)> = phases
        .iter()
        .map(|p| (p["phase"].as_str().unwrap(), p["round"].as_u64().unwrap()))
        .collect();
    assert_eq!(
        run,
        [("health", 1), ("writes", 1), ("health", 2), ("writes", 2)],
        "{report:#}"
    );
    let close = |a: f64, b: f64| (a - b).abs() < 1e-9 * a.abs().max(1.0);
    for (writes, health) in [(1, 0), (3, 2)] {
        let (w, h) = (
            n(&format!("/phases/{writes}/per_second")),
            n(&format!("/phases/{health}/per_second")),
        );
        let got = n(&format!("/phases/{writes}/throughput_vs_health"));
        assert!(
            close(got, w / h),
            "its own round's health: {got} vs {}",
            w / h
        );
    }
    let rounds = report["rounds"].as_array().expect("rounds");
    assert_eq!(rounds.len(), 2, "{report:#}");
    assert_eq!(rounds[1]["phase"], "writes");
    assert_eq!(rounds[1]["rounds"], 2);
    let (a, b) = (
        n("/phases/1/throughput_vs_health"),
        n("/phases/3/throughput_vs_health"),
    );
    assert!(close(
        n("/rounds/1/throughput_vs_health/median"),
        (a + b) / 2.0
    ));
    assert!(close(n("/rounds/1/throughput_vs_health/min"), a.min(b)));
    assert!(close(n("/rounds/1/throughput_vs_health/max"), a.max(b)));
    assert!(close(n("/rounds/0/throughput_vs_health/median"), 1.0));

    let refused = std::process::Command::new(env!("CARGO_BIN_EXE_switchboard"))
        .args([
            "loadtest",
            "--api-url",
            &app.api,
            "--admin-token",
            ADMIN_TOKEN,
        ])
        .args(["--rounds", "2"])
        .output()
        .expect("the binary runs");
    assert!(!refused.status.success(), "--rounds needs --phases");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_open_loop_of_webhook_writes_sees_every_event_delivered_and_timed() {
    let app = spawn_app_with(|s| s.webhooks.allow_private = true).await;
    let args = [
        "--workspaces",
        "1",
        "--contacts-per-workspace",
        "0",
        "--rate",
        "50",
        "--requests",
        "100",
        "--mix",
        "webhook_writes=100",
        "--drain",
        "60s",
    ];
    let report = run_loadtest(&app, &args).await;
    let n = |path: &str| number(&report, path);

    assert_eq!(report["config"]["mode"], "open_loop");
    assert_eq!(n("/open_loop/offered_per_second"), 50.0);
    assert_eq!(n("/open_loop/scheduled"), 100.0, "{report:#}");
    assert_eq!(n("/open_loop/sent"), 100.0, "{report:#}");
    assert_eq!(n("/open_loop/skipped"), 0.0, "{report:#}");
    assert_eq!(n("/open_loop/schedule_s"), 2.0, "{report:#}");
    assert_eq!(n("/classes/webhook_writes/status/created_201"), 100.0);
    assert_eq!(report["phases"][0]["phase"], "open_loop");
    assert_eq!(n("/phases/0/requests"), 100.0);

    // Every accepted write's event arrived, each once, each matched to its write.
    assert_eq!(
        n("/webhook_deliveries/writes_accepted"),
        100.0,
        "{report:#}"
    );
    assert_eq!(n("/webhook_deliveries/delivered"), 100.0, "{report:#}");
    assert_eq!(n("/webhook_deliveries/undelivered"), 0.0, "{report:#}");
    assert_eq!(n("/webhook_deliveries/unmatched"), 0.0, "{report:#}");
    assert_eq!(
        n("/webhook_deliveries/received"),
        100.0 + n("/webhook_deliveries/duplicates")
    );
    let latency = |q: &str| n(&format!("/webhook_deliveries/latency/{q}"));
    assert!(latency("p50_ms") > 0.0, "{report:#}");
    assert!(latency("p99_ms") >= latency("p50_ms"), "{report:#}");
    assert!(latency("max_ms") >= latency("p99_ms"), "{report:#}");
    assert!(n("/webhook_deliveries/drain_s") < 60.0, "{report:#}");
    assert_eq!(n("/webhook_deliveries/rejected"), 0.0, "{report:#}");

    // The endpoint pointed at the receiver, gone with the load tester: it was deleted.
    let made = loadtest_workspaces(&app).await;
    assert_eq!(made.len(), 1);
    let key = app
        .admin_post(
            &format!("/admin/workspaces/{}/api-keys", made[0]),
            json!({}),
        )
        .await
        .created()["api_key"]
        .as_str()
        .expect("api_key")
        .to_string();
    let endpoints = app.get_as(&key, "/webhooks").await.ok();
    assert_eq!(endpoints["data"], json!([]), "{endpoints}");
}

/// In an open loop a noisy workspace gets ten times a quiet one's share of the rate.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_open_loop_gives_noisy_workspaces_ten_times_the_share() {
    let app = spawn_app().await;
    let args = [
        "--workspaces",
        "2",
        "--noisy",
        "1",
        "--contacts-per-workspace",
        "1",
        "--rate",
        "1000",
        "--requests",
        "110",
        "--mix",
        "reads=100",
    ];
    let report = run_loadtest(&app, &args).await;
    let n = |path: &str| number(&report, path);
    assert_eq!(n("/open_loop/sent"), 110.0, "{report:#}");
    assert_eq!(n("/workspaces/noisy/requests"), 100.0, "{report:#}");
    assert_eq!(n("/workspaces/quiet/requests"), 10.0, "{report:#}");
}

/// Settings that cannot make a meaningful run are refused before anything runs, with a
/// message that says what to change.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn settings_that_would_measure_nothing_are_refused() {
    let app = spawn_app().await;
    // 200 phases in 400 ms: 2 ms each, not the 200 ms a phase needs.
    let rounds = [
        "--duration",
        "400ms",
        "--phases",
        "health,reads",
        "--rounds",
        "100",
    ];
    let stderr = refusal(&app, &[TINY, &rounds].concat()).await;
    assert!(stderr.contains("gives each of the 200 phases"), "{stderr}");
    assert!(stderr.contains("--duration 40s or more"), "{stderr}");
    // A class named twice in --mix would silently take the last share.
    let twice = ["--duration", "1s", "--mix", "reads=60,writes=40,reads=0"];
    let stderr = refusal(&app, &[TINY, &twice].concat()).await;
    assert!(stderr.contains("`reads` is named twice"), "{stderr}");
}

/// Webhook writes asked for by name are refused when the server refuses the loopback
/// receiver, in an open loop as with --phases; the default mix runs them as plain
/// writes and says so. The text report states sub-second spans as such.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn webhook_writes_asked_for_are_refused_where_the_receiver_is() {
    let app = spawn_app().await;
    let open = [
        "--rate",
        "50",
        "--requests",
        "10",
        "--mix",
        "webhook_writes=100",
    ];
    let stderr = refusal(&app, &[TINY, &open].concat()).await;
    assert!(
        stderr.contains(
            "SWITCHBOARD_WEBHOOK_ALLOW_PRIVATE=true, or leave webhook_writes out of --mix"
        ),
        "{stderr}"
    );

    let out = run_loadtest_output(&app, &[TINY, &["--duration", "500ms"]].concat()).await;
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    assert!(
        text.contains("Webhook writes run as plain writes."),
        "{text}"
    );
    assert!(text.contains("  500ms: health baseline "), "{text}");

    let rounds = [
        "--duration",
        "1s",
        "--phases",
        "health,reads",
        "--rounds",
        "2",
    ];
    let out = run_loadtest_output(&app, &[TINY, &rounds].concat()).await;
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    assert!(
        text.contains("each class alone for 250ms, 2 rounds: health, reads"),
        "{text}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_open_loop_skips_what_is_due_while_the_in_flight_bound_is_reached() {
    let app = spawn_app().await;
    // 10,000/s with one request allowed in flight: a dozen come due in each millisecond
    // the dispatcher wakes, and only one of them may go.
    let args = [
        "--workspaces",
        "1",
        "--contacts-per-workspace",
        "1",
        "--rate",
        "10000",
        "--requests",
        "300",
        "--max-in-flight",
        "1",
        "--mix",
        "reads=100",
    ];
    let report = run_loadtest(&app, &args).await;
    let n = |path: &str| number(&report, path);

    assert_eq!(n("/open_loop/scheduled"), 300.0);
    assert!(n("/open_loop/skipped") > 0.0, "{report:#}");
    assert_eq!(
        n("/open_loop/sent") + n("/open_loop/skipped"),
        300.0,
        "{report:#}"
    );
    assert_eq!(n("/open_loop/peak_in_flight"), 1.0, "{report:#}");
    assert_eq!(n("/classes/reads/requests"), n("/open_loop/sent"));
    assert_eq!(n("/classes/reads/status/ok_200"), n("/open_loop/sent"));
    assert!(report["webhook_deliveries"].is_null(), "{report:#}");
}

/// The figures come from /proc, so they are asserted where it exists.
#[cfg(target_os = "linux")]
#[tokio::test]
async fn the_process_route_answers_cpu_time_and_memory_to_the_operator_only() {
    let app = spawn_app().await;
    let anonymous = app.client.get(format!("{}/admin/process", app.admin));
    assert_eq!(status_of(anonymous).await, 401);

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
        app.post("/tags", json!({ "name": format!("t{i}") }))
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
