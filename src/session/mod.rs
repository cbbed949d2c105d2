//! A conversation that lasts: the engine run with permission enforcement, context
//! tracking and the append-only JSONL session log with its replay. Provider and tools are
//! injected.

pub mod conversation;
mod gate_hooks;
pub mod hooks;
pub mod log;
pub mod redact;
pub mod replay;
pub mod store;

pub use conversation::{PermissionAnswer, Session, SessionConfig, SessionUpdate, UpdateSink};
