//! The Anthropic Messages API adapter: `AnthropicConfig`, and `AnthropicProvider`, which
//! implements `core::Provider` by sending one streaming request per attempt, decoding the
//! SSE response into events and an `AssistantTurn`, and retrying retryable failures
//! (HTTP 429/5xx/529, connection errors, cut or stalled streams, mid-stream error events)
//! under its `RetryPolicy`, cancellable at every await.

mod errors;
mod request;
mod stream;

use std::time::Duration;

use async_trait::async_trait;
use bytes::Bytes;
use reqwest::header::{CONTENT_TYPE, HeaderMap, HeaderValue};
use tokio_util::sync::CancellationToken;

use self::stream::{Flow, StreamAssembler};
use super::http;
use super::retry::{AttemptFailure, RetryLoop, RetryPolicy};
use super::sse::SseDecoder;
use crate::core::{
    AssistantTurn, Provider, ProviderError, ProviderErrorKind, ProviderRequest, StreamSink,
};

/// The default API host.
pub const DEFAULT_BASE_URL: &str = "https://api.anthropic.com";
/// The `anthropic-version` header value robota speaks.
pub const API_VERSION: &str = "2023-06-01";

/// How to reach the Anthropic API.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AnthropicConfig {
    pub api_key: String,
    /// Host root (`https://api.anthropic.com`); `/v1/messages` is appended. A trailing `/`
    /// or `/v1` is tolerated.
    pub base_url: String,
    pub retry: RetryPolicy,
    /// Longest wait for the response head or for the next byte of the stream.
    pub idle_timeout: Duration,
    pub connect_timeout: Duration,
}

impl AnthropicConfig {
    /// A configuration with the default host, retries and timeouts.
    pub fn new(api_key: impl Into<String>) -> Self {
        AnthropicConfig {
            api_key: api_key.into(),
            base_url: DEFAULT_BASE_URL.to_string(),
            retry: RetryPolicy::default(),
            idle_timeout: Duration::from_secs(120),
            connect_timeout: Duration::from_secs(10),
        }
    }

    /// The full Messages endpoint for `base_url`.
    pub fn messages_url(&self) -> String {
        let mut root = self.base_url.trim().trim_end_matches('/');
        if let Some(stripped) = root.strip_suffix("/v1") {
            root = stripped;
        }
        format!("{root}/v1/messages")
    }
}

/// Anthropic Messages over HTTP with SSE streaming.
#[derive(Debug)]
pub struct AnthropicProvider {
    config: AnthropicConfig,
    url: reqwest::Url,
    client: reqwest::Client,
    headers: HeaderMap,
}

impl AnthropicProvider {
    pub fn new(config: AnthropicConfig) -> Result<Self, ProviderError> {
        let url = reqwest::Url::parse(&config.messages_url()).map_err(|e| {
            ProviderError::new(
                ProviderErrorKind::InvalidRequest,
                format!("invalid Anthropic base URL {:?}: {e}", config.base_url),
            )
        })?;
        let client = http::build_client(&url, config.connect_timeout)?;
        let mut headers = HeaderMap::new();
        let mut api_key = HeaderValue::from_str(config.api_key.trim()).map_err(|_| {
            ProviderError::new(
                ProviderErrorKind::Auth,
                "the API key contains characters that cannot be sent in a header",
            )
        })?;
        api_key.set_sensitive(true);
        headers.insert("x-api-key", api_key);
        headers.insert("anthropic-version", HeaderValue::from_static(API_VERSION));
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        headers.insert(
            reqwest::header::ACCEPT,
            HeaderValue::from_static("text/event-stream"),
        );
        Ok(AnthropicProvider {
            config,
            url,
            client,
            headers,
        })
    }

    pub fn config(&self) -> &AnthropicConfig {
        &self.config
    }

    /// One HTTP exchange: send, check the status, stream the answer.
    async fn attempt(
        &self,
        body: &Bytes,
        model: &str,
        events: StreamSink<'_>,
        cancel: &CancellationToken,
    ) -> Result<AssistantTurn, AttemptFailure> {
        let idle = self.config.idle_timeout;
        let request = self
            .client
            .post(self.url.clone())
            .headers(self.headers.clone())
            .body(body.clone());
        let mut response = http::send(request, idle, cancel).await?;
        let status = response.status().as_u16();
        let request_id = http::header_text(response.headers(), "request-id");
        tracing::debug!(status, ?request_id, "anthropic response");
        if !response.status().is_success() {
            let headers = response.headers().clone();
            let body = http::read_error_body(&mut response, idle, cancel).await?;
            return Err(errors::from_http_response(status, &headers, &body));
        }
        if !http::is_event_stream(response.headers()) {
            let headers = response.headers().clone();
            let body = http::read_error_body(&mut response, idle, cancel).await?;
            let mut failure = errors::from_http_response(status, &headers, &body);
            failure.error.kind = ProviderErrorKind::Decode;
            failure.error.message = format!(
                "expected an event stream, got {}: {}",
                http::header_text(&headers, "content-type").unwrap_or_default(),
                failure.error.message
            );
            return Err(failure);
        }

        let mut decoder = SseDecoder::new();
        let mut assembler = StreamAssembler::new();
        // Mid-stream failures carry the request id but no status: the HTTP status was 200.
        let fail = |mut error: ProviderError, streamed: bool| {
            error.request_id = error.request_id.or_else(|| request_id.clone());
            AttemptFailure::new(error, streamed)
        };
        loop {
            let chunk = http::next_chunk(&mut response, idle, cancel)
                .await
                .map_err(|e| fail(e, assembler.emitted_anything()))?;
            let decoded = match &chunk {
                Some(bytes) => decoder.push(bytes).map_err(|e| {
                    let error = ProviderError::new(ProviderErrorKind::Decode, e.to_string());
                    fail(error, assembler.emitted_anything())
                })?,
                None => decoder.finish().into_iter().collect(),
            };
            let mut done = chunk.is_none();
            for event in &decoded {
                let flow = assembler
                    .on_event(event, events)
                    .map_err(|e| fail(e, assembler.emitted_anything()))?;
                if flow == Flow::Done {
                    done = true;
                    break;
                }
            }
            if done {
                let streamed = assembler.emitted_anything();
                return assembler.finish(model).map_err(|e| fail(e, streamed));
            }
        }
    }
}

#[async_trait]
impl Provider for AnthropicProvider {
    fn name(&self) -> &str {
        "anthropic"
    }

    async fn stream(
        &self,
        request: &ProviderRequest,
        events: StreamSink<'_>,
        cancel: &CancellationToken,
    ) -> Result<AssistantTurn, ProviderError> {
        let body = serde_json::to_vec(&request::build_body(request))
            .map(Bytes::from)
            .map_err(|e| {
                ProviderError::new(
                    ProviderErrorKind::InvalidRequest,
                    format!("cannot encode the request: {e}"),
                )
            })?;
        tracing::debug!(
            model = %request.model,
            messages = request.messages.len(),
            bytes = body.len(),
            "anthropic request"
        );
        let mut retry = RetryLoop::new(&self.config.retry);
        loop {
            if cancel.is_cancelled() {
                return Err(ProviderError::cancelled());
            }
            match self.attempt(&body, &request.model, events, cancel).await {
                Ok(turn) => return Ok(turn),
                Err(failure) => retry.after_failure(failure, events, cancel).await?,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_url_tolerates_slash_and_v1() {
        let url = |base: &str| {
            let mut c = AnthropicConfig::new("k");
            c.base_url = base.into();
            c.messages_url()
        };
        assert_eq!(
            url("https://api.anthropic.com"),
            "https://api.anthropic.com/v1/messages"
        );
        assert_eq!(url("http://127.0.0.1:9/"), "http://127.0.0.1:9/v1/messages");
        assert_eq!(
            url("http://127.0.0.1:9/v1/"),
            "http://127.0.0.1:9/v1/messages"
        );
        assert_eq!(url("http://gw/proxy/v1"), "http://gw/proxy/v1/messages");
    }

    #[test]
    fn construction_rejects_bad_urls_and_keys() {
        let mut c = AnthropicConfig::new("k");
        c.base_url = "not a url".into();
        assert_eq!(
            AnthropicProvider::new(c).unwrap_err().kind,
            ProviderErrorKind::InvalidRequest
        );
        let bad_key = AnthropicConfig::new("bad\nkey");
        assert_eq!(
            AnthropicProvider::new(bad_key).unwrap_err().kind,
            ProviderErrorKind::Auth
        );
        let ok = AnthropicProvider::new(AnthropicConfig::new("sk-test")).unwrap();
        assert_eq!(ok.name(), "anthropic");
    }
}
