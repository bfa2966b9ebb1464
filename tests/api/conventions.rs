use crate::helpers::*;
use reqwest::Method;
use serde_json::json;

#[tokio::test]
async fn health_answers_without_authentication() {
    let app = spawn_app().await;
    let r = app
        .client
        .get(format!("{}/health", app.api))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
}

#[tokio::test]
async fn a_fresh_data_folder_gets_a_default_workspace_and_a_working_key() {
    let app = spawn_app().await;
    assert!(app.workspace_id.starts_with("ws_"));
    assert!(app.key.starts_with("ai_"));
    let me = app.get("/me", &app.key).await.expect(200);
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
