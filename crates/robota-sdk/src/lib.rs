//! The embedding API: robota as a library. A program creates a provider (from
//! [`robota_providers`], or its own implementation of [`robota_core::Provider`]) and hands
//! it to the SDK, which stays provider-neutral: it never builds one.
//!
//! Two ways in:
//!
//! - [`query`]: one prompt, one answer — the model may run tools for as many rounds as it
//!   needs, in the session a [`SessionBuilder`] describes (working directory, permission
//!   mode, turn limit, extra tools); [`QueryOptions`] are the callbacks for streamed text,
//!   compaction and permission questions.
//! - [`InteractiveSession`], built with [`SessionBuilder`]: a long-lived session that takes
//!   prompts, slash commands and `!commands` ([`InteractiveSession::submit`]), queues them
//!   while one runs, can be interrupted ([`InteractiveSession::abort`]), and reports
//!   everything that happens as a stream of [`SessionEvent`]s. robota's own terminal UI
//!   and headless mode are clients of this same type.
//!
//! A program adds its own tools by implementing [`robota_core::Tool`] and passing them to
//! [`SessionBuilder::tool`].
//!
//! ```no_run
//! use std::sync::Arc;
//! use robota_providers::{AnthropicConfig, AnthropicProvider};
//! use robota_sdk::{SessionBuilder, SessionEvent};
//!
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! let key = std::env::var("ANTHROPIC_API_KEY")?;
//! let provider = Arc::new(AnthropicProvider::new(AnthropicConfig::new(key))?);
//! let mut session = SessionBuilder::new(provider, "claude-sonnet-4-6", ".").start()?;
//! let mut events = session.events().ok_or("the event stream was taken")?;
//! let id = session.submit("Summarise README.md in one sentence");
//! while let Some(event) = events.recv().await {
//!     match event {
//!         SessionEvent::TextDelta(text) => print!("{text}"),
//!         SessionEvent::SubmissionEnded { id: ended, outcome } if ended == id => {
//!             println!("\n[{:?} after {} provider calls]", outcome.end, outcome.rounds);
//!             break;
//!         }
//!         _ => {}
//!     }
//! }
//! session.close().await;
//! # Ok(())
//! # }
//! ```
//!
//! The modules marked hidden below are how robota's own command line assembles a session
//! (settings, plugins, MCP servers, subagents …); they are not part of the embedding API.

#![warn(missing_docs)]

mod builder;
mod errors;
mod events;
mod interactive;
mod query;

pub mod agents;
pub mod assembly;
pub mod attachments;
pub mod checkpoint;
pub mod commands;
pub(crate) mod context_files;
pub(crate) mod frontmatter;
pub mod instructions;
pub mod mcp;
pub mod paths;
pub mod plugins;
pub mod settings;
pub mod shell_command;
pub mod skills;
pub mod system_prompt;
pub(crate) mod tasks;
mod translate;

pub use assembly::{
    AssemblyError, ChosenProvider, ProjectOptions, ProjectPaths, ProjectSession, ProviderSource,
};
pub use builder::SessionBuilder;
pub use checkpoint::{RewindAction, RewindPoint, Rewound};
pub use commands::{CommandEntry, CommandScope, Submission, SubmissionId};
pub use errors::{ErrorKind, ProviderEndpoint, TurnError};
pub use events::{
    CONTEXT_SUMMARY_PREFIX, CompactTrigger, ModelUsage, Outcome, PermissionChoice,
    PermissionRequest, QueuedSubmission, SessionEvent, SessionState, TurnEnd,
};
pub use interactive::InteractiveSession;
pub use query::{Compaction, QueryAnswer, QueryOptions, query};
pub use robota_core::permission::PermissionMode;
/// How a client answers a permission request.
pub use robota_session::PermissionAnswer;
