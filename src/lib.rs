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

pub mod cli;
pub mod core;
pub mod providers;
pub mod sdk;
pub mod session;
pub mod tools;
pub mod tui;
