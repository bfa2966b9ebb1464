//! One source of time for every actor, so that 24-hour and 72-hour rules are testable
//! without waiting: production reads the system clock, tests move a [`ManualClock`].

use std::sync::{Arc, Mutex};

use chrono::{DateTime, Duration, Utc};

/// Time as the service sees it; always truncated to milliseconds, the precision of the wire.
pub trait Clock: Send + Sync + 'static {
    fn now(&self) -> DateTime<Utc>;
}

pub type SharedClock = Arc<dyn Clock>;

/// A time a client sends: ISO 8601 with an offset, answered in UTC and kept to the
/// millisecond, so it reads back as sent and names the same timer key after a restart.
pub fn parse_client_time(raw: &str) -> Result<DateTime<Utc>, String> {
    DateTime::parse_from_rfc3339(raw.trim())
        .map(|t| millis(t.with_timezone(&Utc)))
        .map_err(|_| "must be an ISO 8601 time with an offset".to_string())
}

/// `t` truncated to milliseconds, the precision of the wire and of the store: a time a
/// client sends is kept as it will read back (and as timer keys name it).
pub fn millis(t: DateTime<Utc>) -> DateTime<Utc> {
    use chrono::Timelike;
    t.with_nanosecond(t.nanosecond() / 1_000_000 * 1_000_000)
        .unwrap_or(t)
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

/// A moment on the wire and in the store: ISO 8601 UTC with milliseconds
/// (`2026-01-02T03:04:05.678Z`). It serialises and documents itself, so a record's time
/// fields need no serde or schema attributes; it reads as a `DateTime<Utc>` for arithmetic.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, utoipa::ToSchema)]
#[schema(value_type = String, format = DateTime, example = "2026-01-02T03:04:05.678Z")]
pub struct Timestamp(pub DateTime<Utc>);

impl Timestamp {
    pub fn at(t: DateTime<Utc>) -> Self {
        Self(t)
    }

    pub fn get(self) -> DateTime<Utc> {
        self.0
    }
}

impl serde::Serialize for Timestamp {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        rfc3339_millis::serialize(&self.0, s)
    }
}

impl<'de> serde::Deserialize<'de> for Timestamp {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        rfc3339_millis::deserialize(d).map(Self)
    }
}

impl From<DateTime<Utc>> for Timestamp {
    fn from(t: DateTime<Utc>) -> Self {
        Self(t)
    }
}

impl From<Timestamp> for DateTime<Utc> {
    fn from(t: Timestamp) -> Self {
        t.0
    }
}

impl std::ops::Deref for Timestamp {
    type Target = DateTime<Utc>;

    fn deref(&self) -> &DateTime<Utc> {
        &self.0
    }
}

impl std::ops::Add<Duration> for Timestamp {
    type Output = Timestamp;

    fn add(self, d: Duration) -> Timestamp {
        Timestamp(self.0 + d)
    }
}

impl std::ops::Sub<Duration> for Timestamp {
    type Output = Timestamp;

    fn sub(self, d: Duration) -> Timestamp {
        Timestamp(self.0 - d)
    }
}

impl std::ops::Sub for Timestamp {
    type Output = Duration;

    fn sub(self, other: Timestamp) -> Duration {
        self.0 - other.0
    }
}

impl PartialEq<DateTime<Utc>> for Timestamp {
    fn eq(&self, other: &DateTime<Utc>) -> bool {
        self.0 == *other
    }
}

impl PartialOrd<DateTime<Utc>> for Timestamp {
    fn partial_cmp(&self, other: &DateTime<Utc>) -> Option<std::cmp::Ordering> {
        self.0.partial_cmp(other)
    }
}

impl std::fmt::Display for Timestamp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&rfc3339_millis::format(&self.0))
    }
}

/// Serde for timestamps as ISO 8601 UTC with milliseconds (`2026-01-02T03:04:05.678Z`),
/// the one format used on the wire and in the store.
pub mod rfc3339_millis {
    use chrono::{DateTime, SecondsFormat, Utc};
    use serde::ser::Error as _;
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn format(t: &DateTime<Utc>) -> String {
        match written(t) {
            Some(buf) => String::from_utf8_lossy(&buf).into_owned(),
            None => t.to_rfc3339_opts(SecondsFormat::Millis, true),
        }
    }

    pub fn serialize<S: Serializer>(t: &DateTime<Utc>, s: S) -> Result<S::Ok, S::Error> {
        match written(t) {
            Some(buf) => s.serialize_str(std::str::from_utf8(&buf).map_err(S::Error::custom)?),
            None => s.serialize_str(&format(t)),
        }
    }

    /// `YYYY-MM-DDTHH:MM:SS.mmmZ` written digit by digit, as chrono writes it: every
    /// record carries two or more timestamps, and chrono's general formatter costs more
    /// than the rest of a small record. Years outside 0..=9999 and leap seconds are left
    /// to chrono.
    fn written(t: &DateTime<Utc>) -> Option<[u8; 24]> {
        use chrono::{Datelike, Timelike};
        let n = t.naive_utc();
        let (date, time) = (n.date(), n.time());
        let year = u32::try_from(date.year()).ok().filter(|y| *y <= 9999)?;
        let nanos = time.nanosecond();
        if nanos >= 1_000_000_000 {
            return None;
        }
        let seconds = time.num_seconds_from_midnight();
        let mut buf = *b"0000-00-00T00:00:00.000Z";
        let mut put = |at: usize, width: usize, mut value: u32| {
            for i in (at..at + width).rev() {
                buf[i] = b'0' + (value % 10) as u8;
                value /= 10;
            }
        };
        put(0, 4, year);
        put(5, 2, date.month());
        put(8, 2, date.day());
        put(11, 2, seconds / 3600);
        put(14, 2, seconds / 60 % 60);
        put(17, 2, seconds % 60);
        put(20, 3, nanos / 1_000_000);
        Some(buf)
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
    fn timestamps_are_written_as_chrono_writes_them() {
        use chrono::{NaiveDate, SecondsFormat, TimeZone};
        use rand::Rng;
        let chrono_way = |t: &DateTime<Utc>| t.to_rfc3339_opts(SecondsFormat::Millis, true);
        let at = |y, mo, d, h, mi, s, ms| {
            NaiveDate::from_ymd_opt(y, mo, d)
                .and_then(|d| d.and_hms_milli_opt(h, mi, s, ms))
                .map(|n| Utc.from_utc_datetime(&n))
                .unwrap_or_default()
        };
        let mut cases = vec![
            at(1970, 1, 1, 0, 0, 0, 0),
            at(0, 1, 1, 0, 0, 0, 0),
            at(9999, 12, 31, 23, 59, 59, 999),
            at(10000, 1, 1, 0, 0, 0, 1),
            at(-1, 6, 15, 12, 30, 45, 500),
            // A leap second: chrono writes `:60`.
            at(2016, 12, 31, 23, 59, 59, 1500),
            at(2026, 11, 27, 9, 5, 7, 42),
        ];
        let mut rng = rand::rng();
        for _ in 0..10_000 {
            let millis = rng.random_range(-62_000_000_000_000i64..253_402_300_799_999);
            cases.push(DateTime::from_timestamp_millis(millis).unwrap_or_default());
        }
        for t in &cases {
            assert_eq!(rfc3339_millis::format(t), chrono_way(t), "{t:?}");
            let json = serde_json::to_value(Wire(*t)).unwrap_or_default();
            assert_eq!(json.as_str(), Some(chrono_way(t).as_str()), "{t:?}");
        }

        #[derive(serde::Serialize)]
        struct Wire(#[serde(with = "rfc3339_millis")] DateTime<Utc>);
    }

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

    #[test]
    fn a_timestamp_is_the_same_text_in_json_and_in_the_store() {
        let t = Timestamp(
            DateTime::parse_from_rfc3339("2026-01-02T03:04:05.678Z")
                .unwrap()
                .with_timezone(&Utc),
        );
        assert_eq!(
            serde_json::to_string(&t).unwrap(),
            "\"2026-01-02T03:04:05.678Z\""
        );
        let back: Timestamp = serde_json::from_str("\"2026-01-02T04:04:05.678+01:00\"").unwrap();
        assert_eq!(back, t);
        let config = bincode::config::standard();
        let stored = bincode::serde::encode_to_vec(t, config).unwrap();
        let as_text = bincode::serde::encode_to_vec("2026-01-02T03:04:05.678Z", config).unwrap();
        assert_eq!(
            stored, as_text,
            "stored as the same text as before the type existed"
        );
        assert_eq!(t + Duration::hours(1) - t, Duration::hours(1));
    }
}
