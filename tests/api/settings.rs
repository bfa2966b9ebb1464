//! Settings reach the binary as flags, variables or a `--config` file, and `serve --help`
//! documents every one of them.

use std::collections::BTreeSet;

use crate::helpers::*;

/// The `SWITCHBOARD_*` names of the README table whose header row is `header`.
fn readme_table(header: &str) -> BTreeSet<String> {
    let readme =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).expect("README");
    readme
        .lines()
        .skip_while(|l| *l != header)
        .skip(2)
        .take_while(|l| l.starts_with('|'))
        .filter_map(|l| l.strip_prefix("| SWITCHBOARD_"))
        .map(|rest| format!("SWITCHBOARD_{}", rest.split(' ').next().unwrap_or("")))
        .collect()
}

/// The `SWITCHBOARD_*` names of the README's settings table of `serve`.
fn readme_settings() -> BTreeSet<String> {
    readme_table("| variable | default | meaning |")
}

/// The `SWITCHBOARD_*` names in `switchboard <command> --help`.
fn variables_in_help(command: &str) -> BTreeSet<String> {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_switchboard"))
        .args([command, "--help"])
        .output()
        .expect("binary runs");
    assert!(out.status.success(), "{command} --help");
    String::from_utf8_lossy(&out.stdout)
        .split(|c: char| !(c.is_ascii_uppercase() || c == '_'))
        .filter(|w| w.starts_with("SWITCHBOARD_") && w.len() > "SWITCHBOARD_".len())
        .map(str::to_string)
        .collect()
}

#[test]
fn serve_help_lists_every_setting_of_the_readme_and_no_other() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_switchboard"))
        .args(["serve", "--help"])
        .output()
        .expect("binary runs");
    assert!(out.status.success());
    let help = String::from_utf8_lossy(&out.stdout);
    let in_help: BTreeSet<String> = help
        .split(|c: char| !(c.is_ascii_uppercase() || c == '_'))
        .filter(|w| w.starts_with("SWITCHBOARD_") && w.len() > "SWITCHBOARD_".len())
        .map(str::to_string)
        .collect();
    let readme = readme_settings();
    assert!(readme.len() > 20, "README table not found");
    assert_eq!(in_help, readme, "serve --help and the README table differ");
    assert!(help.contains("[default: 127.0.0.1:8080]"), "{help}");
    assert!(help.contains("--config <FILE>"), "{help}");
}

#[test]
fn the_readme_table_of_the_other_commands_lists_every_variable_their_help_names() {
    let in_help: BTreeSet<String> = ["admin", "listen", "loadtest", "restore", "check"]
        .into_iter()
        .flat_map(variables_in_help)
        .collect();
    let readme = readme_table("| variable | commands | default | meaning |");
    assert!(readme.contains("SWITCHBOARD_ADMIN_URL"), "{readme:?}");
    assert_eq!(
        in_help, readme,
        "the commands' --help and the README table differ"
    );
}

fn config_file(dir: &std::path::Path, text: &str) -> String {
    let path = dir.join("switchboard.toml");
    std::fs::write(&path, text).expect("write config");
    path.to_string_lossy().into_owned()
}

/// Status of two quick calls with the bootstrap key.
async fn two_calls(server: &Server) -> (u16, u16) {
    let client = reqwest::Client::new();
    let key = server.key.clone().expect("bootstrap key");
    let mut statuses = Vec::new();
    for _ in 0..2 {
        let r = client
            .get(server.url("/tags"))
            .bearer_auth(&key)
            .send()
            .await
            .expect("answers");
        statuses.push(r.status().as_u16());
    }
    (statuses[0], statuses[1])
}

#[tokio::test]
async fn a_config_file_sets_what_the_environment_leaves_unset() {
    let dir = tempfile::tempdir().unwrap();
    let file = config_file(dir.path(), "rate_limit_per_minute = 1\n");
    let data = dir.path().join("data");
    let server = launch(
        &data,
        &[("SWITCHBOARD_CONFIG", &file)],
        &["SWITCHBOARD_RATE_LIMIT_PER_MINUTE"],
    )
    .await;
    assert_eq!(two_calls(&server).await, (200, 429));
}

#[tokio::test]
async fn the_environment_overrides_the_config_file() {
    let dir = tempfile::tempdir().unwrap();
    let file = config_file(dir.path(), "rate-limit-per-minute = 1\n");
    // launch() sets SWITCHBOARD_RATE_LIMIT_PER_MINUTE=0: the limit is off.
    let server = launch(
        &dir.path().join("data"),
        &[("SWITCHBOARD_CONFIG", &file)],
        &[],
    )
    .await;
    assert_eq!(two_calls(&server).await, (200, 200));
}

#[test]
fn an_unknown_key_in_the_config_file_stops_the_start_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let file = config_file(dir.path(), "rate_limit = 5\n");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_switchboard"))
        .args(["serve", "--config", &file])
        .env("SWITCHBOARD_DATA_DIR", dir.path().join("data"))
        .output()
        .expect("binary runs");
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("`rate_limit` is not a setting"), "{err}");
}
