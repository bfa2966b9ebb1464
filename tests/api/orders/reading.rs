use super::*;

// ----- Read and list -----

#[tokio::test]
async fn an_order_is_read_by_id_and_unknown_or_foreign_ids_are_not_found() {
    let app = spawn_app().await;
    let (_, other_key) = app.new_workspace("Other").await;
    let zed = new_contact_in(&app, &other_key, "Zed").await;
    let foreign = app
        .post_as(&other_key, ORDERS, order_body(zed))
        .await
        .created();
    let ann = contact_named(&app, "Ann").await;
    let o = create(&app, order_body(ann)).await;

    let read = get(&app, &o).await;
    assert_fields(&read, ORDER_FIELDS);
    assert_eq!(read, o);
    assert_eq!(read["items"][0]["name"], "Tea", "with items");

    not_found(app.get(&format!("{ORDERS}/999999999")).await);
    not_found(app.get(&at(&foreign)).await);
    // The owner of the foreign order still sees it.
    app.get_as(&other_key, &at(&foreign)).await.expect(200);
    for bad in ["abc", "0", "-1", "1.5"] {
        bad_request(app.get(&format!("{ORDERS}/{bad}")).await);
    }
    // A foreign order can't be changed either.
    let foreign_item = &foreign["items"][0];
    not_found(app.patch(&at(&foreign), json!({"notes": "x"})).await);
    not_found(
        app.put(
            &format!("{}/status", at(&foreign)),
            json!({"status": "shipped"}),
        )
        .await,
    );
    not_found(
        app.post(&format!("{}/items", at(&foreign)), item("Jam", 1, 1.0))
            .await,
    );
    not_found(
        app.patch(&item_at(&foreign, foreign_item), json!({"quantity": 2}))
            .await,
    );
    not_found(app.delete(&item_at(&foreign, foreign_item)).await);
    not_found(
        app.post(&format!("{}/timeline", at(&foreign)), json!({"note": "x"}))
            .await,
    );
    let untouched = app.get_as(&other_key, &at(&foreign)).await.ok();
    assert_eq!(untouched, foreign);
    // The list of one workspace never shows the other's orders.
    assert_eq!(list_ids(&app, "").await, vec![id(&o)]);
}

#[tokio::test]
async fn orders_are_listed_newest_first_in_pages() {
    let app = spawn_app().await;
    let ann = contact_named(&app, "Ann").await;
    let mut made = Vec::new();
    for _ in 0..7 {
        made.push(id(&create(&app, order_body(ann)).await));
    }
    let newest_first: Vec<u64> = made.iter().rev().copied().collect();

    let all = app.get(ORDERS).await.ok();
    assert_eq!(all["object"], "list");
    assert_eq!(all["has_more"], false);
    assert!(all["next_cursor"].is_null(), "{all}");
    let first = &all["data"][0];
    assert_fields(first, ORDER_FIELDS);
    assert_eq!(first["object"], "order");
    assert_eq!(first["items"][0]["name"], "Tea");
    assert_eq!(list_ids(&app, "").await, newest_first);

    let (sizes, seen) = walk_pages(&app, ORDERS, 3).await;
    assert_eq!(sizes, vec![3, 3, 1]);
    assert_eq!(seen, newest_first);

    // Default page size is 25, at most 100.
    app.get(&format!("{ORDERS}?limit=100")).await.expect(200);
    for bad in ["0", "101", "-1", "abc"] {
        invalid(app.get(&format!("{ORDERS}?limit={bad}")).await, "limit");
    }
    bad_request(app.get(&format!("{ORDERS}?starting_after=garbage!")).await);
}

#[tokio::test]
async fn the_default_page_holds_twenty_five_orders() {
    let app = spawn_app().await;
    let ann = contact_named(&app, "Ann").await;
    for _ in 0..26 {
        create(&app, order_body(ann)).await;
    }
    let page = app.get(ORDERS).await.ok();
    assert_eq!(page["data"].as_array().unwrap().len(), 25);
    assert_eq!(page["has_more"], true);
    let cursor = page["next_cursor"].as_str().unwrap();
    let rest = list_ids(&app, &format!("?starting_after={cursor}")).await;
    assert_eq!(rest.len(), 1);
}

#[tokio::test]
async fn orders_filter_by_status_payment_status_and_contact() {
    let app = spawn_app().await;
    let ann = contact_named(&app, "Ann").await;
    let bob = contact_named(&app, "Bob").await;
    let make = |contact: u64, status: &str, payment: &str| {
        with(
            order_body(contact),
            json!({"status": status, "payment_status": payment}),
        )
    };
    let a1 = id(&create(&app, make(ann, "unfulfilled", "pending")).await);
    let a2 = id(&create(&app, make(ann, "shipped", "paid")).await);
    let b1 = id(&create(&app, make(bob, "shipped", "pending")).await);
    let b2 = id(&create(&app, make(bob, "cancelled", "paid")).await);

    assert_eq!(list_ids(&app, "?status=shipped").await, vec![b1, a2]);
    assert_eq!(list_ids(&app, "?status=unfulfilled").await, vec![a1]);
    assert_eq!(list_ids(&app, "?status=cancelled").await, vec![b2]);
    assert!(list_ids(&app, "?status=delivered").await.is_empty());
    assert_eq!(list_ids(&app, "?payment_status=paid").await, vec![b2, a2]);
    assert_eq!(
        list_ids(&app, "?payment_status=pending").await,
        vec![b1, a1]
    );
    assert_eq!(
        list_ids(&app, &format!("?contact_id={ann}")).await,
        vec![a2, a1]
    );
    assert_eq!(
        list_ids(&app, &format!("?contact_id={bob}")).await,
        vec![b2, b1]
    );
    assert_eq!(
        list_ids(
            &app,
            &format!("?contact_id={bob}&status=shipped&payment_status=pending")
        )
        .await,
        vec![b1]
    );
    assert!(list_ids(&app, "?contact_id=999999999").await.is_empty());
    // Filters and pages work together.
    let page = app
        .get(&format!("{ORDERS}?payment_status=paid&limit=1"))
        .await
        .ok();
    assert_eq!(page["data"][0]["id"], b2);
    let cursor = page["next_cursor"].as_str().unwrap();
    assert_eq!(
        list_ids(
            &app,
            &format!("?payment_status=paid&limit=1&starting_after={cursor}")
        )
        .await,
        vec![a2]
    );

    for (query, path) in [
        ("status=pending", "status"),
        ("status=SHIPPED", "status"),
        ("status=", "status"),
        ("payment_status=refunded", "payment_status"),
        ("contact_id=abc", "contact_id"),
        ("contact_id=-1", "contact_id"),
    ] {
        let r = app.get(&format!("{ORDERS}?{query}")).await;
        let got = (r.status, r.code().to_string(), r.paths());
        assert_eq!(
            got,
            (422, "validation_failed".to_string(), vec![path.to_string()]),
            "GET /orders?{query}: {}",
            r.body
        );
    }
}

#[tokio::test]
async fn created_since_is_inclusive_and_needs_an_offset() {
    let start: DateTime<Utc> = "2026-03-01T10:00:00Z".parse().unwrap();
    let clock = ManualClock::new(start);
    let app = spawn_app_with_clock(clock.clone()).await;
    let ann = contact_named(&app, "Ann").await;
    let a = create(&app, order_body(ann)).await;
    clock.advance(Duration::from_secs(1));
    let b = create(&app, order_body(ann)).await;
    clock.advance(Duration::from_secs(1));
    let c = create(&app, with(order_body(ann), json!({"status": "shipped"}))).await;
    assert_eq!(a["created_at"], "2026-03-01T10:00:00.000Z");
    let (a, b, c) = (id(&a), id(&b), id(&c));

    let since = |t: &str| format!("?created_since={t}");
    assert_eq!(
        list_ids(&app, &since("2026-03-01T10:00:01Z")).await,
        vec![c, b]
    );
    assert_eq!(
        list_ids(&app, &since("2026-03-01T10:00:01.000Z")).await,
        vec![c, b]
    );
    assert_eq!(
        list_ids(&app, &since("2026-03-01T10:00:01.001Z")).await,
        vec![c]
    );
    // The same instant written with another offset ('+' encoded in the query).
    assert_eq!(
        list_ids(&app, &since("2026-03-01T12:00:01%2B02:00")).await,
        vec![c, b]
    );
    assert_eq!(
        list_ids(&app, &since("2026-03-01T05:00:00-05:00")).await,
        vec![c, b, a]
    );
    assert_eq!(
        list_ids(&app, &since("2026-02-01T00:00:00Z")).await,
        vec![c, b, a]
    );
    assert!(list_ids(&app, &since("2026-03-01T10:00:02.001Z"))
        .await
        .is_empty());
    assert_eq!(
        list_ids(
            &app,
            "?created_since=2026-03-01T10:00:01Z&status=unfulfilled"
        )
        .await,
        vec![b]
    );

    for bad in [
        "2026-03-01T10:00:01",
        "2026-03-01",
        "yesterday",
        "",
        "2026-13-01T00:00:00Z",
    ] {
        let r = app.get(&format!("{ORDERS}{}", since(bad))).await;
        let got = (r.status, r.code().to_string(), r.paths());
        assert_eq!(
            got,
            (
                422,
                "validation_failed".to_string(),
                vec!["created_since".to_string()]
            ),
            "created_since={bad}: {}",
            r.body
        );
    }
}
