//! Reminders for the team: each open one has a durable timer at its due time; when it
//! fires, its assignees get a notification in the same batch.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};

use super::records::{record, Records};
use super::{answer, finish, load_records, Change, Ctx, Handled, Reply, WorkspaceData};
use crate::clock::Timestamp;
use crate::domain::page::{Page, PageRequest};
use crate::domain::reminder::{
    NewReminder, NotificationKind, NotificationView, Reminder, ReminderChange,
    ReminderNotification, ReminderStatus,
};
use crate::domain::{DomainError, Patch};
use crate::events::{DomainEvent, Origin};
use crate::ids::{ContactId, ConversationId, NotificationId, ReminderId, UserId, WorkspaceId};
use crate::schedule::Timer;
use crate::store::{Batch, Store};

/// The filters of GET /reminders.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ReminderFilter {
    pub status: Option<ReminderStatus>,
    pub assignee: Option<UserId>,
    pub contact_id: Option<ContactId>,
}

#[derive(strum::IntoStaticStr)]
#[strum(prefix = "reminder.", serialize_all = "snake_case")]
pub enum ReminderMsg {
    List {
        filter: ReminderFilter,
        page: PageRequest,
        reply: Reply<Page<Reminder>>,
    },
    Get {
        id: ReminderId,
        reply: Reply<Reminder>,
    },
    /// `new.assignees` is set and checked against the members by the edge.
    Create {
        origin: Origin,
        new: NewReminder,
        reply: Reply<Reminder>,
    },
    Update {
        origin: Origin,
        id: ReminderId,
        change: ReminderChange,
        reply: Reply<Reminder>,
    },
    Delete {
        origin: Origin,
        id: ReminderId,
        reply: Reply<ReminderId>,
    },
    Close {
        origin: Origin,
        id: ReminderId,
        reply: Reply<Reminder>,
    },
    /// `user`'s notifications; with `owner`, the workspace owner's too (endpoints the
    /// service disabled).
    Notifications {
        user: UserId,
        owner: bool,
        page: PageRequest,
        reply: Reply<Page<NotificationView>>,
    },
}

const KIND: &str = "rm";
const NOTIFICATION: &str = "rmn";
const TIMER: &str = "reminder/";

record!(Reminder, ReminderId, KIND, "reminder");

#[derive(Default)]
pub struct Reminders {
    pub(super) by_id: Records<Reminder>,
    notifications: BTreeMap<NotificationId, ReminderNotification>,
}

impl Reminders {
    pub fn load(store: &Store, ws: &WorkspaceId) -> Result<Self, DomainError> {
        Ok(Self {
            by_id: Records::load(store, ws)?,
            notifications: load_records(store, ws, NOTIFICATION, |n: &ReminderNotification| n.id)?,
        })
    }
}

fn timer(ctx: &Ctx, r: &Reminder) -> Timer {
    Timer::new(ctx.workspace, format!("{TIMER}{}", r.id), *r.due_at)
}

fn event(kind: &'static str, r: &Reminder) -> DomainEvent {
    DomainEvent::record(kind, "reminder", r.id, r)
}

pub(super) fn handle(msg: ReminderMsg, data: &mut WorkspaceData, ctx: &Ctx) -> Handled {
    match msg {
        ReminderMsg::List {
            filter,
            page,
            reply,
        } => {
            let contact = filter.contact_id.map(|c| data.contacts.current(c));
            let found = page.select(&data.reminders.by_id, |r| {
                filter.status.is_none_or(|s| r.status == s)
                    && filter
                        .assignee
                        .as_ref()
                        .is_none_or(|u| r.assignee_user_ids.contains(u))
                    && contact.is_none_or(|c| r.contact_id == Some(c))
            });
            answer(reply, Ok(found))
        }
        ReminderMsg::Get { id, reply } => answer(reply, data.reminders.by_id.find(id).cloned()),
        ReminderMsg::Create { origin, new, reply } => finish(reply, origin, create(data, ctx, new)),
        ReminderMsg::Update {
            origin,
            id,
            change,
            reply,
        } => finish(reply, origin, update(data, ctx, id, change)),
        ReminderMsg::Delete { origin, id, reply } => finish(reply, origin, delete(data, ctx, id)),
        ReminderMsg::Close { origin, id, reply } => finish(reply, origin, close(data, ctx, id)),
        ReminderMsg::Notifications {
            user,
            owner,
            page,
            reply,
        } => answer(reply, Ok(notifications(data, &user, owner, page))),
    }
}

/// A page of one person's notifications, newest first: the reminders that fired for them
/// and, for the owner, the endpoints the service disabled. Both take their ids from the
/// workspace's one sequence, so one cursor walks them together.
fn notifications(
    data: &WorkspaceData,
    user: &UserId,
    owner: bool,
    page: PageRequest,
) -> Page<NotificationView> {
    let reminders = page.select(&data.reminders.notifications, |n| n.user_id == *user);
    let mut items: Vec<NotificationView> = reminders.items.iter().map(|n| n.view()).collect();
    let mut has_more = reminders.has_more;
    if owner {
        let disabled = data.webhooks.owner_notifications(page);
        has_more |= disabled.has_more;
        items.extend(disabled.items.into_iter().map(|n| NotificationView {
            id: n.id,
            user_id: user.clone(),
            kind: NotificationKind::WebhookEndpointDisabled,
            reminder_id: None,
            endpoint_id: Some(n.endpoint_id),
            reason: Some(n.reason),
            created_at: n.created_at,
        }));
    }
    items.sort_by_key(|n| std::cmp::Reverse(n.id));
    has_more |= items.len() > page.limit;
    items.truncate(page.limit);
    Page { items, has_more }
}

/// The contact and conversation a reminder points at, checked: both in the workspace, the
/// conversation one of the contact's; a conversation alone names its contact.
fn subject(
    data: &WorkspaceData,
    contact: Option<ContactId>,
    conversation: Option<ConversationId>,
) -> Result<(Option<ContactId>, Option<ConversationId>), DomainError> {
    let contact = contact.map(|c| data.contacts.named(c)).transpose()?;
    let Some(conversation) = conversation else {
        return Ok((contact, None));
    };
    let conv = data
        .conversations
        .get(conversation)
        .ok_or_else(|| DomainError::missing("conversation_id", "conversation"))?;
    let owner = data.contacts.current(conv.contact_id);
    match contact {
        Some(c) if c != owner => Err(DomainError::invalid(
            "conversation_id",
            "must be a conversation of the contact given as contact_id",
        )),
        _ => Ok((Some(owner), Some(conversation))),
    }
}

fn create(
    data: &mut WorkspaceData,
    ctx: &Ctx,
    new: NewReminder,
) -> Result<Change<Reminder>, DomainError> {
    let (contact_id, conversation_id) = subject(data, new.contact_id, new.conversation_id)?;
    let r = Reminder {
        id: ctx.next_id()?,
        title: new.title,
        note: new.note,
        due_at: Timestamp(new.due_at),
        assignee_user_ids: new.assignees.unwrap_or_default(),
        contact_id,
        conversation_id,
        status: ReminderStatus::Open,
        created_at: ctx.now,
        fired_at: None,
        closed_at: None,
    };
    let mut writes = Batch::default();
    timer(ctx, &r).arm(&mut writes)?;
    data.reminders.by_id.put(ctx, r.clone(), &mut writes)?;
    let events = vec![event("reminder.created", &r)];
    Ok(Change::new(r, writes, events))
}

fn update(
    data: &mut WorkspaceData,
    ctx: &Ctx,
    id: ReminderId,
    change: ReminderChange,
) -> Result<Change<Reminder>, DomainError> {
    let before = data.reminders.by_id.find(id)?.clone();
    let mut r = before.clone();
    // The subject is checked only when the change names it: a reminder whose contact was
    // deleted keeps its ids and stays editable.
    if !(change.contact_id.is_keep() && change.conversation_id.is_keep()) {
        let contact = change.contact_id.clone().apply_to(r.contact_id);
        let conversation = match (&change.contact_id, &change.conversation_id) {
            // A new contact drops a conversation of the old one unless one is named too.
            (Patch::Set(_) | Patch::Clear, Patch::Keep) => r
                .conversation_id
                .filter(|c| subject(data, contact, Some(*c)).is_ok()),
            _ => change.conversation_id.apply_to(r.conversation_id),
        };
        (r.contact_id, r.conversation_id) = subject(data, contact, conversation)?;
    }
    if let Some(t) = change.title {
        r.title = t;
    }
    r.note = change.note.apply_to(r.note.take());
    if let Some(a) = change.assignees {
        r.assignee_user_ids = a;
    }
    let mut writes = Batch::default();
    if let Some(due) = change.due_at {
        rearm(ctx, &mut r, due, &mut writes)?;
    }
    if r == before {
        return Ok(Change::new(r, writes, Vec::new()));
    }
    data.reminders.by_id.put(ctx, r.clone(), &mut writes)?;
    Ok(Change::new(r, writes, Vec::new()))
}

/// A new due time: an open reminder's timer moves; a fired one is open again; a done one
/// keeps its state (it is not waiting for anything).
fn rearm(
    ctx: &Ctx,
    r: &mut Reminder,
    due: DateTime<Utc>,
    writes: &mut Batch,
) -> Result<(), DomainError> {
    if r.status == ReminderStatus::Open {
        timer(ctx, r).disarm(writes);
    }
    r.due_at = Timestamp(due);
    if r.status == ReminderStatus::Fired {
        r.status = ReminderStatus::Open;
        r.fired_at = None;
    }
    if r.status == ReminderStatus::Open {
        timer(ctx, r).arm(writes)?;
    }
    Ok(())
}

fn delete(
    data: &mut WorkspaceData,
    ctx: &Ctx,
    id: ReminderId,
) -> Result<Change<ReminderId>, DomainError> {
    let r = data.reminders.by_id.find(id)?.clone();
    let mut writes = Batch::default();
    if r.status == ReminderStatus::Open {
        timer(ctx, &r).disarm(&mut writes);
    }
    writes.delete(ctx.key(KIND, id));
    data.reminders.by_id.remove(&id);
    Ok(Change::new(id, writes, Vec::new()))
}

fn close(
    data: &mut WorkspaceData,
    ctx: &Ctx,
    id: ReminderId,
) -> Result<Change<Reminder>, DomainError> {
    let mut r = data.reminders.by_id.find(id)?.clone();
    let mut writes = Batch::default();
    match r.status {
        ReminderStatus::Done => {
            return Err(DomainError::conflict("the reminder is closed already"))
        }
        ReminderStatus::Open => timer(ctx, &r).disarm(&mut writes),
        ReminderStatus::Fired => {}
    }
    r.status = ReminderStatus::Done;
    r.closed_at = Some(ctx.now);
    data.reminders.by_id.put(ctx, r.clone(), &mut writes)?;
    let events = vec![event("reminder.closed", &r)];
    Ok(Change::new(r, writes, events))
}

/// A reminder's timer is due: it fires (once) and notifies its assignees. None when the
/// timer is not a reminder's.
pub(super) fn timer_due(
    data: &mut WorkspaceData,
    ctx: &Ctx,
    t: &Timer,
) -> Option<Result<Change<()>, DomainError>> {
    let id = ReminderId(t.name.strip_prefix(TIMER)?.parse().ok()?);
    let r = data.reminders.by_id.get(&id)?.clone();
    if r.status != ReminderStatus::Open || *r.due_at != t.due_at {
        return None;
    }
    Some(fire(data, ctx, t, r))
}

fn fire(
    data: &mut WorkspaceData,
    ctx: &Ctx,
    t: &Timer,
    mut r: Reminder,
) -> Result<Change<()>, DomainError> {
    let mut writes = Batch::default();
    t.disarm(&mut writes);
    r.status = ReminderStatus::Fired;
    r.fired_at = Some(ctx.now);
    for user in &r.assignee_user_ids {
        let n = ReminderNotification {
            id: ctx.next_id()?,
            user_id: user.clone(),
            kind: NotificationKind::ReminderFired,
            reminder_id: r.id,
            created_at: ctx.now,
        };
        writes.put(ctx.key(NOTIFICATION, n.id), &n)?;
        data.reminders.notifications.insert(n.id, n);
    }
    data.reminders.by_id.put(ctx, r.clone(), &mut writes)?;
    Ok(Change::new((), writes, vec![event("reminder.fired", &r)]))
}
