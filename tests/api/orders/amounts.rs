use super::*;

// ----- Totals -----

#[tokio::test]
async fn totals_are_computed_exactly_without_float_drift() {
    let app = spawn_app().await;
    let ann = contact_named(&app, "Ann").await;

    let tens = create(
        &app,
        with_items(ann, (0..10).map(|_| item("Dime", 1, 0.1)).collect()),
    )
    .await;
    assert_eq!(tens["items_total"], json!(1.0));
    assert_eq!(tens["grand_total"], json!(1.0));

    let mut body = with_items(ann, vec![item("Book", 3, 19.99)]);
    body["shipping_fee"] = json!(4.99);
    let books = create(&app, body).await;
    assert_eq!(books["items"][0]["total"], json!(59.97));
    assert_eq!(books["items_total"], json!(59.97));
    assert_eq!(books["shipping_fee"], json!(4.99));
    assert_eq!(books["grand_total"], json!(64.96));

    let mixed = create(
        &app,
        with_items(ann, vec![item("A", 1, 0.1), item("B", 1, 0.2)]),
    )
    .await;
    assert_eq!(mixed["items_total"], json!(0.3));

    let mut body = with_items(ann, vec![item("C", 7, 1.15)]);
    body["shipping_fee"] = json!(0.07);
    let sevens = create(&app, body).await;
    assert_eq!(sevens["items"][0]["total"], json!(8.05));
    assert_eq!(sevens["grand_total"], json!(8.12));
}

#[tokio::test]
async fn amounts_follow_the_decimal_places_of_the_currency() {
    let app = spawn_app().await;
    let ann = contact_named(&app, "Ann").await;
    let in_cur = |currency: &str, items: Vec<Value>, extra: Value| {
        with(
            with(with_items(ann, items), json!({ "currency": currency })),
            extra,
        )
    };
    refusals(
        &app,
        Method::POST,
        ORDERS,
        vec![
            (
                in_cur("JPY", vec![item("Tea", 1, 1.5)], json!({})),
                "items[0].unit_price",
            ),
            (
                in_cur("USD", vec![item("Tea", 1, 1.005)], json!({})),
                "items[0].unit_price",
            ),
            (
                in_cur(
                    "USD",
                    vec![item("Tea", 1, 1.0), item("Jam", 1, 0.001)],
                    json!({}),
                ),
                "items[1].unit_price",
            ),
            (
                in_cur("KWD", vec![item("Tea", 1, 1.0005)], json!({})),
                "items[0].unit_price",
            ),
            (
                in_cur(
                    "JPY",
                    vec![item("Tea", 1, 100.0)],
                    json!({"shipping_fee": 0.5}),
                ),
                "shipping_fee",
            ),
            (
                in_cur(
                    "USD",
                    vec![item("Tea", 1, 1.0)],
                    json!({"paid_amount": 0.001}),
                ),
                "paid_amount",
            ),
        ],
    )
    .await;

    let yen = create(
        &app,
        in_cur(
            "JPY",
            vec![item("Tea", 3, 1500.0)],
            json!({"shipping_fee": 700}),
        ),
    )
    .await;
    assert_eq!(yen["items_total"], json!(4500.0));
    assert_eq!(yen["grand_total"], json!(5200.0));

    let dinar = create(
        &app,
        in_cur(
            "KWD",
            vec![item("Tea", 3, 1.005)],
            json!({"shipping_fee": 0.001}),
        ),
    )
    .await;
    assert_eq!(dinar["items"][0]["unit_price"], json!(1.005));
    assert_eq!(dinar["items_total"], json!(3.015));
    assert_eq!(dinar["grand_total"], json!(3.016));
}

/// Amounts are read from the number's text, never through a float: one decimal too many
/// is refused at every size up to the limits, even where a double would round it away.
#[tokio::test]
async fn an_amount_with_more_decimals_than_the_currency_is_refused_at_every_size() {
    let app = spawn_app().await;
    let ann = contact_named(&app, "Ann").await;
    let o = create(&app, order_body(ann)).await;
    let items_of = format!("{}/items", at(&o));
    let mut wrong = Vec::new();
    for text in [
        "1.005",
        "4999.995",
        "123456.789",
        "99999999.999",
        "0.30000000000000001",
        "5.0000000000000001",
        "1e-3",
    ] {
        let amount = number(text);
        let tea = with(item("Tea", 1, 5.0), json!({ "unit_price": amount }));
        for (method, path, body, field) in [
            (
                Method::POST,
                ORDERS,
                with_items(ann, vec![tea.clone()]),
                "items[0].unit_price",
            ),
            (Method::POST, items_of.as_str(), tea, "unit_price"),
            (
                Method::POST,
                ORDERS,
                with(order_body(ann), json!({ "shipping_fee": amount })),
                "shipping_fee",
            ),
            (
                Method::PATCH,
                at(&o).as_str(),
                json!({ "paid_amount": amount }),
                "paid_amount",
            ),
        ] {
            let r = app
                .call(method.clone(), path)
                .token(&app.key)
                .json(body)
                .send()
                .await;
            let message = r.body["error"]["message"].as_str().unwrap_or_default();
            let refused = r.status == 422
                && r.paths() == [field]
                && message.contains("more than 2 decimal places");
            if !refused {
                wrong.push(format!(
                    "{method} {path} {field}={text}: {} {}",
                    r.status, r.body
                ));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "accepted or misreported:
{}",
        wrong.join("\n")
    );
    assert_eq!(list_ids(&app, "").await, [id(&o)], "no order was made");
    assert_eq!(get(&app, &o).await, o, "the order is unchanged");
}

/// Totals are sums of integer minor units, answered as JSON numbers written from them.
#[tokio::test]
async fn totals_are_answered_exactly_near_the_limits() {
    let app = spawn_app().await;
    let ann = contact_named(&app, "Ann").await;
    let body = json!({
        "contact_id": ann,
        "shipping_fee": number("4999.99"),
        "items": [
            {"name": "Big", "quantity": 99_999, "unit_price": number("99999999.99")},
            {"name": "Small", "quantity": 3, "unit_price": number("0.10")}
        ]
    });
    let o = create(&app, body).await;
    assert_eq!(o["items"][0]["unit_price"], number("99999999.99"));
    assert_eq!(o["items"][0]["total"], number("9999899999000.01"));
    assert_eq!(o["items"][1]["total"], number("0.3"));
    assert_eq!(o["items_total"], number("9999899999000.31"));
    assert_eq!(o["shipping_fee"], number("4999.99"));
    assert_eq!(o["grand_total"], number("9999900004000.3"));
}

/// The largest order the limits allow (200 items of 100,000 x 100,000,000) has exact
/// totals in every currency, including those with four decimal places.
#[tokio::test]
async fn totals_stay_exact_for_the_largest_order_the_limits_allow() {
    let app = spawn_app().await;
    let ann = contact_named(&app, "Ann").await;
    let items: Vec<Value> = (0..200)
        .map(|_| item("Big", 100_000, 100_000_000.0))
        .collect();
    let mut wrong = Vec::new();
    for currency in ["USD", "JPY", "KWD", "CLF"] {
        let body = with(
            with_items(ann, items.clone()),
            json!({ "currency": currency }),
        );
        let r = app.post(ORDERS, body).await;
        let got = (
            r.status,
            r.body["items"][0]["total"].as_f64(),
            r.body["items_total"].as_f64(),
            r.body["grand_total"].as_f64(),
        );
        let want = (201, Some(1e13), Some(2e15), Some(2e15));
        if got != want {
            wrong.push(format!("{currency}: got {got:?}, want {want:?}"));
        }
    }
    assert!(wrong.is_empty(), "wrong totals:\n{}", wrong.join("\n"));
}

/// No upper bound is given for paid_amount and shipping_fee: a huge amount is either kept
/// exactly (and the grand total is items_total + shipping_fee) or refused with 422 naming
/// the field; it is never silently changed.
#[tokio::test]
async fn a_huge_amount_is_kept_exactly_or_refused_never_altered() {
    let app = spawn_app().await;
    let ann = contact_named(&app, "Ann").await;
    let kept_or_refused = |r: &Resp, field: &str, sent: f64| -> Option<String> {
        if r.status == 422 {
            let ok = r.code() == "validation_failed" && r.paths() == vec![field.to_string()];
            return (!ok).then(|| format!("{field} {sent:e}: {}", r.body));
        }
        let b = &r.body;
        let (fee, items, grand) = (
            b["shipping_fee"].as_f64(),
            b["items_total"].as_f64(),
            b["grand_total"].as_f64(),
        );
        let exact = b[field].as_f64() == Some(sent)
            && matches!((fee, items, grand), (Some(f), Some(i), Some(g)) if g == i + f && g >= 0.0);
        (r.status >= 300 || !exact).then(|| {
            format!(
                "{field} {sent:e}: {} {field}={} items_total={} grand_total={}",
                r.status, b[field], b["items_total"], b["grand_total"]
            )
        })
    };
    let mut wrong = Vec::new();
    for fee in [1e17, 1e19, 1e300] {
        let body = with(order_body(ann), json!({ "shipping_fee": fee }));
        let r = app.post(ORDERS, body).await;
        wrong.extend(kept_or_refused(&r, "shipping_fee", fee));
    }
    let o = create(&app, order_body(ann)).await;
    for paid in [1e17, 1e300] {
        let r = app.patch(&at(&o), json!({ "paid_amount": paid })).await;
        wrong.extend(kept_or_refused(&r, "paid_amount", paid));
    }
    assert!(wrong.is_empty(), "altered amounts:\n{}", wrong.join("\n"));
}
