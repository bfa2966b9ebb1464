//! The workspace's credits: one record, made with the default allowance on first use.
//! [`spend`] is the step the sender takes for each message sent.

use serde_json::json;

use super::{answer, finish, record_key, Change, Ctx, Handled, Reply, WorkspaceData};
use crate::domain::credits::{Credits, CreditsView};
use crate::domain::DomainError;
use crate::events::{DomainEvent, Origin};
use crate::ids::WorkspaceId;
use crate::store::{Batch, Store};

const KIND: &str = "cr";

#[derive(strum::IntoStaticStr)]
#[strum(prefix = "credits.", serialize_all = "snake_case")]
pub enum CreditsMsg {
    Get(Reply<CreditsView>),
    /// The operator's new allowance.
    SetAllowance {
        allowance: u64,
        reply: Reply<CreditsView>,
    },
}

pub fn load(store: &Store, ws: &WorkspaceId) -> Result<Option<Credits>, DomainError> {
    Ok(store.get(&record_key(ws, KIND, 0))?)
}

pub(super) fn handle(msg: CreditsMsg, data: &mut WorkspaceData, ctx: &Ctx) -> Handled {
    match msg {
        CreditsMsg::Get(reply) => answer(reply, Ok(current(data, ctx).view(*ctx.now))),
        CreditsMsg::SetAllowance { allowance, reply } => {
            let (mut writes, mut events) = (Batch::default(), Vec::new());
            let crossed = current(data, ctx).set_allowance(allowance, *ctx.now);
            let saved = save(data, ctx, crossed, &mut writes, &mut events);
            let answer = saved.map(|_| Change {
                value: current(data, ctx).view(*ctx.now),
                writes,
                events,
            });
            finish(reply, Origin::system(), answer)
        }
    }
}

fn current<'a>(data: &'a mut WorkspaceData, ctx: &Ctx) -> &'a mut Credits {
    data.credits.get_or_insert_with(|| Credits::new(*ctx.now))
}

/// Spends `n` credits in `writes`, with an event per threshold crossed.
pub(super) fn spend(
    data: &mut WorkspaceData,
    ctx: &Ctx,
    n: u64,
    writes: &mut Batch,
    events: &mut Vec<DomainEvent>,
) -> Result<(), DomainError> {
    let crossed = current(data, ctx).spend(n, *ctx.now);
    save(data, ctx, crossed, writes, events)
}

fn save(
    data: &mut WorkspaceData,
    ctx: &Ctx,
    crossed: Vec<u32>,
    writes: &mut Batch,
    events: &mut Vec<DomainEvent>,
) -> Result<(), DomainError> {
    let credits = current(data, ctx);
    writes.put(ctx.key(KIND, 0u64), &*credits)?;
    let view = credits.view(*ctx.now);
    for percent in crossed {
        // The credits record as GET /credits returns it, and the threshold crossed.
        let mut data = serde_json::to_value(&view).unwrap_or_else(|_| json!({}));
        if let Some(fields) = data.as_object_mut() {
            fields.insert("percent".into(), json!(percent));
        }
        events.push(DomainEvent::record(
            "credits.threshold_reached",
            "credits",
            ctx.workspace,
            data,
        ));
    }
    Ok(())
}
