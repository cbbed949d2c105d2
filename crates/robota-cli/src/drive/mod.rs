//! Protocol drivers: each runs an `InteractiveSession` for a program on the other end of
//! a pipe, one file per protocol, as a client of the session's one event stream (like the
//! TUI and headless output). None reaches into `session` or `core`.

pub mod acp;
pub mod agent_sdk;
pub mod mcp_serve;
