//! The `robota` binary: everything it does is `robota::cli::main`.

fn main() -> std::process::ExitCode {
    robota::cli::main()
}
