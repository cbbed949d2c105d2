//! HTTP adapters for model APIs (Anthropic Messages, OpenAI Responses, OpenAI-compatible
//! Chat Completions, Google Gemini), the shared SSE decoder, the retry policy and the HTTP plumbing they share. Each
//! adapter implements `core::Provider`; nothing above this layer sees a wire format.

#![deny(missing_docs)]

pub mod anthropic;
pub mod factory;
pub mod fallback;
pub mod gemini;
pub mod http;
pub mod key_helper;
pub mod openai_chat;
pub mod openai_responses;
pub mod retry;
pub mod sse;
pub(crate) mod streaming;

pub use anthropic::{AnthropicConfig, AnthropicProvider};
pub use factory::Adapters;
pub use fallback::FallbackProvider;
pub use gemini::{GeminiConfig, GeminiProvider};
pub use key_helper::{KeyHelper, KeyHelperProvider};
pub use openai_chat::{OpenAiChatConfig, OpenAiChatProvider};
pub use openai_responses::{OpenAiResponsesConfig, OpenAiResponsesProvider};
pub use retry::RetryPolicy;
