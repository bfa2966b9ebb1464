//! Settings: `serve`'s flags, the `SWITCHBOARD_*` environment, an optional TOML file and
//! the defaults (see [`command_line`]), checked at start. A bad value stops the start
//! with a message naming the variable.

mod command_line;
mod operator;

pub use command_line::{ServeArgs, Setting, SETTINGS};
pub use operator::OperatorArgs;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use crate::serve::ConnectionLimits;

pub use switchboard_actors::delivery::DeliverySettings;
pub use switchboard_actors::outbound::OutboundSettings;

#[derive(Debug, Clone)]
pub struct Settings {
    /// SWITCHBOARD_ADDR: the API listener.
    pub addr: SocketAddr,
    /// SWITCHBOARD_ADMIN_ADDR: the operator listener.
    pub admin_addr: SocketAddr,
    /// SWITCHBOARD_DATA_DIR: the database folder.
    pub data_dir: PathBuf,
    /// SWITCHBOARD_DATABASE_URL: `postgres://...`; set, the data lives in PostgreSQL
    /// instead of `data_dir`.
    pub database_url: Option<String>,
    /// The cluster settings, read in PostgreSQL mode.
    pub cluster: ClusterSettings,
    /// SWITCHBOARD_ADMIN_TOKEN: bearer token for /admin; generated at first start if unset.
    pub admin_token: Option<String>,
    /// SWITCHBOARD_RATE_LIMIT_PER_MINUTE: per-workspace budget; 0 turns the limit off.
    pub rate_limit_per_minute: u32,
    /// SWITCHBOARD_IDEMPOTENCY_TTL: how long a first response is kept.
    pub idempotency_ttl: Duration,
    /// SWITCHBOARD_ACTOR_IDLE: a workspace actor idle this long stops; it respawns on use.
    pub actor_idle: Duration,
    /// SWITCHBOARD_SHUTDOWN_GRACE: how long shutdown waits for in-flight requests.
    pub shutdown_grace: Duration,
    /// SWITCHBOARD_LOG_FORMAT: `text` or `json`.
    pub log_json: bool,
    /// SWITCHBOARD_WEBHOOK_*: the delivery rules.
    pub webhooks: DeliverySettings,
    /// SWITCHBOARD_RELAY_*: how outbound messages reach channel relays (private targets and
    /// the tick follow the webhook settings).
    pub relay_retry_delays: Vec<Duration>,
    pub relay_timeout: Duration,
    /// SWITCHBOARD_CAMPAIGN_RATE: campaign messages per second per workspace.
    pub campaign_rate: u32,
    /// SWITCHBOARD_AI_*: the model behind the AI; None: the embedded rules responder.
    pub ai: AiSettings,
    /// SWITCHBOARD_HEADER_READ_TIMEOUT and SWITCHBOARD_MAX_CONNECTIONS: the API listener.
    pub api_connections: ConnectionLimits,
    /// SWITCHBOARD_HEADER_READ_TIMEOUT and SWITCHBOARD_ADMIN_MAX_CONNECTIONS: the operator
    /// listener, capped apart so that it answers while the API listener is saturated.
    pub admin_connections: ConnectionLimits,
    /// Mounts `POST /__test/panic`, a handler that panics, so tests can prove a panic is
    /// answered and survived. Never read from the environment.
    pub test_hooks: bool,
}

/// An http(s)://host:port address another node calls, without a trailing slash.
fn parse_base_url(var: &'static str, v: &str) -> Result<String, ConfigError> {
    let v = v.trim().trim_end_matches('/');
    match url::Url::parse(v) {
        Ok(u) if matches!(u.scheme(), "http" | "https") && u.host().is_some() => Ok(v.to_string()),
        _ => Err(ConfigError {
            var,
            message: format!("`{v}` is not an http(s)://host:port address"),
        }),
    }
}

/// How this node joins a cluster (PostgreSQL mode).
#[derive(Debug, Clone)]
pub struct ClusterSettings {
    /// SWITCHBOARD_NODE_ID; None: derived from the host name and the data folder.
    pub node_id: Option<String>,
    /// SWITCHBOARD_ADVERTISE_ADDR; None: the API listener's address.
    pub advertise_addr: Option<String>,
    /// SWITCHBOARD_ADVERTISE_ADMIN_ADDR; None: the operator listener's address.
    pub advertise_admin_addr: Option<String>,
    /// SWITCHBOARD_LEASE_TTL.
    pub lease_ttl: Duration,
    /// SWITCHBOARD_CLUSTER_SECRET; None: a random one (this node accepts no passed request).
    pub secret: Option<String>,
}

impl Default for ClusterSettings {
    fn default() -> Self {
        Self {
            node_id: None,
            advertise_addr: None,
            advertise_admin_addr: None,
            lease_ttl: Duration::from_secs(10),
            secret: None,
        }
    }
}

/// Which responder answers customers.
#[derive(Debug, Clone)]
pub struct AiSettings {
    /// SWITCHBOARD_AI_URL: an OpenAI-compatible base URL (`.../v1`); unset: the rules.
    pub url: Option<String>,
    /// SWITCHBOARD_AI_MODEL.
    pub model: String,
    /// SWITCHBOARD_AI_API_KEY: sent as a bearer token when set.
    pub api_key: Option<String>,
    /// SWITCHBOARD_AI_TIMEOUT: bounds a whole AI turn.
    pub timeout: Duration,
}

impl Default for AiSettings {
    fn default() -> Self {
        Self {
            url: None,
            model: "gpt-4o-mini".into(),
            api_key: None,
            timeout: Duration::from_secs(20),
        }
    }
}

#[derive(Debug, thiserror::Error)]
#[error("{var}: {message}")]
pub struct ConfigError {
    pub var: &'static str,
    pub message: String,
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            addr: SocketAddr::from(([127, 0, 0, 1], 8080)),
            admin_addr: SocketAddr::from(([127, 0, 0, 1], 8081)),
            data_dir: PathBuf::from("./data"),
            database_url: None,
            cluster: ClusterSettings::default(),
            admin_token: None,
            rate_limit_per_minute: 120,
            idempotency_ttl: Duration::from_secs(24 * 3600),
            actor_idle: Duration::from_secs(300),
            shutdown_grace: Duration::from_secs(10),
            log_json: false,
            webhooks: DeliverySettings::default(),
            relay_retry_delays: OutboundSettings::default().retry_delays,
            relay_timeout: OutboundSettings::default().timeout,
            campaign_rate: OutboundSettings::default().campaign_rate,
            ai: AiSettings::default(),
            api_connections: ConnectionLimits {
                header_read_timeout: Duration::from_secs(10),
                max_connections: 10_000,
            },
            admin_connections: ConnectionLimits {
                header_read_timeout: Duration::from_secs(10),
                max_connections: 256,
            },
            test_hooks: false,
        }
    }
}

impl Settings {
    /// The relays' rules: their own ladder and time limit; private targets and the tick
    /// as for webhooks.
    pub fn outbound(&self) -> OutboundSettings {
        OutboundSettings {
            retry_delays: self.relay_retry_delays.clone(),
            timeout: self.relay_timeout,
            allow_private: self.webhooks.allow_private,
            tick: self.webhooks.tick,
            campaign_rate: self.campaign_rate,
            ..OutboundSettings::default()
        }
    }

    /// Reads each variable through `get`, so tests need not touch the process environment.
    pub fn from_lookup(get: impl Fn(&str) -> Option<String>) -> Result<Self, ConfigError> {
        let mut s = Self::default();
        let var = |name: &'static str| get(name).filter(|v| !v.trim().is_empty());
        if let Some(v) = var("SWITCHBOARD_ADDR") {
            s.addr = parse_addr("SWITCHBOARD_ADDR", &v)?;
        }
        if let Some(v) = var("SWITCHBOARD_ADMIN_ADDR") {
            s.admin_addr = parse_addr("SWITCHBOARD_ADMIN_ADDR", &v)?;
        }
        if let Some(v) = var("SWITCHBOARD_DATA_DIR") {
            s.data_dir = PathBuf::from(v);
        }
        if let Some(v) = var("SWITCHBOARD_DATABASE_URL") {
            let v = v.trim();
            if !(v.starts_with("postgres://") || v.starts_with("postgresql://")) {
                return Err(ConfigError {
                    var: "SWITCHBOARD_DATABASE_URL",
                    message: "must be a postgres:// (or postgresql://) URL".into(),
                });
            }
            s.database_url = Some(v.to_string());
        }
        if let Some(v) = var("SWITCHBOARD_NODE_ID") {
            let v = v.trim();
            if v.len() > 64
                || !v
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
            {
                return Err(ConfigError {
                    var: "SWITCHBOARD_NODE_ID",
                    message: "up to 64 letters, digits, '-', '_' or '.'".into(),
                });
            }
            s.cluster.node_id = Some(v.to_string());
        }
        if let Some(v) = var("SWITCHBOARD_ADVERTISE_ADDR") {
            s.cluster.advertise_addr = Some(parse_base_url("SWITCHBOARD_ADVERTISE_ADDR", &v)?);
        }
        if let Some(v) = var("SWITCHBOARD_ADVERTISE_ADMIN_ADDR") {
            s.cluster.advertise_admin_addr =
                Some(parse_base_url("SWITCHBOARD_ADVERTISE_ADMIN_ADDR", &v)?);
        }
        if let Some(v) = var("SWITCHBOARD_LEASE_TTL") {
            s.cluster.lease_ttl = parse_duration("SWITCHBOARD_LEASE_TTL", &v)?;
            if s.cluster.lease_ttl < Duration::from_secs(1) {
                return Err(ConfigError {
                    var: "SWITCHBOARD_LEASE_TTL",
                    message: "must be at least 1s".into(),
                });
            }
        }
        if let Some(v) = var("SWITCHBOARD_CLUSTER_SECRET") {
            if v.trim().len() < 16 {
                return Err(ConfigError {
                    var: "SWITCHBOARD_CLUSTER_SECRET",
                    message: "must be at least 16 characters".into(),
                });
            }
            s.cluster.secret = Some(v.trim().to_string());
        }
        if let Some(v) = var("SWITCHBOARD_ADMIN_TOKEN") {
            if v.trim().len() < 16 {
                return Err(ConfigError {
                    var: "SWITCHBOARD_ADMIN_TOKEN",
                    message: "must be at least 16 characters".into(),
                });
            }
            s.admin_token = Some(v.trim().to_string());
        }
        if let Some(v) = var("SWITCHBOARD_RATE_LIMIT_PER_MINUTE") {
            s.rate_limit_per_minute = v.trim().parse().map_err(|_| ConfigError {
                var: "SWITCHBOARD_RATE_LIMIT_PER_MINUTE",
                message: format!("`{v}` is not a whole number (0 turns the limit off)"),
            })?;
        }
        if let Some(v) = var("SWITCHBOARD_IDEMPOTENCY_TTL") {
            s.idempotency_ttl = parse_duration("SWITCHBOARD_IDEMPOTENCY_TTL", &v)?;
        }
        if let Some(v) = var("SWITCHBOARD_ACTOR_IDLE") {
            s.actor_idle = parse_duration("SWITCHBOARD_ACTOR_IDLE", &v)?;
        }
        if let Some(v) = var("SWITCHBOARD_SHUTDOWN_GRACE") {
            s.shutdown_grace = parse_duration("SWITCHBOARD_SHUTDOWN_GRACE", &v)?;
        }
        if let Some(v) = var("SWITCHBOARD_LOG_FORMAT") {
            s.log_json = match v.trim() {
                "json" => true,
                "text" => false,
                other => {
                    return Err(ConfigError {
                        var: "SWITCHBOARD_LOG_FORMAT",
                        message: format!("`{other}` is not text or json"),
                    })
                }
            };
        }
        if let Some(v) = var("SWITCHBOARD_WEBHOOK_RETRY_DELAYS") {
            s.webhooks.retry_delays = v
                .split(',')
                .map(|d| parse_duration("SWITCHBOARD_WEBHOOK_RETRY_DELAYS", d))
                .collect::<Result<_, _>>()?;
        }
        if let Some(v) = var("SWITCHBOARD_RELAY_RETRY_DELAYS") {
            s.relay_retry_delays = v
                .split(',')
                .map(|d| parse_duration("SWITCHBOARD_RELAY_RETRY_DELAYS", d))
                .collect::<Result<_, _>>()?;
        }
        if let Some(v) = var("SWITCHBOARD_RELAY_TIMEOUT") {
            s.relay_timeout = parse_duration("SWITCHBOARD_RELAY_TIMEOUT", &v)?;
        }
        if let Some(v) = var("SWITCHBOARD_CAMPAIGN_RATE") {
            s.campaign_rate = match v.trim().parse() {
                Ok(n) if n > 0 => n,
                _ => {
                    return Err(ConfigError {
                        var: "SWITCHBOARD_CAMPAIGN_RATE",
                        message: format!("`{v}` is not a whole number above 0"),
                    })
                }
            };
        }
        if let Some(v) = var("SWITCHBOARD_WEBHOOK_TIMEOUT") {
            s.webhooks.timeout = parse_duration("SWITCHBOARD_WEBHOOK_TIMEOUT", &v)?;
        }
        if let Some(v) = var("SWITCHBOARD_WEBHOOK_DISABLE_AFTER") {
            s.webhooks.disable_after = parse_duration("SWITCHBOARD_WEBHOOK_DISABLE_AFTER", &v)?;
        }
        if let Some(v) = var("SWITCHBOARD_WEBHOOK_SECRET_OVERLAP") {
            s.webhooks.secret_overlap = parse_duration("SWITCHBOARD_WEBHOOK_SECRET_OVERLAP", &v)?;
        }
        if let Some(v) = var("SWITCHBOARD_WEBHOOK_TICK") {
            s.webhooks.tick = parse_duration("SWITCHBOARD_WEBHOOK_TICK", &v)?;
        }
        if let Some(v) = var("SWITCHBOARD_WEBHOOK_ALLOW_PRIVATE") {
            s.webhooks.allow_private = match v.trim() {
                "true" | "1" => true,
                "false" | "0" => false,
                other => {
                    return Err(ConfigError {
                        var: "SWITCHBOARD_WEBHOOK_ALLOW_PRIVATE",
                        message: format!("`{other}` is not true or false"),
                    })
                }
            };
        }
        if let Some(v) = var("SWITCHBOARD_HEADER_READ_TIMEOUT") {
            let t = parse_duration("SWITCHBOARD_HEADER_READ_TIMEOUT", &v)?;
            s.api_connections.header_read_timeout = t;
            s.admin_connections.header_read_timeout = t;
        }
        for (name, slot) in [
            (
                "SWITCHBOARD_MAX_CONNECTIONS",
                &mut s.api_connections.max_connections,
            ),
            (
                "SWITCHBOARD_ADMIN_MAX_CONNECTIONS",
                &mut s.admin_connections.max_connections,
            ),
        ] {
            if let Some(v) = var(name) {
                *slot = v
                    .trim()
                    .parse()
                    .ok()
                    .filter(|n: &usize| *n > 0)
                    .ok_or_else(|| ConfigError {
                        var: name,
                        message: format!("`{v}` is not a whole number above 0"),
                    })?;
            }
        }
        if let Some(v) = var("SWITCHBOARD_AI_URL") {
            let url = url::Url::parse(v.trim()).map_err(|e| ConfigError {
                var: "SWITCHBOARD_AI_URL",
                message: format!("`{v}` is not a URL ({e})"),
            })?;
            if !matches!(url.scheme(), "http" | "https") {
                return Err(ConfigError {
                    var: "SWITCHBOARD_AI_URL",
                    message: "must be an http or https URL".into(),
                });
            }
            s.ai.url = Some(v.trim().to_string());
        }
        if let Some(v) = var("SWITCHBOARD_AI_MODEL") {
            s.ai.model = v.trim().to_string();
        }
        if let Some(v) = var("SWITCHBOARD_AI_API_KEY") {
            s.ai.api_key = Some(v.trim().to_string());
        }
        if let Some(v) = var("SWITCHBOARD_AI_TIMEOUT") {
            s.ai.timeout = parse_duration("SWITCHBOARD_AI_TIMEOUT", &v)?;
        }
        Ok(s)
    }
}

fn parse_addr(var: &'static str, v: &str) -> Result<SocketAddr, ConfigError> {
    v.trim().parse().map_err(|_| ConfigError {
        var,
        message: format!("`{v}` is not an address like 127.0.0.1:8080"),
    })
}

/// `300ms`, `30s`, `2m`, `24h`; zero is refused.
pub fn parse_duration(var: &'static str, v: &str) -> Result<Duration, ConfigError> {
    let d = humantime::parse_duration(v.trim()).map_err(|e| ConfigError {
        var,
        message: format!("`{v}` is not a duration like 300ms, 30s, 2m or 24h ({e})"),
    })?;
    if d.is_zero() {
        return Err(ConfigError {
            var,
            message: "must be longer than zero".into(),
        });
    }
    Ok(d)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn with(pairs: &[(&str, &str)]) -> Result<Settings, ConfigError> {
        let map: HashMap<String, String> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        Settings::from_lookup(|k| map.get(k).cloned())
    }

    #[test]
    fn defaults_match_the_documented_table() {
        let s = with(&[]).unwrap();
        assert_eq!(s.addr.to_string(), "127.0.0.1:8080");
        assert_eq!(s.admin_addr.to_string(), "127.0.0.1:8081");
        assert_eq!(s.rate_limit_per_minute, 120);
        assert_eq!(s.idempotency_ttl, Duration::from_secs(86400));
    }

    #[test]
    fn the_webhook_ladder_defaults_to_the_spec_and_can_be_shortened() {
        let s = with(&[]).unwrap();
        let secs: Vec<u64> = s
            .webhooks
            .retry_delays
            .iter()
            .map(|d| d.as_secs())
            .collect();
        assert_eq!(secs, [30, 120, 600, 3600, 21600, 86400]);
        assert_eq!(s.webhooks.max_attempts(), 7);
        assert_eq!(s.webhooks.disable_after, Duration::from_secs(72 * 3600));
        assert_eq!(s.webhooks.timeout, Duration::from_secs(10));
        assert!(!s.webhooks.allow_private);
        let short = with(&[
            ("SWITCHBOARD_WEBHOOK_RETRY_DELAYS", "10ms,20ms"),
            ("SWITCHBOARD_WEBHOOK_ALLOW_PRIVATE", "true"),
        ])
        .unwrap();
        assert_eq!(
            short.webhooks.retry_delays,
            [Duration::from_millis(10), Duration::from_millis(20)]
        );
        assert!(short.webhooks.allow_private);
    }

    #[test]
    fn durations_are_human_readable() {
        let s = with(&[("SWITCHBOARD_IDEMPOTENCY_TTL", "300ms")]).unwrap();
        assert_eq!(s.idempotency_ttl, Duration::from_millis(300));
        assert_eq!(
            with(&[("SWITCHBOARD_IDEMPOTENCY_TTL", "2m")])
                .unwrap()
                .idempotency_ttl,
            Duration::from_secs(120)
        );
    }

    #[test]
    fn bad_values_name_their_variable() {
        for (var, value) in [
            ("SWITCHBOARD_IDEMPOTENCY_TTL", "soon"),
            ("SWITCHBOARD_RATE_LIMIT_PER_MINUTE", "-1"),
            ("SWITCHBOARD_ADDR", "nowhere"),
            ("SWITCHBOARD_LOG_FORMAT", "xml"),
            ("SWITCHBOARD_ADMIN_TOKEN", "short"),
            ("SWITCHBOARD_WEBHOOK_RETRY_DELAYS", "30s,soon"),
            ("SWITCHBOARD_WEBHOOK_ALLOW_PRIVATE", "maybe"),
        ] {
            let err = with(&[(var, value)]).unwrap_err();
            assert_eq!(err.var, var);
            assert!(err.to_string().starts_with(var));
        }
    }
}
