//! Custom contact fields.

use super::records::{record, Records};
use super::{answer, finish, Change, Ctx, Handled, Reply, WorkspaceData};
use crate::domain::custom_field::{CustomField, NewCustomField};
use crate::domain::DomainError;
use crate::events::Origin;
use crate::ids::CustomFieldId;
use crate::store::Batch;

#[derive(strum::IntoStaticStr)]
#[strum(prefix = "custom_field.", serialize_all = "snake_case")]
pub enum CustomFieldMsg {
    List(Reply<Vec<CustomField>>),
    Get {
        id: CustomFieldId,
        reply: Reply<CustomField>,
    },
    Create {
        origin: Origin,
        new: NewCustomField,
        reply: Reply<CustomField>,
    },
    /// Archived fields stay readable but take no new values on contacts.
    Archive {
        id: CustomFieldId,
        reply: Reply<CustomField>,
    },
}

const KIND: &str = "cf";

record!(CustomField, CustomFieldId, KIND, "custom field");

pub type CustomFields = Records<CustomField>;

impl CustomFields {
    pub fn by_key(&self, key: &str) -> Option<&CustomField> {
        self.values().find(|f| f.key.as_str() == key)
    }

    /// Oldest first: the order the fields were defined in, as a table shows them.
    pub fn list(&self) -> Vec<CustomField> {
        self.values().cloned().collect()
    }
}

pub(super) fn handle(msg: CustomFieldMsg, data: &mut WorkspaceData, ctx: &Ctx) -> Handled {
    match msg {
        CustomFieldMsg::List(reply) => answer(reply, Ok(data.custom_fields.list())),
        CustomFieldMsg::Get { id, reply } => answer(reply, data.custom_fields.find(id).cloned()),
        CustomFieldMsg::Create { origin, new, reply } => {
            finish(reply, origin, create(data, ctx, new))
        }
        CustomFieldMsg::Archive { id, reply } => {
            finish(reply, Origin::system(), archive(data, ctx, id))
        }
    }
}

fn create(
    data: &mut WorkspaceData,
    ctx: &Ctx,
    new: NewCustomField,
) -> Result<Change<CustomField>, DomainError> {
    if data.custom_fields.by_key(new.key.as_str()).is_some() {
        return Err(DomainError::conflict(format!(
            "a custom field with key `{}` already exists",
            new.key.as_str()
        )));
    }
    let field = CustomField {
        id: CustomFieldId(ctx.next_id()?),
        key: new.key,
        label: new.label,
        field_type: new.field_type,
        options: new.options,
        description: new.description,
        ai_enabled: new.ai_enabled,
        show_in_table: new.show_in_table,
        archived: false,
        created_at: ctx.now,
    };
    let mut writes = Batch::default();
    writes.put(ctx.key(KIND, field.id), &field)?;
    data.custom_fields.insert(field.id, field.clone());
    Ok(Change::new(field, writes, Vec::new()))
}

fn archive(
    data: &mut WorkspaceData,
    ctx: &Ctx,
    id: CustomFieldId,
) -> Result<Change<CustomField>, DomainError> {
    let field = data.custom_fields.find_mut(id)?;
    field.archived = true;
    let mut writes = Batch::default();
    writes.put(ctx.key(KIND, id), &*field)?;
    Ok(Change::new(field.clone(), writes, Vec::new()))
}
