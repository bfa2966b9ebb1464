use super::*;
use crate::fixtures::tag_hook;

// ----- 1. The endpoints API -----

#[tokio::test]
async fn creating_an_endpoint_answers_201_with_a_we_id_and_its_secret_shown_only_there() {
    let app = spawn_app().await;
    let r = app
        .post("/webhooks", json!({"url": SAFE_URL, "events": ["tag.*", "contact.created"], "description": "CRM sync"}))
        .await
        .expect(201);
    let e = &r.body;
    let id = e["id"].as_str().unwrap();
    assert!(id.starts_with("we_") && id.len() > 3, "{e}");
    assert_eq!(e["object"], "webhook_endpoint");
    assert_eq!(e["url"], SAFE_URL);
    assert_eq!(e["events"], json!(["tag.*", "contact.created"]));
    assert_eq!(e["description"], "CRM sync");
    assert_eq!(
        e["filters"],
        json!({"channels": [], "actor_types": [], "sources": {}, "ignore_own_changes": false})
    );
    assert_eq!(e["include_content"], false);
    assert_eq!(e["include_contact_details"], false);
    assert_eq!(e["created_via"], "api");
    assert_eq!(e["status"], "active");
    assert_eq!(e["failure_count"], 0);
    assert_eq!(e["last_delivery"], Value::Null);
    let secret = e["secret"].as_str().unwrap().to_string();
    assert!(secret.len() >= 32, "{secret}");

    let got = endpoint_of(&app, id).await;
    no_secret(&got);
    assert_eq!(got["id"], id);
    assert_eq!(got["status"], "active");
    assert_eq!(got["last_delivery"], Value::Null);
    let list = app.get("/webhooks").await.ok();
    for item in list["data"].as_array().unwrap() {
        no_secret(item);
    }
    let patched = app
        .patch(&format!("/webhooks/{id}"), json!({"description": null}))
        .await
        .ok();
    no_secret(&patched);
    assert_eq!(patched["description"], Value::Null);

    let rotated = app
        .post(&format!("/webhooks/{id}/rotate-secret"), json!({}))
        .await
        .ok();
    let new_secret = rotated["secret"].as_str().unwrap();
    assert_ne!(new_secret, secret);
    assert!(new_secret.len() >= 32);
    assert_millis_utc(&rotated["previous_secret_expires_at"]);
    no_secret(&endpoint_of(&app, id).await);
}

#[tokio::test]
async fn creating_an_endpoint_twice_with_one_idempotency_key_creates_it_once() {
    let app = spawn_app().await;
    let create = || {
        app.call(Method::POST, "/webhooks")
            .token(&app.key)
            .header("Idempotency-Key", "endpoint-once")
            .json(json!({"url": SAFE_URL, "events": ["*"]}))
            .send()
    };
    let first = create().await.expect(201);
    let again = create().await.expect(201);
    assert_eq!(again.header("idempotent-replayed"), Some("true"));
    assert_eq!(again.body["id"], first.body["id"]);
    let list = app.get("/webhooks").await.ok();
    assert_eq!(list["data"].as_array().unwrap().len(), 1);
}

#[tokio::test]
async fn an_endpoint_created_by_a_connector_ignores_its_own_changes_by_default() {
    let app = spawn_app().await;
    let r = app
        .post(
            "/webhooks",
            json!({"url": SAFE_URL, "events": ["*"], "created_via": "tool_a"}),
        )
        .await
        .expect(201);
    assert_eq!(r.body["created_via"], "tool_a");
    assert_eq!(r.body["filters"]["ignore_own_changes"], true);
    let r = app
        .post(
            "/webhooks",
            json!({"url": SAFE_URL, "events": ["*"], "created_via": "tool_b",
                   "filters": {"ignore_own_changes": false}}),
        )
        .await
        .expect(201);
    assert_eq!(r.body["filters"]["ignore_own_changes"], false);
    invalid(
        app.post(
            "/webhooks",
            json!({"url": SAFE_URL, "events": ["*"], "created_via": "zapier"}),
        )
        .await,
        "created_via",
    );
}

#[tokio::test]
async fn the_endpoint_list_is_paginated_newest_first() {
    let app = spawn_app().await;
    let mut ids = Vec::new();
    for i in 0..3 {
        let (id, _) = hook(&app, &format!("{SAFE_URL}/{i}"), &["*"]).await;
        ids.push(id);
    }
    let first = app.get("/webhooks?limit=2").await.expect(200);
    assert_eq!(first.body["object"], "list");
    assert_eq!(first.body["has_more"], true);
    let got: Vec<&str> = first.body["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["id"].as_str().unwrap())
        .collect();
    assert_eq!(got, [ids[2].as_str(), ids[1].as_str()]);
    let cursor = first.body["next_cursor"].as_str().unwrap();
    let second = app
        .get(&format!("/webhooks?limit=2&starting_after={cursor}"))
        .await
        .expect(200);
    assert_eq!(second.body["has_more"], false);
    assert_eq!(second.body["data"].as_array().unwrap().len(), 1);
    assert_eq!(second.body["data"][0]["id"], ids[0].as_str());
    let all = app.get("/webhooks").await.expect(200);
    assert_eq!(all.body["data"].as_array().unwrap().len(), 3);
    invalid(app.get("/webhooks?limit=101").await, "limit");
    app.get("/webhooks?starting_after=nope").await.expect(400);
}

#[tokio::test]
async fn get_shows_no_last_delivery_before_the_first_and_its_result_after_it() {
    let app = spawn_webhook_app().await;
    let rx = TestReceiver::start().await;
    let (id, _) = hook(&app, &rx.url, &["tag.created"]).await;
    let before = endpoint_of(&app, &id).await;
    assert_eq!(before["last_delivery"], Value::Null);
    assert_eq!(before["status"], "active");
    app.post("/tags", json!({"name": "First"}))
        .await
        .expect(201);
    let got = rx.wait_for(1).await;
    let e = endpoint_when(&app, &id, "a last delivery", |e| {
        !e["last_delivery"].is_null()
    })
    .await;
    let last = &e["last_delivery"];
    assert_eq!(last["delivered"], true, "{e}");
    assert_eq!(last["status_code"], 200);
    assert_eq!(last["error"], Value::Null);
    assert_eq!(last["event_type"], "tag.created");
    assert_eq!(last["event_id"], got[0].event_id());
    assert!(last["delivery_id"].is_u64(), "{last}");
    assert_millis_utc(&last["attempted_at"]);
    assert_eq!(e["failure_count"], 0);
}

#[tokio::test]
async fn patch_sets_only_active_or_paused_and_reactivating_resets_the_failure_count() {
    let app = spawn_webhook_app().await;
    let (rx, id) = tag_hook(&app).await;
    let at = format!("/webhooks/{id}");

    let paused = app
        .patch(&at, json!({"status": "paused"}))
        .await
        .expect(200);
    assert_eq!(paused.body["status"], "paused");
    assert_eq!(paused.body["object"], "webhook_endpoint");
    for status in ["disabled", "bogus", "PAUSED"] {
        invalid(app.patch(&at, json!({"status": status})).await, "status");
    }
    invalid(
        app.post(
            "/webhooks",
            json!({"url": SAFE_URL, "events": ["*"], "status": "paused"}),
        )
        .await,
        "status",
    );
    invalid(
        app.patch(&at, json!({"created_via": "tool_a"})).await,
        "created_via",
    );
    let r = app.patch(&at, json!({})).await;
    r.expect_error(422, "validation_failed");
    let r = app.patch(&at, json!({"colour": "red"})).await;
    r.expect_error(422, "validation_failed");
    assert_eq!(endpoint_of(&app, &id).await["status"], "paused");

    // A 410 disables the endpoint with a failure counted; PATCH active resets both.
    app.patch(&at, json!({"status": "active"}))
        .await
        .expect(200);
    rx.respond_with(410);
    app.post("/tags", json!({"name": "Gone"})).await.expect(201);
    let e = endpoint_when(&app, &id, "disabled", |e| e["status"] == "disabled").await;
    assert_eq!(e["failure_count"], 1, "{e}");
    assert!(e["disabled_reason"].is_string(), "{e}");
    let again = app
        .patch(&at, json!({"status": "active"}))
        .await
        .expect(200);
    assert_eq!(again.body["status"], "active");
    assert_eq!(again.body["failure_count"], 0);
    assert_eq!(again.body["failing_since"], Value::Null);
    assert_eq!(again.body["disabled_reason"], Value::Null);
    let stored = endpoint_of(&app, &id).await;
    assert_eq!(stored["status"], "active");
    assert_eq!(stored["failure_count"], 0);
}

#[tokio::test]
async fn patch_changes_url_events_description_and_filters() {
    let app = spawn_app().await;
    let (id, _) = hook(&app, SAFE_URL, &["*"]).await;
    let r = app
        .patch(
            &format!("/webhooks/{id}"),
            json!({"url": "https://other.example.com/x", "events": ["order.*"],
                   "description": "Orders", "filters": {"actor_types": ["human"]}}),
        )
        .await
        .expect(200);
    assert_eq!(r.body["url"], "https://other.example.com/x");
    assert_eq!(r.body["events"], json!(["order.*"]));
    assert_eq!(r.body["description"], "Orders");
    assert_eq!(r.body["filters"]["actor_types"], json!(["human"]));
    assert_eq!(endpoint_of(&app, &id).await, r.body);
}

#[tokio::test]
async fn an_event_entry_named_twice_is_kept_once_where_it_first_stands() {
    let app = spawn_app().await;
    let events = ["tag.created", "order.*", "tag.created", "order.*"];
    let (id, _) = hook(&app, SAFE_URL, &events).await;
    let created = endpoint_of(&app, &id).await;
    assert_eq!(created["events"], json!(["tag.created", "order.*"]));
    let r = app
        .patch(
            &format!("/webhooks/{id}"),
            json!({"events": ["*", "message.sent", "*"]}),
        )
        .await
        .expect(200);
    assert_eq!(r.body["events"], json!(["*", "message.sent"]));
}

#[tokio::test]
async fn a_deleted_endpoint_answers_404_everywhere() {
    let app = spawn_app().await;
    let (id, _) = hook(&app, SAFE_URL, &["*"]).await;
    let (keep, _) = hook(&app, SAFE_URL, &["*"]).await;
    let r = app.delete(&format!("/webhooks/{id}")).await.expect(200);
    assert_eq!(
        r.body,
        json!({"object": "webhook_endpoint", "id": id, "deleted": true})
    );
    every_route_answers_404(&app, &app.key, &id).await;
    let list = app.get("/webhooks").await.ok();
    let ids: Vec<&str> = list["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, [keep.as_str()]);
}

#[tokio::test]
async fn unknown_ids_and_ids_of_another_workspace_answer_404() {
    let app = spawn_app().await;
    every_route_answers_404(&app, &app.key, "we_doesnotexist0000000000").await;
    // An id that cannot be an endpoint's is malformed, as a bad integer id is.
    for malformed in ["nope", "123", "we_", "we_a!b", "evt_abc"] {
        for r in every_route(&app, &app.key, malformed).await {
            bad_request(r);
        }
    }
    let (_, other_key) = app.new_workspace("Other").await;
    let r = app
        .post_as(
            &other_key,
            "/webhooks",
            json!({"url": SAFE_URL, "events": ["*"]}),
        )
        .await
        .expect(201);
    let theirs = r.body["id"].as_str().unwrap().to_string();
    every_route_answers_404(&app, &app.key, &theirs).await;
    let still = app
        .get_as(&other_key, &format!("/webhooks/{theirs}"))
        .await
        .expect(200);
    assert_eq!(still.body["status"], "active");
    let mine = app.get("/webhooks").await.expect(200);
    assert_eq!(mine.body["data"], json!([]));
}

#[tokio::test]
async fn every_webhook_route_needs_the_integrations_permission() {
    let app = spawn_app().await;
    let (id, _) = hook(&app, SAFE_URL, &["*"]).await;
    let outsider = app.member_token("member", &["contacts", "inbox"]).await;
    let at = format!("/webhooks/{id}");
    forbidden(app.get_as(&outsider, "/webhooks").await);
    forbidden(
        app.post_as(
            &outsider,
            "/webhooks",
            json!({"url": SAFE_URL, "events": ["*"]}),
        )
        .await,
    );
    forbidden(app.get_as(&outsider, &at).await);
    forbidden(
        app.patch_as(&outsider, &at, json!({"description": "x"}))
            .await,
    );
    forbidden(
        app.post_as(&outsider, &format!("{at}/rotate-secret"), json!({}))
            .await,
    );
    forbidden(
        app.post_as(&outsider, &format!("{at}/test"), json!({}))
            .await,
    );
    forbidden(app.get_as(&outsider, &format!("{at}/deliveries")).await);
    forbidden(
        app.post_as(
            &outsider,
            &format!("{at}/deliveries/1/redeliver"),
            json!({}),
        )
        .await,
    );
    forbidden(app.delete_as(&outsider, &at).await);
    assert_eq!(endpoint_of(&app, &id).await["status"], "active");

    let integrator = app.member_token("member", &["integrations"]).await;
    app.get_as(&integrator, "/webhooks").await.expect(200);
    app.get_as(&integrator, &at).await.expect(200);
    app.post_as(
        &integrator,
        "/webhooks",
        json!({"url": SAFE_URL, "events": ["*"]}),
    )
    .await
    .expect(201);
    app.patch_as(&integrator, &at, json!({"description": "mine"}))
        .await
        .expect(200);
    app.delete_as(&integrator, &at).await.expect(200);
    app.call(Method::GET, "/webhooks")
        .send()
        .await
        .expect_error(401, "unauthenticated");
}
