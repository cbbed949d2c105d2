//! Background sessions (`robota --bg`): a session that runs detached from the terminal,
//! in its own process session, and is reached through `$ROBOTA_HOME/background/<id>/`
//! (`registry`). The supervisor (`supervisor`) runs the session as a `robota -p` child
//! speaking the Agent SDK's stream-json, keeps its event log and state, and serves a
//! control socket; `robota ps`, `logs`, `send`, `stop` and `rm` (`commands`) read and
//! drive it from any terminal. Unix only: elsewhere (Windows) the same entry points refuse
//! (`unsupported.rs`).

#[cfg(unix)]
pub mod attach;
#[cfg(unix)]
pub mod commands;
#[cfg(unix)]
mod launch;
#[cfg(unix)]
mod registry;
#[cfg(unix)]
mod render;
#[cfg(unix)]
mod supervisor;
#[cfg(not(unix))]
mod unsupported;

#[cfg(unix)]
pub use launch::{start, start_resumed};
#[cfg(unix)]
pub use supervisor::{SUPERVISE_ARG, run as supervise};
#[cfg(not(unix))]
pub use unsupported::{SUPERVISE_ARG, attach, commands, start, start_resumed, supervise};
