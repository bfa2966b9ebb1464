//! Backups: every tree of the store, written while writes wait at the store's gate, so a
//! backup holds whole batches only (a record never without the deliveries announcing it)
//! and every write acknowledged before it started.
//!
//! The file: a magic line, then frames (`T` a tree name, `E` a key and value, `Z` the end
//! with the entry count), every length a big-endian u32, and last the SHA-256 of all bytes
//! before it. A restore checks the digest before it writes anything.

use std::io::{BufReader, Read, Write};
use std::path::Path;

use sha2::{Digest, Sha256};

use super::engine::Engine;
use super::mirror::Mirror;
use super::postgres::Postgres;
use super::span::{Span, Visit};
use super::ID_CEILING_KEY as CEILING_KEY;
use super::{decode, trailing_id, StoreError, StoreResult};

const MAGIC: &[u8] = b"SWITCHBOARD-BACKUP 1\n";
const TREE: u8 = b'T';
const ENTRY: u8 = b'E';
const END: u8 = b'Z';

/// What a backup or restore carried.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Summary {
    pub trees: u64,
    pub entries: u64,
}

/// Writes and hashes at once.
struct Hashing<W> {
    inner: W,
    digest: Sha256,
}

impl<W: Write> Hashing<W> {
    fn put(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        self.digest.update(bytes);
        self.inner.write_all(bytes)
    }

    fn put_chunk(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        let len = u32::try_from(bytes.len())
            .map_err(|_| std::io::Error::other("a value larger than 4 GiB"))?;
        self.put(&len.to_be_bytes())?;
        self.put(bytes)
    }
}

fn io(e: std::io::Error) -> StoreError {
    StoreError::Codec(format!("backup file: {e}"))
}

/// The main keyspace's name in a backup file (sled's own name for it), so that a file
/// restores the same whichever engine wrote it.
const MAIN_TREE: &[u8] = b"__sled__default";

/// What a backup reads: keyspaces, each walked in key order.
pub(super) trait Source {
    fn spaces(&self) -> StoreResult<Vec<Vec<u8>>>;
    fn walk_space(&self, space: &[u8], visit: Visit<'_>) -> StoreResult<()>;
}

impl Source for Engine {
    fn spaces(&self) -> StoreResult<Vec<Vec<u8>>> {
        Engine::spaces(self)
    }

    fn walk_space(&self, space: &[u8], visit: Visit<'_>) -> StoreResult<()> {
        Engine::walk_space(self, space, visit)
    }
}

/// A snapshot of a whole PostgreSQL database (every node's workspaces).
impl Source for Mirror {
    fn spaces(&self) -> StoreResult<Vec<Vec<u8>>> {
        Ok(Mirror::spaces(self))
    }

    fn walk_space(&self, space: &[u8], visit: Visit<'_>) -> StoreResult<()> {
        let everything = Span {
            from: std::ops::Bound::Unbounded,
            to: std::ops::Bound::Unbounded,
            backwards: false,
        };
        self.walk(space, everything, visit)
    }
}

/// Writes every keyspace of `engine` to `out`. The caller holds the store's write gate.
pub(super) fn write(engine: &dyn Source, out: impl Write) -> StoreResult<Summary> {
    let mut w = Hashing {
        inner: out,
        digest: Sha256::new(),
    };
    let mut summary = Summary::default();
    w.put(MAGIC).map_err(io)?;
    for space in engine.spaces()? {
        w.put(&[TREE]).map_err(io)?;
        w.put_chunk(if space.is_empty() { MAIN_TREE } else { &space })
            .map_err(io)?;
        summary.trees += 1;
        engine.walk_space(&space, &mut |k, v| {
            w.put(&[ENTRY]).map_err(io)?;
            w.put_chunk(k).map_err(io)?;
            w.put_chunk(v).map_err(io)?;
            summary.entries += 1;
            Ok(true)
        })?;
    }
    w.put(&[END]).map_err(io)?;
    w.put(&summary.entries.to_be_bytes()).map_err(io)?;
    let digest = w.digest.finalize();
    w.inner.write_all(&digest).map_err(io)?;
    w.inner.flush().map_err(io)?;
    Ok(summary)
}

/// One frame of a backup file.
enum Frame {
    Tree(Vec<u8>),
    Entry(Vec<u8>, Vec<u8>),
    End(u64),
}

/// Reads frames and hashes what it reads.
struct Reader<R> {
    inner: R,
    digest: Sha256,
}

impl<R: Read> Reader<R> {
    fn take(&mut self, n: usize) -> std::io::Result<Vec<u8>> {
        let mut buf = vec![0; n];
        self.inner.read_exact(&mut buf)?;
        self.digest.update(&buf);
        Ok(buf)
    }

    fn chunk(&mut self) -> std::io::Result<Vec<u8>> {
        let len = self.take(4)?;
        let len = u32::from_be_bytes([len[0], len[1], len[2], len[3]]);
        self.take(len as usize)
    }

    fn frame(&mut self) -> std::io::Result<Frame> {
        match self.take(1)?[0] {
            TREE => Ok(Frame::Tree(self.chunk()?)),
            ENTRY => Ok(Frame::Entry(self.chunk()?, self.chunk()?)),
            END => {
                let n = self.take(8)?;
                let mut count = [0u8; 8];
                count.copy_from_slice(&n);
                Ok(Frame::End(u64::from_be_bytes(count)))
            }
            other => Err(std::io::Error::other(format!("unknown frame {other}"))),
        }
    }
}

/// Reads a backup file, handing each tree name and entry to `visit`; fails on a damaged
/// or truncated file (after visiting what came before the damage).
fn read(path: &Path, mut visit: impl FnMut(&Frame) -> StoreResult<()>) -> StoreResult<Summary> {
    let file = std::fs::File::open(path).map_err(io)?;
    let mut r = Reader {
        inner: BufReader::new(file),
        digest: Sha256::new(),
    };
    let magic = r.take(MAGIC.len()).map_err(io)?;
    if magic != MAGIC {
        return Err(StoreError::Codec("not a Switchboard backup".into()));
    }
    let mut summary = Summary::default();
    loop {
        let frame = r
            .frame()
            .map_err(|e| StoreError::Codec(format!("backup file damaged or truncated: {e}")))?;
        visit(&frame)?;
        match frame {
            Frame::Tree(_) => summary.trees += 1,
            Frame::Entry(..) => summary.entries += 1,
            Frame::End(count) if count == summary.entries => break,
            Frame::End(count) => {
                return Err(StoreError::Codec(format!(
                    "backup file says {count} entries but holds {}",
                    summary.entries
                )))
            }
        }
    }
    let expected = r.digest.finalize();
    let mut stored = [0u8; 32];
    r.inner
        .read_exact(&mut stored)
        .map_err(|_| StoreError::Codec("backup file truncated before its digest".into()))?;
    if stored[..] != expected[..] {
        return Err(StoreError::Codec(
            "backup file damaged: digest mismatch".into(),
        ));
    }
    Ok(summary)
}

/// Restores a backup into a new database folder `db_dir`: the file is verified whole
/// first, then written and flushed.
pub(super) fn restore(path: &Path, db_dir: &Path) -> StoreResult<Summary> {
    read(path, |_| Ok(()))?;
    let db = sled::Config::new().path(db_dir).open()?;
    let mut tree: Option<sled::Tree> = None;
    let summary = read(path, |frame| {
        match frame {
            Frame::Tree(name) => tree = Some(db.open_tree(name)?),
            Frame::Entry(k, v) => {
                let t = tree
                    .as_ref()
                    .ok_or_else(|| StoreError::Codec("an entry before any tree".into()))?;
                t.insert(k.as_slice(), v.as_slice())?;
            }
            Frame::End(_) => {}
        }
        Ok(())
    })?;
    db.flush()?;
    Ok(summary)
}

/// Reads the whole file and checks its digest, writing nothing.
pub(super) fn verify(path: &Path) -> StoreResult<Summary> {
    read(path, |_| Ok(()))
}

/// Restores a backup into an empty PostgreSQL database: the file is verified whole first,
/// then loaded and committed in one transaction.
pub(super) fn restore_into(path: &Path, pg: &Postgres) -> StoreResult<Summary> {
    read(path, |_| Ok(()))?;
    if pg.mirror().spaces().iter().any(|s| pg.mirror().len(s) > 0) {
        return Err(StoreError::Codec(
            "the database already holds a store; restore into an empty one".into(),
        ));
    }
    let mut space: Option<Vec<u8>> = None;
    let mut ids = IdsSeen::default();
    let summary = read(path, |frame| {
        match frame {
            Frame::Tree(name) if name == MAIN_TREE => space = Some(Vec::new()),
            Frame::Tree(name) => space = Some(name.clone()),
            Frame::Entry(k, v) => {
                let s = space
                    .as_ref()
                    .ok_or_else(|| StoreError::Codec("an entry before any tree".into()))?;
                if s.is_empty() && k.as_slice() == CEILING_KEY {
                    // PostgreSQL keeps the counter in a table of its own.
                    ids.ceiling = Some(decode::<u64>(v)?);
                } else {
                    ids.saw(k);
                    pg.mirror().apply(s, None, [(k.clone(), Some(v.clone()))]);
                }
            }
            Frame::End(_) => {}
        }
        Ok(())
    })?;
    pg.commit()?;
    pg.raise_id_ceiling(ids.ceiling())?;
    Ok(summary)
}

/// The ids a restored backup holds, so that none is handed out again.
#[derive(Default)]
struct IdsSeen {
    /// The id ceiling the backup carries (every backup written since it existed).
    ceiling: Option<u64>,
    /// The highest id ending a key, for a backup written before.
    highest: u64,
}

impl IdsSeen {
    /// Ids are small counters; the last 8 bytes of a key that ends in text read as a huge
    /// number and are no id.
    const MOST_LIKE_AN_ID: u64 = 1 << 48;

    fn saw(&mut self, key: &[u8]) {
        if let Some(id) = trailing_id(key).filter(|id| *id < Self::MOST_LIKE_AN_ID) {
            self.highest = self.highest.max(id);
        }
    }

    fn ceiling(&self) -> u64 {
        self.ceiling.unwrap_or(self.highest).max(self.highest)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_restore_counts_ids_from_the_ceiling_or_else_from_the_keys() {
        let mut ids = IdsSeen::default();
        ids.saw(
            &super::super::Key::new("w")
                .str("ws_1")
                .str("ct")
                .id(41)
                .build(),
        );
        ids.saw(b"d/meta/bootstrapped");
        assert_eq!(ids.ceiling(), 41, "a key ending in text holds no id");
        ids.ceiling = Some(300);
        assert_eq!(ids.ceiling(), 300);
        ids.saw(
            &super::super::Key::new("w")
                .str("ws_1")
                .str("ct")
                .id(500)
                .build(),
        );
        assert_eq!(ids.ceiling(), 500, "never below an id the backup holds");
    }

    fn sample_db(dir: &Path) -> sled::Db {
        let db = sled::Config::new().path(dir.join("db")).open().unwrap();
        db.insert(b"w/ws_1/ct/1", b"one".as_slice()).unwrap();
        db.insert(b"w/ws_1/ct/2", b"two".as_slice()).unwrap();
        db.open_tree("idempotency")
            .unwrap()
            .insert(b"k", b"v".as_slice())
            .unwrap();
        db
    }

    #[test]
    fn a_backup_restores_every_tree_and_entry() {
        let dir = tempfile::tempdir().unwrap();
        let db = sample_db(dir.path());
        let file = dir.path().join("b.bak");
        let written = write(
            &Engine::Sled(db.clone()),
            std::fs::File::create(&file).unwrap(),
        )
        .unwrap();
        let restored = restore(&file, &dir.path().join("restored")).unwrap();
        assert_eq!(written, restored);
        let again = sled::Config::new()
            .path(dir.path().join("restored"))
            .open()
            .unwrap();
        assert_eq!(&*again.get(b"w/ws_1/ct/2").unwrap().unwrap(), b"two");
        let idem = again.open_tree("idempotency").unwrap();
        assert_eq!(&*idem.get(b"k").unwrap().unwrap(), b"v");
    }

    #[test]
    fn a_restore_cut_short_leaves_no_store_and_the_next_one_starts_over() {
        let dir = tempfile::tempdir().unwrap();
        let db = sample_db(&dir.path().join("source"));
        let file = dir.path().join("b.bak");
        write(
            &Engine::Sled(db.clone()),
            std::fs::File::create(&file).unwrap(),
        )
        .unwrap();
        // What a restore killed half-way leaves: part of the entries, beside the store.
        let data = dir.path().join("data");
        {
            let partial = sled::Config::new()
                .path(data.join("db.restoring"))
                .open()
                .unwrap();
            partial.insert(b"w/ws_1/ct/1", b"one".as_slice()).unwrap();
            partial.flush().unwrap();
        }
        assert!(!data.join("db").exists(), "no store that looks whole");
        let refused = crate::store::Store::open(&data).err().expect("not served");
        assert!(refused.to_string().contains("cut short"), "{refused}");
        crate::store::Store::restore(&file, &data).unwrap();
        assert!(!data.join("db.restoring").exists());
        let restored = sled::Config::new().path(data.join("db")).open().unwrap();
        assert_eq!(&*restored.get(b"w/ws_1/ct/2").unwrap().unwrap(), b"two");
        let idem = restored.open_tree("idempotency").unwrap();
        assert_eq!(&*idem.get(b"k").unwrap().unwrap(), b"v");
    }

    #[test]
    fn a_damaged_or_truncated_backup_is_refused_before_anything_is_written() {
        let dir = tempfile::tempdir().unwrap();
        let db = sample_db(dir.path());
        let mut bytes = Vec::new();
        write(&Engine::Sled(db.clone()), &mut bytes).unwrap();

        let flipped = dir.path().join("flipped.bak");
        let mut damaged = bytes.clone();
        let middle = damaged.len() / 2;
        damaged[middle] ^= 0xff;
        std::fs::write(&flipped, &damaged).unwrap();
        assert!(restore(&flipped, &dir.path().join("r1")).is_err());
        assert!(!dir.path().join("r1").exists(), "nothing written");

        let cut = dir.path().join("cut.bak");
        std::fs::write(&cut, &bytes[..bytes.len() - 10]).unwrap();
        assert!(restore(&cut, &dir.path().join("r2")).is_err());
        assert!(!dir.path().join("r2").exists());
    }
}
