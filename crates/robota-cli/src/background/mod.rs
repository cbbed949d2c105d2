//! Background sessions (`robota --bg`): a session that runs detached from the terminal,
//! in its own process session, and is reached through `$ROBOTA_HOME/background/<id>/`
//! (`registry`). The supervisor (`supervisor`) runs the session as a `robota -p` child
//! speaking the Agent SDK's stream-json, keeps its event log and state, and serves a
//! control socket; `robota ps`, `logs`, `send`, `stop` and `rm` (`commands`) read and
//! drive it from any terminal.

pub mod attach;
pub mod commands;
mod launch;
mod registry;
mod render;
mod supervisor;

pub use launch::{start, start_resumed};
pub use supervisor::{SUPERVISE_ARG, run as supervise};
