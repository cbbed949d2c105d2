//! robota — a full-screen terminal coding agent.
//!
//! The layers of DESIGN §2 are crates of this workspace; their dependencies are the layer
//! table, so the compiler enforces it (`tests/layers.rs` checks the manifests too):
//!
//! | crate | may use |
//! |---|---|
//! | `robota-permission` | nothing of the workspace |
//! | `robota-core` | `robota-permission` |
//! | `robota-sandbox` | `robota-permission` |
//! | `robota-providers` | `robota-core` |
//! | `robota-tools` | `robota-core`, `robota-sandbox` |
//! | `robota-lsp` | `robota-core` (language servers: diagnostics after edits, the `LSP` tool) |
//! | `robota-session` | `robota-core` (provider and tools are injected) |
//! | `robota-sdk` | `robota-core`, `robota-session`, `robota-tools`, `robota-lsp` |
//! | `robota-tui` | `robota-sdk`, `robota-core` |
//! | `robota-cli` | `robota-core`, `robota-session`, `robota-tools`, `robota-sdk` (the provider adapters and the TUI are plugged in) |
//! | `robota` (this package) | everything: the binary plugs the adapters and the TUI into the command line |
//!
//! The library's API is [`sdk`] (sessions, one-shot queries, events), with [`providers`]
//! to build the provider a session talks to, [`core`] for the types the API speaks
//! (messages, tools, permission modes), [`tools`] for the built-in tools, [`lsp`] for the
//! language-server client, and [`session`]
//! for the conversation under a session (its log, replay, hooks), which a program may
//! build itself and start with `sdk::InteractiveSession::start`. `tui` is public only for
//! the crate's own tests and benches, and hidden from the documentation.

#![deny(missing_docs)]

pub use robota_core as core;
pub use robota_lsp as lsp;
pub use robota_providers as providers;
pub use robota_sdk as sdk;
pub use robota_session as session;
pub use robota_tools as tools;
#[doc(hidden)]
pub use robota_tui as tui;
