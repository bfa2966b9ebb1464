//! How many attempts one endpoint has on the wire at once. It starts at `max_in_flight`;
//! each 2xx that came back within `fast_answer` adds one, up to `fast_max_in_flight`, so a
//! backlog to a receiver that answers at once goes out in large waves (one write and one
//! flush per wave, not per attempt), while a slow or failing receiver keeps the small
//! window. Any failure returns to the start.
//!
//! Once widened, it also lets the next waves be recorded while earlier ones are on the wire
//! ([`Window::pipeline`]), so that a backlog's throughput is not one window per flush.
//! Only then: an attempt is timed from when it is recorded, so a slow receiver's attempts
//! are never recorded long before they can be sent.

/// Attempts recorded per attempt on the wire once the window has widened.
const RECORDED_AHEAD: usize = 4;

use super::sender::{Outcome, SendResult};
use super::DeliverySettings;

#[derive(Debug, Clone)]
pub struct Window {
    limit: usize,
    start: usize,
    most: usize,
    fast_ms: u64,
}

impl Window {
    pub fn new(settings: &DeliverySettings) -> Self {
        let start = settings.max_in_flight.max(1);
        Self {
            limit: start,
            start,
            most: settings.fast_max_in_flight.max(start),
            fast_ms: settings.fast_answer.as_millis() as u64,
        }
    }

    /// Attempts allowed in flight now.
    pub fn limit(&self) -> usize {
        self.limit
    }

    /// Attempts that may be recorded and unfinished at once, on the wire or waiting for it.
    pub fn pipeline(&self) -> usize {
        if self.limit > self.start {
            self.limit * RECORDED_AHEAD
        } else {
            self.limit
        }
    }

    /// Widens on a fast success, returns to the start on any failure.
    pub fn observe(&mut self, result: &SendResult) {
        match result.outcome {
            Outcome::Delivered if result.duration_ms <= self.fast_ms => {
                self.limit = (self.limit + 1).min(self.most);
            }
            Outcome::Delivered => {}
            Outcome::Failed | Outcome::Gone => self.limit = self.start,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn result(outcome: Outcome, duration_ms: u64) -> SendResult {
        SendResult {
            outcome,
            status_code: None,
            error: None,
            duration_ms,
        }
    }

    fn settings() -> DeliverySettings {
        DeliverySettings {
            max_in_flight: 8,
            fast_max_in_flight: 12,
            fast_answer: Duration::from_millis(100),
            ..DeliverySettings::default()
        }
    }

    #[test]
    fn fast_successes_widen_up_to_the_most_and_a_failure_narrows_to_the_start() {
        let mut w = Window::new(&settings());
        assert_eq!(w.limit(), 8);
        assert_eq!(
            w.pipeline(),
            8,
            "nothing recorded ahead before the receiver proved fast"
        );
        for _ in 0..10 {
            w.observe(&result(Outcome::Delivered, 3));
        }
        assert_eq!(w.limit(), 12, "capped at fast_max_in_flight");
        assert_eq!(w.pipeline(), 12 * RECORDED_AHEAD);
        w.observe(&result(Outcome::Failed, 3));
        assert_eq!(w.limit(), 8);
        assert_eq!(w.pipeline(), 8);
    }

    #[test]
    fn slow_successes_keep_the_window_as_it_is() {
        let mut w = Window::new(&settings());
        w.observe(&result(Outcome::Delivered, 3));
        w.observe(&result(Outcome::Delivered, 900));
        assert_eq!(w.limit(), 9);
        w.observe(&result(Outcome::Gone, 3));
        assert_eq!(w.limit(), 8);
    }
}
