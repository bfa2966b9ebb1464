//! The PostgreSQL engine: one key/value table, a copy of its rows in memory
//! ([`Mirror`]), and a connection thread of its own.
//!
//! - **Table.** `switchboard_kv(workspace, space, key, value)`: `space` names the keyspace
//!   (empty for the main one), `workspace` is the workspace a `w/<id>/...` key belongs to
//!   (empty for the rest), so the table can be distributed by workspace (Citus and the
//!   Postgres-compatible distributed databases take the same SQL).
//! - **Writes.** Applied to the mirror at once; a flush commits everything applied since the
//!   last one in one transaction (group commit: the write path calls it for every waiting
//!   writer at once). PostgreSQL's commit is the durability point.
//! - **One process per database.** The connection holds an advisory lock for its schema, as
//!   sled holds a lock on its folder: a second process on the same database refuses to start.
//! - **Connection thread.** The synchronous client runs its own small runtime, which must not
//!   run inside another; one thread owns the connection and every caller waits on it.

use std::sync::mpsc::{sync_channel, Receiver, Sender, SyncSender};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use postgres::fallible_iterator::FallibleIterator;
use postgres::{Client, NoTls};

use super::mirror::{Mirror, Pending};
use super::{RawEntry, StoreError, StoreResult};

/// Schema steps, applied once each in order; a step never changes once released.
const MIGRATIONS: &[&str] = &["CREATE TABLE switchboard_kv (
        workspace text NOT NULL,
        space bytea NOT NULL,
        key bytea NOT NULL,
        value bytea NOT NULL,
        PRIMARY KEY (workspace, space, key)
    )"];

/// Advisory lock class of this service (the second key is the schema's hash).
const LOCK_CLASS: i32 = 0x5357_4244; // "SWBD"

/// How long a connection attempt may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

pub(crate) struct Postgres {
    mirror: Mirror,
    /// Held while a commit takes the pending changes and waits for them, so commits reach
    /// the database in the order their changes were made.
    connection: Mutex<Sender<Request>>,
}

/// What the connection thread is asked to do.
enum Request {
    /// One transaction, and where its outcome goes (the changes come back on failure).
    Commit {
        changes: Pending,
        done: SyncSender<Result<(), (String, Pending)>>,
    },
    /// Whether the database answers (on a new connection if the old one broke).
    Ping(SyncSender<bool>),
}

fn db_error(e: impl std::fmt::Display) -> StoreError {
    StoreError::Database(e.to_string())
}

impl Postgres {
    /// Connects, takes the database's lock, migrates and loads every row. Blocking.
    pub fn open(url: &str) -> StoreResult<Arc<Self>> {
        let config = config_of(url)?;
        let (ready_tx, ready_rx) = sync_channel(1);
        let (requests_tx, requests_rx) = std::sync::mpsc::channel::<Request>();
        std::thread::Builder::new()
            .name("store-postgres".into())
            .spawn(move || {
                let opened = connect(&config).and_then(|mut client| {
                    let rows = load(&mut client)?;
                    Ok((client, rows))
                });
                match opened {
                    Ok((client, rows)) => {
                        if ready_tx.send(Ok(rows)).is_ok() {
                            serve(client, &config, requests_rx);
                        }
                    }
                    Err(e) => {
                        let _ = ready_tx.send(Err(e));
                    }
                }
            })
            .map_err(|e| StoreError::Unavailable(format!("cannot start the connection: {e}")))?;
        let rows = ready_rx
            .recv()
            .map_err(|_| StoreError::Database("the connection thread stopped".into()))??;
        Ok(Arc::new(Self {
            mirror: Mirror::loaded(rows),
            connection: Mutex::new(requests_tx),
        }))
    }

    pub fn mirror(&self) -> &Mirror {
        &self.mirror
    }

    /// Commits every change applied before this call; returns once PostgreSQL has it. A
    /// failed commit leaves its changes pending, under newer ones, for the next.
    pub fn commit(&self) -> StoreResult<()> {
        let connection = self.connection.lock().unwrap_or_else(|p| p.into_inner());
        let changes = self.mirror.take_pending();
        if changes.is_empty() {
            return Ok(());
        }
        let (done, outcome) = sync_channel(1);
        if let Err(lost) = connection.send(Request::Commit { changes, done }) {
            if let Request::Commit { changes, .. } = lost.0 {
                self.mirror.restore_pending(changes);
            }
            return Err(StoreError::Database("the connection thread stopped".into()));
        }
        match outcome.recv() {
            Ok(Ok(())) => Ok(()),
            Ok(Err((reason, changes))) => {
                self.mirror.restore_pending(changes);
                Err(StoreError::Database(reason))
            }
            Err(_) => Err(StoreError::Database("the connection thread stopped".into())),
        }
    }

    /// Whether the database answers queries (after commits failed, say).
    pub fn ping(&self) -> bool {
        let (answer, answered) = sync_channel(1);
        let sent = self
            .connection
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .send(Request::Ping(answer));
        sent.is_ok() && answered.recv().unwrap_or(false)
    }
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

/// A connection holding this schema's lock, with the schema migrated.
fn connect(config: &postgres::Config) -> StoreResult<Client> {
    let mut client = config.connect(NoTls).map_err(db_error)?;
    let locked: bool = client
        .query_one(
            "SELECT pg_try_advisory_lock($1, hashtext(current_schema()))",
            &[&LOCK_CLASS],
        )
        .map_err(db_error)?
        .get(0);
    if !locked {
        let schema: String = client
            .query_one("SELECT current_schema()", &[])
            .map_err(db_error)?
            .get(0);
        return Err(StoreError::Database(format!(
            "another Switchboard process uses schema {schema} of this database"
        )));
    }
    migrate(&mut client)?;
    Ok(client)
}

/// Applies the steps this database has not seen, in one transaction, one node at a time.
fn migrate(client: &mut Client) -> StoreResult<()> {
    let mut tx = client.transaction().map_err(db_error)?;
    tx.execute(
        "SELECT pg_advisory_xact_lock($1, hashtext(current_schema() || '/migrations'))",
        &[&LOCK_CLASS],
    )
    .map_err(db_error)?;
    tx.batch_execute(
        "CREATE TABLE IF NOT EXISTS switchboard_migrations (
            version integer PRIMARY KEY,
            applied_at timestamptz NOT NULL DEFAULT now()
        )",
    )
    .map_err(db_error)?;
    let done: i32 = tx
        .query_one(
            "SELECT coalesce(max(version), 0) FROM switchboard_migrations",
            &[],
        )
        .map_err(db_error)?
        .get(0);
    for (version, step) in (1..).zip(MIGRATIONS) {
        if version <= done {
            continue;
        }
        tx.batch_execute(step).map_err(db_error)?;
        tx.execute(
            "INSERT INTO switchboard_migrations (version) VALUES ($1)",
            &[&version],
        )
        .map_err(db_error)?;
    }
    tx.commit().map_err(db_error)
}

/// Every row, streamed (never the whole result in memory twice).
fn load(client: &mut Client) -> StoreResult<Vec<RawEntry>> {
    let mut rows = client
        .query_raw(
            "SELECT space, key, value FROM switchboard_kv",
            std::iter::empty::<&str>(),
        )
        .map_err(db_error)?;
    let mut out = Vec::new();
    while let Some(row) = rows.next().map_err(db_error)? {
        out.push((row.get(0), row.get(1), row.get(2)));
    }
    Ok(out)
}

/// Serves requests until every sender is gone. A commit that fails on a broken connection
/// is tried once more on a new one (its writes are idempotent); the lock comes with it.
fn serve(mut client: Client, config: &postgres::Config, requests: Receiver<Request>) {
    while let Ok(request) = requests.recv() {
        match request {
            Request::Commit { changes, done } => {
                let mut outcome = store(&mut client, &changes);
                if outcome.is_err() && client.is_closed() {
                    outcome =
                        reconnect(&mut client, config).and_then(|()| store(&mut client, &changes));
                }
                let _ = done.send(outcome.map_err(|reason| (reason, changes)));
            }
            Request::Ping(answer) => {
                let mut up = client.simple_query("SELECT 1").is_ok();
                if !up && client.is_closed() {
                    up = reconnect(&mut client, config).is_ok();
                }
                let _ = answer.send(up);
            }
        }
    }
}

fn reconnect(client: &mut Client, config: &postgres::Config) -> Result<(), String> {
    *client = connect(config).map_err(|e| e.to_string())?;
    Ok(())
}

/// Writes changes in one transaction.
fn store(client: &mut Client, changes: &Pending) -> Result<(), String> {
    let mut puts = Rows::default();
    let mut deletes = Rows::default();
    for ((space, key), value) in changes {
        let rows = if value.is_some() {
            &mut puts
        } else {
            &mut deletes
        };
        rows.workspaces.push(workspace_of(space, key));
        rows.spaces.push(space.clone());
        rows.keys.push(key.clone());
        if let Some(v) = value {
            rows.values.push(v.clone());
        }
    }
    let mut tx = client.transaction().map_err(|e| e.to_string())?;
    if !puts.keys.is_empty() {
        tx.execute(
            "INSERT INTO switchboard_kv (workspace, space, key, value)
             SELECT * FROM unnest($1::text[], $2::bytea[], $3::bytea[], $4::bytea[])
             ON CONFLICT (workspace, space, key) DO UPDATE SET value = EXCLUDED.value",
            &[&puts.workspaces, &puts.spaces, &puts.keys, &puts.values],
        )
        .map_err(|e| e.to_string())?;
    }
    if !deletes.keys.is_empty() {
        tx.execute(
            "DELETE FROM switchboard_kv k
             USING unnest($1::text[], $2::bytea[], $3::bytea[]) AS d(workspace, space, key)
             WHERE k.workspace = d.workspace AND k.space = d.space AND k.key = d.key",
            &[&deletes.workspaces, &deletes.spaces, &deletes.keys],
        )
        .map_err(|e| e.to_string())?;
    }
    tx.commit().map_err(|e| e.to_string())
}

/// Columns of the rows of one statement.
#[derive(Default)]
struct Rows {
    workspaces: Vec<String>,
    spaces: Vec<Vec<u8>>,
    keys: Vec<Vec<u8>>,
    values: Vec<Vec<u8>>,
}

/// The workspace a main-keyspace key `w/<workspace>/...` belongs to; empty for the rest.
fn workspace_of(space: &[u8], key: &[u8]) -> String {
    if !space.is_empty() {
        return String::new();
    }
    key.strip_prefix(b"w/")
        .and_then(|rest| rest.split(|b| *b == b'/').next())
        .map(|ws| String::from_utf8_lossy(ws).into_owned())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn workspace_keys_name_their_workspace() {
        assert_eq!(workspace_of(b"", b"w/ws_1/ct/\0\0"), "ws_1");
        assert_eq!(workspace_of(b"", b"d/user/usr_1"), "");
        assert_eq!(workspace_of(b"idempotency", b"w/ws_1/x"), "");
    }
}
