//! Replay-grade diagnostics (issue 13): what they cost when on. Off, the provider's wire
//! tap is `None` and nothing is serialised (the adapter checks one `Option`).
//!
//! `cargo bench --bench diagnostics`. A 50-turn session is recorded through the real
//! writer (`session::diagnostics::Diagnostics`, as the provider's wire tap and the log's
//! history/tool hooks): each turn a 200-character prompt, a tool call whose result is
//! 2,000 characters, and a 600-character answer — two provider requests per turn, each
//! carrying the whole history and 12 tool schemas, each answered by 60 stream events.
//! Figures:
//! - bytes written per turn (JSONL + new payload files), first 10 turns vs last 10 turns
//!   (linear growth shows as equal figures; storing every request whole would grow with
//!   the history), and the total against the sum of the request bodies;
//! - time the writer adds per provider request (request + 60 events + end), median over
//!   all requests and over the last turn's, next to the time to serialise the body
//!   (what the adapter does anyway).

#![allow(clippy::unwrap_used, clippy::expect_used)] // bench code: a failed unwrap aborts the run

use std::fs;
use std::path::Path;
use std::time::{Duration, Instant};

use robota::core::engine::ToolCall;
use robota::core::wire::{WireObserver, WireRequest};
use robota::core::{Block, Message, ProviderRequest, RiskClass, Role, ToolOutput, ToolSchema};
use robota::session::diagnostics::Diagnostics;
use serde_json::json;

const TURNS: usize = 50;

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

fn us(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

fn dir_bytes(dir: &Path) -> u64 {
    fs::read_dir(dir)
        .map(|entries| {
            entries
                .flatten()
                .filter_map(|e| e.metadata().ok())
                .map(|m| m.len())
                .sum()
        })
        .unwrap_or(0)
}

fn text(n: usize, seed: usize) -> String {
    format!("turn {seed}: ") + &"lorem ipsum dolor sit amet consectetur ".repeat(n / 39 + 1)[..n]
}

fn main() {
    let dir = tempfile::tempdir().unwrap();
    let session_log = dir.path().join("bench-session.jsonl");
    fs::write(&session_log, "").unwrap();
    let payloads = session_log.with_extension("payloads");
    let diagnostics = Diagnostics::open(&session_log).unwrap();
    let tools: Vec<ToolSchema> = (0..12)
        .map(|i| ToolSchema {
            name: format!("Tool{i}"),
            description: text(900, i),
            input_schema: json!({"type":"object","properties":{"path":{"type":"string"}}}),
        })
        .collect();
    let system = text(12_000, 0);
    diagnostics.session_init("anthropic", "m", &system, &tools, dir.path());
    let mut history: Vec<Message> = Vec::new();
    let mut turn_bytes = Vec::new();
    let mut overhead = Vec::new();
    let mut encode = Vec::new();
    let mut request_only = Vec::new();
    let mut body_total = 0u64;
    let mut last_turn = Vec::new();
    let size = |d: &Diagnostics| d.bytes_written() + dir_bytes(&payloads);
    for turn in 0..TURNS {
        let before = size(&diagnostics);
        let prompt = Message::user_text(text(200, turn));
        diagnostics.history_append(&prompt);
        history.push(prompt);
        for round in 0..2 {
            let request = ProviderRequest {
                model: "m".into(),
                system: system.clone(),
                messages: history.clone(),
                tools: tools.clone(),
                max_tokens: 8192,
                ..ProviderRequest::default()
            };
            let started = Instant::now();
            let body = serde_json::to_vec(&json!({
                "model": request.model, "max_tokens": request.max_tokens,
                "system": [{"type":"text","text": request.system}],
                "messages": request.messages, "tools": request.tools, "stream": true,
            }))
            .unwrap();
            encode.push(started.elapsed());
            body_total += body.len() as u64;
            let started = Instant::now();
            let n = diagnostics.request(&WireRequest {
                provider: "anthropic",
                envelope: &request,
                url: "http://127.0.0.1:1/v1/messages",
                headers: vec![("x-api-key".into(), "sk-ant-bench".into())],
                body: &body,
                attempt: 1,
            });
            request_only.push(started.elapsed());
            diagnostics.response_status(n, 200);
            for i in 0..60 {
                let data = format!(
                    r#"{{"type":"content_block_delta","index":0,"delta":{{"type":"text_delta","text":"turn {turn} word {i} "}}}}"#
                );
                diagnostics.response_event(n, Some("content_block_delta"), &data);
            }
            diagnostics.response_end(n, None);
            let took = started.elapsed();
            overhead.push(took);
            if turn == TURNS - 1 {
                last_turn.push(took);
            }
            let answer = if round == 0 {
                let call = ToolCall {
                    start_dir: None,
                    id: format!("toolu_{turn}"),
                    name: "Tool1".into(),
                    input: json!({"path": format!("src/file_{turn}.rs")}),
                    risk: RiskClass::Read,
                    argument: None,
                };
                let message = Message::new(
                    Role::Assistant,
                    vec![Block::ToolUse {
                        id: call.id.clone(),
                        name: call.name.clone(),
                        input: call.input.clone(),
                    }],
                );
                diagnostics.history_append(&message);
                history.push(message);
                diagnostics.tool_request(&call);
                let output = ToolOutput::ok(text(2000, turn));
                diagnostics.tool_result(&call, &output, Duration::from_millis(3));
                Message::new(
                    Role::User,
                    vec![Block::ToolResult {
                        tool_use_id: call.id.clone(),
                        content: output.content.clone().into(),
                        is_error: false,
                    }],
                )
            } else {
                Message::new(Role::Assistant, vec![Block::text(text(600, turn))])
            };
            diagnostics.history_append(&answer);
            history.push(answer);
        }
        turn_bytes.push(size(&diagnostics) - before);
    }
    let total = size(&diagnostics);
    let payload_total = dir_bytes(&payloads);
    let avg = |s: &[u64]| s.iter().sum::<u64>() as f64 / s.len() as f64;
    println!("diagnostics, {TURNS}-turn session, 2 provider requests per turn:");
    println!(
        "  bytes per turn: first 10 turns {:.0} B, last 10 turns {:.0} B, all {:.0} B",
        avg(&turn_bytes[..10]),
        avg(&turn_bytes[TURNS - 10..]),
        avg(&turn_bytes)
    );
    println!(
        "  total {:.1} KiB on disk (JSONL {:.1} KiB, payload files {:.1} KiB) for {:.1} KiB of request bodies sent ({:.1}%)",
        total as f64 / 1024.0,
        (total - payload_total) as f64 / 1024.0,
        payload_total as f64 / 1024.0,
        body_total as f64 / 1024.0,
        100.0 * total as f64 / body_total as f64
    );
    let mut by_type = std::collections::BTreeMap::<String, (usize, usize)>::new();
    for line in fs::read_to_string(diagnostics.path()).unwrap().lines() {
        let value: serde_json::Value = serde_json::from_str(line).unwrap();
        let entry = by_type
            .entry(value["type"].as_str().unwrap().to_string())
            .or_default();
        entry.0 += 1;
        entry.1 += line.len() + 1;
    }
    for (kind, (count, bytes)) in by_type {
        println!(
            "    {kind}: {count} lines, {:.0} B per line",
            bytes as f64 / count as f64
        );
    }
    println!(
        "  writer time per provider request: median {:.0} µs (last turn's {:.0} µs); body serialisation for comparison: median {:.0} µs",
        us(median(overhead)),
        us(median(last_turn)),
        us(median(encode))
    );
    println!(
        "    of which recording the request: median {:.0} µs; the response (60 events, its line and payload): the rest",
        us(median(request_only))
    );
}
