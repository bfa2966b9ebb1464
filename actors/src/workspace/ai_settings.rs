//! The workspace's AI settings: one record, defaults until first changed.

use super::{answer, finish, record_key, Change, Ctx, Handled, Reply, WorkspaceData};
use crate::domain::ai_settings::{AiSettings, AiSettingsPatch};
use crate::domain::DomainError;
use crate::events::Origin;
use crate::ids::WorkspaceId;
use crate::store::{Batch, Store};

const KIND: &str = "ais";

#[derive(strum::IntoStaticStr)]
#[strum(prefix = "ai_settings.", serialize_all = "snake_case")]
pub enum AiSettingsMsg {
    Get(Reply<AiSettings>),
    Patch {
        origin: Origin,
        patch: Box<AiSettingsPatch>,
        reply: Reply<AiSettings>,
    },
}

pub fn load(store: &Store, ws: &WorkspaceId) -> Result<AiSettings, DomainError> {
    Ok(store.get(&record_key(ws, KIND, 0))?.unwrap_or_default())
}

pub(super) fn handle(msg: AiSettingsMsg, data: &mut WorkspaceData, ctx: &Ctx) -> Handled {
    match msg {
        AiSettingsMsg::Get(reply) => answer(reply, Ok(data.ai_settings.clone())),
        AiSettingsMsg::Patch {
            origin,
            patch,
            reply,
        } => finish(reply, origin, change(data, ctx, patch)),
    }
}

fn change(
    data: &mut WorkspaceData,
    ctx: &Ctx,
    patch: Box<AiSettingsPatch>,
) -> Result<Change<AiSettings>, DomainError> {
    let next = data.ai_settings.patched(*patch)?;
    let mut writes = Batch::default();
    writes.put(ctx.key(KIND, 0u64), &next)?;
    let old = std::mem::replace(&mut data.ai_settings, next.clone());
    if old.appointment_reminders != next.appointment_reminders {
        data.rearm_appointment_reminders(ctx, &old.appointment_reminders, &mut writes)?;
    }
    Ok(Change::new(next, writes, Vec::new()))
}
