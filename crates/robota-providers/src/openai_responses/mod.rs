//! The OpenAI Responses API adapter: `OpenAiResponsesConfig`, and
//! `OpenAiResponsesProvider`, which implements `core::Provider` by sending one streaming
//! `POST {base}/responses` per attempt (`store:false`, so the whole conversation goes every
//! time, reasoning items included in encrypted form), decoding the SSE response into events
//! and an `AssistantTurn`, and retrying retryable failures (HTTP 429/5xx, connection errors,
//! cut or stalled streams, retryable `error` / `response.failed` events) under its
//! `RetryPolicy`, cancellable at every await.
//!
//! History representation: reasoning items are kept as `Block::Opaque` values of type
//! `openai_reasoning` (see `stream.rs`); their summaries are streamed as thinking deltas
//! only. Other providers should drop such blocks when converting history.

mod errors;
mod request;
mod stream;

use std::time::Duration;

use async_trait::async_trait;
use reqwest::header::{AUTHORIZATION, CONTENT_TYPE, HeaderMap, HeaderValue};
use tokio_util::sync::CancellationToken;

use self::request::BodyOptions;
use self::stream::ResponsesDecoder;
use super::retry::RetryPolicy;
use super::{http, streaming};
use robota_core::{
    AssistantTurn, Provider, ProviderError, ProviderErrorKind, ProviderRequest, StreamSink,
};

pub use self::request::REASONING_BLOCK_TYPE;

/// The default API base, version path included.
pub const DEFAULT_BASE_URL: &str = "https://api.openai.com/v1";

/// How to reach the Responses API.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpenAiResponsesConfig {
    /// Sent as `Authorization: Bearer …`; an empty key sends no header (local servers).
    pub api_key: String,
    /// API base with its version path (`https://api.openai.com/v1`); `/responses` is
    /// appended. A trailing `/` (or an already present `/responses`) is tolerated.
    pub base_url: String,
    /// Retries and their backoff for a failed request (default: 4 retries, 0.5 s doubling
    /// to 8 s).
    pub retry: RetryPolicy,
    /// Longest wait for the response head or for the next byte of the stream.
    pub idle_timeout: Duration,
    /// Longest wait for the TCP and TLS connection to open (default 10 s).
    pub connect_timeout: Duration,
    /// `reasoning.effort` for every call (`minimal`, `low`, `medium`, `high`…); `None`
    /// leaves the model's default, or follows the request's thinking budget.
    pub reasoning_effort: Option<String>,
}

impl OpenAiResponsesConfig {
    /// A configuration with the default base URL, retries and timeouts.
    pub fn new(api_key: impl Into<String>) -> Self {
        OpenAiResponsesConfig {
            api_key: api_key.into(),
            base_url: DEFAULT_BASE_URL.to_string(),
            retry: RetryPolicy::default(),
            idle_timeout: Duration::from_secs(120),
            connect_timeout: Duration::from_secs(10),
            reasoning_effort: None,
        }
    }

    /// The full Responses endpoint for `base_url`.
    pub fn responses_url(&self) -> String {
        let base = self.base_url.trim().trim_end_matches('/');
        let base = base.strip_suffix("/responses").unwrap_or(base);
        format!("{base}/responses")
    }
}

/// OpenAI Responses over HTTP with SSE streaming.
#[derive(Debug)]
pub struct OpenAiResponsesProvider {
    config: OpenAiResponsesConfig,
    url: reqwest::Url,
    client: reqwest::Client,
    headers: HeaderMap,
}

impl OpenAiResponsesProvider {
    /// A provider for `config`. Fails with `InvalidRequest` when the base URL does not parse
    /// and with `Auth` when the key cannot be sent in a header.
    pub fn new(config: OpenAiResponsesConfig) -> Result<Self, ProviderError> {
        let url = reqwest::Url::parse(&config.responses_url()).map_err(|e| {
            ProviderError::new(
                ProviderErrorKind::InvalidRequest,
                format!("invalid OpenAI base URL {:?}: {e}", config.base_url),
            )
        })?;
        let client = http::build_client(&url, config.connect_timeout)?;
        let mut headers = HeaderMap::new();
        let key = config.api_key.trim();
        if !key.is_empty() {
            let mut bearer = HeaderValue::from_str(&format!("Bearer {key}")).map_err(|_| {
                ProviderError::new(
                    ProviderErrorKind::Auth,
                    "the API key contains characters that cannot be sent in a header",
                )
            })?;
            bearer.set_sensitive(true);
            headers.insert(AUTHORIZATION, bearer);
        }
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        headers.insert(
            reqwest::header::ACCEPT,
            HeaderValue::from_static("text/event-stream"),
        );
        Ok(OpenAiResponsesProvider {
            config,
            url,
            client,
            headers,
        })
    }

    /// The configuration the provider was built with.
    pub fn config(&self) -> &OpenAiResponsesConfig {
        &self.config
    }
}

#[async_trait]
impl Provider for OpenAiResponsesProvider {
    fn name(&self) -> &str {
        "openai"
    }

    async fn stream(
        &self,
        request: &ProviderRequest,
        events: StreamSink<'_>,
        cancel: &CancellationToken,
    ) -> Result<AssistantTurn, ProviderError> {
        let options = BodyOptions {
            reasoning_effort: self.config.reasoning_effort.as_deref(),
        };
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
            &request::build_body(request, options),
            request,
            || ResponsesDecoder::new(&request.model),
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
    fn responses_url_tolerates_slashes_and_a_full_endpoint() {
        let url = |base: &str| {
            let mut c = OpenAiResponsesConfig::new("k");
            c.base_url = base.into();
            c.responses_url()
        };
        assert_eq!(
            url("https://api.openai.com/v1"),
            "https://api.openai.com/v1/responses"
        );
        assert_eq!(
            url("http://127.0.0.1:9/v1/"),
            "http://127.0.0.1:9/v1/responses"
        );
        assert_eq!(
            url("http://127.0.0.1:9/v1/responses/"),
            "http://127.0.0.1:9/v1/responses"
        );
    }

    #[test]
    fn construction_rejects_bad_urls_and_keys_and_allows_no_key() {
        let mut c = OpenAiResponsesConfig::new("k");
        c.base_url = "not a url".into();
        assert_eq!(
            OpenAiResponsesProvider::new(c).unwrap_err().kind,
            ProviderErrorKind::InvalidRequest
        );
        let bad_key = OpenAiResponsesConfig::new("bad\nkey");
        assert_eq!(
            OpenAiResponsesProvider::new(bad_key).unwrap_err().kind,
            ProviderErrorKind::Auth
        );
        let keyless = OpenAiResponsesProvider::new(OpenAiResponsesConfig::new("")).unwrap();
        assert!(!keyless.headers.contains_key(AUTHORIZATION));
        let ok = OpenAiResponsesProvider::new(OpenAiResponsesConfig::new("sk-test")).unwrap();
        assert_eq!(ok.name(), "openai");
        assert_eq!(ok.config().base_url, DEFAULT_BASE_URL);
    }
}
