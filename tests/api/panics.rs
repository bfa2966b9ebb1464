//! A panic is answered and survived: in a handler (the 500 envelope, the process serves
//! on) and in a workspace actor's handler (its state read again from the store).

use serde_json::json;
use switchboard_actors::workspace::WorkspaceMsg;

use crate::helpers::*;

#[tokio::test]
async fn a_handler_panic_answers_the_500_envelope_and_the_service_lives_on() {
    let app = spawn_app_with(|s| s.test_hooks = true).await;
    let r = app
        .client
        .post(format!("{}/__test/panic", app.api))
        .send()
        .await
        .expect("the connection is answered, not dropped");
    assert_eq!(r.status(), 500);
    let body: serde_json::Value = r.json().await.unwrap();
    assert_eq!(body["error"]["code"], "internal_error");
    assert!(
        !body.to_string().contains("asked for"),
        "the cause stays in the log"
    );
    app.get("/tags").await.expect(200);
}

#[tokio::test]
async fn the_test_hook_is_absent_unless_asked_for() {
    let app = spawn_app().await;
    let r = app.client.post(format!("{}/__test/panic", app.api));
    assert_eq!(status_of(r).await, 404);
}

#[tokio::test]
async fn a_panicking_workspace_actor_comes_back_from_the_store() {
    let app = spawn_app().await;
    app.post("/tags", json!({"name": "before"}))
        .await
        .expect(201);
    break_workspace_actor(&app, WorkspaceMsg::Panic, "the panic was noticed").await;
}
