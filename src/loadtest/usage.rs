//! CPU time around each phase: the server's from its operator route `GET /admin/process`,
//! the load tester's own from the same reading of its process. CPU time is cumulative,
//! so the difference of two readings over the requests answered between them is the CPU
//! each request cost, whatever else the machine was doing.

use std::sync::atomic::{AtomicBool, Ordering};

use reqwest::{Client, StatusCode};

use crate::admin::process::{self, ProcessUsage};

/// Reads the server's figures; remembers when the server has no such route, so that it
/// is said once rather than per phase.
pub struct UsageProbe {
    client: Client,
    url: String,
    token: String,
    unavailable: AtomicBool,
}

/// One reading of both processes.
#[derive(Debug, Clone, Copy, Default)]
pub struct Reading {
    /// `None`: the server did not answer its figures.
    pub server: Option<ProcessUsage>,
    pub client: ProcessUsage,
}

/// CPU consumed between two readings, in seconds, and the server's memory at the second.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Consumed {
    pub server_cpu_s: Option<f64>,
    pub client_cpu_s: Option<f64>,
    pub server_resident_memory_bytes: Option<u64>,
}

impl Consumed {
    pub fn between(before: &Reading, after: &Reading) -> Self {
        let spent = |a: Option<f64>, b: Option<f64>| Some((b? - a?).max(0.0));
        Self {
            server_cpu_s: spent(
                before.server.and_then(|u| u.cpu_s()),
                after.server.and_then(|u| u.cpu_s()),
            ),
            client_cpu_s: spent(before.client.cpu_s(), after.client.cpu_s()),
            server_resident_memory_bytes: after.server.and_then(|u| u.resident_memory_bytes),
        }
    }
}

impl UsageProbe {
    pub fn new(client: Client, admin_url: &str, token: &str) -> Self {
        Self {
            client,
            url: format!("{}/admin/process", admin_url.trim_end_matches('/')),
            token: token.to_string(),
            unavailable: AtomicBool::new(false),
        }
    }

    /// Both processes' figures now.
    pub async fn read(&self) -> Reading {
        Reading {
            server: self.server().await,
            client: process::current(),
        }
    }

    async fn server(&self) -> Option<ProcessUsage> {
        if self.unavailable.load(Ordering::Relaxed) {
            return None;
        }
        let answer = self
            .client
            .get(&self.url)
            .bearer_auth(&self.token)
            .send()
            .await;
        let usage = match answer {
            Ok(r) if r.status() == StatusCode::OK => r.json::<ProcessUsage>().await.ok(),
            // An older server without the route: do not ask again.
            Ok(r) if r.status() == StatusCode::NOT_FOUND => {
                self.unavailable.store(true, Ordering::Relaxed);
                None
            }
            _ => None,
        };
        usage.filter(|u| u.cpu_s().is_some())
    }

    /// The note for the report when the server gave no CPU figures.
    pub fn note(&self) -> String {
        format!(
            "the server gave no CPU figures at {} (a server without the route, or not on \
             Linux): CPU per request is not reported",
            self.url
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn usage(user: f64, system: f64) -> ProcessUsage {
        ProcessUsage {
            user_cpu_s: Some(user),
            system_cpu_s: Some(system),
            resident_memory_bytes: Some(1 << 20),
            peak_resident_memory_bytes: Some(1 << 21),
        }
    }

    #[test]
    fn cpu_consumed_is_the_difference_of_user_plus_system() {
        let before = Reading {
            server: Some(usage(1.0, 0.5)),
            client: usage(2.0, 0.0),
        };
        let after = Reading {
            server: Some(usage(3.0, 1.0)),
            client: usage(2.25, 0.25),
        };
        let c = Consumed::between(&before, &after);
        assert_eq!(c.server_cpu_s, Some(2.5));
        assert_eq!(c.client_cpu_s, Some(0.5));
        assert_eq!(c.server_resident_memory_bytes, Some(1 << 20));
    }

    #[test]
    fn a_missing_reading_gives_no_figure_rather_than_a_wrong_one() {
        let known = Reading {
            server: Some(usage(1.0, 0.0)),
            client: usage(1.0, 0.0),
        };
        let blind = Reading {
            server: None,
            client: ProcessUsage::default(),
        };
        let c = Consumed::between(&known, &blind);
        assert_eq!(c, Consumed::default());
        let c = Consumed::between(&blind, &known);
        assert_eq!((c.server_cpu_s, c.client_cpu_s), (None, None));
    }
}
