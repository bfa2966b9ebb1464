//! The requests themselves: how each class is built and sent, shared by the closed-loop
//! workers and the open-loop dispatcher.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use reqwest::{Client, RequestBuilder};
use serde_json::json;

use super::args::{Class, Mix};
use super::deliveries::{tag_name, Deliveries};
use super::plan::{Plan, Workspace, FIRST_NAMES};
use super::stats::{Dice, Group, Outcome};

/// Customers per workspace that the messages class writes as.
const CUSTOMERS_PER_WORKSPACE: u64 = 200;

/// What every sender shares.
pub struct Traffic {
    client: Client,
    api: String,
    pub workspaces: Vec<Workspace>,
    seeded_names: usize,
    /// The run's marker, in every webhook write's tag name.
    run: String,
    /// Webhook writes are entered here, when the receiver runs.
    deliveries: Option<Arc<Deliveries>>,
    /// Requests answered or failed so far (the progress bar shows it).
    pub requests: AtomicU64,
    /// Makes every written email and tag name unique.
    sequence: AtomicU64,
    first_error: std::sync::Mutex<Option<String>>,
}

/// What a worker picks from: one class alone, or a mix.
#[derive(Debug, Clone, Copy)]
pub enum Load {
    Only(Class),
    Mix(Mix),
}

impl Load {
    pub fn pick(&self, dice: &mut Dice) -> Class {
        match self {
            Load::Only(class) => *class,
            Load::Mix(mix) => mix.pick(dice.below(u64::from(mix.total())) as u32),
        }
    }
}

/// One request sent: what it was, from which workspaces, and how it went.
#[derive(Debug, Clone, Copy)]
pub struct Sent {
    pub class: Class,
    /// `None` for GET /health, which belongs to no workspace.
    pub group: Option<Group>,
    pub outcome: Outcome,
    pub latency: Duration,
}

impl Traffic {
    pub fn new(plan: &Plan, client: Client, api: &str) -> Self {
        Self {
            client,
            api: api.trim_end_matches('/').to_string(),
            workspaces: plan.workspaces.clone(),
            seeded_names: plan.seeded_names,
            run: plan.run.clone(),
            deliveries: plan.receiver.as_ref().map(|r| r.deliveries.clone()),
            requests: AtomicU64::new(0),
            sequence: AtomicU64::new(0),
            first_error: std::sync::Mutex::new(None),
        }
    }

    /// The first transport error seen, to say why they happened.
    pub fn first_error(&self) -> Option<String> {
        self.first_error.lock().ok().and_then(|e| e.clone())
    }

    /// One request of `class` against workspace `w`, timed to the last byte of the
    /// answer. A webhook write is entered in the delivery ledger just before it leaves.
    pub async fn send(&self, w: &Workspace, class: Class, dice: &mut Dice) -> Sent {
        let (req, write) = self.request(w, class, dice);
        let group = match class {
            Class::Health => None,
            _ if w.noisy => Some(Group::Noisy),
            _ => Some(Group::Quiet),
        };
        let started = Instant::now();
        let ledger = self.deliveries.as_deref().zip(write);
        if let Some((ledger, n)) = ledger {
            ledger.sent(n, started);
        }
        let outcome = self.exchange(req).await;
        let latency = started.elapsed();
        if let (Some((ledger, n)), Outcome::Status(201)) = (ledger, outcome) {
            ledger.accepted(n);
        }
        Sent {
            class,
            group,
            outcome,
            latency,
        }
    }

    /// Sends and reads the whole body.
    async fn exchange(&self, req: RequestBuilder) -> Outcome {
        let outcome = match req.send().await {
            Ok(r) => {
                let status = r.status().as_u16();
                match r.bytes().await {
                    Ok(_) => Outcome::Status(status),
                    Err(e) => self.transport(e),
                }
            }
            Err(e) => self.transport(e),
        };
        self.requests.fetch_add(1, Ordering::Relaxed);
        outcome
    }

    fn transport(&self, e: reqwest::Error) -> Outcome {
        if let Ok(mut first) = self.first_error.lock() {
            if first.is_none() {
                *first = Some(e.to_string());
            }
        }
        Outcome::Transport
    }

    /// The request of `class` against workspace `w`, and the write number of a webhook
    /// write.
    fn request(
        &self,
        w: &Workspace,
        class: Class,
        dice: &mut Dice,
    ) -> (RequestBuilder, Option<u64>) {
        let api = &self.api;
        let mut write = None;
        let req = match class {
            Class::Health => return (self.client.get(format!("{api}/health")), None),
            Class::Reads => {
                let id = w.contacts.get(dice.index(w.contacts.len())).copied();
                // Without seeded contacts a read asks for an id that does not exist (404).
                let id = id.unwrap_or(u64::MAX >> 1);
                self.client.get(format!("{api}/api/v1/contacts/{id}"))
            }
            Class::Writes => {
                let n = self.sequence.fetch_add(1, Ordering::Relaxed);
                self.client
                    .post(format!("{api}/api/v1/contacts"))
                    .json(&json!({
                        "first_name": FIRST_NAMES[(n as usize) % FIRST_NAMES.len()],
                        "last_name": "Writer",
                        "email": format!("w{n}@loadtest.example"),
                    }))
            }
            Class::Searches => {
                let name = FIRST_NAMES[dice.index(self.seeded_names)];
                self.client
                    .get(format!("{api}/api/v1/contacts"))
                    .query(&[("q", name)])
            }
            Class::WebhookWrites => {
                let n = self.sequence.fetch_add(1, Ordering::Relaxed);
                write = Some(n);
                self.client
                    .post(format!("{api}/api/v1/tags"))
                    .json(&json!({ "name": tag_name(&self.run, n) }))
            }
            Class::Messages => {
                let n = self.sequence.fetch_add(1, Ordering::Relaxed);
                // A pool of customers, so that messages land in existing conversations too.
                let customer = dice.below(CUSTOMERS_PER_WORKSPACE);
                self.client
                    .post(format!("{api}/api/v1/messages"))
                    .json(&json!({
                        "contact": {"phone": format!("+1555{customer:07}"), "name": "Load Customer"},
                        "text": format!("Hello, is order {n} on its way?"),
                    }))
            }
        };
        (req.bearer_auth(&w.key), write)
    }
}
