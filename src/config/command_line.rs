//! Where settings come from: `switchboard serve --flag`, then the `SWITCHBOARD_*`
//! environment, then an optional TOML file (`--config`), then the default. [`SETTINGS`] is
//! the one table of every setting: clap builds `serve`'s flags from it (so `serve --help`
//! lists each one with its variable and default), and the README's table is checked
//! against it. The chosen text of each setting is then checked by
//! [`Settings::from_lookup`], which names the variable of a bad value.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use clap::parser::ValueSource;
use clap::{Arg, ArgMatches, Args, Command, FromArgMatches};

use super::{ConfigError, Settings};

/// One setting: its flag (also its key in the TOML file), variable, default and help.
pub struct Setting {
    pub flag: &'static str,
    pub var: &'static str,
    /// None: unset unless given.
    pub default: Option<&'static str>,
    pub help: &'static str,
    /// Its value is never shown in `--help`.
    pub secret: bool,
}

const fn setting(
    flag: &'static str,
    var: &'static str,
    default: Option<&'static str>,
    help: &'static str,
) -> Setting {
    Setting {
        flag,
        var,
        default,
        help,
        secret: false,
    }
}

const fn secret(flag: &'static str, var: &'static str, help: &'static str) -> Setting {
    Setting {
        flag,
        var,
        default: None,
        help,
        secret: true,
    }
}

/// Every setting `serve` reads.
pub const SETTINGS: &[Setting] = &[
    setting(
        "addr",
        "SWITCHBOARD_ADDR",
        Some("127.0.0.1:8080"),
        "API listener",
    ),
    setting(
        "admin-addr",
        "SWITCHBOARD_ADMIN_ADDR",
        Some("127.0.0.1:8081"),
        "operator listener",
    ),
    setting(
        "data-dir",
        "SWITCHBOARD_DATA_DIR",
        Some("./data"),
        "the database folder",
    ),
    secret(
        "database-url",
        "SWITCHBOARD_DATABASE_URL",
        "postgres://... : keep the data in PostgreSQL instead of the data folder",
    ),
    setting(
        "node-id",
        "SWITCHBOARD_NODE_ID",
        None,
        "this node's name in a PostgreSQL cluster, unique per process; unset: one derived from the host and the data folder",
    ),
    setting(
        "advertise-addr",
        "SWITCHBOARD_ADVERTISE_ADDR",
        None,
        "the http://host:port other nodes reach this node's API at; unset: the API listener's address",
    ),
    setting(
        "advertise-admin-addr",
        "SWITCHBOARD_ADVERTISE_ADMIN_ADDR",
        None,
        "the http://host:port other nodes reach this node's operator API at; unset: the operator listener's address",
    ),
    setting(
        "lease-ttl",
        "SWITCHBOARD_LEASE_TTL",
        Some("10s"),
        "how long a node owns a workspace without renewing; a dead node's workspaces move after it",
    ),
    secret(
        "cluster-secret",
        "SWITCHBOARD_CLUSTER_SECRET",
        "shared by the nodes of a cluster (16+ characters) to pass requests to each other; unset: a random one (this node accepts none)",
    ),
    secret(
        "admin-token",
        "SWITCHBOARD_ADMIN_TOKEN",
        "bearer token for /admin (16+ characters); generated and printed once if unset",
    ),
    setting(
        "rate-limit-per-minute",
        "SWITCHBOARD_RATE_LIMIT_PER_MINUTE",
        Some("120"),
        "per-workspace request budget; 0 turns the limit off",
    ),
    setting(
        "idempotency-ttl",
        "SWITCHBOARD_IDEMPOTENCY_TTL",
        Some("24h"),
        "how long a first response is kept",
    ),
    setting(
        "actor-idle",
        "SWITCHBOARD_ACTOR_IDLE",
        Some("5m"),
        "a workspace actor idle this long stops",
    ),
    setting(
        "shutdown-grace",
        "SWITCHBOARD_SHUTDOWN_GRACE",
        Some("10s"),
        "how long shutdown waits for in-flight requests",
    ),
    setting(
        "log-format",
        "SWITCHBOARD_LOG_FORMAT",
        Some("text"),
        "text or json",
    ),
    setting(
        "webhook-retry-delays",
        "SWITCHBOARD_WEBHOOK_RETRY_DELAYS",
        Some("30s,2m,10m,1h,6h,24h"),
        "waits before attempts 2, 3, ... (comma-separated)",
    ),
    setting(
        "webhook-timeout",
        "SWITCHBOARD_WEBHOOK_TIMEOUT",
        Some("10s"),
        "how long a receiver has to answer",
    ),
    setting(
        "webhook-disable-after",
        "SWITCHBOARD_WEBHOOK_DISABLE_AFTER",
        Some("72h"),
        "failing continuously this long disables an endpoint",
    ),
    setting(
        "webhook-secret-overlap",
        "SWITCHBOARD_WEBHOOK_SECRET_OVERLAP",
        Some("24h"),
        "how long the previous secret keeps signing after a rotation (webhook endpoints and channel relays)",
    ),
    setting(
        "webhook-allow-private",
        "SWITCHBOARD_WEBHOOK_ALLOW_PRIVATE",
        Some("false"),
        "true allows http:// and private targets (development and tests only)",
    ),
    setting(
        "webhook-tick",
        "SWITCHBOARD_WEBHOOK_TICK",
        Some("1s"),
        "how often a delivery actor looks for due deliveries",
    ),
    setting(
        "relay-retry-delays",
        "SWITCHBOARD_RELAY_RETRY_DELAYS",
        Some("5s,30s"),
        "waits before a relayed message's attempts 2, 3, ... (comma-separated)",
    ),
    setting(
        "relay-timeout",
        "SWITCHBOARD_RELAY_TIMEOUT",
        Some("10s"),
        "how long a channel relay has to answer",
    ),
    setting(
        "campaign-rate",
        "SWITCHBOARD_CAMPAIGN_RATE",
        Some("20"),
        "campaign messages a workspace sends per second",
    ),
    setting(
        "header-read-timeout",
        "SWITCHBOARD_HEADER_READ_TIMEOUT",
        Some("10s"),
        "time to send a request's head; also the idle keep-alive limit (both listeners)",
    ),
    setting(
        "max-connections",
        "SWITCHBOARD_MAX_CONNECTIONS",
        Some("10000"),
        "open connections on the API listener",
    ),
    setting(
        "admin-max-connections",
        "SWITCHBOARD_ADMIN_MAX_CONNECTIONS",
        Some("256"),
        "open connections on the operator listener",
    ),
    setting(
        "ai-url",
        "SWITCHBOARD_AI_URL",
        None,
        "an OpenAI-compatible base URL; unset: the embedded rules",
    ),
    setting(
        "ai-model",
        "SWITCHBOARD_AI_MODEL",
        Some("gpt-4o-mini"),
        "the model named in each request",
    ),
    secret(
        "ai-api-key",
        "SWITCHBOARD_AI_API_KEY",
        "sent as a bearer token to the model when set",
    ),
    setting(
        "ai-timeout",
        "SWITCHBOARD_AI_TIMEOUT",
        Some("20s"),
        "bounds a whole AI turn",
    ),
];

const CONFIG: &str = "config";

/// `serve`'s arguments: each setting's chosen text and where it came from.
#[derive(Debug, Clone, Default)]
pub struct ServeArgs {
    given: BTreeMap<&'static str, (String, ValueSource)>,
    config: Option<PathBuf>,
}

impl Args for ServeArgs {
    fn augment_args(cmd: Command) -> Command {
        let mut cmd = cmd.arg(
            Arg::new(CONFIG)
                .long(CONFIG)
                .env("SWITCHBOARD_CONFIG")
                .value_name("FILE")
                .value_parser(clap::value_parser!(PathBuf))
                .help("a TOML file of settings, keyed by flag name; flags and the environment override it"),
        );
        for s in SETTINGS {
            let mut arg = Arg::new(s.flag)
                .long(s.flag)
                .env(s.var)
                .help(s.help)
                .hide_env_values(s.secret);
            if let Some(d) = s.default {
                arg = arg.default_value(d);
            }
            cmd = cmd.arg(arg);
        }
        cmd
    }

    fn augment_args_for_update(cmd: Command) -> Command {
        Self::augment_args(cmd)
    }
}

impl FromArgMatches for ServeArgs {
    fn from_arg_matches(m: &ArgMatches) -> Result<Self, clap::Error> {
        let mut args = Self::default();
        args.update_from_arg_matches(m)?;
        Ok(args)
    }

    fn update_from_arg_matches(&mut self, m: &ArgMatches) -> Result<(), clap::Error> {
        for s in SETTINGS {
            if let (Some(v), Some(source)) = (m.get_one::<String>(s.flag), m.value_source(s.flag)) {
                self.given.insert(s.var, (v.clone(), source));
            }
        }
        if let Some(p) = m.get_one::<PathBuf>(CONFIG) {
            self.config = Some(p.clone());
        }
        Ok(())
    }
}

impl ServeArgs {
    /// The settings: flag, then environment, then the `--config` file, then the default.
    pub fn settings(&self) -> Result<Settings, ConfigError> {
        let file = match &self.config {
            Some(path) => read_file(path)?,
            None => BTreeMap::new(),
        };
        self.layered(&file)
    }

    fn layered(&self, file: &BTreeMap<String, String>) -> Result<Settings, ConfigError> {
        let mut chosen: BTreeMap<&str, String> = BTreeMap::new();
        for s in SETTINGS {
            let given = self.given.get(s.var);
            let from_file = file.get(s.flag);
            let value = match (given, from_file) {
                (Some((v, ValueSource::CommandLine | ValueSource::EnvVariable)), _) => Some(v),
                (_, Some(v)) => Some(v),
                (Some((v, _)), None) => Some(v),
                (None, None) => None,
            };
            if let Some(v) = value {
                chosen.insert(s.var, v.clone());
            }
        }
        Settings::from_lookup(|var| chosen.get(var).cloned())
    }
}

/// Reads a settings file: a flat TOML table keyed by flag name (`rate-limit-per-minute`,
/// or with underscores). An unknown key or an unreadable file stops the start.
fn read_file(path: &Path) -> Result<BTreeMap<String, String>, ConfigError> {
    let text = std::fs::read_to_string(path).map_err(|e| ConfigError {
        var: "SWITCHBOARD_CONFIG",
        message: format!("cannot read {}: {e}", path.display()),
    })?;
    parse_file(&text).map_err(|message| ConfigError {
        var: "SWITCHBOARD_CONFIG",
        message: format!("{}: {message}", path.display()),
    })
}

fn parse_file(text: &str) -> Result<BTreeMap<String, String>, String> {
    let table: toml::Table = text.parse().map_err(|e: toml::de::Error| e.to_string())?;
    let mut out = BTreeMap::new();
    for (key, value) in table {
        let flag = key.replace('_', "-");
        if !SETTINGS.iter().any(|s| s.flag == flag) {
            return Err(format!("`{key}` is not a setting"));
        }
        let text = match value {
            toml::Value::String(s) => s,
            toml::Value::Integer(n) => n.to_string(),
            toml::Value::Boolean(b) => b.to_string(),
            toml::Value::Array(items) => items
                .iter()
                .map(|i| match i {
                    toml::Value::String(s) => Ok(s.clone()),
                    other => Err(format!(
                        "`{key}` holds a {}, not a list of strings",
                        other.type_str()
                    )),
                })
                .collect::<Result<Vec<_>, _>>()?
                .join(","),
            other => {
                return Err(format!(
                    "`{key}` holds a {}, not a string, number or true/false",
                    other.type_str()
                ))
            }
        };
        out.insert(flag, text);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[derive(clap::Parser)]
    struct Probe {
        #[command(flatten)]
        serve: ServeArgs,
    }

    /// Parses flags with `env` as the whole environment (clap reads the process
    /// environment, so the tests use variables no one else sets).
    fn parse(flags: &[&str]) -> ServeArgs {
        use clap::Parser;
        let argv = std::iter::once("serve").chain(flags.iter().copied());
        Probe::try_parse_from(argv).expect("parses").serve
    }

    #[test]
    fn the_table_defaults_are_the_settings_defaults() {
        let from_table = parse(&[]).layered(&BTreeMap::new()).expect("valid");
        let d = Settings::default();
        assert_eq!(from_table.addr, d.addr);
        assert_eq!(from_table.admin_addr, d.admin_addr);
        assert_eq!(from_table.data_dir, d.data_dir);
        assert_eq!(from_table.rate_limit_per_minute, d.rate_limit_per_minute);
        assert_eq!(from_table.idempotency_ttl, d.idempotency_ttl);
        assert_eq!(from_table.actor_idle, d.actor_idle);
        assert_eq!(from_table.shutdown_grace, d.shutdown_grace);
        assert_eq!(from_table.log_json, d.log_json);
        assert_eq!(from_table.webhooks.retry_delays, d.webhooks.retry_delays);
        assert_eq!(from_table.webhooks.timeout, d.webhooks.timeout);
        assert_eq!(from_table.relay_retry_delays, d.relay_retry_delays);
        assert_eq!(from_table.relay_timeout, d.relay_timeout);
        assert_eq!(from_table.campaign_rate, d.campaign_rate);
        assert_eq!(from_table.webhooks.disable_after, d.webhooks.disable_after);
        assert_eq!(
            from_table.webhooks.secret_overlap,
            d.webhooks.secret_overlap
        );
        assert_eq!(from_table.webhooks.allow_private, d.webhooks.allow_private);
        assert_eq!(from_table.webhooks.tick, d.webhooks.tick);
        assert_eq!(from_table.api_connections, d.api_connections);
        assert_eq!(from_table.admin_connections, d.admin_connections);
        assert_eq!(from_table.ai.model, d.ai.model);
        assert_eq!(from_table.ai.timeout, d.ai.timeout);
        assert_eq!(from_table.ai.url, d.ai.url);
    }

    #[test]
    fn a_flag_beats_the_file_and_the_file_beats_the_default() {
        let file = parse_file(
            "rate_limit_per_minute = 30\nactor-idle = \"2m\"\nwebhook-retry-delays = [\"1s\", \"2s\"]\n",
        )
        .expect("valid file");
        let s = parse(&["--rate-limit-per-minute", "60"])
            .layered(&file)
            .expect("valid");
        assert_eq!(s.rate_limit_per_minute, 60);
        assert_eq!(s.actor_idle, Duration::from_secs(120));
        assert_eq!(
            s.webhooks.retry_delays,
            [Duration::from_secs(1), Duration::from_secs(2)]
        );
        assert_eq!(s.shutdown_grace, Duration::from_secs(10));
    }

    #[test]
    fn the_environment_beats_the_file() {
        let mut args = parse(&[]);
        args.given.insert(
            "SWITCHBOARD_SHUTDOWN_GRACE",
            ("3s".into(), ValueSource::EnvVariable),
        );
        let file = parse_file("shutdown-grace = \"7s\"").expect("valid file");
        let s = args.layered(&file).expect("valid");
        assert_eq!(s.shutdown_grace, Duration::from_secs(3));
    }

    #[test]
    fn an_unknown_key_or_a_bad_value_in_the_file_is_named() {
        let err = parse_file("rate-limit = 5").expect_err("unknown");
        assert!(err.contains("`rate-limit`"), "{err}");
        let file = parse_file("shutdown-grace = \"soon\"").expect("parses");
        let err = parse(&[]).layered(&file).expect_err("bad value");
        assert_eq!(err.var, "SWITCHBOARD_SHUTDOWN_GRACE");
    }

    #[test]
    fn every_setting_has_a_flag_and_a_variable_of_its_own() {
        let mut flags: Vec<_> = SETTINGS.iter().map(|s| s.flag).collect();
        let mut vars: Vec<_> = SETTINGS.iter().map(|s| s.var).collect();
        flags.sort_unstable();
        flags.dedup();
        vars.sort_unstable();
        vars.dedup();
        assert_eq!(flags.len(), SETTINGS.len());
        assert_eq!(vars.len(), SETTINGS.len());
        for s in SETTINGS {
            assert_eq!(
                s.var,
                format!("SWITCHBOARD_{}", s.flag.replace('-', "_").to_uppercase())
            );
        }
    }
}
