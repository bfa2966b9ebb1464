use super::*;

// ----- 5. Search -----

#[tokio::test]
async fn search_requires_every_word_to_match_case_insensitively() {
    let app = spawn_app().await;
    let ann_lee = new_contact(
        &app,
        json!({"first_name": "Ann", "last_name": "Lee", "email": "ann.lee@example.com"}),
    )
    .await;
    let ann_stone = new_contact(&app, json!({"first_name": "Ann", "last_name": "Stone"})).await;
    let bob_lee = new_contact(&app, json!({"first_name": "Bob", "last_name": "Lee"})).await;
    let cases = [
        ("ann lee", set(&[&ann_lee])),
        ("lee ann", set(&[&ann_lee])),
        ("ANN LEE", set(&[&ann_lee])),
        ("aNn", set(&[&ann_lee, &ann_stone])),
        ("lee", set(&[&ann_lee, &bob_lee])),
        ("ann bob", set(&[])),
        ("ann stone lee", set(&[])),
        ("stone", set(&[&ann_stone])),
        ("nobody", set(&[])),
        // Only symbols: nothing to search by matches nothing; an empty q is no filter.
        ("😀", set(&[])),
        ("( - %", set(&[])),
        ("", set(&[&ann_lee, &ann_stone, &bob_lee])),
        ("  ", set(&[&ann_lee, &ann_stone, &bob_lee])),
    ];
    for (q, want) in cases {
        let query = format!("q={}", enc(q));
        assert_eq!(id_set(&app, &query).await, want, "q={q}");
    }
}

#[tokio::test]
async fn search_matches_name_email_phones_usernames_and_notes() {
    let app = spawn_app().await;
    let q = new_contact(
        &app,
        json!({
            "first_name": "Quentin", "last_name": "Marsh", "email": "qmail@fastpost.io",
            "phone": "+15550100199", "chan_d_phone": "+4930123456",
            "chan_a_username": "@skater_q", "chan_c_username": "cchandle",
            "chan_e_username": "eehandle"
        }),
    )
    .await;
    let other = new_contact(
        &app,
        json!({"first_name": "Other", "phone": "+15550100288"}),
    )
    .await;
    add_note(&app, &q, "Allergic to peanuts, call after lunch").await;
    add_note(&app, &other, "Nothing special").await;
    let cases = [
        ("quentin", set(&[&q])),
        ("marsh", set(&[&q])),
        ("fastpost", set(&[&q])),
        ("qmail@fastpost.io", set(&[&q])),
        ("0199", set(&[&q])),
        ("100199", set(&[&q])),
        ("5550100199", set(&[&q])),
        ("+15550100199", set(&[&q])),
        ("0288", set(&[&other])),
        ("3456", set(&[&q])),
        ("4930123456", set(&[&q])),
        ("skater", set(&[&q])),
        ("skater_q", set(&[&q])),
        ("cchandle", set(&[&q])),
        ("eehandle", set(&[&q])),
        ("peanuts", set(&[&q])),
        ("PEANUTS lunch", set(&[&q])),
        ("peanuts quentin", set(&[&q])),
        ("peanuts other", set(&[])),
        ("special", set(&[&other])),
        ("555", set(&[&q, &other])),
    ];
    for (text, want) in cases {
        let query = format!("q={}", enc(text));
        assert_eq!(id_set(&app, &query).await, want, "q={text}");
    }
}

#[tokio::test]
async fn search_follows_patches_and_ignores_other_workspaces() {
    let app = spawn_app().await;
    let (_, other_key) = app.new_workspace("Other").await;
    app.post_as(
        &other_key,
        "/contacts",
        json!({"first_name": "Wanda", "phone": "+15550100300"}),
    )
    .await
    .expect(201);
    let c = new_contact(
        &app,
        json!({"first_name": "Oldname", "phone": "+15550100100", "email": "old@example.com"}),
    )
    .await;
    app.patch(
        &at(&c),
        json!({"first_name": "Newname", "phone": "+15550100200", "email": "new@example.com"}),
    )
    .await
    .expect(200);
    not_found(
        app.get(&format!(
            "/contacts/lookup?email={}",
            enc("old@example.com")
        ))
        .await,
    );
    assert_eq!(
        looked_up(&app, &format!("email={}", enc("new@example.com"))).await,
        id(&c)
    );
    assert_eq!(id_set(&app, "q=old").await, set(&[]));
    assert_eq!(id_set(&app, "q=oldname").await, set(&[]));
    assert_eq!(id_set(&app, "q=newname").await, set(&[&c]));
    assert_eq!(id_set(&app, "q=100100").await, set(&[]));
    assert_eq!(id_set(&app, "q=100200").await, set(&[&c]));
    assert_eq!(id_set(&app, "q=wanda").await, set(&[]));
    not_found(
        app.get(&format!("/contacts/lookup?phone={}", enc("+15550100100")))
            .await,
    );
    not_found(
        app.get(&format!("/contacts/lookup?phone={}", enc("+15550100300")))
            .await,
    );
    assert_eq!(
        looked_up(&app, &format!("phone={}", enc("+15550100200"))).await,
        id(&c)
    );
}

#[tokio::test]
async fn q_is_limited_to_200_characters() {
    let app = spawn_app().await;
    new_contact(&app, json!({"first_name": "Ann"})).await;
    invalid(
        app.get(&format!("/contacts?q={}", "a".repeat(201))).await,
        "q",
    );
    invalid(
        app.get(&format!("/contacts?q={}", enc(&"é".repeat(201))))
            .await,
        "q",
    );
    assert_eq!(
        ids(&app, &format!("q={}", "a".repeat(200))).await,
        [0u64; 0]
    );
    let body = app
        .get(&format!("/contacts?q={}", enc(&"é".repeat(200))))
        .await
        .ok();
    assert_eq!(body["data"], json!([]));
}

#[tokio::test]
async fn a_search_shared_by_300_contacts_paginates_without_gaps_or_repeats() {
    let app = spawn_app().await;
    let mut all = BTreeSet::new();
    let mut even = BTreeSet::new();
    for chunk in 0..6 {
        let made = join_all((0..50).map(|i| {
            let n = chunk * 50 + i;
            let last = if n % 2 == 0 { "Even" } else { "Odd" };
            let app = &app;
            async move {
                let c = new_contact(
                    app,
                    json!({"first_name": "Zebra", "last_name": last, "email": format!("z{n}@example.com")}),
                )
                .await;
                (id(&c), last == "Even")
            }
        }))
        .await;
        for (id, is_even) in made {
            all.insert(id);
            if is_even {
                even.insert(id);
            }
        }
    }
    for i in 0..5 {
        new_contact(
            &app,
            json!({"first_name": "Yak", "last_name": format!("Even{i}")}),
        )
        .await;
    }
    assert_eq!(all.len(), 300);
    for (query, limit, want) in [
        ("q=zebra", 100, &all),
        ("q=zebra", 7, &all),
        ("q=ZEBRA%20even", 40, &even),
        ("q=even%20zebra", 100, &even),
    ] {
        let got = walk(&app, query, limit).await;
        assert!(
            got.windows(2).all(|w| w[0] > w[1]),
            "{query}: newest first, no repeats"
        );
        let got: BTreeSet<u64> = got.into_iter().collect();
        assert_eq!(&got, want, "{query} limit {limit}");
    }
    let first = app.get("/contacts?q=zebra&limit=100").await.ok();
    assert_eq!(first["has_more"], true);
    assert_eq!(
        id(&first["data"][0]),
        *all.iter().next_back().unwrap(),
        "the newest zebra first"
    );
}

#[tokio::test]
async fn an_accented_word_is_found_however_its_accent_was_typed() {
    let app = spawn_app().await;
    // `E` + U+0301 (decomposed) and `É` (one character) are one text in NFC.
    let elodie = new_contact(&app, json!({"first_name": "E\u{301}lodie"})).await;
    let noted = new_contact(&app, json!({"first_name": "Noted"})).await;
    app.post(
        &format!("/contacts/{}/notes", noted["id"]),
        json!({"body": "likes cre\u{300}me"}),
    )
    .await
    .expect(201);
    for (q, want) in [
        ("E\u{301}lodie", set(&[&elodie])),
        ("\u{c9}lodie", set(&[&elodie])),
        ("cr\u{e8}me", set(&[&noted])),
        ("cre\u{300}me noted", set(&[&noted])),
    ] {
        let query = format!("q={}", enc(q));
        assert_eq!(id_set(&app, &query).await, want, "q={q:?}");
    }
}
