use serde_json::json;

use crate::helpers::*;

#[tokio::test]
async fn a_workspace_over_budget_gets_429_and_its_neighbour_does_not() {
    let app = spawn_app_with(|s| s.rate_limit_per_minute = 5).await;
    let (_, other_key) = app.new_workspace("Neighbour").await;
    for expected_remaining in (0..5).rev() {
        let r = app.get("/tags").await.expect(200);
        assert_eq!(r.header("ratelimit-limit"), Some("5"));
        assert_eq!(
            r.header("ratelimit-remaining"),
            Some(expected_remaining.to_string().as_str())
        );
        let reset: u64 = r.header("ratelimit-reset").unwrap().parse().unwrap();
        assert!(reset <= 60);
    }
    let refused = app.get("/tags").await.expect_error(429, "rate_limited");
    let retry: u64 = refused.header("retry-after").unwrap().parse().unwrap();
    assert!((1..=12).contains(&retry), "retry-after {retry}");
    assert_eq!(refused.header("ratelimit-remaining"), Some("0"));

    let neighbour = app.get_as(&other_key, "/tags").await.expect(200);
    assert_eq!(neighbour.header("ratelimit-remaining"), Some("4"));
}

#[tokio::test]
async fn every_credential_of_a_workspace_shares_one_budget() {
    let app = spawn_app_with(|s| s.rate_limit_per_minute = 3).await;
    let second_key = app.another_key().await;
    let token = app.member_token("member", &["contacts"]).await;
    app.get("/tags").await.expect(200);
    app.get_as(&second_key, "/tags").await.expect(200);
    app.get_as(&token, "/tags").await.expect(200);
    app.get_as(&second_key, "/tags")
        .await
        .expect_error(429, "rate_limited");
    app.post_as(&token, "/tags", json!({"name": "x"}))
        .await
        .expect_error(429, "rate_limited");
}

#[tokio::test]
async fn a_zero_budget_turns_the_limit_off() {
    let app = spawn_app().await;
    for _ in 0..200 {
        let r = app.get("/tags").await.expect(200);
        assert!(r.header("ratelimit-limit").is_none());
    }
}

#[tokio::test]
async fn health_is_not_counted() {
    let app = spawn_app_with(|s| s.rate_limit_per_minute = 2).await;
    for _ in 0..10 {
        assert_eq!(app.health().await, 200);
    }
    app.get("/tags").await.expect(200);
}
