//! Credits: every outbound message that is sent costs one (failed ones are free). The
//! operator sets the monthly allowance; usage may go past it, and crossing 80, 100 and 120
//! percent of it is announced once per period (a calendar month, UTC).

use chrono::{DateTime, Datelike, TimeZone, Utc};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::clock::Timestamp;

pub const DEFAULT_ALLOWANCE: u64 = 1_000;

/// The largest allowance an operator may set: a trillion credits a month.
pub const MAX_ALLOWANCE: u64 = 1_000_000_000_000;

/// Percentages of the allowance whose crossing is announced.
pub const THRESHOLDS: [u32; 3] = [80, 100, 120];

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Credits {
    pub allowance: u64,
    /// Used in the current period.
    pub used: u64,
    pub period_start: Timestamp,
    /// Thresholds announced in this period.
    pub announced: Vec<u32>,
}

/// The credits record as answered.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct CreditsView {
    pub allowance: u64,
    pub used: u64,
    /// `allowance - used`; below zero once usage went past the allowance.
    pub remaining: i64,
    /// The first instant of the current calendar month (UTC).
    pub period_start: Timestamp,
}

/// The first instant of `now`'s calendar month, UTC.
pub fn month_start(now: DateTime<Utc>) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(now.year(), now.month(), 1, 0, 0, 0)
        .single()
        .unwrap_or(now)
}

impl Credits {
    pub fn new(now: DateTime<Utc>) -> Self {
        Self {
            allowance: DEFAULT_ALLOWANCE,
            used: 0,
            period_start: Timestamp(month_start(now)),
            announced: Vec::new(),
        }
    }

    /// Starts a new period when `now` is in a later month: usage and announcements reset.
    fn roll(&mut self, now: DateTime<Utc>) {
        let start = month_start(now);
        if start > *self.period_start {
            self.period_start = Timestamp(start);
            self.used = 0;
            self.announced.clear();
        }
    }

    /// The record as of `now` (a new month shows nothing used yet).
    pub fn view(&self, now: DateTime<Utc>) -> CreditsView {
        let mut current = self.clone();
        current.roll(now);
        CreditsView {
            allowance: current.allowance,
            used: current.used,
            remaining: current.remaining(),
            period_start: current.period_start,
        }
    }

    pub fn remaining(&self) -> i64 {
        let remaining = i128::from(self.allowance) - i128::from(self.used);
        remaining.clamp(i128::from(i64::MIN), i128::from(i64::MAX)) as i64
    }

    /// Remaining credits as of `now`.
    pub fn remaining_at(&self, now: DateTime<Utc>) -> i64 {
        self.view(now).remaining
    }

    /// Spends `n` credits; answers the thresholds crossed by doing so.
    pub fn spend(&mut self, n: u64, now: DateTime<Utc>) -> Vec<u32> {
        self.roll(now);
        self.used += n;
        self.newly_crossed()
    }

    /// A new allowance: thresholds usage is no longer past are armed again; thresholds it
    /// is past now and that were not announced yet are answered.
    pub fn set_allowance(&mut self, allowance: u64, now: DateTime<Utc>) -> Vec<u32> {
        self.roll(now);
        self.allowance = allowance;
        let still = |p: &u32| self.past(*p);
        let kept: Vec<u32> = self.announced.iter().copied().filter(still).collect();
        self.announced = kept;
        self.newly_crossed()
    }

    fn past(&self, percent: u32) -> bool {
        // In 128 bits: an allowance near u64::MAX times 120 would wrap.
        self.used > 0
            && u128::from(self.used) * 100 >= u128::from(self.allowance) * u128::from(percent)
    }

    fn newly_crossed(&mut self) -> Vec<u32> {
        let crossed: Vec<u32> = THRESHOLDS
            .into_iter()
            .filter(|p| self.past(*p) && !self.announced.contains(p))
            .collect();
        self.announced.extend(&crossed);
        crossed
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(day: u32, month: u32) -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2026, month, day, 12, 0, 0).unwrap()
    }

    #[test]
    fn each_threshold_is_announced_once_as_usage_crosses_it() {
        let mut c = Credits::new(at(5, 3));
        c.allowance = 10;
        assert!(c.spend(7, at(5, 3)).is_empty());
        assert_eq!(c.spend(1, at(5, 3)), [80]);
        assert!(c.spend(1, at(5, 3)).is_empty());
        assert_eq!(
            c.spend(3, at(5, 3)),
            [100, 120],
            "one per threshold crossed"
        );
        assert!(c.spend(5, at(5, 3)).is_empty());
        assert_eq!(c.remaining(), -7, "usage may go past the allowance");
    }

    #[test]
    fn a_new_month_starts_from_nothing_and_announces_again() {
        let mut c = Credits::new(at(28, 2));
        c.allowance = 2;
        assert_eq!(c.spend(2, at(28, 2)), [80, 100]);
        assert_eq!(c.view(at(1, 3)).used, 0);
        assert_eq!(*c.view(at(1, 3)).period_start, month_start(at(1, 3)));
        assert_eq!(c.spend(2, at(2, 3)), [80, 100]);
    }

    #[test]
    fn a_huge_allowance_neither_wraps_nor_announces_a_crossing() {
        let mut c = Credits::new(at(5, 1));
        for allowance in [u64::MAX, 1 << 63, MAX_ALLOWANCE] {
            assert!(c.set_allowance(allowance, at(5, 2)).is_empty());
            assert!(c.spend(1, at(5, 2)).is_empty(), "{allowance}");
            assert!(c.remaining() > 0, "{allowance}: {}", c.remaining());
        }
    }

    #[test]
    fn a_new_allowance_rearms_the_thresholds_no_longer_crossed() {
        let mut c = Credits::new(at(5, 3));
        c.allowance = 10;
        assert_eq!(c.spend(10, at(5, 3)), [80, 100]);
        assert!(c.set_allowance(100, at(5, 3)).is_empty());
        assert_eq!(
            c.spend(70, at(5, 3)),
            [80],
            "80 fires again under the new allowance"
        );
        assert_eq!(
            c.set_allowance(50, at(5, 3)),
            [100, 120],
            "a smaller allowance announces what usage is already past"
        );
    }

    #[test]
    fn nothing_used_crosses_nothing_even_with_no_allowance() {
        let mut c = Credits::new(at(5, 3));
        assert!(c.set_allowance(0, at(5, 3)).is_empty());
        assert_eq!(c.spend(1, at(5, 3)), [80, 100, 120]);
    }
}
