//! Bookings and their appointment reminders. An upcoming booking keeps one durable timer
//! per lead time of the AI settings (`booking/<id>/<lead seconds>`); each sends its
//! reminder once, and a change of time, status or lead times moves the timers with it.

use chrono::{DateTime, Utc};
use serde_json::{json, Value};

use super::records::{record, Records};
use super::{answer, finish, Change, Ctx, Handled, Reply, WorkspaceData};
use crate::clock::Timestamp;
use crate::domain::ai_settings::Span;
use crate::domain::booking::{
    reminder_text, Booking, BookingChange, BookingStatus, BookingView, NewBooking, MAX_DOCUMENTS,
};
use crate::domain::document::{Document, NewDocument};
use crate::domain::page::{Page, PageRequest};
use crate::domain::DomainError;
use crate::events::{field_changes, DomainEvent, Origin};
use crate::ids::{BookingId, ContactId, ConversationId};
use crate::schedule::Timer;
use crate::store::Batch;

/// The filters of GET /bookings; the time bounds are inclusive.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct BookingFilter {
    pub contact_id: Option<ContactId>,
    pub status: Option<BookingStatus>,
    pub starts_after: Option<DateTime<Utc>>,
    pub starts_before: Option<DateTime<Utc>>,
}

#[derive(strum::IntoStaticStr)]
#[strum(prefix = "booking.", serialize_all = "snake_case")]
pub enum BookingMsg {
    List {
        filter: BookingFilter,
        page: PageRequest,
        reply: Reply<Page<BookingView>>,
    },
    Get {
        id: BookingId,
        reply: Reply<BookingView>,
    },
    Create {
        origin: Origin,
        new: NewBooking,
        reply: Reply<BookingView>,
    },
    Update {
        origin: Origin,
        id: BookingId,
        change: BookingChange,
        reply: Reply<BookingView>,
    },
    SetStatus {
        origin: Origin,
        id: BookingId,
        status: BookingStatus,
        /// Kept as `cancel_reason` when the status is `cancelled`.
        reason: Option<String>,
        reply: Reply<BookingView>,
    },
    Cancel {
        origin: Origin,
        id: BookingId,
        reason: Option<String>,
        reply: Reply<BookingView>,
    },
    AddDocuments {
        origin: Origin,
        id: BookingId,
        documents: Vec<NewDocument>,
        reply: Reply<BookingView>,
    },
}

const KIND: &str = "bk";
const TIMER: &str = "booking/";

record!(Booking, BookingId, KIND, "booking");

pub type Bookings = Records<Booking>;

pub(super) fn handle(msg: BookingMsg, data: &mut WorkspaceData, ctx: &Ctx) -> Handled {
    match msg {
        BookingMsg::List {
            filter,
            page,
            reply,
        } => {
            let contact = filter.contact_id.map(|c| data.contacts.current(c));
            let found = page.select(&data.bookings, |b| {
                contact.is_none_or(|c| b.contact_id == c)
                    && filter.status.is_none_or(|s| b.status == s)
                    && filter.starts_after.is_none_or(|t| *b.starts_at >= t)
                    && filter.starts_before.is_none_or(|t| *b.starts_at <= t)
            });
            let items = found.items.iter().map(|b| view(data, b)).collect();
            answer(
                reply,
                Ok(Page {
                    items,
                    has_more: found.has_more,
                }),
            )
        }
        BookingMsg::Get { id, reply } => {
            answer(reply, data.bookings.find(id).map(|b| view(data, b)))
        }
        BookingMsg::Create { origin, new, reply } => finish(reply, origin, create(data, ctx, new)),
        BookingMsg::Update {
            origin,
            id,
            change,
            reply,
        } => finish(reply, origin, update(data, ctx, id, change)),
        BookingMsg::SetStatus {
            origin,
            id,
            status,
            reason,
            reply,
        } => finish(reply, origin, set_status(data, ctx, id, status, reason)),
        BookingMsg::Cancel {
            origin,
            id,
            reason,
            reply,
        } => finish(reply, origin, cancel(data, ctx, id, reason)),
        BookingMsg::AddDocuments {
            origin,
            id,
            documents,
            reply,
        } => finish(reply, origin, add_documents(data, ctx, id, documents)),
    }
}

fn view(data: &WorkspaceData, b: &Booking) -> BookingView {
    let contact = data.contacts.get(b.contact_id);
    b.view(
        contact.as_ref().and_then(|c| c.name()),
        contact.and_then(|c| c.phone.clone()),
    )
}

fn event(kind: &'static str, v: &BookingView) -> DomainEvent {
    DomainEvent::record(kind, "booking", v.id, v)
}

fn refuse_cancelled(b: &Booking) -> Result<(), DomainError> {
    if b.status == BookingStatus::Cancelled {
        return Err(DomainError::conflict("the booking is cancelled"));
    }
    Ok(())
}

/// The conversation a booking names must be one of its contact's.
fn check_conversation(
    data: &WorkspaceData,
    contact: ContactId,
    conversation: Option<ConversationId>,
) -> Result<(), DomainError> {
    let Some(id) = conversation else {
        return Ok(());
    };
    let c = data
        .conversations
        .get(id)
        .ok_or_else(|| DomainError::missing("conversation_id", "conversation"))?;
    if data.contacts.current(c.contact_id) != contact {
        return Err(DomainError::invalid(
            "conversation_id",
            "must be a conversation of the booking's contact",
        ));
    }
    Ok(())
}

fn create(
    data: &mut WorkspaceData,
    ctx: &Ctx,
    new: NewBooking,
) -> Result<Change<BookingView>, DomainError> {
    let contact_id = data.contacts.named(new.contact_id)?;
    check_conversation(data, contact_id, new.conversation_id)?;
    let b = Booking {
        id: ctx.next_id()?,
        contact_id,
        conversation_id: new.conversation_id,
        service: new.service,
        starts_at: Timestamp(new.starts_at),
        duration_minutes: new.duration_minutes,
        location: new.location,
        notes: new.notes,
        status: new.status,
        documents: Vec::new(),
        conversation_summary: new.conversation_summary,
        cancel_reason: None,
        reminded: Vec::new(),
        created_at: ctx.now,
        updated_at: ctx.now,
    };
    let mut writes = Batch::default();
    let leads = data.ai_settings.appointment_reminders.clone();
    arm(ctx, &b, &leads, &mut writes)?;
    let v = view(data, &b);
    data.bookings.put(ctx, b, &mut writes)?;
    let events = vec![event("booking.created", &v)];
    Ok(Change::new(v, writes, events))
}

fn update(
    data: &mut WorkspaceData,
    ctx: &Ctx,
    id: BookingId,
    change: BookingChange,
) -> Result<Change<BookingView>, DomainError> {
    let before = data.bookings.find(id)?.clone();
    refuse_cancelled(&before)?;
    let mut b = before.clone();
    // Checked only when named: a booking whose contact was deleted stays editable.
    if !change.conversation_id.is_keep() {
        b.conversation_id = change.conversation_id.apply_to(b.conversation_id);
        check_conversation(data, b.contact_id, b.conversation_id)?;
    }
    if let Some(s) = change.service {
        b.service = s;
    }
    if let Some(t) = change.starts_at {
        b.starts_at = Timestamp(t);
    }
    if let Some(m) = change.duration_minutes {
        b.duration_minutes = m;
    }
    b.location = change.location.apply_to(b.location.take());
    b.notes = change.notes.apply_to(b.notes.take());
    b.conversation_summary = change
        .conversation_summary
        .apply_to(b.conversation_summary.take());
    let rescheduled = b.starts_at != before.starts_at;
    if rescheduled {
        // The reminders are for the new time: each goes out again.
        b.reminded.clear();
    }
    if b == before {
        return Ok(Change::new(
            view(data, &before),
            Batch::default(),
            Vec::new(),
        ));
    }
    b.updated_at = ctx.now;
    commit(data, ctx, &before, b, |old, new, events| {
        if rescheduled {
            let mut e = event("booking.rescheduled", new);
            e.data["previous_starts_at"] = json!(old.starts_at);
            events.push(e);
        }
        let mut changes = field_changes(old, new);
        changes.remove("starts_at");
        if !changes.is_empty() {
            events.push(event("booking.updated", new).with_changes(changes));
        }
    })
}

fn set_status(
    data: &mut WorkspaceData,
    ctx: &Ctx,
    id: BookingId,
    status: BookingStatus,
    reason: Option<String>,
) -> Result<Change<BookingView>, DomainError> {
    if status == BookingStatus::Cancelled {
        return cancel(data, ctx, id, reason);
    }
    let before = data.bookings.find(id)?.clone();
    refuse_cancelled(&before)?;
    if before.status == status {
        return Ok(Change::new(
            view(data, &before),
            Batch::default(),
            Vec::new(),
        ));
    }
    let mut b = before.clone();
    b.status = status;
    b.updated_at = ctx.now;
    commit(data, ctx, &before, b, |old, new, events| {
        let mut e = event("booking.status_changed", new);
        e.data["previous_status"] = json!(old.status);
        events.push(e);
    })
}

fn cancel(
    data: &mut WorkspaceData,
    ctx: &Ctx,
    id: BookingId,
    reason: Option<String>,
) -> Result<Change<BookingView>, DomainError> {
    let before = data.bookings.find(id)?.clone();
    refuse_cancelled(&before)?;
    let mut b = before.clone();
    b.status = BookingStatus::Cancelled;
    b.cancel_reason = reason;
    b.updated_at = ctx.now;
    commit(data, ctx, &before, b, |_, new, events| {
        events.push(event("booking.cancelled", new));
    })
}

fn add_documents(
    data: &mut WorkspaceData,
    ctx: &Ctx,
    id: BookingId,
    documents: Vec<NewDocument>,
) -> Result<Change<BookingView>, DomainError> {
    let before = data.bookings.find(id)?.clone();
    refuse_cancelled(&before)?;
    let mut b = before.clone();
    let mut added = Vec::new();
    for d in documents {
        let known = b
            .documents
            .iter()
            .chain(added.iter())
            .any(|k: &Document| k.url == d.url);
        if known {
            continue;
        }
        added.push(Document {
            id: ctx.next_id()?,
            url: d.url,
            name: d.name,
            content_type: d.content_type,
            added_at: ctx.now,
        });
    }
    if added.is_empty() {
        return Ok(Change::new(
            view(data, &before),
            Batch::default(),
            Vec::new(),
        ));
    }
    if b.documents.len() + added.len() > MAX_DOCUMENTS {
        return Err(DomainError::LimitReached(format!(
            "a booking holds at most {MAX_DOCUMENTS} documents"
        )));
    }
    b.documents.extend(added.iter().cloned());
    b.updated_at = ctx.now;
    commit(data, ctx, &before, b, |_, new, events| {
        let mut only_new = new.clone();
        only_new.documents = added;
        events.push(event("booking.documents.added", &only_new));
    })
}

/// Stores `b` (which was `before`), moves its reminder timers, and announces what
/// `announce` makes of the views before and after.
fn commit(
    data: &mut WorkspaceData,
    ctx: &Ctx,
    before: &Booking,
    b: Booking,
    announce: impl FnOnce(&BookingView, &BookingView, &mut Vec<DomainEvent>),
) -> Result<Change<BookingView>, DomainError> {
    let mut writes = Batch::default();
    let leads = data.ai_settings.appointment_reminders.clone();
    disarm(ctx, before, &leads, &mut writes);
    arm(ctx, &b, &leads, &mut writes)?;
    let (old, new) = (view(data, before), view(data, &b));
    data.bookings.put(ctx, b, &mut writes)?;
    let mut events = Vec::new();
    announce(&old, &new, &mut events);
    Ok(Change::new(new, writes, events))
}

fn timer(ctx: &Ctx, b: &Booking, lead: Span) -> Timer {
    Timer::new(
        ctx.workspace,
        format!("{TIMER}{}/{}", b.id, lead.duration().as_secs()),
        *b.starts_at - lead.chrono(),
    )
}

/// Arms the reminders still ahead of an upcoming booking: a lead time already past (or
/// whose reminder went out) is skipped.
fn arm(ctx: &Ctx, b: &Booking, leads: &[Span], writes: &mut Batch) -> Result<(), DomainError> {
    if !b.status.upcoming() {
        return Ok(());
    }
    for lead in leads {
        let t = timer(ctx, b, *lead);
        if t.due_at > *ctx.now && !b.reminded.contains(lead) {
            t.arm(writes)?;
        }
    }
    Ok(())
}

fn disarm(ctx: &Ctx, b: &Booking, leads: &[Span], writes: &mut Batch) {
    for lead in leads {
        timer(ctx, b, *lead).disarm(writes);
    }
}

/// The lead times changed from `old`: every upcoming booking's timers follow.
pub(super) fn rearm_all(
    data: &WorkspaceData,
    ctx: &Ctx,
    old: &[Span],
    writes: &mut Batch,
) -> Result<(), DomainError> {
    let leads = &data.ai_settings.appointment_reminders;
    for b in data.bookings.values() {
        if b.status.upcoming() && b.starts_at > *ctx.now {
            disarm(ctx, b, old, writes);
            arm(ctx, b, leads, writes)?;
        }
    }
    Ok(())
}

/// An appointment reminder is due: it goes to the contact once, as an automatic message.
/// None when the timer is not a booking's.
pub(super) fn timer_due(
    data: &mut WorkspaceData,
    ctx: &Ctx,
    t: &Timer,
) -> Option<Result<Change<()>, DomainError>> {
    let (id, secs) = t.name.strip_prefix(TIMER)?.split_once('/')?;
    let id = BookingId(id.parse().ok()?);
    let secs: u64 = secs.parse().ok()?;
    let lead = *data
        .ai_settings
        .appointment_reminders
        .iter()
        .find(|l| l.duration().as_secs() == secs)?;
    let b = data.bookings.get(&id)?.clone();
    let expected = b.status.upcoming()
        && !b.reminded.contains(&lead)
        && timer(ctx, &b, lead).due_at == t.due_at;
    if !expected || data.contacts.get(b.contact_id).is_none() {
        return None;
    }
    Some(remind(data, ctx, t, b, lead))
}

fn remind(
    data: &mut WorkspaceData,
    ctx: &Ctx,
    t: &Timer,
    mut b: Booking,
    lead: Span,
) -> Result<Change<()>, DomainError> {
    let sent = super::conversations::automation_message(
        data,
        ctx,
        b.contact_id,
        reminder_text(&b.service, *b.starts_at),
    )?;
    let mut writes = sent.writes;
    let mut events = sent.events;
    t.disarm(&mut writes);
    b.reminded.push(lead);
    // Announced as sent once it is sent or on its way to the channel; a reminder that
    // failed at once (no connection for the channel) has message.send_failed alone.
    if sent.value.status != crate::domain::message::MessageStatus::Failed {
        let data_json: Value = json!({
            "booking_id": b.id,
            "lead": lead,
            "message_id": sent.value.id,
            "starts_at": b.starts_at,
        });
        events.push(DomainEvent::new(
            "appointment_reminder.sent",
            "booking",
            b.id,
            data_json,
        ));
    }
    data.bookings.put(ctx, b, &mut writes)?;
    Ok(Change::new((), writes, events))
}
