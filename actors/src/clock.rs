//! One source of time for every actor, so that 24-hour and 72-hour rules are testable
//! without waiting: production reads the system clock, tests move a [`ManualClock`].

use std::sync::{Arc, Mutex};

use chrono::{DateTime, Duration, DurationRound, Utc};

/// Time as the service sees it; always truncated to milliseconds, the precision of the wire.
pub trait Clock: Send + Sync + 'static {
    fn now(&self) -> DateTime<Utc>;
}

pub type SharedClock = Arc<dyn Clock>;

fn millis(t: DateTime<Utc>) -> DateTime<Utc> {
    t.duration_trunc(Duration::milliseconds(1)).unwrap_or(t)
}

/// The wall clock.
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> DateTime<Utc> {
        millis(Utc::now())
    }
}

/// A clock that only moves when told to; for tests of time-based rules.
#[derive(Debug, Clone)]
pub struct ManualClock(Arc<Mutex<DateTime<Utc>>>);

impl ManualClock {
    pub fn new(start: DateTime<Utc>) -> Self {
        Self(Arc::new(Mutex::new(millis(start))))
    }

    pub fn advance(&self, by: std::time::Duration) {
        let mut t = self.0.lock().unwrap_or_else(|p| p.into_inner());
        *t += Duration::from_std(by).unwrap_or(Duration::MAX);
    }
}

impl Clock for ManualClock {
    fn now(&self) -> DateTime<Utc> {
        *self.0.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// Serde for timestamps as ISO 8601 UTC with milliseconds (`2026-01-02T03:04:05.678Z`),
/// the one format used on the wire and in the store.
pub mod rfc3339_millis {
    use chrono::{DateTime, SecondsFormat, Utc};
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn format(t: &DateTime<Utc>) -> String {
        t.to_rfc3339_opts(SecondsFormat::Millis, true)
    }

    pub fn serialize<S: Serializer>(t: &DateTime<Utc>, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&format(t))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<DateTime<Utc>, D::Error> {
        let text = String::deserialize(d)?;
        DateTime::parse_from_rfc3339(&text)
            .map(|t| t.with_timezone(&Utc))
            .map_err(serde::de::Error::custom)
    }

    /// The same for optional timestamps.
    pub mod option {
        use super::*;

        pub fn serialize<S: Serializer>(
            t: &Option<DateTime<Utc>>,
            s: S,
        ) -> Result<S::Ok, S::Error> {
            match t {
                Some(t) => s.serialize_some(&format(t)),
                None => s.serialize_none(),
            }
        }

        pub fn deserialize<'de, D: Deserializer<'de>>(
            d: D,
        ) -> Result<Option<DateTime<Utc>>, D::Error> {
            let text = Option::<String>::deserialize(d)?;
            text.map(|text| {
                DateTime::parse_from_rfc3339(&text)
                    .map(|t| t.with_timezone(&Utc))
                    .map_err(serde::de::Error::custom)
            })
            .transpose()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn manual_clock_moves_only_when_advanced() {
        let start = Utc::now();
        let clock = ManualClock::new(start);
        let before = clock.now();
        clock.advance(std::time::Duration::from_secs(72 * 3600));
        assert_eq!(clock.now() - before, Duration::hours(72));
    }

    #[test]
    fn timestamps_render_with_milliseconds_and_z() {
        let t = DateTime::parse_from_rfc3339("2026-01-02T03:04:05.678901Z")
            .unwrap()
            .with_timezone(&Utc);
        assert_eq!(
            rfc3339_millis::format(&millis(t)),
            "2026-01-02T03:04:05.678Z"
        );
    }
}
