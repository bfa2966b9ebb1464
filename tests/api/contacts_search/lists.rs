use super::*;

// ----- 4. Lists and filters -----

#[tokio::test]
async fn contacts_list_newest_first_and_pages_walk_without_gaps_or_repeats() {
    let app = spawn_app().await;
    let mut made = Vec::new();
    for i in 0..27 {
        made.push(id(&new_contact(
            &app,
            json!({"first_name": format!("P{i}")}),
        )
        .await));
    }
    made.reverse();
    let first = app.get("/contacts").await.ok();
    assert_eq!(first["object"], "list");
    assert_eq!(first["has_more"], true);
    let page: Vec<u64> = first["data"].as_array().unwrap().iter().map(id).collect();
    assert_eq!(page, made[..25], "default page of 25, newest first");
    assert_eq!(ids(&app, "").await, made);
    for limit in [1, 2, 5, 26, 27, 100] {
        assert_eq!(walk(&app, "", limit).await, made, "limit {limit}");
    }
}

#[tokio::test]
async fn bad_limits_answer_422_and_bad_cursors_400() {
    let app = spawn_app().await;
    new_contact(&app, json!({"first_name": "Ann"})).await;
    for limit in ["0", "101", "-1", "abc", "2.5"] {
        invalid(app.get(&format!("/contacts?limit={limit}")).await, "limit");
    }
    for cursor in ["garbage", "42", "MTIz", "%21%21"] {
        bad_request(app.get(&format!("/contacts?starting_after={cursor}")).await);
    }
}

#[tokio::test]
async fn list_filters_phone_email_tag_stage_assignee_and_channel() {
    let app = spawn_app().await;
    let funnel = app.new_funnel("Sales", &["Lead", "Won"]).await;
    let lead = funnel["stages"][0]["id"].clone();
    let won = funnel["stages"][1]["id"].clone();
    let member = app.new_user("Mia Member").await;
    app.add_member(&app.workspace_id, &member, "member", &["contacts"])
        .await;
    let other_member = app.new_user("Max Member").await;
    app.add_member(&app.workspace_id, &other_member, "member", &[])
        .await;
    let a = new_contact(
        &app,
        json!({"first_name": "A", "phone": "+15550100100", "email": "a@example.com",
               "tags": ["VIP"], "stage_id": lead, "assigned_to_user_id": member}),
    )
    .await;
    let b = new_contact(
        &app,
        json!({"first_name": "B", "phone": "+155501001009", "email": "a@example.co",
               "tags": ["Other"], "stage_id": won}),
    )
    .await;
    let c = new_contact(
        &app,
        json!({"first_name": "C", "chan_d_phone": "+4930111222"}),
    )
    .await;
    let cases: Vec<(String, BTreeSet<u64>)> = vec![
        (format!("phone={}", enc("+15550100100")), set(&[&a])),
        (format!("phone={}", enc("+155501001009")), set(&[&b])),
        ("phone=5550100".into(), set(&[])),
        (format!("phone={}", enc("+15550100")), set(&[])),
        // The filter is on the `phone` field; a channel phone is not it.
        (format!("phone={}", enc("+4930111222")), set(&[])),
        (format!("email={}", enc("a@example.com")), set(&[&a])),
        (format!("email={}", enc("a@example.co")), set(&[&b])),
        (format!("email={}", enc("a@example")), set(&[])),
        ("tag=VIP".into(), set(&[&a])),
        ("tag=vip".into(), set(&[&a])),
        ("tag=oTHER".into(), set(&[&b])),
        ("tag=nope".into(), set(&[])),
        (format!("stage_id={lead}"), set(&[&a])),
        (format!("stage_id={won}"), set(&[&b])),
        ("stage_id=999999999".into(), set(&[])),
        (format!("assigned_to_user_id={}", enc(&member)), set(&[&a])),
        (
            format!("assigned_to_user_id={}", enc(&other_member)),
            set(&[]),
        ),
        ("channel=api".into(), set(&[&a, &b, &c])),
        ("channel=sms".into(), set(&[])),
        ("channel=chan_a".into(), set(&[])),
        (format!("tag=vip&phone={}", enc("+15550100100")), set(&[&a])),
        (format!("tag=vip&stage_id={won}"), set(&[])),
        (
            format!("tag=other&email={}", enc("a@example.com")),
            set(&[]),
        ),
        ("".into(), set(&[&a, &b, &c])),
    ];
    for (query, want) in cases {
        assert_eq!(id_set(&app, &query).await, want, "GET /contacts?{query}");
    }
    for (query, path) in [
        ("channel=fax", "channel"),
        ("channel=API", "channel"),
        ("stage_id=lead", "stage_id"),
        ("stage_id=-1", "stage_id"),
    ] {
        invalid(app.get(&format!("/contacts?{query}")).await, path);
    }
}

#[tokio::test]
async fn updated_since_is_inclusive_and_needs_an_offset() {
    let start = chrono::DateTime::parse_from_rfc3339("2026-03-01T10:00:00Z")
        .unwrap()
        .with_timezone(&chrono::Utc);
    let clock = ManualClock::new(start);
    let app = spawn_app_with_clock(clock.clone()).await;
    let minute = std::time::Duration::from_secs(60);
    let a = new_contact(&app, json!({"first_name": "A"})).await;
    clock.advance(minute);
    let b = new_contact(&app, json!({"first_name": "B"})).await;
    assert_eq!(b["updated_at"], "2026-03-01T10:01:00.000Z");
    clock.advance(minute);
    let a2 = app.patch(&at(&a), json!({"last_name": "Again"})).await.ok();
    assert_eq!(a2["updated_at"], "2026-03-01T10:02:00.000Z");
    let cases = [
        ("2026-03-01T10:00:00Z", set(&[&a, &b])),
        ("2026-03-01T10:01:00Z", set(&[&a, &b])),
        ("2026-03-01T10:01:00.000Z", set(&[&a, &b])),
        ("2026-03-01T12:01:00+02:00", set(&[&a, &b])),
        ("2026-03-01T05:01:00-05:00", set(&[&a, &b])),
        ("2026-03-01T10:01:00.001Z", set(&[&a])),
        ("2026-03-01T10:02:00Z", set(&[&a])),
        ("2026-03-01T10:02:00.001Z", set(&[])),
    ];
    for (since, want) in cases {
        let query = format!("updated_since={}", enc(since));
        assert_eq!(id_set(&app, &query).await, want, "updated_since={since}");
    }
    for bad in [
        "2026-01-01T00:00:00",
        "2026-01-01",
        "yesterday",
        "2026-13-01T00:00:00Z",
    ] {
        invalid(
            app.get(&format!("/contacts?updated_since={}", enc(bad)))
                .await,
            "updated_since",
        );
    }
}

#[tokio::test]
async fn a_tag_rename_counts_as_an_update_of_every_contact_carrying_it() {
    let start = chrono::DateTime::parse_from_rfc3339("2026-03-01T10:00:00Z")
        .unwrap()
        .with_timezone(&chrono::Utc);
    let clock = ManualClock::new(start);
    let app = spawn_app_with_clock(clock.clone()).await;
    let tagged = new_contact(&app, json!({"first_name": "A", "tags": ["Gold"]})).await;
    let other = new_contact(&app, json!({"first_name": "B", "tags": ["Silver"]})).await;
    clock.advance(std::time::Duration::from_secs(60));
    let gold = app.get("/tags").await.ok()["data"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "Gold")
        .unwrap()
        .clone();
    // A new colour changes nothing a contact shows; a new name does.
    app.patch(
        &format!("/tags/{}", gold["id"]),
        json!({"color": "chart-3"}),
    )
    .await
    .expect(200);
    assert_eq!(
        id_set(&app, "updated_since=2026-03-01T10:01:00Z").await,
        set(&[])
    );
    app.patch(
        &format!("/tags/{}", gold["id"]),
        json!({"name": "Platinum"}),
    )
    .await
    .expect(200);
    let renamed = app.get(&at(&tagged)).await.ok();
    assert_eq!(renamed["updated_at"], "2026-03-01T10:01:00.000Z");
    assert_eq!(tags_of(&renamed), ["Platinum"]);
    assert_eq!(
        id_set(&app, "updated_since=2026-03-01T10:01:00Z").await,
        set(&[&tagged])
    );
    assert_eq!(
        app.get(&at(&other)).await.ok()["updated_at"],
        other["updated_at"]
    );
}
