//! Bootstrap: everything the run needs before the clock starts. Workspaces come from the
//! operator API, contacts are seeded through the public API (so reads and searches hit
//! real records), and, for webhook writes, each workspace gets an endpoint that points at
//! the load tester's own receiver.

use std::time::{Duration, Instant};

use futures::{StreamExt, TryStreamExt};
use indicatif::{ProgressBar, ProgressStyle};
use reqwest::header::HeaderMap;
use reqwest::{Client, RequestBuilder, StatusCode};
use serde_json::{json, Value};

use super::args::{Class, LoadtestArgs, Mix};
use super::receiver::Receiver;
use super::LoadtestError;

/// Seeded first names; a search asks for one of them, so every search finds contacts.
pub const FIRST_NAMES: [&str; 20] = [
    "Ann", "Ben", "Cara", "Dev", "Eli", "Fay", "Gus", "Hana", "Ivo", "Jun", "Kai", "Lea", "Milo",
    "Nia", "Otto", "Pia", "Quin", "Rae", "Sol", "Tess",
];

/// Workspaces are created this many at a time (the operator API is not what we measure).
const CREATE_CONCURRENCY: usize = 16;

/// A workspace the run drives.
#[derive(Debug, Clone)]
pub struct Workspace {
    pub id: String,
    pub key: String,
    /// Ids of the seeded contacts (reads pick one).
    pub contacts: Vec<u64>,
    /// Sends at 10x the budget.
    pub noisy: bool,
}

/// The outcome of the bootstrap.
pub struct Plan {
    pub workspaces: Vec<Workspace>,
    /// The mix actually run (webhook writes fold into writes when the server refuses
    /// our receiver).
    pub mix: Mix,
    /// The server's budget per minute as its `RateLimit-Limit` header states it; `None`
    /// when the server sent none (its limit is off).
    pub server_budget: Option<u32>,
    /// The budget the run paces to; `None`: unpaced.
    pub budget: Option<u32>,
    /// Receives the webhook deliveries (kept alive for the run).
    pub receiver: Option<Receiver>,
    /// How many distinct first names were seeded (searches pick among them).
    pub seeded_names: usize,
    pub bootstrap_secs: f64,
    /// Things the operator should know (printed to stderr and kept in the report).
    pub notes: Vec<String>,
}

/// A successful answer: status, headers and body.
struct Answer {
    status: StatusCode,
    headers: HeaderMap,
    body: Value,
}

/// Sends, retrying a 429 after its `Retry-After` and a transport error after a short
/// pause: bootstrap requests must land, and a rate-limited server refuses bursts.
async fn send_patiently(
    what: &str,
    build: impl Fn() -> RequestBuilder,
) -> Result<Answer, LoadtestError> {
    const ATTEMPTS: u32 = 30;
    let mut last = String::new();
    for _ in 0..ATTEMPTS {
        match build().send().await {
            Ok(r) => {
                let status = r.status();
                let headers = r.headers().clone();
                if status == StatusCode::TOO_MANY_REQUESTS {
                    let wait = headers
                        .get("retry-after")
                        .and_then(|v| v.to_str().ok())
                        .and_then(|v| v.trim().parse::<u64>().ok())
                        .unwrap_or(1)
                        .clamp(1, 60);
                    last = "429 rate_limited".into();
                    tokio::time::sleep(Duration::from_secs(wait)).await;
                    continue;
                }
                let text = r
                    .text()
                    .await
                    .map_err(|e| LoadtestError::new(format!("{what}: reading the answer: {e}")))?;
                let body = serde_json::from_str(&text).unwrap_or(Value::String(text));
                return Ok(Answer {
                    status,
                    headers,
                    body,
                });
            }
            Err(e) => {
                last = e.to_string();
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
        }
    }
    Err(LoadtestError::new(format!(
        "{what}: gave up after {ATTEMPTS} attempts: {last}"
    )))
}

/// POST /webhooks: an endpoint subscribed to tag.created that delivers to `url`.
async fn create_endpoint(
    client: &Client,
    api: &str,
    key: &str,
    url: &str,
) -> Result<Answer, LoadtestError> {
    send_patiently("creating a webhook endpoint", || {
        client
            .post(format!("{api}/api/v1/webhooks"))
            .bearer_auth(key)
            .json(&json!({
                "url": url,
                "events": ["tag.created"],
                "description": "switchboard loadtest receiver",
            }))
    })
    .await
}

fn unexpected(what: &str, a: &Answer) -> LoadtestError {
    LoadtestError::new(format!(
        "{what}: the server answered {}: {}",
        a.status, a.body
    ))
}

fn progress_bar(show: bool, len: u64, what: &'static str) -> ProgressBar {
    if !show {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new(len);
    if let Ok(style) =
        ProgressStyle::with_template("{spinner} {msg} [{bar:40}] {pos}/{len} ({elapsed})")
    {
        bar.set_style(style.progress_chars("=> "));
    }
    bar.set_message(what);
    bar.enable_steady_tick(Duration::from_millis(200));
    bar
}

/// Creates and seeds everything; `say` prints a note for the operator.
pub async fn bootstrap(
    args: &LoadtestArgs,
    client: &Client,
    progress: bool,
    say: &dyn Fn(&str),
) -> Result<Plan, LoadtestError> {
    let started = Instant::now();
    let api = args.api_url.trim_end_matches('/').to_string();
    let admin = args.operator.base().to_string();
    let mut notes = Vec::new();

    // 1. Is anyone there? A clear message beats a thousand transport errors.
    let health = client
        .get(format!("{api}/health"))
        .send()
        .await
        .map_err(|e| LoadtestError::new(format!("cannot reach the API at {api}: {e}")))?;
    if !health.status().is_success() {
        return Err(LoadtestError::new(format!(
            "GET {api}/health answered {}: is {api} a switchboard API listener?",
            health.status()
        )));
    }

    // 2. Workspaces, through the operator API. The first `noisy` of them are noisy.
    let count = args.workspaces as usize;
    let noisy = args.noisy as usize;
    let stamp = chrono::Utc::now().format("%Y%m%d-%H%M%S").to_string();
    let bar = progress_bar(progress, count as u64, "creating workspaces");
    let workspaces: Vec<Workspace> = futures::stream::iter(0..count)
        .map(|i| {
            let (client, admin, token, stamp, bar) =
                (client, &admin, &args.operator.admin_token, &stamp, &bar);
            async move {
                let name = format!("loadtest {stamp} #{i}");
                let a = send_patiently("creating a workspace", || {
                    client
                        .post(format!("{admin}/admin/workspaces"))
                        .bearer_auth(token)
                        .json(&json!({ "name": name }))
                })
                .await?;
                match a.status {
                    StatusCode::CREATED => {}
                    StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN => {
                        return Err(LoadtestError::new(format!(
                            "the operator API at {admin} refused the admin token ({})",
                            a.status
                        )))
                    }
                    _ => return Err(unexpected("creating a workspace", &a)),
                }
                let field = |k: &str| {
                    a.body[k].as_str().map(str::to_string).ok_or_else(|| {
                        LoadtestError::new(format!(
                            "creating a workspace: the answer has no `{k}`: {}",
                            a.body
                        ))
                    })
                };
                let ws = Workspace {
                    id: field("id")?,
                    key: field("api_key")?,
                    contacts: Vec::new(),
                    noisy: i < noisy,
                };
                bar.inc(1);
                Ok::<_, LoadtestError>(ws)
            }
        })
        .buffered(CREATE_CONCURRENCY)
        .try_collect()
        .await?;
    bar.finish_and_clear();
    let Some(first) = workspaces.first() else {
        return Err(LoadtestError::new("no workspaces to drive"));
    };

    // 3. The server's budget, read from the header every counted answer carries.
    let probe = send_patiently("reading the rate budget", || {
        client
            .get(format!("{api}/api/v1/tags"))
            .bearer_auth(&first.key)
    })
    .await?;
    if !probe.status.is_success() {
        return Err(unexpected(
            "GET /api/v1/tags with a new workspace's key",
            &probe,
        ));
    }
    let server_budget = probe
        .headers
        .get("ratelimit-limit")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u32>().ok());
    let budget = match args.rate_budget {
        Some(0) => None,
        Some(n) => Some(n),
        None => server_budget,
    };
    if args.noisy > 0 && budget.is_none() {
        let note = "the server's rate limit is off and no --rate-budget was given: nothing is \
                    paced, so noisy workspaces send like quiet ones";
        say(note);
        notes.push(note.to_string());
    }
    if let (Some(ours), Some(theirs)) = (budget, server_budget) {
        if ours > theirs {
            let note = format!(
                "--rate-budget {ours} is above the server's budget of {theirs}: quiet \
                 workspaces will get 429s too"
            );
            say(&note);
            notes.push(note);
        }
    }

    if let (Some(rate), Some(budget)) = (args.rate, budget) {
        let allowed = u64::from(budget) * count as u64 / 60;
        if u64::from(rate) > allowed {
            let note = format!(
                "--rate {rate}/s is above what {count} workspaces may send at {budget}/min \
                 each ({allowed}/s): expect 429s (start the server with \
                 SWITCHBOARD_RATE_LIMIT_PER_MINUTE=0 to measure without its limit)"
            );
            say(&note);
            notes.push(note);
        }
    }

    // 4. Webhook endpoints subscribed to tag.created, pointing at our own receiver.
    let mut mix = args.mix;
    let mut receiver = None;
    if args.classes().contains(&Class::WebhookWrites) {
        let r = Receiver::start().await?;
        let a = create_endpoint(client, &api, &first.key, &r.url).await?;
        match a.status {
            StatusCode::CREATED => {
                futures::stream::iter(workspaces.iter().skip(1))
                    .map(|ws| create_endpoint(client, &api, &ws.key, &r.url))
                    .buffer_unordered(CREATE_CONCURRENCY)
                    .map(|a| match a {
                        Ok(a) if a.status == StatusCode::CREATED => Ok(()),
                        Ok(a) => Err(unexpected("creating a webhook endpoint", &a)),
                        Err(e) => Err(e),
                    })
                    .try_collect::<Vec<()>>()
                    .await?;
                receiver = Some(r);
            }
            StatusCode::UNPROCESSABLE_ENTITY if args.phases.is_some() => {
                return Err(LoadtestError::new(format!(
                    "the server refused a webhook endpoint at {}: start it with \
                     SWITCHBOARD_WEBHOOK_ALLOW_PRIVATE=true, or leave webhook_writes out \
                     of --phases",
                    r.url
                )));
            }
            StatusCode::UNPROCESSABLE_ENTITY => {
                let note = format!(
                    "the server refused a webhook endpoint at {} ({}); start it with \
                     SWITCHBOARD_WEBHOOK_ALLOW_PRIVATE=true to measure webhook writes. \
                     Webhook writes run as plain writes.",
                    r.url,
                    a.body["error"]["code"].as_str().unwrap_or("422")
                );
                say(&note);
                notes.push(note);
                mix = mix.without_webhooks();
            }
            _ => return Err(unexpected("creating a webhook endpoint", &a)),
        }
    }

    // 5. Contacts, concurrently but bounded by --connections.
    let per = args.contacts_per_workspace as usize;
    let bar = progress_bar(progress, (count * per) as u64, "seeding contacts");
    let seeded: Vec<(usize, u64)> =
        futures::stream::iter((0..count).flat_map(|w| (0..per).map(move |c| (w, c))))
            .map(|(w, c)| {
                let (key, api, bar) = (&workspaces[w].key, &api, &bar);
                async move {
                    let body = json!({
                        "first_name": FIRST_NAMES[c % FIRST_NAMES.len()],
                        "last_name": format!("Seed{c}"),
                        "email": format!("seed{c}.w{w}@loadtest.example"),
                    });
                    let a = send_patiently("seeding a contact", || {
                        client
                            .post(format!("{api}/api/v1/contacts"))
                            .bearer_auth(key)
                            .json(&body)
                    })
                    .await?;
                    if a.status != StatusCode::CREATED {
                        return Err(unexpected("seeding a contact", &a));
                    }
                    let id = a.body["id"].as_u64().ok_or_else(|| {
                        LoadtestError::new(format!("seeding a contact: no id in {}", a.body))
                    })?;
                    bar.inc(1);
                    Ok::<_, LoadtestError>((w, id))
                }
            })
            .buffer_unordered(args.connections as usize)
            .try_collect()
            .await?;
    bar.finish_and_clear();
    let mut workspaces = workspaces;
    for (w, id) in seeded {
        workspaces[w].contacts.push(id);
    }

    Ok(Plan {
        workspaces,
        mix,
        server_budget,
        budget,
        receiver,
        seeded_names: per.clamp(1, FIRST_NAMES.len()),
        bootstrap_secs: started.elapsed().as_secs_f64(),
        notes,
    })
}
