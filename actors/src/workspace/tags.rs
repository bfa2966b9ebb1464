//! The workspace tag list.

use std::collections::{BTreeMap, HashMap};

use serde_json::json;

use super::{answer, finish, record_prefix, Change, Ctx, Handled, Reply, WorkspaceData};
use crate::domain::tag::{NewTag, Tag, TagChange, TagDeleted, TagName};
use crate::domain::DomainError;
use crate::events::{DomainEvent, Origin};
use crate::ids::{TagId, WorkspaceId};
use crate::store::{Batch, Store};

#[derive(strum::IntoStaticStr)]
#[strum(prefix = "tag.", serialize_all = "snake_case")]
pub enum TagMsg {
    List {
        reply: Reply<Vec<Tag>>,
    },
    Create {
        origin: Origin,
        new: NewTag,
        reply: Reply<Tag>,
    },
    Update {
        origin: Origin,
        id: TagId,
        change: TagChange,
        reply: Reply<Tag>,
    },
    Delete {
        origin: Origin,
        id: TagId,
        reply: Reply<TagDeleted>,
    },
}

const KIND: &str = "tag";

/// Tags by id, with a case-insensitive name index.
#[derive(Default)]
pub struct Tags {
    by_id: BTreeMap<TagId, Tag>,
    by_name: HashMap<String, TagId>,
}

impl Tags {
    pub fn load(store: &Store, ws: &WorkspaceId) -> Result<Self, DomainError> {
        let mut tags = Self::default();
        for (_, tag) in store.scan::<Tag>(&record_prefix(ws, KIND))? {
            tags.insert(tag);
        }
        Ok(tags)
    }

    fn insert(&mut self, tag: Tag) {
        self.by_name.insert(tag.name.folded(), tag.id);
        self.by_id.insert(tag.id, tag);
    }

    pub fn find_by_name(&self, name: &str) -> Option<&Tag> {
        self.by_name
            .get(&crate::domain::text::fold(name))
            .and_then(|id| self.by_id.get(id))
    }

    pub fn get(&self, id: TagId) -> Option<&Tag> {
        self.by_id.get(&id)
    }

    /// Newest first.
    pub fn list(&self) -> Vec<Tag> {
        self.by_id.values().rev().cloned().collect()
    }
}

pub(super) fn handle(msg: TagMsg, data: &mut WorkspaceData, ctx: &Ctx) -> Handled {
    match msg {
        TagMsg::List { reply } => answer(reply, Ok(data.tags.list())),
        TagMsg::Create { origin, new, reply } => finish(reply, origin, create(data, ctx, new)),
        TagMsg::Update {
            origin,
            id,
            change,
            reply,
        } => finish(reply, origin, update(data, ctx, id, change)),
        TagMsg::Delete { origin, id, reply } => finish(reply, origin, delete(data, ctx, id)),
    }
}

fn taken(name: &str) -> DomainError {
    DomainError::conflict(format!("a tag named `{name}` already exists"))
}

fn create(data: &mut WorkspaceData, ctx: &Ctx, new: NewTag) -> Result<Change<Tag>, DomainError> {
    if let Some(existing) = data.tags.find_by_name(new.name.as_str()) {
        return Err(taken(existing.name.as_str()));
    }
    let mut writes = Batch::default();
    let mut events = Vec::new();
    let tag = add(data, ctx, new, &mut writes, &mut events)?;
    Ok(Change::new(tag, writes, events))
}

fn add(
    data: &mut WorkspaceData,
    ctx: &Ctx,
    new: NewTag,
    writes: &mut Batch,
    events: &mut Vec<DomainEvent>,
) -> Result<Tag, DomainError> {
    let tag = Tag {
        id: TagId(ctx.next_id()?),
        name: new.name,
        color: new.color,
        created_at: ctx.now,
        updated_at: ctx.now,
    };
    writes.put(ctx.key(KIND, tag.id.get()), &tag)?;
    data.tags.insert(tag.clone());
    events.push(DomainEvent::record("tag.created", "tag", tag.id, &tag));
    Ok(tag)
}

/// The id of the tag named `name` (any case), adding it to the workspace list if new.
pub(super) fn ensure(
    data: &mut WorkspaceData,
    ctx: &Ctx,
    name: &TagName,
    writes: &mut Batch,
    events: &mut Vec<DomainEvent>,
) -> Result<TagId, DomainError> {
    if let Some(existing) = data.tags.find_by_name(name.as_str()) {
        return Ok(existing.id);
    }
    let new = NewTag {
        name: name.clone(),
        color: None,
    };
    Ok(add(data, ctx, new, writes, events)?.id)
}

fn update(
    data: &mut WorkspaceData,
    ctx: &Ctx,
    id: TagId,
    change: TagChange,
) -> Result<Change<Tag>, DomainError> {
    let before = data
        .tags
        .by_id
        .get(&id)
        .cloned()
        .ok_or(DomainError::NotFound("tag"))?;
    let mut tag = before.clone();
    let mut changes = serde_json::Map::new();
    if let Some(name) = change.name {
        if let Some(other) = data.tags.find_by_name(name.as_str()) {
            if other.id != id {
                return Err(taken(other.name.as_str()));
            }
        }
        if name != tag.name {
            changes.insert("name".into(), json!(before.name));
            tag.name = name;
        }
    }
    if !change.color.is_keep() {
        let color = change.color.apply_to(tag.color);
        if color != tag.color {
            changes.insert("color".into(), json!(before.color));
            tag.color = color;
        }
    }
    let mut writes = Batch::default();
    let mut events = Vec::new();
    if !changes.is_empty() {
        tag.updated_at = ctx.now;
        writes.put(ctx.key(KIND, id), &tag)?;
        data.tags.by_name.remove(&before.name.folded());
        data.tags.insert(tag.clone());
        if changes.contains_key("name") {
            data.touch_tag_carriers(ctx, id, &mut writes)?;
        }
        events.push(DomainEvent::record("tag.updated", "tag", id, &tag).with_changes(changes));
    }
    Ok(Change::new(tag, writes, events))
}

fn delete(
    data: &mut WorkspaceData,
    ctx: &Ctx,
    id: TagId,
) -> Result<Change<TagDeleted>, DomainError> {
    let tag = data
        .tags
        .by_id
        .remove(&id)
        .ok_or(DomainError::NotFound("tag"))?;
    data.tags.by_name.remove(&tag.name.folded());
    let mut writes = Batch::default();
    writes.delete(ctx.key(KIND, id));
    let contacts_updated = data.untag_contacts(ctx, id, &mut writes)?;
    let deleted = TagDeleted {
        id,
        deleted: true,
        contacts_updated,
    };
    let event = DomainEvent::new(
        "tag.deleted",
        "tag",
        id,
        json!({"id": id, "name": tag.name, "color": tag.color, "contacts_updated": contacts_updated}),
    );
    Ok(Change::new(deleted, writes, vec![event]))
}
