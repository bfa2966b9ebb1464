use super::*;

// ----- Create -----

#[tokio::test]
async fn creating_an_order_answers_201_with_every_field_and_the_defaults() {
    let app = spawn_app().await;
    let ann = contact_named(&app, "Ann").await;
    let o = create(&app, with_items(ann, vec![item("Green tea", 2, 4.5)])).await;

    assert_fields(&o, ORDER_FIELDS);
    assert_eq!(o["object"], "order");
    assert!(o["id"].as_u64().is_some_and(|i| i > 0), "{o}");
    assert_eq!(o["contact_id"], ann);
    assert_eq!(o["status"], "unfulfilled");
    assert_eq!(o["payment_status"], "pending");
    assert_eq!(o["currency"], "USD");
    assert_eq!(o["items_total"], json!(9.0));
    assert_eq!(o["shipping_fee"], json!(0.0));
    assert_eq!(o["grand_total"], json!(9.0));
    assert_eq!(o["paid_amount"], json!(0.0));
    assert_eq!(o["notes"], Value::Null);
    assert_eq!(o["timeline"], json!([]));
    assert_eq!(utc(&o["created_at"]), utc(&o["updated_at"]));

    let items = o["items"].as_array().expect("items");
    assert_eq!(items.len(), 1);
    let i = &items[0];
    assert_fields(i, ITEM_FIELDS);
    assert!(i["id"].as_u64().is_some_and(|n| n > 0), "{i}");
    assert_eq!(i["name"], "Green tea");
    assert_eq!(i["quantity"], 2);
    assert_eq!(i["unit_price"], json!(4.5));
    assert_eq!(i["product_id"], Value::Null);
    assert_eq!(i["sku"], Value::Null);
    assert_eq!(i["total"], json!(9.0));
}

#[tokio::test]
async fn creating_an_order_stores_every_optional_field_sent() {
    let app = spawn_app().await;
    let ann = contact_named(&app, "Ann").await;
    let product = app
        .post("/products", json!({"name": "Teapot"}))
        .await
        .created();
    let body = json!({
        "contact_id": ann,
        "currency": "eur",
        "notes": "Leave at the door",
        "status": "shipped",
        "payment_status": "paid",
        "paid_amount": 25.5,
        "shipping_fee": 4.25,
        "items": [
            {"name": "Teapot", "quantity": 1, "unit_price": 21.25, "product_id": id(&product), "sku": "TP-1"},
            {"name": "  Spoon  ", "quantity": 3, "unit_price": 0, "product_id": null, "sku": null}
        ]
    });
    let o = create(&app, body).await;
    assert_eq!(o["currency"], "EUR");
    assert_eq!(o["notes"], "Leave at the door");
    assert_eq!(o["status"], "shipped");
    assert_eq!(o["payment_status"], "paid");
    assert_eq!(o["paid_amount"], json!(25.5));
    assert_eq!(o["shipping_fee"], json!(4.25));
    assert_eq!(o["items_total"], json!(21.25));
    assert_eq!(o["grand_total"], json!(25.5));
    let items = o["items"].as_array().expect("items");
    assert_eq!(items[0]["product_id"], id(&product));
    assert_eq!(items[0]["sku"], "TP-1");
    assert_eq!(items[1]["name"], "Spoon", "names are trimmed");
    assert_eq!(items[1]["unit_price"], json!(0.0));
    assert_eq!(items[1]["total"], json!(0.0));
    assert_ne!(items[0]["id"], items[1]["id"], "each item has its own id");
    assert_eq!(get(&app, &o).await, o, "GET answers what POST did");
}

#[tokio::test]
async fn an_order_needs_a_contact_of_its_own_workspace() {
    let app = spawn_app().await;
    let (_, other_key) = app.new_workspace("Other").await;
    let foreign = new_contact_in(&app, &other_key, "Zed").await;
    let ann = contact_named(&app, "Ann").await;
    assert_ne!(foreign, ann);

    for missing in [999_999_999, foreign] {
        no_such(
            app.post(ORDERS, order_body(missing)).await,
            "contact_id: no such contact",
        );
    }
    refusals(
        &app,
        Method::POST,
        ORDERS,
        vec![
            (json!({"items": [item("Tea", 1, 5.0)]}), "contact_id"),
            (
                with(order_body(ann), json!({"contact_id": null})),
                "contact_id",
            ),
            (
                with(order_body(ann), json!({"contact_id": "abc"})),
                "contact_id",
            ),
        ],
    )
    .await;
    // The other workspace may use its own contact.
    app.post_as(&other_key, ORDERS, order_body(foreign))
        .await
        .expect(201);
    app.post(ORDERS, order_body(ann)).await.expect(201);
}

#[tokio::test]
async fn an_order_is_created_with_one_to_two_hundred_items() {
    let app = spawn_app().await;
    let ann = contact_named(&app, "Ann").await;
    let many = |n: usize| (0..n).map(|i| item(&format!("Item {i}"), 1, 1.0)).collect();

    refusals(
        &app,
        Method::POST,
        ORDERS,
        vec![
            (with_items(ann, vec![]), "items"),
            (with_items(ann, many(201)), "items"),
            (json!({"contact_id": ann}), "items"),
            (json!({"contact_id": ann, "items": null}), "items"),
        ],
    )
    .await;
    let most = create(&app, with_items(ann, many(200))).await;
    assert_eq!(most["items"].as_array().unwrap().len(), 200);
    assert_eq!(most["items_total"], json!(200.0));
    let one = create(&app, with_items(ann, many(1))).await;
    assert_eq!(one["items"].as_array().unwrap().len(), 1);
}

#[tokio::test]
async fn each_item_rule_names_the_faulty_item_field() {
    let app = spawn_app().await;
    let ann = contact_named(&app, "Ann").await;
    let one = |i: Value| with_items(ann, vec![i]);
    let second = |i: Value| with_items(ann, vec![item("Fine", 1, 1.0), i]);
    let with_item = |extra: Value| with(item("Tea", 1, 5.0), extra);

    refusals(
        &app,
        Method::POST,
        ORDERS,
        vec![
            (one(with_item(json!({"name": ""}))), "items[0].name"),
            (one(with_item(json!({"name": "   "}))), "items[0].name"),
            (
                one(with_item(json!({"name": "n".repeat(256)}))),
                "items[0].name",
            ),
            (
                one(json!({"quantity": 1, "unit_price": 1})),
                "items[0].name",
            ),
            (one(with_item(json!({"quantity": 0}))), "items[0].quantity"),
            (one(with_item(json!({"quantity": -1}))), "items[0].quantity"),
            (
                one(with_item(json!({"quantity": 100_001}))),
                "items[0].quantity",
            ),
            (
                one(with_item(json!({"quantity": 1.5}))),
                "items[0].quantity",
            ),
            (
                one(json!({"name": "Tea", "unit_price": 1})),
                "items[0].quantity",
            ),
            (
                one(with_item(json!({"unit_price": -1}))),
                "items[0].unit_price",
            ),
            (
                one(with_item(json!({"unit_price": -0.01}))),
                "items[0].unit_price",
            ),
            (
                one(with_item(json!({"unit_price": 100_000_000.01}))),
                "items[0].unit_price",
            ),
            (
                one(with_item(json!({"unit_price": "5.00"}))),
                "items[0].unit_price",
            ),
            (
                one(json!({"name": "Tea", "quantity": 1})),
                "items[0].unit_price",
            ),
            (
                one(with_item(json!({"sku": "s".repeat(101)}))),
                "items[0].sku",
            ),
            (one(with_item(json!({"color": "red"}))), "items[0].color"),
            (
                second(with_item(json!({"quantity": 0}))),
                "items[1].quantity",
            ),
        ],
    )
    .await;
    let unknown_product = with_item(json!({"product_id": 999_999_999}));
    no_such(
        app.post(ORDERS, one(unknown_product.clone())).await,
        "items[0].product_id: no such product",
    );
    no_such(
        app.post(ORDERS, second(unknown_product)).await,
        "items[1].product_id: no such product",
    );

    // Each limit itself is allowed.
    let edge = create(
        &app,
        with_items(
            ann,
            vec![
                json!({"name": "n".repeat(255), "quantity": 100_000, "unit_price": 100_000_000, "sku": "s".repeat(100)}),
                json!({"name": "x", "quantity": 1, "unit_price": 0}),
            ],
        ),
    )
    .await;
    let items = edge["items"].as_array().unwrap();
    assert_eq!(items[0]["quantity"], 100_000);
    assert_eq!(items[0]["unit_price"], json!(100_000_000.0));
    assert_eq!(items[0]["total"], json!(10_000_000_000_000.0));
    assert_eq!(items[0]["sku"], "s".repeat(100));
}

#[tokio::test]
async fn an_item_naming_a_product_of_another_workspace_answers_404() {
    let app = spawn_app().await;
    let (_, foreign) = foreign_record(&app, "/products", json!({"name": "Elsewhere"})).await;
    let ann = contact_named(&app, "Ann").await;
    let body = with_items(
        ann,
        vec![with(
            item("Tea", 1, 5.0),
            json!({"product_id": id(&foreign)}),
        )],
    );
    no_such(
        app.post(ORDERS, body).await,
        "items[0].product_id: no such product",
    );
    assert_eq!(list_ids(&app, "").await, Vec::<u64>::new(), "no order made");
}

#[tokio::test]
async fn the_currency_is_a_known_three_letter_iso_code_in_any_case() {
    let app = spawn_app().await;
    let ann = contact_named(&app, "Ann").await;
    let cur = |c: Value| with(order_body(ann), json!({ "currency": c }));
    refusals(
        &app,
        Method::POST,
        ORDERS,
        vec![
            (cur(json!("XYZ")), "currency"),
            (cur(json!("us")), "currency"),
            (cur(json!("USDD")), "currency"),
            (cur(json!("")), "currency"),
            (cur(json!("€")), "currency"),
            (cur(json!(840)), "currency"),
        ],
    )
    .await;
    for (sent, stored) in [
        ("eur", "EUR"),
        ("GBP", "GBP"),
        ("jpy", "JPY"),
        ("Kwd", "KWD"),
    ] {
        let o = create(&app, cur(json!(sent))).await;
        assert_eq!(o["currency"], stored, "sent {sent}");
    }
}

#[tokio::test]
async fn notes_hold_up_to_two_thousand_characters() {
    let app = spawn_app().await;
    let ann = contact_named(&app, "Ann").await;
    invalid(
        app.post(
            ORDERS,
            with(order_body(ann), json!({"notes": "n".repeat(2001)})),
        )
        .await,
        "notes",
    );
    let o = create(
        &app,
        with(order_body(ann), json!({"notes": "é".repeat(2000)})),
    )
    .await;
    assert_eq!(o["notes"], "é".repeat(2000), "characters, not bytes");
}

#[tokio::test]
async fn statuses_come_from_their_enums() {
    let app = spawn_app().await;
    let ann = contact_named(&app, "Ann").await;
    order_refusals(
        &app,
        ann,
        vec![
            (json!({"status": "pending"}), "status"),
            (json!({"status": "SHIPPED"}), "status"),
            (json!({"status": ""}), "status"),
            (json!({"status": 1}), "status"),
            (json!({"payment_status": "refunded"}), "payment_status"),
            (json!({"payment_status": "unfulfilled"}), "payment_status"),
            (json!({"payment_status": "Paid"}), "payment_status"),
        ],
    )
    .await;
    for status in ["unfulfilled", "shipped", "delivered", "cancelled", "failed"] {
        for payment in ["pending", "paid"] {
            let o = create(
                &app,
                with(
                    order_body(ann),
                    json!({"status": status, "payment_status": payment}),
                ),
            )
            .await;
            assert_eq!(
                (o["status"].as_str(), o["payment_status"].as_str()),
                (Some(status), Some(payment))
            );
        }
    }
}

#[tokio::test]
async fn paid_amount_and_shipping_fee_are_never_negative() {
    let app = spawn_app().await;
    let ann = contact_named(&app, "Ann").await;
    order_refusals(
        &app,
        ann,
        vec![
            (json!({"paid_amount": -1}), "paid_amount"),
            (json!({"paid_amount": -0.01}), "paid_amount"),
            (json!({"paid_amount": "5"}), "paid_amount"),
            (json!({"shipping_fee": -1}), "shipping_fee"),
            (json!({"shipping_fee": -0.01}), "shipping_fee"),
            (json!({"shipping_fee": true}), "shipping_fee"),
        ],
    )
    .await;
    let o = create(
        &app,
        with(
            order_body(ann),
            json!({"paid_amount": 0, "shipping_fee": 0}),
        ),
    )
    .await;
    assert_eq!(
        (&o["paid_amount"], &o["shipping_fee"]),
        (&json!(0.0), &json!(0.0))
    );
}

#[tokio::test]
async fn unknown_fields_are_refused_on_every_order_body() {
    let (app, ann, o) = app_with_two_item_order().await;
    let first = o["items"][0].clone();
    order_refusals(&app, ann, vec![(json!({"discount": 5}), "discount")]).await;
    refusals(
        &app,
        Method::PATCH,
        &at(&o),
        vec![(json!({"notes": "x", "total": 1}), "total")],
    )
    .await;
    refusals(
        &app,
        Method::PUT,
        &format!("{}/status", at(&o)),
        vec![(json!({"status": "shipped", "reason": "x"}), "reason")],
    )
    .await;
    refusals(
        &app,
        Method::POST,
        &format!("{}/items", at(&o)),
        vec![(with(item("Jam", 1, 2.0), json!({"color": "red"})), "color")],
    )
    .await;
    refusals(
        &app,
        Method::PATCH,
        &item_at(&o, &first),
        vec![(json!({"quantity": 2, "name": "Other"}), "name")],
    )
    .await;
    refusals(
        &app,
        Method::POST,
        &format!("{}/timeline", at(&o)),
        vec![(json!({"note": "hi", "author": "me"}), "author")],
    )
    .await;
    assert_eq!(get(&app, &o).await, o, "nothing changed");
}
