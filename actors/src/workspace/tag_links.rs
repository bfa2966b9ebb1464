//! Which contacts carry which tag. One index, kept by the contact handlers as a contact's
//! tags change and read by the tag handlers (counts, and the contacts a deleted tag leaves).
//! Contacts are named by their slot in the workspace's contact table (4 bytes each).

use std::collections::{BTreeSet, HashMap};

use crate::ids::TagId;

#[derive(Default)]
pub struct TagLinks {
    by_tag: HashMap<TagId, BTreeSet<u32>>,
}

impl TagLinks {
    pub fn link(&mut self, slot: u32, tags: &[TagId]) {
        for t in tags {
            self.by_tag.entry(*t).or_default().insert(slot);
        }
    }

    pub fn unlink(&mut self, slot: u32, tags: &[TagId]) {
        for t in tags {
            if let Some(slots) = self.by_tag.get_mut(t) {
                slots.remove(&slot);
                if slots.is_empty() {
                    self.by_tag.remove(t);
                }
            }
        }
    }

    /// The slots of the contacts carrying `tag`, oldest first.
    pub fn carriers(&self, tag: TagId) -> Vec<u32> {
        self.by_tag
            .get(&tag)
            .map(|s| s.iter().copied().collect())
            .unwrap_or_default()
    }

    /// Every linked tag with its number of contacts.
    pub fn counts(&self) -> impl Iterator<Item = (TagId, usize)> + '_ {
        self.by_tag.iter().map(|(t, c)| (*t, c.len()))
    }

    /// Renumbers every slot with `to`, which must keep their order (table compaction).
    pub fn renumber(&mut self, to: impl Fn(u32) -> u32) {
        for slots in self.by_tag.values_mut() {
            *slots = slots.iter().map(|s| to(*s)).collect();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn links_follow_a_contacts_tags_and_empty_tags_disappear() {
        let mut links = TagLinks::default();
        links.link(1, &[TagId(10), TagId(11)]);
        links.link(2, &[TagId(10)]);
        assert_eq!(links.carriers(TagId(10)), vec![1, 2]);
        assert_eq!(links.carriers(TagId(11)), vec![1]);
        links.unlink(1, &[TagId(10), TagId(11)]);
        assert_eq!(links.carriers(TagId(10)), vec![2]);
        assert!(links.carriers(TagId(11)).is_empty());
        assert_eq!(links.counts().count(), 1);
    }

    #[test]
    fn renumbering_keeps_the_carriers() {
        let mut links = TagLinks::default();
        links.link(3, &[TagId(10)]);
        links.link(7, &[TagId(10)]);
        links.renumber(|s| s / 3);
        assert_eq!(links.carriers(TagId(10)), vec![1, 2]);
    }
}
