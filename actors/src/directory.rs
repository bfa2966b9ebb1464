//! Who may do what: workspaces, users, memberships, API keys and OAuth access tokens.
//!
//! Every record lives in memory (so authenticating a request never touches disk) and is
//! written through to the store before a change is acknowledged. Secrets are kept only as
//! SHA-256 hashes: they are high-entropy random strings, so a plain hash is enough.

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use chrono::{DateTime, Utc};
use dashmap::DashMap;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use tokio::sync::Mutex;
use utoipa::ToSchema;

use crate::clock::{SharedClock, Timestamp};
use crate::domain::{text, DomainError};
use crate::ids::{random_id, UserId, WorkspaceId};
use crate::store::{Batch, Key, Store};

pub const API_KEY_PREFIX: &str = "ai";
pub const TOKEN_PREFIX: &str = "oat";

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct Workspace {
    #[schema(value_type = String)]
    pub id: WorkspaceId,
    pub name: String,
    /// HIPAA workspaces never send content or contact details in events.
    pub hipaa: bool,
    #[schema(value_type = String)]
    pub owner_user_id: UserId,
    pub created_at: Timestamp,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct User {
    #[schema(value_type = String)]
    pub id: UserId,
    pub name: String,
    pub email: String,
    pub created_at: Timestamp,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    Owner,
    Admin,
    Member,
}

impl Role {
    pub fn is_owner_or_admin(self) -> bool {
        matches!(self, Role::Owner | Role::Admin)
    }
}

/// The permissions a member's role can enable.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, ToSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Permission {
    Contacts,
    Inbox,
    Calendar,
    Orders,
    BusinessPages,
    CallAgent,
    Campaigns,
    Integrations,
}

impl Permission {
    pub const ALL: [Permission; 8] = [
        Permission::Contacts,
        Permission::Inbox,
        Permission::Calendar,
        Permission::Orders,
        Permission::BusinessPages,
        Permission::CallAgent,
        Permission::Campaigns,
        Permission::Integrations,
    ];
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct Membership {
    #[schema(value_type = String)]
    pub workspace_id: WorkspaceId,
    #[schema(value_type = String)]
    pub user_id: UserId,
    pub role: Role,
    /// Meaningful for members; owners and admins pass every check.
    pub permissions: BTreeSet<Permission>,
    pub created_at: Timestamp,
}

impl Membership {
    pub fn allows(&self, permission: Permission) -> bool {
        self.role.is_owner_or_admin() || self.permissions.contains(&permission)
    }

    /// What the member may do: every permission for owners and admins.
    pub fn effective_permissions(&self) -> Vec<Permission> {
        if self.role.is_owner_or_admin() {
            Permission::ALL.to_vec()
        } else {
            self.permissions.iter().copied().collect()
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct ApiKeyRecord {
    id: String,
    workspace_id: WorkspaceId,
    created_at: Timestamp,
    revoked_at: Option<Timestamp>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct TokenRecord {
    id: String,
    user_id: UserId,
    expires_at: Timestamp,
}

/// An authenticated credential.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Principal {
    /// Owner rights in its own workspace only.
    ApiKey {
        key_id: String,
        workspace_id: WorkspaceId,
    },
    /// A person, through a connector's OAuth token.
    User { token_id: String, user_id: UserId },
}

impl Principal {
    /// `<kind>:<id>`: names the credential in idempotency scopes and event sources.
    pub fn connection_id(&self) -> String {
        match self {
            Principal::ApiKey { key_id, .. } => format!("api_key:{key_id}"),
            Principal::User { token_id, .. } => format!("oauth:{token_id}"),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum AuthError {
    #[error("the API key is not valid or has been revoked")]
    InvalidApiKey,
    #[error("the access token is not valid")]
    InvalidToken,
    #[error("the access token has expired; renew it and retry")]
    ExpiredToken,
}

/// A new API key: the plain text is shown once, to whoever created it.
#[derive(Debug, Clone)]
pub struct IssuedApiKey {
    pub key_id: String,
    pub plain: String,
}

#[derive(Debug, Clone)]
pub struct IssuedToken {
    pub plain: String,
    pub expires_at: DateTime<Utc>,
}

pub fn hash_secret(secret: &str) -> String {
    crate::hex::lower_hex(&Sha256::digest(secret.as_bytes()))
}

#[derive(Clone)]
pub struct Directory(Arc<Inner>);

struct Inner {
    store: Store,
    clock: SharedClock,
    workspaces: DashMap<WorkspaceId, Workspace>,
    users: DashMap<UserId, User>,
    memberships: DashMap<(WorkspaceId, UserId), Membership>,
    /// The workspaces of each user, so that choosing a workspace never scans everyone's.
    workspaces_of: DashMap<UserId, BTreeSet<WorkspaceId>>,
    /// The members of each workspace, so that listing them never scans everyone's.
    members_of: DashMap<WorkspaceId, BTreeSet<UserId>>,
    api_keys: DashMap<String, ApiKeyRecord>,
    tokens: DashMap<String, TokenRecord>,
    /// Serializes writers; reads never wait on it.
    write: Mutex<()>,
    /// When the last look for other nodes' changes started (cluster only): lookups that
    /// miss share one look at a time, and looks are at least [`LOOK_GAP`] apart.
    looked: Mutex<Option<tokio::time::Instant>>,
    looks: AtomicU64,
}

/// The shortest time between two looks for other nodes' directory changes, however many
/// lookups miss: a stream of unknown keys costs the database at most this many queries.
pub const LOOK_GAP: Duration = Duration::from_millis(100);

impl Inner {
    fn remember(&self, m: Membership) {
        self.workspaces_of
            .entry(m.user_id.clone())
            .or_default()
            .insert(m.workspace_id.clone());
        self.members_of
            .entry(m.workspace_id.clone())
            .or_default()
            .insert(m.user_id.clone());
        self.memberships
            .insert((m.workspace_id.clone(), m.user_id.clone()), m);
    }
}

/// Makes `now` hold what `fresh` holds.
fn sync<K, V>(now: &DashMap<K, V>, fresh: &DashMap<K, V>)
where
    K: std::hash::Hash + Eq + Clone,
    V: Clone,
{
    for entry in fresh.iter() {
        now.insert(entry.key().clone(), entry.value().clone());
    }
    now.retain(|k, _| fresh.contains_key(k));
}

fn key(kind: &str, id: &str) -> Vec<u8> {
    Key::new("d").str(kind).str(id).build()
}

fn prefix(kind: &str) -> Vec<u8> {
    Key::new("d").str(kind).prefix()
}

impl Directory {
    /// Loads every record into memory.
    pub fn load(store: Store, clock: SharedClock) -> Result<Self, DomainError> {
        let inner = Inner {
            workspaces: DashMap::new(),
            users: DashMap::new(),
            memberships: DashMap::new(),
            workspaces_of: DashMap::new(),
            members_of: DashMap::new(),
            api_keys: DashMap::new(),
            tokens: DashMap::new(),
            write: Mutex::new(()),
            looked: Mutex::new(None),
            looks: AtomicU64::new(0),
            store,
            clock,
        };
        for (_, w) in inner.store.scan::<Workspace>(&prefix("ws"))? {
            inner.workspaces.insert(w.id.clone(), w);
        }
        for (_, u) in inner.store.scan::<User>(&prefix("usr"))? {
            inner.users.insert(u.id.clone(), u);
        }
        for (_, m) in inner.store.scan::<Membership>(&prefix("mem"))? {
            inner.remember(m);
        }
        for (k, rec) in inner.store.scan::<ApiKeyRecord>(&prefix("key"))? {
            inner.api_keys.insert(tail(&k), rec);
        }
        for (k, rec) in inner.store.scan::<TokenRecord>(&prefix("tok"))? {
            inner.tokens.insert(tail(&k), rec);
        }
        Ok(Self(Arc::new(inner)))
    }

    /// Records that name a workspace or user the directory does not hold: a membership,
    /// an API key, a token. (`switchboard check` reports them.)
    pub fn dangling_references(&self) -> Vec<String> {
        let inner = &*self.0;
        let mut problems = Vec::new();
        for m in inner.memberships.iter() {
            let m = m.value();
            if !inner.workspaces.contains_key(&m.workspace_id) {
                problems.push(format!(
                    "membership of {} names unknown workspace {}",
                    m.user_id, m.workspace_id
                ));
            }
            if !inner.users.contains_key(&m.user_id) {
                problems.push(format!(
                    "membership in {} names unknown user {}",
                    m.workspace_id, m.user_id
                ));
            }
        }
        for key in inner.api_keys.iter() {
            if !inner.workspaces.contains_key(&key.workspace_id) {
                problems.push(format!(
                    "API key {} names unknown workspace {}",
                    key.id, key.workspace_id
                ));
            }
        }
        for token in inner.tokens.iter() {
            if !inner.users.contains_key(&token.user_id) {
                problems.push(format!(
                    "token {} names unknown user {}",
                    token.id, token.user_id
                ));
            }
        }
        problems.sort();
        problems
    }

    /// Reads every record again (another node of the cluster changed some): entries are
    /// replaced or removed one by one, never cleared, so a lookup meanwhile sees the old
    /// record or the new one.
    pub fn refresh(&self) -> Result<(), DomainError> {
        let fresh = Self::load(self.0.store.clone(), self.0.clock.clone())?;
        let (now, new) = (&*self.0, &*fresh.0);
        sync(&now.workspaces, &new.workspaces);
        sync(&now.users, &new.users);
        sync(&now.memberships, &new.memberships);
        sync(&now.workspaces_of, &new.workspaces_of);
        sync(&now.members_of, &new.members_of);
        sync(&now.api_keys, &new.api_keys);
        sync(&now.tokens, &new.tokens);
        Ok(())
    }

    /// In a cluster, reads what other nodes changed in the directory since the last look
    /// (one query, and a reload when something changed). Concurrent callers share a look
    /// that started after they asked, and looks are [`LOOK_GAP`] apart. Elsewhere a
    /// no-op: one process holds the whole directory.
    pub async fn catch_up(&self) -> Result<(), DomainError> {
        let Some(cluster) = self.0.store.cluster() else {
            return Ok(());
        };
        let asked = tokio::time::Instant::now();
        let mut looked = self.0.looked.lock().await;
        if looked.is_some_and(|at| at >= asked) {
            return Ok(());
        }
        if let Some(at) = *looked {
            tokio::time::sleep_until(at + LOOK_GAP).await;
        }
        *looked = Some(tokio::time::Instant::now());
        self.0.looks.fetch_add(1, Ordering::Relaxed);
        let changed = tokio::task::spawn_blocking(move || cluster.refresh_shared())
            .await
            .map_err(|e| DomainError::Internal(format!("directory look: {e}")))??;
        if changed {
            self.refresh()?;
        }
        Ok(())
    }

    /// How many looks for other nodes' changes [`Self::catch_up`] made (for operators).
    pub fn looks(&self) -> u64 {
        self.0.looks.load(Ordering::Relaxed)
    }

    /// [`Self::catch_up`] when `missing` holds: something a request names is not known
    /// here, and may have just been made on another node. A failed look is logged and
    /// leaves the answer to what this node knows.
    pub async fn catch_up_if(&self, missing: impl Fn(&Self) -> bool) {
        if self.0.store.cluster().is_some() && missing(self) {
            self.catch_up_or_log().await;
        }
    }

    /// [`Self::catch_up`] after a lookup missed; a failed look is logged and leaves the
    /// answer to what this node knows.
    pub async fn catch_up_or_log(&self) {
        if let Err(e) = self.catch_up().await {
            tracing::warn!(error = %e, "could not look for directory changes made on other nodes");
        }
    }

    /// [`Self::authenticate`], looking for other nodes' changes once when the credential
    /// is unknown here (it may have been issued on another node a moment ago).
    pub async fn authenticate_anywhere(&self, bearer: &str) -> Result<Principal, AuthError> {
        match self.authenticate(bearer) {
            Err(AuthError::InvalidApiKey | AuthError::InvalidToken) => {
                self.catch_up_or_log().await;
                self.authenticate(bearer)
            }
            known => known,
        }
    }

    /// Resolves a bearer credential, in memory.
    pub fn authenticate(&self, bearer: &str) -> Result<Principal, AuthError> {
        let hash = hash_secret(bearer);
        if bearer.starts_with("ai_") {
            let rec = self.0.api_keys.get(&hash).ok_or(AuthError::InvalidApiKey)?;
            if rec.revoked_at.is_some() || !self.0.workspaces.contains_key(&rec.workspace_id) {
                return Err(AuthError::InvalidApiKey);
            }
            return Ok(Principal::ApiKey {
                key_id: rec.id.clone(),
                workspace_id: rec.workspace_id.clone(),
            });
        }
        let rec = self.0.tokens.get(&hash).ok_or(AuthError::InvalidToken)?;
        if rec.expires_at <= self.0.clock.now() {
            return Err(AuthError::ExpiredToken);
        }
        Ok(Principal::User {
            token_id: rec.id.clone(),
            user_id: rec.user_id.clone(),
        })
    }

    pub fn workspace(&self, id: &WorkspaceId) -> Option<Workspace> {
        self.0.workspaces.get(id).map(|w| w.clone())
    }

    pub fn workspaces(&self) -> Vec<Workspace> {
        let mut all: Vec<_> = self.0.workspaces.iter().map(|w| w.clone()).collect();
        all.sort_by(|a, b| b.created_at.cmp(&a.created_at).then(b.id.cmp(&a.id)));
        all
    }

    pub fn user(&self, id: &UserId) -> Option<User> {
        self.0.users.get(id).map(|u| u.clone())
    }

    pub fn membership(&self, ws: &WorkspaceId, user: &UserId) -> Option<Membership> {
        self.0
            .memberships
            .get(&(ws.clone(), user.clone()))
            .map(|m| m.clone())
    }

    /// Every member of a workspace, newest membership first.
    pub fn members(&self, ws: &WorkspaceId) -> Vec<Membership> {
        let users: Vec<UserId> = self
            .0
            .members_of
            .get(ws)
            .map(|u| u.iter().cloned().collect())
            .unwrap_or_default();
        let mut all: Vec<Membership> = users
            .into_iter()
            .filter_map(|u| self.membership(ws, &u))
            .collect();
        all.sort_by(|a, b| {
            b.created_at
                .cmp(&a.created_at)
                .then(b.user_id.cmp(&a.user_id))
        });
        all
    }

    /// Every workspace a user belongs to, oldest membership first.
    pub fn memberships_of(&self, user: &UserId) -> Vec<Membership> {
        let workspaces: Vec<WorkspaceId> = self
            .0
            .workspaces_of
            .get(user)
            .map(|w| w.iter().cloned().collect())
            .unwrap_or_default();
        let mut all: Vec<Membership> = workspaces
            .into_iter()
            .filter_map(|ws| self.membership(&ws, user))
            .collect();
        all.sort_by(|a, b| {
            a.created_at
                .cmp(&b.created_at)
                .then(a.workspace_id.cmp(&b.workspace_id))
        });
        all
    }

    /// A new workspace with its owner (a new user) and one API key.
    pub async fn create_workspace(
        &self,
        name: &str,
        hipaa: bool,
    ) -> Result<(Workspace, User, IssuedApiKey), DomainError> {
        let name = text::name(name, 100).map_err(|m| DomainError::invalid("name", m))?;
        let _guard = self.0.write.lock().await;
        let now = self.0.clock.now();
        let owner = User {
            id: UserId::generate(),
            name: format!("{name} owner"),
            email: String::new(),
            created_at: Timestamp(now),
        };
        let ws = Workspace {
            id: WorkspaceId::generate(),
            name,
            hipaa,
            owner_user_id: owner.id.clone(),
            created_at: Timestamp(now),
        };
        let membership = Membership {
            workspace_id: ws.id.clone(),
            user_id: owner.id.clone(),
            role: Role::Owner,
            permissions: BTreeSet::new(),
            created_at: Timestamp(now),
        };
        let (key_hash, key_rec, issued) = new_api_key(&ws.id, now);
        let mut batch = Batch::default();
        batch.put(key("ws", ws.id.as_str()), &ws)?;
        batch.put(key("usr", owner.id.as_str()), &owner)?;
        batch.put(membership_key(&membership), &membership)?;
        batch.put(key("key", &key_hash), &key_rec)?;
        self.0.store.commit(batch).await?;
        self.0.workspaces.insert(ws.id.clone(), ws.clone());
        self.0.users.insert(owner.id.clone(), owner.clone());
        self.0.remember(membership);
        self.0.api_keys.insert(key_hash, key_rec);
        Ok((ws, owner, issued))
    }

    pub async fn create_api_key(&self, ws: &WorkspaceId) -> Result<IssuedApiKey, DomainError> {
        self.catch_up_if(|d| !d.0.workspaces.contains_key(ws)).await;
        if !self.0.workspaces.contains_key(ws) {
            return Err(DomainError::NotFound("workspace"));
        }
        let _guard = self.0.write.lock().await;
        let (hash, rec, issued) = new_api_key(ws, self.0.clock.now());
        let mut batch = Batch::default();
        batch.put(key("key", &hash), &rec)?;
        self.0.store.commit(batch).await?;
        self.0.api_keys.insert(hash, rec);
        Ok(issued)
    }

    /// Revokes a key given in plain text; unknown keys are 404.
    pub async fn revoke_api_key(&self, plain: &str) -> Result<(), DomainError> {
        let hash = hash_secret(plain);
        self.catch_up_if(|d| !d.0.api_keys.contains_key(&hash))
            .await;
        let _guard = self.0.write.lock().await;
        let mut rec = self
            .0
            .api_keys
            .get(&hash)
            .map(|r| r.clone())
            .ok_or(DomainError::NotFound("api key"))?;
        if rec.revoked_at.is_none() {
            rec.revoked_at = Some(Timestamp(self.0.clock.now()));
        }
        let mut batch = Batch::default();
        batch.put(key("key", &hash), &rec)?;
        self.0.store.commit(batch).await?;
        self.0.api_keys.insert(hash, rec);
        Ok(())
    }

    pub async fn create_user(&self, name: &str, email: &str) -> Result<User, DomainError> {
        let mut checks = crate::domain::error::Checks::new();
        let name = checks.take("name", text::name(name, 200));
        let email = checks.take("email", crate::domain::text::email(email));
        checks.finish()?;
        let user = User {
            id: UserId::generate(),
            name: name.unwrap_or_default(),
            email: email.unwrap_or_default(),
            created_at: Timestamp(self.0.clock.now()),
        };
        let _guard = self.0.write.lock().await;
        let mut batch = Batch::default();
        batch.put(key("usr", user.id.as_str()), &user)?;
        self.0.store.commit(batch).await?;
        self.0.users.insert(user.id.clone(), user.clone());
        Ok(user)
    }

    /// Adds a user to a workspace, or replaces the role and permissions they have there.
    pub async fn set_membership(
        &self,
        ws: &WorkspaceId,
        user: &UserId,
        role: Role,
        permissions: BTreeSet<Permission>,
    ) -> Result<Membership, DomainError> {
        self.catch_up_if(|d| !d.0.workspaces.contains_key(ws) || !d.0.users.contains_key(user))
            .await;
        if !self.0.workspaces.contains_key(ws) {
            return Err(DomainError::NotFound("workspace"));
        }
        if !self.0.users.contains_key(user) {
            return Err(DomainError::invalid("user_id", "no such user"));
        }
        let _guard = self.0.write.lock().await;
        let created_at = self
            .membership(ws, user)
            .map(|m| m.created_at)
            .unwrap_or_else(|| Timestamp(self.0.clock.now()));
        let m = Membership {
            workspace_id: ws.clone(),
            user_id: user.clone(),
            role,
            permissions,
            created_at,
        };
        let mut batch = Batch::default();
        batch.put(membership_key(&m), &m)?;
        self.0.store.commit(batch).await?;
        self.0.remember(m.clone());
        Ok(m)
    }

    /// An opaque access token for a user, valid for `expires_in`.
    pub async fn issue_token(
        &self,
        user: &UserId,
        expires_in: std::time::Duration,
    ) -> Result<IssuedToken, DomainError> {
        self.catch_up_if(|d| !d.0.users.contains_key(user)).await;
        if !self.0.users.contains_key(user) {
            return Err(DomainError::NotFound("user"));
        }
        let expires_in = chrono::Duration::from_std(expires_in)
            .map_err(|_| DomainError::invalid("expires_in", "is too large"))?;
        let plain = random_id(TOKEN_PREFIX, 40);
        let rec = TokenRecord {
            id: random_id("tok", 16),
            user_id: user.clone(),
            expires_at: Timestamp(self.0.clock.now() + expires_in),
        };
        let hash = hash_secret(&plain);
        let _guard = self.0.write.lock().await;
        let mut batch = Batch::default();
        batch.put(key("tok", &hash), &rec)?;
        self.0.store.commit(batch).await?;
        let expires_at = rec.expires_at;
        self.0.tokens.insert(hash, rec);
        Ok(IssuedToken {
            plain,
            expires_at: *expires_at,
        })
    }

    /// A stored setting of the service itself (`admin_token_hash`, ...).
    pub fn meta(&self, name: &str) -> Result<Option<String>, DomainError> {
        Ok(self.0.store.get::<String>(&key("meta", name))?)
    }

    pub async fn set_meta(&self, name: &str, value: &str) -> Result<(), DomainError> {
        let mut batch = Batch::default();
        batch.put(key("meta", name), &value.to_string())?;
        Ok(self.0.store.commit(batch).await?)
    }
}

fn membership_key(m: &Membership) -> Vec<u8> {
    Key::new("d")
        .str("mem")
        .str(m.workspace_id.as_str())
        .str(m.user_id.as_str())
        .build()
}

fn new_api_key(ws: &WorkspaceId, now: DateTime<Utc>) -> (String, ApiKeyRecord, IssuedApiKey) {
    let plain = random_id(API_KEY_PREFIX, 40);
    let rec = ApiKeyRecord {
        id: random_id("key", 16),
        workspace_id: ws.clone(),
        created_at: Timestamp(now),
        revoked_at: None,
    };
    let issued = IssuedApiKey {
        key_id: rec.id.clone(),
        plain: plain.clone(),
    };
    (hash_secret(&plain), rec, issued)
}

/// The last `/`-separated part of a key, as text.
fn tail(k: &[u8]) -> String {
    let at = k
        .iter()
        .rposition(|b| *b == b'/')
        .map(|i| i + 1)
        .unwrap_or(0);
    String::from_utf8_lossy(&k[at..]).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::ManualClock;

    async fn directory() -> (tempfile::TempDir, Directory, ManualClock) {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        let clock = ManualClock::new(Utc::now());
        let d = Directory::load(store, Arc::new(clock.clone())).unwrap();
        (dir, d, clock)
    }

    /// Two nodes of one cluster on a fresh PostgreSQL schema, each with its directory.
    async fn two_nodes() -> (tempfile::TempDir, Directory, Directory) {
        let url = crate::store::test_postgres::fresh_url();
        let dir = tempfile::tempdir().unwrap();
        let clock: SharedClock = Arc::new(ManualClock::new(Utc::now()));
        let node = |id: &str| crate::store::NodeConfig {
            id: id.into(),
            addr: format!("http://{id}.test"),
            admin_addr: format!("http://{id}-admin.test"),
            lease_ttl: Duration::from_secs(10),
            offline: false,
        };
        let open = |id: &str| {
            let store = Store::open_postgres(&url, dir.path(), node(id)).unwrap();
            Directory::load(store, clock.clone()).unwrap()
        };
        let (a, b) = (open("a"), open("b"));
        (dir, a, b)
    }

    #[tokio::test]
    async fn what_another_node_just_made_is_found_at_once_and_misses_share_few_looks() {
        let (_dir, a, b) = two_nodes().await;
        let (ws, owner, key) = a.create_workspace("Acme", false).await.unwrap();
        assert_eq!(
            b.authenticate(&key.plain),
            Err(AuthError::InvalidApiKey),
            "b has not looked yet"
        );
        assert!(matches!(
            b.authenticate_anywhere(&key.plain).await,
            Ok(Principal::ApiKey { workspace_id, .. }) if workspace_id == ws.id
        ));
        // Made on a, used on b at once: a user, their membership, a token, a key.
        let user = a.create_user("Bea", "bea@example.com").await.unwrap();
        let m = b
            .set_membership(&ws.id, &user.id, Role::Member, BTreeSet::new())
            .await
            .unwrap();
        assert_eq!(m.user_id, user.id);
        let token = b
            .issue_token(&owner.id, std::time::Duration::from_secs(60))
            .await
            .unwrap();
        assert!(a.authenticate_anywhere(&token.plain).await.is_ok());
        let second = a.create_api_key(&ws.id).await.unwrap();
        b.revoke_api_key(&second.plain).await.unwrap();
        // A revocation is a change to what a knows: it arrives with a's next look.
        a.catch_up().await.unwrap();
        assert_eq!(a.authenticate(&second.plain), Err(AuthError::InvalidApiKey));

        // Fifty unknown keys at once cost one or two looks, not fifty.
        let before = b.looks();
        let mut misses = tokio::task::JoinSet::new();
        for i in 0..50 {
            let b = b.clone();
            misses.spawn(async move { b.authenticate_anywhere(&format!("ai_unknown_{i}")).await });
        }
        while let Some(answer) = misses.join_next().await {
            assert_eq!(answer.unwrap(), Err(AuthError::InvalidApiKey));
        }
        let looks = b.looks() - before;
        assert!((1..=2).contains(&looks), "{looks} looks for 50 misses");
    }

    #[tokio::test]
    async fn one_process_never_looks_elsewhere() {
        let (_dir, d, _) = directory().await;
        assert_eq!(
            d.authenticate_anywhere("ai_unknown").await,
            Err(AuthError::InvalidApiKey)
        );
        assert_eq!(d.looks(), 0);
    }

    #[tokio::test]
    async fn api_keys_authenticate_until_revoked_and_are_stored_hashed() {
        let (_dir, d, _) = directory().await;
        let (ws, _, key) = d.create_workspace("Acme", false).await.unwrap();
        assert!(key.plain.starts_with("ai_") && key.plain.len() > 40);
        match d.authenticate(&key.plain).unwrap() {
            Principal::ApiKey { workspace_id, .. } => assert_eq!(workspace_id, ws.id),
            other => panic!("{other:?}"),
        }
        assert!(d.0.api_keys.iter().all(|r| r.key() != &key.plain));
        d.revoke_api_key(&key.plain).await.unwrap();
        assert_eq!(d.authenticate(&key.plain), Err(AuthError::InvalidApiKey));
        assert_eq!(d.authenticate("ai_wrong"), Err(AuthError::InvalidApiKey));
    }

    #[tokio::test]
    async fn tokens_expire() {
        let (_dir, d, clock) = directory().await;
        let user = d.create_user("Ann", "ann@example.com").await.unwrap();
        let t = d
            .issue_token(&user.id, std::time::Duration::from_secs(60))
            .await
            .unwrap();
        assert!(matches!(
            d.authenticate(&t.plain),
            Ok(Principal::User { .. })
        ));
        clock.advance(std::time::Duration::from_secs(61));
        assert_eq!(d.authenticate(&t.plain), Err(AuthError::ExpiredToken));
        assert_eq!(d.authenticate("oat_nope"), Err(AuthError::InvalidToken));
    }

    #[tokio::test]
    async fn members_pass_only_their_permissions() {
        let (_dir, d, _) = directory().await;
        let (ws, owner, _) = d.create_workspace("Acme", false).await.unwrap();
        let user = d.create_user("Bo", "bo@example.com").await.unwrap();
        let m = d
            .set_membership(&ws.id, &user.id, Role::Member, [Permission::Orders].into())
            .await
            .unwrap();
        assert!(m.allows(Permission::Orders));
        assert!(!m.allows(Permission::Contacts));
        let o = d.membership(&ws.id, &owner.id).unwrap();
        assert!(o.allows(Permission::Integrations));
    }

    #[tokio::test]
    async fn records_naming_a_workspace_or_user_it_does_not_hold_are_reported() {
        let (dir, d, clock) = directory().await;
        let (ws, owner, _) = d.create_workspace("Acme", false).await.unwrap();
        d.issue_token(&owner.id, std::time::Duration::from_secs(60))
            .await
            .unwrap();
        assert!(d.dangling_references().is_empty());
        // The workspace's and its owner's records go; their key, membership and token stay.
        let store = d.0.store.clone();
        let mut gone = crate::store::Batch::default();
        gone.delete(key("ws", ws.id.as_str()));
        gone.delete(key("usr", owner.id.as_str()));
        store.apply(gone).unwrap();
        drop(d);
        let again = Directory::load(store, Arc::new(clock)).unwrap();
        let found = again.dangling_references();
        assert_eq!(found.len(), 4, "{found:?}");
        for text in ["API key", "membership of", "membership in", "token"] {
            assert!(
                found.iter().any(|p| p.starts_with(text)),
                "{text}: {found:?}"
            );
        }
        drop(dir);
    }
}
