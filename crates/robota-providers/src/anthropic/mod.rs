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
use reqwest::header::{CONTENT_TYPE, HeaderMap, HeaderValue};
use tokio_util::sync::CancellationToken;

use self::stream::StreamAssembler;
use super::retry::RetryPolicy;
use super::{http, streaming};
use robota_core::{
    AssistantTurn, Provider, ProviderError, ProviderErrorKind, ProviderRequest, StreamSink,
};

/// The default API host.
pub const DEFAULT_BASE_URL: &str = "https://api.anthropic.com";
/// The `anthropic-version` header value robota speaks.
pub const API_VERSION: &str = "2023-06-01";

/// How to reach the Anthropic API.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AnthropicConfig {
    /// Sent as `x-api-key`, or as a bearer token when `bearer_token` is set.
    pub api_key: String,
    /// Host root (`https://api.anthropic.com`); `/v1/messages` is appended. A trailing `/`
    /// or `/v1` is tolerated.
    pub base_url: String,
    /// Retries and their backoff for a failed request (default: 4 retries, 0.5 s doubling
    /// to 8 s).
    pub retry: RetryPolicy,
    /// Longest wait for the response head or for the next byte of the stream.
    pub idle_timeout: Duration,
    /// Longest wait for the TCP and TLS connection to open (default 10 s).
    pub connect_timeout: Duration,
    /// Send the key as `Authorization: Bearer <key>` (an `ANTHROPIC_AUTH_TOKEN` for a
    /// gateway) instead of `x-api-key`.
    pub bearer_token: bool,
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
            bearer_token: false,
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
    /// A provider for `config`. Fails with `InvalidRequest` when the base URL does not parse
    /// and with `Auth` when the key cannot be sent in a header.
    pub fn new(config: AnthropicConfig) -> Result<Self, ProviderError> {
        let url = reqwest::Url::parse(&config.messages_url()).map_err(|e| {
            ProviderError::new(
                ProviderErrorKind::InvalidRequest,
                format!("invalid Anthropic base URL {:?}: {e}", config.base_url),
            )
        })?;
        let client = http::build_client(&url, config.connect_timeout)?;
        let mut headers = HeaderMap::new();
        let key = config.api_key.trim();
        let value = if config.bearer_token {
            format!("Bearer {key}")
        } else {
            key.to_string()
        };
        let mut api_key = HeaderValue::from_str(&value).map_err(|_| {
            ProviderError::new(
                ProviderErrorKind::Auth,
                "the API key contains characters that cannot be sent in a header",
            )
        })?;
        api_key.set_sensitive(true);
        let name = if config.bearer_token {
            reqwest::header::AUTHORIZATION.as_str()
        } else {
            "x-api-key"
        };
        headers.insert(name, api_key);
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

    /// The configuration the provider was built with.
    pub fn config(&self) -> &AnthropicConfig {
        &self.config
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
            &request::build_body(request),
            request,
            StreamAssembler::new,
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
