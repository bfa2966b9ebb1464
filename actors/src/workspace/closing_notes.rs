//! Closing notes: at most 100, names unique case-insensitively.

use super::records::{record, Records};
use super::{answer, finish, Change, Ctx, Handled, Reply, WorkspaceData};
use crate::domain::closing_note::{ClosingNote, NewClosingNote, MAX_CLOSING_NOTES};
use crate::domain::{text, DomainError};
use crate::events::Origin;
use crate::ids::ClosingNoteId;
use crate::store::Batch;

#[derive(strum::IntoStaticStr)]
#[strum(prefix = "closing_note.", serialize_all = "snake_case")]
pub enum ClosingNoteMsg {
    List(Reply<Vec<ClosingNote>>),
    Create {
        origin: Origin,
        new: NewClosingNote,
        reply: Reply<ClosingNote>,
    },
}

const KIND: &str = "cn";

record!(ClosingNote, ClosingNoteId, KIND, "closing note");

pub type ClosingNotes = Records<ClosingNote>;

pub(super) fn handle(msg: ClosingNoteMsg, data: &mut WorkspaceData, ctx: &Ctx) -> Handled {
    match msg {
        ClosingNoteMsg::List(reply) => {
            answer(reply, Ok(data.closing_notes.values().cloned().collect()))
        }
        ClosingNoteMsg::Create { origin, new, reply } => {
            finish(reply, origin, create(data, ctx, new))
        }
    }
}

fn create(
    data: &mut WorkspaceData,
    ctx: &Ctx,
    new: NewClosingNote,
) -> Result<Change<ClosingNote>, DomainError> {
    let notes = &mut data.closing_notes;
    let folded = text::fold(&new.name);
    if let Some(existing) = notes.values().find(|n| text::fold(&n.name) == folded) {
        return Err(DomainError::conflict(format!(
            "a closing note named `{}` already exists",
            existing.name
        )));
    }
    if notes.len() >= MAX_CLOSING_NOTES {
        return Err(DomainError::LimitReached(format!(
            "a workspace can have at most {MAX_CLOSING_NOTES} closing notes"
        )));
    }
    let note = ClosingNote {
        id: ctx.next_id()?,
        name: new.name,
        description: new.description,
        created_at: ctx.now,
    };
    let mut writes = Batch::default();
    writes.put(ctx.key(KIND, note.id), &note)?;
    notes.insert(note.id, note.clone());
    Ok(Change::new(note, writes, Vec::new()))
}
