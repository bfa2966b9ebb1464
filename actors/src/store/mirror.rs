//! The PostgreSQL engine's copy of its rows in memory: reads never cross the network, and
//! a write is visible at once while its commit gathers with others (group commit).
//!
//! Every change made here is also recorded as pending, newest value per key, until a
//! commit takes it: a flush hands PostgreSQL one transaction with everything applied
//! before it.
//!
//! Every row knows its workspace (empty for the directory and the rest that belongs to no
//! workspace): a node holds only the rows of the workspaces it owns, loads a workspace's
//! rows when it takes it, drops them when it loses it, and each commit checks that the
//! node still owns the workspaces it writes (see the PostgreSQL engine, `postgres.rs`).

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, RwLock};

use super::span::{Span, Visit};
use super::StoreResult;

/// A workspace id as rows carry it; empty: no workspace.
pub(super) type Owner = Arc<str>;

/// One stored value and the workspace it belongs to.
struct Row {
    owner: Owner,
    value: Vec<u8>,
}

/// One keyspace's entries, in key order.
type Space = BTreeMap<Vec<u8>, Row>;

/// One row as loaded or stored: (keyspace, key, workspace, value).
pub(super) type StoredRow = (Vec<u8>, Vec<u8>, String, Vec<u8>);

/// A change not yet committed: the row's workspace and its newest value (None: deleted).
pub(super) type Change = (Owner, Option<Vec<u8>>);

/// Changes not yet committed, by (keyspace, key).
pub(super) type Pending = HashMap<(Vec<u8>, Vec<u8>), Change>;

/// The workspace a key names by its layout: `w/<workspace>/...` and timers'
/// `tq/<due: 8 bytes>/<workspace>/...` in the main keyspace, and `<workspace>|...` for
/// idempotency records. Other rows keep the workspace they were first written with, which
/// is that of the store handle that wrote them ([`super::Store::scoped`]).
pub(super) fn owner_in_key<'a>(space: &[u8], key: &'a [u8]) -> Option<&'a [u8]> {
    let ws = if space.is_empty() {
        if let Some(timer) = key.strip_prefix(b"tq/") {
            timer.get(9..)?.split(|b| *b == b'/').next()?
        } else {
            key.strip_prefix(b"w/")?.split(|b| *b == b'/').next()?
        }
    } else if space == b"idempotency" {
        key.split(|b| *b == b'|')
            .next()
            .filter(|ws| ws.len() < key.len())?
    } else {
        return None;
    };
    (!ws.is_empty()).then_some(ws)
}

#[derive(Default)]
pub(super) struct Mirror {
    spaces: RwLock<HashMap<Vec<u8>, Space>>,
    pending: Mutex<Pending>,
    /// Bytes of every key and value held.
    bytes: AtomicU64,
}

impl Mirror {
    /// A mirror of rows already stored (nothing pending).
    pub fn loaded(rows: impl IntoIterator<Item = StoredRow>) -> Self {
        let mirror = Self::default();
        mirror.load(rows);
        mirror
    }

    /// Adds rows already stored (nothing pending), over any held under the same keys.
    pub fn load(&self, rows: impl IntoIterator<Item = StoredRow>) {
        let mut spaces = self.write();
        let mut owners: HashMap<String, Owner> = HashMap::new();
        for (space, key, owner, value) in rows {
            let owner = owners
                .entry(owner)
                .or_insert_with_key(|o| Owner::from(o.as_str()))
                .clone();
            let entries = spaces.entry(space).or_default();
            self.set(entries, &key, Some(Row { owner, value }));
        }
    }

    /// Replaces the rows of `workspace` with `rows` (a fresh load), but for keys with
    /// changes not yet committed, which stay as they are.
    pub fn replace_workspace(&self, workspace: &str, rows: Vec<StoredRow>) {
        let mut spaces = self.write();
        let pending = self.pending();
        let mut gone = 0u64;
        for (space, entries) in spaces.iter_mut() {
            entries.retain(|k, r| {
                let keep =
                    &*r.owner != workspace || pending.contains_key(&(space.clone(), k.clone()));
                if !keep {
                    gone += (k.len() + r.value.len()) as u64;
                }
                keep
            });
        }
        self.bytes.fetch_sub(gone, Ordering::Relaxed);
        let owner = Owner::from(workspace);
        for (space, key, _, value) in rows {
            if pending.contains_key(&(space.clone(), key.clone())) {
                continue;
            }
            let entries = spaces.entry(space).or_default();
            self.set(
                entries,
                &key,
                Some(Row {
                    owner: owner.clone(),
                    value,
                }),
            );
        }
    }

    /// Forgets every row of `workspace` and its uncommitted changes (the node lost it).
    pub fn drop_workspace(&self, workspace: &str) {
        let mut spaces = self.write();
        for entries in spaces.values_mut() {
            let before: u64 = entries
                .iter()
                .filter(|(_, r)| &*r.owner == workspace)
                .map(|(k, r)| (k.len() + r.value.len()) as u64)
                .sum();
            entries.retain(|_, r| &*r.owner != workspace);
            self.bytes.fetch_sub(before, Ordering::Relaxed);
        }
        self.pending().retain(|_, (owner, _)| &**owner != workspace);
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, HashMap<Vec<u8>, Space>> {
        self.spaces.read().unwrap_or_else(|p| p.into_inner())
    }

    fn write(&self) -> std::sync::RwLockWriteGuard<'_, HashMap<Vec<u8>, Space>> {
        self.spaces.write().unwrap_or_else(|p| p.into_inner())
    }

    fn pending(&self) -> MutexGuard<'_, Pending> {
        self.pending.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub fn get<R>(
        &self,
        space: &[u8],
        key: &[u8],
        read: impl FnOnce(&[u8]) -> StoreResult<R>,
    ) -> StoreResult<Option<R>> {
        let spaces = self.read();
        spaces
            .get(space)
            .and_then(|s| s.get(key))
            .map(|r| read(&r.value))
            .transpose()
    }

    pub fn walk(&self, space: &[u8], span: Span, visit: Visit<'_>) -> StoreResult<()> {
        let spaces = self.read();
        let Some(entries) = spaces.get(space) else {
            return Ok(());
        };
        if range_is_empty(&span) {
            return Ok(());
        }
        let range = entries.range::<Vec<u8>, _>((span.from, span.to));
        let range: Box<dyn Iterator<Item = (&Vec<u8>, &Row)>> = if span.backwards {
            Box::new(range.rev())
        } else {
            Box::new(range)
        };
        for (k, r) in range {
            if !visit(k, &r.value)? {
                break;
            }
        }
        Ok(())
    }

    /// Applies writes in order, all visible together, and records them as pending. A row
    /// belongs to the workspace its key names, else to `scope`'s, else keeps its own.
    pub fn apply(
        &self,
        space: &[u8],
        scope: Option<&Owner>,
        writes: impl IntoIterator<Item = (Vec<u8>, Option<Vec<u8>>)>,
    ) {
        let mut spaces = self.write();
        let mut pending = self.pending();
        let entries = spaces.entry(space.to_vec()).or_default();
        for (key, value) in writes {
            let owner = owner_of(space, &key, scope, entries);
            let row = value.clone().map(|value| Row {
                owner: owner.clone(),
                value,
            });
            self.set(entries, &key, row);
            pending.insert((space.to_vec(), key), (owner, value));
        }
    }

    /// Replaces the value under `key` with `new` only if it is still `old` (None: absent).
    pub fn compare_and_swap(
        &self,
        space: &[u8],
        key: &[u8],
        old: Option<&[u8]>,
        new: Option<Vec<u8>>,
    ) -> bool {
        let mut spaces = self.write();
        let entries = spaces.entry(space.to_vec()).or_default();
        if entries.get(key).map(|r| r.value.as_slice()) != old {
            return false;
        }
        let owner = owner_of(space, key, None, entries);
        let row = new.clone().map(|value| Row {
            owner: owner.clone(),
            value,
        });
        self.set(entries, key, row);
        self.pending()
            .insert((space.to_vec(), key.to_vec()), (owner, new));
        true
    }

    fn set(&self, entries: &mut Space, key: &[u8], row: Option<Row>) {
        let added = row
            .as_ref()
            .map_or(0, |r| (key.len() + r.value.len()) as u64);
        let removed = match row {
            Some(r) => entries.insert(key.to_vec(), r),
            None => entries.remove(key),
        }
        .map_or(0, |r| (key.len() + r.value.len()) as u64);
        self.bytes.fetch_add(added, Ordering::Relaxed);
        self.bytes.fetch_sub(removed, Ordering::Relaxed);
    }

    /// Takes every change applied so far, for one commit.
    pub fn take_pending(&self) -> Pending {
        std::mem::take(&mut *self.pending())
    }

    /// Puts back changes a commit did not store, under any newer ones made since.
    pub fn restore_pending(&self, taken: Pending) {
        let mut pending = self.pending();
        for (key, value) in taken {
            pending.entry(key).or_insert(value);
        }
    }

    pub fn len(&self, space: &[u8]) -> usize {
        self.read().get(space).map_or(0, BTreeMap::len)
    }

    pub fn spaces(&self) -> Vec<Vec<u8>> {
        let mut names: Vec<Vec<u8>> = self.read().keys().cloned().collect();
        if !names.iter().any(Vec::is_empty) {
            names.push(Vec::new());
        }
        names.sort();
        names
    }

    pub fn bytes(&self) -> u64 {
        self.bytes.load(Ordering::Relaxed)
    }
}

/// The workspace of a row written under `key`: named by the key, else the row's own (an
/// update or delete of a row written before: its workspace is part of its identity in the
/// table), else the writer's, else none.
fn owner_of(space: &[u8], key: &[u8], scope: Option<&Owner>, entries: &Space) -> Owner {
    if let Some(ws) = owner_in_key(space, key) {
        return Owner::from(String::from_utf8_lossy(ws).as_ref());
    }
    entries
        .get(key)
        .map(|r| r.owner.clone())
        .or_else(|| scope.cloned())
        .unwrap_or_else(|| Owner::from(""))
}

/// A range whose start lies after its end: BTreeMap panics on one, sled yields nothing.
fn range_is_empty(span: &Span) -> bool {
    use std::ops::Bound::*;
    match (&span.from, &span.to) {
        (Included(a), Included(b)) => a > b,
        (Included(a), Excluded(b)) | (Excluded(a), Included(b)) => a >= b,
        (Excluded(a), Excluded(b)) => a >= b,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ops::Bound;

    fn keys(m: &Mirror, span: Span) -> Vec<Vec<u8>> {
        let mut out = Vec::new();
        m.walk(b"", span, &mut |k, _| {
            out.push(k.to_vec());
            Ok(true)
        })
        .unwrap();
        out
    }

    #[test]
    fn writes_are_read_back_and_pending_keeps_the_newest_per_key() {
        let m = Mirror::default();
        m.apply(b"", None, [(b"a".to_vec(), Some(b"1".to_vec()))]);
        m.apply(
            b"",
            None,
            [
                (b"a".to_vec(), Some(b"2".to_vec())),
                (b"b".to_vec(), Some(b"3".to_vec())),
                (b"b".to_vec(), None),
            ],
        );
        assert_eq!(
            m.get(b"", b"a", |v| Ok(v.to_vec())).unwrap(),
            Some(b"2".to_vec())
        );
        assert_eq!(m.get(b"", b"b", |v| Ok(v.to_vec())).unwrap(), None);
        let pending = m.take_pending();
        assert_eq!(pending.len(), 2);
        assert_eq!(
            pending[&(b"".to_vec(), b"a".to_vec())].1,
            Some(b"2".to_vec())
        );
        assert_eq!(pending[&(b"".to_vec(), b"b".to_vec())].1, None);
        assert!(m.take_pending().is_empty());
        assert_eq!(m.bytes(), 2);
    }

    #[test]
    fn a_restored_commit_never_overwrites_a_newer_change() {
        let m = Mirror::default();
        m.apply(b"", None, [(b"a".to_vec(), Some(b"old".to_vec()))]);
        let taken = m.take_pending();
        m.apply(b"", None, [(b"a".to_vec(), Some(b"new".to_vec()))]);
        m.restore_pending(taken);
        assert_eq!(
            m.take_pending()[&(b"".to_vec(), b"a".to_vec())].1,
            Some(b"new".to_vec())
        );
    }

    #[test]
    fn walks_go_both_ways_and_an_inverted_range_is_empty() {
        let m = Mirror::default();
        m.apply(
            b"",
            None,
            (1u8..=4)
                .map(|i| (vec![i], Some(vec![i])))
                .collect::<Vec<_>>(),
        );
        let back = Span {
            from: Bound::Included(vec![2]),
            to: Bound::Unbounded,
            backwards: true,
        };
        assert_eq!(keys(&m, back), vec![vec![4], vec![3], vec![2]]);
        let inverted = Span {
            from: Bound::Excluded(vec![3]),
            to: Bound::Excluded(vec![2]),
            backwards: false,
        };
        assert!(keys(&m, inverted).is_empty());
    }

    #[test]
    fn rows_belong_to_the_workspace_their_key_or_writer_names_and_go_with_it() {
        let m = Mirror::default();
        let scope = Owner::from("ws_b");
        m.apply(b"", None, [(b"w/ws_a/ct/1".to_vec(), Some(vec![1]))]);
        m.apply(b"", Some(&scope), [(b"wd/we_1/1".to_vec(), Some(vec![2]))]);
        m.apply(b"", None, [(b"d/user/usr_1".to_vec(), Some(vec![3]))]);
        // A delete by a writer of no workspace keeps the row's own.
        m.apply(b"", None, [(b"wd/we_1/1".to_vec(), None)]);
        let pending = m.take_pending();
        let owner = |k: &[u8]| pending[&(b"".to_vec(), k.to_vec())].0.to_string();
        assert_eq!(owner(b"w/ws_a/ct/1"), "ws_a");
        assert_eq!(owner(b"wd/we_1/1"), "ws_b");
        assert_eq!(owner(b"d/user/usr_1"), "");
        assert_eq!(
            owner_in_key(b"idempotency", b"ws_c|oat_1\0key"),
            Some(&b"ws_c"[..])
        );
        assert_eq!(owner_in_key(b"idempotency", b"|oat_1"), None);
        let timer = [
            &b"tq/"[..],
            &[0, 0, 0, 0, 0, 0, 0, 7],
            b"/ws_d/conversation/1",
        ]
        .concat();
        assert_eq!(owner_in_key(b"", &timer), Some(&b"ws_d"[..]));

        m.load([(b"".to_vec(), b"wp/we_1/1".to_vec(), "ws_b".into(), vec![4])]);
        m.apply(b"", Some(&scope), [(b"os/ch_1/1".to_vec(), Some(vec![5]))]);
        m.drop_workspace("ws_b");
        assert_eq!(m.get(b"", b"wp/we_1/1", |v| Ok(v.to_vec())).unwrap(), None);
        assert!(
            m.take_pending().is_empty(),
            "the lost workspace's changes go too"
        );
        assert_eq!(
            m.get(b"", b"w/ws_a/ct/1", |v| Ok(v.to_vec())).unwrap(),
            Some(vec![1])
        );
        assert_eq!(
            m.bytes(),
            (b"w/ws_a/ct/1".len() + 1 + b"d/user/usr_1".len() + 1) as u64
        );
    }

    #[test]
    fn compare_and_swap_only_replaces_the_expected_value() {
        let m = Mirror::default();
        assert!(m.compare_and_swap(b"t", b"k", None, Some(b"1".to_vec())));
        assert!(!m.compare_and_swap(b"t", b"k", None, Some(b"2".to_vec())));
        assert!(m.compare_and_swap(b"t", b"k", Some(b"1"), Some(b"2".to_vec())));
        assert_eq!(m.len(b"t"), 1);
        assert_eq!(m.spaces(), vec![b"".to_vec(), b"t".to_vec()]);
    }
}
