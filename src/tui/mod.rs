//! The full-screen terminal UI. It drives an `sdk::InteractiveSession` and renders its
//! events: the app loop and its layers (`app`), the transcript with streaming markdown
//! and diffs, the composer with completion, the status line, the terminal guard.

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
