//! This node's part in a cluster (PostgreSQL mode): who it is, and the loops that keep
//! its workspaces, take over those of dead nodes and follow directory changes made on
//! other nodes. Ownership itself (leases, epochs, fencing) is the store's
//! (`switchboard_actors::store::Cluster`); which node serves a request is the edge's
//! (`http::forward`).

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use switchboard_actors::directory::Directory;
use switchboard_actors::ids::WorkspaceId;
use switchboard_actors::registry::Registry;
use switchboard_actors::store::{Cluster, NodeConfig};
use tokio::sync::watch;

use crate::config::Settings;

/// How often the rows of no workspace (the directory) are checked for other nodes' changes.
const DIRECTORY_EVERY: Duration = Duration::from_millis(500);

/// This node as the store's cluster knows it.
pub fn node_config(
    settings: &Settings,
    api_addr: SocketAddr,
    admin_addr: SocketAddr,
) -> NodeConfig {
    NodeConfig {
        id: settings
            .cluster
            .node_id
            .clone()
            .unwrap_or_else(|| default_node_id(&settings.data_dir)),
        addr: settings
            .cluster
            .advertise_addr
            .clone()
            .unwrap_or_else(|| format!("http://{api_addr}")),
        admin_addr: settings
            .cluster
            .advertise_admin_addr
            .clone()
            .unwrap_or_else(|| format!("http://{admin_addr}")),
        lease_ttl: settings.cluster.lease_ttl,
        offline: false,
    }
}

/// The same name for the same host and data folder, so that a restarted process takes its
/// workspaces back at once instead of waiting for their leases to expire.
fn default_node_id(data_dir: &std::path::Path) -> String {
    use sha2::{Digest, Sha256};
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .or_else(|_| std::env::var("HOSTNAME"))
        .unwrap_or_default();
    let dir = std::fs::canonicalize(data_dir).unwrap_or_else(|_| data_dir.to_path_buf());
    let mut h = Sha256::new();
    h.update(host.trim().as_bytes());
    h.update([0]);
    h.update(dir.to_string_lossy().as_bytes());
    format!(
        "node-{}",
        &switchboard_actors::hex::lower_hex(&h.finalize())[..12]
    )
}

/// Starts the loops: renewing this node's leases, taking over workspaces whose owner is
/// gone while work waits in them (and, first, those a previous process under this name
/// held), and reloading the directory when another node changed it. They end on `stopped`.
pub fn start(
    cluster: Arc<Cluster>,
    registry: Registry,
    directory: Directory,
    stopped: watch::Receiver<bool>,
) {
    // The hook only sends: holding the registry in it would keep the store (and its
    // connections) alive through the registry's own handle on the store.
    let (lost_tx, lost) = tokio::sync::mpsc::unbounded_channel::<String>();
    cluster.on_lost(Box::new(move |ws| {
        let _ = lost_tx.send(ws.to_string());
    }));
    tokio::spawn(stop_lost(lost, registry.clone(), stopped.clone()));
    let ttl = cluster.node().lease_ttl;
    tokio::spawn(keep_leases(cluster.clone(), registry, ttl, stopped.clone()));
    tokio::spawn(follow_directory(directory, stopped));
}

/// Stops what ran here of each workspace another node took.
async fn stop_lost(
    mut lost: tokio::sync::mpsc::UnboundedReceiver<String>,
    registry: Registry,
    mut stopped: watch::Receiver<bool>,
) {
    loop {
        let ws = tokio::select! {
            ws = lost.recv() => ws,
            _ = stopped.wait_for(|s| *s) => return,
        };
        let Some(ws) = ws else { return };
        if let Some(ws) = WorkspaceId::parse(&ws) {
            registry.lose(&ws);
        }
    }
}

async fn keep_leases(
    cluster: Arc<Cluster>,
    registry: Registry,
    ttl: Duration,
    mut stopped: watch::Receiver<bool>,
) {
    let mut first = true;
    let mut tick = tokio::time::interval(ttl / 3);
    loop {
        tokio::select! {
            _ = tick.tick() => {}
            _ = stopped.wait_for(|s| *s) => return,
        }
        let c = cluster.clone();
        if let Err(e) = blocking(move || c.renew()).await {
            tracing::warn!(error = %e, "could not renew this node's leases");
            continue;
        }
        let c = cluster.clone();
        let take_back = first;
        let candidates = blocking(move || {
            let mut found = c.orphans()?;
            if take_back {
                found.extend(c.mine()?);
            }
            Ok(found)
        })
        .await;
        match candidates {
            Ok(workspaces) => {
                first = false;
                for ws in workspaces {
                    let Some(ws) = WorkspaceId::parse(&ws) else {
                        continue;
                    };
                    match registry.own(&ws).await {
                        Ok(()) => tracing::debug!(workspace = %ws, "serving the workspace"),
                        Err(e) => tracing::debug!(workspace = %ws, error = %e, "left to its owner"),
                    }
                }
            }
            Err(e) => tracing::warn!(error = %e, "could not look for workspaces to take over"),
        }
    }
}

/// Looks for other nodes' directory changes every [`DIRECTORY_EVERY`]. A lookup that
/// misses looks at once (`Directory::catch_up`); both share one look at a time.
async fn follow_directory(directory: Directory, mut stopped: watch::Receiver<bool>) {
    let mut tick = tokio::time::interval(DIRECTORY_EVERY);
    loop {
        tokio::select! {
            _ = tick.tick() => {}
            _ = stopped.wait_for(|s| *s) => return,
        }
        if let Err(e) = directory.catch_up().await {
            tracing::warn!(error = %e, "could not look for directory changes made on other nodes");
        }
    }
}

/// Runs blocking store work off the async workers.
async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> switchboard_actors::store::StoreResult<T> + Send + 'static,
) -> Result<T, String> {
    match tokio::task::spawn_blocking(work).await {
        Ok(outcome) => outcome.map_err(|e| e.to_string()),
        Err(e) => Err(e.to_string()),
    }
}
