fn main() -> std::process::ExitCode {
    robota::cli::main()
}
