//! Changing one contact: fields, tags, stage, assignee, do-not-contact, notes; and a
//! deleted tag leaving every contact.

use super::*;

pub(super) fn update(
    data: &mut WorkspaceData,
    ctx: &Ctx,
    id: ContactId,
    fields: ContactFields,
) -> Result<Change<ContactView>, DomainError> {
    change_contact(data, ctx, id, true, |data, c, _, _| {
        apply_fields(data, c, fields)
    })
}

pub(super) fn add_tags(
    data: &mut WorkspaceData,
    ctx: &Ctx,
    id: ContactId,
    names: Vec<TagName>,
) -> Result<Change<ContactView>, DomainError> {
    change_contact(data, ctx, id, false, |data, c, writes, events| {
        let ids = tag_ids(data, ctx, &names, writes, events)?;
        tag_with(data, c, ids, events);
        Ok(())
    })
}

/// Gives `c` the tags it lacks among `ids`, told by contact.tag_added.
pub(super) fn tag_with(
    data: &WorkspaceData,
    c: &mut Contact,
    ids: Vec<TagId>,
    events: &mut Vec<DomainEvent>,
) {
    let mut added = Vec::new();
    for t in ids {
        if !c.tag_ids.contains(&t) {
            c.tag_ids.push(t);
            if let Some(tag) = data.tags.get(t) {
                added.push(tag.name.as_str().to_string());
            }
        }
    }
    announce_tags(events, "contact.tag_added", c.id, added);
}

pub(super) fn remove_tags(
    data: &mut WorkspaceData,
    ctx: &Ctx,
    id: ContactId,
    names: Vec<TagName>,
) -> Result<Change<ContactView>, DomainError> {
    change_contact(data, ctx, id, false, |data, c, _, events| {
        let mut removed = Vec::new();
        for name in &names {
            if let Some(tag) = data.tags.find_by_name(name.as_str()) {
                if let Some(at) = c.tag_ids.iter().position(|t| *t == tag.id) {
                    c.tag_ids.remove(at);
                    removed.push(tag.name.as_str().to_string());
                }
            }
        }
        announce_tags(events, "contact.tag_removed", c.id, removed);
        Ok(())
    })
}

/// `contact.tag_added` or `contact.tag_removed` naming the tags, when any changed.
fn announce_tags(
    events: &mut Vec<DomainEvent>,
    event_type: &'static str,
    contact: ContactId,
    tags: Vec<String>,
) {
    if !tags.is_empty() {
        let data = json!({"contact_id": contact, "tags": tags});
        events.push(DomainEvent::new(event_type, "contact", contact, data));
    }
}

fn stage_ref(data: &WorkspaceData, stage: Option<StageId>) -> Value {
    stage
        .and_then(|s| data.funnels.stage(s))
        .map(|(f, s)| json!({"funnel_id": f.id, "stage_id": s.id, "stage_name": s.name}))
        .unwrap_or(Value::Null)
}

pub(super) fn set_stage(
    data: &mut WorkspaceData,
    ctx: &Ctx,
    id: ContactId,
    stage: Option<(StageId, Option<FunnelId>)>,
) -> Result<Change<ContactView>, DomainError> {
    data.contacts.live(id)?;
    if let Some((stage_id, funnel_id)) = stage {
        if funnel_id.is_some_and(|f| !data.funnels.contains_key(&f)) {
            return Err(DomainError::missing("funnel_id", "funnel"));
        }
        check_stage(data, stage_id, "stage_id")?;
        if let Some(fid) = funnel_id {
            let in_funnel = data
                .funnels
                .stage(stage_id)
                .is_some_and(|(f, _)| f.id == fid);
            if !in_funnel {
                return Err(DomainError::invalid(
                    "funnel_id",
                    "the stage does not belong to this funnel",
                ));
            }
        }
    }
    change_contact(data, ctx, id, false, |data, c, _, events| {
        move_to_stage(data, c, stage.map(|(s, _)| s), events);
        Ok(())
    })
}

/// Puts `c` in stage `new` (none: out of every funnel), told by contact.stage_changed.
pub(super) fn move_to_stage(
    data: &WorkspaceData,
    c: &mut Contact,
    new: Option<StageId>,
    events: &mut Vec<DomainEvent>,
) {
    if c.stage_id != new {
        let previous = stage_ref(data, c.stage_id);
        c.stage_id = new;
        events.push(DomainEvent::new(
            "contact.stage_changed",
            "contact",
            c.id,
            json!({"contact_id": c.id, "stage": stage_ref(data, new), "previous_stage": previous}),
        ));
    }
}

pub(super) fn assign(
    data: &mut WorkspaceData,
    ctx: &Ctx,
    id: ContactId,
    user: Option<String>,
) -> Result<Change<ContactView>, DomainError> {
    change_contact(data, ctx, id, false, |_, c, _, events| {
        assign_to(c, user, events);
        Ok(())
    })
}

/// Assigns `c` to `user` (none: unassigned), told by contact.assigned.
pub(super) fn assign_to(c: &mut Contact, user: Option<String>, events: &mut Vec<DomainEvent>) {
    if c.assigned_to_user_id != user {
        let previous = c
            .assigned_to_user_id
            .replace(user.clone().unwrap_or_default());
        c.assigned_to_user_id = user;
        events.push(DomainEvent::new(
            "contact.assigned",
            "contact",
            c.id,
            json!({"contact_id": c.id, "assigned_to_user_id": c.assigned_to_user_id, "previous_assigned_to_user_id": previous}),
        ));
    }
}

pub(super) fn set_dnc(
    data: &mut WorkspaceData,
    ctx: &Ctx,
    id: ContactId,
    dnc: Dnc,
) -> Result<Change<ContactView>, DomainError> {
    // Opting out is told by contact.opted_out; opting back in, or a new reason for a
    // contact already opted out, is an update like any other.
    let already_out = data
        .contacts
        .get(data.contacts.live(id)?)
        .is_some_and(|c| c.do_not_contact);
    let announce_update = !dnc.do_not_contact || already_out;
    change_contact(data, ctx, id, announce_update, |_, c, _, events| {
        let was = c.do_not_contact;
        c.do_not_contact = dnc.do_not_contact;
        c.do_not_contact_reason = if dnc.do_not_contact {
            dnc.reason.clone()
        } else {
            None
        };
        if dnc.do_not_contact && !was {
            events.push(opted_out(c));
        }
        Ok(())
    })
}

/// contact.opted_out for `c`, just marked do-not-contact.
pub(super) fn opted_out(c: &Contact) -> DomainEvent {
    DomainEvent::new(
        "contact.opted_out",
        "contact",
        c.id,
        json!({"contact_id": c.id, "reason": c.do_not_contact_reason}),
    )
}

pub(super) fn add_note(
    data: &mut WorkspaceData,
    ctx: &Ctx,
    id: ContactId,
    body: String,
) -> Result<Change<Note>, DomainError> {
    let cid = data.contacts.live(id)?;
    let note = Note {
        id: ctx.next_id()?,
        contact_id: cid,
        body,
        created_at: ctx.now,
    };
    let mut writes = Batch::default();
    writes.put(ctx.key(NOTE, note.id), &note)?;
    let cs = &mut data.contacts;
    cs.notes
        .entry(cid)
        .or_default()
        .insert(note.id, note.clone());
    cs.reindex(cid);
    Ok(Change::new(
        note.clone(),
        writes,
        vec![DomainEvent::record("note.created", "note", note.id, &note)],
    ))
}

/// Removes a deleted tag from every contact carrying it; answers how many changed.
pub(in crate::workspace) fn drop_tag(
    data: &mut WorkspaceData,
    ctx: &Ctx,
    tag_id: TagId,
    writes: &mut Batch,
) -> Result<u64, DomainError> {
    change_carriers(data, ctx, tag_id, writes, |c| {
        c.tag_ids.retain(|t| *t != tag_id)
    })
}

/// A tag was renamed: every contact carrying it shows the new name, so each one counts as
/// updated (`updated_at`, for clients syncing with `updated_since`); answers how many.
pub(in crate::workspace) fn renamed_tag(
    data: &mut WorkspaceData,
    ctx: &Ctx,
    tag_id: TagId,
    writes: &mut Batch,
) -> Result<u64, DomainError> {
    change_carriers(data, ctx, tag_id, writes, |_| {})
}

/// Applies `edit` to every contact carrying `tag_id` and marks it updated now.
fn change_carriers(
    data: &mut WorkspaceData,
    ctx: &Ctx,
    tag_id: TagId,
    writes: &mut Batch,
    edit: impl Fn(&mut Contact),
) -> Result<u64, DomainError> {
    let carriers: Vec<ContactId> = data
        .contacts
        .tag_links
        .carriers(tag_id)
        .into_iter()
        .filter_map(|slot| data.contacts.table.get(slot).map(|c| c.id))
        .collect();
    for id in &carriers {
        if let Some(mut c) = data.contacts.get(*id) {
            edit(&mut c);
            c.updated_at = ctx.now;
            data.contacts.put(ctx, c, writes)?;
        }
    }
    Ok(carriers.len() as u64)
}

/// A lead the AI found: the email and phone the contact lacked are saved (contact.updated)
/// and the lead is announced (contact.lead_captured, with its summary).
pub(in crate::workspace) fn capture_lead(
    data: &mut WorkspaceData,
    ctx: &Ctx,
    id: ContactId,
    email: Option<String>,
    phone: Option<String>,
    summary: &str,
) -> Result<Change<ContactView>, DomainError> {
    let mut change = change_contact(data, ctx, id, true, |_, c, _, _| {
        if c.email.is_none() {
            c.email = email.and_then(|e| crate::domain::text::email(&e).ok());
        }
        if c.phone.is_none() {
            c.phone = phone;
        }
        Ok(())
    })?;
    let mut lead = serde_json::to_value(&change.value).unwrap_or_else(|_| json!({}));
    if let Some(obj) = lead.as_object_mut() {
        obj.insert("summary".into(), json!(summary));
    }
    change.events.push(DomainEvent::record(
        "contact.lead_captured",
        "contact",
        change.value.id,
        lead,
    ));
    Ok(change)
}

/// The contact's email and phone, for the AI to know what a lead would add.
pub(in crate::workspace) fn reachable(
    data: &WorkspaceData,
    id: ContactId,
) -> (Option<String>, Option<String>) {
    data.contacts
        .get(id)
        .map(|c| (c.email, c.phone))
        .unwrap_or_default()
}
