//! HTTP adapters for model APIs (Anthropic now; OpenAI, OpenAI-compatible and Gemini
//! later), the shared SSE decoder, the retry policy and the HTTP plumbing they share. Each
//! adapter implements `core::Provider`; nothing above this layer sees a wire format.

pub mod anthropic;
pub mod http;
pub mod openai_chat;
pub mod retry;
pub mod sse;
pub(crate) mod streaming;

pub use anthropic::{AnthropicConfig, AnthropicProvider};
pub use openai_chat::{OpenAiChatConfig, OpenAiChatProvider};
pub use retry::RetryPolicy;
