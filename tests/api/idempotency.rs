use std::time::Duration;

use chrono::Utc;
use reqwest::Method;
use serde_json::json;
use switchboard_actors::clock::ManualClock;

use crate::helpers::*;

async fn post_with_key(app: &TestApp, token: &str, key: &str, body: serde_json::Value) -> Resp {
    app.call(Method::POST, "/tags")
        .token(token)
        .header("Idempotency-Key", key)
        .json(body)
        .send()
        .await
}

async fn tag_count(app: &TestApp, token: &str) -> usize {
    app.get_as(token, "/tags").await.ok()["data"]
        .as_array()
        .unwrap()
        .len()
}

#[tokio::test]
async fn a_repeated_key_replays_the_first_response_without_running_again() {
    let app = spawn_app().await;
    let first = post_with_key(&app, &app.key, "k-1", json!({"name": "vip"}))
        .await
        .expect(201);
    assert!(first.header("idempotent-replayed").is_none());
    let again = post_with_key(&app, &app.key, "k-1", json!({"name": "vip"}))
        .await
        .expect(201);
    assert_eq!(again.header("idempotent-replayed"), Some("true"));
    assert_eq!(again.body, first.body);
    assert_eq!(tag_count(&app, &app.key).await, 1);
}

#[tokio::test]
async fn the_same_key_with_a_different_body_is_409_idempotency_key_reused() {
    let app = spawn_app().await;
    post_with_key(&app, &app.key, "k-2", json!({"name": "a"}))
        .await
        .expect(201);
    post_with_key(&app, &app.key, "k-2", json!({"name": "b"}))
        .await
        .expect_error(409, "idempotency_key_reused");
    assert_eq!(tag_count(&app, &app.key).await, 1);
}

#[tokio::test]
async fn a_body_naming_a_key_twice_is_refused_with_a_key_too_and_is_not_the_body_without_it() {
    let app = spawn_app().await;
    let twice = r#"{"name": "a", "name": "b"}"#;
    for key in [None, Some("k-twice")] {
        let mut call = app.call(Method::POST, "/tags").token(&app.key).raw(twice);
        if let Some(key) = key {
            call = call.header("Idempotency-Key", key);
        }
        let refused = call.send().await.expect_error(422, "validation_failed");
        assert_eq!(
            refused.body["error"]["details"][0],
            json!({"path": "name", "message": "may be given once"}),
            "{key:?}: {}",
            refused.body
        );
    }
    post_with_key(&app, &app.key, "k-twice", json!({"name": "b"}))
        .await
        .expect_error(409, "idempotency_key_reused");
    assert_eq!(tag_count(&app, &app.key).await, 0);
}

#[tokio::test]
async fn failures_are_stored_and_replayed_too() {
    let app = spawn_app().await;
    post_with_key(&app, &app.key, "k-3", json!({"name": ""}))
        .await
        .expect_error(422, "validation_failed");
    let again = post_with_key(&app, &app.key, "k-3", json!({"name": ""}))
        .await
        .expect_error(422, "validation_failed");
    assert_eq!(again.header("idempotent-replayed"), Some("true"));
}

#[tokio::test]
async fn keys_are_scoped_to_the_credential_and_the_workspace() {
    let app = spawn_app().await;
    let second_key = app.another_key().await;
    post_with_key(&app, &app.key, "shared", json!({"name": "one"}))
        .await
        .expect(201);
    let other_credential = post_with_key(&app, &second_key, "shared", json!({"name": "two"}))
        .await
        .expect(201);
    assert!(other_credential.header("idempotent-replayed").is_none());
    let (_, other_ws_key) = app.new_workspace("Other").await;
    post_with_key(&app, &other_ws_key, "shared", json!({"name": "one"}))
        .await
        .expect(201);
    assert_eq!(tag_count(&app, &app.key).await, 2);
}

#[tokio::test]
async fn concurrent_requests_with_one_key_execute_once() {
    let app = spawn_app().await;
    let calls = (0..20).map(|_| post_with_key(&app, &app.key, "race", json!({"name": "once"})));
    let answers = futures::future::join_all(calls).await;
    let executed = answers
        .iter()
        .filter(|r| r.status == 201 && r.header("idempotent-replayed").is_none())
        .count();
    assert_eq!(executed, 1);
    for r in &answers {
        let replay = r.status == 201 && r.header("idempotent-replayed") == Some("true");
        let running = r.status == 409 && r.code() == "request_in_progress";
        let fresh = r.status == 201 && r.header("idempotent-replayed").is_none();
        assert!(replay || running || fresh, "unexpected answer {r:?}");
    }
    assert_eq!(tag_count(&app, &app.key).await, 1);
}

#[tokio::test]
async fn keys_longer_than_200_characters_are_refused() {
    let app = spawn_app().await;
    post_with_key(&app, &app.key, &"k".repeat(201), json!({"name": "a"}))
        .await
        .expect_error(400, "invalid_request");
    post_with_key(&app, &app.key, &"k".repeat(200), json!({"name": "a"}))
        .await
        .expect(201);
    // Visible characters only: a space inside is refused as well.
    post_with_key(&app, &app.key, "two words", json!({"name": "b"}))
        .await
        .expect_error(400, "invalid_request");
}

#[tokio::test]
async fn stored_responses_survive_a_restart() {
    let app = spawn_app().await;
    let first = post_with_key(&app, &app.key, "durable", json!({"name": "kept"}))
        .await
        .expect(201);
    let app = app.restart().await;
    let again = post_with_key(&app, &app.key, "durable", json!({"name": "kept"}))
        .await
        .expect(201);
    assert_eq!(again.header("idempotent-replayed"), Some("true"));
    assert_eq!(again.body, first.body);
}

#[tokio::test]
async fn a_key_is_forgotten_after_its_ttl() {
    let clock = ManualClock::new(Utc::now());
    let app = spawn_app_with_clock(clock.clone()).await;
    post_with_key(&app, &app.key, "ttl", json!({"name": "first"}))
        .await
        .expect(201);
    clock.advance(Duration::from_secs(24 * 3600 + 1));
    let later = post_with_key(&app, &app.key, "ttl", json!({"name": "second"}))
        .await
        .expect(201);
    assert!(later.header("idempotent-replayed").is_none());
    assert_eq!(tag_count(&app, &app.key).await, 2);
}

#[tokio::test]
async fn only_post_requests_use_the_key() {
    let app = spawn_app().await;
    let tag = app.post("/tags", json!({"name": "a"})).await.expect(201);
    let id = tag.body["id"].as_u64().unwrap();
    for name in ["b", "c"] {
        let r = app
            .call(Method::PATCH, &format!("/tags/{id}"))
            .token(&app.key)
            .header("Idempotency-Key", "patch")
            .json(json!({"name": name}))
            .send()
            .await
            .expect(200);
        assert_eq!(r.body["name"], name);
        assert!(r.header("idempotent-replayed").is_none());
    }
}

#[tokio::test]
async fn a_re_serialised_body_is_the_same_request() {
    let app = spawn_app().await;
    let send = |body: &'static str| {
        app.call(Method::POST, "/products")
            .token(&app.key)
            .header("Idempotency-Key", "p-1")
            .raw(body)
            .send()
    };
    let first = send(r#"{"name": "Lamp", "price": 10.0, "original_price": 12}"#)
        .await
        .created();
    // Keys in another order, other white space, and numbers as JavaScript writes them.
    for same in [
        r#"{"original_price":12,"price":10,"name":"Lamp"}"#,
        r#"{"name":"Lamp","price":1e1,"original_price":12.0}"#,
    ] {
        let again = send(same).await.expect(201);
        assert_eq!(again.header("idempotent-replayed"), Some("true"), "{same}");
        assert_eq!(again.body, first);
    }
    send(r#"{"name": "Lamp", "price": 10.5, "original_price": 12}"#)
        .await
        .expect_error(409, "idempotency_key_reused");
}

#[tokio::test]
async fn an_empty_body_is_the_same_request_as_an_empty_object() {
    let app = crate::webhooks::spawn_webhook_app().await;
    let (_, endpoint) = crate::fixtures::tag_hook(&app).await;
    let send = |body: &'static str| {
        app.call(Method::POST, &format!("/webhooks/{endpoint}/rotate-secret"))
            .token(&app.key)
            .header("Idempotency-Key", "rotate-once")
            .raw(body)
            .send()
    };
    let first = send("").await.expect(200);
    let again = send("{}").await.expect(200);
    assert_eq!(again.header("idempotent-replayed"), Some("true"));
    assert_eq!(again.body, first.body);
}

#[tokio::test]
async fn a_client_that_hangs_up_leaves_its_key_answered_not_stuck() {
    use tokio::io::AsyncWriteExt;
    let app = spawn_app().await;
    let addr = app.api.trim_start_matches("http://").to_string();
    for i in 0..5 {
        let key = format!("hang-up-{i}");
        let body = json!({"name": format!("hung up {i}")});
        let text = body.to_string();
        let mut conn = tokio::net::TcpStream::connect(&addr).await.unwrap();
        let request = format!(
            "POST /api/v1/tags HTTP/1.1\r\nHost: test\r\nAuthorization: Bearer {}\r\n\
             Content-Type: application/json\r\nIdempotency-Key: {key}\r\n\
             Content-Length: {}\r\n\r\n{text}",
            app.key,
            text.len()
        );
        conn.write_all(request.as_bytes()).await.unwrap();
        drop(conn);
        // The repeat gets the first answer (or, if the first was never read, runs now);
        // never request_in_progress for longer than the first takes.
        let mut answer = None;
        for _ in 0..300 {
            let r = post_with_key(&app, &app.key, &key, body.clone()).await;
            if r.status != 409 {
                answer = Some(r);
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        answer.expect("the key was left in progress").expect(201);
    }
    assert_eq!(tag_count(&app, &app.key).await, 5, "each tag made once");
}

#[tokio::test]
async fn a_refusal_for_want_of_permission_is_not_kept_under_the_key() {
    let app = spawn_app().await;
    let user = app.new_user("Pat Member").await;
    app.add_member(&app.workspace_id, &user, "member", &["inbox"])
        .await;
    let token = app.token_for(&user, 3600).await;
    post_with_key(&app, &token, "k-perm", json!({"name": "vip"}))
        .await
        .expect_error(403, "insufficient_permissions");
    let granted = app
        .admin_post(
            &format!("/admin/workspaces/{}/members", app.workspace_id),
            json!({"user_id": user, "role": "member", "permissions": ["inbox", "contacts"]}),
        )
        .await;
    assert!(matches!(granted.status, 200 | 201), "{}", granted.status);
    let again = post_with_key(&app, &token, "k-perm", json!({"name": "vip"}))
        .await
        .expect(201);
    assert!(again.header("idempotent-replayed").is_none(), "run afresh");
    let replay = post_with_key(&app, &token, "k-perm", json!({"name": "vip"}))
        .await
        .expect(201);
    assert_eq!(replay.header("idempotent-replayed"), Some("true"));
    assert_eq!(tag_count(&app, &app.key).await, 1);
}

/// A replay checks again the rights the first answer needed: a member who has lost one
/// since is refused as a first request would be, and replayed to once it is back.
#[tokio::test]
async fn a_replay_to_a_caller_who_lost_the_right_is_refused() {
    let app = spawn_app().await;
    let user = app.new_user("Ada Admin").await;
    let set_role = |role: &'static str, permissions: serde_json::Value| {
        let app = &app;
        let user = user.clone();
        async move {
            let r = app
                .admin_post(
                    &format!("/admin/workspaces/{}/members", app.workspace_id),
                    json!({"user_id": user, "role": role, "permissions": permissions}),
                )
                .await;
            assert!(matches!(r.status, 200 | 201), "{}", r.status);
        }
    };
    set_role("admin", json!([])).await;
    let token = app.token_for(&user, 3600).await;
    let field = |key: &str| {
        app.call(Method::POST, "/custom-fields")
            .token(&token)
            .header("Idempotency-Key", key)
            .json(json!({"label": "Shoe size"}))
    };
    // Custom fields are for owners and admins; tags need the contacts permission.
    let first = field("k-field").send().await.expect(201);
    post_with_key(&app, &token, "k-tag", json!({"name": "vip"}))
        .await
        .expect(201);

    set_role("member", json!(["contacts"])).await;
    field("k-field")
        .send()
        .await
        .expect_error(403, "insufficient_permissions");
    let tag = post_with_key(&app, &token, "k-tag", json!({"name": "vip"}))
        .await
        .expect(201);
    assert_eq!(
        tag.header("idempotent-replayed"),
        Some("true"),
        "still allowed"
    );

    set_role("member", json!([])).await;
    post_with_key(&app, &token, "k-tag", json!({"name": "vip"}))
        .await
        .expect_error(403, "insufficient_permissions");

    set_role("admin", json!([])).await;
    let again = field("k-field").send().await.expect(201);
    assert_eq!(again.header("idempotent-replayed"), Some("true"));
    assert_eq!(again.body, first.body);
}
