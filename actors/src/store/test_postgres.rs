//! A throwaway PostgreSQL for tests: `initdb` and `postgres` from the Debian `postgresql`
//! package, in a temporary folder, on a free loopback port. One server per test process,
//! started on first use; a watchdog shell stops it and removes its folder once the test
//! process is gone. Each test gets a schema of its own.
//!
//! Compiled for this crate's tests and, with the `test-postgres` feature, for the
//! service's black-box tests; never part of the service.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// How to get the server when it is missing.
const INSTALL: &str = "PostgreSQL's server programs (initdb, postgres) are needed by the \
    PostgreSQL-mode tests: install them with `apt-get install postgresql` (Debian/Ubuntu), \
    or run `.ci/run`, which does";

struct Server {
    port: u16,
}

static SERVER: OnceLock<Result<Server, String>> = OnceLock::new();

/// A connection URL whose default schema is `schema` (created if missing): the same name
/// gives the same data, as the same data folder does for sled. Panics, saying how to
/// install PostgreSQL, when it is not there.
pub fn url(schema: &str) -> String {
    let server = match SERVER.get_or_init(start) {
        Ok(server) => server,
        Err(e) => panic!("{e}"),
    };
    let schema: String = schema
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '_'
            }
        })
        .collect();
    let base = format!("postgres://postgres@127.0.0.1:{}/postgres", server.port);
    let create = format!("CREATE SCHEMA IF NOT EXISTS \"{schema}\"");
    // The synchronous client runs a runtime of its own: keep it off the caller's.
    let created = std::thread::spawn(move || -> Result<(), String> {
        let mut client =
            postgres::Client::connect(&base, postgres::NoTls).map_err(|e| format!("{e:?}"))?;
        client.batch_execute(&create).map_err(|e| format!("{e:?}"))
    })
    .join();
    match created {
        Ok(Ok(())) => {}
        Ok(Err(e)) => panic!("test PostgreSQL: cannot create schema {schema}: {e}"),
        Err(_) => panic!("test PostgreSQL: creating schema {schema} panicked"),
    }
    format!(
        "postgres://postgres@127.0.0.1:{}/postgres?options=-csearch_path%3D{schema}",
        server.port
    )
}

/// A fresh, empty schema's URL.
pub fn fresh_url() -> String {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    url(&format!("t{}_{nanos}_{n}", std::process::id()))
}

/// The tables in the schema `url` names (its search path), by name.
pub fn tables(url: &str) -> Vec<String> {
    let url = url.to_string();
    std::thread::spawn(move || {
        let mut client = postgres::Client::connect(&url, postgres::NoTls).expect("connects");
        client
            .query(
                "SELECT table_name::text FROM information_schema.tables
                 WHERE table_schema = current_schema() ORDER BY 1",
                &[],
            )
            .expect("lists tables")
            .iter()
            .map(|r| r.get(0))
            .collect()
    })
    .join()
    .expect("listing tables panicked")
}

/// Runs `sql` (any number of statements) in the schema `url` names.
pub fn execute(url: &str, sql: &str) {
    let (url, sql) = (url.to_string(), sql.to_string());
    std::thread::spawn(move || {
        let mut client = postgres::Client::connect(&url, postgres::NoTls).expect("connects");
        client.batch_execute(&sql).expect("runs");
    })
    .join()
    .expect("running SQL panicked")
}

/// How many rows of the main keyspace hold `key`, in the schema `url` names.
pub fn rows_with_key(url: &str, key: &[u8]) -> i64 {
    let (url, key) = (url.to_string(), key.to_vec());
    std::thread::spawn(move || {
        let mut client = postgres::Client::connect(&url, postgres::NoTls).expect("connects");
        client
            .query_one(
                "SELECT count(*) FROM switchboard_kv WHERE key = $1",
                &[&key],
            )
            .expect("counts")
            .get(0)
    })
    .join()
    .expect("counting panicked")
}

/// The folder holding `initdb` and `postgres`: Debian's versioned folder (newest first),
/// or one on the PATH.
fn programs() -> Option<PathBuf> {
    let has_both = |dir: &Path| dir.join("initdb").exists() && dir.join("postgres").exists();
    let mut debian: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path().join("bin"))
        .filter(|d| has_both(d))
        .collect();
    debian.sort_by_key(|d| {
        d.parent()
            .and_then(|v| v.file_name())
            .and_then(|v| v.to_str())
            .and_then(|v| v.parse::<u32>().ok())
            .unwrap_or(0)
    });
    debian.pop().or_else(|| {
        std::env::var_os("PATH")
            .map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
            .unwrap_or_default()
            .into_iter()
            .find(|d| has_both(d))
    })
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
        .unwrap_or(false)
}

fn start() -> Result<Server, String> {
    let bin = programs().ok_or_else(|| INSTALL.to_string())?;
    let root = is_root();
    let dir = std::env::temp_dir().join(format!(
        "switchboard-pg-{}-{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0)
    ));
    std::fs::create_dir_all(&dir).map_err(|e| format!("test PostgreSQL folder: {e}"))?;
    // PostgreSQL refuses to run as root: as root, its programs run as the package's user.
    let as_owner = |program: &str| -> Command {
        if root {
            let mut c = Command::new("setpriv");
            c.args(["--reuid=postgres", "--regid=postgres", "--init-groups"])
                .arg(bin.join(program));
            c
        } else {
            Command::new(bin.join(program))
        }
    };
    if root {
        let chown = Command::new("chown")
            .args(["postgres:postgres"])
            .arg(&dir)
            .status();
        if !matches!(chown, Ok(s) if s.success()) {
            return Err(format!(
                "cannot hand {} to the postgres user",
                dir.display()
            ));
        }
    }
    let data = dir.join("data");
    let initdb = as_owner("initdb")
        .arg("-D")
        .arg(&data)
        .args(["-U", "postgres", "-A", "trust", "-E", "UTF8", "--no-sync"])
        .stdout(Stdio::null())
        .output()
        .map_err(|e| format!("initdb: {e}. {INSTALL}"))?;
    if !initdb.status.success() {
        return Err(format!(
            "initdb failed: {}",
            String::from_utf8_lossy(&initdb.stderr)
        ));
    }
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map_err(|e| format!("no free port: {e}"))?
        .port();
    let server = format!(
        "{} -D {} -p {port} -c listen_addresses=127.0.0.1 -c unix_socket_directories={} \
         -c fsync=off -c full_page_writes=off -c max_connections=400 -c shared_buffers=64MB",
        shell_words(&as_owner("postgres")),
        data.display(),
        dir.display(),
    );
    // The watchdog: runs the server until this process is gone, then stops it and cleans up.
    let watchdog = format!(
        "{server} >{log} 2>&1 & pg=$!; \
         while kill -0 {me} 2>/dev/null && kill -0 $pg 2>/dev/null; do sleep 0.5; done; \
         kill -INT $pg 2>/dev/null; wait $pg; rm -rf {dir}",
        log = dir.join("postgres.log").display(),
        me = std::process::id(),
        dir = dir.display(),
    );
    Command::new("sh")
        .args(["-c", &watchdog])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("cannot start postgres: {e}"))?;
    let url = format!("postgres://postgres@127.0.0.1:{port}/postgres");
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let attempt = {
            let url = url.clone();
            std::thread::spawn(move || postgres::Client::connect(&url, postgres::NoTls).is_ok())
                .join()
                .unwrap_or(false)
        };
        if attempt {
            return Ok(Server { port });
        }
        if Instant::now() > deadline {
            let log = std::fs::read_to_string(dir.join("postgres.log")).unwrap_or_default();
            return Err(format!("test PostgreSQL did not start in 30 s:\n{log}"));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// A command as one shell line (its program and arguments hold no spaces here).
fn shell_words(command: &Command) -> String {
    std::iter::once(command.get_program())
        .chain(command.get_args())
        .map(|a| a.to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join(" ")
}
