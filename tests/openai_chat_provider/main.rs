//! The OpenAI-compatible Chat Completions adapter through the real HTTP path: every recorded
//! Chat stream in `fixtures/wire/` (OpenAI, Groq, DeepSeek, an Anthropic gateway, Ollama,
//! llama.cpp and llama-cpp-python) replayed by the loopback mock server and checked against
//! its real text, tool calls, usage and stop reason; the request body checked against the
//! body recorded with a real llama.cpp server; and the retry, timeout and cancellation
//! behaviour exercised end to end.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failed unwrap is a failed test

#[path = "../support/mod.rs"]
mod support;

mod fixtures;
mod local_fixtures;
mod request_shape;
mod retries;

use std::time::Duration;

use robota::core::{Message, ProviderRequest, Usage};
use robota::providers::{OpenAiChatConfig, OpenAiChatProvider};
use serde_json::Value;
pub(crate) use support::harness::{Outcome, fast_retry, run, text, tool_calls};
use support::{MockResponse, MockServer};

pub(crate) fn config_for(
    server: &MockServer,
    max_retries: u32,
    idle: Duration,
) -> OpenAiChatConfig {
    let mut config = OpenAiChatConfig::new(format!("{}/v1", server.base_url()));
    config.retry = fast_retry(max_retries);
    config.idle_timeout = idle;
    config.connect_timeout = Duration::from_secs(5);
    config
}

pub(crate) fn provider_with(
    server: &MockServer,
    max_retries: u32,
    idle: Duration,
) -> OpenAiChatProvider {
    OpenAiChatProvider::new(config_for(server, max_retries, idle)).expect("provider")
}

pub(crate) fn provider(server: &MockServer, max_retries: u32) -> OpenAiChatProvider {
    provider_with(server, max_retries, Duration::from_secs(20))
}

pub(crate) fn request() -> ProviderRequest {
    ProviderRequest {
        model: "request-model".into(),
        system: "You are robota.".into(),
        messages: vec![Message::user_text("hello")],
        tools: vec![],
        max_tokens: 1024,
        thinking_budget: None,
        tools_disabled: false,
        server_tools: Vec::new(),
        wire: None,
    }
}

pub(crate) async fn replay(script: Vec<MockResponse>, max_retries: u32) -> (Outcome, MockServer) {
    let server = MockServer::start(script);
    let outcome = run(&provider(&server, max_retries), &request()).await;
    (outcome, server)
}

pub(crate) fn call(id: &str, name: &str, input: Value) -> (String, String, Value) {
    (id.to_string(), name.to_string(), input)
}

pub(crate) fn usage(input: u64, output: u64, cache_read: u64) -> Option<Usage> {
    Some(Usage {
        input_tokens: input,
        output_tokens: output,
        cache_read_input_tokens: cache_read,
        cache_creation_input_tokens: 0,
    })
}
