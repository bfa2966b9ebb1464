//! CPU time around each phase: the server's from its operator route `GET /admin/process`,
//! the load tester's own from the same reading of its process. CPU time is cumulative,
//! so the difference of two readings over the requests answered between them is the CPU
//! each request cost, whatever else the machine was doing.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

use reqwest::{Client, StatusCode};

use crate::admin::process::{self, ProcessUsage};

/// Reads the server's figures; remembers when the server has no such route, so that it
/// is said once rather than per phase, and why the first reading that failed did.
pub struct UsageProbe {
    client: Client,
    url: String,
    token: String,
    unavailable: AtomicBool,
    first_failure: Mutex<Option<String>>,
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
            first_failure: Mutex::new(None),
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
            Ok(r) if r.status() == StatusCode::OK => match r.json::<ProcessUsage>().await {
                Ok(u) if u.cpu_s().is_some() => Ok(u),
                Ok(_) => Err("its answer has no CPU figures (a server not on Linux)".into()),
                Err(e) => Err(format!("its answer could not be read: {e}")),
            },
            // An older server without the route: do not ask again.
            Ok(r) if r.status() == StatusCode::NOT_FOUND => {
                self.unavailable.store(true, Ordering::Relaxed);
                Err("it answered 404 (a server without the route)".into())
            }
            Ok(r) => Err(format!("it answered {}", r.status())),
            Err(e) => Err(format!(
                "no answer (did the server stop?): {}",
                with_causes(&e)
            )),
        };
        usage.map_err(|why| self.failed(why)).ok()
    }

    /// Keeps the first reason a reading failed: later ones usually follow from it.
    fn failed(&self, why: String) {
        let mut first = self.first_failure.lock().unwrap_or_else(|e| e.into_inner());
        first.get_or_insert(why);
    }

    /// The note for the report when a reading of the server's figures failed.
    pub fn note(&self) -> String {
        let why = self
            .first_failure
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
            .unwrap_or_else(|| "the reason is unknown".into());
        format!(
            "reading the server's CPU figures at {} failed: {why}; CPU per request is not \
             reported for the phases it leaves without a reading",
            self.url
        )
    }
}

/// An error with what caused it ("connection refused" is a cause of reqwest's "error
/// sending request").
fn with_causes(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        text.push_str(": ");
        text.push_str(&c.to_string());
        cause = c.source();
    }
    text
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

    #[tokio::test]
    async fn the_note_says_the_reading_failed_and_why() {
        // A port nobody listens on: bound, then released.
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        drop(listener);
        let client = Client::builder().no_proxy().build().unwrap();
        let probe = UsageProbe::new(client, &url, "token");
        assert!(probe.read().await.server.is_none());
        let note = probe.note();
        assert!(note.contains("failed: no answer"), "{note}");
        assert!(!note.contains("not on Linux"), "{note}");
    }
}
