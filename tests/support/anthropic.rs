//! Builders of real Anthropic Messages SSE bytes for the mock server: scripted text, tool
//! and thinking turns (every event one chunk, framed `event: {type}\ndata: {json}\n\n` as the
//! API sends it), HTTP error responses, and replays of the recorded fixtures (`.sse` byte
//! for byte, `.jsonl` framed per wire.md §7.2, the issue-616 529 notes rebuilt as raw HTTP).

use serde_json::{Value, json};

use super::{MockResponse, wire_fixture_path};

/// `input_tokens` reported by every scripted turn's `message_start`.
pub const MOCK_INPUT_TOKENS: u64 = 12;
/// `output_tokens` reported by every scripted turn's `message_delta`.
pub const MOCK_OUTPUT_TOKENS: u64 = 7;

/// One SSE event as the Anthropic API frames it.
pub fn event(value: &Value) -> Vec<u8> {
    let kind = value["type"].as_str().unwrap_or("message");
    format!("event: {kind}\ndata: {value}\n\n").into_bytes()
}

fn message_start() -> Vec<u8> {
    message_start_with(MOCK_INPUT_TOKENS)
}

fn message_start_with(input_tokens: u64) -> Vec<u8> {
    event(&json!({"type":"message_start","message":{
        "id":"msg_mock","type":"message","role":"assistant","model":"claude-sonnet-4-5-20250929",
        "content":[],"stop_reason":null,"stop_sequence":null,
        "usage":{"input_tokens":input_tokens,"cache_creation_input_tokens":0,
                 "cache_read_input_tokens":0,"output_tokens":1}}}))
}

fn message_end(stop_reason: &str) -> Vec<Vec<u8>> {
    vec![
        event(&json!({"type":"message_delta",
            "delta":{"stop_reason":stop_reason,"stop_sequence":null},
            "usage":{"output_tokens":MOCK_OUTPUT_TOKENS}})),
        event(&json!({"type":"message_stop"})),
    ]
}

/// `text` cut into up to three pieces on character boundaries (never empty pieces).
fn pieces(text: &str) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    if chars.is_empty() {
        return vec![];
    }
    let size = chars.len().div_ceil(3);
    chars.chunks(size).map(|c| c.iter().collect()).collect()
}

fn text_block(index: usize, text: &str) -> Vec<Vec<u8>> {
    let mut out = vec![event(
        &json!({"type":"content_block_start","index":index,"content_block":{"type":"text","text":""}}),
    )];
    for piece in pieces(text) {
        out.push(event(&json!({"type":"content_block_delta","index":index,
            "delta":{"type":"text_delta","text":piece}})));
    }
    out.push(event(&json!({"type":"content_block_stop","index":index})));
    out
}

/// The chunks of a plain text answer: message_start, ping, one text block streamed in up to
/// three deltas, message_delta (end_turn, usage), message_stop.
pub fn text_turn_chunks(text: &str) -> Vec<Vec<u8>> {
    let mut chunks = vec![message_start(), event(&json!({"type":"ping"}))];
    chunks.extend(text_block(0, text));
    chunks.extend(message_end("end_turn"));
    chunks
}

/// A plain text answer.
pub fn text_turn(text: &str) -> MockResponse {
    MockResponse::sse(text_turn_chunks(text))
}

/// A plain text answer whose `message_start` reports `input_tokens` (a conversation that
/// has grown near the window).
pub fn text_turn_with_input_tokens(text: &str, input_tokens: u64) -> MockResponse {
    let mut chunks = text_turn_chunks(text);
    chunks[0] = message_start_with(input_tokens);
    MockResponse::sse(chunks)
}

/// A text answer whose connection drops after `after_chunks` chunks (the head is always sent).
/// Chunk 0 is message_start, 1 ping, 2 the block start, 3.. the text deltas.
pub fn text_turn_cut(text: &str, after_chunks: usize) -> MockResponse {
    MockResponse::Sse {
        chunks: text_turn_chunks(text),
        cut_after: Some(after_chunks),
        hold_after: None,
    }
}

/// A text answer that stalls after `after_chunks` chunks until `release_held()`.
pub fn text_turn_held(text: &str, after_chunks: usize) -> MockResponse {
    MockResponse::Sse {
        chunks: text_turn_chunks(text),
        cut_after: None,
        hold_after: Some(after_chunks),
    }
}

/// Parallel tool calls (optionally after a text block): one `tool_use` block per call, its
/// input streamed as an empty fragment then up to three pieces; stop_reason `tool_use`.
pub fn tool_turn(preface: Option<&str>, calls: &[(&str, &str, Value)]) -> MockResponse {
    let mut chunks = vec![message_start(), event(&json!({"type":"ping"}))];
    let mut index = 0;
    if let Some(text) = preface {
        chunks.extend(text_block(index, text));
        index += 1;
    }
    for (id, name, input) in calls {
        chunks.push(event(&json!({"type":"content_block_start","index":index,
            "content_block":{"type":"tool_use","id":id,"name":name,"input":{}}})));
        let mut fragments = vec![String::new()];
        fragments.extend(pieces(&input.to_string()));
        for fragment in fragments {
            chunks.push(event(&json!({"type":"content_block_delta","index":index,
                "delta":{"type":"input_json_delta","partial_json":fragment}})));
        }
        chunks.push(event(&json!({"type":"content_block_stop","index":index})));
        index += 1;
    }
    chunks.extend(message_end("tool_use"));
    MockResponse::sse(chunks)
}

/// [`tool_turn`] whose `message_start` reports `input_tokens` (the context nearly full).
pub fn tool_turn_with_input_tokens(
    calls: &[(&str, &str, Value)],
    input_tokens: u64,
) -> MockResponse {
    let MockResponse::Sse { mut chunks, .. } = tool_turn(None, calls) else {
        unreachable!("tool_turn streams")
    };
    chunks[0] = message_start_with(input_tokens);
    MockResponse::sse(chunks)
}

/// A signed thinking block followed by a text answer.
pub fn thinking_then_text(thinking: &str, signature: &str, text: &str) -> MockResponse {
    let mut chunks = vec![
        message_start(),
        event(&json!({"type":"content_block_start","index":0,
            "content_block":{"type":"thinking","thinking":"","signature":""}})),
    ];
    for piece in pieces(thinking) {
        chunks.push(event(&json!({"type":"content_block_delta","index":0,
            "delta":{"type":"thinking_delta","thinking":piece}})));
    }
    chunks.push(event(&json!({"type":"content_block_delta","index":0,
        "delta":{"type":"signature_delta","signature":signature}})));
    chunks.push(event(&json!({"type":"content_block_stop","index":0})));
    chunks.extend(text_block(1, text));
    chunks.extend(message_end("end_turn"));
    MockResponse::sse(chunks)
}

/// Some text, then a mid-stream `error` event, then the connection closes (no message_stop).
pub fn text_then_error_event(text: &str, error_type: &str, message: &str) -> MockResponse {
    let mut chunks = vec![message_start()];
    chunks.push(event(
        &json!({"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}),
    ));
    chunks.push(event(&json!({"type":"content_block_delta","index":0,
        "delta":{"type":"text_delta","text":text}})));
    chunks.push(event(
        &json!({"type":"error","error":{"type":error_type,"message":message}}),
    ));
    MockResponse::sse(chunks)
}

/// An Anthropic error response: JSON body `{"type":"error","error":{type,message}}`,
/// a `request-id`, and `retry-after` when given.
pub fn error_status(
    status: u16,
    error_type: &str,
    message: &str,
    retry_after: Option<&str>,
) -> MockResponse {
    let mut headers = vec![("request-id".to_string(), "req_mock_error".to_string())];
    if let Some(value) = retry_after {
        headers.push(("retry-after".to_string(), value.to_string()));
    }
    MockResponse::Http {
        status,
        headers,
        body: json!({"type":"error","error":{"type":error_type,"message":message}}).to_string(),
    }
}

/// A recorded fixture, by path relative to `fixtures/wire/` (or to `fixtures/wire/anthropic/`):
/// `.sse` byte for byte, one chunk per event; `.jsonl` one chunk per line framed as
/// `event: {type}\ndata: {line}\n\n`; `.txt` the issue-616 529 notes as a raw HTTP response.
pub fn fixture(path: &str) -> MockResponse {
    let mut full = wire_fixture_path(path);
    if !full.exists() {
        full = wire_fixture_path("anthropic").join(path);
    }
    let bytes = std::fs::read(&full).unwrap_or_else(|e| panic!("read {}: {e}", full.display()));
    match full.extension().and_then(|e| e.to_str()) {
        Some("sse") => MockResponse::sse(split_events(&bytes)),
        Some("jsonl") => {
            let text = String::from_utf8(bytes).expect("jsonl fixture is UTF-8");
            let chunks = text
                .lines()
                .filter(|l| !l.trim().is_empty())
                .map(|line| {
                    let v: Value = serde_json::from_str(line).expect("jsonl line is JSON");
                    let kind = v["type"].as_str().unwrap_or("message").to_string();
                    format!("event: {kind}\ndata: {line}\n\n").into_bytes()
                })
                .collect();
            MockResponse::sse(chunks)
        }
        Some("txt") => {
            MockResponse::Raw(raw_http_from_node_notes(&String::from_utf8_lossy(&bytes)))
        }
        other => panic!("unsupported fixture kind {other:?}: {}", full.display()),
    }
}

/// Splits raw SSE bytes after each blank line; the chunks concatenate to the input.
fn split_events(bytes: &[u8]) -> Vec<Vec<u8>> {
    let mut chunks = Vec::new();
    let mut start = 0;
    let mut i = 0;
    while i + 1 < bytes.len() {
        if bytes[i] == b'\n' && bytes[i + 1] == b'\n' {
            chunks.push(bytes[start..i + 2].to_vec());
            start = i + 2;
            i += 2;
        } else {
            i += 1;
        }
    }
    if start < bytes.len() {
        chunks.push(bytes[start..].to_vec());
    }
    chunks
}

/// The 529 in `error_529_overloaded_issue616.txt` is a Node `console.log` of the SDK error,
/// not raw bytes: the status, the recorded headers (`'name': 'value'`) and the body printed
/// after `InternalServerError: 529`. This rebuilds the HTTP response they describe. The one
/// change: `connection: keep-alive` becomes `close`, since the mock closes every connection.
pub fn raw_http_from_node_notes(notes: &str) -> Vec<u8> {
    let status: u16 = notes
        .lines()
        .find_map(|l| l.trim().strip_prefix("status:"))
        .and_then(|s| s.trim().trim_end_matches(',').parse().ok())
        .expect("notes carry a status");
    let mut in_headers = false;
    let mut headers = Vec::new();
    for line in notes.lines() {
        let line = line.trim();
        if line.starts_with("headers: {") {
            in_headers = true;
            continue;
        }
        if in_headers && line.starts_with('}') {
            break;
        }
        if in_headers && let Some((name, value)) = line.split_once(": ") {
            let unquote = |s: &str| {
                s.trim()
                    .trim_end_matches(',')
                    .trim_matches('\'')
                    .to_string()
            };
            let (name, mut value) = (unquote(name), unquote(value));
            if name.eq_ignore_ascii_case("connection") {
                value = "close".to_string();
            }
            headers.push((name, value));
        }
    }
    let body = notes
        .lines()
        .find_map(|l| {
            let (_, rest) = l.split_once(&format!("Error: {status} "))?;
            Some(rest.trim().to_string())
        })
        .expect("notes carry the body");
    let mut out = format!("HTTP/1.1 {status} Overloaded\r\n");
    for (name, value) in &headers {
        out.push_str(&format!("{name}: {value}\r\n"));
    }
    out.push_str("\r\n");
    out.push_str(&body);
    out.into_bytes()
}

/// The system prompt of a recorded Messages request (a string, or its text blocks joined).
pub fn system_text(request: &Value) -> String {
    match &request["system"] {
        Value::String(s) => s.clone(),
        Value::Array(blocks) => blocks
            .iter()
            .filter_map(|b| b["text"].as_str())
            .collect::<Vec<_>>()
            .join(""),
        _ => String::new(),
    }
}
