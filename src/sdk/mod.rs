//! The client-facing API: `InteractiveSession` and its `SessionEvent` stream, plus what a
//! session is assembled from — system prompt, context files, slash commands. It is
//! provider-neutral: it receives a provider, it never builds one.

pub mod agents;
pub mod attachments;
pub mod checkpoint;
pub mod commands;
pub mod context_files;
pub mod errors;
pub mod events;
pub mod frontmatter;
pub mod instructions;
pub mod interactive;
pub mod mcp;
pub mod plugins;
pub mod settings;
pub mod shell_command;
pub mod skills;
pub mod system_prompt;
pub mod tasks;
mod translate;

/// How a client answers a permission request.
pub use crate::session::PermissionAnswer;
pub use checkpoint::{RewindAction, RewindPoint, Rewound};
pub use commands::{Submission, SubmissionId};
pub use errors::{ErrorKind, ProviderEndpoint, TurnError};
pub use events::{
    CompactTrigger, ModelUsage, Outcome, PermissionChoice, PermissionRequest, QueuedSubmission,
    SessionEvent, SessionState, TurnEnd,
};
pub use interactive::{InteractiveSession, SessionOptions};
