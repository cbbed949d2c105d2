//! robota's command line: its arguments, session assembly from them, headless print mode,
//! the protocol drivers (the Agent SDK's stream-json, ACP, `robota mcp serve`) and the
//! subcommands. The `robota` binary plugs in the two parts this crate does not link —
//! the provider adapters and the full-screen app ([`Parts`]) — so an edit to either
//! rebuilds the binary, not the command line.
//!
//! It may use `robota-core`, `robota-session`, `robota-tools` and `robota-sdk`.

#![deny(missing_docs)]

mod args;
mod assemble;
mod background;
mod drive;
mod headless;
mod output;
use robota_sdk::assembly as paths;
mod plugin_list;
mod printer;
mod provider_setup;
#[cfg(unix)]
mod reaper;
#[cfg(windows)]
#[path = "reaper_windows.rs"]
mod reaper;
mod session_diagnostics;
mod stop_signals;
mod turn_watch;
mod worktree;

use robota_core as core;
use robota_sdk as sdk;
use robota_session as session;
use robota_tools as tools;

pub use args::Args;
pub use assemble::{AssembleError, assemble};
pub use background::attach::{AttachError, Attached, attach, attach_target};
pub use background::start_resumed as continue_in_background;
pub use headless::{EXIT_ERROR, EXIT_OK};
pub use provider_setup::{ProviderSetupError, check_setup};
pub use robota_core::ProviderFactory;

/// What the binary plugs into the command line.
#[derive(Clone, Copy)]
pub struct Parts {
    /// Builds the provider the command line chooses.
    pub providers: &'static dyn ProviderFactory,
    /// Runs the full-screen app (`robota` without `-p`) with the parsed arguments; returns
    /// the exit status.
    pub interactive: fn(args::Args, &'static dyn ProviderFactory) -> u8,
    /// Runs the full-screen app attached to a background session (`robota attach`): the
    /// state directory and the session's id, name or id prefix; returns the exit status.
    pub attach: fn(std::path::PathBuf, String) -> u8,
}

use std::process::ExitCode;

use clap::Parser;

/// Everything the `robota` binary does, after the sandbox relay's check.
pub fn main(parts: Parts) -> ExitCode {
    // Every robota process holds the user's keys in its environment: no command it runs
    // may read them through `/proc/PID/environ` (root may read any process's: the values
    // leave the block it shows).
    core::credentials::protect_process_memory();
    // SAFETY: the first thing `main` does (the sandbox relay check before it touches no
    // variable): one thread, the environment unchanged.
    unsafe { core::credentials::hide_from_process_environ(&provider_setup::HIDDEN_VARIABLES) };
    if std::env::args_os()
        .nth(1)
        .is_some_and(|a| a == reaper::REAP_ARG)
    {
        return reaper::run();
    }
    if std::env::args_os()
        .nth(1)
        .is_some_and(|a| a == background::SUPERVISE_ARG)
    {
        return background::supervise(std::env::args_os().nth(2).map(Into::into));
    }
    core::http_client::load_trust_roots_in_background();
    let args = match args::Args::try_parse() {
        Ok(args) => args,
        Err(err) => {
            let _ = err.print();
            return ExitCode::from(err.exit_code().clamp(0, 255) as u8);
        }
    };
    if let Some(command) = &args.command {
        return ExitCode::from(run_subcommand(command, &args, &parts));
    }
    let worktree = match args.worktree.as_deref().map(enter_worktree).transpose() {
        Ok(worktree) => worktree,
        Err(code) => return ExitCode::from(code),
    };
    if args.bg {
        let home = paths::robota_home();
        return ExitCode::from(background::start(&args, &home, worktree.as_ref()));
    }
    let _log_guard = init_logging();
    // Commands robota starts die with it, however it ends.
    reaper::install();
    let agent_sdk = args.input_format == args::InputFormat::StreamJson
        && args.output_format == args::OutputFormat::StreamJson;
    if !args.print && !agent_sdk {
        return ExitCode::from((parts.interactive)(args, parts.providers));
    }
    let runtime = match runtime() {
        Ok(rt) => rt,
        Err(code) => return ExitCode::from(code),
    };
    let code = if agent_sdk {
        runtime.block_on(drive::agent_sdk::run(args, parts.providers))
    } else {
        runtime.block_on(headless::run(args, parts.providers))
    };
    runtime.shutdown_timeout(std::time::Duration::from_millis(200));
    ExitCode::from(code)
}

/// Makes the worktree `name` (`-w`) and moves into it; `Err` is the exit status after
/// the message.
fn enter_worktree(name: &str) -> Result<worktree::Worktree, u8> {
    let made = std::env::current_dir()
        .map_err(worktree::WorktreeError::Git)
        .and_then(|cwd| worktree::create(&cwd, name));
    let made = made.map_err(|e| {
        eprintln!("Error: {e}");
        headless::EXIT_ERROR
    })?;
    if let Err(e) = std::env::set_current_dir(&made.cwd) {
        eprintln!("Error: cannot enter {}: {e}", made.cwd.display());
        return Err(headless::EXIT_ERROR);
    }
    eprintln!(
        "robota: working in {} on branch {}",
        made.path.display(),
        made.branch
    );
    Ok(made)
}

/// The async runtime every mode runs on; `Err` carries the exit status after the message.
pub fn runtime() -> Result<tokio::runtime::Runtime, u8> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|err| {
            eprintln!("Error: cannot start the async runtime: {err}");
            headless::EXIT_ERROR
        })
}

/// `robota config` and `robota trust`.
/// The provider, model, base URL and key a session would use, each with what set it.
fn describe_provider(
    settings: &crate::sdk::settings::Settings,
    args: &args::Args,
    providers: &'static dyn ProviderFactory,
) -> String {
    let choice = match provider_setup::choose(
        settings,
        args.provider.as_deref(),
        args.model.as_deref(),
        providers,
    ) {
        Ok(choice) => choice,
        Err(e) => return format!("\nprovider: none ({e})\n"),
    };
    let endpoint = &choice.endpoint;
    let base_url_source = endpoint
        .base_url_source
        .clone()
        .unwrap_or_else(|| "the provider's default".to_string());
    format!(
        "\nprovider: {}    ({})\nmodel: {}    ({})\nbase URL: {}    ({base_url_source})\nAPI key: from {}\n",
        endpoint.provider,
        choice.provider_source,
        choice.model,
        choice.model_source,
        if endpoint.base_url.is_empty() {
            "(none)"
        } else {
            &endpoint.base_url
        },
        choice.api_key_source,
    )
}

fn run_subcommand(command: &args::Subcommand, args: &args::Args, parts: &Parts) -> u8 {
    let providers = parts.providers;
    use crate::sdk::settings::{LoadOptions, Settings, trust::TrustStore};
    let cwd = match std::env::current_dir() {
        Ok(cwd) => cwd,
        Err(e) => {
            eprintln!("Error: cannot read the working directory: {e}");
            return headless::EXIT_ERROR;
        }
    };
    let project = paths::ProjectPaths::from_env(cwd.clone());
    let home = project.robota_home.clone();
    match command {
        args::Subcommand::Config => {
            match Settings::load(&LoadOptions {
                paths: &project,
                extra: args.settings.as_deref(),
                interactive: false,
            }) {
                Ok(settings) => {
                    print!("{}", settings.describe());
                    print!("{}", describe_provider(&settings, args, providers));
                    headless::EXIT_OK
                }
                Err(e) => {
                    eprintln!("Error: {e}");
                    headless::EXIT_ERROR
                }
            }
        }
        args::Subcommand::Stats { since, json } => {
            if let Some(since) = since
                && since
                    .get(..10)
                    .is_none_or(|d| d.parse::<jiff::civil::Date>().is_err())
            {
                eprintln!(
                    "Error: --since {since:?} is not a date: use YYYY-MM-DD or an RFC 3339 time"
                );
                return headless::EXIT_ERROR;
            }
            let stats = crate::session::stats::collect(&home, since.as_deref());
            if *json {
                match serde_json::to_string_pretty(&stats) {
                    Ok(text) => println!("{text}"),
                    Err(e) => {
                        eprintln!("Error: cannot write the stats as JSON: {e}");
                        return headless::EXIT_ERROR;
                    }
                }
            } else {
                print!("{}", crate::session::stats::describe(&stats));
            }
            headless::EXIT_OK
        }
        args::Subcommand::Trust => match TrustStore::load(&home).trust(&cwd) {
            Ok(()) => {
                println!("Trusted {}", cwd.display());
                headless::EXIT_OK
            }
            Err(e) => {
                eprintln!("Error: cannot save trust in {}: {e}", home.display());
                headless::EXIT_ERROR
            }
        },
        args::Subcommand::Acp {
            model,
            permission_mode,
        } => {
            let _log_guard = init_logging();
            reaper::install();
            let base = args::Args {
                command: None,
                model: model.clone(),
                permission_mode: permission_mode.clone(),
                ..args.clone()
            };
            match runtime() {
                Ok(runtime) => {
                    let code = runtime.block_on(drive::acp::run(base, providers));
                    runtime.shutdown_timeout(std::time::Duration::from_millis(200));
                    code
                }
                Err(code) => code,
            }
        }
        args::Subcommand::Plugin {
            command: args::PluginCommand::List { plugin_dir },
        } => plugin_list::run(&project, args, plugin_dir),
        args::Subcommand::Plugin { command } => plugin_list::manage(&project, command),
        args::Subcommand::Session { command } => session_diagnostics::run(&cwd, &home, command),
        args::Subcommand::Ps { json } => background::commands::ps(&home, *json),
        args::Subcommand::Logs {
            id,
            follow,
            stream_json,
        } => background::commands::logs(&home, id, *follow, *stream_json),
        args::Subcommand::Send { id, message } => background::commands::send(&home, id, message),
        args::Subcommand::Stop { id } => background::commands::stop(&home, id),
        args::Subcommand::Rm { id, force, purge } => {
            background::commands::rm(&home, id, *force, *purge)
        }
        args::Subcommand::Attach { id } => (parts.attach)(home, id.clone()),
        args::Subcommand::Mcp {
            command: args::McpCommand::Serve,
        } => {
            let _log_guard = init_logging();
            reaper::install();
            match runtime() {
                Ok(runtime) => {
                    let code = runtime.block_on(drive::mcp_serve::run());
                    runtime.shutdown_timeout(std::time::Duration::from_millis(200));
                    code
                }
                Err(code) => code,
            }
        }
    }
}

/// Lines the log writer thread may have queued.
const LOG_QUEUE_LINES: usize = 2048;

/// Sends `tracing` output to `$ROBOTA_HOME/logs/robota.log` (never to the screen). The level
/// comes from `ROBOTA_LOG` (default `info`).
fn init_logging() -> Option<tracing_appender::non_blocking::WorkerGuard> {
    let dir = paths::robota_home().join("logs");
    std::fs::create_dir_all(&dir).ok()?;
    let file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(dir.join("robota.log"))
        .ok()?;
    // The queue's slots are allocated and touched up front: the default 128,000 lines cost
    // 4 MiB of resident memory for a log that takes a few lines a minute. When it is full,
    // lines are dropped rather than stalling the caller (the UI).
    let (writer, guard) = tracing_appender::non_blocking::NonBlockingBuilder::default()
        .buffered_lines_limit(LOG_QUEUE_LINES)
        .lossy(true)
        .finish(file);
    let filter = tracing_subscriber::EnvFilter::try_from_env("ROBOTA_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    tracing_subscriber::fmt()
        .with_writer(writer)
        .with_env_filter(filter)
        .with_ansi(false)
        .try_init()
        .ok()?;
    Some(guard)
}
