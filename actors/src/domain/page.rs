//! Pages of newest-first lists. Ids grow with time, so "newest first" is "highest id
//! first" and a cursor is the id of the last item seen.

use std::collections::BTreeMap;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PageRequest {
    pub limit: usize,
    /// Only items with a smaller id than this.
    pub after: Option<u64>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Page<T> {
    pub items: Vec<T>,
    pub has_more: bool,
}

impl PageRequest {
    /// A page of `items` (keyed by id, bare or typed), newest first, keeping those
    /// `keep` accepts.
    pub fn select<'a, K: Ord + From<u64>, T: Clone + 'a>(
        &self,
        items: &'a BTreeMap<K, T>,
        mut keep: impl FnMut(&T) -> bool,
    ) -> Page<T> {
        let upper = K::from(self.after.unwrap_or(u64::MAX));
        let mut out: Vec<T> = items
            .range(..upper)
            .rev()
            .filter(|(_, v)| keep(v))
            .take(self.limit + 1)
            .map(|(_, v)| v.clone())
            .collect();
        let has_more = out.len() > self.limit;
        out.truncate(self.limit);
        Page {
            items: out,
            has_more,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_walk_newest_first_without_gaps_or_repeats() {
        let items: BTreeMap<u64, u64> = (1..=7).map(|i| (i, i)).collect();
        let first = PageRequest {
            limit: 3,
            after: None,
        }
        .select(&items, |_| true);
        assert_eq!(first.items, [7, 6, 5]);
        assert!(first.has_more);
        let second = PageRequest {
            limit: 3,
            after: Some(5),
        }
        .select(&items, |_| true);
        assert_eq!(second.items, [4, 3, 2]);
        let last = PageRequest {
            limit: 3,
            after: Some(2),
        }
        .select(&items, |_| true);
        assert_eq!(last.items, [1]);
        assert!(!last.has_more);
        let odd = PageRequest {
            limit: 10,
            after: None,
        }
        .select(&items, |v| v % 2 == 1);
        assert_eq!(odd.items, [7, 5, 3, 1]);
    }
}
