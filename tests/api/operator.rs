//! What operators watch: /metrics, /admin/actors, per-workspace stats, request ids.

use reqwest::Method;
use serde_json::json;

use crate::helpers::*;

/// The value of the first sample line of `metric` whose labels contain every `label`.
fn sample(text: &str, metric: &str, labels: &[&str]) -> Option<f64> {
    text.lines()
        .filter(|l| !l.starts_with('#'))
        .filter(|l| l.starts_with(metric) && l[metric.len()..].starts_with(['{', ' ']))
        .find(|l| labels.iter().all(|want| l.contains(want)))
        .and_then(|l| l.rsplit(' ').next())
        .and_then(|v| v.parse().ok())
}

#[tokio::test]
async fn metrics_need_the_admin_token() {
    let app = spawn_app().await;
    let r = app.client.get(format!("{}/metrics", app.admin));
    assert_eq!(status_of(r).await, 401);
    let r = app
        .client
        .get(format!("{}/metrics", app.admin))
        .bearer_auth(&app.key);
    assert_eq!(status_of(r).await, 401);
}

/// Requests with invented methods share one `other` series: a client cannot add series.
#[tokio::test]
async fn invented_methods_add_no_metric_series() {
    let app = spawn_app().await;
    for n in 0..5 {
        let method = Method::from_bytes(format!("INVENTED{n}").as_bytes()).unwrap();
        let r = app.client.request(method, format!("{}/anything", app.api));
        assert_eq!(status_of(r).await, 404);
    }
    let scrape = app.metrics().await;
    assert!(
        !scrape.contains("INVENTED"),
        "no series per invented method"
    );
    let others = sample(
        &scrape,
        "switchboard_http_requests_total",
        &["method=\"other\"", "route=\"unmatched\""],
    );
    assert_eq!(others, Some(5.0));
}

#[tokio::test]
async fn metrics_move_when_traffic_flows() {
    let app = spawn_app_with(|s| s.rate_limit_per_minute = 3).await;
    let before = app.metrics().await;
    let route = "route=\"/api/v1/tags\"";
    let count = |t: &str| {
        sample(
            t,
            "switchboard_http_requests_total",
            &[route, "status=\"201\""],
        )
        .unwrap_or(0.0)
    };
    for i in 0..3 {
        app.post("/tags", json!({"name": format!("t{i}")}))
            .await
            .expect(201);
    }
    app.get("/tags").await.expect_error(429, "rate_limited");
    let after = app.metrics().await;
    assert!(
        count(&after) >= count(&before) + 3.0,
        "requests by route template and status"
    );
    assert!(
        after.contains("switchboard_http_request_seconds_bucket"),
        "latency histogram"
    );
    assert!(sample(&after, "switchboard_rate_limited_total", &[]).unwrap_or(0.0) >= 1.0);
    assert!(
        sample(&after, "switchboard_actors_live", &["kind=\"workspace\""]).unwrap_or(0.0) >= 1.0
    );
    assert!(
        sample(
            &after,
            "switchboard_actor_messages_total",
            &["kind=\"workspace\"", "message=\"tag.create\""]
        )
        .unwrap_or(0.0)
            >= 3.0
    );
    assert!(after.contains("switchboard_actor_handle_seconds_bucket"));
    assert!(after.contains("switchboard_actor_mailbox_depth"));
    assert!(sample(&after, "switchboard_store_flushes_total", &[]).unwrap_or(0.0) >= 1.0);
    assert!(after.contains("switchboard_store_writes_per_flush_bucket"));
    assert!(after.contains("switchboard_store_flush_seconds_bucket"));
    assert!(sample(&after, "switchboard_store_size_bytes", &[]).unwrap_or(0.0) > 0.0);
    assert!(after.contains("switchboard_webhook_pending_deliveries"));
    assert!(
        !after.contains(&app.workspace_id),
        "no per-workspace labels"
    );
}

#[tokio::test]
async fn idempotent_replays_and_conflicts_are_counted() {
    let app = spawn_app().await;
    let replays = |t: &str| {
        sample(t, "switchboard_idempotency_total", &["result=\"replayed\""]).unwrap_or(0.0)
    };
    let reused = |t: &str| {
        sample(
            t,
            "switchboard_idempotency_total",
            &["result=\"key_reused\""],
        )
        .unwrap_or(0.0)
    };
    let before = app.metrics().await;
    for body in [
        json!({"name": "a"}),
        json!({"name": "a"}),
        json!({"name": "b"}),
    ] {
        app.call(Method::POST, "/tags")
            .token(&app.key)
            .header("Idempotency-Key", "metric-key")
            .json(body)
            .send()
            .await;
    }
    let after = app.metrics().await;
    assert!(replays(&after) >= replays(&before) + 1.0);
    assert!(reused(&after) >= reused(&before) + 1.0);
}

#[tokio::test]
async fn live_actors_are_listed_a_page_at_a_time_most_recently_active_first() {
    let app = spawn_app().await;
    let mut workspaces = vec![app.workspace_id.as_str().to_string()];
    for name in ["B", "C"] {
        workspaces.push(app.new_workspace(name).await.0);
    }
    // Each workspace's actor works once, a little apart, oldest first.
    for (n, ws) in workspaces.iter().enumerate() {
        let path = format!("/admin/workspaces/{ws}/stats");
        app.admin_call(Method::GET, &path).send().await.expect(200);
        if n + 1 < workspaces.len() {
            tokio::time::sleep(std::time::Duration::from_millis(5)).await;
        }
    }
    let list = |query: String| {
        let req = app.admin_call(Method::GET, &format!("/admin/actors{query}"));
        async move { req.send().await }
    };
    let first = list("?limit=1".into()).await.ok();
    assert_eq!(first["data"].as_array().unwrap().len(), 1);
    assert_eq!(first["data"][0]["key"], workspaces[2].as_str(), "{first}");
    assert_eq!(first["has_more"], true);
    let cursor = first["next_cursor"].as_str().unwrap();
    let rest = list(format!("?limit=100&starting_after={cursor}"))
        .await
        .ok();
    let keys: Vec<&str> = rest["data"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|a| a["kind"] == "workspace")
        .map(|a| a["key"].as_str().unwrap())
        .collect();
    assert_eq!(keys, [workspaces[1].as_str(), workspaces[0].as_str()]);
    assert_eq!(rest["has_more"], false);
    assert_eq!(list("?limit=0".into()).await.status, 422);
    assert_eq!(list("?starting_after=x".into()).await.status, 400);
}

#[tokio::test]
async fn live_actors_are_listed_with_depth_handled_count_and_last_activity() {
    let app = spawn_app().await;
    app.post("/tags", json!({"name": "x"})).await.expect(201);
    app.get("/tags").await.expect(200);
    let r = app
        .admin_call(Method::GET, "/admin/actors")
        .send()
        .await
        .expect(200);
    assert_eq!(r.body["object"], "list");
    let ours = r.body["data"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["key"] == app.workspace_id.as_str())
        .cloned()
        .expect("the workspace actor is listed");
    assert_eq!(ours["kind"], "workspace");
    assert_eq!(ours["mailbox_depth"], 0);
    assert!(ours["messages_handled"].as_u64().unwrap() >= 2);
    assert!(ours["last_active"].as_str().unwrap().ends_with('Z'));
}

#[tokio::test]
async fn workspace_stats_count_records_and_last_minute_traffic() {
    let app = spawn_app_with(|s| s.rate_limit_per_minute = 4).await;
    app.post("/contacts", json!({"first_name": "Ann"}))
        .await
        .expect(201);
    app.post("/products", json!({"name": "Tea"}))
        .await
        .expect(201);
    app.get("/tags").await.expect(200);
    app.get("/tags").await.expect(200);
    app.get("/tags").await.expect_error(429, "rate_limited");
    let path = format!("/admin/workspaces/{}/stats", app.workspace_id);
    let r = app.admin_call(Method::GET, &path).send().await.expect(200);
    assert_eq!(r.body["object"], "workspace_stats");
    assert_eq!(r.body["contacts"], 1);
    assert_eq!(r.body["products"], 1);
    assert_eq!(r.body["orders"], 0);
    assert_eq!(r.body["webhook_endpoints"], 0);
    assert_eq!(r.body["pending_deliveries"], 0);
    assert_eq!(r.body["requests_last_minute"], 5);
    assert_eq!(r.body["rate_limited_last_minute"], 1);
    app.admin_call(Method::GET, "/admin/workspaces/ws_nope/stats")
        .send()
        .await
        .expect_error(404, "not_found");
}

#[tokio::test]
async fn every_response_carries_a_request_id_and_a_given_one_is_kept() {
    let app = spawn_app().await;
    let r = app.get("/tags").await.expect(200);
    assert!(r.header("x-request-id").unwrap().starts_with("req_"));
    let r = app
        .call(Method::GET, "/tags")
        .token(&app.key)
        .header("X-Request-Id", "trace-abc-123")
        .send()
        .await
        .expect(200);
    assert_eq!(r.header("x-request-id"), Some("trace-abc-123"));
    let r = app.get("/nope").await.expect(404);
    assert!(r.header("x-request-id").is_some());
}

#[tokio::test]
async fn a_request_id_too_long_or_with_spaces_is_replaced_by_a_fresh_one() {
    let app = spawn_app().await;
    for given in ["x".repeat(129), "two words".to_string()] {
        let r = app
            .call(Method::GET, "/tags")
            .token(&app.key)
            .header("X-Request-Id", &given)
            .send()
            .await
            .expect(200);
        let id = r.header("x-request-id").unwrap();
        assert!(id.starts_with("req_"), "{given:?} was answered as {id:?}");
    }
}

/// The mailbox depth never goes below zero: deleting an endpoint whose delivery actor is
/// running (it is told to stop after its figures left the books) takes nothing more off.
#[tokio::test]
async fn deleting_endpoints_leaves_the_mailbox_depth_at_zero_or_more() {
    let app = crate::webhooks::spawn_webhook_app().await;
    let rx = crate::receiver::TestReceiver::start().await;
    for n in 0..3 {
        let (endpoint, _) = crate::webhooks::hook(&app, &rx.url, &["tag.created"]).await;
        app.post("/tags", json!({"name": format!("t{n}")}))
            .await
            .expect(201);
        rx.wait_for(n + 1).await;
        app.delete(&format!("/webhooks/{endpoint}")).await.ok();
    }
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    let depth = sample(
        &app.metrics().await,
        "switchboard_actor_mailbox_depth",
        &["kind=\"endpoint_delivery\""],
    )
    .unwrap_or(0.0);
    assert!(depth >= 0.0, "mailbox depth {depth}");
}
