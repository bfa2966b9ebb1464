//! The workspace's contacts in one vector, in id order. A contact's index there, its slot,
//! is what the lookup, tag and search indexes hold: 4 bytes instead of an 8-byte id in a
//! tree node. Ids only grow, so a new contact goes at the end. A deleted contact leaves its
//! id behind, so slots keep their meaning, until more are gone than live and the table is
//! compacted (the indexes then renumber with the map [`Table::compact`] answers).

use super::packed::PackedContact;
use crate::ids::ContactId;

/// Marks a slot that compaction dropped.
pub const DROPPED: u32 = u32::MAX;

#[derive(Debug)]
enum Slot {
    Live(PackedContact),
    Gone(ContactId),
}

impl Slot {
    fn id(&self) -> ContactId {
        match self {
            Slot::Live(c) => c.id,
            Slot::Gone(id) => *id,
        }
    }
}

#[derive(Debug, Default)]
pub struct Table {
    slots: Vec<Slot>,
    live: usize,
}

impl Table {
    /// A table of `contacts`, which must be sorted by id without repeats.
    pub fn from_sorted(contacts: Vec<PackedContact>) -> Self {
        debug_assert!(contacts.windows(2).all(|w| w[0].id < w[1].id));
        let mut slots: Vec<Slot> = contacts.into_iter().map(Slot::Live).collect();
        // Collecting in place keeps the source's allocation, which may be far larger
        // (records decoded from the store are collected into this table).
        slots.shrink_to_fit();
        Self {
            live: slots.len(),
            slots,
        }
    }

    /// Every live contact, in id order; for a rebuild.
    pub fn into_live(self) -> Vec<PackedContact> {
        self.slots
            .into_iter()
            .filter_map(|s| match s {
                Slot::Live(c) => Some(c),
                Slot::Gone(_) => None,
            })
            .collect()
    }

    pub fn len(&self) -> usize {
        self.live
    }

    /// The slot of a live contact.
    pub fn slot_of(&self, id: ContactId) -> Option<u32> {
        let at = self.slots.binary_search_by_key(&id, Slot::id).ok()?;
        matches!(self.slots[at], Slot::Live(_)).then_some(at as u32)
    }

    pub fn get(&self, slot: u32) -> Option<&PackedContact> {
        match self.slots.get(slot as usize)? {
            Slot::Live(c) => Some(c),
            Slot::Gone(_) => None,
        }
    }

    /// Adds a contact newer than every other; gives it back when it is not (or when the
    /// table is full), for the caller to rebuild.
    pub fn push(&mut self, c: PackedContact) -> Result<u32, PackedContact> {
        let newest = self.slots.last().is_none_or(|last| last.id() < c.id);
        let slot = u32::try_from(self.slots.len())
            .ok()
            .filter(|s| *s < DROPPED);
        match slot {
            Some(slot) if newest => {
                self.slots.push(Slot::Live(c));
                self.live += 1;
                Ok(slot)
            }
            _ => Err(c),
        }
    }

    /// Puts a new version of the contact in `slot` (same id).
    pub fn replace(&mut self, slot: u32, c: PackedContact) {
        if let Some(s @ Slot::Live(_)) = self.slots.get_mut(slot as usize) {
            debug_assert_eq!(s.id(), c.id);
            *s = Slot::Live(c);
        }
    }

    pub fn remove(&mut self, slot: u32) -> Option<PackedContact> {
        let s = self.slots.get_mut(slot as usize)?;
        let id = s.id();
        match std::mem::replace(s, Slot::Gone(id)) {
            Slot::Live(c) => {
                self.live -= 1;
                Some(c)
            }
            gone => {
                *s = gone;
                None
            }
        }
    }

    /// How many slots hold ids below `upper`: the slots a page before `upper` walks.
    pub fn below(&self, upper: ContactId) -> u32 {
        self.slots.partition_point(|s| s.id() < upper) as u32
    }

    /// Every live contact with its slot, in id order.
    pub fn live(&self) -> impl DoubleEndedIterator<Item = (u32, &PackedContact)> {
        self.slots
            .iter()
            .enumerate()
            .filter_map(|(slot, s)| match s {
                Slot::Live(c) => Some((slot as u32, c)),
                Slot::Gone(_) => None,
            })
    }

    /// Whether deleted contacts hold more slots than live ones (and enough to matter).
    pub fn wants_compaction(&self) -> bool {
        let gone = self.slots.len() - self.live;
        gone > self.live.max(1024)
    }

    /// Drops the slots of deleted contacts. Answers each old slot's new number
    /// ([`DROPPED`] for the dropped ones); the order of live slots is kept.
    pub fn compact(&mut self) -> Vec<u32> {
        let mut next = 0;
        let map = self
            .slots
            .iter()
            .map(|s| match s {
                Slot::Live(_) => {
                    next += 1;
                    next - 1
                }
                Slot::Gone(_) => DROPPED,
            })
            .collect();
        self.slots.retain(|s| matches!(s, Slot::Live(_)));
        self.slots.shrink_to_fit();
        map
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::Timestamp;
    use crate::domain::contact::{Channel, Contact};

    fn contact(id: u64) -> PackedContact {
        let now = Timestamp(chrono::Utc::now());
        let mut c = Contact::blank(ContactId(id), Channel::Api, "api".into(), now);
        c.first_name = Some(format!("n{id}"));
        PackedContact::pack(c)
    }

    #[test]
    fn slots_follow_ids_and_deleted_ids_keep_their_place() {
        let mut t = Table::from_sorted(vec![contact(10), contact(20)]);
        assert_eq!(t.push(contact(30)), Ok(2));
        assert_eq!(t.push(contact(25)).map_err(|c| c.id), Err(ContactId(25)));
        assert_eq!(t.remove(1).map(|c| c.id), Some(ContactId(20)));
        assert_eq!(t.remove(1), None, "already gone");
        assert_eq!(t.slot_of(ContactId(20)), None);
        assert_eq!(t.slot_of(ContactId(30)), Some(2));
        assert_eq!(t.below(ContactId(30)), 2, "the gone slot still counts");
        assert_eq!(t.len(), 2);
        let live: Vec<u32> = t.live().map(|(s, _)| s).collect();
        assert_eq!(live, [0, 2]);
    }

    #[test]
    fn compaction_drops_gone_slots_in_order() {
        let mut t = Table::from_sorted((1..=2000).map(contact).collect());
        for slot in 0..1500 {
            if slot % 3 != 0 {
                t.remove(slot);
            }
        }
        assert!(!t.wants_compaction(), "1,000 gone against 1,000 live");
        for slot in 1500..2000 {
            t.remove(slot);
        }
        assert!(t.wants_compaction(), "1,500 gone against 500 live");
        let map = t.compact();
        assert_eq!(&map[..4], [0, DROPPED, DROPPED, 1]);
        assert_eq!(t.len(), 500);
        assert_eq!(t.slot_of(ContactId(4)), Some(1));
        assert!(!t.wants_compaction());
    }
}
