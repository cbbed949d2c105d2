//! [`Adapters`]: this crate's [`ProviderFactory`], the one the `robota` binary hands the
//! command line, which chooses a provider without linking the adapters.

use std::sync::Arc;
use std::time::Duration;

use robota_core::provider_factory::BuildWithKey;
use robota_core::{
    Adapter, AdapterConfig, Provider, ProviderError, ProviderErrorKind, ProviderFactory,
};
use serde_json::Value;

use crate::{
    AnthropicConfig, AnthropicProvider, FallbackProvider, GeminiConfig, GeminiProvider, KeyHelper,
    KeyHelperProvider, OpenAiChatConfig, OpenAiChatProvider, OpenAiResponsesConfig,
    OpenAiResponsesProvider, RetryPolicy,
};

/// Builds the adapters of this crate.
#[derive(Debug, Clone, Copy, Default)]
pub struct Adapters;

impl ProviderFactory for Adapters {
    fn build(&self, config: &AdapterConfig) -> Result<Arc<dyn Provider>, ProviderError> {
        let retry = retry_policy(config);
        let idle = config.idle_timeout;
        Ok(match config.adapter {
            Adapter::Anthropic => {
                let mut c = AnthropicConfig::new(key(config)?);
                c.bearer_token = config.bearer;
                if let Some(url) = &config.base_url {
                    c.base_url = url.clone();
                }
                (c.retry, c.idle_timeout) = (retry, idle);
                Arc::new(AnthropicProvider::new(c)?)
            }
            Adapter::OpenAiResponses => {
                let mut c = OpenAiResponsesConfig::new(key(config)?);
                if let Some(url) = &config.base_url {
                    c.base_url = url.clone();
                }
                (c.retry, c.idle_timeout) = (retry, idle);
                c.reasoning_effort = config
                    .options
                    .get("reasoningEffort")
                    .and_then(Value::as_str)
                    .map(str::to_string);
                Arc::new(OpenAiResponsesProvider::new(c)?)
            }
            Adapter::Gemini => {
                let mut c = GeminiConfig::new(key(config)?);
                if let Some(url) = &config.base_url {
                    c.base_url = url.clone();
                }
                (c.retry, c.idle_timeout) = (retry, idle);
                Arc::new(GeminiProvider::new(c)?)
            }
            Adapter::OpenAiChat => {
                let base_url = config.base_url.clone().ok_or_else(|| {
                    invalid("an OpenAI-compatible server needs a base URL".to_string())
                })?;
                let mut c = OpenAiChatConfig::new(base_url);
                c.api_key = config.api_key.clone();
                (c.retry, c.idle_timeout) = (retry, idle);
                c.options = config.options.clone();
                Arc::new(OpenAiChatProvider::new(c)?)
            }
        })
    }

    fn default_base_url(&self, adapter: Adapter) -> Option<&'static str> {
        match adapter {
            Adapter::Anthropic => Some(crate::anthropic::DEFAULT_BASE_URL),
            Adapter::OpenAiResponses => Some(crate::openai_responses::DEFAULT_BASE_URL),
            Adapter::Gemini => Some(crate::gemini::DEFAULT_BASE_URL),
            Adapter::OpenAiChat => None,
        }
    }

    fn with_key_command(
        &self,
        command: String,
        ttl: Option<Duration>,
        build: BuildWithKey,
    ) -> Result<Arc<dyn Provider>, ProviderError> {
        let provider = KeyHelperProvider::start(KeyHelper { command, ttl }, build)?;
        Ok(Arc::new(provider))
    }

    fn with_fallback(&self, main: Arc<dyn Provider>, fallback_model: String) -> Arc<dyn Provider> {
        Arc::new(FallbackProvider::new(main, fallback_model))
    }
}

/// The retry policy's defaults, with the config's overrides.
fn retry_policy(config: &AdapterConfig) -> RetryPolicy {
    let mut retry = RetryPolicy::default();
    if let Some(n) = config.max_retries {
        retry.max_retries = n;
    }
    if let Some(delay) = config.retry_base_delay {
        retry.base_delay = delay;
    }
    retry
}

fn key(config: &AdapterConfig) -> Result<String, ProviderError> {
    config
        .api_key
        .clone()
        .ok_or_else(|| invalid(format!("{:?} needs an API key", config.adapter)))
}

fn invalid(message: String) -> ProviderError {
    ProviderError::new(ProviderErrorKind::Auth, message)
}
