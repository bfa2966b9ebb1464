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
    /// The operator listener, used to create the workspaces.
    #[arg(
        long,
        env = "SWITCHBOARD_ADMIN_URL",
        default_value = "http://127.0.0.1:8081"
    )]
    pub admin_url: String,
    /// The operator token of the server under test.
    #[arg(long, env = "SWITCHBOARD_ADMIN_TOKEN", hide_env_values = true)]
    pub admin_token: String,
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
    #[arg(
        long,
        default_value = "reads=60,writes=20,searches=15,webhook_writes=5"
    )]
    pub mix: Mix,
    /// How many of the workspaces are noisy: they send at 10x their rate budget.
    #[arg(long, default_value_t = 0)]
    pub noisy: u32,
    /// The per-workspace budget in requests per minute that quiet workspaces keep to
    /// (noisy ones send 10x). Default: the server's own budget, read from its
    /// `RateLimit-Limit` header at bootstrap; when the server's limit is off (no header)
    /// nothing is paced and every connection sends as fast as it can. 0 also means unpaced.
    #[arg(long, env = "SWITCHBOARD_LOADTEST_RATE_BUDGET")]
    pub rate_budget: Option<u32>,
    /// Print the report as one JSON object instead of text.
    #[arg(long)]
    pub json: bool,
    /// Do not draw the progress bar.
    #[arg(long)]
    pub no_progress: bool,
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
        for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let (name, value) = part
                .split_once('=')
                .ok_or_else(|| format!("`{part}` is not name=percent"))?;
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
        let reads_only: Mix = "reads=100".parse().unwrap();
        assert_eq!(reads_only.pick(99), Class::Reads);
    }

    #[test]
    fn a_bad_mix_is_refused() {
        assert!("reads=60,deletes=5".parse::<Mix>().is_err());
        assert!("reads".parse::<Mix>().is_err());
        assert!("reads=0".parse::<Mix>().is_err());
        assert!("reads=x".parse::<Mix>().is_err());
    }
}
