//! Bootstrap: everything the run needs before the clock starts. Workspaces come from the
//! operator API, contacts are seeded through the public API (so reads and searches hit
//! real records), and, for webhook writes, each workspace gets an endpoint that points at
//! the load tester's own receiver. [`remove_endpoints`] deletes those endpoints at the
//! end, since nothing will answer at the receiver's port once the run is over; the
//! workspaces and their records stay (the operator API deletes no workspace).

use std::time::{Duration, Instant};

use futures::{StreamExt, TryStreamExt};
use indicatif::{ProgressBar, ProgressStyle};
use reqwest::header::HeaderMap;
use reqwest::{Client, RequestBuilder, StatusCode};
use serde_json::{json, Value};

use super::args::{Class, LoadtestArgs, Mix};
use super::receiver::Receiver;
use super::schedule::Turns;

use super::stats::{seed, Dice};
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
    /// The id of the webhook endpoint made for the run's receiver, to delete at the end.
    pub webhook_endpoint: Option<String>,
}

/// The outcome of the bootstrap.
pub struct Plan {
    /// A random marker of this run, in its tag names and its receiver's path, so that a
    /// late delivery of an earlier run is never taken for one of this run.
    pub run: String,
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
    send_with_attempts(what, 30, build).await
}

/// [`send_patiently`] with at most `attempts` tries.
async fn send_with_attempts(
    what: &str,
    attempts: u32,
    build: impl Fn() -> RequestBuilder,
) -> Result<Answer, LoadtestError> {
    let mut last = String::new();
    for _ in 0..attempts {
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
        "{what}: gave up after {attempts} attempts: {last}"
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
    let run = format!("{:08x}", Dice::new(seed(0)).next_u64() >> 32);
    let bar = progress_bar(progress, count as u64, "creating workspaces");
    let workspaces: Vec<Workspace> = futures::stream::iter(0..count)
        .map(|i| {
            let (client, admin, token, stamp, run, bar) = (
                client,
                &admin,
                &args.operator.admin_token,
                &stamp,
                &run,
                &bar,
            );
            async move {
                let name = format!("loadtest {stamp} {run} #{i}");
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
                    webhook_endpoint: None,
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
    // An open loop shares its rate by weight, paced or not (see `Turns`).
    if args.noisy > 0 && budget.is_none() && args.rate.is_none() {
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
        let turns = Turns::new(count, noisy);
        let quiet_per_minute = turns.quiet_share(rate) * 60.0;
        if noisy > 0 && quiet_per_minute > f64::from(budget) {
            let note = format!(
                "at --rate {rate}/s each quiet workspace sends {quiet_per_minute:.0}/min, \
                 above the budget of {budget}/min: quiet workspaces will get 429s too"
            );
            say(&note);
            notes.push(note);
        }
    }

    // 4. Webhook endpoints subscribed to tag.created, each pointing at its own path of
    // our receiver (so the receiver knows which secret signs its deliveries).
    let mut workspaces = workspaces;
    let mut mix = args.mix();
    let mut receiver = None;
    if args.classes().contains(&Class::WebhookWrites) {
        let r = Receiver::start(&run).await?;
        let a = create_endpoint(client, &api, &workspaces[0].key, &r.url_for(0)).await?;
        match a.status {
            StatusCode::CREATED => {
                let made = endpoint_made(&a)?;
                r.know_secret(0, made.secret);
                workspaces[0].webhook_endpoint = Some(made.id);
                let rest: Vec<Result<(usize, MadeEndpoint), LoadtestError>> =
                    futures::stream::iter(workspaces.iter().enumerate().skip(1))
                        .map(|(i, ws)| {
                            let (api, url) = (&api, r.url_for(i));
                            async move {
                                let a = create_endpoint(client, api, &ws.key, &url).await?;
                                if a.status != StatusCode::CREATED {
                                    return Err(unexpected("creating a webhook endpoint", &a));
                                }
                                Ok((i, endpoint_made(&a)?))
                            }
                        })
                        .buffer_unordered(CREATE_CONCURRENCY)
                        .collect()
                        .await;
                let mut failure = None;
                for made in rest {
                    match made {
                        Ok((i, made)) => {
                            r.know_secret(i, made.secret);
                            workspaces[i].webhook_endpoint = Some(made.id);
                        }
                        Err(e) => failure = failure.or(Some(e)),
                    }
                }
                // Those made before a failure are deleted too: nothing else would.
                if let Some(e) = failure {
                    if let Some(note) = remove_endpoints(client, &api, &workspaces).await {
                        say(&note);
                    }
                    return Err(e);
                }
                receiver = Some(r);
            }
            // Webhook writes asked for by name are not quietly turned into something else.
            StatusCode::UNPROCESSABLE_ENTITY if args.phases.is_some() || args.mix.is_some() => {
                let flag = if args.phases.is_some() {
                    "--phases"
                } else {
                    "--mix"
                };
                return Err(LoadtestError::new(format!(
                    "the server refused a webhook endpoint at {}: start it with \
                     SWITCHBOARD_WEBHOOK_ALLOW_PRIVATE=true, or leave webhook_writes out \
                     of {flag}",
                    r.url_for(0)
                )));
            }
            // The default mix is a smoke test of everything: it runs on without them.
            StatusCode::UNPROCESSABLE_ENTITY => {
                let note = format!(
                    "the server refused a webhook endpoint at {} ({}); start it with \
                     SWITCHBOARD_WEBHOOK_ALLOW_PRIVATE=true to measure webhook writes. \
                     Webhook writes run as plain writes.",
                    r.url_for(0),
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
    let seeded: Result<Vec<(usize, u64)>, LoadtestError> =
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
            .await;
    bar.finish_and_clear();
    let seeded: Vec<(usize, u64)> = match seeded {
        Ok(seeded) => seeded,
        Err(e) => {
            if let Some(note) = remove_endpoints(client, &api, &workspaces).await {
                say(&note);
            }
            return Err(e);
        }
    };
    for (w, id) in seeded {
        workspaces[w].contacts.push(id);
    }

    Ok(Plan {
        run,
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

/// An endpoint the run made: its id (to delete it at the end) and its signing secret
/// (to verify its deliveries).
struct MadeEndpoint {
    id: String,
    secret: String,
}

/// The endpoint a create answer describes.
fn endpoint_made(a: &Answer) -> Result<MadeEndpoint, LoadtestError> {
    let field = |k: &str| {
        a.body[k].as_str().map(str::to_string).ok_or_else(|| {
            LoadtestError::new(format!(
                "creating a webhook endpoint: the answer has no `{k}`: {}",
                a.body
            ))
        })
    };
    Ok(MadeEndpoint {
        id: field("id")?,
        secret: field("secret")?,
    })
}

/// Deletes the endpoints the run made (DELETE /webhooks/{id} with each workspace's key):
/// once the load tester exits, nothing answers at the receiver's port, and the server
/// would retry every undelivered event there for a day. Answers a note for the operator
/// when some could not be deleted (a 404 counts as deleted: it is gone either way).
pub async fn remove_endpoints(
    client: &Client,
    api: &str,
    workspaces: &[Workspace],
) -> Option<String> {
    /// A server that stopped should not hold the report up for long.
    const ATTEMPTS: u32 = 3;
    let left: Vec<String> = futures::stream::iter(workspaces)
        .filter_map(|ws| async move { ws.webhook_endpoint.as_ref().map(|id| (ws, id)) })
        .map(|(ws, id)| async move {
            let url = format!("{api}/api/v1/webhooks/{id}");
            let deleted = send_with_attempts("deleting a webhook endpoint", ATTEMPTS, || {
                client.delete(&url).bearer_auth(&ws.key)
            })
            .await;
            match deleted {
                Ok(a) if a.status.is_success() || a.status == StatusCode::NOT_FOUND => None,
                Ok(a) => Some(format!("{id} ({} {})", ws.id, a.status)),
                Err(e) => Some(format!("{id} ({}: {e})", ws.id)),
            }
        })
        .buffer_unordered(CREATE_CONCURRENCY)
        .filter_map(|failed| async move { failed })
        .collect()
        .await;
    let first = left.first()?;
    Some(format!(
        "{} webhook endpoints of this run could not be deleted and still point at its \
         closed receiver, e.g. {first}; delete them with DELETE /api/v1/webhooks/{{id}}",
        left.len()
    ))
}
