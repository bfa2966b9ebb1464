//! GET /users and /users/{id}: the workspace's members, for any team member.

use serde_json::json;

use crate::helpers::*;

#[tokio::test]
async fn the_owner_is_listed_with_every_permission_and_members_with_theirs() {
    let app = spawn_app().await;
    let mia = app.new_user("Mia Member").await;
    app.add_member(&app.workspace_id, &mia, "member", &["inbox", "orders"])
        .await;
    let token = app.token_for(&mia, 3600).await;

    let users = listed(app.get_as(&token, "/users").await);
    assert_eq!(users.len(), 2);
    let me = &users[0];
    assert_fields(me, "object id name email role permissions");
    assert_eq!(me["object"], "user");
    assert_eq!(me["id"], mia.as_str(), "newest membership first");
    assert_eq!(me["role"], "member");
    assert_eq!(me["permissions"], json!(["inbox", "orders"]));
    let owner = &users[1];
    assert_eq!(owner["role"], "owner");
    assert_eq!(owner["permissions"], json!(ALL_PERMISSIONS));
    assert_eq!(me["email"], "mia.member@example.com");
    assert!(owner["email"].is_null(), "the bootstrap owner has no email");

    let one = app.get(&format!("/users/{mia}")).await.expect(200);
    assert_eq!(one.body, *me);
}

#[tokio::test]
async fn people_outside_the_workspace_are_not_found() {
    let app = spawn_app().await;
    let outsider = app.new_user("Otto Outsider").await;
    not_found(app.get(&format!("/users/{outsider}")).await);
    not_found(app.get("/users/usr_nobody").await);
    // Not a user id at all: malformed, as a bad integer id is.
    bad_request(app.get("/users/42").await);
    let (other_ws, _) = app.new_workspace("Other").await;
    app.add_member(&other_ws, &outsider, "admin", &[]).await;
    not_found(app.get(&format!("/users/{outsider}")).await);
}

#[tokio::test]
async fn users_page_with_cursors() {
    let app = spawn_app().await;
    for i in 0..4 {
        let u = app.new_user(&format!("Person {i}")).await;
        app.add_member(&app.workspace_id, &u, "member", &[]).await;
    }
    let first = app.get("/users?limit=3").await.ok();
    assert_eq!(first["has_more"], true);
    let cursor = first["next_cursor"].as_str().unwrap();
    let rest = listed(
        app.get(&format!("/users?limit=3&starting_after={cursor}"))
            .await,
    );
    assert_eq!(rest.len(), 2);
    let mut seen: Vec<String> = first["data"]
        .as_array()
        .unwrap()
        .iter()
        .chain(rest.iter())
        .map(|u| u["id"].as_str().unwrap().to_string())
        .collect();
    seen.dedup();
    assert_eq!(seen.len(), 5, "no member twice, none missed");
    bad_request(app.get("/users?starting_after=garbage").await);
    invalid(app.get("/users?limit=0").await, "limit");
}

/// A cursor names a place in the list (a membership's time and user), not a member of
/// this workspace: one that names someone else's member still pages from its place.
#[tokio::test]
async fn a_cursor_pages_from_its_place_even_when_it_names_no_member_here() {
    let app = spawn_app().await;
    let pause = || tokio::time::sleep(std::time::Duration::from_millis(5));
    let early = app.new_user("Early Member").await;
    app.add_member(&app.workspace_id, &early, "member", &[])
        .await;
    pause().await;
    let (other_ws, other_key) = app.new_workspace("Other").await;
    for name in ["Other One", "Other Two"] {
        pause().await;
        let u = app.new_user(name).await;
        app.add_member(&other_ws, &u, "member", &[]).await;
    }
    pause().await;
    let late = app.new_user("Late Member").await;
    app.add_member(&app.workspace_id, &late, "member", &[])
        .await;

    let page = app.get_as(&other_key, "/users?limit=1").await.ok();
    let cursor = page["next_cursor"].as_str().expect("a cursor").to_string();
    let ids: Vec<String> = listed(app.get(&format!("/users?starting_after={cursor}")).await)
        .iter()
        .map(|u| u["id"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(ids.len(), 2, "{ids:?}");
    assert_eq!(
        ids[0], early,
        "the members who joined before that place, newest first"
    );
    assert!(!ids.contains(&late));
}
