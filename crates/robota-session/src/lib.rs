//! A conversation that lasts: the engine run with permission enforcement, context
//! tracking, compaction and the append-only JSONL session log with its replay. Provider and
//! tools are injected.
//!
//! Modules, each using only those listed after it:
//! `conversation` (Session, the turn runner) and `compact` (Session's compaction: the
//! summary and the boundary; the two use each other) → `gate` (the tool gate and its hook
//! steps) →
//! `hooks` (firing hooks, logging their runs) → `engine_log` (engine events as log lines) →
//! `store` (listing, finding, forking logs) → `log` (the writer, where logs live) →
//! `replay` (reading a log back) → `repair` (answering tool calls the log left unanswered)
//! → `line` (the line format) and `error` (LogError);
//! `update` (what a session reports), `redact` and `heap` (returning freed memory after a
//! compaction) are used by several and use none;
//! `diagnostics` (the replay-grade second log, written through `log`) uses `redact` and `line`;
//! `rewind` (rewinding the conversation, recording checkpoints) sits beside `compact`.

#![deny(missing_docs)]

pub mod barrier;
pub mod compact;
pub mod conversation;
pub mod diagnostics;
pub mod engine_log;
pub mod error;
mod gate;
mod heap;
pub mod hooks;
pub mod line;
pub mod log;
pub mod redact;
pub mod repair;
pub mod replay;
pub mod rewind;
pub mod stats;
pub mod store;
pub mod update;

pub use conversation::{PermissionAnswer, Session, SessionConfig, SessionUpdate, UpdateSink};
pub use error::{HeaderError, LogError};
pub use line::{LogEvent, LogLine};
