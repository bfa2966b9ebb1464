//! Durable wake-ups of stopped endpoint actors. An endpoint actor that goes idle with
//! retries still waiting arms one schedule timer, `webhook-delivery/<endpoint id>`, at the
//! soonest of them; the scheduler hands it (through the registry) to the dispatcher when
//! it falls due, which starts the actor again. The actor deletes the timer when it gets it,
//! so each fires once; one that outlived its endpoint is only deleted.

use chrono::{DateTime, Utc};

use crate::domain::webhook::EndpointConfig;
use crate::schedule::Timer;

const NAME: &str = "webhook-delivery/";

/// The wake-up of `cfg`'s actor at `due`.
pub fn timer(cfg: &EndpointConfig, due: DateTime<Utc>) -> Timer {
    Timer::new(&cfg.workspace_id, format!("{NAME}{}", cfg.id), due)
}

/// The endpoint a timer wakes, if it is a delivery wake-up.
pub fn endpoint_of(timer: &Timer) -> Option<&str> {
    timer.name.strip_prefix(NAME)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_wake_up_names_its_endpoint_and_no_workspace_timer_is_taken_for_one() {
        let cfg = EndpointConfig::sample("we_one");
        let t = timer(&cfg, Utc::now());
        assert_eq!(endpoint_of(&t), Some("we_one"));
        let reminder = Timer::new(&cfg.workspace_id, "reminder/7", Utc::now());
        assert_eq!(endpoint_of(&reminder), None);
    }
}
