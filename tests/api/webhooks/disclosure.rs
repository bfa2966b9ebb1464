use super::*;

// ----- 3. include_content and include_contact_details -----

#[tokio::test]
async fn only_an_owner_an_admin_or_an_api_key_may_turn_on_content_or_contact_details() {
    let app = spawn_app().await;
    let integrator = app.member_token("member", &["integrations"]).await;
    for flag in ["include_content", "include_contact_details"] {
        let body = json!({"url": SAFE_URL, "events": ["*"], flag: true});
        forbidden(app.post_as(&integrator, "/webhooks", body.clone()).await);
        let r = app.post("/webhooks", body.clone()).await.expect(201);
        assert_eq!(r.body[flag], true);
        let admin = app.member_token("admin", &[]).await;
        let r = app
            .post_as(&admin, "/webhooks", body.clone())
            .await
            .expect(201);
        assert_eq!(r.body[flag], true);
        let owner = app.member_token("owner", &[]).await;
        app.post_as(&owner, "/webhooks", body).await.expect(201);

        let (id, _) = hook(&app, SAFE_URL, &["*"]).await;
        let at = format!("/webhooks/{id}");
        forbidden(app.patch_as(&integrator, &at, json!({flag: true})).await);
        assert_eq!(endpoint_of(&app, &id).await[flag], false);
        let r = app
            .patch_as(&admin, &at, json!({flag: true}))
            .await
            .expect(200);
        assert_eq!(r.body[flag], true);
        // Already on: sending it again turns nothing on, so the member may send it with
        // a change of their own.
        let r = app
            .patch_as(&integrator, &at, json!({flag: true, "description": "kept"}))
            .await
            .expect(200);
        assert_eq!(r.body["description"], "kept");
    }
    // Creating without either stays open to a member with integrations.
    let r = app
        .post_as(
            &integrator,
            "/webhooks",
            json!({"url": SAFE_URL, "events": ["*"], "include_content": false}),
        )
        .await
        .expect(201);
    assert_eq!(r.body["include_content"], false);
}

#[tokio::test]
async fn on_a_hipaa_workspace_content_and_contact_details_can_never_be_enabled() {
    let app = spawn_app().await;
    let (_, key) = hipaa_workspace(&app).await;
    for flag in ["include_content", "include_contact_details"] {
        let r = app
            .post_as(
                &key,
                "/webhooks",
                json!({"url": SAFE_URL, "events": ["*"], flag: true}),
            )
            .await;
        invalid(r, flag);
    }
    let r = app
        .post_as(&key, "/webhooks", json!({"url": SAFE_URL, "events": ["*"]}))
        .await
        .expect(201);
    let id = r.body["id"].as_str().unwrap();
    for flag in ["include_content", "include_contact_details"] {
        invalid(
            app.patch_as(&key, &format!("/webhooks/{id}"), json!({flag: true}))
                .await,
            flag,
        );
    }
    let got = app.get_as(&key, &format!("/webhooks/{id}")).await.ok();
    assert_eq!(got["include_content"], false);
    assert_eq!(got["include_contact_details"], false);
}

#[tokio::test]
async fn on_a_disclosing_endpoint_only_an_owner_or_admin_may_change_url_events_or_filters() {
    let app = spawn_app().await;
    let integrator = app.member_token("member", &["integrations"]).await;
    let admin = app.member_token("admin", &[]).await;
    for flag in ["include_content", "include_contact_details"] {
        let (id, _) =
            new_endpoint(&app, json!({"url": SAFE_URL, "events": ["*"], flag: true})).await;
        let at = format!("/webhooks/{id}");
        for change in [
            json!({"url": "https://elsewhere.example.com/in"}),
            json!({"events": ["contact.*"]}),
            json!({"filters": {"actor_types": ["human"]}}),
            json!({"filters": {"ignore_own_changes": true}}),
            json!({"description": "ok", "url": "https://elsewhere.example.com/in"}),
        ] {
            let r = app.patch_as(&integrator, &at, change.clone()).await;
            assert_eq!(
                (r.status, r.code()),
                (403, "insufficient_permissions"),
                "{flag}: PATCH {change} answered {}",
                r.body
            );
        }
        let unchanged = endpoint_of(&app, &id).await;
        assert_eq!(unchanged["url"], SAFE_URL);
        assert_eq!(unchanged["events"], json!(["*"]));
        assert_eq!(unchanged["description"], Value::Null);

        let r = app
            .patch_as(&integrator, &at, json!({"description": "Support inbox"}))
            .await
            .expect(200);
        assert_eq!(r.body["description"], "Support inbox");
        let r = app
            .patch_as(&integrator, &at, json!({"status": "paused"}))
            .await
            .expect(200);
        assert_eq!(r.body["status"], "paused");
        let r = app
            .patch_as(&integrator, &at, json!({"status": "active"}))
            .await
            .expect(200);
        assert_eq!(r.body["status"], "active");
        let r = app
            .patch_as(
                &admin,
                &at,
                json!({"url": "https://elsewhere.example.com/in", "events": ["contact.*"]}),
            )
            .await
            .expect(200);
        assert_eq!(r.body["url"], "https://elsewhere.example.com/in");
        app.patch(&at, json!({"filters": {"actor_types": ["api"]}}))
            .await
            .expect(200);
    }
    // On an endpoint that discloses nothing the same member may change routing.
    let (id, _) = hook(&app, SAFE_URL, &["*"]).await;
    app.patch_as(
        &integrator,
        &format!("/webhooks/{id}"),
        json!({"url": "https://elsewhere.example.com/in", "events": ["tag.*"]}),
    )
    .await
    .expect(200);
}
