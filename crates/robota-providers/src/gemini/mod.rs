//! The Google Gemini adapter (Generative Language API, `streamGenerateContent?alt=sse`):
//! `GeminiConfig`, and `GeminiProvider`, which implements `core::Provider` by sending one
//! streaming request per attempt (key in `x-goog-api-key`, model in the URL path), decoding
//! the SSE chunks into events and an `AssistantTurn`, and retrying retryable failures
//! (HTTP 429 with `RetryInfo`, 5xx, connection errors, cut or stalled streams) under its
//! `RetryPolicy`, cancellable at every await.
//!
//! Gemini-specific data that must travel back with the history rides in `Block::Opaque`
//! values this adapter owns (see `parts`): `{"type":"gemini_thought_signature", …}` holds a
//! `thoughtSignature` and sits right before the block whose part carried it, and
//! `{"type":"gemini_part","part":{…}}` keeps a part kind robota does not model, verbatim.
//! Thought summaries become `Block::Thinking` with an empty `signature`, so no other
//! adapter ever sends them.

mod errors;
mod partial_args;
mod parts;
mod request;
mod schema;
mod stream;

use std::time::Duration;

use async_trait::async_trait;
use reqwest::header::{CONTENT_TYPE, HeaderMap, HeaderValue};
use tokio_util::sync::CancellationToken;

use self::stream::GeminiStreamDecoder;
use super::retry::RetryPolicy;
use super::{http, streaming};
use robota_core::{
    AssistantTurn, Provider, ProviderError, ProviderErrorKind, ProviderRequest, StreamSink,
};

pub use self::parts::{GEMINI_PART_TYPE, SKIP_SIGNATURE_VALIDATOR, THOUGHT_SIGNATURE_TYPE};

/// The default API host.
pub const DEFAULT_BASE_URL: &str = "https://generativelanguage.googleapis.com";

/// How to reach the Gemini API. Its `Debug` output never shows the key.
#[derive(Clone, PartialEq, Eq)]
pub struct GeminiConfig {
    /// Sent as `x-goog-api-key`.
    pub api_key: String,
    /// Host root (`https://generativelanguage.googleapis.com`);
    /// `/v1beta/models/{model}:streamGenerateContent?alt=sse` is appended. A trailing `/`
    /// or `/v1beta` is tolerated.
    pub base_url: String,
    /// Retries and their backoff for a failed request (default: 4 retries, 0.5 s doubling
    /// to 8 s).
    pub retry: RetryPolicy,
    /// Longest wait for the response head or for the next byte of the stream.
    pub idle_timeout: Duration,
    /// Longest wait for the TCP and TLS connection to open (default 10 s).
    pub connect_timeout: Duration,
}

impl std::fmt::Debug for GeminiConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GeminiConfig")
            .field("api_key", &"<redacted>")
            .field("base_url", &self.base_url)
            .field("retry", &self.retry)
            .field("idle_timeout", &self.idle_timeout)
            .field("connect_timeout", &self.connect_timeout)
            .finish()
    }
}

impl GeminiConfig {
    /// A configuration with the default host, retries and timeouts.
    pub fn new(api_key: impl Into<String>) -> Self {
        GeminiConfig {
            api_key: api_key.into(),
            base_url: DEFAULT_BASE_URL.to_string(),
            retry: RetryPolicy::default(),
            idle_timeout: Duration::from_secs(120),
            connect_timeout: Duration::from_secs(10),
        }
    }

    /// The streaming endpoint for `model` (a leading `models/` in the name is accepted).
    pub fn stream_url(&self, model: &str) -> String {
        let mut root = self.base_url.trim().trim_end_matches('/');
        if let Some(stripped) = root.strip_suffix("/v1beta") {
            root = stripped;
        }
        let model = model.trim();
        let model = model.strip_prefix("models/").unwrap_or(model);
        format!("{root}/v1beta/models/{model}:streamGenerateContent?alt=sse")
    }
}

/// Gemini `streamGenerateContent` over HTTP with SSE streaming.
#[derive(Debug)]
pub struct GeminiProvider {
    config: GeminiConfig,
    client: reqwest::Client,
    headers: HeaderMap,
}

impl GeminiProvider {
    /// A provider for `config`. Fails with `InvalidRequest` when the base URL does not parse
    /// and with `Auth` when the key cannot be sent in a header.
    pub fn new(config: GeminiConfig) -> Result<Self, ProviderError> {
        let probe = parse_url(&config, &config.stream_url("probe"))?;
        let client = http::build_client(&probe, config.connect_timeout)?;
        let mut headers = HeaderMap::new();
        let mut api_key = HeaderValue::from_str(config.api_key.trim()).map_err(|_| {
            ProviderError::new(
                ProviderErrorKind::Auth,
                "the API key contains characters that cannot be sent in a header",
            )
        })?;
        api_key.set_sensitive(true);
        headers.insert("x-goog-api-key", api_key);
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        headers.insert(
            reqwest::header::ACCEPT,
            HeaderValue::from_static("text/event-stream"),
        );
        Ok(GeminiProvider {
            config,
            client,
            headers,
        })
    }

    /// The configuration the provider was built with.
    pub fn config(&self) -> &GeminiConfig {
        &self.config
    }
}

fn parse_url(config: &GeminiConfig, url: &str) -> Result<reqwest::Url, ProviderError> {
    reqwest::Url::parse(url).map_err(|e| {
        ProviderError::new(
            ProviderErrorKind::InvalidRequest,
            format!("invalid Gemini base URL {:?}: {e}", config.base_url),
        )
    })
}

#[async_trait]
impl Provider for GeminiProvider {
    fn name(&self) -> &str {
        "google"
    }

    async fn stream(
        &self,
        request: &ProviderRequest,
        events: StreamSink<'_>,
        cancel: &CancellationToken,
    ) -> Result<AssistantTurn, ProviderError> {
        if request.model.trim().is_empty() {
            return Err(ProviderError::new(
                ProviderErrorKind::InvalidRequest,
                "no Gemini model was given",
            ));
        }
        let url = parse_url(&self.config, &self.config.stream_url(&request.model))?;
        let ids = stream::ToolIds::from_history(&request.messages);
        streaming::exchange(
            streaming::Endpoint {
                client: &self.client,
                url: &url,
                headers: &self.headers,
                retry: &self.config.retry,
                idle: self.config.idle_timeout,
                map_error: errors::from_http_response,
                provider: self.name(),
            },
            &request::build_body(request),
            request,
            || GeminiStreamDecoder::new(ids.clone()),
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
    fn stream_url_tolerates_slash_v1beta_and_models_prefix() {
        let url = |base: &str, model: &str| {
            let mut c = GeminiConfig::new("k");
            c.base_url = base.into();
            c.stream_url(model)
        };
        let want = "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse";
        assert_eq!(url(DEFAULT_BASE_URL, "gemini-2.5-pro"), want);
        assert_eq!(url(&format!("{DEFAULT_BASE_URL}/"), "gemini-2.5-pro"), want);
        assert_eq!(
            url(
                &format!("{DEFAULT_BASE_URL}/v1beta/"),
                "models/gemini-2.5-pro"
            ),
            want
        );
        assert_eq!(
            url("http://127.0.0.1:9/proxy", "m"),
            "http://127.0.0.1:9/proxy/v1beta/models/m:streamGenerateContent?alt=sse"
        );
    }

    #[test]
    fn construction_rejects_bad_urls_and_keys() {
        let mut c = GeminiConfig::new("k");
        c.base_url = "not a url".into();
        assert_eq!(
            GeminiProvider::new(c).unwrap_err().kind,
            ProviderErrorKind::InvalidRequest
        );
        let bad_key = GeminiConfig::new("bad\nkey");
        assert_eq!(
            GeminiProvider::new(bad_key).unwrap_err().kind,
            ProviderErrorKind::Auth
        );
        let ok = GeminiProvider::new(GeminiConfig::new("AIza-test")).unwrap();
        assert_eq!(ok.name(), "google");
        assert!(
            !format!("{ok:?}").contains("AIza-test"),
            "the key never shows in Debug"
        );
    }

    #[tokio::test]
    async fn an_empty_model_is_refused_before_any_request() {
        let provider = GeminiProvider::new(GeminiConfig::new("k")).unwrap();
        let sink = |_: robota_core::StreamEvent| {};
        let err = provider
            .stream(
                &ProviderRequest::default(),
                &sink,
                &CancellationToken::new(),
            )
            .await
            .unwrap_err();
        assert_eq!(err.kind, ProviderErrorKind::InvalidRequest);
    }
}
