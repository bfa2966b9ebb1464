//! Funnels and their stages.

use super::records::{record, Records};
use super::{answer, finish, Change, Ctx, Handled, Reply, WorkspaceData};
use crate::domain::funnel::{Funnel, NewFunnel, Stage};
use crate::domain::DomainError;
use crate::events::Origin;
use crate::ids::{FunnelId, StageId};
use crate::store::Batch;

#[derive(strum::IntoStaticStr)]
#[strum(prefix = "funnel.", serialize_all = "snake_case")]
pub enum FunnelMsg {
    List(Reply<Vec<Funnel>>),
    Create {
        origin: Origin,
        new: NewFunnel,
        reply: Reply<Funnel>,
    },
}

const KIND: &str = "fun";

record!(Funnel, FunnelId, KIND, "funnel");

pub type Funnels = Records<Funnel>;

impl Funnels {
    /// The funnel a stage belongs to, with the stage.
    pub fn stage(&self, stage_id: StageId) -> Option<(&Funnel, &Stage)> {
        self.values()
            .find_map(|f| f.stages.iter().find(|s| s.id == stage_id).map(|s| (f, s)))
    }
}

pub(super) fn handle(msg: FunnelMsg, data: &mut WorkspaceData, ctx: &Ctx) -> Handled {
    match msg {
        FunnelMsg::List(reply) => answer(reply, Ok(data.funnels.values().cloned().collect())),
        FunnelMsg::Create { origin, new, reply } => finish(reply, origin, create(data, ctx, new)),
    }
}

fn create(
    data: &mut WorkspaceData,
    ctx: &Ctx,
    new: NewFunnel,
) -> Result<Change<Funnel>, DomainError> {
    let stages = new
        .stages
        .into_iter()
        .enumerate()
        .map(|(i, name)| {
            Ok(Stage {
                id: ctx.next_id()?,
                name,
                position: i as u32,
            })
        })
        .collect::<Result<Vec<_>, DomainError>>()?;
    let funnel = Funnel {
        id: ctx.next_id()?,
        name: new.name,
        stages,
        created_at: ctx.now,
    };
    let mut writes = Batch::default();
    writes.put(ctx.key(KIND, funnel.id), &funnel)?;
    data.funnels.insert(funnel.id, funnel.clone());
    Ok(Change::new(funnel, writes, Vec::new()))
}
