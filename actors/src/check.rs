//! The offline integrity check of a stopped store (`switchboard check`): every value carries
//! a known format, every record decodes into its type, every reference points at a record,
//! and every pending delivery names a live endpoint.

use std::collections::{BTreeMap, HashSet};

use crate::clock::{SharedClock, SystemClock};
use crate::delivery::record::{Delivery, DeliveryStatus};
use crate::directory::Directory;
use crate::ids::{ChannelId, EndpointId};
use crate::store::{decode, Store};
use crate::workspace::WorkspaceData;

/// What the check found.
#[derive(Debug, Default)]
pub struct Report {
    /// Stored values by family (`workspace records`, `deliveries`, ...).
    pub counts: BTreeMap<&'static str, u64>,
    /// Each problem found, in words.
    pub problems: Vec<String>,
}

impl Report {
    pub fn is_healthy(&self) -> bool {
        self.problems.is_empty()
    }

    fn count(&mut self, family: &'static str) {
        *self.counts.entry(family).or_default() += 1;
    }
}

/// The family of a key of the main keyspace.
fn family(key: &[u8]) -> Option<&'static str> {
    [
        ("w/", "workspace records"),
        ("wd/", "deliveries"),
        ("wp/", "pending delivery index"),
        ("os/", "pending sends"),
        ("d/", "directory records"),
        ("meta/", "store metadata"),
        ("tq/", "timers"),
    ]
    .into_iter()
    .find(|(prefix, _)| key.starts_with(prefix.as_bytes()))
    .map(|(_, name)| name)
}

/// Checks everything in `store`; never writes.
pub fn run(store: &Store) -> Report {
    let mut report = Report::default();
    raw_pass(store, &mut report);
    let clock: SharedClock = std::sync::Arc::new(SystemClock);
    let directory = match Directory::load(store.clone(), clock) {
        Ok(d) => d,
        Err(e) => {
            report
                .problems
                .push(format!("directory does not load: {e}"));
            return report;
        }
    };
    for problem in directory.dangling_references() {
        report.problems.push(format!("directory: {problem}"));
    }
    let mut endpoints = HashSet::new();
    let mut connections = HashSet::new();
    let mut known = HashSet::new();
    for ws in directory.workspaces() {
        known.insert(ws.id.to_string());
        match WorkspaceData::load(store, &ws.id) {
            Ok(data) => {
                for problem in data.dangling_references() {
                    report
                        .problems
                        .push(format!("workspace {}: {problem}", ws.id));
                }
                endpoints.extend(data.webhooks.configs(&ws.id).into_iter().map(|c| c.id));
                connections.extend(
                    data.channels
                        .relays(&ws.id)
                        .into_iter()
                        .map(|c| c.channel_id),
                );
            }
            Err(e) => report
                .problems
                .push(format!("workspace {}: records do not load: {e}", ws.id)),
        }
    }
    orphans(store, &known, &mut report);
    deliveries(store, &endpoints, &mut report);
    pending_sends(store, &connections, &mut report);
    report
}

/// Every value of every keyspace decodes at least as far as its format byte; keys of the
/// main keyspace belong to a known family.
fn raw_pass(store: &Store, report: &mut Report) {
    match store.raw_entries() {
        Ok(entries) => {
            for (tree, key, value) in entries {
                let family = if tree.is_empty() {
                    match family(&key) {
                        Some(f) => f,
                        None => {
                            report
                                .problems
                                .push(format!("unknown key {}", String::from_utf8_lossy(&key)));
                            continue;
                        }
                    }
                } else {
                    "keyspace records"
                };
                report.count(family);
                if let Err(e) = crate::store::check_format(&value) {
                    report.problems.push(format!(
                        "{family}: value of {} unreadable: {e}",
                        String::from_utf8_lossy(&key)
                    ));
                }
            }
        }
        Err(e) => report.problems.push(format!("store unreadable: {e}")),
    }
}

/// Records of a workspace the directory does not know.
fn orphans(store: &Store, known: &HashSet<String>, report: &mut Report) {
    let Ok(keys) = store.keys(b"w/") else {
        return;
    };
    let mut seen = HashSet::new();
    for key in keys {
        let ws = key
            .get(2..)
            .and_then(|rest| rest.split(|b| *b == b'/').next())
            .map(|w| String::from_utf8_lossy(w).to_string())
            .unwrap_or_default();
        if !known.contains(&ws) && seen.insert(ws.clone()) {
            report
                .problems
                .push(format!("records of unknown workspace {ws}"));
        }
    }
}

/// Every delivery decodes; a pending one names an endpoint that still exists.
fn deliveries(store: &Store, endpoints: &HashSet<EndpointId>, report: &mut Report) {
    let Ok(keys) = store.keys(b"wd/") else {
        return;
    };
    for key in keys {
        let decoded = store.get_raw(&key).and_then(|v| match v {
            Some(v) => decode::<Delivery>(&v).map(Some),
            None => Ok(None),
        });
        match decoded {
            Ok(Some(d))
                if d.status == DeliveryStatus::Pending && !endpoints.contains(&d.endpoint_id) =>
            {
                report.problems.push(format!(
                    "pending delivery {} names missing endpoint {}",
                    d.id, d.endpoint_id
                ))
            }
            Ok(_) => {}
            Err(e) => report.problems.push(format!(
                "delivery {} does not decode: {e}",
                String::from_utf8_lossy(&key)
            )),
        }
    }
}

/// Every pending send decodes and waits for a connection that still exists.
fn pending_sends(store: &Store, connections: &HashSet<ChannelId>, report: &mut Report) {
    let Ok(keys) = store.keys(b"os/") else {
        return;
    };
    for key in keys {
        let Some(connection) = crate::outbound::record::connection_of(&key) else {
            report.problems.push(format!(
                "pending send key {} names no connection",
                String::from_utf8_lossy(&key)
            ));
            continue;
        };
        let decoded = store.get_raw(&key).and_then(|v| match v {
            Some(v) => crate::outbound::record::read(&v).map(Some),
            None => Ok(None),
        });
        match decoded {
            Ok(Some(send)) if !connections.contains(&connection) => report.problems.push(format!(
                "pending send of message {} names missing connection {connection}",
                send.message_id
            )),
            Ok(_) => {}
            Err(e) => report.problems.push(format!(
                "pending send {} does not decode: {e}",
                String::from_utf8_lossy(&key)
            )),
        }
    }
}
