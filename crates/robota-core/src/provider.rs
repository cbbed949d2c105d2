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
    pub name: String,
    pub description: String,
    pub input_schema: Value,
}

/// A tool the provider runs on its side (the model calls it; no tool result of ours).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ServerTool {
    /// Web search with citations (Anthropic `web_search`).
    WebSearch {
        max_uses: u32,
        allowed_domains: Vec<String>,
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
    pub model: String,
    pub system: String,
    pub messages: Vec<Message>,
    pub tools: Vec<ToolSchema>,
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
    TextDelta(String),
    ThinkingDelta(String),
    ToolUseStart {
        id: String,
        name: String,
    },
    ToolInputDelta {
        id: String,
        partial_json: String,
    },
    /// A provider-side tool (e.g. Anthropic `web_search`) started.
    ServerToolUse {
        id: String,
        name: String,
    },
    /// The call failed and will be re-sent after `delay`.
    Retrying {
        attempt: u32,
        max_attempts: u32,
        delay: Duration,
        error: String,
        status: Option<u16>,
    },
    /// Everything streamed since the attempt began is void: a retry follows.
    AttemptDiscarded,
}

/// Why the model stopped.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    EndTurn,
    ToolUse,
    MaxTokens,
    StopSequence,
    Refusal,
    PauseTurn,
    #[serde(untagged)]
    Other(String),
}

impl StopReason {
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
    pub model: String,
    pub content: Vec<Block>,
    pub stop_reason: StopReason,
    /// `None` when the provider reported no usage (not zero).
    pub usage: Option<Usage>,
}

/// What went wrong in a provider call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ProviderErrorKind {
    RateLimited,
    Overloaded,
    Auth,
    Permission,
    NotFound,
    InvalidRequest,
    ContextTooLong,
    Quota,
    Network,
    Server,
    StreamCut,
    Timeout,
    Decode,
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
    pub kind: ProviderErrorKind,
    pub message: String,
    pub status: Option<u16>,
    pub retry_after: Option<Duration>,
    pub request_id: Option<String>,
}

impl ProviderError {
    pub fn new(kind: ProviderErrorKind, message: impl Into<String>) -> Self {
        ProviderError {
            kind,
            message: message.into(),
            status: None,
            retry_after: None,
            request_id: None,
        }
    }

    pub fn with_status(mut self, status: u16) -> Self {
        self.status = Some(status);
        self
    }

    pub fn with_retry_after(mut self, retry_after: Option<Duration>) -> Self {
        self.retry_after = retry_after;
        self
    }

    pub fn cancelled() -> Self {
        ProviderError::new(ProviderErrorKind::Cancelled, "interrupted by user")
    }

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
            ProviderErrorKind::Network => {
                format!("cannot connect ({})", network_cause(&self.message))
            }
            _ => self.message.clone(),
        }
    }
}

/// The cause of a connection failure in plain words, from the error chain's text.
pub fn network_cause(message: &str) -> String {
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
