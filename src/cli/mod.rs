//! The composition root: command-line arguments, provider construction, and the choice
//! between headless print mode and the TUI.

/// Entry point used by `main.rs`.
pub fn main() -> std::process::ExitCode {
    std::process::ExitCode::SUCCESS
}
