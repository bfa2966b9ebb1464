//! Set-up steps many areas share: a contact, a conversation with it, a team reply, the
//! workspace's credit allowance, and a webhook receiver that keeps failing.

use serde_json::{json, Value};

use crate::helpers::*;
use crate::receiver::TestReceiver;

/// POST /contacts with `body`, answering 201; the new contact's id.
pub async fn new_contact_id(app: &TestApp, body: Value) -> u64 {
    id(&app.post("/contacts", body).await.created())
}

/// A new contact with only a first name, `name`; its id.
pub async fn contact_named(app: &TestApp, name: &str) -> u64 {
    new_contact_id(app, json!({ "first_name": name })).await
}

/// POST /conversations with `contact` on `channel`, answering 201; the conversation.
pub async fn new_conversation(app: &TestApp, contact: u64, channel: &str) -> Value {
    app.post(
        "/conversations",
        json!({"contact_id": contact, "channel": channel}),
    )
    .await
    .created()
}

/// A conversation on `channel` with a new contact made from `contact`; its id.
pub async fn conversation_with(app: &TestApp, contact: Value, channel: &str) -> u64 {
    let contact = new_contact_id(app, contact).await;
    id(&new_conversation(app, contact, channel).await)
}

/// A team reply `text` on conversation `c`, answering 201; the message.
pub async fn team_reply(app: &TestApp, c: u64, text: &str) -> Value {
    app.post(
        &format!("/conversations/{c}/messages"),
        json!({ "text": text }),
    )
    .await
    .created()
}

/// Sets the workspace's monthly credit allowance by the operator route (200); the credits.
pub async fn set_allowance(app: &TestApp, allowance: u64) -> Value {
    app.admin_post(
        &format!("/admin/workspaces/{}/credits", app.workspace_id),
        json!({ "allowance": allowance }),
    )
    .await
    .ok()
}

/// A receiver and an endpoint sending it the `tag.*` events: (receiver, endpoint id).
pub async fn tag_hook(app: &TestApp) -> (TestReceiver, String) {
    let rx = TestReceiver::start().await;
    let (id, _) = crate::webhooks::hook(app, &rx.url, &["tag.*"]).await;
    (rx, id)
}

/// A [`tag_hook`] whose receiver answers every delivery with `status`.
pub async fn tag_hook_answering(app: &TestApp, status: u16) -> (TestReceiver, String) {
    let (rx, id) = tag_hook(app).await;
    rx.respond_with(status);
    (rx, id)
}
