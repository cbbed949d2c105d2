//! What a provider adapter is built from, and the factory that builds one. This is the
//! contract between the code that chooses a provider (the command line, from flags,
//! settings and the environment) and the crate that speaks the wire formats
//! (`robota-providers` implements it): the chooser names an adapter and its connection,
//! the factory returns a [`Provider`]. Nothing here knows a wire format.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Map, Value};

use crate::provider::{Provider, ProviderError};

/// The adapters a factory can build, one per wire format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Adapter {
    /// Anthropic's Messages API.
    Anthropic,
    /// OpenAI's Responses API.
    OpenAiResponses,
    /// An OpenAI-compatible Chat Completions server (a local one, a gateway).
    OpenAiChat,
    /// Google's Gemini API.
    Gemini,
}

/// Everything an adapter is built from.
#[derive(Debug, Clone)]
pub struct AdapterConfig {
    /// Which adapter.
    pub adapter: Adapter,
    /// The key (an OpenAI-compatible server may need none).
    pub api_key: Option<String>,
    /// Send the key as `Authorization: Bearer` (an Anthropic gateway's token).
    pub bearer: bool,
    /// Where to send requests; `None` is the adapter's default.
    pub base_url: Option<String>,
    /// Re-sends after a failed attempt; `None` is the adapter's default.
    pub max_retries: Option<u32>,
    /// The first backoff step; `None` is the adapter's default.
    pub retry_base_delay: Option<Duration>,
    /// How long a stream may stay silent before it counts as dropped.
    pub idle_timeout: Duration,
    /// Adapter-specific options from the provider profile (`reasoningEffort`, sampling).
    pub options: Map<String, Value>,
}

/// Builds one provider around each new key (`apiKeyHelper`).
pub type BuildWithKey =
    Arc<dyn Fn(String) -> Result<Arc<dyn Provider>, ProviderError> + Send + Sync>;

/// Turns an [`AdapterConfig`] into a provider, and wraps providers in the behaviours the
/// chooser asks for.
pub trait ProviderFactory: Send + Sync {
    /// The adapter `config` names.
    fn build(&self, config: &AdapterConfig) -> Result<Arc<dyn Provider>, ProviderError>;

    /// The address an adapter sends to when no base URL is set (`None`: it has no default).
    fn default_base_url(&self, adapter: Adapter) -> Option<&'static str>;

    /// A provider whose key is printed by `command` (run now, again after `ttl`, and again
    /// when the server answers 401), rebuilt around each key by `build`.
    fn with_key_command(
        &self,
        command: String,
        ttl: Option<Duration>,
        build: BuildWithKey,
    ) -> Result<Arc<dyn Provider>, ProviderError>;

    /// `main`, falling back to `fallback_model` when its model is overloaded.
    fn with_fallback(&self, main: Arc<dyn Provider>, fallback_model: String) -> Arc<dyn Provider>;
}
