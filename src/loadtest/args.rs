//! The command line of `switchboard loadtest`, and the request mix it parses.

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

use clap::Args;

/// `switchboard loadtest`: drive a running server (it never starts one) with many
/// workspaces at once and report throughput, latency and isolation.
#[derive(Args, Debug, Clone)]
pub struct LoadtestArgs {
    /// The API listener of the server under test.
    #[arg(
        long,
        env = "SWITCHBOARD_API_URL",
        default_value = "http://127.0.0.1:8080"
    )]
    pub api_url: String,
    #[command(flatten)]
    pub operator: crate::config::OperatorArgs,
    /// How many workspaces to create and drive.
    #[arg(long, default_value_t = 20, value_parser = clap::value_parser!(u32).range(1..))]
    pub workspaces: u32,
    /// Contacts created in each workspace before the run (reads and searches use them).
    #[arg(long, default_value_t = 50)]
    pub contacts_per_workspace: u32,
    /// Requests in flight at once (also the number of HTTP connections).
    #[arg(long, default_value_t = 64, value_parser = clap::value_parser!(u32).range(1..))]
    pub connections: u32,
    /// How long to run, health baseline (the first 20%) and mixed run together, e.g. 30s.
    #[arg(long, default_value = "30s", value_parser = humantime::parse_duration)]
    pub duration: Duration,
    /// The request mix in percent: reads (GET /contacts/{id}), writes (POST /contacts),
    /// searches (GET /contacts?q=), webhook_writes (POST /tags in a workspace with a
    /// webhook endpoint subscribed to tag.created), messages (POST /messages: customer
    /// messages from a pool of 200 customers per workspace, answered by the AI when it is
    /// on). Omitted classes are 0; shares are weights, so they need not sum to exactly 100.
    /// Default: reads=60,writes=20,searches=15,webhook_writes=5.
    #[arg(long)]
    pub mix: Option<Mix>,
    /// How many of the workspaces are noisy: they send at 10x their rate budget (in an
    /// open loop, 10x a quiet workspace's share of --rate).
    #[arg(long, default_value_t = 0)]
    pub noisy: u32,
    /// The per-workspace budget in requests per minute that quiet workspaces keep to
    /// (noisy ones send 10x). Default: the server's own budget, read from its
    /// `RateLimit-Limit` header at bootstrap; when the server's limit is off (no header)
    /// nothing is paced and every connection sends as fast as it can. 0 also means unpaced.
    #[arg(long, env = "SWITCHBOARD_LOADTEST_RATE_BUDGET")]
    pub rate_budget: Option<u32>,
    /// Instead of the health baseline and the mixed run: these classes, each alone, one
    /// after the other for an equal share of --duration, e.g. `health,reads,writes`
    /// (names as in --mix, plus `health`). Every phase reports the server's CPU time per
    /// request, and its ratios to the `health` phase when there is one.
    #[arg(long, conflicts_with_all = ["mix", "rate"])]
    pub phases: Option<Phases>,
    /// With --phases: runs them this many times over, alternating (health, writes,
    /// health, writes, ...), every phase for an equal share of --duration. Each phase is
    /// compared with the health phase of its own round, and the report adds each class's
    /// median over the rounds: on a noisy machine the median moves much less than one run.
    #[arg(long, default_value_t = 1, requires = "phases",
        value_parser = clap::value_parser!(u32).range(1..=100))]
    pub rounds: u32,
    /// Open loop: offer this many requests per second in all (across every workspace,
    /// classes from --mix) on a fixed schedule, whether or not earlier ones were
    /// answered. Runs for --duration, or for --requests.
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
    pub rate: Option<u32>,
    /// Open loop: how many requests to send in all (then --duration is not used).
    #[arg(long, requires = "rate", value_parser = clap::value_parser!(u64).range(1..))]
    pub requests: Option<u64>,
    /// Open loop: the most requests in flight at once. A request whose time comes while
    /// this many are unanswered is skipped (and counted), so the load tester never runs
    /// away from a server that stalls.
    #[arg(long, default_value_t = 1024, value_parser = clap::value_parser!(u32).range(1..))]
    pub max_in_flight: u32,
    /// How long to wait, after the last answer, for webhook deliveries still on their way;
    /// the wait ends as soon as every accepted webhook write was delivered. Default: 60s
    /// with --rate, no wait otherwise.
    #[arg(long, value_parser = humantime::parse_duration)]
    pub drain: Option<Duration>,
    /// Print the report as one JSON object instead of text.
    #[arg(long)]
    pub json: bool,
    /// Do not draw the progress bar.
    #[arg(long)]
    pub no_progress: bool,
}

/// How a run drives the server, from the flags.
#[derive(Debug, Clone, PartialEq)]
pub enum Mode {
    /// The default: a GET /health baseline (20% of --duration), then the mixed run.
    HealthThenMix,
    /// `--phases`: each class alone, in order, for an equal share of --duration.
    Phases(Vec<Class>),
    /// `--rate`: requests offered on a fixed schedule (an open loop).
    OpenLoop(OpenLoop),
}

/// The settings of an open-loop run.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct OpenLoop {
    /// Requests per second offered in all.
    pub rate: u32,
    /// How many to send; `None`: as many as --duration holds.
    pub requests: Option<u64>,
    pub max_in_flight: u32,
}

/// Waiting for deliveries when --drain is not given in an open-loop run.
pub const DEFAULT_OPEN_LOOP_DRAIN: Duration = Duration::from_secs(60);

/// The mix when --mix is not given. Kept apart from a given one, because a server that
/// refuses the receiver only turns webhook writes into plain writes when nobody asked
/// for them by name.
pub const DEFAULT_MIX: Mix = Mix {
    reads: 60,
    writes: 20,
    searches: 15,
    webhook_writes: 5,
    messages: 0,
};

impl LoadtestArgs {
    /// The request mix: --mix, else [`DEFAULT_MIX`].
    pub fn mix(&self) -> Mix {
        self.mix.unwrap_or(DEFAULT_MIX)
    }

    pub fn mode(&self) -> Mode {
        if let Some(rate) = self.rate {
            return Mode::OpenLoop(OpenLoop {
                rate,
                requests: self.requests,
                max_in_flight: self.max_in_flight,
            });
        }
        match &self.phases {
            Some(p) => Mode::Phases(p.0.clone()),
            None => Mode::HealthThenMix,
        }
    }

    /// The longest wait for deliveries after the last answer.
    pub fn drain(&self) -> Duration {
        match (self.drain, self.rate) {
            (Some(d), _) => d,
            (None, Some(_)) => DEFAULT_OPEN_LOOP_DRAIN,
            (None, None) => Duration::ZERO,
        }
    }

    /// Every class this run may send (what the bootstrap must prepare for).
    pub fn classes(&self) -> Vec<Class> {
        match self.mode() {
            Mode::Phases(classes) => classes,
            Mode::HealthThenMix | Mode::OpenLoop(_) => Class::ALL
                .into_iter()
                .filter(|&c| c == Class::Health || self.mix().share(c) > 0)
                .collect(),
        }
    }
}

/// The request classes of the mixed run, in report order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Class {
    /// GET /health, the bare handler: the baseline phase only.
    Health,
    Reads,
    Writes,
    Searches,
    WebhookWrites,
    /// POST /messages: customer messages through the legacy API channel route.
    Messages,
}

impl Class {
    pub const ALL: [Class; 6] = [
        Class::Health,
        Class::Reads,
        Class::Writes,
        Class::Searches,
        Class::WebhookWrites,
        Class::Messages,
    ];

    pub fn index(self) -> usize {
        self as usize
    }

    /// The name in `--mix` and in the JSON report.
    pub fn key(self) -> &'static str {
        match self {
            Class::Health => "health",
            Class::Reads => "reads",
            Class::Writes => "writes",
            Class::Searches => "searches",
            Class::WebhookWrites => "webhook_writes",
            Class::Messages => "messages",
        }
    }

    /// The class named `key` (as in `--mix` and `--phases`).
    pub fn from_key(key: &str) -> Option<Class> {
        Class::ALL.into_iter().find(|c| c.key() == key)
    }

    /// The name in the text report.
    pub fn label(self) -> &'static str {
        match self {
            Class::Health => "health baseline",
            Class::Reads => "reads",
            Class::Writes => "writes",
            Class::Searches => "searches",
            Class::WebhookWrites => "webhook writes",
            Class::Messages => "inbound messages",
        }
    }
}

/// Weights of the API classes, parsed from `reads=60,writes=20,...`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Mix {
    pub reads: u32,
    pub writes: u32,
    pub searches: u32,
    pub webhook_writes: u32,
    pub messages: u32,
}

impl Mix {
    pub fn total(&self) -> u32 {
        self.reads + self.writes + self.searches + self.webhook_writes + self.messages
    }

    /// The share of `class` (0 for health, which is never mixed in).
    pub fn share(&self, class: Class) -> u32 {
        match class {
            Class::Health => 0,
            Class::Reads => self.reads,
            Class::Writes => self.writes,
            Class::Searches => self.searches,
            Class::WebhookWrites => self.webhook_writes,
            Class::Messages => self.messages,
        }
    }

    /// Webhook writes turned into plain writes (when the server refuses our receiver).
    pub fn without_webhooks(self) -> Mix {
        Mix {
            writes: self.writes + self.webhook_writes,
            webhook_writes: 0,
            ..self
        }
    }

    /// The class for a roll in `0..total()`.
    pub fn pick(&self, roll: u32) -> Class {
        let mut edge = self.reads;
        if roll < edge {
            return Class::Reads;
        }
        edge += self.writes;
        if roll < edge {
            return Class::Writes;
        }
        edge += self.searches;
        if roll < edge {
            return Class::Searches;
        }
        edge += self.webhook_writes;
        if roll < edge {
            return Class::WebhookWrites;
        }
        Class::Messages
    }
}

impl FromStr for Mix {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let mut mix = Mix {
            reads: 0,
            writes: 0,
            searches: 0,
            webhook_writes: 0,
            messages: 0,
        };
        let mut named = Vec::new();
        for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let (name, value) = part
                .split_once('=')
                .ok_or_else(|| format!("`{part}` is not name=percent"))?;
            // A repeat would silently override: refuse it, as --phases does.
            if named.contains(&name.trim()) {
                return Err(format!("`{}` is named twice", name.trim()));
            }
            named.push(name.trim());
            let value: u32 = value
                .trim()
                .parse()
                .map_err(|_| format!("`{}` is not a whole number", value.trim()))?;
            if value > 100 {
                return Err(format!("{} is over 100%", name.trim()));
            }
            match name.trim() {
                "reads" => mix.reads = value,
                "writes" => mix.writes = value,
                "searches" => mix.searches = value,
                "webhook_writes" => mix.webhook_writes = value,
                "messages" => mix.messages = value,
                other => {
                    return Err(format!(
                    "unknown class `{other}` (reads, writes, searches, webhook_writes, messages)"
                ))
                }
            }
        }
        if mix.total() == 0 {
            return Err("the mix sends nothing: give at least one class a share".into());
        }
        Ok(mix)
    }
}

impl fmt::Display for Mix {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "reads={},writes={},searches={},webhook_writes={},messages={}",
            self.reads, self.writes, self.searches, self.webhook_writes, self.messages
        )
    }
}

/// The classes of `--phases`, in the order they run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Phases(pub Vec<Class>);

impl FromStr for Phases {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let mut classes = Vec::new();
        for name in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let class = Class::from_key(name).ok_or_else(|| {
                let known: Vec<&str> = Class::ALL.iter().map(|c| c.key()).collect();
                format!("unknown class `{name}` ({})", known.join(", "))
            })?;
            if classes.contains(&class) {
                return Err(format!("`{name}` is named twice"));
            }
            classes.push(class);
        }
        if classes.is_empty() {
            return Err("name at least one class, e.g. health,reads,writes".into());
        }
        Ok(Phases(classes))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_mix_parses_and_picks_by_share() {
        let mix: Mix = "reads=60, writes=20,searches=15,webhook_writes=5"
            .parse()
            .unwrap();
        assert_eq!(mix.total(), 100);
        assert_eq!(mix.pick(0), Class::Reads);
        assert_eq!(mix.pick(59), Class::Reads);
        assert_eq!(mix.pick(60), Class::Writes);
        assert_eq!(mix.pick(80), Class::Searches);
        assert_eq!(mix.pick(95), Class::WebhookWrites);
        assert_eq!(mix.without_webhooks().writes, 25);
        let default: Mix = "reads=60,writes=20,searches=15,webhook_writes=5"
            .parse()
            .unwrap();
        assert_eq!(default, DEFAULT_MIX, "as --help states it");
        let reads_only: Mix = "reads=100".parse().unwrap();
        assert_eq!(reads_only.pick(99), Class::Reads);
    }

    #[test]
    fn phases_parse_in_order_and_refuse_unknown_or_repeated_classes() {
        let p: Phases = "health, reads,writes,webhook_writes".parse().unwrap();
        assert_eq!(
            p.0,
            [
                Class::Health,
                Class::Reads,
                Class::Writes,
                Class::WebhookWrites
            ]
        );
        assert!("health,deletes".parse::<Phases>().is_err());
        assert!("reads,reads".parse::<Phases>().is_err());
        assert!(" , ".parse::<Phases>().is_err());
    }

    #[test]
    fn a_bad_mix_is_refused() {
        assert!("reads=60,deletes=5".parse::<Mix>().is_err());
        assert!("reads".parse::<Mix>().is_err());
        assert!("reads=0".parse::<Mix>().is_err());
        assert!("reads=x".parse::<Mix>().is_err());
        let twice = "reads=60,writes=40,reads=0".parse::<Mix>();
        assert_eq!(twice, Err("`reads` is named twice".to_string()));
    }
}
