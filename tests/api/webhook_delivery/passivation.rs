use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use super::*;

// ----- 17. Idle delivery actors stop, and start again when there is work -----

/// Endpoint delivery actors listed by the operator API.
async fn endpoint_actors(app: &TestApp) -> Vec<String> {
    app.admin_call(Method::GET, "/admin/actors")
        .send()
        .await
        .ok()["data"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|a| a["kind"] == "endpoint_delivery")
        .map(|a| a["key"].as_str().unwrap_or_default().to_string())
        .collect()
}

/// `switchboard_actors_live{kind="endpoint_delivery"}` as /metrics reports it.
async fn live_in_metrics(app: &TestApp) -> Option<f64> {
    endpoint_actor_figure(&app.metrics().await, "switchboard_actors_live")
}

/// `name{kind="endpoint_delivery"}` in a scrape.
fn endpoint_actor_figure(scrape: &str, name: &str) -> Option<f64> {
    scrape
        .lines()
        .find(|l| l.starts_with(&format!("{name}{{")) && l.contains("kind=\"endpoint_delivery\""))
        .and_then(|l| l.rsplit(' ').next())
        .and_then(|v| v.parse().ok())
}

/// Waits until no endpoint delivery actor is alive, as both operator views tell it.
async fn passivated(app: &TestApp) {
    eventually("the endpoint actor stops", async || {
        endpoint_actors(app).await.is_empty()
    })
    .await;
    eventually("/metrics counts no endpoint actor", async || {
        live_in_metrics(app).await == Some(0.0)
    })
    .await;
}

fn idle_soon(s: &mut Settings) {
    s.actor_idle = Duration::from_millis(100);
}

#[tokio::test]
async fn an_idle_endpoint_actor_stops_and_the_next_event_starts_it_again_and_is_delivered() {
    let app = spawn_webhook_app_with(idle_soon).await;
    let (rx, id) = tag_hook(&app).await;
    new_tag(&app, &app.key, "first").await;
    rx.wait_for(1).await;
    eventually("the endpoint actor is listed", async || {
        endpoint_actors(&app).await == vec![id.clone()]
    })
    .await;
    passivated(&app).await;

    new_tag(&app, &app.key, "second").await;
    let got = rx.wait_for(2).await;
    assert_eq!(got[1].json()["data"]["name"], "second");
    assert_eq!(got[1].attempt(), 1);
    let d = deliveries_when(&app, &id, "both delivered", |d| {
        d.len() == 2 && d.iter().all(|x| x["status"] == "delivered")
    })
    .await;
    assert!(d.iter().all(|x| x["attempt_count"] == 1));
    rx.stays_at(2, Duration::from_millis(300)).await;
}

#[tokio::test]
async fn the_delivery_log_and_redelivery_answer_after_the_actor_stopped() {
    let app = spawn_webhook_app_with(idle_soon).await;
    let (rx, id) = tag_hook(&app).await;
    new_tag(&app, &app.key, "logged").await;
    rx.wait_for(1).await;
    passivated(&app).await;

    let d = deliveries_when(&app, &id, "delivered", |d| d[0]["status"] == "delivered").await;
    let again = app
        .post(
            &format!("/webhooks/{id}/deliveries/{}/redeliver", d[0]["id"]),
            json!({}),
        )
        .await
        .expect(202);
    assert_eq!(again.body["status"], "pending");
    let got = rx.wait_for(2).await;
    assert_eq!(got[1].event_id(), got[0].event_id());
}

#[tokio::test]
async fn a_retry_due_hours_after_the_actor_stopped_goes_out_on_time_also_after_a_restart() {
    let clock = ManualClock::new(chrono::Utc::now());
    let settings = |s: &mut Settings| {
        s.webhooks.retry_delays = vec![6 * HOUR; 6];
        s.actor_idle = Duration::from_millis(100);
    };
    let app = spawn_clocked_webhook_app(clock.clone(), settings).await;
    let (rx, id) = tag_hook_answering(&app, 500).await;
    new_tag(&app, &app.key, "later").await;
    let first = rx.wait_for(1).await[0].event_id().to_string();
    deliveries_when(&app, &id, "attempt 1", |d| d[0]["attempt_count"] == 1).await;
    passivated(&app).await;
    rx.respond_with(200);

    clock.advance(HOUR);
    let app = restart_webhook_app(app, settings).await;
    passivated(&app).await;
    clock.advance(5 * HOUR - MINUTE);
    rx.stays_at(1, Duration::from_millis(600)).await;
    assert!(
        endpoint_actors(&app).await.is_empty(),
        "nothing woke it early"
    );

    clock.advance(MINUTE);
    let got = rx.wait_for(2).await;
    assert_eq!(got[1].event_id(), first);
    assert_eq!(got[1].attempt(), 2);
    let d = deliveries_when(&app, &id, "delivered", |d| d[0]["status"] == "delivered").await;
    assert_eq!(d[0]["attempt_count"], 2);
    rx.stays_at(2, Duration::from_millis(300)).await;
}

#[tokio::test]
async fn a_paused_endpoint_whose_actor_stopped_sends_what_waits_once_it_is_active_again() {
    let app = spawn_webhook_app_with(idle_soon).await;
    let (rx, id) = tag_hook(&app).await;
    new_tag(&app, &app.key, "before").await;
    rx.wait_for(1).await;
    app.patch(&format!("/webhooks/{id}"), json!({"status": "paused"}))
        .await
        .expect(200);
    // Queued while active, then the endpoint pauses before it goes out: the redelivery
    // waits in the index while the actor stops.
    let d = deliveries(&app, &id).await;
    app.post(
        &format!("/webhooks/{id}/deliveries/{}/redeliver", d[0]["id"]),
        json!({}),
    )
    .await
    .expect(202);
    passivated(&app).await;
    rx.stays_at(1, Duration::from_millis(200)).await;

    app.patch(&format!("/webhooks/{id}"), json!({"status": "active"}))
        .await
        .expect(200);
    let got = rx.wait_for(2).await;
    assert_eq!(got[1].event_id(), got[0].event_id());
}

#[tokio::test]
async fn deleting_an_endpoint_whose_actor_stopped_deletes_its_waiting_deliveries() {
    for answer in [500, 410] {
        let mut app = spawn_webhook_app_with(|s| {
            idle_soon(s);
            s.webhooks.retry_delays = vec![HOUR; 6];
            s.webhooks.max_in_flight = 1;
            s.webhooks.fast_max_in_flight = 1;
        })
        .await;
        let (rx, id) = tag_hook(&app).await;
        // The first answer comes once three more wait behind it: a retry on the ladder
        // (500) or deliveries held by the disabled endpoint (410).
        rx.answer_after_with(Duration::from_millis(500), answer);
        for n in 0..4 {
            new_tag(&app, &app.key, &format!("waiting-{n}")).await;
        }
        rx.respond_with(answer);
        deliveries_when(&app, &id, "the first attempted", |d| {
            d.len() == 4 && d.iter().any(|x| x["attempt_count"] == 1)
        })
        .await;
        passivated(&app).await;
        app.delete(&format!("/webhooks/{id}")).await.expect(200);
        app.stop().await;
        // A pending delivery naming no endpoint is damage to the check.
        crate::store_safety::assert_store_checks_once_released(app.dir.path()).await;
    }
}

#[tokio::test]
async fn a_retry_due_after_the_actor_stopped_is_sent_on_time_after_kill_9() {
    let dir = tempfile::tempdir().unwrap();
    let env = [
        ("SWITCHBOARD_WEBHOOK_ALLOW_PRIVATE", "true"),
        ("SWITCHBOARD_WEBHOOK_TICK", "20ms"),
        ("SWITCHBOARD_WEBHOOK_RETRY_DELAYS", "3s,3s,3s,3s,3s,3s"),
        ("SWITCHBOARD_ACTOR_IDLE", "100ms"),
    ];
    let mut server = launch(dir.path(), &env, &[]).await;
    let key = server.key.clone().unwrap();
    let rx = TestReceiver::start().await;
    rx.respond_with(500);
    let id = server.new_webhook(&key, &rx.url, &["tag.*"]).await;
    let r = server
        .send(Method::POST, &key, "/tags", json!({"name": "kept"}))
        .await;
    assert_eq!(r.status(), 201);
    let first = rx.wait_for(1).await[0].event_id().to_string();
    let log_path = format!("/webhooks/{id}/deliveries");
    let mut due = None;
    for _ in 0..250 {
        let log = server.get_json(&key, &log_path).await;
        if log["data"][0]["attempt_count"] == 1 {
            due = Some(utc(&log["data"][0]["next_attempt_at"]));
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let due = due.expect("the first attempt is logged with its retry time");
    let admin = reqwest::Client::builder().no_proxy().build().unwrap();
    let mut stopped = false;
    for _ in 0..250 {
        let actors_url = format!("{}/admin/actors", server.admin);
        let actors = body_json(admin.get(actors_url).bearer_auth(ADMIN_TOKEN)).await;
        if !actors["data"]
            .as_array()
            .unwrap()
            .iter()
            .any(|a| a["kind"] == "endpoint_delivery")
        {
            stopped = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(stopped, "the endpoint actor stopped before the kill");

    server.kill_9().await;
    crate::store_safety::assert_store_checks(dir.path());
    rx.respond_with(200);

    let server = launch(dir.path(), &env, &[]).await;
    let got = rx
        .wait_until("the retry after kill -9", |all| all.len() >= 2)
        .await;
    let arrived = chrono::Utc::now();
    assert_eq!(got[1].event_id(), first);
    assert_eq!(got[1].attempt(), 2);
    assert!(arrived >= due, "sent before it was due ({due})");
    let mut delivered = false;
    for _ in 0..250 {
        let log = server.get_json(&key, &log_path).await;
        if log["data"][0]["status"] == "delivered" {
            assert_eq!(log["data"][0]["attempt_count"], 2, "{log}");
            delivered = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(delivered, "the log shows the delivery");
    rx.stays_at(2, Duration::from_millis(300)).await;
}

#[tokio::test]
async fn a_receiver_that_answers_fast_gets_more_attempts_at_once_and_each_delivery_once() {
    let app = spawn_webhook_app_with(|s| {
        s.webhooks.max_in_flight = 2;
        s.webhooks.fast_max_in_flight = 6;
        s.webhooks.fast_answer = Duration::from_secs(2);
    })
    .await;
    let (url, most, done) = counting_receiver(Duration::from_millis(100)).await;
    let (id, _) = hook(&app, &url, &["tag.*"]).await;
    for i in 0..40 {
        new_tag(&app, &app.key, &format!("burst {i}")).await;
    }
    eventually("every delivery arrives", async || {
        done.load(Ordering::SeqCst) >= 40
    })
    .await;
    let d = deliveries_when(&app, &id, "all delivered", |d| {
        d.len() == 40 && d.iter().all(|x| x["status"] == "delivered")
    })
    .await;
    assert!(d.iter().all(|x| x["attempt_count"] == 1));
    let most = most.load(Ordering::SeqCst);
    assert!(most > 2, "the window widened: at most {most} at once");
    assert!(most <= 6, "never more than fast_max_in_flight: {most}");
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(done.load(Ordering::SeqCst), 40, "each delivery once");
}

/// A receiver that holds each request a little and remembers the most it held at once.
async fn counting_receiver(hold: Duration) -> (String, Arc<AtomicUsize>, Arc<AtomicUsize>) {
    let now = Arc::new(AtomicUsize::new(0));
    let most = Arc::new(AtomicUsize::new(0));
    let done = Arc::new(AtomicUsize::new(0));
    let state = (now, most.clone(), done.clone());
    let app = axum::Router::new()
        .fallback(
            move |axum::extract::State((now, most, done)): axum::extract::State<(
                Arc<AtomicUsize>,
                Arc<AtomicUsize>,
                Arc<AtomicUsize>,
            )>| async move {
                let held = now.fetch_add(1, Ordering::SeqCst) + 1;
                most.fetch_max(held, Ordering::SeqCst);
                tokio::time::sleep(hold).await;
                now.fetch_sub(1, Ordering::SeqCst);
                done.fetch_add(1, Ordering::SeqCst);
                "ok"
            },
        )
        .with_state(state);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    (format!("http://{addr}/hook"), most, done)
}

/// Spawns and passivations are counted per kind of actor (the counters are the process's,
/// so this runs the service in a process of its own).
#[tokio::test]
async fn the_endpoint_actors_spawns_and_passivations_are_counted_in_metrics() {
    let dir = tempfile::tempdir().unwrap();
    let server = launch(
        dir.path(),
        &[
            ("SWITCHBOARD_ACTOR_IDLE", "100ms"),
            ("SWITCHBOARD_WEBHOOK_ALLOW_PRIVATE", "true"),
            ("SWITCHBOARD_WEBHOOK_TICK", "20ms"),
        ],
        &[],
    )
    .await;
    let key = server.key.clone().expect("bootstrap key");
    let rx = TestReceiver::start().await;
    let hook = server
        .send(
            reqwest::Method::POST,
            &key,
            "/webhooks",
            json!({"url": rx.url, "events": ["tag.*"]}),
        )
        .await;
    assert_eq!(hook.status(), 201);
    let figures = async || {
        let scrape = reqwest::Client::new()
            .get(format!("{}/metrics", server.admin))
            .bearer_auth(ADMIN_TOKEN)
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        let figure = |name| endpoint_actor_figure(&scrape, name).unwrap_or(-1.0);
        (
            figure("switchboard_actors_live"),
            figure("switchboard_actor_spawns_total"),
            figure("switchboard_actor_passivations_total"),
            figure("switchboard_actor_restarts_total"),
        )
    };
    let mut spawned = 0.0;
    for (n, name) in ["first", "second"].into_iter().enumerate() {
        let tag = server
            .send(reqwest::Method::POST, &key, "/tags", json!({"name": name}))
            .await;
        assert_eq!(tag.status(), 201);
        rx.wait_for(n + 1).await;
        eventually("the endpoint actor stops", async || {
            figures().await.0 == 0.0
        })
        .await;
        let (_, spawns, passivations, restarts) = figures().await;
        assert!(spawns > spawned, "{name}: {spawns} spawns after {spawned}");
        assert_eq!(passivations, spawns, "{name}: each stopped idle");
        assert_eq!(restarts, 0.0);
        spawned = spawns;
    }
}
