//! `query`: one prompt in, one answer out — the one-shot use of a session (the original's
//! `createQuery`). It runs on an [`InteractiveSession`] like every other client, reading
//! its events to call the caller's callbacks and to collect the answer.

use std::time::Duration;

use robota_core::Usage;
use robota_session::PermissionAnswer;

use super::builder::SessionBuilder;
use super::errors::{ErrorKind, TurnError};
use super::events::{PermissionRequest, SessionEvent, TurnEnd};

type TextCallback = Box<dyn Fn(&str) + Send + Sync>;
type CompactCallback = Box<dyn Fn(&Compaction) + Send + Sync>;
type PermissionCallback = Box<dyn Fn(&PermissionRequest) -> PermissionAnswer + Send + Sync>;

/// What [`query`] calls while its prompt runs: the streamed text, compactions and the
/// permission questions. The session itself — model, directory, mode, limits, tools,
/// rules, history — is the [`SessionBuilder`] the query runs on.
#[derive(Default)]
pub struct QueryOptions {
    on_text_delta: Option<TextCallback>,
    on_compact: Option<CompactCallback>,
    on_permission: Option<PermissionCallback>,
}

impl QueryOptions {
    /// No callbacks: the answer arrives whole, and calls that need approval are denied.
    pub fn new() -> Self {
        QueryOptions::default()
    }

    /// Called with each piece of the answer's text as it streams in (text of every round,
    /// including the words before a tool call).
    pub fn on_text_delta(mut self, callback: impl Fn(&str) + Send + Sync + 'static) -> Self {
        self.on_text_delta = Some(Box::new(callback));
        self
    }

    /// Called when the conversation was compacted (summarised to fit the model's context
    /// window) while the query ran. Only a query that continues a
    /// [`history`](SessionBuilder::history) has something to compact: a fresh query's own
    /// turn is never summarised.
    pub fn on_compact(mut self, callback: impl Fn(&Compaction) + Send + Sync + 'static) -> Self {
        self.on_compact = Some(Box::new(callback));
        self
    }

    /// Decides the tool calls that need approval. Without it such calls are denied and
    /// the model is told why; with it each one waits for the callback's answer.
    pub fn on_permission(
        mut self,
        callback: impl Fn(&PermissionRequest) -> PermissionAnswer + Send + Sync + 'static,
    ) -> Self {
        self.on_permission = Some(Box::new(callback));
        self
    }
}

/// A compaction that happened during a [`query`], as [`QueryOptions::on_compact`] sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Compaction {
    /// The context estimate before, in tokens.
    pub pre_tokens: u64,
    /// The context estimate after, in tokens.
    pub post_tokens: u64,
    /// The summary that replaced the conversation so far.
    pub summary: String,
}

/// What a [`query`] produced.
#[derive(Debug, Clone, PartialEq)]
pub struct QueryAnswer {
    /// The model's last text answer (empty when it ended on a tool call).
    pub text: String,
    /// How the query ended: [`TurnEnd::Success`], or [`TurnEnd::MaxTurns`] /
    /// [`TurnEnd::ContextFull`] with the text so far. Errors are `Err` of [`query`].
    pub end: TurnEnd,
    /// Provider calls the query made (one per round of tool calls, plus the answer).
    pub turns: u32,
    /// Tokens used by every provider call of the query.
    pub usage: Usage,
    /// What those tokens cost in US dollars; `None` when the model's price is unknown.
    pub cost_usd: Option<f64>,
    /// The id of the session the query ran in.
    pub session_id: String,
    /// How long the query took.
    pub duration: Duration,
}

/// Runs `prompt` to its answer in the session `session` describes: the model may call
/// tools (robota's built-ins and those of [`SessionBuilder::tool`]) as many rounds as it
/// needs or [`SessionBuilder::max_turns`] allows.
///
/// The provider is created by the caller (see `robota::providers`); the SDK never builds
/// one. Dropping the returned future ends the session, interrupting the turn. `Err`
/// carries what failed — the provider refused the key, the server was not
/// reachable, … — with a hint saying what to do.
///
/// ```no_run
/// use std::sync::Arc;
/// use robota_providers::{AnthropicConfig, AnthropicProvider};
/// use robota_sdk::{QueryOptions, SessionBuilder, query};
///
/// # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
/// let provider = Arc::new(AnthropicProvider::new(AnthropicConfig::new("sk-ant-…"))?);
/// let session = SessionBuilder::new(provider, "claude-sonnet-4-6", "/path/to/project")
///     .max_turns(10);
/// let options = QueryOptions::new().on_text_delta(|delta| print!("{delta}"));
/// let answer = query(session, "Which files are in this directory?", options).await?;
/// println!("\n{} (${:.4})", answer.text, answer.cost_usd.unwrap_or(0.0));
/// # Ok(())
/// # }
/// ```
pub async fn query(
    session: SessionBuilder,
    prompt: &str,
    options: QueryOptions,
) -> Result<QueryAnswer, TurnError> {
    let mut session = session
        .ask_permissions(options.on_permission.is_some())
        .start()?;
    let session_id = session.id().to_string();
    let Some(mut events) = session.events() else {
        return Err(closed());
    };
    let id = session.submit(super::commands::Submission::Prompt(prompt.to_string()));
    let mut outcome = None;
    while let Some(event) = events.recv().await {
        match event {
            SessionEvent::TextDelta(delta) => {
                if let Some(callback) = &options.on_text_delta {
                    callback(&delta);
                }
            }
            SessionEvent::Compacted {
                pre_tokens,
                post_tokens,
                summary,
                ..
            } => {
                if let Some(callback) = &options.on_compact {
                    callback(&Compaction {
                        pre_tokens,
                        post_tokens,
                        summary,
                    });
                }
            }
            SessionEvent::PermissionRequest(mut request) => {
                let answer = match &options.on_permission {
                    Some(callback) => callback(&request),
                    None => PermissionAnswer::Deny(None),
                };
                request.respond(answer);
            }
            SessionEvent::SubmissionEnded {
                id: ended,
                outcome: o,
            } if ended == id => {
                outcome = Some(o);
                break;
            }
            _ => {}
        }
    }
    let state = session.state();
    session.close().await;
    let outcome = outcome.ok_or_else(closed)?;
    match outcome.end {
        TurnEnd::Error(error) => Err(error),
        end => Ok(QueryAnswer {
            text: outcome.result,
            end,
            turns: outcome.rounds,
            usage: state.usage,
            cost_usd: state.cost_usd,
            session_id,
            duration: outcome.duration,
        }),
    }
}

/// The session's task ended before the prompt did (it should not).
fn closed() -> TurnError {
    TurnError::new(
        ErrorKind::Config,
        "the session ended before the query was answered",
    )
}
