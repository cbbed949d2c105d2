//! The OpenAI-compatible Chat Completions adapter (`/chat/completions`, SSE): the one
//! dialect spoken by Ollama, llama.cpp `llama-server`, vLLM, LM Studio, OpenRouter, DeepSeek,
//! Groq and OpenAI itself. `OpenAiChatConfig` says where the server is; `OpenAiChatProvider`
//! implements `core::Provider` by sending one streaming request per attempt, decoding the
//! chunks (tool-call deltas by index, reasoning deltas, usage wherever it arrives) into
//! events and an `AssistantTurn`, and retrying retryable failures under its `RetryPolicy`.
//!
//! Provider data carried in history: reasoning comes back as a `Block::Thinking` with an
//! empty `signature`; it is output-only here and never sent back. No `Block::Opaque` of its
//! own is produced; other providers' opaque blocks are dropped when converting.

mod errors;
mod request;
mod stream;
mod tool_calls;

use std::time::Duration;

use async_trait::async_trait;
use reqwest::header::{ACCEPT, AUTHORIZATION, CONTENT_TYPE, HeaderMap, HeaderName, HeaderValue};
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use self::stream::ChatStreamDecoder;
use super::retry::RetryPolicy;
use super::{http, streaming};
use robota_core::{
    AssistantTurn, Provider, ProviderError, ProviderErrorKind, ProviderRequest, StreamSink,
};

/// How to reach an OpenAI-compatible server.
#[derive(Debug, Clone, PartialEq)]
pub struct OpenAiChatConfig {
    /// Sent as `Authorization: Bearer <key>` only when set (local servers need none).
    pub api_key: Option<String>,
    /// The API root including its version path (`http://127.0.0.1:11434/v1`);
    /// `/chat/completions` is appended. A trailing `/` is tolerated.
    pub base_url: String,
    /// Retries and their backoff for a failed request (default: 4 retries, 0.5 s doubling
    /// to 8 s).
    pub retry: RetryPolicy,
    /// Longest wait for the response head or for the next byte of the stream.
    pub idle_timeout: Duration,
    /// Longest wait for the TCP and TLS connection to open (default 10 s).
    pub connect_timeout: Duration,
    /// Extra request headers (OpenRouter's `HTTP-Referer`, a gateway's key header…).
    pub extra_headers: Vec<(String, String)>,
    /// Merged into the request body (`temperature`, `top_p`, `reasoning_effort`…). A `null`
    /// value removes a key robota would send; `model`, `messages` and `stream` are fixed.
    pub options: Map<String, Value>,
}

impl OpenAiChatConfig {
    /// A configuration for `base_url` with no key, default retries and timeouts.
    pub fn new(base_url: impl Into<String>) -> Self {
        OpenAiChatConfig {
            api_key: None,
            base_url: base_url.into(),
            retry: RetryPolicy::default(),
            idle_timeout: Duration::from_secs(120),
            connect_timeout: Duration::from_secs(10),
            extra_headers: Vec::new(),
            options: Map::new(),
        }
    }

    /// The full Chat Completions endpoint for `base_url`.
    pub fn chat_completions_url(&self) -> String {
        let root = self.base_url.trim().trim_end_matches('/');
        if root.ends_with("/chat/completions") {
            return root.to_string();
        }
        format!("{root}/chat/completions")
    }
}

/// Chat Completions over HTTP with SSE streaming.
#[derive(Debug)]
pub struct OpenAiChatProvider {
    config: OpenAiChatConfig,
    url: reqwest::Url,
    client: reqwest::Client,
    headers: HeaderMap,
}

impl OpenAiChatProvider {
    /// A provider for `config`. Fails with `InvalidRequest` when the base URL does not parse
    /// with `Auth` when the key cannot be sent in a header, and with `InvalidRequest` when an
    /// extra header's name or value is not valid.
    pub fn new(config: OpenAiChatConfig) -> Result<Self, ProviderError> {
        let url = reqwest::Url::parse(&config.chat_completions_url()).map_err(|e| {
            ProviderError::new(
                ProviderErrorKind::InvalidRequest,
                format!(
                    "invalid OpenAI-compatible base URL {:?}: {e}",
                    config.base_url
                ),
            )
        })?;
        let client = http::build_client(&url, config.connect_timeout)?;
        let headers = build_headers(&config)?;
        Ok(OpenAiChatProvider {
            config,
            url,
            client,
            headers,
        })
    }

    /// The configuration the provider was built with.
    pub fn config(&self) -> &OpenAiChatConfig {
        &self.config
    }
}

fn build_headers(config: &OpenAiChatConfig) -> Result<HeaderMap, ProviderError> {
    let mut headers = HeaderMap::new();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    headers.insert(ACCEPT, HeaderValue::from_static("text/event-stream"));
    if let Some(key) = config.api_key.as_deref().map(str::trim)
        && !key.is_empty()
    {
        let mut value = HeaderValue::from_str(&format!("Bearer {key}")).map_err(|_| {
            ProviderError::new(
                ProviderErrorKind::Auth,
                "the API key contains characters that cannot be sent in a header",
            )
        })?;
        value.set_sensitive(true);
        headers.insert(AUTHORIZATION, value);
    }
    for (name, value) in &config.extra_headers {
        let invalid = || {
            ProviderError::new(
                ProviderErrorKind::InvalidRequest,
                format!("extra header {name:?} cannot be sent in a request"),
            )
        };
        let name = HeaderName::from_bytes(name.trim().as_bytes()).map_err(|_| invalid())?;
        let mut value = HeaderValue::from_str(value.trim()).map_err(|_| invalid())?;
        if name == AUTHORIZATION || name.as_str().contains("key") {
            value.set_sensitive(true);
        }
        headers.insert(name, value);
    }
    Ok(headers)
}

#[async_trait]
impl Provider for OpenAiChatProvider {
    fn name(&self) -> &str {
        "openai-compatible"
    }

    async fn stream(
        &self,
        request: &ProviderRequest,
        events: StreamSink<'_>,
        cancel: &CancellationToken,
    ) -> Result<AssistantTurn, ProviderError> {
        streaming::exchange(
            streaming::Endpoint {
                client: &self.client,
                url: &self.url,
                headers: &self.headers,
                retry: &self.config.retry,
                idle: self.config.idle_timeout,
                map_error: errors::from_http_response,
                provider: self.name(),
            },
            &request::build_body(request, &self.config.options),
            request,
            ChatStreamDecoder::new,
            events,
            cancel,
        )
        .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoint_appends_chat_completions_and_tolerates_a_slash() {
        let url = |base: &str| OpenAiChatConfig::new(base).chat_completions_url();
        assert_eq!(
            url("http://127.0.0.1:11434/v1"),
            "http://127.0.0.1:11434/v1/chat/completions"
        );
        assert_eq!(
            url("http://127.0.0.1:8012/v1/"),
            "http://127.0.0.1:8012/v1/chat/completions"
        );
        assert_eq!(
            url("https://openrouter.ai/api/v1"),
            "https://openrouter.ai/api/v1/chat/completions"
        );
        assert_eq!(
            url("http://gw/v1/chat/completions"),
            "http://gw/v1/chat/completions"
        );
    }

    #[test]
    fn bearer_only_when_a_key_is_set_and_extra_headers_are_sent() {
        let mut c = OpenAiChatConfig::new("http://127.0.0.1:9/v1");
        assert!(build_headers(&c).unwrap().get(AUTHORIZATION).is_none());
        c.api_key = Some("  ".into());
        assert!(build_headers(&c).unwrap().get(AUTHORIZATION).is_none());
        c.api_key = Some("sk-x".into());
        c.extra_headers = vec![("HTTP-Referer".into(), "https://robota.dev".into())];
        let h = build_headers(&c).unwrap();
        assert_eq!(h.get(AUTHORIZATION).unwrap(), "Bearer sk-x");
        assert_eq!(h.get("http-referer").unwrap(), "https://robota.dev");
    }

    #[test]
    fn construction_rejects_bad_urls_keys_and_headers() {
        let bad_url = OpenAiChatConfig::new("not a url");
        assert_eq!(
            OpenAiChatProvider::new(bad_url).unwrap_err().kind,
            ProviderErrorKind::InvalidRequest
        );
        let mut bad_key = OpenAiChatConfig::new("http://127.0.0.1:9/v1");
        bad_key.api_key = Some("bad\nkey".into());
        assert_eq!(
            OpenAiChatProvider::new(bad_key).unwrap_err().kind,
            ProviderErrorKind::Auth
        );
        let mut bad_header = OpenAiChatConfig::new("http://127.0.0.1:9/v1");
        bad_header.extra_headers = vec![("bad name".into(), "v".into())];
        assert_eq!(
            OpenAiChatProvider::new(bad_header).unwrap_err().kind,
            ProviderErrorKind::InvalidRequest
        );
        let ok = OpenAiChatProvider::new(OpenAiChatConfig::new("http://127.0.0.1:9/v1")).unwrap();
        assert_eq!(ok.name(), "openai-compatible");
    }
}
