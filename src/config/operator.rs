//! Where the command-line clients (`admin`, `listen`, `loadtest`) reach a running
//! service's operator API.

use clap::Args;

#[derive(Args, Clone, Debug)]
pub struct OperatorArgs {
    /// The operator listener.
    #[arg(
        long,
        env = "SWITCHBOARD_ADMIN_URL",
        default_value = "http://127.0.0.1:8081"
    )]
    pub admin_url: String,
    /// The admin token (logged once, at the first start).
    #[arg(long, env = "SWITCHBOARD_ADMIN_TOKEN", hide_env_values = true)]
    pub admin_token: String,
}

impl OperatorArgs {
    /// The operator listener without a trailing slash, to append paths to.
    pub fn base(&self) -> &str {
        self.admin_url.trim_end_matches('/')
    }
}
