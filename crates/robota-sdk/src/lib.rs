//! The embedding API: robota as a library. A program creates a provider (from
//! the `robota_providers` crate, or its own implementation of [`robota_core::Provider`]) and hands
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
//! To get the session robota's own command line runs — settings, trust, plugins, MCP
//! servers, hooks, commands, skills and subagents, all from a project directory — use
//! [`ProjectSession`] ([`assembly`]). The modules below are the parts it is built from,
//! public for programs that want one part on its own:
//!
//! - [`assembly`]: puts a project's session together from [`ProjectOptions`].
//! - [`paths`]: [`ProjectPaths`], the working directory and the homes a session reads.
//! - [`settings`]: the settings files, merged and type-checked; workspace trust; writing
//!   provider profiles and allow rules back.
//! - [`instructions`]: what a session's system prompt is built from, and the files
//!   `/memory` edits; [`system_prompt`]: the git branch the prompt names.
//! - [`commands`]: the slash-command registry, parsing a submission, custom Markdown
//!   commands and skills, and the Markdown transcript export.
//! - [`skills`]: the listing of skills the model may invoke.
//! - [`agents`]: subagent definitions (built-in and Markdown).
//! - [`mcp`]: which MCP servers a session has and their connections.
//! - [`plugins`]: loading, discovering and installing plugins, and their marketplaces.
//! - [`checkpoint`]: file snapshots per prompt, and rewinding to them.
//! - [`attachments`]: `@path` mentions and pasted image paths.
//! - [`shell_command`]: the note a `!command` leaves in the conversation, and reading it
//!   back.

#![deny(missing_docs)]

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
pub(crate) mod telemetry;
mod translate;

pub use assembly::{
    AssemblyError, ChosenProvider, ProjectOptions, ProjectPaths, ProjectSession, ProviderSource,
};
pub use builder::SessionBuilder;
pub use checkpoint::{RewindAction, RewindPoint, Rewound};
pub use commands::{CommandEntry, CommandScope, Submission, SubmissionId};
pub use errors::{ErrorKind, ProviderEndpoint, TurnError};
pub use events::{
    CONTEXT_SUMMARY_PREFIX, CompactReason, CompactTrigger, ModelUsage, Outcome, PermissionChoice,
    PermissionRequest, QueuedSubmission, SUMMARY_FROM_HERE_PREFIX, SessionEvent, SessionState,
    TurnEnd,
};
pub use interactive::{InteractiveSession, RemoteEnds, RemoteSink, SessionControl};
pub use query::{Compaction, QueryAnswer, QueryOptions, query};
pub use robota_core::permission::PermissionMode;
/// What went wrong reading a session log (older history the user scrolled up to).
pub use robota_session::LogError;
/// How a client answers a permission request.
pub use robota_session::PermissionAnswer;
/// A resumed log's older history, read for display a page at a time.
pub use robota_session::replay::{OlderHistory, OlderPage};
/// The display of a logged tool call, for clients that redraw a resumed session.
pub use robota_tools::recorded_display;
