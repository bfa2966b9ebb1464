//! The per-workspace request budget, shared by every credential of the workspace.
//!
//! governor's GCRA with `Quota::per_minute(n)`: a full budget of `n` requests that refills
//! one request every `60/n` seconds (500 ms at 120), not a fixed window. Headers:
//! `RateLimit-Limit` (n), `RateLimit-Remaining` (requests that may be sent right now),
//! `RateLimit-Reset` (seconds until the budget is full again). Over budget: 429
//! `rate_limited` with `Retry-After` (seconds until the next request is allowed).

use std::num::NonZeroU32;
use std::sync::Arc;
use std::time::Duration;

use axum::http::{HeaderMap, HeaderName, HeaderValue, StatusCode};
use governor::clock::{Clock, DefaultClock};
use governor::middleware::StateInformationMiddleware;
use governor::state::keyed::DefaultKeyedStateStore;
use governor::{Quota, RateLimiter};
use switchboard_actors::ids::WorkspaceId;

use super::error::ApiError;

type Limiter = RateLimiter<
    WorkspaceId,
    DefaultKeyedStateStore<WorkspaceId>,
    DefaultClock,
    StateInformationMiddleware,
>;

#[derive(Clone)]
pub struct RateLimit {
    limiter: Option<Arc<Limiter>>,
    per_minute: u32,
    rejections: Arc<std::sync::atomic::AtomicU64>,
}

/// What is left of a workspace's budget after a request.
pub struct Budget {
    limit: u32,
    remaining: u32,
    reset: Duration,
}

impl Budget {
    pub fn write_headers(&self, headers: &mut HeaderMap) {
        headers.insert(LIMIT, HeaderValue::from(self.limit));
        headers.insert(REMAINING, HeaderValue::from(self.remaining));
        headers.insert(RESET, HeaderValue::from(ceil_secs(self.reset)));
    }
}

const LIMIT: HeaderName = HeaderName::from_static("ratelimit-limit");
const REMAINING: HeaderName = HeaderName::from_static("ratelimit-remaining");
const RESET: HeaderName = HeaderName::from_static("ratelimit-reset");

fn ceil_secs(d: Duration) -> u64 {
    d.as_millis().div_ceil(1000) as u64
}

impl RateLimit {
    /// `per_minute` 0 turns the limit off.
    pub fn new(per_minute: u32) -> Self {
        let limiter = NonZeroU32::new(per_minute)
            .map(|n| Arc::new(RateLimiter::keyed(Quota::per_minute(n)).with_middleware()));
        Self {
            limiter,
            per_minute,
            rejections: Default::default(),
        }
    }

    pub fn rejections(&self) -> u64 {
        self.rejections.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Spends one request of `ws`'s budget. `Ok(None)` when the limit is off.
    pub fn check(&self, ws: &WorkspaceId) -> Result<Option<Budget>, ApiError> {
        let Some(limiter) = &self.limiter else {
            return Ok(None);
        };
        let interval = Duration::from_secs(60) / self.per_minute;
        match limiter.check_key(ws) {
            Ok(snapshot) => {
                let remaining = snapshot.remaining_burst_capacity();
                Ok(Some(Budget {
                    limit: self.per_minute,
                    remaining,
                    reset: interval * (self.per_minute - remaining),
                }))
            }
            Err(not_until) => {
                self.rejections
                    .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let wait = not_until.wait_time_from(DefaultClock::default().now());
                let budget = Budget {
                    limit: self.per_minute,
                    remaining: 0,
                    reset: interval * self.per_minute,
                };
                let mut headers = HeaderMap::new();
                budget.write_headers(&mut headers);
                let mut error = ApiError::new(
                    StatusCode::TOO_MANY_REQUESTS,
                    "rate_limited",
                    format!(
                        "this workspace sent more than {} requests a minute; retry after the Retry-After seconds",
                        self.per_minute
                    ),
                );
                error
                    .headers
                    .extend(headers.iter().map(|(n, v)| (n.clone(), v.clone())));
                Err(error.with_header(
                    axum::http::header::RETRY_AFTER,
                    HeaderValue::from(ceil_secs(wait).max(1)),
                ))
            }
        }
    }

    /// Forgets workspaces whose budget is full again, bounding memory.
    pub fn prune(&self) {
        if let Some(l) = &self.limiter {
            l.retain_recent();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_workspace_gets_its_burst_then_429_and_others_are_untouched() {
        let rl = RateLimit::new(3);
        let a = WorkspaceId::generate();
        let b = WorkspaceId::generate();
        for left in [2, 1, 0] {
            assert_eq!(rl.check(&a).unwrap().unwrap().remaining, left);
        }
        let refused = rl.check(&a).err().unwrap();
        assert_eq!(refused.status, StatusCode::TOO_MANY_REQUESTS);
        assert!(refused
            .headers
            .iter()
            .any(|(n, _)| n == axum::http::header::RETRY_AFTER));
        assert_eq!(rl.check(&b).unwrap().unwrap().remaining, 2);
        assert_eq!(rl.rejections(), 1);
    }

    #[test]
    fn zero_turns_the_limit_off() {
        let rl = RateLimit::new(0);
        let a = WorkspaceId::generate();
        for _ in 0..1000 {
            assert!(rl.check(&a).unwrap().is_none());
        }
    }
}
