use super::*;

// ----- 8. Merge -----

#[tokio::test]
async fn merge_moves_notes_and_tags_and_fills_only_the_primarys_empty_fields() {
    let app = spawn_app().await;
    let primary = new_contact(
        &app,
        json!({"first_name": "Ann", "phone": "+15550100100", "tags": ["VIP"]}),
    )
    .await;
    let secondary = new_contact(
        &app,
        json!({"first_name": "Annie", "last_name": "Lee", "phone": "+15550100200",
               "email": "annie@example.com", "chan_c_username": "annie_c", "country_code": "DE",
               "tags": ["Lead", "vip"]}),
    )
    .await;
    let bystander = new_contact(&app, json!({"first_name": "Bystander"})).await;
    let n1 = add_note(&app, &primary, "primary note").await;
    let n2 = add_note(&app, &secondary, "secondary memo one").await;
    let n3 = add_note(&app, &secondary, "secondary memo two").await;
    let m = merge(&app, &primary, &secondary).await.ok();
    assert_eq!(m["object"], "contact");
    assert_eq!(m["id"], primary["id"]);
    assert_eq!(m["first_name"], "Ann", "the primary's values are kept");
    assert_eq!(m["phone"], "+15550100100");
    assert_eq!(m["last_name"], "Lee", "empty fields are filled");
    assert_eq!(m["name"], "Ann Lee");
    assert_eq!(m["email"], "annie@example.com");
    assert_eq!(m["chan_c_username"], "annie_c");
    assert_eq!(m["country_code"], "DE");
    assert_eq!(tags_of(&m), ["Lead", "VIP"]);
    let got = app.get(&at(&primary)).await.ok();
    assert_eq!(got, m);
    let notes = app.get(&format!("{}/notes", at(&primary))).await.ok();
    let notes = notes["data"].as_array().unwrap();
    let note_ids: Vec<u64> = notes.iter().map(id).collect();
    assert_eq!(note_ids, [id(&n3), id(&n2), id(&n1)]);
    for n in notes {
        assert_eq!(n["contact_id"], primary["id"], "{n}");
    }
    // The secondary's id redirects to the primary.
    let via = app.get(&at(&secondary)).await.ok();
    assert_eq!(via, m, "GET of the secondary answers the primary");
    let via_notes = app.get(&format!("{}/notes", at(&secondary))).await.ok();
    assert_eq!(via_notes["data"].as_array().unwrap().len(), 3);
    // Lists and lookups show only the primary.
    assert_eq!(ids(&app, "").await, [id(&bystander), id(&primary)]);
    assert_eq!(id_set(&app, "tag=lead").await, set(&[&primary]));
    assert_eq!(id_set(&app, "q=memo").await, set(&[&primary]));
    assert!(!id_set(&app, "q=annie").await.contains(&id(&secondary)));
    assert!(!id_set(&app, "q=0200").await.contains(&id(&secondary)));
    assert_eq!(
        looked_up(&app, &format!("email={}", enc("annie@example.com"))).await,
        id(&primary)
    );
    assert_eq!(looked_up(&app, "handle=annie_c").await, id(&primary));
    let r = app
        .get(&format!("/contacts/lookup?phone={}", enc("+15550100200")))
        .await;
    assert!(
        r.status == 404 || id(&r.body) == id(&primary),
        "a lookup never answers the secondary: {}",
        r.body
    );
    let mut names = workspace_tags(&app).await;
    names.sort();
    assert_eq!(names, ["Lead", "VIP"]);
    let vip = tag_named(&app, "VIP").await["id"].clone();
    let r = app.delete(&format!("/tags/{vip}")).await.ok();
    assert_eq!(
        r["contacts_updated"], 1,
        "only the primary carries the tag after the merge: {r}"
    );
}

#[tokio::test]
async fn merge_fills_stage_assignee_custom_fields_and_opt_out_the_primary_lacks() {
    let app = spawn_app().await;
    let funnel = app.new_funnel("Sales", &["Lead", "Won"]).await;
    let member = app.new_user("Mia Member").await;
    app.add_member(&app.workspace_id, &member, "member", &[])
        .await;
    for body in [
        json!({"label": "Nickname", "key": "nickname"}),
        json!({"label": "Plan", "key": "plan", "type": "select", "options": ["basic", "pro"]}),
    ] {
        app.post("/custom-fields", body).await.expect(201);
    }
    let primary = new_contact(
        &app,
        json!({"first_name": "P", "custom_fields": {"nickname": "Primary"}}),
    )
    .await;
    let secondary = new_contact(
        &app,
        json!({"first_name": "S", "stage_id": funnel["stages"][1]["id"],
               "assigned_to_user_id": member,
               "custom_fields": {"nickname": "Secondary", "plan": "pro"}}),
    )
    .await;
    app.put(
        &format!("{}/dnc", at(&secondary)),
        json!({"do_not_contact": true, "reason": "asked"}),
    )
    .await
    .expect(200);
    let m = merge(&app, &primary, &secondary).await.ok();
    assert_eq!(m["id"], primary["id"]);
    assert_eq!(m["first_name"], "P");
    assert_eq!(m["stage"]["stage_name"], "Won");
    assert_eq!(m["assigned_to_user_id"], member.as_str());
    assert_eq!(
        m["custom_fields"],
        json!({"nickname": "Primary", "plan": "pro"})
    );
    assert_eq!(m["do_not_contact"], true, "an opt-out is never lost");
    assert_eq!(
        id_set(&app, &format!("stage_id={}", funnel["stages"][1]["id"])).await,
        set(&[&primary])
    );
}

#[tokio::test]
async fn merge_answers_404_for_unknown_or_foreign_ids_and_422_for_the_same_contact_twice() {
    let app = spawn_app().await;
    let (other_key, foreign) =
        foreign_record(&app, "/contacts", json!({"first_name": "Fay"})).await;
    let a = new_contact(&app, json!({"first_name": "A"})).await;
    let b = new_contact(&app, json!({"first_name": "B"})).await;
    let unknown = json!({"id": 999_999_999u64});
    invalid(merge(&app, &a, &a).await, "secondary_contact_id");
    for missing in [&unknown, &foreign] {
        no_such(
            merge(&app, missing, &b).await,
            "primary_contact_id: no such contact",
        );
        no_such(
            merge(&app, &a, missing).await,
            "secondary_contact_id: no such contact",
        );
    }
    for (body, path) in [
        (
            json!({"primary_contact_id": a["id"]}),
            "secondary_contact_id",
        ),
        (
            json!({"secondary_contact_id": b["id"]}),
            "primary_contact_id",
        ),
        (
            json!({"primary_contact_id": "abc", "secondary_contact_id": b["id"]}),
            "primary_contact_id",
        ),
        (
            json!({"primary_contact_id": a["id"], "secondary_contact_id": b["id"], "x": 1}),
            "x",
        ),
    ] {
        invalid(app.post("/contacts/merge", body).await, path);
    }
    assert_eq!(ids(&app, "").await, [id(&b), id(&a)], "nothing merged");
    let still = app.get_as(&other_key, &at(&foreign)).await.ok();
    assert_eq!(still["first_name"], "Fay");
    merge(&app, &a, &b).await.expect(200);
    // b now answers as a: merging the two again names one contact twice.
    invalid(merge(&app, &a, &b).await, "secondary_contact_id");
    invalid(merge(&app, &b, &a).await, "secondary_contact_id");
}

#[tokio::test]
async fn redirects_follow_chains_of_merges_and_end_with_the_primary() {
    let app = spawn_app().await;
    let a = new_contact(&app, json!({"first_name": "A"})).await;
    let b = new_contact(&app, json!({"first_name": "B"})).await;
    let c = new_contact(&app, json!({"first_name": "C"})).await;
    merge(&app, &a, &b).await.expect(200);
    merge(&app, &c, &a).await.expect(200);
    for old in [&a, &b] {
        let got = app.get(&at(old)).await.ok();
        assert_eq!(got["id"], c["id"], "{got}");
    }
    assert_eq!(ids(&app, "").await, [id(&c)]);
    app.delete(&at(&c)).await.expect(200);
    for gone in [&a, &b, &c] {
        not_found(app.get(&at(gone)).await);
    }
    assert_eq!(ids(&app, "").await, [0u64; 0]);
}

// ----- 15. Restart -----

#[tokio::test]
async fn contacts_tags_notes_redirects_and_the_search_index_survive_a_restart() {
    let app = spawn_app().await;
    let a = new_contact(
        &app,
        json!({"first_name": "Ann", "phone": "+15550100100", "chan_a_username": "ann_a",
               "tags": ["VIP"]}),
    )
    .await;
    let b = new_contact(
        &app,
        json!({"first_name": "Bob", "email": "bob@example.com", "tags": ["Lead"]}),
    )
    .await;
    let c = new_contact(
        &app,
        json!({"first_name": "Carl", "email": "carl@example.com"}),
    )
    .await;
    app.patch(&at(&c), json!({"first_name": "Carla"}))
        .await
        .expect(200);
    add_note(&app, &a, "loves kiwis").await;
    add_note(&app, &b, "secondary memo").await;
    merge(&app, &a, &b).await.expect(200);
    let list_before = app.get("/contacts?limit=100").await.ok();
    let notes_before = app.get(&format!("{}/notes", at(&a))).await.ok();
    let mut tags_before = workspace_tags(&app).await;
    tags_before.sort();

    let app = app.restart().await;

    let list_after = app.get("/contacts?limit=100").await.ok();
    assert_eq!(list_after, list_before);
    let notes_after = app.get(&format!("{}/notes", at(&a))).await.ok();
    assert_eq!(notes_after, notes_before);
    let mut tags_after = workspace_tags(&app).await;
    tags_after.sort();
    assert_eq!(tags_after, tags_before);
    assert_eq!(tags_after, ["Lead", "VIP"]);
    let via = app.get(&at(&b)).await.ok();
    assert_eq!(via["id"], a["id"], "the merge redirect survives");
    assert_eq!(id_set(&app, "q=kiwis").await, set(&[&a]));
    assert_eq!(id_set(&app, "q=memo").await, set(&[&a]));
    assert_eq!(id_set(&app, "q=carla").await, set(&[&c]));
    assert_eq!(id_set(&app, "q=0100").await, set(&[&a]));
    assert_eq!(id_set(&app, "tag=lead").await, set(&[&a]));
    assert_eq!(
        looked_up(&app, &format!("phone={}", enc("+15550100100"))).await,
        id(&a)
    );
    assert_eq!(
        looked_up(&app, &format!("email={}", enc("bob@example.com"))).await,
        id(&a)
    );
    assert_eq!(
        looked_up(&app, &format!("email={}", enc("carl@example.com"))).await,
        id(&c)
    );
    assert_eq!(looked_up(&app, "handle=ann_a").await, id(&a));
    let d = new_contact(&app, json!({"first_name": "Dora", "tags": ["vip"]})).await;
    assert_eq!(tags_of(&d), ["VIP"], "existing tags still match");
    assert_eq!(
        ids(&app, "").await,
        [id(&d), id(&c), id(&a)],
        "a contact made after the restart is the newest"
    );
    let n = add_note(&app, &b, "after restart").await;
    assert_eq!(n["contact_id"], a["id"]);
}

#[tokio::test]
async fn a_merge_that_fills_the_primary_tells_it_as_an_update_too() {
    let app = crate::webhooks::spawn_webhook_app().await;
    let rx = crate::receiver::TestReceiver::start().await;
    crate::webhooks::hook(&app, &rx.url, &["contact.updated", "contact.merged"]).await;
    let primary = new_contact(&app, json!({"first_name": "Ann", "tags": ["VIP"]})).await;
    let secondary = new_contact(
        &app,
        json!({"first_name": "Annie", "country_code": "DE", "tags": ["Lead"]}),
    )
    .await;
    let same = new_contact(&app, json!({"first_name": "Ann"})).await;
    merge(&app, &primary, &secondary).await.ok();
    merge(&app, &primary, &same).await.ok();
    rx.wait_for(3).await;
    assert_eq!(
        rx.event_types(),
        ["contact.merged", "contact.merged", "contact.updated"],
        "a merge that changes nothing of the primary is no update"
    );
    let updated = rx.of_type("contact.updated")[0].json();
    assert_eq!(updated["data"]["id"], primary["id"]);
    assert_eq!(updated["data"]["country_code"], "DE");
    assert_eq!(changed_fields(&updated), ["country_code", "tags"]);
}

#[tokio::test]
async fn a_merge_that_gives_the_primary_the_secondarys_opt_out_announces_it() {
    let app = crate::webhooks::spawn_webhook_app().await;
    let rx = crate::receiver::TestReceiver::start().await;
    crate::webhooks::hook(&app, &rx.url, &["contact.opted_out", "contact.merged"]).await;
    let primary = new_contact(&app, json!({"first_name": "Ann"})).await;
    let secondary = new_contact(&app, json!({"first_name": "Annie"})).await;
    app.put(
        &format!("{}/dnc", at(&secondary)),
        json!({"do_not_contact": true}),
    )
    .await
    .ok();
    rx.wait_for(1).await;
    merge(&app, &primary, &secondary).await.ok();
    rx.wait_for(3).await;
    let opted: Vec<String> = rx
        .of_type("contact.opted_out")
        .iter()
        .map(|r| r.json()["data"]["contact_id"].to_string())
        .collect();
    assert_eq!(
        opted,
        [secondary["id"].to_string(), primary["id"].to_string()],
        "the secondary when it opted out, the primary when the merge opted it out"
    );
    assert_eq!(rx.of_type("contact.merged").len(), 1);
}
