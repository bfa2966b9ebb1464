//! Requests and 429s per workspace over the last minute, for the operator's stats route
//! (per-workspace figures stay out of the metrics to keep label cardinality bounded).

use std::sync::Mutex;

use dashmap::DashMap;
use switchboard_actors::ids::WorkspaceId;

/// Sixty one-second buckets (second, requests, 429s), reused round-robin.
struct Window {
    buckets: [(i64, u64, u64); 60],
}

impl Default for Window {
    fn default() -> Self {
        Self {
            buckets: [(0, 0, 0); 60],
        }
    }
}

#[derive(Default)]
pub struct RecentCounts(DashMap<WorkspaceId, Mutex<Window>>);

fn now_secs() -> i64 {
    chrono::Utc::now().timestamp()
}

impl RecentCounts {
    pub fn record(&self, ws: &WorkspaceId, rejected: bool) {
        let t = now_secs();
        let entry = self.0.entry(ws.clone()).or_default();
        let mut w = entry.lock().unwrap_or_else(|p| p.into_inner());
        let slot = &mut w.buckets[t.rem_euclid(60) as usize];
        if slot.0 != t {
            *slot = (t, 0, 0);
        }
        slot.1 += 1;
        if rejected {
            slot.2 += 1;
        }
    }

    /// (requests, 429s) of the last 60 seconds.
    pub fn last_minute(&self, ws: &WorkspaceId) -> (u64, u64) {
        let Some(entry) = self.0.get(ws) else {
            return (0, 0);
        };
        let w = entry.lock().unwrap_or_else(|p| p.into_inner());
        w.over(now_secs(), 60)
    }

    /// The `n` workspaces that sent the most requests in the last `secs` seconds (at most
    /// 60), busiest first, with (requests, 429s); quiet ones are left out.
    pub fn busiest(&self, n: usize, secs: i64) -> Vec<(WorkspaceId, u64, u64)> {
        let t = now_secs();
        let mut all: Vec<(WorkspaceId, u64, u64)> = self
            .0
            .iter()
            .filter_map(|entry| {
                let w = entry.value().lock().unwrap_or_else(|p| p.into_inner());
                let (requests, rejected) = w.over(t, secs);
                (requests > 0).then(|| (entry.key().clone(), requests, rejected))
            })
            .collect();
        all.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        all.truncate(n);
        all
    }
}

impl Window {
    /// (requests, 429s) of the `secs` seconds up to `t`.
    fn over(&self, t: i64, secs: i64) -> (u64, u64) {
        self.buckets
            .iter()
            .filter(|(at, _, _)| t - at < secs.min(60))
            .fold((0, 0), |(r, x), (_, a, b)| (r + a, x + b))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_requests_and_rejections_per_workspace() {
        let c = RecentCounts::default();
        let (a, b) = (WorkspaceId::generate(), WorkspaceId::generate());
        c.record(&a, false);
        c.record(&a, true);
        c.record(&b, false);
        assert_eq!(c.last_minute(&a), (2, 1));
        assert_eq!(c.last_minute(&b), (1, 0));
        assert_eq!(c.last_minute(&WorkspaceId::generate()), (0, 0));
    }

    #[test]
    fn the_busiest_workspaces_come_first_and_quiet_ones_not_at_all() {
        let c = RecentCounts::default();
        let (a, b, quiet) = (
            WorkspaceId::generate(),
            WorkspaceId::generate(),
            WorkspaceId::generate(),
        );
        c.record(&a, false);
        for _ in 0..3 {
            c.record(&b, true);
        }
        c.0.entry(quiet).or_default();
        assert_eq!(c.busiest(20, 10), vec![(b.clone(), 3, 3), (a, 1, 0)]);
        assert_eq!(c.busiest(1, 10), vec![(b, 3, 3)]);
    }
}
