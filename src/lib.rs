//! robota — a full-screen terminal coding agent.
//!
//! Layers (DESIGN §2), each a top-level module; `tests/layers.rs` enforces who may use whom:
//!
//! | module | may use |
//! |---|---|
//! | `core` | nothing of the crate |
//! | `providers`, `tools` | `core` |
//! | `session` | `core` (provider and tools are injected) |
//! | `sdk` | `core`, `session`, `tools` |
//! | `tui` | `sdk`, `core` |
//! | `cli` | everything |

//!
//! The library's API is [`sdk`] (sessions, one-shot queries, events), with [`providers`]
//! to build the provider a session talks to, [`core`] for the types the API speaks
//! (messages, tools, permission modes) and [`tools`] for the built-in tools. `cli` is
//! public only for the `robota` binary (its one public item is `cli::main`); `session`
//! and `tui` are public only for the crate's own tests and benches and are hidden from
//! the documentation: they are not part of the API.

#[doc(hidden)]
pub mod cli;
pub mod core;
pub mod providers;
pub mod sdk;
#[doc(hidden)]
pub mod session;
pub mod tools;
#[doc(hidden)]
pub mod tui;
