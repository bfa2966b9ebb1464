//! What the README tells an operator who lost the secrets of the first start: the admin
//! token issues a new API key through the CLI, and a lost generated admin token is
//! replaced by starting with `SWITCHBOARD_ADMIN_TOKEN`.

use crate::helpers::*;

/// `switchboard admin --admin-url <url> --admin-token <token> <args>`: success and output.
async fn admin(url: &str, token: &str, args: &[&str]) -> (bool, String) {
    let mut all = vec!["admin", "--admin-url", url, "--admin-token", token];
    all.extend_from_slice(args);
    let out = tokio::process::Command::new(env!("CARGO_BIN_EXE_switchboard"))
        .args(&all)
        .env_remove("SWITCHBOARD_ADMIN_URL")
        .env_remove("SWITCHBOARD_ADMIN_TOKEN")
        .output()
        .await
        .expect("the CLI runs");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr),
    )
}

#[tokio::test]
async fn a_lost_api_key_is_replaced_with_the_admin_token_through_the_cli() {
    let dir = tempfile::tempdir().unwrap();
    let server = launch(dir.path(), &[], &[]).await;
    let (ok, listed) = admin(&server.admin, ADMIN_TOKEN, &["list-workspaces"]).await;
    assert!(ok, "{listed}");
    let workspaces: serde_json::Value = serde_json::from_str(&listed).unwrap();
    let default = workspaces["data"]
        .as_array()
        .unwrap()
        .iter()
        .find(|w| w["name"] == "Default")
        .expect("the first start's workspace");
    let id = default["id"].as_str().unwrap();
    let (ok, created) = admin(
        &server.admin,
        ADMIN_TOKEN,
        &["create-api-key", "--workspace", id],
    )
    .await;
    assert!(ok, "{created}");
    let key: serde_json::Value = serde_json::from_str(&created).unwrap();
    let key = key["api_key"].as_str().expect("a new key");
    assert_ne!(Some(key), server.key.as_deref());
    let me = server.get_json(key, "/me").await;
    assert_eq!(me["workspaces"][0]["id"], id, "{me}");
}

#[tokio::test]
async fn a_lost_generated_admin_token_is_replaced_by_starting_with_a_new_one() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let mut first = launch(&data, &[], &["SWITCHBOARD_ADMIN_TOKEN"]).await;
    let generated = first
        .logged()
        .iter()
        .find_map(|l| announced(l, "admin token, shown once", "admin_token"))
        .expect("a generated admin token is logged once");
    assert!(
        admin(&first.admin, &generated, &["list-workspaces"])
            .await
            .0
    );
    first.kill_9().await;

    let fresh = "a-new-admin-token-after-the-loss";
    let again = launch(&data, &[("SWITCHBOARD_ADMIN_TOKEN", fresh)], &[]).await;
    assert!(admin(&again.admin, fresh, &["list-workspaces"]).await.0);
    let (ok, said) = admin(&again.admin, &generated, &["list-workspaces"]).await;
    assert!(
        !ok && said.contains("401"),
        "the lost token no longer works: {said}"
    );
}

#[tokio::test]
async fn a_first_start_cut_short_before_showing_its_secrets_shows_new_ones_next_time() {
    let dir = std::sync::Arc::new(tempfile::tempdir().unwrap());
    // A first start that made its secrets and never showed them (killed before its
    // start-up lines): the app in process, which shows nothing.
    let mut silent = spawn_in(dir.clone(), None, |s| s.admin_token = None).await;
    silent.stop().await;

    let mut second = launch(dir.path(), &[], &["SWITCHBOARD_ADMIN_TOKEN"]).await;
    let key = second.key.clone().expect("an api key shown");
    let token = second
        .logged()
        .iter()
        .find_map(|l| announced(l, "admin token, shown once", "admin_token"))
        .expect("an admin token shown");
    let me = second.get_json(&key, "/me").await;
    assert_eq!(
        me["workspaces"].as_array().map(Vec::len),
        Some(1),
        "the first start's workspace, not a second one: {me}"
    );
    let (ok, listed) = admin(&second.admin, &token, &["list-workspaces"]).await;
    assert!(ok, "the shown admin token works: {listed}");
    second.terminate().await;

    let third = launch(dir.path(), &[], &["SWITCHBOARD_ADMIN_TOKEN"]).await;
    assert_eq!(third.key, None, "shown once");
    assert!(!third
        .logged()
        .iter()
        .any(|l| l.contains("admin token, shown once")));
    let (ok, _) = admin(&third.admin, &token, &["list-workspaces"]).await;
    assert!(ok, "the token shown is the one kept");
}

#[tokio::test]
async fn a_start_that_makes_an_admin_token_makes_no_new_api_key() {
    let dir = tempfile::tempdir().unwrap();
    // First started with a configured admin token, later without one.
    let mut first = launch(dir.path(), &[], &[]).await;
    assert!(first.key.is_some());
    first.terminate().await;
    let second = launch(dir.path(), &[], &["SWITCHBOARD_ADMIN_TOKEN"]).await;
    assert!(second
        .logged()
        .iter()
        .any(|l| l.contains("admin token, shown once")));
    assert_eq!(second.key, None, "the workspace's key was shown already");
}
