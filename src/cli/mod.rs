//! The composition root: command-line arguments, provider construction, session
//! assembly, and the choice between headless print mode and the TUI.

pub mod args;
pub mod assemble;
pub mod headless;
pub mod hook_settings;
pub mod output;
pub mod paths;
pub mod provider_setup;

use std::process::ExitCode;

use clap::Parser;

/// Entry point used by `main.rs`.
pub fn main() -> ExitCode {
    let args = match args::Args::try_parse() {
        Ok(args) => args,
        Err(err) => {
            let _ = err.print();
            return ExitCode::from(err.exit_code().clamp(0, 255) as u8);
        }
    };
    if !args.print {
        eprintln!("{}", crate::tui::NOT_YET_AVAILABLE);
        return ExitCode::from(headless::EXIT_ERROR);
    }
    let _log_guard = init_logging();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(err) => {
            eprintln!("Error: cannot start the async runtime: {err}");
            return ExitCode::from(headless::EXIT_ERROR);
        }
    };
    let code = runtime.block_on(headless::run(args));
    runtime.shutdown_timeout(std::time::Duration::from_millis(200));
    ExitCode::from(code)
}

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
    let (writer, guard) = tracing_appender::non_blocking(file);
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
