//! Calls from the telephony integration: each is recorded once, with its contact matched
//! by the customer's number (or created), and announced by one call.* event.

use super::records::{record, Records};
use super::{answer, finish, Change, Ctx, Handled, Reply, WorkspaceData};
use crate::domain::call::{Call, CallOutcome, NewCall};
use crate::domain::contact::{Channel, ContactInput, NewContact};
use crate::domain::page::{Page, PageRequest};
use crate::domain::DomainError;
use crate::events::{DomainEvent, Origin};
use crate::ids::{CallId, ContactId};
use crate::store::Batch;

/// The filters of GET /calls.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CallFilter {
    pub contact_id: Option<ContactId>,
    pub outcome: Option<CallOutcome>,
}

#[derive(strum::IntoStaticStr)]
#[strum(prefix = "call.", serialize_all = "snake_case")]
pub enum CallMsg {
    List {
        filter: CallFilter,
        page: PageRequest,
        reply: Reply<Page<Call>>,
    },
    Get {
        id: CallId,
        reply: Reply<Call>,
    },
    Record {
        origin: Origin,
        new: Box<NewCall>,
        reply: Reply<Call>,
    },
}

const KIND: &str = "cl";

record!(Call, CallId, KIND, "call");

pub type Calls = Records<Call>;

pub(super) fn handle(msg: CallMsg, data: &mut WorkspaceData, ctx: &Ctx) -> Handled {
    match msg {
        CallMsg::List {
            filter,
            page,
            reply,
        } => {
            let contact = filter.contact_id.map(|c| data.contacts.current(c));
            let found = page.select(&data.calls, |c| {
                contact.is_none_or(|k| c.contact_id == k)
                    && filter.outcome.is_none_or(|o| c.outcome == o)
            });
            answer(reply, Ok(found))
        }
        CallMsg::Get { id, reply } => answer(reply, data.calls.find(id).cloned()),
        CallMsg::Record { origin, new, reply } => finish(reply, origin, record(data, ctx, *new)),
    }
}

fn record(data: &mut WorkspaceData, ctx: &Ctx, new: NewCall) -> Result<Change<Call>, DomainError> {
    let mut call = Call {
        id: ctx.next_id()?,
        direction: new.direction,
        from_number: new.from_number,
        to_number: new.to_number,
        contact_id: ContactId(0),
        outcome: new.outcome,
        started_at: new.started_at.into(),
        duration_seconds: new.duration_seconds,
        summary: new.summary,
        transcript: new.transcript,
        transcript_text: new.transcript_text,
        recording_url: new.recording_url,
        created_at: ctx.now,
    };
    let (mut writes, mut events) = (Batch::default(), Vec::new());
    call.contact_id = match new.contact_id {
        Some(id) => data.contacts.named(id)?,
        None => {
            let caller = NewContact::parse(ContactInput {
                phone: Some(call.customer_number().to_string()),
                source: Some("call".into()),
                ..ContactInput::default()
            })?;
            let found = super::contacts::for_inbound(data, ctx, caller, Channel::Voice)?;
            writes = found.writes;
            events = found.events;
            found.value
        }
    };
    data.calls.put(ctx, call.clone(), &mut writes)?;
    events.push(DomainEvent::record(
        call.outcome.event_type(),
        "call",
        call.id,
        &call,
    ));
    Ok(Change::new(call, writes, events))
}
