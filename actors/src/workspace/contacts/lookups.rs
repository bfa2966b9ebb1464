//! Finding contacts by phone, email and handle: each key a contact has (its phones'
//! digits, its email, its username per channel) is hashed to the slots that have it. The
//! keys themselves are not kept; a hit is checked against the contact's own fields (see
//! [`keys_of`]), so two keys that share a hash never answer for each other. The hash is
//! keyed per index, so clients cannot choose keys that collide.

use std::collections::hash_map::RandomState;
use std::collections::HashMap;
use std::hash::BuildHasher;

use super::packed::PackedContact;
use crate::domain::contact::{handle_key, phone_key, Channel};
use crate::workspace::search::Slots;

/// What a contact can be found by, in its matching form.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum LookupKey {
    /// Digits only.
    Phone(String),
    Email(String),
    /// A username (lower case, no leading `@`), or on chan_d the phone's digits.
    Handle(Channel, String),
}

/// Every key `c` can be found by; empty keys are left out.
pub fn keys_of(c: &PackedContact) -> Vec<LookupKey> {
    let mut out = Vec::new();
    for p in [c.phone(), c.chan_d_phone()].into_iter().flatten() {
        out.push(LookupKey::Phone(phone_key(p)));
    }
    if let Some(e) = c.email() {
        // NFC, also for an email stored before emails were.
        out.push(LookupKey::Email(crate::domain::text::nfc(e)));
    }
    for channel in [Channel::ChanA, Channel::ChanC, Channel::ChanE] {
        if let Some(u) = c.username(channel) {
            out.push(LookupKey::Handle(channel, handle_key(u)));
        }
    }
    if let Some(p) = c.chan_d_phone() {
        out.push(LookupKey::Handle(Channel::ChanD, phone_key(p)));
    }
    out.retain(|k| match k {
        LookupKey::Phone(k) | LookupKey::Email(k) | LookupKey::Handle(_, k) => !k.is_empty(),
    });
    out
}

#[derive(Default)]
pub struct Lookups {
    hasher: RandomState,
    by_hash: HashMap<u64, Slots>,
}

impl Lookups {
    fn hash(&self, key: &LookupKey) -> u64 {
        self.hasher.hash_one(key)
    }

    pub fn add(&mut self, key: &LookupKey, slot: u32) {
        let h = self.hash(key);
        match self.by_hash.get_mut(&h) {
            Some(slots) => slots.insert(slot),
            None => {
                self.by_hash.insert(h, Slots::One(slot));
            }
        }
    }

    pub fn remove(&mut self, key: &LookupKey, slot: u32) {
        let h = self.hash(key);
        if let Some(slots) = self.by_hash.get_mut(&h) {
            if slots.remove(slot) {
                self.by_hash.remove(&h);
            }
        }
    }

    /// The slots that may have `key`, in order: check each against the contact.
    pub fn maybe(&self, key: &LookupKey) -> &[u32] {
        self.by_hash
            .get(&self.hash(key))
            .map_or(&[], Slots::as_slice)
    }

    /// How many distinct hashes are filed.
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.by_hash.len()
    }

    /// Renumbers every slot with `to`, which must keep their order (table compaction).
    pub fn renumber(&mut self, to: impl Fn(u32) -> u32 + Copy) {
        self.by_hash.values_mut().for_each(|s| s.renumber(to));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_added_found_and_removed() {
        let mut idx = Lookups::default();
        let phone = LookupKey::Phone("15550100".into());
        let email = LookupKey::Email("a@x.io".into());
        idx.add(&phone, 3);
        idx.add(&phone, 1);
        idx.add(&email, 3);
        assert_eq!(idx.maybe(&phone), [1, 3]);
        assert_eq!(idx.maybe(&email), [3]);
        assert!(idx
            .maybe(&LookupKey::Handle(Channel::ChanA, "a@x.io".into()))
            .is_empty());
        idx.remove(&phone, 1);
        idx.remove(&phone, 3);
        idx.remove(&email, 3);
        assert!(idx.by_hash.is_empty());
    }
}
