use super::*;

// ----- 9. Tags on a contact -----

#[tokio::test]
async fn adding_tags_joins_new_names_to_the_workspace_without_doubling() {
    let app = spawn_app().await;
    app.post("/tags", json!({"name": "VIP"})).await.expect(201);
    let c = new_contact(&app, json!({"first_name": "Ann", "tags": ["Lead"]})).await;
    let path = format!("{}/tags", at(&c));
    let r = app
        .post(&path, json!({"tags": ["vip", "New", "lead", "NEW"]}))
        .await
        .ok();
    assert_eq!(r["object"], "contact");
    assert_eq!(tags_of(&r), ["Lead", "New", "VIP"]);
    let r = app.post(&path, json!({"tags": ["VIP"]})).await.ok();
    assert_eq!(tags_of(&r), ["Lead", "New", "VIP"], "no doubling");
    let mut names = workspace_tags(&app).await;
    names.sort();
    assert_eq!(names, ["Lead", "New", "VIP"]);
    let got = app.get(&at(&c)).await.ok();
    assert_eq!(tags_of(&got), ["Lead", "New", "VIP"]);
}

#[tokio::test]
async fn contact_tag_requests_need_1_to_100_names_of_1_to_80_chars() {
    let app = spawn_app().await;
    let c = new_contact(&app, json!({"first_name": "Ann"})).await;
    let path = format!("{}/tags", at(&c));
    let many: Vec<String> = (0..101).map(|i| format!("t{i}")).collect();
    let cases: Vec<(Value, &str)> = vec![
        (json!({"tags": []}), "tags"),
        (json!({"tags": many}), "tags"),
        (json!({"tags": ["ok", "x".repeat(81)]}), "tags[1]"),
        (json!({"tags": [""]}), "tags[0]"),
        (json!({}), "tags"),
        (json!({"tags": "vip"}), "tags"),
        (json!({"tags": ["a"], "extra": 1}), "extra"),
    ];
    for (body, want) in cases {
        invalid(app.post(&path, body.clone()).await, want);
        let r = app
            .call(Method::DELETE, &path)
            .token(&app.key)
            .json(body)
            .send()
            .await;
        invalid(r, want);
    }
    let hundred: Vec<String> = (0..100).map(|i| format!("{i:0>80}")).collect();
    let r = app.post(&path, json!({"tags": hundred})).await.ok();
    assert_eq!(tags_of(&r).len(), 100);
    not_found(
        app.post("/contacts/999999999/tags", json!({"tags": ["x"]}))
            .await,
    );
}

#[tokio::test]
async fn removing_tags_is_case_insensitive_and_the_tags_stay_in_the_workspace() {
    let app = spawn_app().await;
    let c = new_contact(
        &app,
        json!({"first_name": "Ann", "tags": ["VIP", "Lead", "Cold"]}),
    )
    .await;
    let path = format!("{}/tags", at(&c));
    let r = app
        .call(Method::DELETE, &path)
        .token(&app.key)
        .json(json!({"tags": ["vip", "COLD", "never-existed"]}))
        .send()
        .await
        .ok();
    assert_eq!(tags_of(&r), ["Lead"]);
    let got = app.get(&at(&c)).await.ok();
    assert_eq!(tags_of(&got), ["Lead"]);
    let mut names = workspace_tags(&app).await;
    names.sort();
    assert_eq!(names, ["Cold", "Lead", "VIP"]);
    let tagged = app.get("/contacts?tag=vip").await.ok();
    assert_eq!(tagged["data"], json!([]));
}

#[tokio::test]
async fn renaming_a_tag_shows_the_new_name_on_every_contact_carrying_it() {
    let app = spawn_app().await;
    let a = new_contact(&app, json!({"first_name": "A", "tags": ["VIP", "Lead"]})).await;
    let b = new_contact(&app, json!({"first_name": "B", "tags": ["vip"]})).await;
    let other = new_contact(&app, json!({"first_name": "O", "tags": ["Lead"]})).await;
    let vip = tag_named(&app, "VIP").await;
    app.patch(&format!("/tags/{}", vip["id"]), json!({"name": "Gold"}))
        .await
        .expect(200);
    let a = app.get(&at(&a)).await.ok();
    let b = app.get(&at(&b)).await.ok();
    let other = app.get(&at(&other)).await.ok();
    assert_eq!(tags_of(&a), ["Gold", "Lead"]);
    assert_eq!(tags_of(&b), ["Gold"]);
    assert_eq!(tags_of(&other), ["Lead"]);
    let gold = app.get("/contacts?tag=GOLD&limit=100").await.ok();
    let ids: BTreeSet<u64> = gold["data"].as_array().unwrap().iter().map(id).collect();
    assert_eq!(ids, BTreeSet::from([id(&a), id(&b)]));
    let vip_left = app.get("/contacts?tag=vip").await.ok();
    assert_eq!(vip_left["data"], json!([]));
}

#[tokio::test]
async fn deleting_a_tag_removes_it_from_every_contact_and_counts_them() {
    let app = spawn_app().await;
    let carriers = [
        new_contact(&app, json!({"first_name": "A", "tags": ["Promo", "Keep"]})).await,
        new_contact(&app, json!({"first_name": "B", "tags": ["promo"]})).await,
        new_contact(&app, json!({"first_name": "C", "tags": ["PROMO"]})).await,
    ];
    let bystander = new_contact(&app, json!({"first_name": "D", "tags": ["Keep"]})).await;
    let promo = tag_named(&app, "Promo").await["id"].clone();
    let keep = tag_named(&app, "Keep").await["id"].clone();
    let r = app.delete(&format!("/tags/{promo}")).await.ok();
    assert_eq!(r["deleted"], true, "body: {r}");
    assert_eq!(r["contacts_updated"], 3, "body: {r}");
    assert_eq!(r["id"], promo);
    for c in &carriers {
        let got = app.get(&at(c)).await.ok();
        assert!(!tags_of(&got).contains(&"Promo".to_string()), "{got}");
    }
    let first = app.get(&at(&carriers[0])).await.ok();
    assert_eq!(tags_of(&first), ["Keep"]);
    let by = app.get(&at(&bystander)).await.ok();
    assert_eq!(tags_of(&by), ["Keep"]);
    assert_eq!(workspace_tags(&app).await, ["Keep"]);
    let r = app.delete(&format!("/tags/{keep}")).await.ok();
    assert_eq!(r["contacts_updated"], 2, "body: {r}");
    let unused = app.post("/tags", json!({"name": "Unused"})).await.created();
    let r = app.delete(&format!("/tags/{}", unused["id"])).await.ok();
    assert_eq!(r["contacts_updated"], 0, "body: {r}");
}
