//! Reading contacts: lookup, filtered and searched lists, notes.

use super::*;

pub(super) fn lookup(data: &WorkspaceData, q: &LookupQuery) -> Result<ContactView, DomainError> {
    let cs = &data.contacts;
    let mut sets: Vec<BTreeSet<ContactId>> = Vec::new();
    if let Some(p) = &q.phone {
        sets.push(cs.by_phone.get(&phone_key(p)).cloned().unwrap_or_default());
    }
    if let Some(e) = &q.email {
        sets.push(
            cs.by_email
                .get(&e.trim().to_lowercase())
                .cloned()
                .unwrap_or_default(),
        );
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
        let mut found = BTreeSet::new();
        for ch in channels {
            let key = if ch == Channel::ChanD {
                phone_key(h)
            } else {
                handle_key(h)
            };
            if let Some(ids) = cs.by_handle.get(&(ch, key)) {
                found.extend(ids.iter().copied());
            }
        }
        sets.push(found);
    }
    let mut iter = sets.into_iter();
    let first = iter.next().unwrap_or_default();
    let all: BTreeSet<ContactId> =
        iter.fold(first, |acc, s| acc.intersection(&s).copied().collect());
    all.into_iter()
        .next()
        .and_then(|id| cs.by_id.get(&id))
        .map(|c| view(data, c))
        .ok_or(DomainError::NotFound("contact"))
}

fn passes(data: &WorkspaceData, c: &Contact, f: &ContactFilter, tag: Option<TagId>) -> bool {
    f.phone
        .as_ref()
        .is_none_or(|p| phones(c).any(|k| k == phone_key(p)))
        && f.email
            .as_ref()
            .is_none_or(|e| c.email.as_deref() == Some(e.trim().to_lowercase().as_str()))
        && tag.is_none_or(|t| c.tag_ids.contains(&t))
        && f.stage_id.is_none_or(|s| c.stage_id == Some(s))
        && f.assigned_to_user_id
            .as_ref()
            .is_none_or(|u| c.assigned_to_user_id.as_ref() == Some(u))
        && f.channel.is_none_or(|ch| c.channel == ch)
        && f.updated_since.is_none_or(|t| c.updated_at >= t)
        && (f.words.is_empty() || data.contacts.search.matches(c.id, &f.words))
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
    let upper = ContactId(page.after.unwrap_or(u64::MAX));
    // Walk the narrowest candidate list newest first, checking the other conditions on each
    // candidate. A word reaching more than a quarter of the workspace is not worth
    // materialising: walking every contact fills a page about as fast.
    let dense = cs.len() / 4 + 1;
    let narrowed: Option<Vec<ContactId>> = match (tag, cs.search.most_selective(&f.words, dense)) {
        (_, Some((word, n))) if n < dense => Some(cs.search.candidates(word)),
        (Some(t), _) => Some(cs.tag_links.carriers(t)),
        _ => None,
    };
    let walk: Box<dyn Iterator<Item = &Contact>> = match &narrowed {
        Some(ids) => {
            let end = ids.partition_point(|id| *id < upper);
            Box::new(ids[..end].iter().rev().filter_map(|id| cs.by_id.get(id)))
        }
        None => Box::new(cs.by_id.range(..upper).rev().map(|(_, c)| c)),
    };
    let mut items: Vec<&Contact> = walk
        .filter(|c| passes(data, c, f, tag))
        .take(page.limit + 1)
        .collect();
    let has_more = items.len() > page.limit;
    items.truncate(page.limit);
    Page {
        items: items.into_iter().map(|c| view(data, c)).collect(),
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
