//! Forms and their submissions: a submission upserts its contact (matched by phone, then
//! email), fills a phone or email the contact lacks, and announces form.submitted and
//! contact.lead_captured.

use std::collections::BTreeMap;

use serde_json::json;

use super::records::{record, Records};
use super::{answer, finish, load_records, Change, Ctx, Handled, Reply, WorkspaceData};
use crate::domain::contact::{Channel, ContactInput, NewContact};
use crate::domain::form::{Form, FormChange, Submission, Submitter};
use crate::domain::page::{Page, PageRequest};
use crate::domain::DomainError;
use crate::events::{DomainEvent, Origin};
use crate::ids::{FormId, SubmissionId, WorkspaceId};
use crate::store::{Batch, Store};

/// A submission as the edge has checked it; its values are checked against the form here.
pub struct NewSubmission {
    pub submitter: Submitter,
    pub values: serde_json::Map<String, serde_json::Value>,
}

#[derive(strum::IntoStaticStr)]
#[strum(prefix = "form.", serialize_all = "snake_case")]
pub enum FormMsg {
    List {
        page: PageRequest,
        reply: Reply<Page<Form>>,
    },
    Get {
        id: FormId,
        reply: Reply<Form>,
    },
    Create {
        origin: Origin,
        change: FormChange,
        reply: Reply<Form>,
    },
    Update {
        origin: Origin,
        id: FormId,
        change: FormChange,
        reply: Reply<Form>,
    },
    Delete {
        origin: Origin,
        id: FormId,
        reply: Reply<FormId>,
    },
    Submit {
        origin: Origin,
        id: FormId,
        submission: Box<NewSubmission>,
        reply: Reply<Submission>,
    },
    Submissions {
        id: FormId,
        page: PageRequest,
        reply: Reply<Page<Submission>>,
    },
}

const KIND: &str = "fm";
const SUBMISSION: &str = "fms";

record!(Form, FormId, KIND, "form");

#[derive(Default)]
pub struct Forms {
    by_id: Records<Form>,
    submissions: BTreeMap<SubmissionId, Submission>,
}

impl Forms {
    pub fn load(store: &Store, ws: &WorkspaceId) -> Result<Self, DomainError> {
        Ok(Self {
            by_id: Records::load(store, ws)?,
            submissions: load_records(store, ws, SUBMISSION, |s: &Submission| s.id)?,
        })
    }
}

pub(super) fn handle(msg: FormMsg, data: &mut WorkspaceData, ctx: &Ctx) -> Handled {
    match msg {
        FormMsg::List { page, reply } => {
            answer(reply, Ok(page.select(&data.forms.by_id, |_| true)))
        }
        FormMsg::Get { id, reply } => answer(reply, data.forms.by_id.find(id).cloned()),
        FormMsg::Create {
            origin,
            change,
            reply,
        } => finish(reply, origin, create(data, ctx, change)),
        FormMsg::Update {
            origin,
            id,
            change,
            reply,
        } => finish(reply, origin, update(data, ctx, id, change)),
        FormMsg::Delete { origin, id, reply } => finish(reply, origin, delete(data, ctx, id)),
        FormMsg::Submit {
            origin,
            id,
            submission,
            reply,
        } => finish(reply, origin, submit(data, ctx, id, *submission)),
        FormMsg::Submissions { id, page, reply } => {
            let found = data
                .forms
                .by_id
                .find(id)
                .map(|_| page.select(&data.forms.submissions, |s| s.form_id == id));
            answer(reply, found)
        }
    }
}

fn create(
    data: &mut WorkspaceData,
    ctx: &Ctx,
    change: FormChange,
) -> Result<Change<Form>, DomainError> {
    let (Some(name), Some(fields)) = (change.name, change.fields) else {
        return Err(DomainError::Internal(
            "a form created without name or fields".into(),
        ));
    };
    let f = Form {
        id: ctx.next_id()?,
        name,
        fields,
        created_at: ctx.now,
        updated_at: ctx.now,
    };
    let mut writes = Batch::default();
    writes.put(ctx.key(KIND, f.id), &f)?;
    data.forms.by_id.insert(f.id, f.clone());
    Ok(Change::new(f, writes, Vec::new()))
}

fn update(
    data: &mut WorkspaceData,
    ctx: &Ctx,
    id: FormId,
    change: FormChange,
) -> Result<Change<Form>, DomainError> {
    let mut f = data.forms.by_id.find(id)?.clone();
    if let Some(n) = change.name {
        f.name = n;
    }
    if let Some(fields) = change.fields {
        f.fields = fields;
    }
    f.updated_at = ctx.now;
    let mut writes = Batch::default();
    writes.put(ctx.key(KIND, f.id), &f)?;
    data.forms.by_id.insert(f.id, f.clone());
    Ok(Change::new(f, writes, Vec::new()))
}

/// Deletes the form; its submissions stay (they record what was submitted).
fn delete(data: &mut WorkspaceData, ctx: &Ctx, id: FormId) -> Result<Change<FormId>, DomainError> {
    data.forms.by_id.find(id)?;
    let mut writes = Batch::default();
    writes.delete(ctx.key(KIND, id));
    data.forms.by_id.remove(&id);
    Ok(Change::new(id, writes, Vec::new()))
}

fn submit(
    data: &mut WorkspaceData,
    ctx: &Ctx,
    id: FormId,
    new: NewSubmission,
) -> Result<Change<Submission>, DomainError> {
    let form = data.forms.by_id.find(id)?.clone();
    let values = form.check_values(new.values)?;
    let who = new.submitter;
    let person = NewContact::parse(ContactInput {
        first_name: who.first_name.clone(),
        last_name: who.last_name.clone(),
        phone: who.phone.clone(),
        email: who.email.clone(),
        source: Some("form".into()),
        ..ContactInput::default()
    })?;
    let found = super::contacts::for_inbound(data, ctx, person, Channel::Widget)?;
    let (mut writes, mut events) = (found.writes, found.events);
    let summary = format!("Form {} submitted", form.name);
    let lead =
        super::contacts::capture_lead(data, ctx, found.value, who.email, who.phone, &summary)?;
    writes.extend(lead.writes);
    events.extend(lead.events);
    let s = Submission {
        id: ctx.next_id()?,
        form_id: id,
        contact_id: found.value,
        values,
        created_at: ctx.now,
    };
    writes.put(ctx.key(SUBMISSION, s.id), &s)?;
    data.forms.submissions.insert(s.id, s.clone());
    // The submission as GET answers it, plus `fields` (the values) and the form's name.
    let mut announced = json!(s);
    announced["fields"] = json!(s.values);
    announced["form_name"] = json!(form.name);
    // The submission goes first: the lead it captured follows from it.
    let lead_at = events
        .iter()
        .position(|e| e.event_type == "contact.lead_captured")
        .unwrap_or(events.len());
    events.insert(
        lead_at,
        DomainEvent::record("form.submitted", "form_submission", s.id, announced),
    );
    Ok(Change::new(s, writes, events))
}
