use crate::helpers::*;
use reqwest::Method;
use serde_json::json;

#[tokio::test]
async fn health_answers_without_authentication() {
    let app = spawn_app().await;
    assert_eq!(app.health().await, 200);
}

#[tokio::test]
async fn a_fresh_data_folder_gets_a_default_workspace_and_a_working_key() {
    let app = spawn_app().await;
    assert!(app.workspace_id.starts_with("ws_"));
    assert!(app.key.starts_with("ai_"));
    let me = app.get("/me").await.expect(200);
    assert_eq!(me.body["workspaces"][0]["id"], app.workspace_id.as_str());
    assert_eq!(me.body["workspaces"][0]["name"], "Default");
    let _ = app
        .call(Method::POST, "/tags")
        .token(&app.key)
        .json(json!({"name": "x"}))
        .send()
        .await
        .expect(201);
}

#[tokio::test]
async fn malformed_json_is_400_invalid_request() {
    let app = spawn_app().await;
    let r = app
        .call(Method::POST, "/tags")
        .token(&app.key)
        .raw("{\"name\": ")
        .send()
        .await
        .expect_error(400, "invalid_request");
    assert!(r.body["error"]["message"]
        .as_str()
        .unwrap()
        .contains("JSON"));
}

#[tokio::test]
async fn a_body_that_is_not_an_object_is_422() {
    let app = spawn_app().await;
    app.call(Method::POST, "/tags")
        .token(&app.key)
        .raw("[1, 2]")
        .send()
        .await
        .expect_error(422, "validation_failed");
}

#[tokio::test]
async fn a_non_json_content_type_is_400() {
    let app = spawn_app().await;
    bad_request(
        app.call(Method::POST, "/tags")
            .token(&app.key)
            .header("content-type", "text/plain")
            .send()
            .await,
    );
    // Media types are case-insensitive.
    app.call(Method::POST, "/tags")
        .token(&app.key)
        .header("content-type", "Application/JSON; charset=UTF-8")
        .raw(r#"{"name": "vip"}"#)
        .send()
        .await
        .expect(201);
}

#[tokio::test]
async fn unknown_fields_and_wrong_types_are_422_with_the_field_path() {
    let app = spawn_app().await;
    let r = app
        .post("/tags", json!({"name": "a", "colour": "chart-1"}))
        .await
        .expect_error(422, "validation_failed");
    assert_eq!(r.paths(), ["colour"]);
    let r = app
        .post("/tags", json!({"name": 7}))
        .await
        .expect_error(422, "validation_failed");
    assert_eq!(r.paths(), ["name"]);
    let r = app
        .post("/custom-fields", json!({"label": "x", "options": [1]}))
        .await
        .expect_error(422, "validation_failed");
    assert_eq!(r.paths(), ["options[0]"]);
}

#[tokio::test]
async fn actions_without_fields_take_an_empty_body_and_refuse_others() {
    let app = spawn_app().await;
    let actions = [
        "/conversations/1/reopen",
        "/conversations/1/ai/resume",
        "/handovers/1/resolve",
        "/reminders/1/close",
        "/campaigns/1/cancel",
        "/channels/1/rotate-secret",
        "/webhooks/we_doesnotexist0000000000/rotate-secret",
        "/webhooks/we_doesnotexist0000000000/deliveries/1/redeliver",
    ];
    for path in actions {
        let r = app
            .post(path, json!({"foo": 1}))
            .await
            .expect_error(422, "validation_failed");
        assert_eq!(r.paths(), ["foo"], "{path}");
        let malformed = app.call(Method::POST, path).token(&app.key).raw("{oops");
        malformed.send().await.expect_error(400, "invalid_request");
        let nothing = app.call(Method::POST, path).token(&app.key).send().await;
        assert_eq!(
            nothing.status, 404,
            "{path}: an empty body reaches the action"
        );
        assert_eq!(app.post(path, json!({})).await.status, 404, "{path}");
    }
}

#[tokio::test]
async fn an_invalid_path_id_is_400() {
    let app = spawn_app().await;
    for id in ["abc", "-1", "0", "1.5"] {
        bad_request(app.delete(&format!("/tags/{id}")).await);
    }
}

#[tokio::test]
async fn unknown_routes_are_404_and_wrong_methods_405_in_the_error_envelope() {
    let app = spawn_app().await;
    not_found(app.get("/no-such-thing").await);
    let r = app.client.get(format!("{}/nowhere", app.api));
    assert_eq!(status_of(r).await, 404);
    let r = app
        .call(Method::PUT, "/tags")
        .token(&app.key)
        .json(json!({}))
        .send()
        .await
        .expect_error(405, "method_not_allowed");
    assert!(r.header("allow").is_some());
}

#[tokio::test]
async fn errors_carry_code_and_message_and_details_only_for_validation() {
    let app = spawn_app().await;
    let r = app.get_as("ai_nope", "/tags").await.expect(401);
    assert!(r.body["error"]["message"]
        .as_str()
        .is_some_and(|m| !m.is_empty()));
    assert!(r.body["error"].get("details").is_none());
    assert_eq!(r.header("content-type"), Some("application/json"));
    let r = app.post("/tags", json!({})).await.expect(422);
    assert_eq!(r.body["error"]["details"][0]["path"], "name");
    assert!(r.body["error"]["details"][0]["message"].is_string());
}

#[tokio::test]
async fn timestamps_are_utc_with_milliseconds() {
    let app = spawn_app().await;
    let tag = app.post("/tags", json!({"name": "t"})).await.expect(201);
    let created = tag.body["created_at"].as_str().unwrap();
    assert_eq!(created.len(), "2026-01-02T03:04:05.678Z".len(), "{created}");
    assert!(created.ends_with('Z'));
}

#[tokio::test]
async fn the_openapi_document_is_served_and_lists_every_route() {
    let app = spawn_app().await;
    let doc = app.openapi().await;
    assert_eq!(doc["openapi"], "3.1.0");
    let paths = doc["paths"].as_object().unwrap();
    for (path, method) in [
        ("/me", "get"),
        ("/events", "get"),
        ("/tags", "get"),
        ("/tags", "post"),
        ("/tags/{id}", "patch"),
        ("/tags/{id}", "delete"),
        ("/custom-fields", "get"),
        ("/custom-fields", "post"),
        ("/custom-fields/{id}", "get"),
        ("/closing-notes", "get"),
        ("/closing-notes", "post"),
        ("/funnels", "get"),
        ("/contacts", "get"),
        ("/contacts", "post"),
        ("/contacts/lookup", "get"),
        ("/contacts/upsert", "post"),
        ("/contacts/merge", "post"),
        ("/contacts/{id}", "patch"),
        ("/contacts/{id}/tags", "delete"),
        ("/contacts/{id}/stage", "put"),
        ("/contacts/{id}/notes", "post"),
        ("/contacts/{id}/dnc", "put"),
        ("/orders", "post"),
        ("/orders/{id}/items/{item_id}", "patch"),
        ("/orders/{id}/timeline", "post"),
        ("/products/{id}", "delete"),
        ("/webhooks", "post"),
        ("/webhooks/{id}/rotate-secret", "post"),
        ("/webhooks/{id}/test", "post"),
        ("/webhooks/{id}/deliveries/{delivery_id}/redeliver", "post"),
    ] {
        assert!(
            paths.get(path).and_then(|p| p.get(method)).is_some(),
            "{method} {path}"
        );
    }
    let tag_post = &paths["/tags"]["post"];
    assert!(tag_post["responses"].get("201").is_some());
    assert!(tag_post["responses"].get("409").is_some());
    assert!(doc["components"]["schemas"].get("NewTagInput").is_some());
}

#[tokio::test]
async fn list_parameters_in_the_document_carry_their_types_and_bounds() {
    let app = spawn_app().await;
    let doc: serde_json::Value = app.openapi().await;
    let params = doc["paths"]["/contacts"]["get"]["parameters"]
        .as_array()
        .unwrap()
        .clone();
    let param = |name: &str| {
        params
            .iter()
            .find(|p| p["name"] == name)
            .unwrap_or_else(|| panic!("no parameter {name}"))
            .clone()
    };
    let limit = param("limit");
    assert_eq!(limit["in"], "query");
    assert_eq!(limit["schema"]["minimum"], 1);
    assert_eq!(limit["schema"]["maximum"], 100);
    assert_eq!(param("stage_id")["schema"]["minimum"], 0);
    assert!(param("updated_since")["schema"]
        .to_string()
        .contains("date-time"));
    assert!(param("channel")["schema"].to_string().contains("Channel"));
    assert!(param("starting_after")["description"]
        .as_str()
        .unwrap()
        .contains("next_cursor"));
}

#[tokio::test]
async fn a_path_segment_that_is_not_utf_8_gets_the_error_envelope() {
    let app = spawn_app().await;
    for (method, path) in [
        (Method::GET, "/users/%ff"),
        (Method::DELETE, "/orders/1/items/%ff"),
        (Method::POST, "/conversations/1/messages/%ff/feedback"),
        (Method::POST, "/webhooks/%ff/deliveries/1/redeliver"),
    ] {
        let r = app
            .call(method.clone(), path)
            .token(&app.key)
            .json(json!({}))
            .send()
            .await;
        r.expect_error(400, "invalid_request");
    }
    app.admin_call(Method::POST, "/admin/users/%ff/tokens")
        .json(json!({}))
        .send()
        .await
        .expect_error(400, "invalid_request");
}
