//! The Anthropic adapter through the real HTTP path: every recorded Anthropic stream in
//! `fixtures/wire/anthropic/` replayed by the loopback mock server and checked against its
//! real numbers, the request body checked against the recorded SDK requests, and the
//! retry, timeout and cancellation behaviour exercised end to end.

#[path = "../support/mod.rs"]
mod support;

mod fixtures;
mod request_shape;
mod retries;

use std::sync::Mutex;
use std::time::Duration;

use robota::core::{
    AssistantTurn, Block, Message, Provider, ProviderError, ProviderRequest, Role, StreamEvent,
    Usage,
};
use robota::providers::{AnthropicConfig, AnthropicProvider, RetryPolicy};
use serde_json::Value;
use support::{MockResponse, MockServer};
use tokio_util::sync::CancellationToken;

pub(crate) fn fast_retry(max_retries: u32) -> RetryPolicy {
    RetryPolicy {
        max_retries,
        base_delay: Duration::from_millis(1),
        max_delay: Duration::from_millis(2),
        max_server_delay: Duration::from_secs(60),
    }
}

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
    }
}

pub(crate) struct Outcome {
    pub(crate) result: Result<AssistantTurn, ProviderError>,
    pub(crate) events: Vec<StreamEvent>,
}

impl Outcome {
    pub(crate) fn turn(&self) -> &AssistantTurn {
        self.result.as_ref().expect("the call succeeds")
    }

    pub(crate) fn error(&self) -> &ProviderError {
        self.result.as_ref().expect_err("the call fails")
    }

    pub(crate) fn retries(&self) -> Vec<&StreamEvent> {
        self.events
            .iter()
            .filter(|e| matches!(e, StreamEvent::Retrying { .. }))
            .collect()
    }

    pub(crate) fn streamed_text(&self) -> String {
        self.events
            .iter()
            .filter_map(|e| match e {
                StreamEvent::TextDelta(t) => Some(t.as_str()),
                _ => None,
            })
            .collect()
    }
}

pub(crate) async fn run(provider: &AnthropicProvider, request: &ProviderRequest) -> Outcome {
    let seen = Mutex::new(Vec::new());
    let sink = |e: StreamEvent| seen.lock().unwrap().push(e);
    let cancel = CancellationToken::new();
    let result = tokio::time::timeout(
        Duration::from_secs(30),
        provider.stream(request, &sink, &cancel),
    )
    .await
    .expect("the call ends in bounded time");
    Outcome {
        result,
        events: seen.into_inner().unwrap(),
    }
}

pub(crate) async fn replay(script: Vec<MockResponse>, max_retries: u32) -> (Outcome, MockServer) {
    let server = MockServer::start(script);
    let outcome = run(&provider(&server, max_retries), &request()).await;
    (outcome, server)
}

pub(crate) fn text(turn: &AssistantTurn) -> String {
    Message::new(Role::Assistant, turn.content.clone()).text()
}

pub(crate) fn tool_calls(turn: &AssistantTurn) -> Vec<(String, String, Value)> {
    turn.content
        .iter()
        .filter_map(|b| match b {
            Block::ToolUse { id, name, input } => Some((id.clone(), name.clone(), input.clone())),
            _ => None,
        })
        .collect()
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
