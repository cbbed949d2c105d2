//! The provider contract: what the engine asks of a model API (one streaming call per
//! round), the events a stream yields as it arrives, the finished assistant turn, and the
//! typed errors every adapter maps its wire failures onto.

use std::time::Duration;

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::message::{Block, Message, Usage};

/// Key under which an adapter stores tool-call arguments that were not valid JSON
/// (e.g. cut by `max_tokens`): the input becomes `{INVALID_INPUT_KEY: "<raw text>"}` so the
/// history stays sendable, and the engine answers the call with an error result.
pub const INVALID_INPUT_KEY: &str = "__robota_invalid_json";

/// A tool as the model sees it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolSchema {
    /// The name the model calls it by.
    pub name: String,
    /// What it does and when to use it, for the model.
    pub description: String,
    /// JSON Schema of its input object.
    pub input_schema: Value,
}

/// A tool the provider runs on its side (the model calls it; no tool result of ours).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ServerTool {
    /// Web search with citations (Anthropic `web_search`).
    WebSearch {
        /// How many searches one answer may make.
        max_uses: u32,
        /// Only results from these domains (none: no filter).
        allowed_domains: Vec<String>,
        /// No results from these domains.
        blocked_domains: Vec<String>,
    },
}

impl ServerTool {
    /// Web search with Claude Code's limit of 5 searches per answer and no domain filter.
    pub fn web_search() -> Self {
        ServerTool::WebSearch {
            max_uses: 5,
            allowed_domains: Vec::new(),
            blocked_domains: Vec::new(),
        }
    }
}

/// Everything one provider call needs.
#[derive(Debug, Clone, Default)]
pub struct ProviderRequest {
    /// The model to ask.
    pub model: String,
    /// The system prompt.
    pub system: String,
    /// The conversation so far, oldest first; the last message is the one to answer.
    pub messages: Vec<Message>,
    /// The tools the model may call.
    pub tools: Vec<ToolSchema>,
    /// Most output tokens for the answer.
    pub max_tokens: u32,
    /// Extended-thinking budget in tokens, when the user turned thinking on.
    pub thinking_budget: Option<u32>,
    /// Tools stay listed (the history may refer to them) but the model must not call any:
    /// used for the summary call at the round cap.
    pub tools_disabled: bool,
    /// Provider-side tools to offer (only adapters that have them send them).
    pub server_tools: Vec<ServerTool>,
    /// Where the adapter reports the wire traffic of this call (diagnostics on).
    pub wire: Option<super::wire::WireTap>,
}

/// Pieces of an answer as they stream in, plus retry notices.
#[derive(Debug, Clone, PartialEq)]
pub enum StreamEvent {
    /// A piece of the answer's text.
    TextDelta(String),
    /// A piece of the model's visible reasoning.
    ThinkingDelta(String),
    /// The model started a tool call.
    ToolUseStart {
        /// The call's id.
        id: String,
        /// The tool's name.
        name: String,
    },
    /// A piece of a tool call's input, as JSON text to append to what came before.
    ToolInputDelta {
        /// The call's id.
        id: String,
        /// The next piece of the input's JSON text.
        partial_json: String,
    },
    /// A provider-side tool (e.g. Anthropic `web_search`) started.
    ServerToolUse {
        /// The call's id.
        id: String,
        /// The server tool's name.
        name: String,
    },
    /// The call failed and will be re-sent after `delay`.
    Retrying {
        /// Which retry this is, counting from 1.
        attempt: u32,
        /// Retries allowed in all.
        max_attempts: u32,
        /// How long until the retry is sent.
        delay: Duration,
        /// Why the attempt failed, in one line.
        error: String,
        /// The HTTP status, when there was one.
        status: Option<u16>,
    },
    /// Everything streamed since the attempt began is void: a retry follows.
    AttemptDiscarded,
}

/// Why the model stopped.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    /// The model finished its answer.
    EndTurn,
    /// The model wants its tool calls run.
    ToolUse,
    /// The answer hit the output token limit.
    MaxTokens,
    /// The model produced a stop sequence.
    StopSequence,
    /// The model declined to answer.
    Refusal,
    /// A long answer paused around a provider-side tool; sending it back continues it.
    PauseTurn,
    /// A reason this enum does not know, as the provider named it.
    #[serde(untagged)]
    Other(String),
}

impl StopReason {
    /// The reason as the wire names it (`end_turn`, `tool_use`…).
    pub fn as_str(&self) -> &str {
        match self {
            StopReason::EndTurn => "end_turn",
            StopReason::ToolUse => "tool_use",
            StopReason::MaxTokens => "max_tokens",
            StopReason::StopSequence => "stop_sequence",
            StopReason::Refusal => "refusal",
            StopReason::PauseTurn => "pause_turn",
            StopReason::Other(s) => s,
        }
    }
}

/// A finished assistant answer.
#[derive(Debug, Clone, PartialEq)]
pub struct AssistantTurn {
    /// The provider's message id, when it gives one.
    pub id: Option<String>,
    /// The model that answered (as the provider names it; may be empty).
    pub model: String,
    /// The answer's blocks, in order.
    pub content: Vec<Block>,
    /// Why the model stopped.
    pub stop_reason: StopReason,
    /// `None` when the provider reported no usage (not zero).
    pub usage: Option<Usage>,
}

/// What went wrong in a provider call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ProviderErrorKind {
    /// Too many requests (429); retried after the server's delay.
    RateLimited,
    /// The service is overloaded (503, 529); retried.
    Overloaded,
    /// The API key is missing or rejected (401).
    Auth,
    /// The key may not do this (403).
    Permission,
    /// No such model or endpoint (404).
    NotFound,
    /// The request was malformed or refused (400 and other 4xx).
    InvalidRequest,
    /// The prompt does not fit the model's context window.
    ContextTooLong,
    /// The account's quota or credit is used up (402 or the provider's own code).
    Quota,
    /// The connection failed (DNS, refused, TLS); retried.
    Network,
    /// The server's certificate chains to no trusted root (a TLS-inspecting proxy whose CA
    /// is not trusted, typically); not retried — only trusting the CA helps.
    UntrustedCertificate,
    /// The provider failed on its side (5xx and the like); retried.
    Server,
    /// The answer's stream ended before the answer did; retried.
    StreamCut,
    /// No answer or no progress within the time limit; retried.
    Timeout,
    /// The response could not be read (not the shape the adapter expects).
    Decode,
    /// The user interrupted the call.
    Cancelled,
}

impl ProviderErrorKind {
    /// Whether re-sending the same request may succeed.
    pub fn is_retryable(self) -> bool {
        matches!(
            self,
            ProviderErrorKind::RateLimited
                | ProviderErrorKind::Overloaded
                | ProviderErrorKind::Network
                | ProviderErrorKind::Server
                | ProviderErrorKind::StreamCut
                | ProviderErrorKind::Timeout
        )
    }
}

/// A typed provider failure with what the user needs to act on it.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{message}")]
pub struct ProviderError {
    /// The category, which decides retries and the advice shown.
    pub kind: ProviderErrorKind,
    /// What the provider said, or what went wrong on the way.
    pub message: String,
    /// The HTTP status, when there was one.
    pub status: Option<u16>,
    /// How long the provider asked us to wait before retrying (`retry-after`).
    pub retry_after: Option<Duration>,
    /// The provider's id for the failed request, for a support ticket.
    pub request_id: Option<String>,
}

impl ProviderError {
    /// An error of `kind` with `message`, no status or request id.
    pub fn new(kind: ProviderErrorKind, message: impl Into<String>) -> Self {
        ProviderError {
            kind,
            message: message.into(),
            status: None,
            retry_after: None,
            request_id: None,
        }
    }

    /// The same error with its HTTP status.
    pub fn with_status(mut self, status: u16) -> Self {
        self.status = Some(status);
        self
    }

    /// The same error with the wait the provider asked for.
    pub fn with_retry_after(mut self, retry_after: Option<Duration>) -> Self {
        self.retry_after = retry_after;
        self
    }

    /// The error of a call the user interrupted.
    pub fn cancelled() -> Self {
        ProviderError::new(ProviderErrorKind::Cancelled, "interrupted by user")
    }

    /// Whether re-sending the same request may succeed (by its kind).
    pub fn is_retryable(&self) -> bool {
        self.kind.is_retryable()
    }

    /// The message a person reads, with the next step where there is one.
    pub fn user_message(&self) -> String {
        let status = self.status.map(|s| format!(" ({s})")).unwrap_or_default();
        match self.kind {
            ProviderErrorKind::Auth => format!(
                "Authentication failed{status}: {} — check your API key.",
                self.message
            ),
            ProviderErrorKind::ContextTooLong => format!(
                "The conversation is too long for the model{status}: {} — run /compact or start a new session.",
                self.message
            ),
            ProviderErrorKind::NotFound => {
                format!(
                    "Not found{status}: {} — check the model name.",
                    self.message
                )
            }
            _ => format!("API error{status}: {}", self.message),
        }
    }

    /// The failure in one plain line for a retry notice: a connection that failed by its
    /// cause (`cannot connect (connection refused)`), never the HTTP client's error chain;
    /// anything else by its message.
    pub fn retry_reason(&self) -> String {
        match self.kind {
            ProviderErrorKind::Network | ProviderErrorKind::UntrustedCertificate => {
                format!("cannot connect ({})", network_cause(&self.message))
            }
            _ => self.message.clone(),
        }
    }
}

/// The cause of a connection failure in plain words, from the error chain's text.
pub fn network_cause(message: &str) -> String {
    if message.contains(crate::http_client::UNKNOWN_AUTHORITY) {
        return crate::http_client::UNKNOWN_AUTHORITY.to_string();
    }
    let lower = message.to_ascii_lowercase();
    if lower.contains("connection refused") {
        "connection refused".to_string()
    } else if lower.contains("dns error") || lower.contains("failed to lookup address") {
        "the host name does not resolve (DNS)".to_string()
    } else if lower.contains("certificate") || lower.contains("tls") {
        "the TLS handshake failed".to_string()
    } else if lower.contains("timed out") {
        "the connection timed out".to_string()
    } else if lower.contains("unreachable") {
        "the network is unreachable".to_string()
    } else {
        message.lines().next().unwrap_or("").trim().to_string()
    }
}

/// Receives stream events while a call runs.
pub type StreamSink<'a> = &'a (dyn Fn(StreamEvent) + Send + Sync);

/// A model API. Adapters own wire formats, retries and timeouts; the engine sees only this.
#[async_trait]
pub trait Provider: Send + Sync {
    /// Short provider name for logs and results (`anthropic`, `openai`, …).
    fn name(&self) -> &str;

    /// Streams one answer. Cancellation returns `ProviderErrorKind::Cancelled` promptly.
    async fn stream(
        &self,
        request: &ProviderRequest,
        events: StreamSink<'_>,
        cancel: &CancellationToken,
    ) -> Result<AssistantTurn, ProviderError>;
}
