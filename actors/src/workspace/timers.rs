//! Due timers, handed over by the scheduler: each goes to the resource that armed it, which
//! applies its effect and disarms it in one batch. A timer no resource claims any more (its
//! record changed or went away) is disarmed with nothing else, so it never comes back.

use super::{finish, unanswered, Change, Ctx, Handled, WorkspaceData};
use crate::events::Origin;
use crate::schedule::Timer;
use crate::store::Batch;

pub(super) fn handle(timer: Timer, data: &mut WorkspaceData, ctx: &Ctx) -> Handled {
    let change = match timer.name.split_once('/') {
        Some(("dedupe", key)) => super::conversations::forget_guard(ctx, key, &timer),
        Some(("conversation", _)) => super::conversations::timer_due(data, ctx, &timer)
            .unwrap_or_else(|| Ok(disarm_only(&timer))),
        Some(("turn", _)) => super::conversations::turn_due(data, ctx, &timer)
            .unwrap_or_else(|| Ok(disarm_only(&timer))),
        Some(("booking", _)) => {
            super::bookings::timer_due(data, ctx, &timer).unwrap_or_else(|| Ok(disarm_only(&timer)))
        }
        Some(("reminder", _)) => super::reminders::timer_due(data, ctx, &timer)
            .unwrap_or_else(|| Ok(disarm_only(&timer))),
        Some(("campaign" | "campaigns", _)) => super::campaigns::timer_due(data, ctx, &timer)
            .unwrap_or_else(|| Ok(disarm_only(&timer))),
        _ => Ok(disarm_only(&timer)),
    };
    finish(unanswered(), Origin::system(), change)
}

/// The change of a timer that has nothing left to do.
fn disarm_only(timer: &Timer) -> Change<()> {
    let mut writes = Batch::default();
    timer.disarm(&mut writes);
    Change {
        value: (),
        writes,
        events: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::WorkspaceId;

    #[test]
    fn an_unclaimed_timer_is_only_disarmed() {
        let ws = WorkspaceId::parse("ws_one").unwrap();
        let t = Timer::new(&ws, "gone/1", chrono::Utc::now());
        let change = disarm_only(&t);
        assert_eq!(change.writes.len(), 1);
        assert!(change.events.is_empty());
    }
}
