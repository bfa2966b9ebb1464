//! Which contacts carry which tag. One index, kept by the contact handlers as a contact's
//! tags change and read by the tag handlers (counts, and the contacts a deleted tag leaves).

use std::collections::{BTreeSet, HashMap};

use crate::ids::{ContactId, TagId};

#[derive(Default)]
pub struct TagLinks {
    by_tag: HashMap<TagId, BTreeSet<ContactId>>,
}

impl TagLinks {
    pub fn link(&mut self, contact: ContactId, tags: &[TagId]) {
        for t in tags {
            self.by_tag.entry(*t).or_default().insert(contact);
        }
    }

    pub fn unlink(&mut self, contact: ContactId, tags: &[TagId]) {
        for t in tags {
            if let Some(contacts) = self.by_tag.get_mut(t) {
                contacts.remove(&contact);
                if contacts.is_empty() {
                    self.by_tag.remove(t);
                }
            }
        }
    }

    /// The contacts carrying `tag`, oldest first.
    pub fn carriers(&self, tag: TagId) -> Vec<ContactId> {
        self.by_tag
            .get(&tag)
            .map(|s| s.iter().copied().collect())
            .unwrap_or_default()
    }

    /// Every linked tag with its number of contacts.
    pub fn counts(&self) -> impl Iterator<Item = (TagId, usize)> + '_ {
        self.by_tag.iter().map(|(t, c)| (*t, c.len()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn links_follow_a_contacts_tags_and_empty_tags_disappear() {
        let mut links = TagLinks::default();
        links.link(ContactId(1), &[TagId(10), TagId(11)]);
        links.link(ContactId(2), &[TagId(10)]);
        assert_eq!(links.carriers(TagId(10)), vec![ContactId(1), ContactId(2)]);
        assert_eq!(links.carriers(TagId(11)), vec![ContactId(1)]);
        links.unlink(ContactId(1), &[TagId(10), TagId(11)]);
        assert_eq!(links.carriers(TagId(10)), vec![ContactId(2)]);
        assert!(links.carriers(TagId(11)).is_empty());
        assert_eq!(links.counts().count(), 1);
    }
}
