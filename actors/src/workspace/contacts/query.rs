//! Reading contacts: lookup, filtered and searched lists, notes.

use super::*;
use crate::domain::contact::{handle_key, phone_key};

pub(super) fn lookup(data: &WorkspaceData, q: &LookupQuery) -> Result<ContactView, DomainError> {
    let cs = &data.contacts;
    // Each condition's contacts, oldest first; the answer is the oldest in all of them.
    let mut sets: Vec<Vec<ContactId>> = Vec::new();
    if let Some(p) = &q.phone {
        sets.push(cs.find(&LookupKey::Phone(phone_key(p))));
    }
    if let Some(e) = &q.email {
        let key = crate::domain::text::nfc(&e.trim().to_lowercase());
        sets.push(cs.find(&LookupKey::Email(key)));
    }
    if let Some(h) = &q.handle {
        let channels = match q.channel {
            Some(c) => vec![c],
            None => vec![
                Channel::ChanA,
                Channel::ChanC,
                Channel::ChanE,
                Channel::ChanD,
            ],
        };
        let mut found = Vec::new();
        for ch in channels {
            let key = if ch == Channel::ChanD {
                phone_key(h)
            } else {
                handle_key(h)
            };
            found.extend(cs.find(&LookupKey::Handle(ch, key)));
        }
        found.sort_unstable();
        found.dedup();
        sets.push(found);
    }
    let mut iter = sets.into_iter();
    let first = iter.next().unwrap_or_default();
    let all = iter.fold(first, |acc, s| {
        acc.into_iter()
            .filter(|id| s.binary_search(id).is_ok())
            .collect()
    });
    all.first()
        .and_then(|id| cs.get(*id))
        .map(|c| into_view(data, c))
        .ok_or(DomainError::NotFound("contact"))
}

/// The filters of a list, in the form the contacts are compared in, worked out once.
struct Conditions<'a> {
    filter: &'a ContactFilter,
    phone: Option<String>,
    email: Option<String>,
    tag: Option<TagId>,
}

impl Conditions<'_> {
    fn pass(&self, cs: &Contacts, c: &PackedContact) -> bool {
        let f = self.filter;
        // The `phone` field only: the channel phone counts for lookup and upsert, which
        // say so, not for this filter.
        self.phone
            .as_ref()
            .is_none_or(|p| c.phone().is_some_and(|mine| phone_key(mine) == *p))
            && self
                .email
                .as_ref()
                .is_none_or(|e| c.email() == Some(e.as_str()))
            && self.tag.is_none_or(|t| c.tag_ids.contains(&t))
            && f.stage_id.is_none_or(|s| c.stage_id == Some(s))
            && f.assigned_to_user_id
                .as_ref()
                .is_none_or(|u| c.assigned_to_user_id() == Some(u.as_str()))
            && f.channel.is_none_or(|ch| c.channel == ch)
            && f.updated_since.is_none_or(|t| c.updated_at >= t)
            && (f.words.is_empty() || cs.matches(c, &f.words))
    }
}

pub(super) fn list(
    data: &WorkspaceData,
    f: &ContactFilter,
    page: PageRequest,
) -> Page<ContactView> {
    let cs = &data.contacts;
    let tag = match &f.tag {
        None => None,
        Some(name) => match data.tags.find_by_name(name) {
            Some(t) => Some(t.id),
            None => {
                return Page {
                    items: vec![],
                    has_more: false,
                }
            }
        },
    };
    let conditions = Conditions {
        filter: f,
        phone: f.phone.as_deref().map(phone_key),
        email: f.email.as_ref().map(|e| e.trim().to_lowercase()),
        tag,
    };
    // The slots before the page's cursor.
    let upper = cs.table.below(ContactId(page.after.unwrap_or(u64::MAX)));
    // Walk the narrowest candidate list newest first, checking the other conditions on each
    // candidate. A word reaching more than a quarter of the workspace is not worth
    // materialising: walking every contact fills a page about as fast.
    let dense = cs.len() / 4 + 1;
    let narrowed: Option<Vec<u32>> = match (tag, cs.search.most_selective(&f.words, dense)) {
        (_, Some((word, n))) if n < dense => Some(cs.search.candidates(word)),
        (Some(t), _) => Some(cs.tag_links.carriers(t)),
        _ => None,
    };
    let walk: Box<dyn Iterator<Item = u32>> = match &narrowed {
        Some(slots) => {
            let end = slots.partition_point(|s| *s < upper);
            Box::new(slots[..end].iter().rev().copied())
        }
        None => Box::new((0..upper).rev()),
    };
    let mut items: Vec<&PackedContact> = walk
        .filter_map(|slot| cs.table.get(slot))
        .filter(|c| conditions.pass(cs, c))
        .take(page.limit + 1)
        .collect();
    let has_more = items.len() > page.limit;
    items.truncate(page.limit);
    Page {
        items: items.into_iter().map(|c| view(data, &c.unpack())).collect(),
        has_more,
    }
}

pub(super) fn list_notes(
    data: &WorkspaceData,
    id: ContactId,
    page: PageRequest,
) -> Result<Page<Note>, DomainError> {
    let id = data.contacts.live(id)?;
    let empty = BTreeMap::new();
    let notes = data.contacts.notes.get(&id).unwrap_or(&empty);
    Ok(page.select(notes, |_| true))
}
