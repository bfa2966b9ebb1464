//! Deleting and merging contacts.

use super::*;

pub(super) fn delete(
    data: &mut WorkspaceData,
    ctx: &Ctx,
    id: ContactId,
) -> Result<Change<ContactId>, DomainError> {
    let id = data.contacts.live(id)?;
    let mut writes = Batch::default();
    let cs = &mut data.contacts;
    cs.remove(id);
    writes.delete(ctx.key(CONTACT, id));
    for note in cs.notes.remove(&id).unwrap_or_default().into_keys() {
        writes.delete(ctx.key(NOTE, note));
    }
    let pointing: Vec<ContactId> = cs
        .redirects
        .iter()
        .filter(|(_, t)| **t == id)
        .map(|(from, _)| *from)
        .collect();
    for from in pointing {
        cs.redirects.remove(&from);
        writes.delete(ctx.key(REDIRECT, from));
    }
    data.erase_contact_records(ctx, id, &mut writes)?;
    Ok(Change {
        value: id,
        writes,
        events: vec![DomainEvent::new(
            "contact.deleted",
            "contact",
            id,
            json!({"id": id}),
        )],
    })
}

pub(super) fn merge(
    data: &mut WorkspaceData,
    ctx: &Ctx,
    primary: ContactId,
    secondary: ContactId,
) -> Result<Change<ContactView>, DomainError> {
    let resolve = |id, field| {
        data.contacts
            .resolve(id)
            .ok_or_else(|| DomainError::missing(field, "contact"))
    };
    let p = resolve(primary, "primary_contact_id")?;
    let s = resolve(secondary, "secondary_contact_id")?;
    if p == s {
        return Err(DomainError::invalid(
            "secondary_contact_id",
            "must be a different contact from primary_contact_id",
        ));
    }
    let sec = data
        .contacts
        .get(s)
        .ok_or_else(|| DomainError::missing("secondary_contact_id", "contact"))?;
    let mut writes = Batch::default();
    // The secondary goes first, so the primary's indexes are rebuilt with its notes.
    data.contacts.remove(s);
    writes.delete(ctx.key(CONTACT, s));
    let moved = data.contacts.notes.remove(&s).unwrap_or_default();
    for (nid, mut note) in moved {
        note.contact_id = p;
        writes.put(ctx.key(NOTE, nid), &note)?;
        data.contacts.notes.entry(p).or_default().insert(nid, note);
    }
    let repoint: Vec<ContactId> = data
        .contacts
        .redirects
        .iter()
        .filter(|(_, t)| **t == s)
        .map(|(from, _)| *from)
        .chain([s])
        .collect();
    for from in repoint {
        data.contacts.redirects.insert(from, p);
        writes.put(ctx.key(REDIRECT, from), &Redirect { target: p })?;
    }
    // Fields the primary gains are an update of it (contact.updated, before contact.merged);
    // an opt-out it gains from the secondary is also told as one.
    let mut change = change_contact(data, ctx, p, true, |_, c, _, events| {
        let was_opted_out = c.do_not_contact;
        fill(c, &sec);
        if c.do_not_contact && !was_opted_out {
            events.push(super::update::opted_out(c));
        }
        Ok(())
    })?;
    // The primary's text now includes the moved notes even if no field changed.
    data.contacts.reindex(p);
    // Moved records emit no events of their own: contact.merged covers them.
    data.move_contact_records(ctx, s, p, &mut writes)?;
    let mut all = writes;
    all.extend(change.writes);
    change.writes = all;
    change.events.push(DomainEvent::new(
        "contact.merged",
        "contact",
        p,
        json!({"primary_contact_id": p, "secondary_contact_id": s}),
    ));
    Ok(change)
}

/// Fills the primary's empty fields from the secondary; tags and custom fields are united;
/// an opt-out on either side stays.
fn fill(c: &mut Contact, s: &Contact) {
    let pick = |mine: &mut Option<String>, theirs: &Option<String>| {
        if mine.is_none() {
            mine.clone_from(theirs);
        }
    };
    pick(&mut c.first_name, &s.first_name);
    pick(&mut c.last_name, &s.last_name);
    pick(&mut c.phone, &s.phone);
    pick(&mut c.chan_d_phone, &s.chan_d_phone);
    pick(&mut c.email, &s.email);
    pick(&mut c.chan_a_username, &s.chan_a_username);
    pick(&mut c.chan_c_username, &s.chan_c_username);
    pick(&mut c.chan_e_username, &s.chan_e_username);
    pick(&mut c.country_code, &s.country_code);
    pick(&mut c.assigned_to_user_id, &s.assigned_to_user_id);
    pick(&mut c.language, &s.language);
    if c.stage_id.is_none() {
        c.stage_id = s.stage_id;
    }
    for t in &s.tag_ids {
        if !c.tag_ids.contains(t) {
            c.tag_ids.push(*t);
        }
    }
    for (k, v) in &s.custom_fields {
        c.custom_fields
            .entry(k.clone())
            .or_insert_with(|| v.clone());
    }
    if s.do_not_contact && !c.do_not_contact {
        c.do_not_contact = true;
        c.do_not_contact_reason.clone_from(&s.do_not_contact_reason);
    }
}
