//! The open loop's timetable: request `i` is due `i / rate` seconds after the start, for
//! a fixed number of requests. Times are whole nanoseconds computed from `i` (never
//! accumulated), so a long run does not drift. [`Turns`] says which workspace each
//! request goes to.

use std::time::Duration;

/// A request sent this long after its due time counts as late: the load tester itself
/// (not the server) fell behind, and the offered rate was not quite what was asked.
/// Tokio's timers tick in milliseconds, so a few milliseconds are normal.
pub const LATE_AFTER: Duration = Duration::from_millis(5);

const NANOS_PER_SECOND: u128 = 1_000_000_000;

/// `count` requests at `rate` per second.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Schedule {
    rate: u32,
    count: u64,
}

impl Schedule {
    /// Exactly `count` requests.
    pub fn for_count(rate: u32, count: u64) -> Self {
        Self {
            rate: rate.max(1),
            count,
        }
    }

    /// Every request due within `length` (due times in `[0, length)`).
    pub fn for_duration(rate: u32, length: Duration) -> Self {
        let rate = rate.max(1);
        let due = (length.as_nanos() * u128::from(rate)).div_ceil(NANOS_PER_SECOND);
        Self {
            rate,
            count: u64::try_from(due).unwrap_or(u64::MAX),
        }
    }

    pub fn rate(&self) -> u32 {
        self.rate
    }

    /// How many requests the schedule holds.
    pub fn len(&self) -> u64 {
        self.count
    }

    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// When request `i` is due, after the start (rounded up to the nanosecond, so that
    /// [`Schedule::due_by`] its due time counts it).
    pub fn due_at(&self, i: u64) -> Duration {
        let nanos = (u128::from(i) * NANOS_PER_SECOND).div_ceil(u128::from(self.rate));
        Duration::from_nanos(u64::try_from(nanos).unwrap_or(u64::MAX))
    }

    /// How many requests are due once `elapsed` has passed (those due at or before it).
    pub fn due_by(&self, elapsed: Duration) -> u64 {
        let due = elapsed.as_nanos() * u128::from(self.rate) / NANOS_PER_SECOND + 1;
        u64::try_from(due).unwrap_or(u64::MAX).min(self.count)
    }

    /// From the start to the moment the last request's interval ends: `count / rate`.
    pub fn span(&self) -> Duration {
        self.due_at(self.count)
    }
}

/// How many turns a noisy workspace gets for a quiet one's one: `--noisy` means ten
/// times the rate, here as in the closed loop.
pub const NOISY_WEIGHT: usize = 10;

/// Which workspace each scheduled request goes to. In every cycle each quiet workspace
/// has one turn and each noisy one [`NOISY_WEIGHT`], so a noisy workspace gets ten times
/// a quiet one's share of the offered rate. The first `noisy` workspaces are the noisy
/// ones, as the bootstrap makes them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Turns {
    workspaces: usize,
    noisy: usize,
}

impl Turns {
    pub fn new(workspaces: usize, noisy: usize) -> Self {
        let workspaces = workspaces.max(1);
        Self {
            workspaces,
            noisy: noisy.min(workspaces),
        }
    }

    /// Turns in one cycle.
    fn cycle(&self) -> u64 {
        (self.workspaces - self.noisy + self.noisy * NOISY_WEIGHT) as u64
    }

    /// The workspace of scheduled request `i`: the noisy ones' turns first, in rotation,
    /// then one turn for each quiet one.
    pub fn workspace(&self, i: u64) -> usize {
        let slot = (i % self.cycle()) as usize;
        let noisy_slots = self.noisy * NOISY_WEIGHT;
        if slot < noisy_slots {
            slot % self.noisy
        } else {
            self.noisy + slot - noisy_slots
        }
    }

    /// The requests per second one quiet workspace gets out of `rate`.
    pub fn quiet_share(&self, rate: u32) -> f64 {
        f64::from(rate) / self.cycle() as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_are_due_evenly_from_the_start() {
        let s = Schedule::for_count(2000, 20_000);
        assert_eq!(s.len(), 20_000);
        assert_eq!(s.due_at(0), Duration::ZERO);
        assert_eq!(s.due_at(1), Duration::from_micros(500));
        assert_eq!(s.due_at(19_999), Duration::from_micros(9_999_500));
        assert_eq!(s.span(), Duration::from_secs(10));
        // A rate that does not divide a second: no drift after many requests.
        let s = Schedule::for_count(3, 3_000_000);
        assert_eq!(s.due_at(3_000_000), Duration::from_secs(1_000_000));
        assert_eq!(s.due_at(1), Duration::from_nanos(333_333_334));
        for i in 0..100 {
            assert_eq!(s.due_by(s.due_at(i)), i + 1);
        }
    }

    #[test]
    fn a_duration_holds_the_requests_due_within_it() {
        assert_eq!(
            Schedule::for_duration(2000, Duration::from_secs(10)).len(),
            20_000
        );
        assert_eq!(Schedule::for_duration(3, Duration::from_secs(1)).len(), 3);
        // Due at 0, 1/3 s and 2/3 s: three within 700 ms, one within a nanosecond.
        assert_eq!(
            Schedule::for_duration(3, Duration::from_millis(700)).len(),
            3
        );
        assert_eq!(Schedule::for_duration(3, Duration::from_nanos(1)).len(), 1);
        assert!(Schedule::for_duration(3, Duration::ZERO).is_empty());
    }

    #[test]
    fn due_by_counts_every_request_whose_time_has_come_and_no_more() {
        let s = Schedule::for_count(1000, 10);
        assert_eq!(s.due_by(Duration::ZERO), 1);
        assert_eq!(s.due_by(Duration::from_micros(999)), 1);
        assert_eq!(s.due_by(Duration::from_millis(1)), 2);
        assert_eq!(s.due_by(Duration::from_micros(4_500)), 5);
        assert_eq!(s.due_by(Duration::from_secs(60)), 10);
        for i in 0..10 {
            assert_eq!(s.due_by(s.due_at(i)), i + 1);
        }
    }
}
