//! What the workers record: counts by status and latency samples, per request class and
//! per workspace group (quiet or noisy).
//!
//! Each worker owns a [`Recorder`] (no lock on the hot path) and the run merges them at
//! the end. Latencies go into HDR histograms of microseconds (three significant digits),
//! so memory stays small and fixed on long runs and every answer counts; the maximum and
//! the counts are exact.

use std::time::Duration;

use hdrhistogram::Histogram;

use super::args::Class;

/// Three significant digits: a percentile is within 0.1% of the true value.
const SIGNIFICANT_DIGITS: u8 = 3;

/// The outcome of one request.
#[derive(Debug, Clone, Copy)]
pub enum Outcome {
    /// The server answered with this status.
    Status(u16),
    /// No answer: connect, timeout or reset.
    Transport,
}

/// Answers sorted into the buckets the report shows.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct StatusCounts {
    pub ok_200: u64,
    pub created_201: u64,
    pub accepted_202: u64,
    pub rate_limited_429: u64,
    /// 4xx other than 429.
    pub other_4xx: u64,
    pub server_5xx: u64,
    pub transport_errors: u64,
    /// Anything else (other 2xx, 1xx, 3xx).
    pub other: u64,
}

impl StatusCounts {
    fn add(&mut self, outcome: Outcome) {
        match outcome {
            Outcome::Transport => self.transport_errors += 1,
            Outcome::Status(200) => self.ok_200 += 1,
            Outcome::Status(201) => self.created_201 += 1,
            Outcome::Status(202) => self.accepted_202 += 1,
            Outcome::Status(429) => self.rate_limited_429 += 1,
            Outcome::Status(s) if (400..500).contains(&s) => self.other_4xx += 1,
            Outcome::Status(s) if (500..600).contains(&s) => self.server_5xx += 1,
            Outcome::Status(_) => self.other += 1,
        }
    }

    pub fn merge(&mut self, o: &StatusCounts) {
        self.ok_200 += o.ok_200;
        self.created_201 += o.created_201;
        self.accepted_202 += o.accepted_202;
        self.rate_limited_429 += o.rate_limited_429;
        self.other_4xx += o.other_4xx;
        self.server_5xx += o.server_5xx;
        self.transport_errors += o.transport_errors;
        self.other += o.other;
    }

    pub fn total(&self) -> u64 {
        self.ok_200
            + self.created_201
            + self.accepted_202
            + self.rate_limited_429
            + self.other_4xx
            + self.server_5xx
            + self.transport_errors
            + self.other
    }
}

/// Latency samples: an HDR histogram of microseconds plus the exact maximum and count.
#[derive(Debug, Clone)]
pub struct Latencies {
    count: u64,
    max_us: u64,
    histogram: Histogram<u64>,
}

impl Default for Latencies {
    fn default() -> Self {
        Self {
            count: 0,
            max_us: 0,
            // Auto-resizing, so no latency is ever too large to record.
            histogram: Histogram::new(SIGNIFICANT_DIGITS)
                .expect("hdrhistogram takes 0 to 5 significant digits"),
        }
    }
}

impl Latencies {
    pub fn record(&mut self, latency: Duration) {
        let us = u64::try_from(latency.as_micros()).unwrap_or(u64::MAX);
        self.max_us = self.max_us.max(us);
        self.count += 1;
        // Zero is below the histogram's lowest value; a sub-microsecond answer counts as 1.
        // The histogram grows as needed; past its hard limit the value is clamped.
        if self.histogram.record(us.max(1)).is_err() {
            self.histogram.saturating_record(us);
        }
    }

    pub fn merge(&mut self, o: &Latencies) {
        self.count += o.count;
        self.max_us = self.max_us.max(o.max_us);
        if self.histogram.add(&o.histogram).is_err() {
            tracing::warn!("a latency histogram could not be merged");
        }
    }

    /// How many latencies were recorded.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// p50, p90, p99 (from the histogram) and the exact max, in milliseconds. A
    /// percentile is the top of its histogram bucket, which can lie just above the
    /// exact max; it is capped there, so p99 never exceeds max.
    pub fn summary(&self) -> Latency {
        if self.histogram.is_empty() {
            return Latency::default();
        }
        let at = |q: f64| self.histogram.value_at_quantile(q).min(self.max_us) as f64 / 1000.0;
        Latency {
            p50_ms: at(0.50),
            p90_ms: at(0.90),
            p99_ms: at(0.99),
            max_ms: self.max_us as f64 / 1000.0,
        }
    }
}

/// One stream of requests: its status counts and the latencies of those answered.
#[derive(Debug, Clone, Default)]
pub struct Series {
    pub status: StatusCounts,
    latencies: Latencies,
}

impl Series {
    /// Transport errors count but have no latency: a timeout would only say how long
    /// the client waited.
    fn record(&mut self, outcome: Outcome, latency: Duration) {
        self.status.add(outcome);
        if !matches!(outcome, Outcome::Transport) {
            self.latencies.record(latency);
        }
    }

    pub fn merge(&mut self, o: &Series) {
        self.status.merge(&o.status);
        self.latencies.merge(&o.latencies);
    }

    pub fn requests(&self) -> u64 {
        self.status.total()
    }

    /// Requests that got an answer (their latency was seen).
    pub fn answered(&self) -> u64 {
        self.latencies.count()
    }

    /// p50, p90, p99 and the exact max, in milliseconds.
    pub fn latency(&self) -> Latency {
        self.latencies.summary()
    }
}

/// Latency percentiles in milliseconds; all 0 when nothing was answered.
#[derive(Debug, Clone, Copy, Default, PartialEq, serde::Serialize)]
pub struct Latency {
    pub p50_ms: f64,
    pub p90_ms: f64,
    pub p99_ms: f64,
    pub max_ms: f64,
}

/// Which workspaces a request came from; the health baseline has none.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Group {
    Quiet,
    Noisy,
}

/// A worker's own record of everything it sent.
#[derive(Debug, Clone)]
pub struct Recorder {
    pub classes: Vec<Series>,
    pub quiet: Series,
    pub noisy: Series,
    dice: Dice,
}

impl Recorder {
    pub fn new(seed: u64) -> Self {
        Self {
            classes: Class::ALL.iter().map(|_| Series::default()).collect(),
            quiet: Series::default(),
            noisy: Series::default(),
            dice: Dice::new(seed),
        }
    }

    pub fn record(
        &mut self,
        class: Class,
        group: Option<Group>,
        outcome: Outcome,
        latency: Duration,
    ) {
        self.classes[class.index()].record(outcome, latency);
        match group {
            Some(Group::Quiet) => self.quiet.record(outcome, latency),
            Some(Group::Noisy) => self.noisy.record(outcome, latency),
            None => {}
        }
    }

    pub fn merge(&mut self, o: &Recorder) {
        for (mine, theirs) in self.classes.iter_mut().zip(&o.classes) {
            mine.merge(theirs);
        }
        self.quiet.merge(&o.quiet);
        self.noisy.merge(&o.noisy);
    }

    pub fn class(&self, class: Class) -> &Series {
        &self.classes[class.index()]
    }

    /// Every request recorded, whatever its class.
    pub fn all(&self) -> Series {
        let mut all = Series::default();
        for s in &self.classes {
            all.merge(s);
        }
        all
    }

    /// A fresh roll for the workers (mix and target choice), from the same cheap source.
    pub fn dice(&mut self) -> &mut Dice {
        &mut self.dice
    }
}

/// xorshift64*: a tiny, `Send`, never-failing random source. The load tester needs
/// spread, not cryptographic quality, and a per-worker source keeps workers independent.
#[derive(Debug, Clone)]
pub struct Dice(u64);

impl Dice {
    pub fn new(seed: u64) -> Self {
        // Never zero: xorshift would stay at zero forever.
        Self((seed ^ 0x9E37_79B9_7F4A_7C15) | 1)
    }

    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// Uniform enough in `0..n` (0 when n is 0).
    pub fn below(&mut self, n: u64) -> u64 {
        if n == 0 {
            0
        } else {
            self.next_u64() % n
        }
    }

    pub fn index(&mut self, len: usize) -> usize {
        self.below(len as u64) as usize
    }
}

/// A distinct seed per worker and per run.
pub fn seed(worker: usize) -> u64 {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0);
    now ^ (worker as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_come_within_a_tenth_of_a_percent_and_the_max_is_exact() {
        let mut r = Recorder::new(7);
        for ms in 1..=100u64 {
            r.record(
                Class::Reads,
                Some(Group::Quiet),
                Outcome::Status(200),
                Duration::from_millis(ms),
            );
        }
        r.record(
            Class::Reads,
            Some(Group::Noisy),
            Outcome::Transport,
            Duration::from_secs(9),
        );
        let l = r.class(Class::Reads).latency();
        let close = |got: f64, want: f64| (got - want).abs() <= want * 0.001;
        assert!(close(l.p50_ms, 50.0), "{l:?}");
        assert!(close(l.p90_ms, 90.0), "{l:?}");
        assert!(close(l.p99_ms, 99.0), "{l:?}");
        assert_eq!(l.max_ms, 100.0);
        assert_eq!(r.class(Class::Reads).requests(), 101);
        assert_eq!(r.class(Class::Reads).status.transport_errors, 1);
        assert_eq!(r.noisy.latency(), Latency::default());
        let all = r.all();
        assert_eq!((all.requests(), all.answered()), (101, 100));
    }

    #[test]
    fn a_sub_microsecond_latency_still_counts_and_nothing_recorded_is_all_zero() {
        let mut l = Latencies::default();
        assert_eq!(l.summary(), Latency::default());
        l.record(Duration::from_nanos(300));
        l.record(Duration::from_millis(2));
        assert_eq!(l.count(), 2);
        let s = l.summary();
        assert!(s.p50_ms > 0.0 && s.p50_ms <= 0.001, "{s:?}");
        assert_eq!(s.max_ms, 2.0);
        // 116,666 us sits in a bucket whose top is above it.
        let mut l = Latencies::default();
        for _ in 0..10 {
            l.record(Duration::from_micros(116_666));
        }
        let s = l.summary();
        assert_eq!((s.p99_ms, s.max_ms), (116.666, 116.666));
    }

    #[test]
    fn merged_series_count_every_answer_of_both() {
        let (mut a, mut b) = (Series::default(), Series::default());
        for i in 0..1000 {
            a.record(Outcome::Status(201), Duration::from_micros(i));
            b.record(Outcome::Status(201), Duration::from_millis(i));
        }
        a.merge(&b);
        assert_eq!(a.answered(), 2000);
        assert_eq!(a.latencies.histogram.len(), 2000);
        assert_eq!(a.status.created_201, 2000);
        assert_eq!(a.latency().max_ms, 999.0);
    }

    #[test]
    fn statuses_land_in_their_buckets() {
        let mut c = StatusCounts::default();
        for s in [200, 201, 202, 429, 404, 422, 500, 503, 204] {
            c.add(Outcome::Status(s));
        }
        c.add(Outcome::Transport);
        assert_eq!(
            c,
            StatusCounts {
                ok_200: 1,
                created_201: 1,
                accepted_202: 1,
                rate_limited_429: 1,
                other_4xx: 2,
                server_5xx: 2,
                transport_errors: 1,
                other: 1,
            }
        );
    }
}
