//! The full-screen terminal UI. It consumes `sdk::InteractiveSession` events and renders
//! them. The widgets are here (transcript with streaming markdown and diffs, composer with
//! completion, status line, permission popup, terminal guard, frame scheduler); the app
//! loop that composes them is not yet, so `robota` without `-p` explains how to run
//! headless.

pub mod app;
pub mod completion;
pub mod composer;
pub mod diff;
pub mod markdown;
pub mod status;
pub mod terminal;
pub mod theme;
pub mod transcript;
pub mod wrap;

/// What the interactive entry point prints while the full-screen UI is not built yet.
pub const NOT_YET_AVAILABLE: &str = "robota: the full-screen UI is not available in this build yet; run headless with `robota -p \"your prompt\"` (see `robota --help`).";
