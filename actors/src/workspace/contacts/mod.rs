//! Contacts, their notes, and the indexes that make lookup, upsert and search fast:
//! phone, email and handle lookups, tag membership, and the free-text index. Contacts are
//! held packed ([`PackedContact`]) in a table by slot, and the indexes name them by slot.

use std::collections::{BTreeMap, HashMap};

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::search::{SearchIndex, Searchable};
use super::tag_links::TagLinks;
use super::{answer, finish, record_prefix, Change, Ctx, Handled, Reply, WorkspaceData};
use crate::domain::contact::{
    custom_values, Channel, ChannelIdentity, Contact, ContactFields, ContactFilter, ContactView,
    Dnc, LookupQuery, NewContact, Note, StageRef,
};
use crate::domain::page::{Page, PageRequest};
use crate::domain::tag::TagName;
use crate::domain::{DomainError, Patch};
use crate::events::{field_changes, DomainEvent, Origin};
use crate::ids::WorkspaceId;
use crate::ids::{ContactId, FunnelId, NoteId, StageId, TagId};
use crate::store::{trailing_id, Batch, Store};

mod create;
mod lifecycle;
mod lookups;
mod packed;
mod query;
mod table;
mod update;

pub(super) use create::for_inbound;
use create::{create, upsert};
use lifecycle::{delete, merge};
use lookups::{keys_of, LookupKey, Lookups};
pub use packed::PackedContact;
use query::{list, list_notes, lookup};
use table::Table;
use update::{add_note, add_tags, assign, remove_tags, set_dnc, set_stage, update};
pub(super) use update::{capture_lead, drop_tag, reachable, renamed_tag};

#[derive(strum::IntoStaticStr)]
#[strum(prefix = "contact.", serialize_all = "snake_case")]
pub enum ContactMsg {
    Create {
        origin: Origin,
        new: NewContact,
        reply: Reply<ContactView>,
    },
    Get {
        id: ContactId,
        reply: Reply<ContactView>,
    },
    List {
        filter: ContactFilter,
        page: PageRequest,
        reply: Reply<Page<ContactView>>,
    },
    Lookup {
        query: LookupQuery,
        reply: Reply<ContactView>,
    },
    /// Answers whether a contact was created, and the contact.
    Upsert {
        origin: Origin,
        new: NewContact,
        reply: Reply<(bool, ContactView)>,
    },
    Merge {
        origin: Origin,
        primary: ContactId,
        secondary: ContactId,
        reply: Reply<ContactView>,
    },
    Update {
        origin: Origin,
        id: ContactId,
        fields: ContactFields,
        reply: Reply<ContactView>,
    },
    Delete {
        origin: Origin,
        id: ContactId,
        reply: Reply<ContactId>,
    },
    Channels {
        id: ContactId,
        reply: Reply<Vec<ChannelIdentity>>,
    },
    AddTags {
        origin: Origin,
        id: ContactId,
        tags: Vec<TagName>,
        reply: Reply<ContactView>,
    },
    RemoveTags {
        origin: Origin,
        id: ContactId,
        tags: Vec<TagName>,
        reply: Reply<ContactView>,
    },
    /// `Some((stage_id, funnel_id))` moves the contact; `None` removes the stage.
    SetStage {
        origin: Origin,
        id: ContactId,
        stage: Option<(StageId, Option<FunnelId>)>,
        reply: Reply<ContactView>,
    },
    Assign {
        origin: Origin,
        id: ContactId,
        user: Option<String>,
        reply: Reply<ContactView>,
    },
    ListNotes {
        id: ContactId,
        page: PageRequest,
        reply: Reply<Page<Note>>,
    },
    AddNote {
        origin: Origin,
        id: ContactId,
        body: String,
        reply: Reply<Note>,
    },
    SetDnc {
        origin: Origin,
        id: ContactId,
        dnc: Dnc,
        reply: Reply<ContactView>,
    },
}

pub(super) const CONTACT: &str = "ct";
const NOTE: &str = "nt";
const REDIRECT: &str = "rd";

/// Whether a contact goes into the indexes or comes out of them.
#[derive(Clone, Copy)]
enum Filing {
    In,
    Out,
}

/// A merged-away contact id and the contact it now answers as.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Redirect {
    target: ContactId,
}

#[derive(Default)]
pub struct Contacts {
    table: Table,
    redirects: HashMap<ContactId, ContactId>,
    notes: HashMap<ContactId, BTreeMap<NoteId, Note>>,
    /// Tag -> contacts; the tag handlers read it too.
    pub(in crate::workspace) tag_links: TagLinks,
    lookups: Lookups,
    search: SearchIndex,
}

/// The searchable text of a contact: names, email, usernames, phones, notes.
fn searchable<'a>(
    c: &'a PackedContact,
    notes: Option<&'a BTreeMap<NoteId, Note>>,
) -> impl Iterator<Item = Searchable<'a>> {
    let words = [
        c.first_name(),
        c.last_name(),
        c.email(),
        c.username(Channel::ChanA),
        c.username(Channel::ChanC),
        c.username(Channel::ChanE),
    ]
    .into_iter()
    .flatten()
    .map(Searchable::Words);
    let phones = [c.phone(), c.chan_d_phone()]
        .into_iter()
        .flatten()
        .map(Searchable::Phone);
    let notes = notes
        .into_iter()
        .flat_map(BTreeMap::values)
        .map(|n| Searchable::Words(&n.body));
    words.chain(phones).chain(notes)
}

impl Contacts {
    pub fn load(store: &Store, ws: &WorkspaceId) -> Result<Self, DomainError> {
        let mut contacts = Self::default();
        let mut records: Vec<PackedContact> = store
            .scan::<Contact>(&record_prefix(ws, CONTACT))?
            .into_iter()
            .map(|(_, c)| PackedContact::pack(c))
            .collect();
        for (_, n) in store.scan::<Note>(&record_prefix(ws, NOTE))? {
            contacts
                .notes
                .entry(n.contact_id)
                .or_default()
                .insert(n.id, n);
        }
        for (key, r) in store.scan::<Redirect>(&record_prefix(ws, REDIRECT))? {
            if let Some(from) = trailing_id(&key) {
                contacts.redirects.insert(ContactId(from), r.target);
            }
        }
        records.sort_unstable_by_key(|c| c.id);
        records.dedup_by_key(|c| c.id);
        contacts.rebuild(records);
        Ok(contacts)
    }

    /// Replaces the table with `records` (sorted by id) and indexes every one.
    fn rebuild(&mut self, records: Vec<PackedContact>) {
        self.table = Table::from_sorted(records);
        self.tag_links = TagLinks::default();
        self.lookups = Lookups::default();
        self.search = SearchIndex::default();
        for slot in 0..self.table.len() as u32 {
            self.index(slot);
        }
    }

    pub fn len(&self) -> usize {
        self.table.len()
    }

    pub fn is_empty(&self) -> bool {
        self.table.len() == 0
    }

    fn contains(&self, id: ContactId) -> bool {
        self.table.slot_of(id).is_some()
    }

    /// The live contact an id names, following merge redirects.
    pub fn resolve(&self, id: ContactId) -> Option<ContactId> {
        if self.contains(id) {
            return Some(id);
        }
        self.redirects
            .get(&id)
            .filter(|t| self.contains(**t))
            .copied()
    }

    /// The live contact a body's `contact_id` names (following merges), or 422 there.
    pub fn named(&self, id: ContactId) -> Result<ContactId, DomainError> {
        self.resolve(id)
            .ok_or_else(|| DomainError::missing("contact_id", "contact"))
    }

    /// The contact an id stands for now: a merged-away id answers as the contact it
    /// became; any other id stays as it is (a filter, a stored record's contact).
    pub fn current(&self, id: ContactId) -> ContactId {
        self.resolve(id).unwrap_or(id)
    }

    /// The live contact a path id names, or 404.
    fn live(&self, id: ContactId) -> Result<ContactId, DomainError> {
        self.resolve(id).ok_or(DomainError::NotFound("contact"))
    }

    fn packed(&self, id: ContactId) -> Option<&PackedContact> {
        self.table.get(self.table.slot_of(id)?)
    }

    /// The contact an id names (following merge redirects), unpacked.
    pub fn get(&self, id: ContactId) -> Option<Contact> {
        self.resolve(id)
            .and_then(|id| self.packed(id))
            .map(PackedContact::unpack)
    }

    /// Every live contact, oldest first, as held.
    pub fn all(&self) -> impl Iterator<Item = &PackedContact> {
        self.table.live().map(|(_, c)| c)
    }

    /// Stored references that name nothing: merge redirects to a missing contact, notes of
    /// a missing contact (for the offline check).
    pub fn dangling(&self) -> Vec<String> {
        let mut out = Vec::new();
        for (from, to) in &self.redirects {
            if !self.contains(*to) {
                out.push(format!("redirect {from} -> missing contact {to}"));
            }
        }
        for contact in self.notes.keys() {
            if !self.contains(*contact) {
                out.push(format!("notes of missing contact {contact}"));
            }
        }
        out
    }

    /// Files the contact in `slot` in every index, from its fields and notes as they are.
    fn index(&mut self, slot: u32) {
        self.file(slot, Filing::In);
    }

    /// Takes the contact in `slot` out of every index. The keys and tokens are derived
    /// again, so this must run before its fields change or its notes go (a note added
    /// since only makes the removal look for a token that is not there).
    fn unindex(&mut self, slot: u32) {
        self.file(slot, Filing::Out);
    }

    /// Files the contact in `slot` into every index or takes it out of them.
    fn file(&mut self, slot: u32, filing: Filing) {
        let Some(c) = self.table.get(slot) else {
            return;
        };
        let tokens: Vec<String> = searchable(c, self.notes.get(&c.id))
            .flat_map(Searchable::tokens)
            .collect();
        let keys = keys_of(c);
        match filing {
            Filing::In => {
                keys.iter().for_each(|key| self.lookups.add(key, slot));
                self.tag_links.link(slot, &c.tag_ids);
                self.search.add(slot, &tokens);
            }
            Filing::Out => {
                keys.iter().for_each(|key| self.lookups.remove(key, slot));
                self.tag_links.unlink(slot, &c.tag_ids);
                self.search.remove(slot, &tokens);
            }
        }
    }

    /// Indexes a contact again after its notes changed.
    fn reindex(&mut self, id: ContactId) {
        if let Some(slot) = self.table.slot_of(id) {
            self.unindex(slot);
            self.index(slot);
        }
    }

    /// Whether every word is a prefix of one of the contact's tokens.
    fn matches(&self, c: &PackedContact, words: &[String]) -> bool {
        let notes = self.notes.get(&c.id);
        words
            .iter()
            .all(|w| searchable(c, notes).any(|t| t.has_prefix(w)))
    }

    /// The live contacts with `key`, oldest first.
    fn find(&self, key: &LookupKey) -> Vec<ContactId> {
        self.lookups
            .maybe(key)
            .iter()
            .filter_map(|slot| self.table.get(*slot))
            .filter(|c| keys_of(c).contains(key))
            .map(|c| c.id)
            .collect()
    }

    /// The oldest live contact with `key`.
    fn oldest(&self, key: &LookupKey) -> Option<ContactId> {
        self.find(key).first().copied()
    }

    /// Stores a new or changed contact in memory and in the batch, keeping indexes right.
    fn put(&mut self, ctx: &Ctx, c: Contact, writes: &mut Batch) -> Result<(), DomainError> {
        writes.put(ctx.key(CONTACT, c.id), &c)?;
        let packed = PackedContact::pack(c);
        match self.table.slot_of(packed.id) {
            Some(slot) => {
                self.unindex(slot);
                self.table.replace(slot, packed);
                self.index(slot);
            }
            None => match self.table.push(packed) {
                Ok(slot) => self.index(slot),
                // Not newer than every contact (ids only grow, so this is not expected):
                // slots would fall out of id order, so the table is built again.
                Err(packed) => {
                    let mut records = std::mem::take(&mut self.table).into_live();
                    let at = records.partition_point(|c| c.id < packed.id);
                    records.insert(at, packed);
                    self.rebuild(records);
                }
            },
        }
        Ok(())
    }

    /// Takes a contact out of memory and the indexes (its notes and redirects stay for
    /// the caller to move or drop).
    fn remove(&mut self, id: ContactId) {
        let Some(slot) = self.table.slot_of(id) else {
            return;
        };
        self.unindex(slot);
        self.table.remove(slot);
        if self.table.wants_compaction() {
            let map = self.table.compact();
            let to = |slot: u32| map[slot as usize];
            self.lookups.renumber(to);
            self.tag_links.renumber(to);
            self.search.renumber(to);
        }
    }
}

pub(super) fn handle(msg: ContactMsg, data: &mut WorkspaceData, ctx: &Ctx) -> Handled {
    match msg {
        ContactMsg::Create {
            origin: o,
            new,
            reply,
        } => finish(reply, o, create(data, ctx, new, Channel::Api)),
        ContactMsg::Get { id, reply } => answer(reply, view_of(data, id)),
        ContactMsg::List {
            filter,
            page,
            reply,
        } => answer(reply, Ok(list(data, &filter, page))),
        ContactMsg::Lookup { query: q, reply } => answer(reply, lookup(data, &q)),
        ContactMsg::Upsert {
            origin: o,
            new,
            reply,
        } => finish(reply, o, upsert(data, ctx, new)),
        ContactMsg::Merge {
            origin: o,
            primary: p,
            secondary: s,
            reply,
        } => finish(reply, o, merge(data, ctx, p, s)),
        ContactMsg::Update {
            origin: o,
            id,
            fields,
            reply,
        } => finish(reply, o, update(data, ctx, id, fields)),
        ContactMsg::Delete {
            origin: o,
            id,
            reply,
        } => finish(reply, o, delete(data, ctx, id)),
        ContactMsg::Channels { id, reply } => answer(
            reply,
            data.contacts
                .get(id)
                .map(|c| c.channels())
                .ok_or(DomainError::NotFound("contact")),
        ),
        ContactMsg::AddTags {
            origin: o,
            id,
            tags,
            reply,
        } => finish(reply, o, add_tags(data, ctx, id, tags)),
        ContactMsg::RemoveTags {
            origin: o,
            id,
            tags,
            reply,
        } => finish(reply, o, remove_tags(data, ctx, id, tags)),
        ContactMsg::SetStage {
            origin: o,
            id,
            stage,
            reply,
        } => finish(reply, o, set_stage(data, ctx, id, stage)),
        ContactMsg::Assign {
            origin: o,
            id,
            user,
            reply,
        } => finish(reply, o, assign(data, ctx, id, user)),
        ContactMsg::ListNotes { id, page, reply } => answer(reply, list_notes(data, id, page)),
        ContactMsg::AddNote {
            origin: o,
            id,
            body,
            reply,
        } => finish(reply, o, add_note(data, ctx, id, body)),
        ContactMsg::SetDnc {
            origin: o,
            id,
            dnc,
            reply,
        } => finish(reply, o, set_dnc(data, ctx, id, dnc)),
    }
}

/// A contact as answered.
pub fn view(data: &WorkspaceData, c: &Contact) -> ContactView {
    into_view(data, c.clone())
}

/// A contact as answered, taking its text rather than copying it (for unpacked contacts).
fn into_view(data: &WorkspaceData, c: Contact) -> ContactView {
    let stage = c.stage_id.and_then(|sid| {
        data.funnels.stage(sid).map(|(f, s)| StageRef {
            funnel_id: f.id,
            stage_id: s.id,
            stage_name: s.name.clone(),
        })
    });
    let name = c.name();
    let Contact {
        id,
        first_name,
        last_name,
        phone,
        chan_d_phone,
        email,
        chan_a_username,
        chan_c_username,
        chan_e_username,
        country_code,
        channel,
        source,
        tag_ids,
        stage_id: _,
        assigned_to_user_id,
        language,
        custom_fields,
        do_not_contact,
        do_not_contact_reason,
        created_at,
        updated_at,
    } = c;
    ContactView {
        id,
        name,
        first_name,
        last_name,
        phone,
        chan_d_phone,
        email,
        chan_a_username,
        chan_c_username,
        chan_e_username,
        country_code,
        channel,
        source,
        tags: tag_ids
            .iter()
            .filter_map(|t| data.tags.get(*t).map(|t| t.name.as_str().to_string()))
            .collect(),
        stage,
        assigned_to_user_id,
        language,
        custom_fields: custom_fields
            .into_iter()
            .map(|(k, v)| (k, v.to_json()))
            .collect(),
        do_not_contact,
        do_not_contact_reason,
        created_at,
        updated_at,
    }
}

fn view_of(data: &WorkspaceData, id: ContactId) -> Result<ContactView, DomainError> {
    data.contacts
        .get(id)
        .map(|c| into_view(data, c))
        .ok_or(DomainError::NotFound("contact"))
}

/// Applies checked fields (custom fields against the workspace's definitions).
fn apply_fields(
    data: &WorkspaceData,
    c: &mut Contact,
    fields: ContactFields,
) -> Result<(), DomainError> {
    if let Some(input) = &fields.custom_fields {
        let values = custom_values(input, |k| data.custom_fields.by_key(k).cloned())
            .map_err(DomainError::Validation)?;
        for (k, v) in values {
            match v {
                Some(v) => {
                    c.custom_fields.insert(k, v);
                }
                None => {
                    c.custom_fields.remove(&k);
                }
            }
        }
    }
    c.apply(fields);
    Ok(())
}

fn check_stage(data: &WorkspaceData, stage_id: StageId, path: &str) -> Result<(), DomainError> {
    data.funnels
        .stage(stage_id)
        .map(|_| ())
        .ok_or_else(|| DomainError::missing(path, "stage"))
}

/// Tag ids for names, adding names the workspace does not have yet.
fn tag_ids(
    data: &mut WorkspaceData,
    ctx: &Ctx,
    names: &[TagName],
    writes: &mut Batch,
    events: &mut Vec<DomainEvent>,
) -> Result<Vec<TagId>, DomainError> {
    let mut ids = Vec::new();
    for name in names {
        let id = super::tags::ensure(data, ctx, name, writes, events)?;
        if !ids.contains(&id) {
            ids.push(id);
        }
    }
    Ok(ids)
}

fn contact_event(kind: &'static str, c: &ContactView) -> DomainEvent {
    DomainEvent::record(kind, "contact", c.id, c)
}

/// Changes one contact through `edit`; answers its new view. `edit` returns the events
/// specific to the change; a contact.updated with the changed fields is added when
/// `announce_update` is set.
fn change_contact(
    data: &mut WorkspaceData,
    ctx: &Ctx,
    id: ContactId,
    announce_update: bool,
    edit: impl FnOnce(
        &mut WorkspaceData,
        &mut Contact,
        &mut Batch,
        &mut Vec<DomainEvent>,
    ) -> Result<(), DomainError>,
) -> Result<Change<ContactView>, DomainError> {
    let id = data.contacts.live(id)?;
    let before_record = data
        .contacts
        .get(id)
        .ok_or(DomainError::NotFound("contact"))?;
    let before = view(data, &before_record);
    let mut c = before_record.clone();
    let mut writes = Batch::default();
    let mut events = Vec::new();
    edit(data, &mut c, &mut writes, &mut events)?;
    if c == before_record {
        return Ok(Change::new(before, writes, events));
    }
    c.updated_at = ctx.now;
    data.contacts.put(ctx, c.clone(), &mut writes)?;
    let after = view(data, &c);
    if announce_update {
        let diff = field_changes(&before, &after);
        if !diff.is_empty() {
            events.push(contact_event("contact.updated", &after).with_changes(diff));
        }
    }
    Ok(Change::new(after, writes, events))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::contact::ContactInput;
    use crate::workspace::search::tokenize;

    struct Fixture {
        _dir: tempfile::TempDir,
        store: Store,
        dispatcher: crate::delivery::Dispatcher,
        relays: crate::outbound::Relays,
        ws: WorkspaceId,
        data: WorkspaceData,
    }

    impl Fixture {
        async fn new() -> Self {
            let dir = tempfile::tempdir().unwrap();
            let store = Store::open(dir.path()).unwrap();
            let outlets = crate::registry::Outlets::new(
                store.clone(),
                std::sync::Arc::new(crate::clock::SystemClock),
                crate::delivery::DeliverySettings::default(),
                crate::outbound::OutboundSettings::default(),
            )
            .unwrap();
            Self {
                _dir: dir,
                dispatcher: outlets.dispatcher,
                relays: outlets.relays,
                store,
                ws: WorkspaceId::generate(),
                data: WorkspaceData::default(),
            }
        }

        /// Runs a mutation and keeps its writes, as the actor would.
        fn run<T>(
            &mut self,
            f: impl FnOnce(&mut WorkspaceData, &Ctx) -> Result<Change<T>, DomainError>,
        ) -> (T, Vec<DomainEvent>) {
            let ctx = Ctx {
                workspace: &self.ws,
                store: &self.store,
                dispatcher: &self.dispatcher,
                relays: &self.relays,
                now: crate::clock::Timestamp(chrono::Utc::now()),
                later: Default::default(),
                wake: Default::default(),
                outlets: Default::default(),
                pace_soon: Default::default(),
                turn_limit: std::time::Duration::from_secs(1),
            };
            let change = f(&mut self.data, &ctx).unwrap();
            self.store.apply(change.writes).unwrap();
            (change.value, change.events)
        }
    }

    fn new_contact(json: serde_json::Value) -> NewContact {
        NewContact::parse(serde_json::from_value::<ContactInput>(json).unwrap()).unwrap()
    }

    fn types(events: &[DomainEvent]) -> Vec<&'static str> {
        events.iter().map(|e| e.event_type).collect()
    }

    #[tokio::test]
    async fn creating_with_new_tags_announces_the_tags_and_the_contact() {
        let mut fx = Fixture::new().await;
        let (c, events) = fx.run(|d, ctx| {
            create(
                d,
                ctx,
                new_contact(json!({"first_name": "Ann", "tags": ["VIP"]})),
                Channel::Api,
            )
        });
        assert_eq!(types(&events), ["tag.created", "contact.created"]);
        assert_eq!(events[1].resource_id, c.id.to_string());
        assert_eq!(events[1].data["first_name"], "Ann");
    }

    #[tokio::test]
    async fn an_update_lists_changed_fields_with_previous_values() {
        let mut fx = Fixture::new().await;
        let (c, _) = fx.run(|d, ctx| {
            create(
                d,
                ctx,
                new_contact(json!({"first_name": "Ann", "email": "a@x.io"})),
                Channel::Api,
            )
        });
        let fields = crate::domain::contact::parse_patch(
            serde_json::from_value(json!({"first_name": "Anna", "email": "a@x.io"})).unwrap(),
        )
        .unwrap();
        let (_, events) = fx.run(|d, ctx| update(d, ctx, c.id, fields));
        assert_eq!(types(&events), ["contact.updated"]);
        let changes = events[0].changes.as_ref().unwrap();
        assert_eq!(changes.get("first_name"), Some(&json!("Ann")));
        assert_eq!(changes.get("name"), Some(&json!("Ann")));
        assert!(
            !changes.contains_key("email"),
            "unchanged fields are not listed"
        );
    }

    #[tokio::test]
    async fn an_update_that_changes_nothing_announces_nothing() {
        let mut fx = Fixture::new().await;
        let (c, _) = fx.run(|d, ctx| {
            create(
                d,
                ctx,
                new_contact(json!({"first_name": "Ann"})),
                Channel::Api,
            )
        });
        let fields = crate::domain::contact::parse_patch(
            serde_json::from_value(json!({"first_name": "Ann"})).unwrap(),
        )
        .unwrap();
        let (after, events) = fx.run(|d, ctx| update(d, ctx, c.id, fields));
        assert!(events.is_empty());
        assert_eq!(after.updated_at, c.updated_at);
    }

    #[tokio::test]
    async fn tags_stage_assignee_dnc_notes_merge_and_delete_each_announce_themselves() {
        let mut fx = Fixture::new().await;
        let (a, _) = fx.run(|d, ctx| {
            create(
                d,
                ctx,
                new_contact(json!({"phone": "+15550100"})),
                Channel::Api,
            )
        });
        let (b, _) = fx.run(|d, ctx| {
            create(
                d,
                ctx,
                new_contact(json!({"email": "b@x.io"})),
                Channel::Api,
            )
        });
        let vip = vec![TagName::parse("vip").unwrap()];
        let (_, e) = fx.run(|d, ctx| add_tags(d, ctx, a.id, vip.clone()));
        assert_eq!(types(&e), ["tag.created", "contact.tag_added"]);
        let (_, e) = fx.run(|d, ctx| add_tags(d, ctx, a.id, vip.clone()));
        assert!(e.is_empty(), "adding a tag the contact has changes nothing");
        let (_, e) = fx.run(|d, ctx| remove_tags(d, ctx, a.id, vip.clone()));
        assert_eq!(types(&e), ["contact.tag_removed"]);
        let (_, e) = fx.run(|d, ctx| assign(d, ctx, a.id, Some("usr_1".into())));
        assert_eq!(types(&e), ["contact.assigned"]);
        assert_eq!(e[0].data["previous_assigned_to_user_id"], Value::Null);
        let dnc = Dnc {
            do_not_contact: true,
            reason: Some("asked".into()),
        };
        let (_, e) = fx.run(|d, ctx| set_dnc(d, ctx, a.id, dnc.clone()));
        assert_eq!(types(&e), ["contact.opted_out"]);
        let (_, e) = fx.run(|d, ctx| set_dnc(d, ctx, a.id, dnc.clone()));
        assert!(e.is_empty(), "the same again changes nothing");
        let new_reason = Dnc {
            reason: Some("asked again".into()),
            ..dnc
        };
        let (_, e) = fx.run(|d, ctx| set_dnc(d, ctx, a.id, new_reason));
        assert_eq!(types(&e), ["contact.updated"], "a new reason is an update");
        assert_eq!(e[0].changes.as_ref().map(|c| c.len()), Some(1));
        let (_, e) = fx.run(|d, ctx| add_note(d, ctx, b.id, "called".into()));
        assert_eq!(types(&e), ["note.created"]);
        let (merged, e) = fx.run(|d, ctx| merge(d, ctx, a.id, b.id));
        assert_eq!(
            types(&e),
            ["contact.updated", "contact.merged"],
            "the primary gained the secondary's email"
        );
        assert_eq!(merged.email.as_deref(), Some("b@x.io"));
        let (_, e) = fx.run(|d, ctx| delete(d, ctx, b.id));
        assert_eq!(types(&e), ["contact.deleted"]);
        assert_eq!(
            e[0].resource_id,
            a.id.to_string(),
            "the redirect resolves to the primary"
        );
        // A primary that gains the secondary's opt-out is marked do-not-contact: told.
        let (p, _) = fx.run(|d, ctx| {
            create(
                d,
                ctx,
                new_contact(json!({"first_name": "Pia"})),
                Channel::Api,
            )
        });
        let (s, _) = fx.run(|d, ctx| {
            create(
                d,
                ctx,
                new_contact(json!({"first_name": "Sam"})),
                Channel::Api,
            )
        });
        let (_, _) = fx.run(|d, ctx| set_dnc(d, ctx, s.id, dnc.clone()));
        let (merged, e) = fx.run(|d, ctx| merge(d, ctx, p.id, s.id));
        assert!(merged.do_not_contact);
        assert_eq!(
            types(&e),
            ["contact.opted_out", "contact.updated", "contact.merged"]
        );
        assert_eq!(e[0].resource_id, p.id.to_string());
        assert_eq!(e[0].data["reason"], "asked");
    }

    #[tokio::test]
    async fn indexes_follow_every_change_and_reload_from_the_store() {
        let mut fx = Fixture::new().await;
        let (c, _) = fx.run(|d, ctx| {
            create(
                d,
                ctx,
                new_contact(json!({"first_name": "Zed", "phone": "+1 555 0199"})),
                Channel::Api,
            )
        });
        let (_, _) = fx.run(|d, ctx| add_note(d, ctx, c.id, "prefers mornings".into()));
        let reloaded = WorkspaceData::load(&fx.store, &fx.ws).unwrap();
        for data in [&fx.data, &reloaded] {
            let words = |q: &str| tokenize(q).collect::<Vec<_>>();
            let packed = data.contacts.packed(c.id).unwrap();
            assert!(data.contacts.matches(packed, &words("zed morn 0199")));
            for word in ["zed", "morn", "0199"] {
                let slot = data.contacts.table.slot_of(c.id).unwrap();
                assert_eq!(data.contacts.search.candidates(word), [slot]);
            }
            assert_eq!(
                data.contacts.oldest(&LookupKey::Phone("15550199".into())),
                Some(c.id)
            );
        }
    }

    /// What the indexes answer, by contact id: the same for the same contacts however the
    /// slots are numbered.
    fn answers(cs: &Contacts, probes: &[&str]) -> Vec<Vec<ContactId>> {
        let ids = |slots: Vec<u32>| -> Vec<ContactId> {
            slots
                .into_iter()
                .map(|s| cs.table.get(s).map(|c| c.id).expect("a live slot"))
                .collect()
        };
        let mut out: Vec<Vec<ContactId>> = probes
            .iter()
            .map(|w| ids(cs.search.candidates(w)))
            .collect();
        out.push(vec![ContactId(cs.search.len() as u64)]);
        out.push(vec![ContactId(cs.lookups.len() as u64)]);
        let mut tags: Vec<(TagId, usize)> = cs.tag_links.counts().collect();
        tags.sort();
        for (tag, n) in tags {
            out.push(ids(cs.tag_links.carriers(tag)));
            out.push(vec![ContactId(tag.get()), ContactId(n as u64)]);
        }
        out
    }

    #[tokio::test]
    async fn indexes_stay_exact_through_deletes_merges_and_compaction() {
        let mut fx = Fixture::new().await;
        let mut ids = Vec::new();
        for i in 0..1_200 {
            let (c, _) = fx.run(|d, ctx| {
                create(
                    d,
                    ctx,
                    new_contact(json!({
                        "first_name": format!("Name{}", i % 7),
                        "phone": format!("+1 555 {i:04}"),
                        "email": format!("p{i}@x.io"),
                        "chan_a_username": format!("@h{i}"),
                        "tags": [format!("t{}", i % 3)],
                    })),
                    Channel::Api,
                )
            });
            ids.push(c.id);
        }
        for (i, id) in ids.iter().enumerate().step_by(50) {
            let body = format!("note{i} about lamps");
            fx.run(|d, ctx| add_note(d, ctx, *id, body));
        }
        fx.run(|d, ctx| merge(d, ctx, ids[0], ids[50]));
        fx.run(|d, ctx| merge(d, ctx, ids[1150], ids[100]));
        for id in &ids[150..1_180] {
            fx.run(|d, ctx| delete(d, ctx, *id));
        }
        let cs = &fx.data.contacts;
        assert_eq!(cs.len(), 1_200 - 2 - 1_030);
        assert!(
            cs.table.below(ContactId(u64::MAX)) < 1_000,
            "the deleted contacts' slots were dropped"
        );
        let probes = [
            "name3", "name", "555", "0042", "p7", "h1199", "note", "lamps", "x",
        ];
        let reloaded = WorkspaceData::load(&fx.store, &fx.ws).unwrap();
        assert_eq!(answers(cs, &probes), answers(&reloaded.contacts, &probes));
        let words = |q: &str| tokenize(q).collect::<Vec<_>>();
        let survivor = cs.packed(ids[1_199]).unwrap();
        assert!(cs.matches(survivor, &words("name2 1199 h1199 p1199")));
        let merged = cs.packed(ids[0]).unwrap();
        assert!(
            cs.matches(merged, &words("note50 lamps")),
            "moved notes are searched"
        );
        assert_eq!(
            cs.oldest(&LookupKey::Handle(Channel::ChanA, "h1199".into())),
            Some(ids[1_199])
        );
        assert_eq!(cs.oldest(&LookupKey::Email("p500@x.io".into())), None);
        for id in ids
            .iter()
            .filter(|id| cs.contains(**id))
            .copied()
            .collect::<Vec<_>>()
        {
            fx.run(|d, ctx| delete(d, ctx, id));
        }
        let cs = &fx.data.contacts;
        assert!(cs.is_empty());
        assert!(cs.search.is_empty() && cs.lookups.len() == 0);
        assert_eq!(cs.tag_links.counts().count(), 0);
    }
}
