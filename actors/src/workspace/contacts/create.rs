//! Creating contacts: create, upsert (match by phone, then email, then username), and the
//! contact an inbound message comes from.

use super::*;
use crate::domain::contact::{handle_key, phone_key};

pub(super) fn create(
    data: &mut WorkspaceData,
    ctx: &Ctx,
    new: NewContact,
    channel: Channel,
) -> Result<Change<ContactView>, DomainError> {
    if let Some(stage) = new.stage_id {
        check_stage(data, stage, "stage_id")?;
    }
    let mut c = Contact::blank(ctx.next_id()?, channel, new.source, ctx.now);
    c.stage_id = new.stage_id;
    c.assigned_to_user_id = new.assigned_to_user_id;
    apply_fields(data, &mut c, new.fields)?;
    let mut writes = Batch::default();
    let mut events = Vec::new();
    c.tag_ids = tag_ids(data, ctx, &new.tags, &mut writes, &mut events)?;
    // The view first, so the contact moves into the table instead of being copied.
    let v = view(data, &c);
    data.contacts.put(ctx, c, &mut writes)?;
    events.push(contact_event("contact.created", &v));
    Ok(Change::new(v, writes, events))
}

/// The contact a customer message comes from: the one upsert would match (left as it
/// is), or a new contact first seen on `channel` (its contact.created is in the change).
pub(in crate::workspace) fn for_inbound(
    data: &mut WorkspaceData,
    ctx: &Ctx,
    new: NewContact,
    channel: Channel,
) -> Result<Change<ContactId>, DomainError> {
    if let Some(id) = match_for_upsert(data, &new.fields) {
        return Ok(Change::new(id, Batch::default(), Vec::new()));
    }
    let created = create(data, ctx, new, channel)?;
    Ok(Change::new(
        created.value.id,
        created.writes,
        created.events,
    ))
}

pub(super) fn upsert(
    data: &mut WorkspaceData,
    ctx: &Ctx,
    new: NewContact,
) -> Result<Change<(bool, ContactView)>, DomainError> {
    if !new.fields.has_identifier() {
        return Err(DomainError::invalid(
            "",
            "send at least one of phone, chan_d_phone, email, chan_a_username, chan_c_username, chan_e_username",
        ));
    }
    let Some(existing) = match_for_upsert(data, &new.fields) else {
        let created = create(data, ctx, new, Channel::Api)?;
        return Ok(Change::new(
            (true, created.value),
            created.writes,
            created.events,
        ));
    };
    if let Some(stage) = new.stage_id {
        check_stage(data, stage, "stage_id")?;
    }
    let NewContact {
        fields,
        tags,
        stage_id,
        assigned_to_user_id,
        source: _,
    } = new;
    // The same events as the routes that make each change, and contact.updated with
    // every changed field.
    let updated = change_contact(data, ctx, existing, true, |data, c, writes, events| {
        apply_fields(data, c, fields)?;
        let ids = tag_ids(data, ctx, &tags, writes, events)?;
        update::tag_with(data, c, ids, events);
        if stage_id.is_some() {
            update::move_to_stage(data, c, stage_id, events);
        }
        if assigned_to_user_id.is_some() {
            update::assign_to(c, assigned_to_user_id, events);
        }
        Ok(())
    })?;
    Ok(Change::new(
        (false, updated.value),
        updated.writes,
        updated.events,
    ))
}

/// Phone (or channel phone) first, then email, then usernames; the oldest match wins.
fn match_for_upsert(data: &WorkspaceData, f: &ContactFields) -> Option<ContactId> {
    let set = |p: &Patch<String>| match p {
        Patch::Set(v) => Some(v.clone()),
        _ => None,
    };
    let cs = &data.contacts;
    let by_phone = [set(&f.phone), set(&f.chan_d_phone)]
        .into_iter()
        .flatten()
        .filter_map(|p| cs.oldest(&LookupKey::Phone(phone_key(&p))))
        .min();
    if by_phone.is_some() {
        return by_phone;
    }
    if let Some(e) = set(&f.email) {
        if let Some(id) = cs.oldest(&LookupKey::Email(e)) {
            return Some(id);
        }
    }
    [
        (Channel::ChanA, set(&f.chan_a_username)),
        (Channel::ChanC, set(&f.chan_c_username)),
        (Channel::ChanE, set(&f.chan_e_username)),
    ]
    .into_iter()
    .filter_map(|(ch, u)| u.and_then(|u| cs.oldest(&LookupKey::Handle(ch, handle_key(&u)))))
    .min()
}
