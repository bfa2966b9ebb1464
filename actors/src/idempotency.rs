//! Idempotency keys: the first response to a key is stored (failures included) and replayed
//! for repeats, scoped to workspace and credential, for a set time.
//!
//! A request first *claims* its key with a compare-and-swap, so of two concurrent requests
//! with the same key exactly one runs; the other sees `InProgress`. A claim that never
//! completes (the process died mid-request) stays `InProgress` until it expires: the caller
//! cannot know whether the write happened, and the record says so.

use std::time::Duration;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::clock::{SharedClock, Timestamp};
use crate::directory::Permission;
use crate::store::{decode, encode, Store, StoreResult, Tree};

pub const MAX_KEY_LEN: usize = 200;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoredResponse {
    pub status: u16,
    pub content_type: Option<String>,
    pub body: Vec<u8>,
    /// What the caller had to have for the first answer; a replay checks it again, so
    /// a caller who has lost it since is refused as a first request would be.
    pub requirements: Vec<Requirement>,
}

/// A right the answering route checked: a permission, or being an owner or admin.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Requirement {
    Permission(Permission),
    OwnerOrAdmin,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct Record {
    fingerprint: String,
    created_at: Timestamp,
    response: Option<StoredResponse>,
}

/// A record as stored before answers named their requirements.
#[derive(Deserialize)]
struct RecordV1 {
    fingerprint: String,
    created_at: Timestamp,
    response: Option<StoredResponseV1>,
}

#[derive(Deserialize)]
struct StoredResponseV1 {
    status: u16,
    content_type: Option<String>,
    body: Vec<u8>,
}

/// A stored record in the current shape or the one before it (read as requiring
/// nothing, as it was answered).
fn read_record(bytes: &[u8]) -> StoreResult<Record> {
    decode::<Record>(bytes).or_else(|_| {
        decode::<RecordV1>(bytes).map(|r| Record {
            fingerprint: r.fingerprint,
            created_at: r.created_at,
            response: r.response.map(|s| StoredResponse {
                status: s.status,
                content_type: s.content_type,
                body: s.body,
                requirements: Vec::new(),
            }),
        })
    })
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Claim {
    /// First use: run the request, then [`Idempotency::complete`].
    Fresh,
    /// Seen before with the same request: answer with this.
    Replay(StoredResponse),
    /// Seen before with a different request.
    Reused,
    /// The first request with this key has not finished.
    InProgress,
}

#[derive(Clone)]
pub struct Idempotency {
    tree: Tree,
    store: Store,
    clock: SharedClock,
    ttl: Duration,
}

/// Identifies a request's content: method, path with query, body.
pub fn fingerprint(method: &str, path_and_query: &str, body: &[u8]) -> String {
    let mut h = Sha256::new();
    h.update(method.as_bytes());
    h.update([0]);
    h.update(path_and_query.as_bytes());
    h.update([0]);
    h.update(body);
    crate::hex::lower_hex(&h.finalize())
}

/// A JSON body in one form for comparing repeats: keys sorted, no insignificant white
/// space, and each number by its value (`10`, `10.0` and `1e1` are one number), so that a
/// client that re-serialises between retries still matches.
pub fn canonical_json(value: &serde_json::Value) -> String {
    let mut out = String::new();
    write_canonical(value, &mut out);
    out
}

fn write_canonical(value: &serde_json::Value, out: &mut String) {
    use serde_json::Value;
    match value {
        Value::Number(n) => out.push_str(&canonical_number(n)),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_canonical(item, out);
            }
            out.push(']');
        }
        Value::Object(fields) => {
            let mut keys: Vec<&String> = fields.keys().collect();
            keys.sort();
            out.push('{');
            for (i, key) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String(key.clone()).to_string());
                out.push(':');
                write_canonical(&fields[key], out);
            }
            out.push('}');
        }
        other => out.push_str(&other.to_string()),
    }
}

/// An integer as its digits; any other number by its value when a float holds it exactly
/// enough to tell it apart (integral ones as integers), else as written.
fn canonical_number(n: &serde_json::Number) -> String {
    if let Some(i) = n.as_i64() {
        return i.to_string();
    }
    if let Some(u) = n.as_u64() {
        return u.to_string();
    }
    match n.as_f64() {
        Some(f) if f.is_finite() && f.fract() == 0.0 && f.abs() < 9.0e15 => (f as i64).to_string(),
        Some(f) if f.is_finite() => format!("{f:?}"),
        _ => n.to_string(),
    }
}

fn record_key(scope: &str, key: &str) -> Vec<u8> {
    let mut k = scope.as_bytes().to_vec();
    k.push(0);
    k.extend_from_slice(key.as_bytes());
    k
}

impl Idempotency {
    pub fn open(store: &Store, clock: SharedClock, ttl: Duration) -> StoreResult<Self> {
        Ok(Self {
            tree: store.tree("idempotency")?,
            store: store.clone(),
            clock,
            ttl,
        })
    }

    fn expired(&self, rec: &Record, now: DateTime<Utc>) -> bool {
        chrono::Duration::from_std(self.ttl)
            .map(|ttl| rec.created_at + ttl <= now)
            .unwrap_or(false)
    }

    /// Claims `key` within `scope` (workspace and credential) for a request.
    pub fn claim(&self, scope: &str, key: &str, fingerprint: &str) -> StoreResult<Claim> {
        let k = record_key(scope, key);
        loop {
            let now = self.clock.now();
            let fresh = encode(&Record {
                fingerprint: fingerprint.to_string(),
                created_at: Timestamp(now),
                response: None,
            })?;
            let current = self.tree.get_raw(&k)?;
            let claimable = match &current {
                None => true,
                Some(bytes) => match read_record(bytes) {
                    Ok(rec) if !self.expired(&rec, now) => {
                        return Ok(if rec.fingerprint != fingerprint {
                            Claim::Reused
                        } else {
                            match rec.response {
                                Some(r) => Claim::Replay(r),
                                None => Claim::InProgress,
                            }
                        });
                    }
                    _ => true,
                },
            };
            if claimable && self.tree.compare_and_swap(&k, current.as_deref(), fresh)? {
                return Ok(Claim::Fresh);
            }
        }
    }

    /// Stores the response of a claimed key and waits until it is durable.
    pub async fn complete(
        &self,
        scope: &str,
        key: &str,
        fingerprint: &str,
        response: StoredResponse,
    ) -> StoreResult<()> {
        let rec = Record {
            fingerprint: fingerprint.to_string(),
            created_at: Timestamp(self.clock.now()),
            response: Some(response),
        };
        self.tree.insert(&record_key(scope, key), &rec)?;
        self.store.durable().await
    }

    /// Lets go of a claimed key whose request was refused without running (401, 403,
    /// 429): a repeat runs it afresh, once the caller may.
    pub fn release(&self, scope: &str, key: &str) -> StoreResult<()> {
        self.tree.remove(&record_key(scope, key))
    }

    /// Removes expired records; returns how many.
    pub fn prune(&self) -> usize {
        let now = self.clock.now();
        let expired: Vec<Vec<u8>> = self
            .tree
            .iter::<Record>()
            .filter(|(_, rec)| self.expired(rec, now))
            .map(|(k, _)| k)
            .collect();
        expired
            .iter()
            .filter(|k| self.tree.remove(k).is_ok())
            .count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::ManualClock;
    use std::sync::Arc;

    #[test]
    fn canonical_json_compares_numbers_by_value_and_keys_in_order() {
        let canon = |text: &str| canonical_json(&serde_json::from_str(text).unwrap());
        assert_eq!(
            canon(r#"{"b":10.0,"a":[1.50,2e0]}"#),
            r#"{"a":[1.5,2],"b":10}"#
        );
        assert_eq!(canon(r#"{"a": 10}"#), canon(r#"{"a":1e1}"#));
        assert_ne!(canon(r#"{"a":10}"#), canon(r#"{"a":10.5}"#));
        assert_eq!(canon("18446744073709551615"), "18446744073709551615");
        assert_eq!(canon("-3"), "-3");
        assert_eq!(canon(r#"{"t":"é\n"}"#), r#"{"t":"é\n"}"#);
    }

    async fn idem() -> (tempfile::TempDir, Idempotency, ManualClock) {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        let clock = ManualClock::new(Utc::now());
        let i =
            Idempotency::open(&store, Arc::new(clock.clone()), Duration::from_secs(3600)).unwrap();
        (dir, i, clock)
    }

    fn ok() -> StoredResponse {
        StoredResponse {
            status: 201,
            content_type: Some("application/json".into()),
            body: b"{}".to_vec(),
            requirements: vec![Requirement::Permission(Permission::Contacts)],
        }
    }

    #[tokio::test]
    async fn a_record_stored_before_requirements_replays_as_it_was_answered() {
        #[derive(Serialize)]
        struct OldResponse {
            status: u16,
            content_type: Option<String>,
            body: Vec<u8>,
        }
        #[derive(Serialize)]
        struct OldRecord {
            fingerprint: String,
            created_at: Timestamp,
            response: Option<OldResponse>,
        }
        let (_d, i, clock) = idem().await;
        let old = |response| OldRecord {
            fingerprint: "fp".into(),
            created_at: Timestamp(crate::clock::Clock::now(&clock)),
            response,
        };
        let answered = old(Some(OldResponse {
            status: 201,
            content_type: None,
            body: b"{}".to_vec(),
        }));
        i.tree
            .insert(&record_key("ws:a", "done"), &answered)
            .unwrap();
        i.tree
            .insert(&record_key("ws:a", "running"), &old(None))
            .unwrap();
        assert_eq!(
            i.claim("ws:a", "done", "fp").unwrap(),
            Claim::Replay(StoredResponse {
                status: 201,
                content_type: None,
                body: b"{}".to_vec(),
                requirements: Vec::new(),
            })
        );
        assert_eq!(i.claim("ws:a", "running", "fp").unwrap(), Claim::InProgress);
    }

    #[tokio::test]
    async fn first_claim_runs_then_repeats_replay_and_other_bodies_conflict() {
        let (_d, i, _) = idem().await;
        assert_eq!(i.claim("ws:a", "k1", "fp").unwrap(), Claim::Fresh);
        assert_eq!(i.claim("ws:a", "k1", "fp").unwrap(), Claim::InProgress);
        i.complete("ws:a", "k1", "fp", ok()).await.unwrap();
        assert_eq!(i.claim("ws:a", "k1", "fp").unwrap(), Claim::Replay(ok()));
        assert_eq!(i.claim("ws:a", "k1", "other").unwrap(), Claim::Reused);
        assert_eq!(
            i.claim("ws:b", "k1", "other").unwrap(),
            Claim::Fresh,
            "scopes are separate"
        );
    }

    #[tokio::test]
    async fn keys_expire_after_the_ttl_and_are_pruned() {
        let (_d, i, clock) = idem().await;
        assert_eq!(i.claim("s", "k", "fp").unwrap(), Claim::Fresh);
        i.complete("s", "k", "fp", ok()).await.unwrap();
        clock.advance(Duration::from_secs(3601));
        assert_eq!(i.prune(), 1);
        assert_eq!(i.claim("s", "k", "other").unwrap(), Claim::Fresh);
    }
}
