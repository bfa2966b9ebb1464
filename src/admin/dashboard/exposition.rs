//! Reading the Prometheus text that `/metrics` serves, so that the dashboard shows the
//! very counters a scraper sees: sample lookup by name and labels, and quantiles of a
//! histogram's bucket counts (as PromQL's `histogram_quantile` works them out).

/// One scrape: every sample line as (name, labels text, value).
pub struct Exposition {
    samples: Vec<(String, String, f64)>,
}

impl Exposition {
    pub fn parse(text: &str) -> Self {
        let samples = text
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with('#'))
            .filter_map(parse_line)
            .collect();
        Self { samples }
    }

    /// The sum of every sample of `name` whose labels include each `label="value"`.
    pub fn sum(&self, name: &str, labels: &[(&str, &str)]) -> f64 {
        self.samples
            .iter()
            .filter(|(n, l, _)| n == name && labels.iter().all(|(k, v)| label(l, k) == Some(*v)))
            .map(|(_, _, v)| v)
            .sum()
    }

    /// The values of label `key` over the samples of `name`, each with its sample's value.
    pub fn by_label<'a>(
        &'a self,
        name: &'a str,
        key: &'a str,
    ) -> impl Iterator<Item = (&'a str, f64)> {
        self.samples
            .iter()
            .filter(move |(n, _, _)| n == name)
            .filter_map(move |(_, l, v)| label(l, key).map(|k| (k, *v)))
    }

    /// The cumulative bucket counts of histogram `name` (`<name>_bucket`), summed over
    /// every other label, by upper bound, ascending; `+Inf` last.
    pub fn buckets(&self, name: &str) -> Buckets {
        let bucket = format!("{name}_bucket");
        let mut out: Vec<(f64, f64)> = Vec::new();
        for (le, v) in self.by_label(&bucket, "le") {
            let Some(bound) = parse_value(le) else {
                continue;
            };
            match out.iter_mut().find(|(b, _)| *b == bound) {
                Some((_, count)) => *count += v,
                None => out.push((bound, v)),
            }
        }
        out.sort_by(|a, b| a.0.total_cmp(&b.0));
        Buckets(out)
    }
}

/// Cumulative counts by upper bound, ascending.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Buckets(pub Vec<(f64, f64)>);

impl Buckets {
    /// What was counted since `earlier` (a scrape of the same histogram).
    pub fn since(&self, earlier: &Buckets) -> Buckets {
        Buckets(
            self.0
                .iter()
                .map(|(bound, count)| {
                    let before = earlier
                        .0
                        .iter()
                        .find(|(b, _)| b == bound)
                        .map_or(0.0, |(_, c)| *c);
                    (*bound, (count - before).max(0.0))
                })
                .collect(),
        )
    }

    /// Observations counted.
    pub fn count(&self) -> f64 {
        self.0.last().map_or(0.0, |(_, c)| *c)
    }

    /// The `q` quantile (0..=1), interpolated linearly inside its bucket; the highest
    /// finite bound when it falls in `+Inf`; None without observations.
    pub fn quantile(&self, q: f64) -> Option<f64> {
        let total = self.count();
        if total <= 0.0 {
            return None;
        }
        let rank = q.clamp(0.0, 1.0) * total;
        let (mut lower, mut below) = (0.0, 0.0);
        for (bound, count) in &self.0 {
            if *count >= rank {
                if bound.is_infinite() {
                    return Some(lower);
                }
                let inside = count - below;
                let share = if inside > 0.0 {
                    (rank - below) / inside
                } else {
                    1.0
                };
                return Some(lower + (bound - lower) * share);
            }
            (lower, below) = (*bound, *count);
        }
        Some(lower)
    }
}

fn parse_line(line: &str) -> Option<(String, String, f64)> {
    let (series, value) = line.rsplit_once(' ')?;
    let value = parse_value(value)?;
    match series.split_once('{') {
        Some((name, rest)) => Some((name.to_string(), rest.strip_suffix('}')?.to_string(), value)),
        None => Some((series.to_string(), String::new(), value)),
    }
}

fn parse_value(raw: &str) -> Option<f64> {
    match raw {
        "+Inf" => Some(f64::INFINITY),
        "-Inf" => Some(f64::NEG_INFINITY),
        other => other.parse().ok(),
    }
}

/// The value of `key` in a labels text such as `kind="workspace",le="0.5"`.
fn label<'a>(labels: &'a str, key: &str) -> Option<&'a str> {
    let mut rest = labels;
    while let Some((name, after)) = rest.split_once("=\"") {
        let (value, tail) = after.split_once('"')?;
        if name.trim_start_matches(',').trim() == key {
            return Some(value);
        }
        rest = tail;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = r#"
# TYPE switchboard_actors_live gauge
switchboard_actors_live{kind="workspace"} 3
switchboard_actors_live{kind="endpoint_delivery"} 1
switchboard_http_requests_total{route="/api/v1/tags",method="POST",status="201"} 5
switchboard_http_requests_total{route="/api/v1/tags",method="GET",status="429"} 2
switchboard_http_requests_total{route="/api/v1/tags/{id}",method="PATCH",status="200"} 1
switchboard_rate_limited_total 2
switchboard_http_request_seconds_bucket{route="/a",le="0.001"} 2
switchboard_http_request_seconds_bucket{route="/a",le="0.01"} 8
switchboard_http_request_seconds_bucket{route="/a",le="+Inf"} 10
switchboard_http_request_seconds_bucket{route="/b",le="0.001"} 0
switchboard_http_request_seconds_bucket{route="/b",le="0.01"} 0
switchboard_http_request_seconds_bucket{route="/b",le="+Inf"} 0
switchboard_http_request_seconds_sum{route="/a"} 0.5
"#;

    #[test]
    fn samples_are_summed_by_name_and_labels() {
        let e = Exposition::parse(TEXT);
        assert_eq!(e.sum("switchboard_http_requests_total", &[]), 8.0);
        assert_eq!(
            e.sum(
                "switchboard_http_requests_total",
                &[("route", "/api/v1/tags/{id}")]
            ),
            1.0
        );
        assert_eq!(
            e.sum("switchboard_http_requests_total", &[("status", "429")]),
            2.0
        );
        assert_eq!(e.sum("switchboard_rate_limited_total", &[]), 2.0);
        assert_eq!(e.sum("switchboard_nothing", &[]), 0.0);
        let kinds: Vec<_> = e.by_label("switchboard_actors_live", "kind").collect();
        assert_eq!(kinds, [("workspace", 3.0), ("endpoint_delivery", 1.0)]);
    }

    #[test]
    fn quantiles_interpolate_inside_the_bucket_like_histogram_quantile() {
        let b = Exposition::parse(TEXT).buckets("switchboard_http_request_seconds");
        assert_eq!(b.0, [(0.001, 2.0), (0.01, 8.0), (f64::INFINITY, 10.0)]);
        // rank 5 of 10: 3 of the 6 observations inside (0.001, 0.01].
        let p50 = b.quantile(0.5).unwrap();
        assert!((p50 - 0.0055).abs() < 1e-9, "{p50}");
        // rank 9.9 falls in +Inf: the highest finite bound.
        assert_eq!(b.quantile(0.99), Some(0.01));
        assert_eq!(Buckets::default().quantile(0.5), None);
    }

    #[test]
    fn a_window_counts_only_what_came_after_its_start() {
        let before = Buckets(vec![(0.001, 2.0), (f64::INFINITY, 4.0)]);
        let after = Buckets(vec![(0.001, 2.0), (f64::INFINITY, 7.0)]);
        let window = after.since(&before);
        assert_eq!(window.0, [(0.001, 0.0), (f64::INFINITY, 3.0)]);
        assert_eq!(window.quantile(0.5), Some(0.001));
    }
}
