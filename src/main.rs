//! The `robota` binary: everything it does is `robota::cli::main`, unless it was started
//! as the sandbox's relay (`robota __sandbox-relay …`, see `robota_sandbox::relay`),
//! which it must check before anything else.

fn main() -> std::process::ExitCode {
    robota::tools::sandbox::relay::run_if_requested();
    robota::cli::main()
}
