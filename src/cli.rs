//! The command line: `serve`, and `admin ...`, which calls the operator API so that an
//! operator never hand-writes curl; `listen` and `loadtest` have modules of their own.

use clap::{Args, Parser, Subcommand};
use serde_json::{json, Value};

#[derive(Parser)]
#[command(
    name = "switchboard",
    version,
    about = "Customer-messaging workspace API"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand)]
pub enum Command {
    /// Run the API and operator listeners. Each setting is a flag, a SWITCHBOARD_*
    /// variable or a key of the --config file, in that order of precedence.
    Serve(crate::config::ServeArgs),
    /// Operator actions against a running server.
    Admin(AdminArgs),
    /// Restore a backup (from `admin backup`) into an empty data folder; the service must
    /// not be running on it.
    Restore {
        /// The backup file.
        file: std::path::PathBuf,
        /// The empty data folder to restore into (not needed with --database-url).
        #[arg(
            long,
            env = "SWITCHBOARD_DATA_DIR",
            required_unless_present = "database_url"
        )]
        data_dir: Option<std::path::PathBuf>,
        /// Restore into this empty PostgreSQL database instead of the data folder.
        #[arg(long, env = "SWITCHBOARD_DATABASE_URL", hide_env_values = true)]
        database_url: Option<String>,
    },
    /// Verify a stopped store: every record decodes, every reference points at a record,
    /// every pending delivery names a live endpoint. Exits non-zero on damage.
    Check {
        /// The stopped store's data folder (not needed with --database-url).
        #[arg(
            long,
            env = "SWITCHBOARD_DATA_DIR",
            required_unless_present = "database_url"
        )]
        data_dir: Option<std::path::PathBuf>,
        /// Check this PostgreSQL database instead of the data folder.
        #[arg(long, env = "SWITCHBOARD_DATABASE_URL", hide_env_values = true)]
        database_url: Option<String>,
    },
    /// Load-test a running server: many workspaces, a request mix, noisy neighbours, and a
    /// report of throughput, latency and isolation (it never starts a server itself).
    Loadtest(crate::loadtest::LoadtestArgs),
    /// Receive a workspace's events here, as they happen: a temporary webhook endpoint on a
    /// loopback port (the service must run on this machine), each event printed with its
    /// type, id and signature check and forwarded to --forward-to; Ctrl-C removes it.
    Listen(crate::listen::ListenArgs),
}

#[derive(Args)]
pub struct AdminArgs {
    #[command(flatten)]
    pub operator: crate::config::OperatorArgs,
    #[command(subcommand)]
    pub action: AdminAction,
}

#[derive(Subcommand)]
pub enum AdminAction {
    /// Create a workspace with its owner and an API key.
    CreateWorkspace {
        #[arg(long)]
        name: String,
        #[arg(long)]
        hipaa: bool,
    },
    /// List workspaces, newest first, a page at a time.
    ListWorkspaces {
        /// How many to list (1-100).
        #[arg(long, default_value_t = 25)]
        limit: u32,
        /// The `next_cursor` of the previous page.
        #[arg(long)]
        starting_after: Option<String>,
    },
    /// Issue another API key for a workspace.
    CreateApiKey {
        #[arg(long)]
        workspace: String,
    },
    /// Revoke an API key.
    RevokeApiKey {
        #[arg(long)]
        api_key: String,
    },
    /// Create a person who can log in through a connector.
    CreateUser {
        #[arg(long)]
        name: String,
        #[arg(long)]
        email: String,
    },
    /// Add a user to a workspace (or change their role and permissions there).
    AddMember {
        #[arg(long)]
        workspace: String,
        #[arg(long)]
        user: String,
        /// owner, admin or member
        #[arg(long)]
        role: String,
        /// Comma-separated: contacts,inbox,calendar,orders,business_pages,call_agent,campaigns,integrations
        #[arg(long, value_delimiter = ',')]
        permissions: Vec<String>,
    },
    /// Issue an OAuth access token for a user.
    IssueToken {
        #[arg(long)]
        user: String,
        /// Seconds until it expires.
        #[arg(long, default_value_t = 3600)]
        expires_in: u64,
    },
    /// Emit an event of any catalog type through the delivery pipeline.
    Trigger {
        /// The event type, e.g. booking.created.
        event_type: String,
        #[arg(long)]
        workspace: String,
        /// The event's data as JSON; sample data when omitted.
        #[arg(long)]
        data: Option<String>,
    },
    /// List owner notifications (endpoints the service disabled).
    Notifications {
        #[arg(long)]
        workspace: String,
    },
    /// Take a consistent online backup of the whole store into a file (the service keeps
    /// serving; writes wait while it is taken).
    Backup {
        #[arg(long)]
        to: std::path::PathBuf,
    },
    /// Set a workspace's monthly credit allowance.
    SetCredits {
        #[arg(long)]
        workspace: String,
        #[arg(long)]
        allowance: u64,
    },
    /// Create a funnel with stages.
    CreateFunnel {
        #[arg(long)]
        workspace: String,
        #[arg(long)]
        name: String,
        /// Comma-separated stage names, in order.
        #[arg(long, value_delimiter = ',')]
        stages: Vec<String>,
    },
}

impl AdminAction {
    /// Method, path and body of the operator call.
    fn request(&self) -> (reqwest::Method, String, Option<Value>) {
        use reqwest::Method;
        match self {
            AdminAction::CreateWorkspace { name, hipaa } => (
                Method::POST,
                "/admin/workspaces".into(),
                Some(json!({"name": name, "hipaa": hipaa})),
            ),
            AdminAction::ListWorkspaces {
                limit,
                starting_after,
            } => {
                let mut query = form_urlencoded::Serializer::new(String::new());
                query.append_pair("limit", &limit.to_string());
                if let Some(cursor) = starting_after {
                    query.append_pair("starting_after", cursor);
                }
                (
                    Method::GET,
                    format!("/admin/workspaces?{}", query.finish()),
                    None,
                )
            }
            AdminAction::CreateApiKey { workspace } => (
                Method::POST,
                format!("/admin/workspaces/{workspace}/api-keys"),
                None,
            ),
            AdminAction::RevokeApiKey { api_key } => (
                Method::POST,
                "/admin/api-keys/revoke".into(),
                Some(json!({"api_key": api_key})),
            ),
            AdminAction::CreateUser { name, email } => (
                Method::POST,
                "/admin/users".into(),
                Some(json!({"name": name, "email": email})),
            ),
            AdminAction::AddMember {
                workspace,
                user,
                role,
                permissions,
            } => (
                Method::POST,
                format!("/admin/workspaces/{workspace}/members"),
                Some(json!({"user_id": user, "role": role, "permissions": permissions})),
            ),
            AdminAction::IssueToken { user, expires_in } => (
                Method::POST,
                format!("/admin/users/{user}/tokens"),
                Some(json!({"expires_in": expires_in})),
            ),
            AdminAction::Trigger {
                event_type,
                workspace,
                data,
            } => {
                let data = data.as_deref().map(|d| {
                    serde_json::from_str::<Value>(d).unwrap_or(Value::String(d.to_string()))
                });
                (
                    Method::POST,
                    format!("/admin/workspaces/{workspace}/events"),
                    Some(json!({"type": event_type, "data": data})),
                )
            }
            AdminAction::SetCredits {
                workspace,
                allowance,
            } => (
                Method::POST,
                format!("/admin/workspaces/{workspace}/credits"),
                Some(json!({"allowance": allowance})),
            ),
            AdminAction::Notifications { workspace } => (
                Method::GET,
                format!("/admin/workspaces/{workspace}/notifications"),
                None,
            ),
            AdminAction::Backup { .. } => (Method::POST, "/admin/backup".into(), None),
            AdminAction::CreateFunnel {
                workspace,
                name,
                stages,
            } => (
                Method::POST,
                format!("/admin/workspaces/{workspace}/funnels"),
                Some(json!({"name": name, "stages": stages})),
            ),
        }
    }
}

/// Runs an admin action; prints the answer as JSON; non-2xx is an error.
pub async fn run_admin(args: AdminArgs) -> Result<(), String> {
    if let AdminAction::Backup { to } = &args.action {
        let done =
            crate::maintenance::backup(&args.operator.admin_url, &args.operator.admin_token, to)
                .await?;
        println!("{done}");
        return Ok(());
    }
    let (method, path, body) = args.action.request();
    let client = reqwest::Client::builder()
        .no_proxy()
        .build()
        .map_err(|e| e.to_string())?;
    let mut req = client
        .request(method, format!("{}{path}", args.operator.base()))
        .bearer_auth(&args.operator.admin_token);
    if let Some(body) = body {
        req = req.json(&body);
    }
    let response = req
        .send()
        .await
        .map_err(|e| format!("request failed: {e}"))?;
    let status = response.status();
    let text = response.text().await.map_err(|e| e.to_string())?;
    let pretty = serde_json::from_str::<Value>(&text)
        .ok()
        .and_then(|v| serde_json::to_string_pretty(&v).ok())
        .unwrap_or(text);
    if status.is_success() {
        println!("{pretty}");
        Ok(())
    } else {
        Err(format!("{status}: {pretty}"))
    }
}
