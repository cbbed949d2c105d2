//! Per-provider overhead (issue 3 figures): request build + SSE decode per streamed token,
//! through the real adapter and real HTTP against the loopback mock with no model latency,
//! and the end-to-end `robota -p` wall time per wire format.
//!
//! `cargo bench --bench providers` (builds the release binary for the end-to-end part).

#![allow(clippy::unwrap_used, clippy::expect_used)] // bench code: a failed unwrap aborts the run

#[path = "../tests/support/mod.rs"]
#[allow(unused_imports)]
mod support;

use std::sync::Arc;
use std::time::{Duration, Instant};

use robota::core::{Message, Provider, ProviderRequest, StreamEvent};
use robota::providers::{
    AnthropicConfig, AnthropicProvider, GeminiConfig, GeminiProvider, OpenAiChatConfig,
    OpenAiChatProvider, OpenAiResponsesConfig, OpenAiResponsesProvider,
};
use serde_json::json;
use support::{MockResponse, MockServer};
use tokio_util::sync::CancellationToken;

const TOKENS: usize = 20_000;
const RUNS: usize = 5;

fn sse(event: Option<&str>, data: serde_json::Value) -> String {
    match event {
        Some(e) => format!("event: {e}\ndata: {data}\n\n"),
        None => format!("data: {data}\n\n"),
    }
}

/// One long answer of `TOKENS` deltas in each wire format, sent in 64 KiB writes.
fn stream(wire: &str) -> MockResponse {
    let mut s = String::new();
    match wire {
        "anthropic" => {
            s += &sse(
                Some("message_start"),
                json!({"type":"message_start","message":{"id":"m","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[],"usage":{"input_tokens":10,"output_tokens":1}}}),
            );
            s += &sse(
                Some("content_block_start"),
                json!({"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}),
            );
            for _ in 0..TOKENS {
                s += &sse(
                    Some("content_block_delta"),
                    json!({"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"tok "}}),
                );
            }
            s += &sse(
                Some("content_block_stop"),
                json!({"type":"content_block_stop","index":0}),
            );
            s += &sse(
                Some("message_delta"),
                json!({"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":TOKENS}}),
            );
            s += &sse(Some("message_stop"), json!({"type":"message_stop"}));
        }
        "openai-compatible" => {
            for _ in 0..TOKENS {
                s += &sse(
                    None,
                    json!({"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"tok "}}]}),
                );
            }
            s += &sse(
                None,
                json!({"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":{"prompt_tokens":10,"completion_tokens":TOKENS,"total_tokens":TOKENS+10}}),
            );
            s += "data: [DONE]\n\n";
        }
        "openai" => {
            s += &sse(
                Some("response.created"),
                json!({"type":"response.created","response":{"id":"r","model":"gpt-5"}}),
            );
            s += &sse(
                Some("response.output_item.added"),
                json!({"type":"response.output_item.added","output_index":0,"item":{"id":"msg","type":"message","role":"assistant","content":[]}}),
            );
            for _ in 0..TOKENS {
                s += &sse(
                    Some("response.output_text.delta"),
                    json!({"type":"response.output_text.delta","item_id":"msg","output_index":0,"content_index":0,"delta":"tok "}),
                );
            }
            s += &sse(
                Some("response.output_item.done"),
                json!({"type":"response.output_item.done","output_index":0,"item":{"id":"msg","type":"message","role":"assistant","content":[{"type":"output_text","text":"tok "}]}}),
            );
            s += &sse(
                Some("response.completed"),
                json!({"type":"response.completed","response":{"id":"r","model":"gpt-5","status":"completed","usage":{"input_tokens":10,"output_tokens":TOKENS}}}),
            );
        }
        _ => {
            for _ in 0..TOKENS {
                s += &sse(
                    None,
                    json!({"candidates":[{"content":{"parts":[{"text":"tok "}],"role":"model"}}]}),
                );
            }
            s += &sse(
                None,
                json!({"candidates":[{"content":{"parts":[{"text":""}],"role":"model"},"finishReason":"STOP"}],"usageMetadata":{"promptTokenCount":10,"candidatesTokenCount":TOKENS}}),
            );
        }
    }
    let chunks = s
        .into_bytes()
        .chunks(64 * 1024)
        .map(<[u8]>::to_vec)
        .collect();
    MockResponse::sse(chunks)
}

fn provider(wire: &str, base: &str) -> Arc<dyn Provider> {
    match wire {
        "anthropic" => {
            let mut c = AnthropicConfig::new("k");
            c.base_url = base.into();
            Arc::new(AnthropicProvider::new(c).unwrap())
        }
        "openai-compatible" => {
            Arc::new(OpenAiChatProvider::new(OpenAiChatConfig::new(format!("{base}/v1"))).unwrap())
        }
        "openai" => {
            let mut c = OpenAiResponsesConfig::new("k");
            c.base_url = format!("{base}/v1");
            Arc::new(OpenAiResponsesProvider::new(c).unwrap())
        }
        _ => {
            let mut c = GeminiConfig::new("k");
            c.base_url = base.into();
            Arc::new(GeminiProvider::new(c).unwrap())
        }
    }
}

fn main() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let wires = ["anthropic", "openai", "openai-compatible", "google"];
    println!("decode: {TOKENS} streamed text deltas per call, median of {RUNS}");
    println!("| wire | per call | per token |");
    println!("|---|---|---|");
    for wire in wires {
        let server = MockServer::start((0..=RUNS).map(|_| stream(wire)).collect());
        let p = provider(wire, &server.base_url());
        let request = ProviderRequest {
            model: "m".into(),
            system: "s".into(),
            messages: vec![Message::user_text("go")],
            max_tokens: 100,
            ..ProviderRequest::default()
        };
        let mut samples = Vec::new();
        for i in 0..=RUNS {
            let deltas = std::sync::atomic::AtomicUsize::new(0);
            let sink = |e: StreamEvent| {
                if matches!(e, StreamEvent::TextDelta(_)) {
                    deltas.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                }
            };
            let start = Instant::now();
            let turn = rt
                .block_on(p.stream(&request, &sink, &CancellationToken::new()))
                .unwrap();
            if i > 0 {
                samples.push(start.elapsed());
            }
            assert_eq!(deltas.into_inner(), TOKENS);
            assert_eq!(turn.content.len(), 1);
        }
        samples.sort();
        let median = samples[samples.len() / 2];
        println!(
            "| {wire} | {:.1} ms | {:.2} µs |",
            median.as_secs_f64() * 1e3,
            median.as_secs_f64() * 1e6 / TOKENS as f64
        );
    }
    end_to_end(&wires);
}

/// `robota -p` against the mock (one short text answer), per wire, with a settings profile.
fn end_to_end(wires: &[&str]) {
    let status = std::process::Command::new("cargo")
        .args(["build", "--release", "--quiet"])
        .status();
    let bin = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("target/release/robota");
    if !status.is_ok_and(|s| s.success()) || !bin.exists() {
        println!("end to end: skipped (release build failed)");
        return;
    }
    println!("\nend to end: `robota -p` one short answer, median of {RUNS} (0 ms model latency)");
    println!("| wire | wall |");
    println!("|---|---|");
    for wire in wires {
        let dir = tempfile::tempdir().unwrap();
        let text = |t: &str| match *wire {
            "anthropic" => support::anthropic::text_turn(t),
            "openai" => support::openai_responses::text_turn(t),
            "openai-compatible" => support::openai_chat::text_turn(t),
            _ => support::gemini::text_turn(t),
        };
        let server = MockServer::start((0..=RUNS).map(|_| text("Hello.")).collect());
        let base = match *wire {
            "openai" | "openai-compatible" => format!("{}/v1", server.base_url()),
            _ => server.base_url(),
        };
        let kind = if *wire == "google" { "google" } else { wire };
        std::fs::write(
            dir.path().join("settings.json"),
            json!({"currentProvider":"b","providers":{"b":{"type":kind,"model":"m","apiKey":"k","baseURL":base}}}).to_string(),
        )
        .unwrap();
        let mut samples = Vec::new();
        for i in 0..=RUNS {
            let start = Instant::now();
            let out = std::process::Command::new(&bin)
                .args(["-p", "hi", "--no-session-persistence"])
                .env("ROBOTA_HOME", dir.path())
                .current_dir(dir.path())
                .output()
                .unwrap();
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
            if i > 0 {
                samples.push(start.elapsed());
            }
        }
        samples.sort();
        let median: Duration = samples[samples.len() / 2];
        println!("| {wire} | {:.1} ms |", median.as_secs_f64() * 1e3);
    }
}
