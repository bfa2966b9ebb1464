//! The PostgreSQL engine: one key/value table shared by every node of a cluster, the rows
//! of this node's workspaces in memory ([`Mirror`]), workspace leases with fencing, and
//! two connections of its own.
//!
//! - **Table.** `switchboard_kv(workspace, space, key, value)`: `space` names the keyspace
//!   (empty for the main one), `workspace` the workspace a row belongs to (empty for the
//!   directory and the rest that belongs to none), the distribution column for Citus and the
//!   Postgres-compatible distributed databases.
//! - **Ownership.** A node owns a workspace while it holds its row in `switchboard_leases`
//!   (node, epoch, expires_at), renewed every third of the lease's time. Taking a free or
//!   expired lease raises its epoch; the node then loads the workspace's rows. Losing one
//!   drops them.
//! - **Writes and fencing.** Applied to the mirror at once; a flush commits everything
//!   applied since the last one in one transaction (group commit). That transaction first
//!   locks the leases of the workspaces it writes and keeps only the rows of those this node
//!   still holds at the epoch it took (and unexpired): a deposed owner never writes, and a
//!   new owner's load waits for a commit in flight. The writers of the rest hear that
//!   their workspace moved ([`StoreError::Fenced`]).
//! - **Directory.** Rows of no workspace are every node's: each commit that writes some
//!   raises `switchboard_version`, and every node reloads them when it sees it change.
//! - **Ids.** Nodes reserve blocks of ids from `switchboard_ids`; a clean stop gives back
//!   the unused end of its block when no other node reserved since.
//! - **Connections.** The synchronous client runs a runtime of its own, which must not run
//!   inside another: one thread owns the commit connection, another the control one
//!   (leases, loads, heartbeats), and callers wait on them. A job that fails on a broken
//!   connection is tried once more on a new one.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::mpsc::{sync_channel, Receiver, Sender, SyncSender};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use postgres::fallible_iterator::FallibleIterator;
use postgres::{Client, NoTls};

use super::mirror::{Mirror, Owner, Pending, StoredRow};
use super::ID_CEILING_KEY as CEILING_KEY;
use super::{encode, StoreError, StoreResult};

/// Schema steps, applied once each in order; a step never changes once released.
const MIGRATIONS: &[&str] = &[
    "CREATE TABLE switchboard_kv (
        workspace text NOT NULL,
        space bytea NOT NULL,
        key bytea NOT NULL,
        value bytea NOT NULL,
        PRIMARY KEY (workspace, space, key)
    )",
    "CREATE TABLE switchboard_nodes (
        node text PRIMARY KEY,
        addr text NOT NULL,
        started_at timestamptz NOT NULL DEFAULT now(),
        heartbeat_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE TABLE switchboard_leases (
        workspace text PRIMARY KEY,
        node text NOT NULL,
        epoch bigint NOT NULL,
        expires_at timestamptz NOT NULL,
        taken_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE TABLE switchboard_ids (id integer PRIMARY KEY, ceiling bigint NOT NULL);
    CREATE TABLE switchboard_version (id integer PRIMARY KEY, version bigint NOT NULL);
    INSERT INTO switchboard_version VALUES (1, 0);
    -- What makes a workspace worth taking when its owner is gone: timers, pending
    -- deliveries, pending sends (see `WORK`).
    CREATE INDEX switchboard_kv_work ON switchboard_kv (workspace)
        WHERE space = ''::bytea AND (
            (key >= '\\x74712f'::bytea AND key < '\\x747130'::bytea)
            OR (key >= '\\x77702f'::bytea AND key < '\\x777030'::bytea)
            OR (key >= '\\x6f732f'::bytea AND key < '\\x6f7330'::bytea))",
    "ALTER TABLE switchboard_nodes ADD COLUMN admin_addr text",
];

/// Rows that mean work waits in a workspace (`tq/`, `wp/`, `os/`), as the index has them.
const WORK: &str = "k.space = ''::bytea AND (
    (k.key >= '\\x74712f'::bytea AND k.key < '\\x747130'::bytea)
    OR (k.key >= '\\x77702f'::bytea AND k.key < '\\x777030'::bytea)
    OR (k.key >= '\\x6f732f'::bytea AND k.key < '\\x6f7330'::bytea))";

/// Advisory lock class of this service, taken while migrating.
const LOCK_CLASS: i32 = 0x5357_4244; // "SWBD"

/// How long a connection attempt may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// Ids reserved at a time: the most a crash skips, as on sled.
const ID_BLOCK: i64 = super::ID_BLOCK as i64;

/// Who this node is among the others.
#[derive(Debug, Clone)]
pub struct NodeConfig {
    /// Unique per running process; a restart under the same id takes its leases back at
    /// once.
    pub id: String,
    /// Where other nodes reach this one's API listener.
    pub addr: String,
    /// Where other nodes reach this one's operator listener.
    pub admin_addr: String,
    pub lease_ttl: Duration,
    /// An offline tool (check, restore, tests), never beside running nodes: it loads every
    /// row and writes without leases.
    pub offline: bool,
}

/// A workspace this node holds: the epoch it took it at, and when it was last renewed.
#[derive(Debug, Clone, Copy)]
struct Held {
    epoch: i64,
    renewed: Instant,
}

/// Who holds a workspace this node does not.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Holder {
    pub node: String,
    /// The node's advertised addresses; None if it never registered.
    pub addr: Option<String>,
    pub admin_addr: Option<String>,
}

/// What asking for a workspace gave.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Taken {
    /// This node held it already.
    Held,
    /// This node took it now and loaded its rows.
    Now,
    /// Another node holds it.
    Elsewhere(Holder),
}

/// One node's view of the cluster, for operators.
#[derive(Debug, Clone, serde::Serialize)]
pub struct NodeView {
    pub node: String,
    pub addr: String,
    pub heartbeat_age_ms: i64,
    pub workspaces: Vec<LeaseView>,
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct LeaseView {
    pub workspace: String,
    pub epoch: i64,
    pub age_ms: i64,
    pub expires_in_ms: i64,
}

pub struct Postgres {
    mirror: Mirror,
    node: NodeConfig,
    /// Workspaces this node holds.
    held: RwLock<HashMap<String, Held>>,
    /// Serialises commits: a commit takes the pending changes and waits for them, so
    /// commits reach the database in the order their changes were made.
    commits: Mutex<()>,
    commit_link: Link,
    control: Link,
    /// The directory version this node last loaded.
    version: AtomicI64,
    /// The id block: the last id handed out and the block's ceiling.
    ids: Mutex<(i64, i64)>,
    /// Commits that dropped rows of workspaces this node no longer held.
    pub fenced_commits: AtomicU64,
    /// One take at a time, so that two callers never raise the epoch twice.
    taking: Mutex<()>,
    /// Workspaces fenced by any commit (a backup's or a shutdown's too) since the write
    /// path last asked, so that their waiting writers always hear of it.
    fenced_since: Mutex<HashSet<Owner>>,
    /// Told of every workspace this node loses.
    on_lost: std::sync::OnceLock<LostHook>,
    /// When the database last answered this node's heartbeat, and why the latest one
    /// failed (if it did).
    heard: Mutex<(std::time::Instant, Option<String>)>,
}

/// The database has not answered this node's heartbeats for longer than a lease.
#[derive(Debug, Clone, PartialEq)]
pub struct Unreachable {
    pub silent_for: std::time::Duration,
    pub reason: String,
}

/// Runs when this node loses a workspace to another.
pub type LostHook = Box<dyn Fn(&str) + Send + Sync>;

fn db_error(e: postgres::Error) -> StoreError {
    StoreError::Database(describe(&e))
}

/// An error with the server's own message, when it sent one.
pub fn describe(e: &postgres::Error) -> String {
    match e.as_db_error() {
        Some(db) => format!("{}: {}", db.code().code(), db.message()),
        None => e.to_string(),
    }
}

impl Postgres {
    /// Connects twice, migrates and loads the rows of no workspace. Blocking.
    pub fn open(url: &str, node: NodeConfig) -> StoreResult<Arc<Self>> {
        let mut config = config_of(url)?;
        bound_stuck_sessions(&mut config, node.lease_ttl);
        let control = Link::open(&config, "store-pg-control")?;
        control.run(migrate)?;
        let commit_link = Link::open(&config, "store-pg-commit")?;
        let (version, rows) = control.run(|c| shared_rows(c, None))?.unwrap_or_default();
        let pg = Arc::new(Self {
            mirror: Mirror::loaded(rows),
            node,
            held: RwLock::default(),
            commits: Mutex::new(()),
            commit_link,
            control,
            version: AtomicI64::new(version),
            ids: Mutex::new((0, 0)),
            fenced_commits: AtomicU64::new(0),
            taking: Mutex::new(()),
            fenced_since: Mutex::default(),
            on_lost: std::sync::OnceLock::new(),
            heard: Mutex::new((std::time::Instant::now(), None)),
        });
        if pg.node.offline {
            pg.load_everything()?;
        } else {
            pg.heartbeat()?;
        }
        Ok(pg)
    }

    pub(super) fn mirror(&self) -> &Mirror {
        &self.mirror
    }

    pub fn node(&self) -> &NodeConfig {
        &self.node
    }

    /// Sets what runs when this node loses a workspace (stopping what it ran of it); once.
    pub fn on_lost(&self, hook: LostHook) {
        let _ = self.on_lost.set(hook);
    }

    fn ttl_ms(&self) -> f64 {
        self.node.lease_ttl.as_millis() as f64
    }

    /// Whether this node holds `workspace` and renewed it recently enough to act on it
    /// (two thirds of the lease's time: a node cut off from the database stops serving
    /// before another can take over).
    pub fn holds(&self, workspace: &str) -> bool {
        if self.node.offline {
            return true;
        }
        let held = self.held.read().unwrap_or_else(|p| p.into_inner());
        held.get(workspace)
            .is_some_and(|h| h.renewed.elapsed() < self.node.lease_ttl * 2 / 3)
    }

    /// Makes this node the owner of `workspace` if it is free or its lease expired (raising
    /// its epoch and loading its rows); otherwise says who holds it. Blocking.
    pub fn take(&self, workspace: &str) -> StoreResult<Taken> {
        let _one_at_a_time = self.taking.lock().unwrap_or_else(|p| p.into_inner());
        if self.holds(workspace) {
            return Ok(Taken::Held);
        }
        let stale = self
            .held
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .contains_key(workspace);
        if stale {
            // Held, but not renewed lately: renew before anything else (a lease lost
            // meanwhile is let go of there).
            self.renew()?;
            if self.holds(workspace) {
                return Ok(Taken::Held);
            }
        }
        let (ws, me, ttl) = (workspace.to_string(), self.node.id.clone(), self.ttl_ms());
        let started = Instant::now();
        let outcome = self.control.run(move |c| {
            let taken = c.query_opt(
                "INSERT INTO switchboard_leases (workspace, node, epoch, expires_at)
                 VALUES ($1, $2, 1, now() + $3 * interval '1 millisecond')
                 ON CONFLICT (workspace) DO UPDATE
                   SET node = EXCLUDED.node, epoch = switchboard_leases.epoch + 1,
                       expires_at = EXCLUDED.expires_at, taken_at = now()
                   WHERE switchboard_leases.expires_at <= now()
                      OR switchboard_leases.node = EXCLUDED.node
                 RETURNING epoch",
                &[&ws, &me, &ttl],
            )?;
            let Some(row) = taken else {
                let holder = c.query_opt(
                    "SELECT l.node, n.addr, n.admin_addr FROM switchboard_leases l
                     LEFT JOIN switchboard_nodes n ON n.node = l.node
                     WHERE l.workspace = $1",
                    &[&ws],
                )?;
                return Ok(Err(holder.map(|r| Holder {
                    node: r.get(0),
                    addr: r.get(1),
                    admin_addr: r.get(2),
                })));
            };
            let epoch: i64 = row.get(0);
            // Loaded after the lease is taken: a commit of the previous owner either
            // finished before (it held the lease row) or is fenced.
            let mut tx = c.transaction()?;
            let rows = rows_of(&mut tx, &ws)?;
            tx.commit()?;
            let reserved = id_ceiling(c)?;
            Ok(Ok((epoch, rows, reserved)))
        })?;
        match outcome {
            Ok((epoch, rows, reserved)) => {
                self.give_up_block_behind(reserved);
                self.mirror.drop_workspace(workspace);
                self.mirror.load(rows);
                self.held.write().unwrap_or_else(|p| p.into_inner()).insert(
                    workspace.to_string(),
                    Held {
                        epoch,
                        renewed: started,
                    },
                );
                Ok(Taken::Now)
            }
            Err(Some(holder)) => Ok(Taken::Elsewhere(holder)),
            // Released between the two statements: try again.
            Err(None) => {
                drop(_one_at_a_time);
                self.take(workspace)
            }
        }
    }

    /// Renews every lease this node holds and records its heartbeat; returns the
    /// workspaces it lost (their rows are dropped here). Blocking.
    pub fn renew(&self) -> StoreResult<Vec<String>> {
        let held: Vec<(String, i64)> = {
            let held = self.held.read().unwrap_or_else(|p| p.into_inner());
            held.iter().map(|(w, h)| (w.clone(), h.epoch)).collect()
        };
        self.heartbeat()?;
        if held.is_empty() {
            return Ok(Vec::new());
        }
        let (me, ttl) = (self.node.id.clone(), self.ttl_ms());
        let (names, epochs): (Vec<String>, Vec<i64>) = held.iter().cloned().unzip();
        let started = Instant::now();
        let kept: HashSet<String> = self.control.run(move |c| {
            let rows = c.query(
                "UPDATE switchboard_leases l SET expires_at = now() + $3 * interval '1 millisecond'
                 FROM unnest($1::text[], $2::bigint[]) AS h(workspace, epoch)
                 WHERE l.workspace = h.workspace AND l.epoch = h.epoch AND l.node = $4
                   AND l.expires_at > now()
                 RETURNING l.workspace",
                &[&names, &epochs, &ttl, &me],
            )?;
            Ok(rows.iter().map(|r| r.get(0)).collect())
        })?;
        let mut lost = Vec::new();
        {
            let mut now_held = self.held.write().unwrap_or_else(|p| p.into_inner());
            for (ws, epoch) in held {
                match now_held.get_mut(&ws) {
                    Some(h) if h.epoch == epoch && kept.contains(&ws) => h.renewed = started,
                    Some(h) if h.epoch == epoch => {
                        now_held.remove(&ws);
                        lost.push(ws);
                    }
                    // Taken again meanwhile: the newer lease stands.
                    _ => {}
                }
            }
        }
        for ws in &lost {
            self.let_go(ws);
        }
        Ok(lost)
    }

    /// Forgets `workspace` here (its commit was fenced: another node took it).
    fn forget(&self, workspace: &str) {
        self.held
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .remove(workspace);
        self.let_go(workspace);
    }

    /// Drops a lost workspace's rows and tells the hook.
    fn let_go(&self, workspace: &str) {
        tracing::warn!(workspace, "another node owns this workspace now");
        self.mirror.drop_workspace(workspace);
        if let Some(hook) = self.on_lost.get() {
            hook(workspace);
        }
    }

    fn heartbeat(&self) -> StoreResult<()> {
        let (me, addr) = (self.node.id.clone(), self.node.addr.clone());
        let admin = self.node.admin_addr.clone();
        let outcome = self.control.run(move |c| {
            c.execute(
                "INSERT INTO switchboard_nodes (node, addr, admin_addr) VALUES ($1, $2, $3)
                 ON CONFLICT (node) DO UPDATE
                   SET addr = EXCLUDED.addr, admin_addr = EXCLUDED.admin_addr, heartbeat_at = now()",
                &[&me, &addr, &admin],
            )?;
            Ok(())
        });
        let mut heard = self.heard.lock().unwrap_or_else(|p| p.into_inner());
        match &outcome {
            Ok(()) => *heard = (std::time::Instant::now(), None),
            Err(e) => heard.1 = Some(e.to_string()),
        }
        outcome
    }

    /// Whether the database has failed to answer this node's heartbeats for longer than a
    /// lease: the node's leases have run out, so it serves nothing until it hears back
    /// (`/health` says so, for load balancers). A heartbeat still waiting counts as
    /// unanswered.
    pub fn unreachable(&self) -> Option<Unreachable> {
        let (at, reason) = self.heard.lock().unwrap_or_else(|p| p.into_inner()).clone();
        let silent_for = at.elapsed();
        (silent_for > self.node.lease_ttl).then(|| Unreachable {
            silent_for,
            reason: reason.unwrap_or_else(|| "the database has not answered yet".into()),
        })
    }

    /// Lets go of every lease (a clean stop), so other nodes take over at once. Blocking.
    pub fn release_all(&self) -> StoreResult<()> {
        let me = self.node.id.clone();
        self.held.write().unwrap_or_else(|p| p.into_inner()).clear();
        self.control.run(move |c| {
            c.execute(
                "UPDATE switchboard_leases SET expires_at = now() WHERE node = $1",
                &[&me],
            )?;
            c.execute("DELETE FROM switchboard_nodes WHERE node = $1", &[&me])?;
            Ok(())
        })
    }

    /// Workspaces a previous process under this node's name held. Blocking.
    pub fn mine(&self) -> StoreResult<Vec<String>> {
        let me = self.node.id.clone();
        self.control.run(move |c| {
            Ok(c.query(
                "SELECT workspace FROM switchboard_leases WHERE node = $1",
                &[&me],
            )?
            .iter()
            .map(|r| r.get(0))
            .collect())
        })
    }

    /// Loads every row, whoever owns it, for a read-only look at the whole database (the
    /// offline check). Blocking.
    pub fn load_everything(&self) -> StoreResult<()> {
        let rows = self
            .control
            .run(|c| every_row(c, "WHERE workspace <> ''"))?;
        self.mirror.load(rows);
        Ok(())
    }

    /// Gives the rows of no workspace under `prefix` to `workspace` (a restore from a file
    /// that does not say whose they are). Offline tools only. Blocking.
    pub fn assign(&self, prefix: &[u8], workspace: &str) -> StoreResult<u64> {
        let from = prefix.to_vec();
        let to = super::span::prefix_end(prefix).unwrap_or_else(|| vec![0xff; 64]);
        let ws = workspace.to_string();
        let moved = self.control.run(move |c| {
            c.execute(
                "UPDATE switchboard_kv SET workspace = $1
                 WHERE workspace = '' AND space = ''::bytea AND key >= $2 AND key < $3",
                &[&ws, &from, &to],
            )
        })?;
        Ok(moved)
    }

    /// Every row of the database, whoever owns it, as of one moment (for a backup). Blocking.
    /// The whole database for a backup, with the id counter as the id ceiling key (as a
    /// sled store keeps it), so that a restore into either engine never hands out an id
    /// the backup's records hold.
    pub(super) fn snapshot(&self) -> StoreResult<Mirror> {
        // One statement reads one snapshot: every commit wholly, or not at all. The counter
        // is read after it: every id in a committed row was reserved before.
        let (rows, reserved) = self
            .control
            .run(|c| Ok((every_row(c, "")?, id_ceiling(c)?)))?;
        let mirror = Mirror::loaded(rows);
        let reserved = u64::try_from(reserved).unwrap_or(0);
        mirror.apply(
            b"",
            None,
            [(CEILING_KEY.to_vec(), Some(encode(&reserved)?))],
        );
        Ok(mirror)
    }

    /// Workspaces with work waiting (timers, deliveries, sends) whose owner is gone. Blocking.
    pub fn orphans(&self) -> StoreResult<Vec<String>> {
        self.control.run(|c| {
            let sql = format!(
                "SELECT DISTINCT k.workspace FROM switchboard_kv k
                 WHERE k.workspace <> '' AND {WORK}
                   AND NOT EXISTS (SELECT 1 FROM switchboard_leases l
                                   WHERE l.workspace = k.workspace AND l.expires_at > now())"
            );
            Ok(c.query(&sql, &[])?.iter().map(|r| r.get(0)).collect())
        })
    }

    /// Reloads the rows of no workspace if another node changed them since the last load
    /// (changes of this node not yet committed stay); true when it did. Blocking.
    pub fn refresh_shared(&self) -> StoreResult<bool> {
        // No commit of this node runs meanwhile, so the snapshot holds all of them that
        // finished, and none finishes between the snapshot and the replacement.
        let _no_commits = self.commits.lock().unwrap_or_else(|p| p.into_inner());
        let seen = self.version.load(Ordering::SeqCst);
        let fresh = self.control.run(move |c| shared_rows(c, Some(seen)))?;
        let Some((version, rows)) = fresh else {
            return Ok(false);
        };
        self.mirror.replace_workspace("", rows);
        self.version.store(version, Ordering::SeqCst);
        Ok(true)
    }

    /// Every node with its leases, for operators. Blocking.
    pub fn nodes(&self) -> StoreResult<Vec<NodeView>> {
        self.control.run(|c| {
            let nodes = c.query(
                "SELECT node, addr, (extract(epoch FROM now() - heartbeat_at) * 1000)::bigint
                 FROM switchboard_nodes ORDER BY node",
                &[],
            )?;
            let leases = c.query(
                "SELECT node, workspace, epoch,
                        (extract(epoch FROM now() - taken_at) * 1000)::bigint,
                        (extract(epoch FROM expires_at - now()) * 1000)::bigint
                 FROM switchboard_leases WHERE expires_at > now() ORDER BY workspace",
                &[],
            )?;
            Ok(nodes
                .iter()
                .map(|n| {
                    let node: String = n.get(0);
                    NodeView {
                        workspaces: leases
                            .iter()
                            .filter(|l| l.get::<_, String>(0) == node)
                            .map(|l| LeaseView {
                                workspace: l.get(1),
                                epoch: l.get(2),
                                age_ms: l.get(3),
                                expires_in_ms: l.get(4),
                            })
                            .collect(),
                        node,
                        addr: n.get(1),
                        heartbeat_age_ms: n.get(2),
                    }
                })
                .collect())
        })
    }

    /// The next id of this node's block, reserving a new block when it is used up.
    pub(super) fn next_id(&self) -> StoreResult<u64> {
        let mut ids = self.ids.lock().unwrap_or_else(|p| p.into_inner());
        if ids.0 >= ids.1 {
            let ceiling: i64 = self.control.run(|c| {
                Ok(c.query_one(
                    "INSERT INTO switchboard_ids VALUES (1, $1) ON CONFLICT (id)
                     DO UPDATE SET ceiling = switchboard_ids.ceiling + $1 RETURNING ceiling",
                    &[&ID_BLOCK],
                )?
                .get(0))
            })?;
            *ids = (ceiling - ID_BLOCK, ceiling);
        }
        ids.0 += 1;
        u64::try_from(ids.0).map_err(|_| StoreError::Database("id out of range".into()))
    }

    /// Ids must keep growing within a workspace (lists are newest first by id, and an
    /// endpoint's delivery actor reads the deliveries above the last it saw), so a node
    /// taking a workspace over must not go on with a block reserved before the previous
    /// owner's: when any block was reserved after this node's (`reserved`, the highest
    /// ceiling, read after the takeover), the rest of its block is left unused and the next
    /// id comes from a new one, above every id handed out so far.
    fn give_up_block_behind(&self, reserved: i64) {
        let mut ids = self.ids.lock().unwrap_or_else(|p| p.into_inner());
        if reserved > ids.1 {
            ids.0 = ids.1;
        }
    }

    /// Raises the shared id counter to at least `ceiling` (a restore: the restored records'
    /// ids are never handed out again). Blocking.
    pub(super) fn raise_id_ceiling(&self, ceiling: u64) -> StoreResult<()> {
        let ceiling =
            i64::try_from(ceiling).map_err(|_| StoreError::Database("id out of range".into()))?;
        self.control.run(move |c| {
            c.execute(
                "INSERT INTO switchboard_ids VALUES (1, $1) ON CONFLICT (id)
                 DO UPDATE SET ceiling = GREATEST(switchboard_ids.ceiling, $1)",
                &[&ceiling],
            )?;
            Ok(())
        })
    }

    /// Gives back the unused end of this node's block if no node reserved since (a clean
    /// stop): the next start continues without a gap. Blocking.
    pub(super) fn settle_ids(&self) -> StoreResult<()> {
        let (last, ceiling) = *self.ids.lock().unwrap_or_else(|p| p.into_inner());
        if last >= ceiling {
            return Ok(());
        }
        self.control.run(move |c| {
            c.execute(
                "UPDATE switchboard_ids SET ceiling = $1 WHERE id = 1 AND ceiling = $2",
                &[&last, &ceiling],
            )?;
            Ok(())
        })
    }

    /// Commits every change applied before this call, but those of workspaces this node no
    /// longer holds, which are dropped here and returned. Returns once PostgreSQL has it.
    pub(super) fn commit(&self) -> StoreResult<HashSet<Owner>> {
        let _order = self.commits.lock().unwrap_or_else(|p| p.into_inner());
        let changes = self.mirror.take_pending();
        if changes.is_empty() {
            return Ok(HashSet::new());
        }
        let owners: HashSet<Owner> = changes
            .values()
            .map(|(owner, _)| owner.clone())
            .filter(|o| !o.is_empty())
            .collect();
        let (mut names, mut epochs) = (Vec::new(), Vec::new());
        let mut fenced = HashSet::new();
        let offline = self.node.offline;
        if !offline {
            let held = self.held.read().unwrap_or_else(|p| p.into_inner());
            for owner in owners {
                match held.get(&*owner) {
                    Some(h) => {
                        names.push(owner.to_string());
                        epochs.push(h.epoch);
                    }
                    None => {
                        fenced.insert(owner);
                    }
                }
            }
        }
        let me = self.node.id.clone();
        let changes = Arc::new(changes);
        let sent = changes.clone();
        let stored = self.commit_link.run(move |c| {
            let mut tx = c.transaction()?;
            let kept: HashSet<String> = if names.is_empty() {
                HashSet::new()
            } else {
                tx.query(
                    "SELECT l.workspace FROM switchboard_leases l
                     JOIN unnest($1::text[], $2::bigint[]) AS h(workspace, epoch)
                       ON l.workspace = h.workspace
                     WHERE l.epoch = h.epoch AND l.node = $3 AND l.expires_at > now()
                     FOR SHARE OF l",
                    &[&names, &epochs, &me],
                )?
                .iter()
                .map(|r| r.get(0))
                .collect()
            };
            let shared = store(&mut tx, &sent, |owner| {
                offline || owner.is_empty() || kept.contains(owner)
            })?;
            if shared {
                tx.execute(
                    "UPDATE switchboard_version SET version = version + 1 WHERE id = 1",
                    &[],
                )?;
            }
            tx.commit()?;
            Ok(names
                .iter()
                .filter(|n| !kept.contains(*n))
                .cloned()
                .collect::<Vec<_>>())
        });
        match stored {
            Ok(lost) => {
                fenced.extend(lost.into_iter().map(|n| Owner::from(n.as_str())));
                if !fenced.is_empty() {
                    self.fenced_commits.fetch_add(1, Ordering::Relaxed);
                    for ws in &fenced {
                        self.forget(ws);
                    }
                    self.fenced_since
                        .lock()
                        .unwrap_or_else(|p| p.into_inner())
                        .extend(fenced.iter().cloned());
                }
                Ok(fenced)
            }
            Err(e) => {
                let changes = Arc::try_unwrap(changes).unwrap_or_else(|c| (*c).clone());
                self.mirror.restore_pending(changes);
                Err(e)
            }
        }
    }

    /// Commits like [`Postgres::commit`], for the write path: the fenced workspaces it
    /// returns include those fenced by any other commit since its last call.
    pub(super) fn commit_for_writers(&self) -> StoreResult<HashSet<Owner>> {
        self.commit()?;
        Ok(std::mem::take(
            &mut *self.fenced_since.lock().unwrap_or_else(|p| p.into_inner()),
        ))
    }

    /// Whether the database answers queries (after commits failed, say).
    pub fn ping(&self) -> bool {
        self.control
            .run(|c| c.simple_query("SELECT 1").map(|_| ()))
            .is_ok()
    }
}

/// Writes changes whose workspace `keep` accepts; says whether any row of no workspace was
/// among them.
fn store(
    tx: &mut postgres::Transaction<'_>,
    changes: &Pending,
    keep: impl Fn(&str) -> bool,
) -> Result<bool, postgres::Error> {
    let mut puts = Rows::default();
    let mut deletes = Rows::default();
    let mut shared = false;
    for ((space, key), (owner, value)) in changes {
        if !keep(owner) {
            continue;
        }
        shared |= owner.is_empty();
        let rows = if value.is_some() {
            &mut puts
        } else {
            &mut deletes
        };
        rows.workspaces.push(owner.to_string());
        rows.spaces.push(space.clone());
        rows.keys.push(key.clone());
        if let Some(v) = value {
            rows.values.push(v.clone());
        }
    }
    if !puts.keys.is_empty() {
        tx.execute(
            "INSERT INTO switchboard_kv (workspace, space, key, value)
             SELECT * FROM unnest($1::text[], $2::bytea[], $3::bytea[], $4::bytea[])
             ON CONFLICT (workspace, space, key) DO UPDATE SET value = EXCLUDED.value",
            &[&puts.workspaces, &puts.spaces, &puts.keys, &puts.values],
        )?;
    }
    if !deletes.keys.is_empty() {
        tx.execute(
            "DELETE FROM switchboard_kv k
             USING unnest($1::text[], $2::bytea[], $3::bytea[]) AS d(workspace, space, key)
             WHERE k.workspace = d.workspace AND k.space = d.space AND k.key = d.key",
            &[&deletes.workspaces, &deletes.spaces, &deletes.keys],
        )?;
    }
    Ok(shared)
}

/// Columns of the rows of one statement.
#[derive(Default)]
struct Rows {
    workspaces: Vec<String>,
    spaces: Vec<Vec<u8>>,
    keys: Vec<Vec<u8>>,
    values: Vec<Vec<u8>>,
}

/// The directory version and the rows of no workspace, read in one snapshot; None when the
/// version is still `seen`.
fn shared_rows(
    c: &mut Client,
    seen: Option<i64>,
) -> Result<Option<(i64, Vec<StoredRow>)>, postgres::Error> {
    let mut tx = c
        .build_transaction()
        .isolation_level(postgres::IsolationLevel::RepeatableRead)
        .start()?;
    let version: i64 = tx
        .query_one("SELECT version FROM switchboard_version WHERE id = 1", &[])?
        .get(0);
    if seen == Some(version) {
        return Ok(None);
    }
    let rows = rows_of(&mut tx, "")?;
    tx.commit()?;
    Ok(Some((version, rows)))
}

/// Every row `filter` (a WHERE clause, or empty) keeps, with its workspace, streamed.
/// The highest id any node reserved (0 before the first).
fn id_ceiling(c: &mut Client) -> Result<i64, postgres::Error> {
    Ok(
        c.query_opt("SELECT ceiling FROM switchboard_ids WHERE id = 1", &[])?
            .map_or(0, |r| r.get(0)),
    )
}

fn every_row(c: &mut Client, filter: &str) -> Result<Vec<StoredRow>, postgres::Error> {
    let sql = format!("SELECT space, key, workspace, value FROM switchboard_kv {filter}");
    let mut rows = c.query_raw(&sql, std::iter::empty::<&str>())?;
    let mut out = Vec::new();
    while let Some(row) = rows.next()? {
        out.push((row.get(0), row.get(1), row.get(2), row.get(3)));
    }
    Ok(out)
}

/// Every row of `workspace`, streamed (never the whole result in memory twice).
fn rows_of(
    tx: &mut postgres::Transaction<'_>,
    workspace: &str,
) -> Result<Vec<StoredRow>, postgres::Error> {
    let mut rows = tx.query_raw(
        "SELECT space, key, value FROM switchboard_kv WHERE workspace = $1",
        [workspace],
    )?;
    let mut out = Vec::new();
    while let Some(row) = rows.next()? {
        out.push((row.get(0), row.get(1), workspace.to_string(), row.get(2)));
    }
    Ok(out)
}

fn config_of(url: &str) -> StoreResult<postgres::Config> {
    let mut config: postgres::Config = url
        .parse()
        .map_err(|e| StoreError::Database(format!("SWITCHBOARD_DATABASE_URL: {e}")))?;
    if config.get_connect_timeout().is_none() {
        config.connect_timeout(CONNECT_TIMEOUT);
    }
    if config.get_application_name().is_none() {
        config.application_name("switchboard");
    }
    Ok(config)
}

/// Whether the schema `url` names holds a store (its tables), read without creating
/// anything: the offline check must not set a database up. Blocking.
pub fn holds_store(url: &str) -> StoreResult<bool> {
    let config = config_of(url)?;
    // The client must not start inside a runtime: it connects on a thread of its own.
    std::thread::spawn(move || -> StoreResult<bool> {
        let mut client = config.connect(NoTls).map_err(db_error)?;
        let row = client
            .query_one("SELECT to_regclass('switchboard_kv') IS NOT NULL", &[])
            .map_err(db_error)?;
        Ok(row.get(0))
    })
    .join()
    .map_err(|_| StoreError::Database("the connection thread stopped".into()))?
}

/// How soon the client notices a connection whose other end went quiet (a partition).
const KEEPALIVE_IDLE: Duration = Duration::from_secs(10);

/// A node stopped (frozen, partitioned) in the middle of a commit holds its leases' row
/// locks, and every other node's take of any workspace waits on them: PostgreSQL ends a
/// session idle inside a transaction after a lease's time (no commit of ours pauses
/// between its statements), and the client probes a quiet connection, so that the rest
/// of the cluster waits at most about that long.
fn bound_stuck_sessions(config: &mut postgres::Config, lease_ttl: Duration) {
    let idle_ms = lease_ttl.as_millis().max(1_000);
    let limit = format!("-c idle_in_transaction_session_timeout={idle_ms}");
    let options = match config.get_options() {
        Some(given) if !given.trim().is_empty() => format!("{given} {limit}"),
        _ => limit,
    };
    config.options(&options);
    config.keepalives(true);
    config.keepalives_idle(KEEPALIVE_IDLE);
}

/// Applies the steps this database has not seen, in one transaction, one node at a time.
fn migrate(client: &mut Client) -> Result<(), postgres::Error> {
    let mut tx = client.transaction()?;
    tx.execute(
        "SELECT pg_advisory_xact_lock($1, hashtext(current_schema() || '/migrations'))",
        &[&LOCK_CLASS],
    )?;
    tx.batch_execute(
        "CREATE TABLE IF NOT EXISTS switchboard_migrations (
            version integer PRIMARY KEY,
            applied_at timestamptz NOT NULL DEFAULT now()
        )",
    )?;
    let done: i32 = tx
        .query_one(
            "SELECT coalesce(max(version), 0) FROM switchboard_migrations",
            &[],
        )?
        .get(0);
    for (version, step) in (1..).zip(MIGRATIONS) {
        if version <= done {
            continue;
        }
        tx.batch_execute(step)?;
        tx.execute(
            "INSERT INTO switchboard_migrations (version) VALUES ($1)",
            &[&version],
        )?;
    }
    tx.commit()
}

/// A job for a connection thread: tried, tried once more on a new connection if the
/// connection broke, then answered.
trait Job: Send {
    fn attempt(&mut self, client: &mut Client) -> Result<(), postgres::Error>;
    fn answer(self: Box<Self>, outcome: Result<(), String>);
}

struct Call<F, R> {
    work: F,
    result: Option<R>,
    done: SyncSender<Result<R, String>>,
}

impl<F, R> Job for Call<F, R>
where
    F: FnMut(&mut Client) -> Result<R, postgres::Error> + Send,
    R: Send,
{
    fn attempt(&mut self, client: &mut Client) -> Result<(), postgres::Error> {
        self.result = Some((self.work)(client)?);
        Ok(())
    }

    fn answer(self: Box<Self>, outcome: Result<(), String>) {
        let Call { result, done, .. } = *self;
        let _ = done.send(outcome.and_then(|()| result.ok_or_else(|| "no result".into())));
    }
}

/// One connection, owned by a thread of its own.
struct Link {
    jobs: Mutex<Sender<Box<dyn Job>>>,
}

impl Link {
    /// Connects on the link's own thread (the client must not start inside a runtime).
    fn open(config: &postgres::Config, name: &str) -> StoreResult<Self> {
        let (jobs, queue) = std::sync::mpsc::channel::<Box<dyn Job>>();
        let (ready, connected) = sync_channel(1);
        let config = config.clone();
        std::thread::Builder::new()
            .name(name.into())
            .spawn(move || match config.connect(NoTls) {
                Ok(client) => {
                    let _ = ready.send(Ok(()));
                    serve(client, &config, queue);
                }
                Err(e) => {
                    let _ = ready.send(Err(db_error(e)));
                }
            })
            .map_err(|e| StoreError::Unavailable(format!("cannot start {name}: {e}")))?;
        connected
            .recv()
            .map_err(|_| StoreError::Database("the connection thread stopped".into()))??;
        Ok(Self {
            jobs: Mutex::new(jobs),
        })
    }

    /// Runs `work` on the connection and waits for it.
    fn run<R: Send + 'static>(
        &self,
        work: impl FnMut(&mut Client) -> Result<R, postgres::Error> + Send + 'static,
    ) -> StoreResult<R> {
        let (done, outcome) = sync_channel(1);
        let job: Box<dyn Job> = Box::new(Call {
            work,
            result: None,
            done,
        });
        self.jobs
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .send(job)
            .map_err(|_| StoreError::Database("the connection thread stopped".into()))?;
        outcome
            .recv()
            .map_err(|_| StoreError::Database("the connection thread stopped".into()))?
            .map_err(StoreError::Database)
    }
}

/// Runs jobs until every sender is gone.
fn serve(mut client: Client, config: &postgres::Config, jobs: Receiver<Box<dyn Job>>) {
    while let Ok(mut job) = jobs.recv() {
        let mut outcome = job.attempt(&mut client);
        if outcome.is_err() && client.is_closed() {
            match config.connect(NoTls) {
                Ok(fresh) => {
                    client = fresh;
                    outcome = job.attempt(&mut client);
                }
                Err(e) => outcome = Err(e),
            }
        }
        job.answer(outcome.map_err(|e| describe(&e)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::test_postgres;

    #[test]
    fn sessions_idle_inside_a_transaction_end_after_a_lease_and_the_urls_options_stay() {
        let url = test_postgres::fresh_url();
        let node = NodeConfig {
            id: "n1".into(),
            addr: String::new(),
            admin_addr: String::new(),
            lease_ttl: Duration::from_secs(3),
            offline: true,
        };
        let pg = Postgres::open(&url, node).unwrap();
        for link in [&pg.control, &pg.commit_link] {
            let (idle, path): (String, String) = link
                .run(|c| {
                    let idle = c.query_one("SHOW idle_in_transaction_session_timeout", &[])?;
                    let path = c.query_one("SHOW search_path", &[])?;
                    Ok((idle.get(0), path.get(0)))
                })
                .unwrap();
            assert_eq!(idle, "3s");
            assert!(
                url.contains(&path.replace('"', "")),
                "the URL's schema is kept: {path} in {url}"
            );
        }
    }
}
