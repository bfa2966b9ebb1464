//! The PostgreSQL engine's copy of its rows in memory: reads never cross the network, and
//! a write is visible at once while its commit gathers with others (group commit).
//!
//! Every change made here is also recorded as pending, newest value per key, until a
//! commit takes it: a flush hands PostgreSQL one transaction with everything applied
//! before it.

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard, RwLock};

use super::span::{Span, Visit};
use super::StoreResult;

/// One keyspace's entries, in key order.
type Space = BTreeMap<Vec<u8>, Vec<u8>>;

/// Changes not yet committed: (keyspace, key) to the newest value (None: deleted).
pub(super) type Pending = HashMap<(Vec<u8>, Vec<u8>), Option<Vec<u8>>>;

#[derive(Default)]
pub(super) struct Mirror {
    spaces: RwLock<HashMap<Vec<u8>, Space>>,
    pending: Mutex<Pending>,
    /// Bytes of every key and value held.
    bytes: AtomicU64,
}

impl Mirror {
    /// A mirror of rows already stored (nothing pending).
    pub fn loaded(rows: impl IntoIterator<Item = (Vec<u8>, Vec<u8>, Vec<u8>)>) -> Self {
        let mut spaces: HashMap<Vec<u8>, Space> = HashMap::new();
        let mut bytes = 0;
        for (space, key, value) in rows {
            bytes += (key.len() + value.len()) as u64;
            spaces.entry(space).or_default().insert(key, value);
        }
        Self {
            spaces: RwLock::new(spaces),
            pending: Mutex::default(),
            bytes: AtomicU64::new(bytes),
        }
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
            .map(|v| read(v))
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
        let range: Box<dyn Iterator<Item = (&Vec<u8>, &Vec<u8>)>> = if span.backwards {
            Box::new(range.rev())
        } else {
            Box::new(range)
        };
        for (k, v) in range {
            if !visit(k, v)? {
                break;
            }
        }
        Ok(())
    }

    /// Applies writes in order, all visible together, and records them as pending.
    pub fn apply(
        &self,
        space: &[u8],
        writes: impl IntoIterator<Item = (Vec<u8>, Option<Vec<u8>>)>,
    ) {
        let mut spaces = self.write();
        let mut pending = self.pending();
        let entries = spaces.entry(space.to_vec()).or_default();
        for (key, value) in writes {
            self.set(entries, &key, value.clone());
            pending.insert((space.to_vec(), key), value);
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
        if entries.get(key).map(Vec::as_slice) != old {
            return false;
        }
        self.set(entries, key, new.clone());
        self.pending().insert((space.to_vec(), key.to_vec()), new);
        true
    }

    fn set(&self, entries: &mut Space, key: &[u8], value: Option<Vec<u8>>) {
        let added = value.as_ref().map_or(0, |v| (key.len() + v.len()) as u64);
        let removed = match value {
            Some(v) => entries.insert(key.to_vec(), v),
            None => entries.remove(key),
        }
        .map_or(0, |v| (key.len() + v.len()) as u64);
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
        m.apply(b"", [(b"a".to_vec(), Some(b"1".to_vec()))]);
        m.apply(
            b"",
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
        assert_eq!(pending[&(b"".to_vec(), b"a".to_vec())], Some(b"2".to_vec()));
        assert_eq!(pending[&(b"".to_vec(), b"b".to_vec())], None);
        assert!(m.take_pending().is_empty());
        assert_eq!(m.bytes(), 2);
    }

    #[test]
    fn a_restored_commit_never_overwrites_a_newer_change() {
        let m = Mirror::default();
        m.apply(b"", [(b"a".to_vec(), Some(b"old".to_vec()))]);
        let taken = m.take_pending();
        m.apply(b"", [(b"a".to_vec(), Some(b"new".to_vec()))]);
        m.restore_pending(taken);
        assert_eq!(
            m.take_pending()[&(b"".to_vec(), b"a".to_vec())],
            Some(b"new".to_vec())
        );
    }

    #[test]
    fn walks_go_both_ways_and_an_inverted_range_is_empty() {
        let m = Mirror::default();
        m.apply(
            b"",
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
    fn compare_and_swap_only_replaces_the_expected_value() {
        let m = Mirror::default();
        assert!(m.compare_and_swap(b"t", b"k", None, Some(b"1".to_vec())));
        assert!(!m.compare_and_swap(b"t", b"k", None, Some(b"2".to_vec())));
        assert!(m.compare_and_swap(b"t", b"k", Some(b"1"), Some(b"2".to_vec())));
        assert_eq!(m.len(b"t"), 1);
        assert_eq!(m.spaces(), vec![b"".to_vec(), b"t".to_vec()]);
    }
}
