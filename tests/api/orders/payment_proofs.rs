//! Payment proofs: receipts attached in any status, at most 20, announced with the new
//! proof beside the order and without order.updated; kept across a restart.

use super::*;
use crate::receiver::TestReceiver;
use crate::webhooks::{new_endpoint, spawn_webhook_app};

fn proofs_at(order: &Value) -> String {
    format!("{}/payment-proofs", at(order))
}

#[tokio::test]
async fn a_receipt_is_attached_in_any_status_and_announced_alone() {
    let app = spawn_webhook_app().await;
    let rx = TestReceiver::start().await;
    new_endpoint(&app, json!({"url": rx.url, "events": ["order.*"]})).await;
    let details = TestReceiver::start().await;
    new_endpoint(
        &app,
        json!({"url": details.url, "events": ["order.payment_proof_uploaded"],
               "include_contact_details": true}),
    )
    .await;
    let ann = contact_named(&app, "Ann").await;
    let order = create(&app, with(order_body(ann), json!({"status": "cancelled"}))).await;
    // Timestamps have milliseconds: the proof comes in a later one than the order.
    tokio::time::sleep(std::time::Duration::from_millis(3)).await;
    let answered = app
        .post(&proofs_at(&order), json!({"url": "https://files.example/receipt.pdf", "name": "receipt.pdf", "content_type": "application/pdf"}))
        .await
        .created();
    assert_fields(&answered, ORDER_FIELDS);
    let proofs = answered["payment_proofs"].as_array().unwrap();
    assert_eq!(proofs.len(), 1);
    assert_fields(&proofs[0], "id url name content_type added_at");
    assert_eq!(proofs[0]["url"], "https://files.example/receipt.pdf");
    // The order changed: its updated_at is the proof's time.
    assert_eq!(answered["updated_at"], proofs[0]["added_at"]);
    assert_ne!(answered["updated_at"], order["updated_at"]);
    let bare = app
        .post(
            &proofs_at(&order),
            json!({"url": "https://files.example/2.jpg"}),
        )
        .await
        .created();
    assert_eq!(
        bare["payment_proofs"][1]["name"],
        Value::Null,
        "name and type are optional"
    );
    assert_eq!(
        get(&app, &order).await["payment_proofs"],
        bare["payment_proofs"]
    );

    rx.wait_for(4).await;
    assert_eq!(
        rx.event_types(),
        [
            "order.cancelled",
            "order.created",
            "order.payment_proof_uploaded",
            "order.payment_proof_uploaded"
        ],
        "made cancelled, the order is announced cancelled; no order.updated"
    );
    // The second upload's event carries both proofs and names the new one.
    let data = rx
        .of_type("order.payment_proof_uploaded")
        .into_iter()
        .map(|r| r.json()["data"].clone())
        .find(|d| d["payment_proofs"].as_array().is_some_and(|p| p.len() == 2))
        .expect("an event with both proofs");
    assert_eq!(data["id"], order["id"]);
    assert_eq!(data["payment_proof"], bare["payment_proofs"][1]);
    // Like every order event, it names the customer only to an endpoint that takes
    // contact details.
    let disclosed = details.wait_for(2).await[0].json()["data"].clone();
    assert_eq!(disclosed["customer_name"], "Ann");
    for private in ["customer_name", "customer_phone"] {
        assert!(data.get(private).is_none(), "{private} was sent: {data}");
    }
}

#[tokio::test]
async fn a_receipt_needs_an_https_url_and_an_order_holds_twenty() {
    let app = spawn_app().await;
    let ann = contact_named(&app, "Ann").await;
    let order = create(&app, order_body(ann)).await;
    invalid(
        app.post(
            &proofs_at(&order),
            json!({"url": "http://files.example/r.pdf"}),
        )
        .await,
        "url",
    );
    invalid(
        app.post(
            &proofs_at(&order),
            json!({"url": "https://files.example/r.pdf", "name": "n".repeat(256)}),
        )
        .await,
        "name",
    );
    app.post(
        &proofs_at(&order),
        json!({"url": "https://files.example/r.pdf", "size": 3}),
    )
    .await
    .expect(422);
    not_found(
        app.post(
            "/orders/999/payment-proofs",
            json!({"url": "https://a.example/r"}),
        )
        .await,
    );
    for i in 0..20 {
        app.post(
            &proofs_at(&order),
            json!({"url": format!("https://files.example/{i}")}),
        )
        .await
        .expect(201);
    }
    app.post(
        &proofs_at(&order),
        json!({"url": "https://files.example/21"}),
    )
    .await
    .expect_error(422, "limit_reached");
    let kept = app.restart().await;
    assert_eq!(
        get(&kept, &order).await["payment_proofs"]
            .as_array()
            .unwrap()
            .len(),
        20
    );
    let outsider = kept.member_token("member", &["contacts"]).await;
    forbidden(
        kept.post_as(
            &outsider,
            &proofs_at(&order),
            json!({"url": "https://files.example/x"}),
        )
        .await,
    );
}
