//! The `robota` binary: the command line (`robota_cli::main`) with the two parts it does
//! not link plugged in — the provider adapters and the full-screen app — unless it was
//! started as the sandbox's relay (`robota __sandbox-relay …`, see
//! `robota_sandbox::relay`, Unix only), which it must check before anything else.

mod attach;
mod interactive;

fn main() -> std::process::ExitCode {
    #[cfg(unix)]
    robota::tools::sandbox::relay::run_if_requested();
    robota_cli::main(robota_cli::Parts {
        providers: &robota::providers::Adapters,
        interactive: interactive::run,
        attach: attach::run,
    })
}
