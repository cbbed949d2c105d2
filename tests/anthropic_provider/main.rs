//! The Anthropic adapter through the real HTTP path: every recorded Anthropic stream in
//! `fixtures/wire/anthropic/` replayed by the loopback mock server and checked against its
//! real numbers, the request body checked against the recorded SDK requests, and the
//! retry, timeout and cancellation behaviour exercised end to end.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failed unwrap is a failed test

#[path = "../support/mod.rs"]
mod support;

mod fixtures;
mod request_shape;
mod retries;

use std::time::Duration;

use robota::core::{Message, ProviderRequest, Usage};
use robota::providers::{AnthropicConfig, AnthropicProvider};
pub(crate) use support::harness::{Outcome, fast_retry, run, text, tool_calls};
use support::{MockResponse, MockServer};

pub(crate) fn provider_with(
    server: &MockServer,
    max_retries: u32,
    idle: Duration,
) -> AnthropicProvider {
    let mut config = AnthropicConfig::new("sk-ant-test");
    config.base_url = server.base_url();
    config.retry = fast_retry(max_retries);
    config.idle_timeout = idle;
    config.connect_timeout = Duration::from_secs(5);
    AnthropicProvider::new(config).expect("provider")
}

pub(crate) fn provider(server: &MockServer, max_retries: u32) -> AnthropicProvider {
    provider_with(server, max_retries, Duration::from_secs(20))
}

pub(crate) fn request() -> ProviderRequest {
    ProviderRequest {
        model: "claude-sonnet-4-5".into(),
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

pub(crate) fn usage(
    input: u64,
    output: u64,
    cache_read: u64,
    cache_creation: u64,
) -> Option<Usage> {
    Some(Usage {
        input_tokens: input,
        output_tokens: output,
        cache_read_input_tokens: cache_read,
        cache_creation_input_tokens: cache_creation,
    })
}
