//! The full-screen terminal UI. It consumes `sdk::InteractiveSession` events and renders
//! them; the widgets land with the TUI work. Until then `robota` without `-p` explains how
//! to run headless.

/// What the interactive entry point prints while the full-screen UI is not built yet.
pub const NOT_YET_AVAILABLE: &str = "robota: the full-screen UI is not available in this build yet; run headless with `robota -p \"your prompt\"` (see `robota --help`).";

pub mod diff;
pub mod markdown;
pub mod theme;
pub mod transcript;
pub mod wrap;
