//! The store's safety nets on the command line: `admin backup` (online, through the
//! operator API), `restore` and `check` (offline, on a stopped store's data folder).

use std::path::Path;
use std::time::Duration;

use switchboard_actors::store::Store;

use crate::admin::backup::{ENTRIES_HEADER, TREES_HEADER};

/// Streams an online backup from the operator API into `to` (written beside it first and
/// renamed once complete, so a failed backup never leaves a partial file under that name).
pub async fn backup(admin_url: &str, admin_token: &str, to: &Path) -> Result<String, String> {
    use tokio::io::AsyncWriteExt;
    let client = reqwest::Client::builder()
        .no_proxy()
        .build()
        .map_err(|e| e.to_string())?;
    let mut response = client
        .post(format!("{}/admin/backup", admin_url.trim_end_matches('/')))
        .bearer_auth(admin_token)
        .send()
        .await
        .map_err(|e| format!("request failed: {e}"))?;
    if !response.status().is_success() {
        let status = response.status();
        return Err(format!(
            "{status}: {}",
            response.text().await.unwrap_or_default()
        ));
    }
    let header = |name: &str| {
        response
            .headers()
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("?")
            .to_string()
    };
    let (trees, entries) = (header(TREES_HEADER), header(ENTRIES_HEADER));
    let partial = to.with_extension("partial");
    let written = async {
        let mut file = tokio::fs::File::create(&partial)
            .await
            .map_err(|e| format!("{}: {e}", partial.display()))?;
        let mut bytes = 0u64;
        while let Some(chunk) = response.chunk().await.map_err(|e| e.to_string())? {
            bytes += chunk.len() as u64;
            file.write_all(&chunk).await.map_err(|e| e.to_string())?;
        }
        file.sync_all().await.map_err(|e| e.to_string())?;
        tokio::fs::rename(&partial, to)
            .await
            .map_err(|e| format!("{}: {e}", to.display()))?;
        Ok::<u64, String>(bytes)
    }
    .await;
    // A backup that failed part-way leaves nothing behind: the file is of no use.
    let bytes = written.inspect_err(|_| {
        let _ = std::fs::remove_file(&partial);
    })?;
    Ok(format!(
        "backup written to {}: {entries} entries in {trees} keyspaces, {bytes} bytes",
        to.display()
    ))
}

/// Restores a backup file into an empty data folder, or an empty PostgreSQL database when
/// `database_url` is given. Blocking.
pub fn restore(file: &Path, data_dir: &Path, database_url: Option<&str>) -> Result<String, String> {
    if let Some(url) = database_url {
        let summary = Store::restore_postgres(file, url).map_err(|e| e.to_string())?;
        give_rows_their_workspace(url, data_dir).map_err(|e| e.to_string())?;
        return Ok(format!(
            "restored {} entries in {} keyspaces into the PostgreSQL database",
            summary.entries, summary.trees
        ));
    }
    std::fs::create_dir_all(data_dir).map_err(|e| format!("{}: {e}", data_dir.display()))?;
    let summary = Store::restore(file, data_dir).map_err(|e| e.to_string())?;
    Ok(format!(
        "restored {} entries in {} keyspaces into {}",
        summary.entries,
        summary.trees,
        data_dir.display()
    ))
}

/// A backup does not say whose deliveries and pending sends are (their keys name the
/// endpoint or the connection); after a restore into PostgreSQL each workspace's stored
/// endpoints and connections claim theirs, so that they move with the workspace.
fn give_rows_their_workspace(
    url: &str,
    data_dir: &Path,
) -> Result<(), switchboard_actors::domain::DomainError> {
    use switchboard_actors::workspace::{stored_endpoints, stored_relays};
    use switchboard_actors::{delivery, outbound};
    let node = switchboard_actors::store::NodeConfig {
        id: format!("restore-{}", std::process::id()),
        addr: String::new(),
        admin_addr: String::new(),
        lease_ttl: Duration::from_secs(10),
        offline: true,
    };
    let store = Store::open_postgres(url, data_dir, node)?;
    let Some(cluster) = store.cluster() else {
        return Ok(());
    };
    let clock = std::sync::Arc::new(switchboard_actors::clock::SystemClock);
    let directory = switchboard_actors::directory::Directory::load(store.clone(), clock)?;
    for ws in directory.workspaces() {
        for cfg in stored_endpoints(&store, &ws.id)? {
            for prefix in [
                delivery::record::prefix(cfg.id.as_str()),
                delivery::record::pending_prefix(cfg.id.as_str()),
            ] {
                cluster.assign(&prefix, ws.id.as_str())?;
            }
        }
        for cfg in stored_relays(&store, &ws.id)? {
            cluster.assign(&outbound::record::prefix(cfg.channel_id), ws.id.as_str())?;
        }
    }
    Ok(())
}

/// Checks a stopped store (the data folder's, or the PostgreSQL database's when
/// `database_url` is given); the report, and whether it is healthy.
pub async fn check(
    data_dir: &Path,
    database_url: Option<String>,
) -> Result<(String, bool), String> {
    let opened = match database_url {
        Some(url) => {
            let dir = data_dir.to_path_buf();
            let node = switchboard_actors::store::NodeConfig {
                id: format!("check-{}", std::process::id()),
                addr: String::new(),
                admin_addr: String::new(),
                lease_ttl: Duration::from_secs(10),
                // Every row, whoever owns it; the check only reads.
                offline: true,
            };
            let opened = tokio::task::spawn_blocking(move || {
                match switchboard_actors::store::postgres_holds_store(&url)? {
                    true => Store::open_postgres(&url, &dir, node).map(Some),
                    false => Ok(None),
                }
            })
            .await
            .map_err(|e| e.to_string())?;
            match opened {
                Ok(None) => return Err("the database holds no store".into()),
                Ok(Some(store)) => Ok(store),
                Err(e) => Err(e),
            }
        }
        None if !data_dir.join("db").exists() => {
            return Err(format!("{} holds no store", data_dir.display()))
        }
        None => Store::open(data_dir),
    };
    let store = opened
        .map_err(|e| format!("cannot open the store (is the service still running?): {e}"))?;
    let report = tokio::task::spawn_blocking(move || switchboard_actors::check::run(&store))
        .await
        .map_err(|e| e.to_string())?;
    let mut out = String::new();
    for (family, n) in &report.counts {
        out.push_str(&format!("{family}: {n}\n"));
    }
    if report.is_healthy() {
        out.push_str("no damage found\n");
    } else {
        for p in &report.problems {
            out.push_str(&format!("damage: {p}\n"));
        }
        out.push_str(&format!("{} problem(s) found\n", report.problems.len()));
    }
    Ok((out, report.is_healthy()))
}
