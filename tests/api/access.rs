use crate::helpers::*;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use reqwest::Method;
use serde_json::{json, Value};
use switchboard_actors::clock::ManualClock;

const WORKSPACE_HEADER: &str = "X-Service-Workspace";

/// A number no other call in this binary has used, for names that must be unique.
fn unique() -> usize {
    static NEXT: AtomicUsize = AtomicUsize::new(1);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

async fn new_tag(app: &TestApp, token: &str) -> u64 {
    let name = format!("tag {}", unique());
    let r = app.post_as(token, "/tags", json!({ "name": name })).await;
    r.created()["id"].as_u64().expect("tag id")
}

async fn new_field(app: &TestApp, token: &str) -> u64 {
    let label = format!("Field {}", unique());
    let body = json!({ "label": label });
    let r = app.post_as(token, "/custom-fields", body).await;
    r.created()["id"].as_u64().expect("field id")
}

fn tag_names(list: &Resp) -> Vec<String> {
    let data = list.body["data"].as_array().expect("a list");
    data.iter()
        .map(|t| t["name"].as_str().unwrap_or_default().to_string())
        .collect()
}

/// Whether the workspace of `key` has a tag called `name`.
async fn has_tag(app: &TestApp, key: &str, name: &str) -> bool {
    let list = app.get_as(key, "/tags").await.expect(200);
    tag_names(&list).iter().any(|n| n == name)
}

/// A call as `token` with `X-Service-Workspace: ws`.
async fn in_ws(app: &TestApp, token: &str, ws: &str, m: Method, path: &str, body: Value) -> Resp {
    let call = app.call(m.clone(), path).token(token);
    let call = call.header(WORKSPACE_HEADER, ws);
    if m == Method::GET || m == Method::DELETE {
        call.send().await
    } else {
        call.json(body).send().await
    }
}

/// A person who is `role_a` (with `perms_a`) in the bootstrap workspace and admin in `b`.
async fn user_in_both(app: &TestApp, b: &str, role_a: &str, perms_a: &[&str]) -> (String, String) {
    let user = app.new_user(&format!("Person {}", unique())).await;
    let a = &app.workspace_id;
    app.add_member(a, &user, role_a, perms_a).await;
    app.add_member(b, &user, "admin", &[]).await;
    let token = app.token_for(&user, 3600).await;
    (user, token)
}

/// Another API key for the bootstrap workspace.
async fn new_key(app: &TestApp) -> String {
    let path = format!("/admin/workspaces/{}/api-keys", app.workspace_id);
    let r = app.admin_post(&path, json!({})).await.expect(201);
    r.body["api_key"].as_str().expect("a key").to_string()
}

/// Every workspace, as the operator API lists them.
async fn workspaces(app: &TestApp) -> Vec<Value> {
    let list = app.admin_call(Method::GET, "/admin/workspaces");
    let list = list.send().await.ok();
    list["data"].as_array().expect("a list").clone()
}

/// A GET on the operator listener with exactly the Authorization header given.
async fn admin_get_as(app: &TestApp, authorization: Option<&str>) -> Resp {
    let mut req = app.client.get(format!("{}/admin/workspaces", app.admin));
    if let Some(value) = authorization {
        req = req.header("authorization", value);
    }
    let r = req.send().await.expect("request sent");
    let (status, headers) = (r.status().as_u16(), r.headers().clone());
    let body = r.json::<Value>().await.unwrap_or(Value::Null);
    Resp {
        status,
        headers,
        body,
    }
}

// --- Authentication ---------------------------------------------------------------------

#[tokio::test]
async fn a_request_without_an_authorization_header_answers_401_unauthenticated() {
    let app = spawn_app().await;
    for path in ["/tags", "/me", "/events", "/closing-notes"] {
        let r = app.call(Method::GET, path).send().await;
        r.expect_error(401, "unauthenticated");
    }
    let r = app.call(Method::POST, "/tags").json(json!({"name": "x"}));
    r.send().await.expect_error(401, "unauthenticated");
}

#[tokio::test]
async fn an_authorization_header_that_is_not_bearer_answers_401_unauthenticated() {
    let app = spawn_app().await;
    let basic = format!("Basic {}", app.key);
    for value in [basic.as_str(), app.key.as_str(), "Bearer", "Bearer    "] {
        let r = app.call(Method::GET, "/tags");
        let r = r.header("authorization", value).send().await;
        r.expect_error(401, "unauthenticated");
    }
}

#[tokio::test]
async fn a_revoked_api_key_answers_401_invalid_api_key_while_another_key_of_the_workspace_works() {
    let app = spawn_app().await;
    let second = new_key(&app).await;
    assert!(second.starts_with("ai_"));
    app.get("/tags").await.expect(200);

    let revoke = |key: &str| app.admin_post("/admin/api-keys/revoke", json!({ "api_key": key }));
    assert_eq!(revoke(&app.key).await.ok()["revoked"], true);
    revoke("ai_nope").await.expect_error(404, "not_found");

    let r = app.get("/tags").await;
    r.expect_error(401, "invalid_api_key");
    let r = app.post("/tags", json!({"name": "after"})).await;
    r.expect_error(401, "invalid_api_key");
    app.get_as(&second, "/tags").await.expect(200);
    let body = json!({"name": "still here"});
    app.post_as(&second, "/tags", body).await.expect(201);
}

#[tokio::test]
async fn an_unknown_api_key_answers_401_invalid_api_key_and_an_unknown_token_401_invalid_token() {
    let app = spawn_app().await;
    let unknown_key = format!("ai_{}", "x".repeat(40));
    let cases = [
        (unknown_key.as_str(), "invalid_api_key"),
        ("oat_doesnotexist", "invalid_token"),
        ("something-random", "invalid_token"),
    ];
    for (token, code) in cases {
        for path in ["/tags", "/me"] {
            app.get_as(token, path).await.expect_error(401, code);
        }
    }
}

#[tokio::test]
async fn an_expired_oauth_token_answers_401_invalid_token() {
    let app = spawn_app_with_clock(ManualClock::new(chrono::Utc::now())).await;
    let clock = app.clock.clone().unwrap();
    let user = app.new_user("Short Lived").await;
    let ws = app.workspace_id.clone();
    app.add_member(&ws, &user, "member", &["contacts"]).await;
    let token = app.token_for(&user, 60).await;
    app.get_as(&token, "/tags").await.expect(200);

    clock.advance(Duration::from_secs(59));
    app.get_as(&token, "/tags").await.expect(200);

    clock.advance(Duration::from_secs(2));
    for path in ["/tags", "/me"] {
        let r = app.get_as(&token, path).await;
        r.expect_error(401, "invalid_token");
    }
    // A fresh token for the same person works again; API keys do not expire.
    let renewed = app.token_for(&user, 60).await;
    app.get_as(&renewed, "/tags").await.expect(200);
    app.get("/tags").await.expect(200);
}

#[tokio::test]
async fn an_idempotent_replay_never_bypasses_authentication_or_permissions() {
    let app = spawn_app().await;
    let admin = app.member_token("admin", &[]).await;
    let member = app.member_token("member", &ALL_PERMISSIONS).await;
    let post = |token: &str, path: &str, body: Value| {
        let call = app.call(Method::POST, path).token(token);
        call.header("Idempotency-Key", "same-key").json(body).send()
    };
    let field = json!({"label": "Vip level"});
    let first = post(&admin, "/custom-fields", field.clone()).await;
    let again = post(&admin, "/custom-fields", field.clone()).await;
    assert_eq!(first.created(), again.created());
    let r = post(&member, "/custom-fields", field).await;
    forbidden(r);

    let key = &new_key(&app).await;
    let once = json!({"name": "once"});
    post(key, "/tags", once.clone()).await.expect(201);
    let body = json!({ "api_key": key });
    let r = app.admin_post("/admin/api-keys/revoke", body).await;
    r.expect(200);
    let r = post(key, "/tags", once).await;
    r.expect_error(401, "invalid_api_key");
}

// --- Workspace selection ----------------------------------------------------------------

#[tokio::test]
async fn an_api_key_always_acts_on_its_own_workspace_whatever_the_header_says() {
    let app = spawn_app().await;
    let (b, key_b) = app.new_workspace("Beta").await;
    for header in [b.as_str(), "not a workspace", "ws_doesnotexist"] {
        let name = format!("from a {}", unique());
        let body = json!({ "name": name });
        let r = in_ws(&app, &app.key, header, Method::POST, "/tags", body).await;
        r.expect(201);
        assert!(has_tag(&app, &app.key, &name).await);
        assert!(!has_tag(&app, &key_b, &name).await);
    }
    let me = in_ws(&app, &app.key, &b, Method::GET, "/me", Value::Null).await;
    let me = me.expect(200);
    assert_eq!(me.body["credential"], "api_key");
    let workspaces = me.body["workspaces"].as_array().unwrap();
    assert_eq!(workspaces.len(), 1);
    assert_eq!(workspaces[0]["id"], app.workspace_id.as_str());
}

#[tokio::test]
async fn a_user_in_exactly_one_workspace_needs_no_workspace_header() {
    let app = spawn_app().await;
    let (b, key_b) = app.new_workspace("Beta").await;
    let user = app.new_user("Only Beta").await;
    app.add_member(&b, &user, "member", &["contacts"]).await;
    let token = app.token_for(&user, 3600).await;

    let body = json!({"name": "beta only"});
    app.post_as(&token, "/tags", body).await.expect(201);
    assert!(has_tag(&app, &key_b, "beta only").await);
    assert!(!has_tag(&app, &app.key, "beta only").await);
    // Naming that one workspace explicitly works too.
    let r = in_ws(&app, &token, &b, Method::GET, "/tags", Value::Null).await;
    r.expect(200);
}

#[tokio::test]
async fn a_user_in_two_workspaces_without_the_header_answers_400_workspace_required() {
    let app = spawn_app().await;
    let (b, _) = app.new_workspace("Beta").await;
    let (_, token) = user_in_both(&app, &b, "admin", &[]).await;
    for path in ["/tags", "/funnels", "/closing-notes", "/custom-fields"] {
        let r = app.get_as(&token, path).await;
        r.expect_error(400, "workspace_required");
    }
    let r = app
        .post_as(&token, "/tags", json!({"name": "where?"}))
        .await;
    r.expect_error(400, "workspace_required");
}

#[tokio::test]
async fn a_user_in_two_workspaces_acts_on_the_one_the_header_names_with_the_role_held_there() {
    let app = spawn_app().await;
    let (b, key_b) = app.new_workspace("Beta").await;
    let (_, token) = user_in_both(&app, &b, "member", &["contacts"]).await;
    let a = app.workspace_id.clone();
    let post = |ws: &str, path: &str, body: Value| {
        let call = app.call(Method::POST, path).token(&token);
        call.header(WORKSPACE_HEADER, ws).json(body).send()
    };

    let r = post(&b, "/tags", json!({"name": "in beta"})).await;
    r.expect(201);
    assert!(has_tag(&app, &key_b, "in beta").await);
    assert!(!has_tag(&app, &app.key, "in beta").await);
    let r = post(&a, "/tags", json!({"name": "in alpha"})).await;
    r.expect(201);
    assert!(has_tag(&app, &app.key, "in alpha").await);
    assert!(!has_tag(&app, &key_b, "in alpha").await);

    // Admin in B, plain member in A: owner-or-admin routes follow the chosen workspace.
    let field = json!({"label": "Shoe size"});
    post(&b, "/custom-fields", field.clone()).await.expect(201);
    let r = post(&a, "/custom-fields", field).await;
    forbidden(r);
}

#[tokio::test]
async fn a_workspace_header_the_login_cannot_use_answers_403_workspace_forbidden() {
    let app = spawn_app().await;
    let (b, _) = app.new_workspace("Beta").await;
    let (c, _) = app.new_workspace("Gamma").await;
    let single = app.member_token("member", &["contacts"]).await;
    let (_, multi) = user_in_both(&app, &b, "admin", &[]).await;

    let junk = ["ws_doesnotexist", "not a workspace", "usr_abc", ""];
    for token in [&single, &multi] {
        for header in [c.as_str()].into_iter().chain(junk) {
            for m in [Method::GET, Method::POST] {
                let r = in_ws(&app, token, header, m, "/tags", json!({"name": "no"})).await;
                r.expect_error(403, "workspace_forbidden");
            }
        }
    }
    let r = in_ws(&app, &single, &b, Method::GET, "/tags", Value::Null).await;
    r.expect_error(403, "workspace_forbidden");
    // A login that belongs to no workspace at all can still ask who it is.
    let nobody = app.new_user("No Workspace").await;
    let nobody = app.token_for(&nobody, 3600).await;
    let r = app.get_as(&nobody, "/tags").await;
    r.expect_error(403, "workspace_forbidden");
    let me = app.get_as(&nobody, "/me").await.expect(200);
    assert_eq!(me.body["workspaces"], json!([]));
}

#[tokio::test]
async fn an_id_from_another_workspace_answers_404_not_found_never_403() {
    let app = spawn_app().await;
    let (b, key_b) = app.new_workspace("Beta").await;
    let tag_b = format!("/tags/{}", new_tag(&app, &key_b).await);
    let field_b = format!("/custom-fields/{}", new_field(&app, &key_b).await);
    let before = tag_names(&app.get_as(&key_b, "/tags").await.expect(200));
    let (_, token) = user_in_both(&app, &b, "admin", &[]).await;
    let a = app.workspace_id.clone();

    let rename = json!({"name": "stolen"});
    let attempts = [
        app.patch(&tag_b, rename.clone()).await,
        app.delete(&tag_b).await,
        app.get(&field_b).await,
        in_ws(&app, &token, &a, Method::PATCH, &tag_b, rename).await,
        in_ws(&app, &token, &a, Method::DELETE, &tag_b, Value::Null).await,
        in_ws(&app, &token, &a, Method::GET, &field_b, Value::Null).await,
    ];
    for r in attempts {
        not_found(r);
    }
    // Nothing in B changed, and B itself still sees both records.
    let after = tag_names(&app.get_as(&key_b, "/tags").await.expect(200));
    assert_eq!(before, after);
    app.get_as(&key_b, &field_b).await.expect(200);
}

#[tokio::test]
async fn get_me_works_without_the_header_and_lists_every_workspace_with_role_and_permissions() {
    let app = spawn_app().await;
    let (b, _) = app.new_workspace("Beta").await;
    let (user, token) = user_in_both(&app, &b, "member", &["contacts", "orders"]).await;

    let me = app.get_as(&token, "/me").await.expect(200);
    assert_eq!(me.body["object"], "me");
    assert_eq!(me.body["credential"], "user");
    assert_eq!(me.body["user"]["id"], user.as_str());
    let workspaces = me.body["workspaces"].as_array().unwrap();
    assert_eq!(workspaces.len(), 2, "{}", me.body);
    let find = |id: &str| workspaces.iter().find(|w| w["id"] == id).expect("listed");
    let a = find(&app.workspace_id);
    assert_eq!(a["object"], "workspace");
    assert_eq!(a["name"], "Default");
    assert_eq!(a["role"], "member");
    assert_eq!(a["permissions"], json!(["contacts", "orders"]));
    let beta = find(&b);
    assert_eq!(beta["name"], "Beta");
    assert_eq!(beta["role"], "admin");
    assert_eq!(beta["permissions"], json!(ALL_PERMISSIONS));
}

// --- Permission matrix ------------------------------------------------------------------

#[derive(Clone, Copy, PartialEq)]
enum Needs {
    Contacts,
    OwnerOrAdmin,
    AnyLogin,
}

const ROUTES: [(&str, Needs); 12] = [
    ("GET /tags", Needs::Contacts),
    ("POST /tags", Needs::Contacts),
    ("PATCH /tags/{id}", Needs::Contacts),
    ("DELETE /tags/{id}", Needs::Contacts),
    ("GET /custom-fields", Needs::Contacts),
    ("GET /custom-fields/{id}", Needs::Contacts),
    ("POST /custom-fields", Needs::OwnerOrAdmin),
    ("GET /closing-notes", Needs::AnyLogin),
    ("POST /closing-notes", Needs::OwnerOrAdmin),
    ("GET /funnels", Needs::Contacts),
    ("GET /me", Needs::AnyLogin),
    ("GET /events", Needs::AnyLogin),
];

/// Sets up what the route needs (with the workspace's API key), then calls it as `token`.
async fn hit(app: &TestApp, route: &str, token: &str) -> Resp {
    let n = unique();
    match route {
        "POST /tags" => {
            let body = json!({"name": format!("m {n}")});
            app.post_as(token, "/tags", body).await
        }
        "PATCH /tags/{id}" => {
            let path = format!("/tags/{}", new_tag(app, &app.key).await);
            let body = json!({"name": format!("renamed {n}"), "color": "chart-2"});
            app.patch_as(token, &path, body).await
        }
        "DELETE /tags/{id}" => {
            let path = format!("/tags/{}", new_tag(app, &app.key).await);
            app.delete_as(token, &path).await
        }
        "GET /custom-fields/{id}" => {
            let path = format!("/custom-fields/{}", new_field(app, &app.key).await);
            app.get_as(token, &path).await
        }
        "POST /custom-fields" => {
            let body = json!({"label": format!("Matrix field {n}")});
            app.post_as(token, "/custom-fields", body).await
        }
        "POST /closing-notes" => {
            let body = json!({"name": format!("Matrix note {n}")});
            app.post_as(token, "/closing-notes", body).await
        }
        get => {
            let path = get.strip_prefix("GET ").expect("a GET");
            app.get_as(token, path).await
        }
    }
}

#[tokio::test]
async fn every_route_admits_exactly_the_callers_its_permission_allows_and_answers_403_insufficient_permissions_to_the_rest(
) {
    let app = spawn_app().await;
    app.new_funnel("Sales", &["Lead", "Won"]).await;
    let list = workspaces(&app).await;
    let ws = list.iter().find(|w| w["id"] == app.workspace_id.as_str());
    let owner = ws.expect("listed")["owner_user_id"].as_str().unwrap();
    let member = |perms: &'static [&'static str]| app.member_token("member", perms);
    let (contacts, every) = (member(&["contacts"]).await, member(&ALL_PERMISSIONS).await);
    let (others, none) = (member(&ALL_PERMISSIONS[1..]).await, member(&[]).await);
    // (who, token, owner/admin/API key, has contacts)
    let callers = [
        ("owner", app.token_for(owner, 3600).await, true, true),
        ("admin", app.member_token("admin", &[]).await, true, true),
        ("API key", app.key.clone(), true, true),
        ("member with contacts", contacts, false, true),
        ("member with every permission", every, false, true),
        ("member without contacts", others, false, false),
        ("member with no permissions", none, false, false),
    ];

    let mut wrong = Vec::new();
    for (route, needs) in ROUTES {
        for (who, token, privileged, contacts) in &callers {
            let passes = match needs {
                Needs::AnyLogin => true,
                Needs::OwnerOrAdmin => *privileged,
                Needs::Contacts => *contacts,
            };
            let (status, code) = match (passes, route.starts_with("POST")) {
                (true, true) => (201, ""),
                (true, false) => (200, ""),
                (false, _) => (403, "insufficient_permissions"),
            };
            let r = hit(&app, route, token).await;
            if r.status != status || r.code() != code {
                let got = format!("{} {}", r.status, r.body);
                wrong.push(format!(
                    "{route} as {who}: want {status} {code:?}, got {got}"
                ));
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    // Refused writes wrote nothing: only owner, admin and API key added closing notes.
    let notes = app.get("/closing-notes").await.expect(200);
    let notes = notes.body["data"].as_array().unwrap();
    assert_eq!(notes.len(), 3, "{notes:?}");
}

// --- Operator API -----------------------------------------------------------------------

#[tokio::test]
async fn the_operator_api_answers_401_without_the_admin_token_or_with_a_wrong_one() {
    let app = spawn_app().await;
    let r = admin_get_as(&app, None).await;
    r.expect_error(401, "unauthenticated");
    let api_key = format!("Bearer {}", app.key);
    for wrong in ["Bearer wrong-token", api_key.as_str()] {
        let r = admin_get_as(&app, Some(wrong)).await;
        r.expect_error(401, "invalid_token");
    }
    let right = format!("Bearer {ADMIN_TOKEN}");
    admin_get_as(&app, Some(&right)).await.expect(200);
    let r = app.client.post(format!("{}/admin/workspaces", app.admin));
    let r = r.json(&json!({"name": "Sneaky"})).send().await.unwrap();
    assert_eq!(r.status().as_u16(), 401);
    // The operator routes are not served on the API listener.
    let r = app.client.get(format!("{}/admin/workspaces", app.api));
    let r = r.bearer_auth(ADMIN_TOKEN).send().await.unwrap();
    assert_eq!(r.status().as_u16(), 404);
}

#[tokio::test]
async fn creating_a_workspace_returns_it_with_an_owner_and_an_api_key_that_works() {
    let app = spawn_app().await;
    let body = json!({"name": "Acme", "hipaa": true});
    let r = app.admin_post("/admin/workspaces", body).await.expect(201);
    let b = &r.body;
    assert_eq!(b["object"], "workspace");
    assert_eq!(b["name"], "Acme");
    assert_eq!(b["hipaa"], true);
    let id = b["id"].as_str().unwrap();
    let owner = b["owner_user_id"].as_str().unwrap();
    let key = b["api_key"].as_str().unwrap();
    assert!(id.starts_with("ws_") && owner.starts_with("usr_"), "{b}");
    assert!(key.starts_with("ai_"), "{b}");

    let me = app.get_as(key, "/me").await.expect(200);
    assert_eq!(me.body["workspaces"][0]["id"], id);
    assert_eq!(me.body["workspaces"][0]["hipaa"], true);
    let body = json!({"name": "acme tag"});
    app.post_as(key, "/tags", body).await.expect(201);
    assert!(!has_tag(&app, &app.key, "acme tag").await);
    // The owner it made can log in and acts as owner there.
    let token = app.token_for(owner, 3600).await;
    let me = app.get_as(&token, "/me").await.expect(200);
    assert_eq!(me.body["workspaces"][0]["role"], "owner");
    let body = json!({"label": "Plan"});
    app.post_as(&token, "/custom-fields", body)
        .await
        .expect(201);

    let create = |name: &str| app.admin_post("/admin/workspaces", json!({ "name": name }));
    assert_eq!(create("Plain").await.created()["hipaa"], false);
    let r = create("").await.expect_error(422, "validation_failed");
    assert_eq!(r.paths(), vec!["name"]);
}

#[tokio::test]
async fn creating_a_user_returns_it_and_an_invalid_email_answers_422_on_email() {
    let app = spawn_app().await;
    let body = json!({"name": "Ann Lee", "email": "ann.lee@example.com"});
    let r = app.admin_post("/admin/users", body).await.expect(201);
    assert_eq!(r.body["object"], "user");
    let id = r.body["id"].as_str().unwrap();
    assert!(id.starts_with("usr_"), "{id}");
    assert_eq!(r.body["name"], "Ann Lee");
    assert_eq!(r.body["email"], "ann.lee@example.com");

    for email in ["not-an-email", "", "ann@", "ann@example"] {
        let body = json!({"name": "Bad Mail", "email": email});
        let r = app.admin_post("/admin/users", body).await;
        let r = r.expect_error(422, "validation_failed");
        assert_eq!(r.paths(), vec!["email"], "{email}");
    }
}

#[tokio::test]
async fn membership_and_token_calls_refuse_users_and_workspaces_that_do_not_exist() {
    let app = spawn_app().await;
    let members = format!("/admin/workspaces/{}/members", app.workspace_id);
    for user_id in ["usr_doesnotexist", "nobody"] {
        let body = json!({"user_id": user_id, "role": "member", "permissions": []});
        let r = app.admin_post(&members, body).await;
        let r = r.expect_error(422, "validation_failed");
        assert_eq!(r.paths(), vec!["user_id"]);
    }
    let user = app.new_user("Real Person").await;
    let body = json!({"user_id": user, "role": "member", "permissions": ["contacts"]});
    let elsewhere = "/admin/workspaces/ws_doesnotexist/members";
    let r = app.admin_post(elsewhere, body.clone()).await;
    not_found(r);
    let r = app.admin_post(&members, body).await.expect(201);
    assert_eq!(r.body["role"], "member");

    let app = &app;
    let token = |user: &str| {
        let path = format!("/admin/users/{user}/tokens");
        async move { app.admin_post(&path, json!({"expires_in": 60})).await }
    };
    let r = token("usr_doesnotexist").await;
    not_found(r);
    let r = token(&user).await.expect(201);
    assert_eq!(r.body["object"], "access_token");
    let token = r.body["access_token"].as_str().unwrap();
    app.get_as(token, "/tags").await.expect(200);
}

#[tokio::test]
async fn listing_workspaces_returns_a_list_of_every_workspace_without_keys() {
    let app = spawn_app().await;
    let (b, _) = app.new_workspace("Beta").await;
    let list = app.admin_call(Method::GET, "/admin/workspaces");
    let list = list.send().await.ok();
    assert_eq!(list["object"], "list");
    assert_eq!(list["has_more"], false);
    let data = list["data"].as_array().unwrap();
    assert_eq!(data.len(), 2, "{list}");
    for w in data {
        assert_eq!(w["object"], "workspace");
        assert!(w.get("api_key").is_none(), "{w}");
    }
    for id in [&app.workspace_id, &b] {
        assert!(data.iter().any(|w| w["id"] == id.as_str()), "{id} missing");
    }
}

#[tokio::test]
async fn the_workspace_list_pages_newest_first_with_cursors() {
    let app = spawn_app().await;
    let mut made = vec![app.workspace_id.as_str().to_string()];
    for name in ["B", "C", "D", "E"] {
        made.push(app.new_workspace(name).await.0);
    }
    let page = |query: String| {
        let list = app.admin_call(Method::GET, &format!("/admin/workspaces{query}"));
        async move { list.send().await }
    };
    let mut seen = Vec::new();
    let mut query = "?limit=2".to_string();
    loop {
        let r = page(query.clone()).await.ok();
        let data = r["data"].as_array().unwrap();
        assert!(data.len() <= 2, "{r}");
        seen.extend(data.iter().map(|w| w["id"].as_str().unwrap().to_string()));
        if r["has_more"] == false {
            assert_eq!(r["next_cursor"], Value::Null);
            break;
        }
        query = format!(
            "?limit=2&starting_after={}",
            r["next_cursor"].as_str().unwrap()
        );
    }
    made.reverse();
    assert_eq!(seen, made, "every workspace once, newest first");

    // The default page is 25; limits and cursors are checked as on the API's lists.
    assert_eq!(
        page(String::new()).await.ok()["data"]
            .as_array()
            .unwrap()
            .len(),
        5
    );
    assert_eq!(page("?limit=0".into()).await.status, 422);
    assert_eq!(page("?limit=101".into()).await.status, 422);
    let bad = page("?starting_after=nope".into()).await;
    assert_eq!(bad.status, 400, "{}", bad.body);
    assert_eq!(bad.body["error"]["code"], "invalid_request");
}

// --- CLI --------------------------------------------------------------------------------

#[tokio::test]
async fn the_cli_creates_a_workspace_prints_it_as_json_and_lists_it() {
    let app = spawn_app().await;
    let ws = cli_json(&app, "create-workspace --name Acme").await;
    assert_eq!(ws["object"], "workspace");
    assert_eq!(ws["name"], "Acme");
    assert_eq!(ws["hipaa"], false);
    let id = ws["id"].as_str().unwrap();
    assert!(id.starts_with("ws_"), "{ws}");
    let key = ws["api_key"].as_str().unwrap();
    let me = app.get_as(key, "/me").await.expect(200);
    assert_eq!(me.body["workspaces"][0]["id"], id);

    let list = cli_json(&app, "list-workspaces").await;
    assert_eq!(list["object"], "list");
    let data = list["data"].as_array().unwrap();
    let listed = data.iter().any(|w| w["id"] == id && w["name"] == "Acme");
    assert!(listed, "{list}");

    // A page at a time: the newest first, then the rest after its cursor.
    let first = cli_json(&app, "list-workspaces --limit 1").await;
    assert_eq!(first["data"][0]["id"], id);
    assert_eq!(first["has_more"], true);
    let cursor = first["next_cursor"].as_str().unwrap();
    let rest = cli_json(&app, &format!("list-workspaces --starting-after {cursor}")).await;
    assert_eq!(rest["data"][0]["id"], app.workspace_id.as_str());
    assert_eq!(rest["has_more"], false);
}

#[tokio::test]
async fn the_cli_sets_up_a_member_whose_token_has_exactly_the_given_permissions() {
    let app = spawn_app().await;
    let user = cli_json(&app, "create-user --name Cli --email cli@example.com").await;
    let user = user["id"].as_str().unwrap().to_string();
    let ws = &app.workspace_id;
    let args = format!("add-member --workspace {ws} --user {user} --role member");
    let member = cli_json(&app, &format!("{args} --permissions contacts,inbox")).await;
    assert_eq!(member["permissions"], json!(["contacts", "inbox"]));
    let token = cli_json(&app, &format!("issue-token --user {user} --expires-in 600")).await;
    let token = token["access_token"].as_str().unwrap();

    app.get_as(token, "/tags").await.expect(200);
    let body = json!({"label": "No"});
    let r = app.post_as(token, "/custom-fields", body).await;
    forbidden(r);
}

#[tokio::test]
async fn the_cli_exits_non_zero_with_a_wrong_admin_token_and_creates_nothing() {
    let app = spawn_app().await;
    let out = cli(&app, "wrong-token", "create-workspace --name Nope").await;
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("401"), "{stderr}");
    let out = cli(&app, "wrong-token", "list-workspaces").await;
    assert!(!out.status.success());

    let list = cli_json(&app, "list-workspaces").await;
    let data = list["data"].as_array().unwrap();
    let names: Vec<&Value> = data.iter().map(|w| &w["name"]).collect();
    assert_eq!(names, vec!["Default"]);
}

/// Operator actions that take no fields refuse a body that names some, or is no JSON,
/// as every other route does; an empty body is taken.
#[tokio::test]
async fn operator_actions_without_fields_refuse_fields_and_broken_bodies() {
    let app = spawn_app().await;
    let keys = format!("/admin/workspaces/{}/api-keys", app.workspace_id);
    let field = app
        .post("/custom-fields", json!({"label": "Size", "type": "text"}))
        .await
        .created();
    let archive = format!(
        "/admin/workspaces/{}/custom-fields/{}/archive",
        app.workspace_id, field["id"]
    );
    for path in [&keys, &archive] {
        app.admin_post(path, json!({"x": 1})).await.expect(422);
        let broken = app.admin_call(Method::POST, path).raw("{bad").send().await;
        broken.expect(400);
    }
    let made = app.admin_call(Method::POST, &keys).send().await.expect(201);
    assert!(made.body["api_key"].is_string());
}
