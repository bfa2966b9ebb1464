use clap::Parser;

/// mimalloc gives the memory of passivated actors back to the system; the default
/// allocator kept it (see BENCHMARKS.md).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use switchboard::cli::{Cli, Command};

#[tokio::main]
async fn main() -> std::process::ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Serve(args) => serve(args).await,
        Command::Admin(args) => match switchboard::cli::run_admin(args).await {
            Ok(()) => std::process::ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("switchboard admin: {e}");
                std::process::ExitCode::FAILURE
            }
        },
        Command::Restore {
            file,
            data_dir,
            database_url,
        } => {
            // A database restore needs no folder (clap asks for one without a database).
            let data_dir = data_dir.unwrap_or_else(std::env::temp_dir);
            let restored = tokio::task::spawn_blocking(move || {
                switchboard::maintenance::restore(&file, &data_dir, database_url.as_deref())
            })
            .await
            .unwrap_or_else(|e| Err(e.to_string()));
            match restored {
                Ok(done) => {
                    println!("{done}");
                    std::process::ExitCode::SUCCESS
                }
                Err(e) => {
                    eprintln!("switchboard restore: {e}");
                    std::process::ExitCode::FAILURE
                }
            }
        }
        Command::Check {
            data_dir,
            database_url,
        } => match switchboard::maintenance::check(
            &data_dir.unwrap_or_else(std::env::temp_dir),
            database_url,
        )
        .await
        {
            Ok((report, healthy)) => {
                print!("{report}");
                if healthy {
                    std::process::ExitCode::SUCCESS
                } else {
                    std::process::ExitCode::FAILURE
                }
            }
            Err(e) => {
                eprintln!("switchboard check: {e}");
                std::process::ExitCode::from(2)
            }
        },
        Command::Listen(args) => match switchboard::listen::run(args, shutdown_signal()).await {
            Ok(()) => std::process::ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("switchboard listen: {e}");
                std::process::ExitCode::FAILURE
            }
        },
        Command::Loadtest(args) => match switchboard::loadtest::run(args).await {
            Ok(()) => std::process::ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("switchboard loadtest: {e}");
                std::process::ExitCode::FAILURE
            }
        },
    }
}

async fn serve(args: switchboard::config::ServeArgs) -> std::process::ExitCode {
    let settings = match args.settings() {
        Ok(s) => s,
        Err(e) => {
            eprintln!("switchboard: bad setting {e}");
            return std::process::ExitCode::from(2);
        }
    };
    init_tracing(settings.log_json);
    raise_open_files_limit();
    let stop = shutdown_signal();
    let app = match switchboard::app::start(settings).await {
        Ok(app) => app,
        Err(e) => {
            tracing::error!(error = %e, "cannot start");
            return std::process::ExitCode::FAILURE;
        }
    };
    announce(&app);
    if let Err(e) = app.secrets_shown().await {
        tracing::error!(error = %e, "could not record that the start-up secrets were shown; the next start shows new ones");
    }
    tokio::select! {
        _ = stop => {
            tracing::info!("shutting down");
            app.shutdown().await;
            std::process::ExitCode::SUCCESS
        }
        _ = app.restart_needed() => {
            // Everything acknowledged is on disk; what was refused was answered 503.
            tracing::error!("the store failed and the disk takes writes again; exiting so that the supervisor restarts the service");
            std::process::ExitCode::from(RESTART_EXIT_CODE)
        }
    }
}

/// The start-up lines, through the log so that `SWITCHBOARD_LOG_FORMAT=json` covers them:
/// what a first start created (each secret is shown only here) and where each listener is.
fn announce(app: &switchboard::app::RunningApp) {
    if let Some(b) = &app.bootstrap {
        tracing::info!(workspace_id = %b.workspace_id, "workspace \"Default\" created");
        tracing::info!(api_key = %b.api_key, "api key, shown once");
    }
    if let Some(token) = &app.generated_admin_token {
        tracing::info!(admin_token = %token, "admin token, shown once");
    }
    tracing::info!(url = %app.api_url(), "api listening");
    tracing::info!(url = %app.admin_url(), "operator api listening");
}

/// Raises the soft limit on open files to the hard limit: every connection is a file, and
/// the common default of 1,024 is far below what one server can hold.
fn raise_open_files_limit() {
    use rlimit::Resource;
    match Resource::NOFILE.get() {
        Ok((soft, hard)) if soft < hard => match Resource::NOFILE.set(hard, hard) {
            Ok(()) => tracing::info!(from = soft, to = hard, "raised the open-files limit"),
            Err(e) => {
                tracing::warn!(soft, hard, error = %e, "could not raise the open-files limit")
            }
        },
        Ok((soft, hard)) => tracing::info!(soft, hard, "open-files limit"),
        Err(e) => tracing::warn!(error = %e, "could not read the open-files limit"),
    }
}

/// The exit status that asks a supervisor for a restart (EX_TEMPFAIL).
const RESTART_EXIT_CODE: u8 = 75;

/// Logs on stderr at `RUST_LOG` (default `info`); colour only when stderr is a terminal,
/// so that files, pipes and log collectors get plain text.
fn init_tracing(json: bool) {
    use std::io::IsTerminal;
    use tracing_subscriber::EnvFilter;
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(std::io::stderr().is_terminal())
        .with_writer(std::io::stderr);
    if json {
        builder.json().init();
    } else {
        builder.init();
    }
}

/// Resolves on SIGTERM or Ctrl-C. The handlers are installed when this is called, not
/// when it is first awaited, so a signal sent right after the start is announced is not
/// lost to the default action.
fn shutdown_signal() -> impl std::future::Future<Output = ()> {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        let term = signal(SignalKind::terminate()).ok();
        let int = signal(SignalKind::interrupt()).ok();
        async move {
            let wait = |s: Option<tokio::signal::unix::Signal>| async move {
                match s {
                    Some(mut s) => {
                        s.recv().await;
                    }
                    None => std::future::pending::<()>().await,
                }
            };
            tokio::select! {
                _ = wait(term) => {},
                _ = wait(int) => {},
            }
        }
    }
    #[cfg(not(unix))]
    async {
        let _ = tokio::signal::ctrl_c().await;
    }
}
