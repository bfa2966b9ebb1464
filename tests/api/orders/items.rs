use super::*;

// ----- Items -----

#[tokio::test]
async fn adding_an_item_answers_201_with_the_order() {
    let app = spawn_app().await;
    let ann = contact_named(&app, "Ann").await;
    let product = app
        .post("/products", json!({"name": "Jam"}))
        .await
        .created();
    let o = two_item_order(&app, ann).await;
    let r = app
        .post(&format!("{}/items", at(&o)), json!({"name": "Jam", "quantity": 2, "unit_price": 2.25, "product_id": id(&product), "sku": "J-1"}))
        .await
        .created();
    assert_fields(&r, ORDER_FIELDS);
    assert_eq!(r["object"], "order");
    assert_eq!(r["id"], o["id"]);
    let items = r["items"].as_array().unwrap();
    assert_eq!(items.len(), 3);
    let added = &items[2];
    assert_fields(added, ITEM_FIELDS);
    assert_eq!(added["name"], "Jam");
    assert_eq!(added["quantity"], 2);
    assert_eq!(added["unit_price"], json!(2.25));
    assert_eq!(added["product_id"], id(&product));
    assert_eq!(added["sku"], "J-1");
    assert_eq!(added["total"], json!(4.5));
    assert!(
        o["items"]
            .as_array()
            .unwrap()
            .iter()
            .all(|i| i["id"] != added["id"]),
        "a new item id"
    );
    assert_eq!(r["items_total"], json!(18.0));
    assert_eq!(r["grand_total"], json!(18.0));
    assert_eq!(get(&app, &o).await, r);

    not_found(
        app.post(&format!("{ORDERS}/999999999/items"), item("Jam", 1, 1.0))
            .await,
    );
}

#[tokio::test]
async fn each_rule_of_an_added_item_names_its_field() {
    let app = spawn_app().await;
    let ann = contact_named(&app, "Ann").await;
    let o = create(&app, order_body(ann)).await;
    let yen = create(
        &app,
        with(
            order_body(ann),
            json!({"currency": "JPY", "items": [item("Tea", 1, 500.0)]}),
        ),
    )
    .await;
    let with_item = |extra: Value| with(item("Jam", 1, 2.0), extra);
    refusals(
        &app,
        Method::POST,
        &format!("{}/items", at(&o)),
        vec![
            (with_item(json!({"name": ""})), "name"),
            (with_item(json!({"name": "n".repeat(256)})), "name"),
            (json!({"quantity": 1, "unit_price": 1}), "name"),
            (with_item(json!({"quantity": 0})), "quantity"),
            (with_item(json!({"quantity": 100_001})), "quantity"),
            (with_item(json!({"quantity": 1.5})), "quantity"),
            (with_item(json!({"unit_price": -1})), "unit_price"),
            (
                with_item(json!({"unit_price": 100_000_000.01})),
                "unit_price",
            ),
            (with_item(json!({"unit_price": 1.005})), "unit_price"),
            (with_item(json!({"sku": "s".repeat(101)})), "sku"),
        ],
    )
    .await;
    no_such(
        app.post(
            &format!("{}/items", at(&o)),
            with_item(json!({"product_id": 999_999_999})),
        )
        .await,
        "product_id: no such product",
    );
    invalid(
        app.post(&format!("{}/items", at(&yen)), item("Jam", 1, 1.5))
            .await,
        "unit_price",
    );
    assert_eq!(get(&app, &o).await, o, "nothing was added");
}

#[tokio::test]
async fn changing_an_item_quantity_updates_the_item_and_the_totals() {
    let (app, _, o) = app_with_two_item_order().await;
    let tea = o["items"][0].clone();
    let cake = o["items"][1].clone();

    let r = app
        .patch(&item_at(&o, &tea), json!({"quantity": 5}))
        .await
        .ok();
    assert_eq!(r["object"], "order");
    assert_eq!(r["items"][0]["quantity"], 5);
    assert_eq!(r["items"][0]["total"], json!(25.0));
    assert_eq!(r["items"][1], cake, "the other item is untouched");
    assert_eq!(r["items_total"], json!(28.5));
    assert_eq!(r["grand_total"], json!(28.5));
    assert_eq!(get(&app, &o).await, r);

    app.patch(&item_at(&o, &tea), json!({"quantity": 100_000}))
        .await
        .expect(200);
    refusals(
        &app,
        Method::PATCH,
        &item_at(&o, &tea),
        vec![
            (json!({"quantity": 0}), "quantity"),
            (json!({"quantity": -3}), "quantity"),
            (json!({"quantity": 100_001}), "quantity"),
            (json!({"quantity": 2.5}), "quantity"),
            (json!({"quantity": "2"}), "quantity"),
            (json!({}), "quantity"),
            (json!({"quantity": 2, "unit_price": 1}), "unit_price"),
        ],
    )
    .await;
    not_found(
        app.patch(
            &format!("{}/items/999999999", at(&o)),
            json!({"quantity": 2}),
        )
        .await,
    );
    not_found(
        app.patch(
            &format!("{ORDERS}/999999999/items/{}", id(&tea)),
            json!({"quantity": 2}),
        )
        .await,
    );
    bad_request(
        app.patch(&format!("{}/items/abc", at(&o)), json!({"quantity": 2}))
            .await,
    );
}

#[tokio::test]
async fn an_item_of_another_order_is_not_found() {
    let (app, ann, one) = app_with_two_item_order().await;
    let other = two_item_order(&app, ann).await;
    let stranger = &other["items"][0];
    not_found(
        app.patch(&item_at(&one, stranger), json!({"quantity": 2}))
            .await,
    );
    not_found(app.delete(&item_at(&one, stranger)).await);
    assert_eq!(get(&app, &other).await, other);
    assert_eq!(get(&app, &one).await, one);
}

#[tokio::test]
async fn removing_an_item_keeps_the_rest_but_never_the_last_one() {
    let (app, _, o) = app_with_two_item_order().await;
    let tea = o["items"][0].clone();
    let cake = o["items"][1].clone();

    let r = app.delete(&item_at(&o, &tea)).await.ok();
    assert_eq!(r["object"], "order");
    assert_eq!(r["items"], json!([cake.clone()]));
    assert_eq!(r["items_total"], json!(3.5));
    assert_eq!(r["grand_total"], json!(3.5));
    assert_eq!(get(&app, &o).await, r);

    not_found(app.delete(&item_at(&o, &tea)).await);
    not_found(app.delete(&format!("{}/items/999999999", at(&o))).await);
    bad_request(app.delete(&format!("{}/items/x", at(&o))).await);

    // The last item stays: cancel the order instead.
    conflict(app.delete(&item_at(&o, &cake)).await);
    assert_eq!(get(&app, &o).await["items"], json!([cake]));
}

/// For each state that is not (unfulfilled, pending): adding, changing and removing an item
/// answer 409 `order_not_editable` and change nothing; back to unfulfilled and pending,
/// each works again.
#[tokio::test]
async fn items_change_only_while_the_order_is_unfulfilled_and_unpaid() {
    let app = spawn_app().await;
    let ann = contact_named(&app, "Ann").await;
    let locked = [
        ("shipped", "pending"),
        ("delivered", "pending"),
        ("cancelled", "pending"),
        ("failed", "pending"),
        ("unfulfilled", "paid"),
        ("shipped", "paid"),
    ];
    let mut wrong = Vec::new();
    for (status, payment) in locked {
        let o = two_item_order(&app, ann).await;
        let (tea, cake) = (o["items"][0].clone(), o["items"][1].clone());
        let state = json!({"status": status, "payment_status": payment});
        let locked_view = app.patch(&at(&o), state).await.ok();

        let attempts = [
            (
                "add",
                app.post(&format!("{}/items", at(&o)), item("Jam", 1, 2.0))
                    .await,
            ),
            (
                "change",
                app.patch(&item_at(&o, &tea), json!({"quantity": 3})).await,
            ),
            ("remove", app.delete(&item_at(&o, &cake)).await),
        ];
        // An item that is not there is 404 whatever the state.
        let missing = format!("{}/items/999999", at(&o));
        for r in [
            app.patch(&missing, json!({"quantity": 3})).await,
            app.delete(&missing).await,
        ] {
            if (r.status, r.code()) != (404, "not_found") {
                wrong.push(format!(
                    "missing item while {status}/{payment}: {}",
                    r.status
                ));
            }
        }
        for (what, r) in attempts {
            if (r.status, r.code()) != (409, "order_not_editable") {
                wrong.push(format!(
                    "{what} while {status}/{payment}: {} {}",
                    r.status, r.body
                ));
            }
        }
        if get(&app, &o).await != locked_view {
            wrong.push(format!("the order changed while {status}/{payment}"));
        }

        // Back to unfulfilled and pending: every item change works again.
        let back = json!({"status": "unfulfilled", "payment_status": "pending"});
        app.patch(&at(&o), back).await.expect(200);
        let added = app
            .post(&format!("{}/items", at(&o)), item("Jam", 1, 2.0))
            .await;
        let changed = app.patch(&item_at(&o, &tea), json!({"quantity": 3})).await;
        let removed = app.delete(&item_at(&o, &cake)).await;
        for (what, r, want) in [
            ("add", added, 201),
            ("change", changed, 200),
            ("remove", removed, 200),
        ] {
            if r.status != want {
                wrong.push(format!(
                    "{what} after unlocking {status}/{payment}: {} {}",
                    r.status, r.body
                ));
            }
        }
        let now = get(&app, &o).await;
        let names: Vec<&str> = now["items"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|i| i["name"].as_str())
            .collect();
        if names != ["Tea", "Jam"] || now["items"][0]["quantity"] != 3 {
            wrong.push(format!(
                "items after unlocking {status}/{payment}: {}",
                now["items"]
            ));
        }
    }
    assert!(wrong.is_empty(), "wrong answers:\n{}", wrong.join("\n"));
}

#[tokio::test]
async fn an_order_created_shipped_or_paid_is_not_editable() {
    let app = spawn_app().await;
    let ann = contact_named(&app, "Ann").await;
    for state in [
        json!({"status": "shipped"}),
        json!({"payment_status": "paid"}),
    ] {
        let body = with(
            with_items(ann, vec![item("Tea", 1, 5.0), item("Cake", 1, 3.5)]),
            state.clone(),
        );
        let o = create(&app, body).await;
        let tea = &o["items"][0];
        not_editable(
            app.post(&format!("{}/items", at(&o)), item("Jam", 1, 2.0))
                .await,
        );
        not_editable(app.patch(&item_at(&o, tea), json!({"quantity": 2})).await);
        not_editable(app.delete(&item_at(&o, tea)).await);
        assert_eq!(get(&app, &o).await, o, "{state}");
    }
}

#[tokio::test]
async fn put_status_also_locks_and_unlocks_the_items() {
    let (app, _, o) = app_with_two_item_order().await;
    let status = format!("{}/status", at(&o));
    app.put(&status, json!({"status": "cancelled"}))
        .await
        .expect(200);
    not_editable(
        app.post(&format!("{}/items", at(&o)), item("Jam", 1, 2.0))
            .await,
    );
    app.put(&status, json!({"status": "unfulfilled"}))
        .await
        .expect(200);
    app.post(&format!("{}/items", at(&o)), item("Jam", 1, 2.0))
        .await
        .expect(201);
}
