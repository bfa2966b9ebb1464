//! Webhook delivery. The workspace actor writes one pending [`record::Delivery`] per
//! (event, subscribed endpoint), with its pending index entry, in the same batch as the
//! change it announces; once that batch is durable the [`Dispatcher`] wakes the endpoint's
//! [`endpoint::EndpointActor`], which posts it, retries on the ladder, and reports outcomes
//! back to the workspace. An idle endpoint actor stops, leaving a durable [`wake`]-up for
//! its next retry.

pub mod context;
pub mod dispatcher;
pub mod endpoint;
pub mod pending;
pub mod record;
pub mod sender;
pub mod wake;
pub mod window;

use std::time::Duration;

pub use context::{DeliveryStats, Report, Reports};
pub use dispatcher::Dispatcher;

/// Delivery rules; the defaults are the spec's.
#[derive(Debug, Clone)]
pub struct DeliverySettings {
    /// Waits before attempts 2, 3, ...; one attempt more than there are delays.
    pub retry_delays: Vec<Duration>,
    /// How long a receiver has to answer.
    pub timeout: Duration,
    /// Failing continuously this long disables an endpoint.
    pub disable_after: Duration,
    /// How long the previous secret keeps signing after a rotation.
    pub secret_overlap: Duration,
    /// Allows http:// and private destinations (local development and tests only).
    pub allow_private: bool,
    /// How often an endpoint actor looks for due deliveries.
    pub tick: Duration,
    /// How long delivery records are kept.
    pub history: Duration,
    /// Attempts one endpoint may have in flight at once, to begin with.
    pub max_in_flight: usize,
    /// The most attempts in flight at once for an endpoint whose receiver answers fast.
    pub fast_max_in_flight: usize,
    /// A 2xx within this earns the endpoint one more attempt in flight (up to
    /// `fast_max_in_flight`); any failure returns it to `max_in_flight`.
    pub fast_answer: Duration,
}

impl Default for DeliverySettings {
    fn default() -> Self {
        let min = |m: u64| Duration::from_secs(60 * m);
        Self {
            retry_delays: vec![
                Duration::from_secs(30),
                min(2),
                min(10),
                min(60),
                min(360),
                min(1440),
            ],
            timeout: Duration::from_secs(10),
            disable_after: min(72 * 60),
            secret_overlap: min(24 * 60),
            allow_private: false,
            tick: Duration::from_secs(1),
            history: min(30 * 24 * 60),
            max_in_flight: 8,
            fast_max_in_flight: 64,
            fast_answer: Duration::from_millis(250),
        }
    }
}

impl DeliverySettings {
    /// Attempts in all before a delivery is marked failed (7 with the default ladder).
    pub fn max_attempts(&self) -> usize {
        self.retry_delays.len() + 1
    }
}
