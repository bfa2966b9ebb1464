//! Contacts, their notes, and the indexes that make lookup, upsert and search fast:
//! phone, email and handle maps, tag membership, and the free-text index.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};

use super::search::{phone_tokens, tokenize, SearchIndex};
use super::tag_links::TagLinks;
use super::{answer, finish, record_prefix, Change, Ctx, Handled, Reply, WorkspaceData};
use crate::domain::contact::{
    custom_values, handle_key, phone_key, Channel, ChannelIdentity, Contact, ContactFields,
    ContactFilter, ContactView, Dnc, LookupQuery, NewContact, Note, StageRef,
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
mod query;
mod update;

pub(super) use create::for_inbound;
use create::{create, upsert};
use lifecycle::{delete, merge};
use query::{list, list_notes, lookup};
use update::{add_note, add_tags, assign, remove_tags, set_dnc, set_stage, update};
pub(super) use update::{capture_lead, drop_tag, reachable};

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

impl ContactMsg {
    pub fn kind(&self) -> &'static str {
        match self {
            ContactMsg::Create { .. } => "contact.create",
            ContactMsg::Get { .. } => "contact.get",
            ContactMsg::List { .. } => "contact.list",
            ContactMsg::Lookup { .. } => "contact.lookup",
            ContactMsg::Upsert { .. } => "contact.upsert",
            ContactMsg::Merge { .. } => "contact.merge",
            ContactMsg::Update { .. } => "contact.update",
            ContactMsg::Delete { .. } => "contact.delete",
            ContactMsg::Channels { .. } => "contact.channels",
            ContactMsg::AddTags { .. } => "contact.add_tags",
            ContactMsg::RemoveTags { .. } => "contact.remove_tags",
            ContactMsg::SetStage { .. } => "contact.set_stage",
            ContactMsg::Assign { .. } => "contact.assign",
            ContactMsg::ListNotes { .. } => "contact.list_notes",
            ContactMsg::AddNote { .. } => "contact.add_note",
            ContactMsg::SetDnc { .. } => "contact.set_dnc",
        }
    }
}

pub(super) const CONTACT: &str = "ct";
const NOTE: &str = "nt";
const REDIRECT: &str = "rd";

/// A merged-away contact id and the contact it now answers as.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Redirect {
    target: ContactId,
}

#[derive(Default)]
pub struct Contacts {
    by_id: BTreeMap<ContactId, Contact>,
    redirects: HashMap<ContactId, ContactId>,
    notes: HashMap<ContactId, BTreeMap<NoteId, Note>>,
    /// Tag -> contacts; the tag handlers read it too.
    pub(in crate::workspace) tag_links: TagLinks,
    by_phone: HashMap<String, BTreeSet<ContactId>>,
    by_email: HashMap<String, BTreeSet<ContactId>>,
    by_handle: HashMap<(Channel, String), BTreeSet<ContactId>>,
    search: SearchIndex,
}

fn add(map: &mut HashMap<String, BTreeSet<ContactId>>, key: String, id: ContactId) {
    if !key.is_empty() {
        map.entry(key).or_default().insert(id);
    }
}

fn drop_from<K: std::hash::Hash + Eq>(
    map: &mut HashMap<K, BTreeSet<ContactId>>,
    key: &K,
    id: ContactId,
) {
    if let Some(ids) = map.get_mut(key) {
        ids.remove(&id);
        if ids.is_empty() {
            map.remove(key);
        }
    }
}

/// The (channel, handle) pairs a contact can be looked up by.
fn handles(c: &Contact) -> Vec<(Channel, String)> {
    let mut out = Vec::new();
    for (channel, value) in [
        (Channel::ChanA, &c.chan_a_username),
        (Channel::ChanC, &c.chan_c_username),
        (Channel::ChanE, &c.chan_e_username),
    ] {
        if let Some(v) = value {
            out.push((channel, handle_key(v)));
        }
    }
    if let Some(p) = &c.chan_d_phone {
        out.push((Channel::ChanD, phone_key(p)));
    }
    out
}

fn phones(c: &Contact) -> impl Iterator<Item = String> + '_ {
    [&c.phone, &c.chan_d_phone]
        .into_iter()
        .flatten()
        .map(|p| phone_key(p))
}

impl Contacts {
    pub fn load(store: &Store, ws: &WorkspaceId) -> Result<Self, DomainError> {
        let mut contacts = Self::default();
        for (_, c) in store.scan::<Contact>(&record_prefix(ws, CONTACT))? {
            contacts.by_id.insert(c.id, c);
        }
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
        let ids: Vec<ContactId> = contacts.by_id.keys().copied().collect();
        for id in ids {
            contacts.index(id);
        }
        Ok(contacts)
    }

    pub fn len(&self) -> usize {
        self.by_id.len()
    }

    pub fn is_empty(&self) -> bool {
        self.by_id.is_empty()
    }

    /// The live contact an id names, following merge redirects.
    pub fn resolve(&self, id: ContactId) -> Option<ContactId> {
        if self.by_id.contains_key(&id) {
            return Some(id);
        }
        self.redirects
            .get(&id)
            .filter(|t| self.by_id.contains_key(t))
            .copied()
    }

    /// The live contact a path id names, or 404.
    fn live(&self, id: ContactId) -> Result<ContactId, DomainError> {
        self.resolve(id).ok_or(DomainError::NotFound("contact"))
    }

    pub fn get(&self, id: ContactId) -> Option<&Contact> {
        self.resolve(id).and_then(|id| self.by_id.get(&id))
    }

    /// Every live contact, oldest first.
    pub fn all(&self) -> impl Iterator<Item = &Contact> {
        self.by_id.values()
    }

    /// Stored references that name nothing: merge redirects to a missing contact, notes of
    /// a missing contact (for the offline check).
    pub fn dangling(&self) -> Vec<String> {
        let mut out = Vec::new();
        for (from, to) in &self.redirects {
            if !self.by_id.contains_key(to) {
                out.push(format!("redirect {from} -> missing contact {to}"));
            }
        }
        for contact in self.notes.keys() {
            if !self.by_id.contains_key(contact) {
                out.push(format!("notes of missing contact {contact}"));
            }
        }
        out
    }

    fn index(&mut self, id: ContactId) {
        let Some(c) = self.by_id.get(&id) else { return };
        let phones: Vec<String> = phones(c).collect();
        let email = c.email.clone();
        let hs = handles(c);
        let tags = c.tag_ids.clone();
        let tokens = self.tokens_of(c);
        for p in phones {
            add(&mut self.by_phone, p, id);
        }
        if let Some(e) = email {
            add(&mut self.by_email, e, id);
        }
        for h in hs {
            if !h.1.is_empty() {
                self.by_handle.entry(h).or_default().insert(id);
            }
        }
        self.tag_links.link(id, &tags);
        self.search.set(id, tokens);
    }

    fn unindex(&mut self, id: ContactId) {
        let Some(c) = self.by_id.get(&id) else { return };
        let phones: Vec<String> = phones(c).collect();
        let email = c.email.clone();
        let hs = handles(c);
        let tags = c.tag_ids.clone();
        for p in phones {
            drop_from(&mut self.by_phone, &p, id);
        }
        if let Some(e) = email {
            drop_from(&mut self.by_email, &e, id);
        }
        for h in hs {
            drop_from(&mut self.by_handle, &h, id);
        }
        self.tag_links.unlink(id, &tags);
        self.search.remove(id);
    }

    /// The searchable text of a contact: names, email, phones, usernames, notes.
    fn tokens_of(&self, c: &Contact) -> Vec<String> {
        let mut out = Vec::new();
        for text in [
            &c.first_name,
            &c.last_name,
            &c.email,
            &c.chan_a_username,
            &c.chan_c_username,
            &c.chan_e_username,
        ]
        .into_iter()
        .flatten()
        {
            out.extend(tokenize(text));
        }
        for p in [&c.phone, &c.chan_d_phone].into_iter().flatten() {
            out.extend(phone_tokens(p));
        }
        if let Some(notes) = self.notes.get(&c.id) {
            for n in notes.values() {
                out.extend(tokenize(&n.body));
            }
        }
        out
    }

    /// Stores a new or changed contact in memory and in the batch, keeping indexes right.
    fn put(&mut self, ctx: &Ctx, c: Contact, writes: &mut Batch) -> Result<(), DomainError> {
        writes.put(ctx.key(CONTACT, c.id), &c)?;
        let id = c.id;
        self.unindex(id);
        self.by_id.insert(id, c);
        self.index(id);
        Ok(())
    }

    fn oldest(ids: Option<&BTreeSet<ContactId>>) -> Option<ContactId> {
        ids.and_then(|s| s.iter().next().copied())
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
                .map(Contact::channels)
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
    let stage = c.stage_id.and_then(|sid| {
        data.funnels.stage(sid).map(|(f, s)| StageRef {
            funnel_id: f.id,
            stage_id: s.id,
            stage_name: s.name.clone(),
        })
    });
    ContactView {
        id: c.id,
        name: c.name(),
        first_name: c.first_name.clone(),
        last_name: c.last_name.clone(),
        phone: c.phone.clone(),
        chan_d_phone: c.chan_d_phone.clone(),
        email: c.email.clone(),
        chan_a_username: c.chan_a_username.clone(),
        chan_c_username: c.chan_c_username.clone(),
        chan_e_username: c.chan_e_username.clone(),
        country_code: c.country_code.clone(),
        channel: c.channel,
        source: c.source.clone(),
        tags: c
            .tag_ids
            .iter()
            .filter_map(|t| data.tags.get(*t).map(|t| t.name.as_str().to_string()))
            .collect(),
        stage,
        assigned_to_user_id: c.assigned_to_user_id.clone(),
        language: c.language.clone(),
        custom_fields: c
            .custom_fields
            .iter()
            .map(|(k, v)| (k.clone(), v.to_json()))
            .collect(),
        do_not_contact: c.do_not_contact,
        do_not_contact_reason: c.do_not_contact_reason.clone(),
        created_at: c.created_at,
        updated_at: c.updated_at,
    }
}

fn view_of(data: &WorkspaceData, id: ContactId) -> Result<ContactView, DomainError> {
    data.contacts
        .get(id)
        .map(|c| view(data, c))
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
    DomainEvent::new(kind, "contact", c.id, c)
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
    let before_record = data.contacts.by_id[&id].clone();
    let before = view(data, &before_record);
    let mut c = before_record.clone();
    let mut writes = Batch::default();
    let mut events = Vec::new();
    edit(data, &mut c, &mut writes, &mut events)?;
    if c == before_record {
        return Ok(Change {
            value: before,
            writes,
            events,
        });
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
    Ok(Change {
        value: after,
        writes,
        events,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::contact::ContactInput;

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
                pace_soon: Default::default(),
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
        let (_, e) = fx.run(|d, ctx| set_dnc(d, ctx, a.id, dnc));
        assert_eq!(types(&e), ["contact.opted_out"]);
        let (_, e) = fx.run(|d, ctx| add_note(d, ctx, b.id, "called".into()));
        assert_eq!(types(&e), ["note.created"]);
        let (merged, e) = fx.run(|d, ctx| merge(d, ctx, a.id, b.id));
        assert_eq!(types(&e), ["contact.merged"]);
        assert_eq!(merged.email.as_deref(), Some("b@x.io"));
        let (_, e) = fx.run(|d, ctx| delete(d, ctx, b.id));
        assert_eq!(types(&e), ["contact.deleted"]);
        assert_eq!(
            e[0].resource_id,
            a.id.to_string(),
            "the redirect resolves to the primary"
        );
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
            assert!(data.contacts.search.matches(c.id, &words("zed morn 0199")));
            assert_eq!(
                Contacts::oldest(data.contacts.by_phone.get("15550199")),
                Some(c.id)
            );
        }
    }
}
