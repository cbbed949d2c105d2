//! The full-screen terminal UI. It drives an `sdk::InteractiveSession` and renders its
//! events: the app loop and its overlays (`app`), the transcript with streaming markdown
//! and diffs, the composer with completion, the status line, the terminal guard, and the
//! widgets the overlays share (`widgets`).

#![deny(missing_docs)]

pub mod app;
pub mod completion;
pub mod composer;
pub mod diff;
pub mod markdown;
pub mod status;
pub mod terminal;
pub mod theme;
pub mod transcript;
pub mod widgets;
pub mod wrap;
