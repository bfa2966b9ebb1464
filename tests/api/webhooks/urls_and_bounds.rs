use super::*;

// ----- 2. Validation -----

#[tokio::test]
async fn http_urls_and_urls_over_2048_chars_are_refused_when_private_addresses_are_not_allowed() {
    let app = spawn_app().await;
    let body = |url: &str| json!({"url": url, "events": ["*"]});
    invalid(
        app.post("/webhooks", body("http://hooks.example.com/in"))
            .await,
        "url",
    );
    invalid(
        app.post("/webhooks", body("ftp://hooks.example.com/in"))
            .await,
        "url",
    );
    invalid(app.post("/webhooks", body("not a url")).await, "url");
    let base = "https://hooks.example.com/";
    let exactly = format!("{base}{}", "a".repeat(2048 - base.len()));
    assert_eq!(exactly.chars().count(), 2048);
    let too_long = format!("{exactly}a");
    invalid(app.post("/webhooks", body(&too_long)).await, "url");
    let (id, _) = new_endpoint(&app, body(&exactly)).await;
    invalid(
        app.patch(
            &format!("/webhooks/{id}"),
            json!({"url": "http://hooks.example.com/in"}),
        )
        .await,
        "url",
    );
    invalid(app.post("/webhooks", json!({"events": ["*"]})).await, "url");
    invalid(
        app.post("/webhooks", json!({"url": SAFE_URL})).await,
        "events",
    );
    // A host no request could reach is no URL; one spelled oddly is kept as it is read.
    for url in ["https://./", "https://-/", "https://-x.example.com/"] {
        invalid(app.post("/webhooks", body(url)).await, "url");
    }
    let (id, _) = new_endpoint(&app, body("https:///hooks.example.com")).await;
    let e = app.get(&format!("/webhooks/{id}")).await.ok();
    assert_eq!(e["url"], "https://hooks.example.com/");
}

#[tokio::test]
async fn every_private_or_internal_address_form_is_refused_with_unsafe_url() {
    let app = spawn_app().await;
    let (id, _) = hook(&app, SAFE_URL, &["*"]).await;
    let unsafe_urls = [
        "https://127.0.0.1/hook",
        "https://127.10.20.30/hook",
        "https://10.0.0.1/hook",
        "https://172.16.0.1/hook",
        "https://172.31.255.254/hook",
        "https://192.168.1.1/hook",
        "https://169.254.169.254/latest/meta-data/",
        "https://100.64.0.1/hook",
        "https://0.0.0.0/hook",
        "https://224.0.0.1/hook",
        "https://240.0.0.1/hook",
        "https://255.255.255.255/hook",
        "https://2130706433/hook",
        "https://0x7f000001/hook",
        "https://0177.0.0.1/hook",
        "https://127.1/hook",
        "https://[::1]/hook",
        "https://[::]/hook",
        "https://[fd00::1]/hook",
        "https://[fc00::1]/hook",
        "https://[fe80::1]/hook",
        "https://[::ffff:127.0.0.1]/hook",
        "https://[::ffff:10.0.0.1]/hook",
        "https://[::ffff:169.254.169.254]/hook",
        "https://localhost/hook",
        "https://LOCALHOST:8443/hook",
        "https://x.localhost/hook",
        "https://localhost./hook",
        "https://127.0.0.1./hook",
        "https://0/hook",
        "https://017700000001/hook",
        "https://[0:0:0:0:0:ffff:127.0.0.1]/hook",
        "https://[::ffff:a9fe:a9fe]/hook",
        "https://[::ffff:0:7f00:1]/hook",
        "https://[::127.0.0.1]/hook",
        "https://[ff02::1]/hook",
        "https://[fec0::1]/hook",
    ];
    for url in unsafe_urls {
        let r = app
            .post("/webhooks", json!({"url": url, "events": ["*"]}))
            .await;
        assert_eq!(
            (r.status, r.code()),
            (422, "unsafe_url"),
            "POST {url} answered {}",
            r.body
        );
        let r = app
            .patch(&format!("/webhooks/{id}"), json!({"url": url}))
            .await;
        assert_eq!(
            (r.status, r.code()),
            (422, "unsafe_url"),
            "PATCH {url} answered {}",
            r.body
        );
    }
    let list = app.get("/webhooks").await.ok();
    assert_eq!(list["data"].as_array().unwrap().len(), 1, "nothing created");
    assert_eq!(endpoint_of(&app, &id).await["url"], SAFE_URL);
    for url in [
        "https://8.8.8.8/hook",
        "https://172.32.0.1/hook",
        "https://100.128.0.1/hook",
        "https://[2606:4700::1111]/hook",
        "https://hooks.example.com:8443/in?x=1",
    ] {
        let r = app
            .post("/webhooks", json!({"url": url, "events": ["*"]}))
            .await;
        assert_eq!(r.status, 201, "{url} refused: {}", r.body);
    }
}

#[tokio::test]
async fn events_hold_one_to_a_hundred_catalog_types_prefix_wildcards_or_the_star() {
    let app = spawn_app().await;
    let post = |events: Value| app.post("/webhooks", json!({"url": SAFE_URL, "events": events}));
    invalid(post(json!([])).await, "events");
    invalid(post(json!(vec!["tag.created"; 101])).await, "events");
    invalid(post(json!(["tag.nope"])).await, "events[0]");
    invalid(post(json!(["tag.created", "nope.*"])).await, "events[1]");
    invalid(
        post(json!(["tag.created", "contact.*", "webhook.test"])).await,
        "events[2]",
    );
    invalid(post(json!(["contact"])).await, "events[0]");
    invalid(post(json!(["*.*"])).await, "events[0]");
    invalid(post(json!("tag.created")).await, "events");
    for ok in [
        json!(["*"]),
        json!(["contact.*"]),
        json!(["booking.documents.*"]),
        json!(["message.received", "message.sent"]),
    ] {
        let r = post(ok.clone()).await;
        assert_eq!(r.status, 201, "{ok} refused: {}", r.body);
        assert_eq!(r.body["events"], ok);
    }
    // The bound counts the entries sent; one named twice is kept once.
    let r = post(json!(vec!["tag.created"; 100])).await;
    assert_eq!(r.status, 201, "{}", r.body);
    assert_eq!(r.body["events"], json!(["tag.created"]));
    let (id, _) = hook(&app, SAFE_URL, &["*"]).await;
    invalid(
        app.patch(&format!("/webhooks/{id}"), json!({"events": []}))
            .await,
        "events",
    );
    invalid(
        app.patch(&format!("/webhooks/{id}"), json!({"events": ["*", "bad"]}))
            .await,
        "events[1]",
    );
}

#[tokio::test]
async fn description_and_filters_are_bounded() {
    let app = spawn_app().await;
    let post = |extra: Value| {
        let mut body = json!({"url": SAFE_URL, "events": ["*"]});
        body.as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        app.post("/webhooks", body)
    };
    invalid(
        post(json!({"description": "d".repeat(201)})).await,
        "description",
    );
    post(json!({"description": "d".repeat(200)}))
        .await
        .expect(201);
    invalid(
        post(json!({"filters": {"channels": vec!["sms"; 21]}})).await,
        "filters.channels",
    );
    post(json!({"filters": {"channels": vec!["sms"; 20]}}))
        .await
        .expect(201);
    invalid(
        post(json!({"filters": {"channels": ["chan_a", "telegraph"]}})).await,
        "filters.channels[1]",
    );
    invalid(
        post(json!({"filters": {"actor_types": vec!["api"; 8]}})).await,
        "filters.actor_types",
    );
    let all_seven = json!(["ai", "human", "customer", "system", "api", "import", "provider"]);
    let r = post(json!({"filters": {"actor_types": all_seven}}))
        .await
        .expect(201);
    assert_eq!(r.body["filters"]["actor_types"], all_seven);
    invalid(
        post(json!({"filters": {"actor_types": ["robot"]}})).await,
        "filters.actor_types[0]",
    );
    invalid(
        post(json!({"filters": {"sources": {"nope.created": ["api"]}}})).await,
        "filters.sources.nope.created",
    );
    post(json!({"filters": {"unknown": true}}))
        .await
        .expect_error(422, "validation_failed");
    post(json!({"secret": "mine"}))
        .await
        .expect_error(422, "validation_failed");
}

#[tokio::test]
async fn the_101st_endpoint_answers_409_endpoint_limit_reached() {
    let app = spawn_app().await;
    for chunk in 0..5 {
        let creates = (0..20).map(|i| {
            app.post(
                "/webhooks",
                json!({"url": format!("{SAFE_URL}/{chunk}/{i}"), "events": ["*"]}),
            )
        });
        for r in futures::future::join_all(creates).await {
            r.expect(201);
        }
    }
    let over = app
        .post("/webhooks", json!({"url": SAFE_URL, "events": ["*"]}))
        .await;
    over.expect_error(409, "endpoint_limit_reached");
    let first = app.get("/webhooks?limit=100").await.expect(200);
    assert_eq!(first.body["data"].as_array().unwrap().len(), 100);
    assert_eq!(first.body["has_more"], false);
    // Another workspace has its own 100.
    let (_, other_key) = app.new_workspace("Other").await;
    app.post_as(
        &other_key,
        "/webhooks",
        json!({"url": SAFE_URL, "events": ["*"]}),
    )
    .await
    .expect(201);
    // Deleting one makes room for one.
    let id = first.body["data"][0]["id"].as_str().unwrap();
    app.delete(&format!("/webhooks/{id}")).await.expect(200);
    app.post("/webhooks", json!({"url": SAFE_URL, "events": ["*"]}))
        .await
        .expect(201);
    app.post("/webhooks", json!({"url": SAFE_URL, "events": ["*"]}))
        .await
        .expect_error(409, "endpoint_limit_reached");
}
