use super::*;

// ----- Timeline -----

#[tokio::test]
async fn timeline_notes_are_added_with_their_time() {
    let start: DateTime<Utc> = "2026-03-01T10:00:00Z".parse().unwrap();
    let clock = ManualClock::new(start);
    let app = spawn_app_with_clock(clock.clone()).await;
    let ann = contact_named(&app, "Ann").await;
    let o = create(&app, order_body(ann)).await;
    let path = format!("{}/timeline", at(&o));

    clock.advance(Duration::from_secs(5));
    let r = app.post(&path, json!({"note": "Packed"})).await.created();
    assert_eq!(r["object"], "order");
    assert_eq!(r["id"], o["id"]);
    let timeline = r["timeline"].as_array().unwrap();
    assert_eq!(timeline.len(), 1);
    assert_fields(&timeline[0], TIMELINE_FIELDS);
    assert!(timeline[0]["id"].as_u64().is_some(), "{r}");
    assert_eq!(timeline[0]["note"], "Packed");
    assert_eq!(timeline[0]["created_at"], "2026-03-01T10:00:05.000Z");

    clock.advance(Duration::from_secs(5));
    let long = "é".repeat(2000);
    let r = app.post(&path, json!({ "note": long })).await.created();
    let notes: Vec<&str> = r["timeline"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|e| e["note"].as_str())
        .collect();
    assert_eq!(notes, ["Packed", long.as_str()], "oldest first, both kept");
    assert_eq!(r["timeline"][1]["created_at"], "2026-03-01T10:00:10.000Z");
    assert_ne!(r["timeline"][0]["id"], r["timeline"][1]["id"]);
    assert_eq!(r["items"], o["items"], "the items are untouched");
    assert_eq!(get(&app, &o).await, r);

    // A note may be added in any state.
    app.patch(
        &at(&o),
        json!({"status": "cancelled", "payment_status": "paid"}),
    )
    .await
    .expect(200);
    app.post(&path, json!({"note": "Refund requested"}))
        .await
        .expect(201);
}

#[tokio::test]
async fn a_timeline_note_holds_one_to_two_thousand_characters() {
    let app = spawn_app().await;
    let ann = contact_named(&app, "Ann").await;
    let o = create(&app, order_body(ann)).await;
    refusals(
        &app,
        Method::POST,
        &format!("{}/timeline", at(&o)),
        vec![
            (json!({"note": ""}), "note"),
            (json!({"note": "n".repeat(2001)}), "note"),
            (json!({"note": null}), "note"),
            (json!({"note": 5}), "note"),
            (json!({}), "note"),
        ],
    )
    .await;
    assert_eq!(get(&app, &o).await["timeline"], json!([]));
    not_found(
        app.post(
            &format!("{ORDERS}/999999999/timeline"),
            json!({"note": "x"}),
        )
        .await,
    );
}

// ----- Merge, restart, permissions -----

#[tokio::test]
async fn the_orders_of_a_merged_contact_follow_the_primary() {
    let app = spawn_app().await;
    let primary = contact_named(&app, "Ann").await;
    let secondary = contact_named(&app, "Annie").await;
    let bystander = contact_named(&app, "Bob").await;
    let own = id(&create(&app, order_body(primary)).await);
    let moved1 = id(&create(&app, order_body(secondary)).await);
    let other = id(&create(&app, order_body(bystander)).await);
    let moved2 = id(&create(
        &app,
        with(order_body(secondary), json!({"status": "shipped"})),
    )
    .await);

    app.post(
        "/contacts/merge",
        json!({"primary_contact_id": primary, "secondary_contact_id": secondary}),
    )
    .await
    .expect(200);

    assert_eq!(
        list_ids(&app, &format!("?contact_id={primary}")).await,
        vec![moved2, moved1, own]
    );
    for moved in [moved1, moved2] {
        let o = app.get(&format!("{ORDERS}/{moved}")).await.ok();
        assert_eq!(o["contact_id"], primary, "{o}");
    }
    // The secondary's id now answers as the primary.
    assert_eq!(
        list_ids(&app, &format!("?contact_id={secondary}")).await,
        vec![moved2, moved1, own]
    );
    assert_eq!(
        list_ids(&app, &format!("?contact_id={secondary}&status=shipped")).await,
        vec![moved2]
    );
    assert_eq!(
        list_ids(&app, &format!("?contact_id={bystander}")).await,
        vec![other]
    );
    let all = list_ids(&app, "").await;
    assert_eq!(
        all,
        vec![moved2, other, moved1, own],
        "nothing lost or copied"
    );
}

#[tokio::test]
async fn orders_survive_a_restart() {
    let (app, ann, o) = app_with_two_item_order().await;
    let tea = o["items"][0].clone();
    app.patch(&item_at(&o, &tea), json!({"quantity": 4}))
        .await
        .expect(200);
    app.post(&format!("{}/items", at(&o)), item("Jam", 1, 2.25))
        .await
        .expect(201);
    app.post(&format!("{}/timeline", at(&o)), json!({"note": "Packed"}))
        .await
        .expect(201);
    let done = app
        .patch(&at(&o), json!({"status": "shipped", "payment_status": "paid", "paid_amount": 25.75, "shipping_fee": 0.01, "notes": "Fragile"}))
        .await
        .ok();
    let yen = create(
        &app,
        with(
            order_body(ann),
            json!({"currency": "JPY", "items": [item("Tea", 2, 750.0)]}),
        ),
    )
    .await;

    let app = app.restart().await;
    assert_eq!(get(&app, &o).await, done);
    assert_eq!(get(&app, &yen).await, yen);
    assert_eq!(done["grand_total"], json!(25.76));
    assert_eq!(list_ids(&app, "").await, vec![id(&yen), id(&o)]);
    assert_eq!(list_ids(&app, "?status=shipped").await, vec![id(&o)]);
    // Still locked after the restart.
    not_editable(
        app.post(&format!("{}/items", at(&o)), item("Jam", 1, 2.0))
            .await,
    );
    // New orders don't reuse ids.
    let after = create(&app, order_body(ann)).await;
    assert!(id(&after) > id(&yen));
}

#[tokio::test]
async fn orders_need_the_orders_permission() {
    let (app, ann, o) = app_with_two_item_order().await;
    let tea = o["items"][0].clone();
    let without = app.member_token("member", &["contacts"]).await;
    let none = app.member_token("member", &[]).await;
    let with_orders = app.member_token("member", &["orders"]).await;

    for token in [&without, &none] {
        let refused = [
            app.get_as(token, ORDERS).await,
            app.post_as(token, ORDERS, order_body(ann)).await,
            app.get_as(token, &at(&o)).await,
            app.patch_as(token, &at(&o), json!({"notes": "x"})).await,
            app.put_as(
                token,
                &format!("{}/status", at(&o)),
                json!({"status": "shipped"}),
            )
            .await,
            app.post_as(token, &format!("{}/items", at(&o)), item("Jam", 1, 1.0))
                .await,
            app.patch_as(token, &item_at(&o, &tea), json!({"quantity": 2}))
                .await,
            app.delete_as(token, &item_at(&o, &tea)).await,
            app.post_as(token, &format!("{}/timeline", at(&o)), json!({"note": "x"}))
                .await,
        ];
        for r in refused {
            forbidden(r);
        }
    }
    assert_eq!(get(&app, &o).await, o, "nothing changed");

    app.get_as(&with_orders, ORDERS).await.expect(200);
    app.get_as(&with_orders, &at(&o)).await.expect(200);
    let made = app
        .post_as(&with_orders, ORDERS, order_body(ann))
        .await
        .created();
    app.patch_as(&with_orders, &at(&made), json!({"notes": "ok"}))
        .await
        .expect(200);
    app.post_as(
        &with_orders,
        &format!("{}/timeline", at(&made)),
        json!({"note": "ok"}),
    )
    .await
    .expect(201);
    // An admin needs no listed permission.
    let admin = app.member_token("admin", &[]).await;
    app.get_as(&admin, ORDERS).await.expect(200);
}

#[tokio::test]
async fn creating_an_order_with_an_idempotency_key_creates_it_once() {
    let app = spawn_app().await;
    let ann = contact_named(&app, "Ann").await;
    let send = |body: Value| {
        app.call(Method::POST, ORDERS)
            .token(&app.key)
            .header("Idempotency-Key", "order-1")
            .json(body)
            .send()
    };
    let first = send(order_body(ann)).await.created();
    let again = send(order_body(ann)).await.created();
    assert_eq!(first, again);
    assert_eq!(list_ids(&app, "").await, vec![id(&first)]);
    send(with(order_body(ann), json!({"notes": "other"})))
        .await
        .expect_error(409, "idempotency_key_reused");
}
