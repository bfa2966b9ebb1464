//! Key ranges, as both engines walk them.

use std::ops::Bound;

use super::StoreResult;

/// A key range, walked forwards or backwards.
pub(super) struct Span {
    pub from: Bound<Vec<u8>>,
    pub to: Bound<Vec<u8>>,
    pub backwards: bool,
}

impl Span {
    /// Every key that starts with `prefix`.
    pub fn prefix(prefix: &[u8]) -> Self {
        Self {
            from: Bound::Included(prefix.to_vec()),
            to: match prefix_end(prefix) {
                Some(end) => Bound::Excluded(end),
                None => Bound::Unbounded,
            },
            backwards: false,
        }
    }
}

/// The first key after every key that starts with `prefix` (None: no such key).
pub(super) fn prefix_end(prefix: &[u8]) -> Option<Vec<u8>> {
    let mut end = prefix.to_vec();
    while let Some(last) = end.pop() {
        if last < u8::MAX {
            end.push(last + 1);
            return Some(end);
        }
    }
    None
}

/// Says whether a walk goes on after this entry.
pub(super) type Visit<'a> = &'a mut dyn FnMut(&[u8], &[u8]) -> StoreResult<bool>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_prefix_ends_before_the_next_prefix() {
        assert_eq!(prefix_end(b"w/a/"), Some(b"w/a0".to_vec()));
        assert_eq!(prefix_end(&[1, 255]), Some(vec![2]));
        assert_eq!(prefix_end(&[255, 255]), None);
        assert_eq!(prefix_end(b""), None);
    }
}
