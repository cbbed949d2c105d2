//! Why a submission failed, typed for clients: the kind (auth, rate limit, refused
//! connection, unknown command…), the HTTP status, one line saying what happened and one
//! saying what to do next — naming the setting or variable involved, from the
//! [`ProviderEndpoint`] the client described when it started the session.

use serde::{Deserialize, Serialize};

use robota_core::{ProviderError, ProviderErrorKind};

/// Where the session's provider is reached and which settings chose it, so an error can
/// name them. Described by whoever built the provider (the SDK never builds one).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProviderEndpoint {
    /// Provider type, e.g. `anthropic`.
    pub provider: String,
    /// The base URL requests go to.
    pub base_url: String,
    /// What set the base URL: `ANTHROPIC_BASE_URL`, `providers.local.baseURL in
    /// ~/.robota/settings.json`; `None` for the provider's default.
    pub base_url_source: Option<String>,
    /// Where the key came from: `ANTHROPIC_API_KEY`, a settings profile…
    pub key_source: Option<String>,
}

/// What kind of failure ended a submission.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorKind {
    /// The key was missing or rejected (401).
    Auth,
    /// The key may not use this model or endpoint (403).
    Permission,
    /// Too many requests (429), after robota's retries.
    RateLimit,
    /// The account's quota or credit is used up.
    Quota,
    /// The provider is overloaded (529/503), after retries.
    Overloaded,
    /// The conversation does not fit the model's context window.
    ContextTooLong,
    /// The provider refused the request as malformed or naming an unknown model.
    InvalidRequest,
    /// No connection: refused, DNS, TLS, unreachable.
    Network,
    /// No answer within the timeout.
    Timeout,
    /// The provider failed (5xx), after retries.
    Server,
    /// The answer stopped mid-stream, after retries.
    StreamCut,
    /// The server's answer was not the provider's API format.
    InvalidResponse,
    /// A UserPromptSubmit hook blocked the prompt (headless runs end with exit 0 and the
    /// reason as the result, as Claude Code).
    HookBlocked,
    /// A PreCompact hook blocked a manual compaction.
    CompactBlocked,
    /// The settings, flags or provider configuration are wrong (robota could not start).
    Config,
    /// The session log could not be written.
    WriteFailure,
    /// `/name` names no command.
    UnknownCommand,
    /// A command ran and failed (bad arguments, not available here).
    CommandFailed,
}

impl ErrorKind {
    /// The kind's name as headless JSON output writes it (`auth`, `rate_limit` …).
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorKind::Auth => "auth",
            ErrorKind::Permission => "permission",
            ErrorKind::RateLimit => "rate_limit",
            ErrorKind::Quota => "quota",
            ErrorKind::Overloaded => "overloaded",
            ErrorKind::ContextTooLong => "context_too_long",
            ErrorKind::InvalidRequest => "invalid_request",
            ErrorKind::Network => "network",
            ErrorKind::Timeout => "timeout",
            ErrorKind::Server => "server",
            ErrorKind::StreamCut => "stream_cut",
            ErrorKind::InvalidResponse => "invalid_response",
            ErrorKind::HookBlocked => "hook_blocked",
            ErrorKind::CompactBlocked => "compact_blocked",
            ErrorKind::Config => "config",
            ErrorKind::WriteFailure => "write_failure",
            ErrorKind::UnknownCommand => "unknown_command",
            ErrorKind::CommandFailed => "command_failed",
        }
    }
}

/// A failed submission, as clients show it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TurnError {
    /// What kind of failure it is (what a program branches on).
    pub kind: ErrorKind,
    /// The HTTP status, when a response had one.
    pub status: Option<u16>,
    /// What happened, in one line.
    pub message: String,
    /// The next step, naming the setting or variable involved.
    pub hint: Option<String>,
}

impl std::fmt::Display for TurnError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.line())
    }
}

impl std::error::Error for TurnError {}

impl TurnError {
    /// An error of `kind` saying `message`, without status or hint.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        TurnError {
            kind,
            status: None,
            message: message.into(),
            hint: None,
        }
    }

    /// The same error with `hint` as its next step.
    pub fn with_hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }

    /// The one line a text client prints: the message, then the next step.
    pub fn line(&self) -> String {
        match &self.hint {
            Some(hint) => format!("{} — {hint}", self.message),
            None => self.message.clone(),
        }
    }

    /// A provider failure, with the next step for this endpoint.
    pub fn from_provider(error: &ProviderError, endpoint: &ProviderEndpoint) -> Self {
        let status = error.status.map(|s| format!(" ({s})")).unwrap_or_default();
        let detail = first_line(&error.message);
        let key = endpoint
            .key_source
            .as_deref()
            .unwrap_or("the provider's API key setting");
        let url = if endpoint.base_url.is_empty() {
            "the provider's base URL".to_string()
        } else {
            endpoint.base_url.clone()
        };
        let url_setting = endpoint.base_url_source.as_deref().map_or_else(
            || "set the base URL in your provider profile or environment".to_string(),
            |source| format!("check {source}"),
        );
        let (kind, message, hint) = match error.kind {
            ProviderErrorKind::Auth => (
                ErrorKind::Auth,
                format!("Authentication failed{status}: {detail}"),
                format!("check the API key in {key}"),
            ),
            ProviderErrorKind::Permission => (
                ErrorKind::Permission,
                format!("Permission denied{status}: {detail}"),
                format!("the key in {key} may not use this model or endpoint"),
            ),
            ProviderErrorKind::RateLimited => (
                ErrorKind::RateLimit,
                format!("Rate limited{status}: {detail}"),
                "wait a moment and send again (ROBOTA_MAX_RETRIES sets how often robota retries)"
                    .to_string(),
            ),
            ProviderErrorKind::Quota => (
                ErrorKind::Quota,
                format!("Quota exceeded{status}: {detail}"),
                format!("check the plan and billing of the account behind {key}"),
            ),
            ProviderErrorKind::Overloaded => (
                ErrorKind::Overloaded,
                format!("The provider is overloaded{status}: {detail}"),
                "try again shortly, or pick another model with /model".to_string(),
            ),
            ProviderErrorKind::ContextTooLong => (
                ErrorKind::ContextTooLong,
                format!("The conversation is too long for the model{status}: {detail}"),
                "run /compact, or /clear to start fresh".to_string(),
            ),
            ProviderErrorKind::NotFound => (
                ErrorKind::InvalidRequest,
                format!("Not found{status}: {detail}"),
                format!(
                    "check the model name (/model, --model) and that {url} is the API's base URL ({url_setting})"
                ),
            ),
            ProviderErrorKind::InvalidRequest => (
                ErrorKind::InvalidRequest,
                format!("The provider rejected the request{status}: {detail}"),
                "check the model name and options in your settings".to_string(),
            ),
            ProviderErrorKind::Network | ProviderErrorKind::UntrustedCertificate => (
                ErrorKind::Network,
                format!(
                    "Cannot reach {url}: {}",
                    robota_core::provider::network_cause(&error.message)
                ),
                format!("is the server running? ({url_setting})"),
            ),
            ProviderErrorKind::Timeout => (
                ErrorKind::Timeout,
                format!("{url} did not answer in time: {detail}"),
                format!(
                    "check the server ({url_setting}); ROBOTA_STREAM_IDLE_TIMEOUT_MS sets the wait"
                ),
            ),
            ProviderErrorKind::Server => (
                ErrorKind::Server,
                format!("The provider failed{status}: {detail}"),
                "try again; robota already retried".to_string(),
            ),
            ProviderErrorKind::StreamCut | ProviderErrorKind::Cancelled => (
                ErrorKind::StreamCut,
                format!("The answer was cut off: {detail}"),
                "send again; what arrived is kept as interrupted".to_string(),
            ),
            ProviderErrorKind::Decode => (
                ErrorKind::InvalidResponse,
                format!(
                    "{url} did not answer like the {} API: {detail}",
                    endpoint.provider
                ),
                format!("is it the right server? ({url_setting})"),
            ),
        };
        TurnError {
            kind,
            status: error.status,
            message,
            hint: Some(hint),
        }
    }
}

fn first_line(text: &str) -> &str {
    text.lines().next().unwrap_or("").trim()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn endpoint() -> ProviderEndpoint {
        ProviderEndpoint {
            provider: "anthropic".into(),
            base_url: "http://127.0.0.1:9".into(),
            base_url_source: Some("ANTHROPIC_BASE_URL".into()),
            key_source: Some("ANTHROPIC_API_KEY".into()),
        }
    }

    #[test]
    fn a_refused_connection_names_the_url_and_its_variable() {
        let error = ProviderError::new(
            ProviderErrorKind::Network,
            "connection failed: error sending request for url (http://127.0.0.1:9/v1/messages): client error (Connect): tcp connect error: Connection refused (os error 111)",
        );
        let e = TurnError::from_provider(&error, &endpoint());
        assert_eq!(e.kind, ErrorKind::Network);
        assert_eq!(
            e.line(),
            "Cannot reach http://127.0.0.1:9: connection refused — is the server running? (check ANTHROPIC_BASE_URL)"
        );
    }

    #[test]
    fn auth_and_rate_limits_keep_their_status_and_name_the_key() {
        let auth =
            ProviderError::new(ProviderErrorKind::Auth, "invalid x-api-key").with_status(401);
        let e = TurnError::from_provider(&auth, &endpoint());
        assert_eq!((e.kind, e.status), (ErrorKind::Auth, Some(401)));
        assert!(e.line().contains("ANTHROPIC_API_KEY"), "{}", e.line());
        let limited =
            ProviderError::new(ProviderErrorKind::RateLimited, "slow down").with_status(429);
        let e = TurnError::from_provider(&limited, &endpoint());
        assert_eq!(e.kind.as_str(), "rate_limit");
        assert_eq!(e.status, Some(429));
    }

    #[test]
    fn dns_failures_say_so() {
        let error = ProviderError::new(
            ProviderErrorKind::Network,
            "connection failed: dns error: failed to lookup address information",
        );
        let e = TurnError::from_provider(&error, &ProviderEndpoint::default());
        assert!(
            e.message.ends_with("the host name does not resolve (DNS)"),
            "{}",
            e.message
        );
    }
}
