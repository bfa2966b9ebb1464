use super::*;

// ----- Patch and status -----

#[tokio::test]
async fn a_patch_needs_at_least_one_field() {
    let app = spawn_app().await;
    let ann = contact_named(&app, "Ann").await;
    let o = create(&app, order_body(ann)).await;
    app.patch(&at(&o), json!({}))
        .await
        .expect_error(422, "validation_failed");
    app.call(Method::PATCH, &at(&o))
        .token(&app.key)
        .raw("")
        .send()
        .await
        .expect_error(422, "validation_failed");
    // Nulls of fields that can't be cleared name nothing to change either.
    app.patch(&at(&o), json!({"status": null}))
        .await
        .expect_error(422, "validation_failed");
    assert_eq!(get(&app, &o).await, o);
    not_found(
        app.patch(&format!("{ORDERS}/999999999"), json!({"notes": "x"}))
            .await,
    );
}

#[tokio::test]
async fn patching_each_field_changes_only_that_field() {
    let start: DateTime<Utc> = "2026-03-01T10:00:00Z".parse().unwrap();
    let clock = ManualClock::new(start);
    let app = spawn_app_with_clock(clock.clone()).await;
    let ann = contact_named(&app, "Ann").await;
    let o = two_item_order(&app, ann).await;
    assert_eq!(o["grand_total"], json!(13.5));
    clock.advance(Duration::from_secs(60));

    let steps = [
        json!({"status": "shipped"}),
        json!({"payment_status": "paid"}),
        json!({"paid_amount": 13.5}),
        json!({"shipping_fee": 4.99}),
        json!({"notes": "Ring twice"}),
    ];
    let mut expected = o.clone();
    for step in steps {
        let before = get(&app, &o).await;
        let after = app.patch(&at(&o), step.clone()).await.ok();
        for (k, v) in step.as_object().unwrap() {
            match v {
                Value::Number(n) => assert_eq!(after[k].as_f64(), n.as_f64(), "{k} after {step}"),
                _ => assert_eq!(&after[k], v, "{k} after {step}"),
            }
            expected[k] = after[k].clone();
        }
        if step.get("shipping_fee").is_some() {
            assert_eq!(after["shipping_fee"], json!(4.99));
            assert_eq!(after["items_total"], json!(13.5));
            assert_eq!(
                after["grand_total"],
                json!(18.49),
                "grand total follows the fee"
            );
            expected["grand_total"] = json!(18.49);
        }
        expected["updated_at"] = after["updated_at"].clone();
        assert_eq!(after, expected, "only {step} changed (before: {before})");
        assert_eq!(get(&app, &o).await, after, "the change is kept");
    }
    assert_eq!(expected["updated_at"], "2026-03-01T10:01:00.000Z");
    assert_eq!(expected["created_at"], o["created_at"]);

    // Several at once, and null clears the notes.
    let r = app
        .patch(
            &at(&o),
            json!({"notes": null, "status": "delivered", "shipping_fee": 0}),
        )
        .await
        .ok();
    assert_eq!(r["notes"], Value::Null);
    assert_eq!(r["status"], "delivered");
    assert_eq!(r["grand_total"], json!(13.5));
    assert_eq!(r["payment_status"], "paid");
    assert_eq!(r["paid_amount"], json!(13.5));
    assert_eq!(get(&app, &o).await["notes"], Value::Null);
}

#[tokio::test]
async fn each_patch_rule_names_its_field() {
    let app = spawn_app().await;
    let ann = contact_named(&app, "Ann").await;
    let o = create(&app, order_body(ann)).await;
    refusals(
        &app,
        Method::PATCH,
        &at(&o),
        vec![
            (json!({"status": "pending"}), "status"),
            (json!({"status": "Shipped"}), "status"),
            (json!({"payment_status": "refunded"}), "payment_status"),
            (json!({"paid_amount": -1}), "paid_amount"),
            (json!({"paid_amount": 0.001}), "paid_amount"),
            (json!({"shipping_fee": -0.5}), "shipping_fee"),
            (json!({"shipping_fee": 1.005}), "shipping_fee"),
            (json!({"shipping_fee": "1"}), "shipping_fee"),
            (json!({"notes": "n".repeat(2001)}), "notes"),
            (json!({"currency": "EUR"}), "currency"),
            (json!({"contact_id": ann}), "contact_id"),
            (json!({"items": []}), "items"),
        ],
    )
    .await;
    assert_eq!(get(&app, &o).await, o, "nothing changed");
    let r = app
        .patch(&at(&o), json!({"notes": "n".repeat(2000)}))
        .await
        .expect(200);
    assert_eq!(r.body["notes"], "n".repeat(2000));
}

#[tokio::test]
async fn put_status_sets_the_fulfillment_status() {
    let app = spawn_app().await;
    let ann = contact_named(&app, "Ann").await;
    let o = create(&app, with(order_body(ann), json!({"notes": "keep"}))).await;
    let path = format!("{}/status", at(&o));
    for status in ["shipped", "delivered", "failed", "cancelled", "unfulfilled"] {
        let r = app.put(&path, json!({ "status": status })).await.ok();
        assert_eq!(r["object"], "order");
        assert_eq!(r["status"], status);
        assert_eq!(r["payment_status"], "pending");
        assert_eq!(r["notes"], "keep");
        assert_eq!(get(&app, &o).await["status"], status);
    }
    refusals(
        &app,
        Method::PUT,
        &path,
        vec![
            (json!({"status": "lost"}), "status"),
            (json!({"status": "paid"}), "status"),
            (json!({"status": ""}), "status"),
            (json!({"status": null}), "status"),
            (json!({"status": 3}), "status"),
            (json!({}), "status"),
        ],
    )
    .await;
    not_found(
        app.put(
            &format!("{ORDERS}/999999999/status"),
            json!({"status": "shipped"}),
        )
        .await,
    );
    bad_request(
        app.put(
            &format!("{ORDERS}/abc/status"),
            json!({"status": "shipped"}),
        )
        .await,
    );
}
