//! Forms and their submissions: a submission upserts its contact (matched by phone, then
//! email), fills a phone or email the contact lacks, and announces form.submitted and
//! contact.lead_captured.

use std::collections::BTreeMap;

use serde_json::json;

use super::records::{record, Records};
use super::{answer, finish, load_upgrading, Change, Ctx, Handled, Reply, WorkspaceData};
use crate::domain::contact::{Channel, ContactInput, NewContact};
use crate::domain::form::{Form, FormChange, FormFieldType, Submission, SubmittedValue, Submitter};
use crate::domain::page::{Page, PageRequest};
use crate::domain::DomainError;
use crate::events::{DomainEvent, Origin};
use crate::ids::{FormId, SubmissionId, WorkspaceId};
use crate::store::{decode, Batch, Store};

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
        let by_id = Records::load(store, ws)?;
        let submissions = load_submissions(store, ws, &by_id)?;
        Ok(Self { by_id, submissions })
    }

    /// A merge: the submissions of contact `from` become `to`'s, each stored again.
    pub(super) fn reassign(
        &mut self,
        ctx: &Ctx,
        writes: &mut Batch,
        (from, to): (crate::ids::ContactId, crate::ids::ContactId),
    ) -> Result<(), DomainError> {
        for s in self.submissions.values_mut() {
            if s.contact_id == from {
                s.contact_id = to;
                writes.put(ctx.key(SUBMISSION, s.id), s)?;
            }
        }
        Ok(())
    }
}

/// A submission as earlier builds stored it: its values as free-form JSON, which bincode
/// writes but cannot read back as such. Every value was written as a text (numbers too,
/// as their JSON text), so it reads back in this shape.
#[derive(serde::Deserialize)]
struct SubmissionV1 {
    id: SubmissionId,
    form_id: FormId,
    contact_id: crate::ids::ContactId,
    values: BTreeMap<String, String>,
    created_at: crate::clock::Timestamp,
}

/// The workspace's submissions. One stored by an earlier build is read in its old shape,
/// its number fields' texts read as numbers again, and stored in the current shape; one
/// that cannot be read is left in the store untouched and logged, rather than keeping the
/// whole workspace from loading.
fn load_submissions(
    store: &Store,
    ws: &WorkspaceId,
    forms: &Records<Form>,
) -> Result<BTreeMap<SubmissionId, Submission>, DomainError> {
    let is_number = |form: FormId, key: &str| {
        forms.find(form).is_ok_and(|f| {
            f.fields
                .iter()
                .any(|field| field.key == key && field.kind == FormFieldType::Number)
        })
    };
    let loaded = load_upgrading(store, ws, SUBMISSION, |key, raw, upgrades| {
        match decode::<SubmissionV1>(raw) {
            Ok(old) => {
                let s = Submission {
                    id: old.id,
                    form_id: old.form_id,
                    contact_id: old.contact_id,
                    values: old
                        .values
                        .into_iter()
                        .map(|(k, v)| {
                            let number =
                                is_number(old.form_id, &k).then(|| v.parse().ok()).flatten();
                            let value = match number {
                                Some(n) => SubmittedValue::Number(n),
                                None => SubmittedValue::Text(v),
                            };
                            (k, value)
                        })
                        .collect(),
                    created_at: old.created_at,
                };
                upgrades.put(key, &s)?;
                Ok(Some(s))
            }
            Err(e) => {
                tracing::error!(workspace = %ws, error = %e, "a form submission cannot be read; it stays stored and is left out");
                Ok(None)
            }
        }
    })?;
    Ok(loaded.into_iter().map(|s: Submission| (s.id, s)).collect())
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::Timestamp;
    use crate::ids::ContactId;

    /// The shape earlier builds wrote: values as free-form JSON.
    #[derive(serde::Serialize)]
    struct WrittenBefore {
        id: SubmissionId,
        form_id: FormId,
        contact_id: ContactId,
        values: BTreeMap<String, serde_json::Value>,
        created_at: Timestamp,
    }

    #[test]
    fn submissions_stored_by_earlier_builds_load_when_they_can_and_never_stop_the_workspace() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        let ws = WorkspaceId::generate();
        let at = Timestamp(chrono::DateTime::from_timestamp_millis(1_795_000_000_000).unwrap());
        let texts = WrittenBefore {
            id: SubmissionId(5),
            form_id: FormId(1),
            contact_id: ContactId(2),
            values: BTreeMap::from([("size".to_string(), json!("M"))]),
            created_at: at,
        };
        let number = WrittenBefore {
            id: SubmissionId(6),
            values: BTreeMap::from([("age".to_string(), json!(42))]),
            ..texts
        };
        let form: Form = serde_json::from_value(json!({"id": 1, "name": "F", "fields": [
            {"key": "size", "label": "S", "type": "text", "required": false, "options": []},
            {"key": "age", "label": "A", "type": "number", "required": false, "options": []}
        ], "created_at": "2026-11-18T11:06:40.000Z", "updated_at": "2026-11-18T11:06:40.000Z"}))
        .unwrap();
        let mut batch = Batch::default();
        batch
            .put(super::super::record_key(&ws, KIND, 1), &form)
            .unwrap();
        batch
            .put(super::super::record_key(&ws, SUBMISSION, 5), &texts)
            .unwrap();
        batch
            .put(super::super::record_key(&ws, SUBMISSION, 6), &number)
            .unwrap();
        batch
            .put(
                super::super::record_key(&ws, SUBMISSION, 7),
                &"not a submission",
            )
            .unwrap();
        store.apply(batch).unwrap();

        let forms = Records::load(&store, &ws).unwrap();
        let loaded = load_submissions(&store, &ws, &forms).unwrap();
        assert_eq!(
            loaded.len(),
            2,
            "the unreadable one is left out: {loaded:?}"
        );
        assert_eq!(
            loaded[&SubmissionId(5)].values["size"],
            SubmittedValue::Text("M".into())
        );
        assert_eq!(
            loaded[&SubmissionId(6)].values["age"],
            SubmittedValue::Number(42.into())
        );
        let again: Submission = store
            .get(&super::super::record_key(&ws, SUBMISSION, 5))
            .unwrap()
            .expect("stored again in the current shape");
        assert_eq!(again, loaded[&SubmissionId(5)]);
        assert!(
            store
                .get_raw(&super::super::record_key(&ws, SUBMISSION, 7))
                .unwrap()
                .is_some(),
            "the unreadable one stays stored"
        );
    }
}
