//! Idempotency-Key repeats compare the parsed body, not its bytes.

use reqwest::Method;

use crate::helpers::*;

#[tokio::test]
async fn a_repeat_with_the_same_json_in_another_key_order_replays() {
    let app = spawn_app().await;
    let send = |raw: &'static str| {
        app.call(Method::POST, "/custom-fields")
            .token(&app.key)
            .header("Idempotency-Key", "field-1")
            .raw(raw)
            .send()
    };
    let first = send(r#"{"label": "Shoe size", "type": "number"}"#)
        .await
        .expect(201);
    let again = send("{\n  \"type\": \"number\",\n  \"label\": \"Shoe size\"\n}")
        .await
        .expect(201);
    assert_eq!(again.header("idempotent-replayed"), Some("true"));
    assert_eq!(again.body, first.body);
    send(r#"{"type": "text", "label": "Shoe size"}"#)
        .await
        .expect_error(409, "idempotency_key_reused");
}
