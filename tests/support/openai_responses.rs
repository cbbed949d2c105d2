//! Builders of real OpenAI Responses SSE bytes for the mock server, with the same names and
//! signatures as `support::anthropic` where they apply so one script can run over every
//! wire format: scripted text, tool-call and reasoning turns (each event framed
//! `event: {type}\ndata: {json}\n\n` as the API sends it), `response.incomplete` /
//! `response.failed` / mid-stream `error` streams, HTTP error responses in OpenAI's body
//! shape, and replays of the recorded fixtures (`.sse` byte for byte, `.jsonl` framed per
//! wire.md §7.2, `.json` error bodies as HTTP responses).

use serde_json::{Value, json};

use super::{MockResponse, wire_fixture_path};

/// Prompt tokens (none cached) reported by every scripted turn's `response.completed`.
pub const MOCK_INPUT_TOKENS: u64 = 12;
/// `output_tokens` reported by every scripted turn's `response.completed`.
pub const MOCK_OUTPUT_TOKENS: u64 = 7;
/// The model every scripted response names.
pub const MOCK_MODEL: &str = "gpt-5.1-2025-11-13";

/// One SSE event as the Responses API frames it.
pub fn event(value: &Value) -> Vec<u8> {
    let kind = value["type"].as_str().unwrap_or("message");
    format!("event: {kind}\ndata: {value}\n\n").into_bytes()
}

fn response(status: &str, output: Vec<Value>, usage: Value) -> Value {
    json!({"id":"resp_mock","object":"response","created_at":1_760_000_000,"status":status,
           "error":null,"incomplete_details":null,"model":MOCK_MODEL,"output":output,
           "store":false,"usage":usage})
}

fn mock_usage() -> Value {
    json!({"input_tokens":MOCK_INPUT_TOKENS,"input_tokens_details":{"cached_tokens":0},
           "output_tokens":MOCK_OUTPUT_TOKENS,"output_tokens_details":{"reasoning_tokens":0},
           "total_tokens":MOCK_INPUT_TOKENS + MOCK_OUTPUT_TOKENS})
}

/// `response.created` and `response.in_progress`, written together as the first chunk.
fn head() -> Vec<u8> {
    let mut bytes = event(&json!({"type":"response.created","sequence_number":0,
        "response":response("in_progress", vec![], Value::Null)}));
    bytes.extend(event(
        &json!({"type":"response.in_progress","sequence_number":1,
        "response":response("in_progress", vec![], Value::Null)}),
    ));
    bytes
}

fn completed(output: Vec<Value>) -> Vec<u8> {
    event(
        &json!({"type":"response.completed","response":response("completed", output, mock_usage())}),
    )
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

fn message_item(id: &str, text: &str, status: &str) -> Value {
    let content = if status == "in_progress" {
        json!([])
    } else {
        json!([{"type":"output_text","annotations":[],"logprobs":[],"text":text}])
    };
    json!({"id":id,"type":"message","status":status,"content":content,"role":"assistant"})
}

/// The events of one output message: added, part added, deltas, done events. Returns the
/// chunks and the finished item.
fn message_events(index: usize, text: &str) -> (Vec<Vec<u8>>, Value) {
    let id = format!("msg_mock_{index}");
    let mut out = vec![
        event(
            &json!({"type":"response.output_item.added","output_index":index,
            "item":message_item(&id, "", "in_progress")}),
        ),
        event(
            &json!({"type":"response.content_part.added","item_id":id,"output_index":index,
            "content_index":0,"part":{"type":"output_text","annotations":[],"logprobs":[],"text":""}}),
        ),
    ];
    for piece in pieces(text) {
        out.push(event(
            &json!({"type":"response.output_text.delta","item_id":id,
            "output_index":index,"content_index":0,"delta":piece,"logprobs":[]}),
        ));
    }
    out.push(event(
        &json!({"type":"response.output_text.done","item_id":id,
        "output_index":index,"content_index":0,"text":text,"logprobs":[]}),
    ));
    out.push(event(
        &json!({"type":"response.content_part.done","item_id":id,
        "output_index":index,"content_index":0,
        "part":{"type":"output_text","annotations":[],"logprobs":[],"text":text}}),
    ));
    let done = message_item(&id, text, "completed");
    out.push(event(
        &json!({"type":"response.output_item.done","output_index":index,"item":done}),
    ));
    (out, done)
}

/// The chunks of a plain text answer. Chunk 0 is created + in_progress, 1 the message item,
/// 2 its content part, 3.. the text deltas (up to three), then the done events and
/// `response.completed` — the same positions as the Anthropic builder's text deltas.
pub fn text_turn_chunks(text: &str) -> Vec<Vec<u8>> {
    let mut chunks = vec![head()];
    let (events, item) = message_events(0, text);
    chunks.extend(events);
    chunks.push(completed(vec![item]));
    chunks
}

/// A plain text answer.
pub fn text_turn(text: &str) -> MockResponse {
    MockResponse::sse(text_turn_chunks(text))
}

/// A text answer whose connection drops after `after_chunks` chunks (the head is always sent).
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

/// Parallel function calls (optionally after a text message): one `function_call` item per
/// call (`calls` = `(call_id, name, arguments)`), arguments streamed in up to three pieces.
pub fn tool_turn(preface: Option<&str>, calls: &[(&str, &str, Value)]) -> MockResponse {
    let mut chunks = vec![head()];
    let mut output = Vec::new();
    if let Some(text) = preface {
        let (events, item) = message_events(0, text);
        chunks.extend(events);
        output.push(item);
    }
    for (call_id, name, input) in calls {
        let index = output.len();
        let item_id = format!("fc_mock_{index}");
        let arguments = input.to_string();
        let item = |args: &str, status: &str| {
            json!({"id":item_id,"type":"function_call","status":status,"arguments":args,
                   "call_id":call_id,"name":name})
        };
        chunks.push(event(
            &json!({"type":"response.output_item.added","output_index":index,
            "item":item("", "in_progress")}),
        ));
        for piece in pieces(&arguments) {
            chunks.push(event(
                &json!({"type":"response.function_call_arguments.delta",
                "item_id":item_id,"output_index":index,"delta":piece}),
            ));
        }
        chunks.push(event(
            &json!({"type":"response.function_call_arguments.done",
            "item_id":item_id,"output_index":index,"arguments":arguments}),
        ));
        let done = item(&arguments, "completed");
        chunks.push(event(
            &json!({"type":"response.output_item.done","output_index":index,
            "item":done}),
        ));
        output.push(done);
    }
    chunks.push(completed(output));
    MockResponse::sse(chunks)
}

/// A reasoning item (summary streamed in up to three deltas, `encrypted_content` on the
/// done item) followed by a text answer.
pub fn reasoning_then_text(summary: &str, encrypted_content: &str, text: &str) -> MockResponse {
    let id = "rs_mock_0";
    let mut chunks = vec![
        head(),
        event(
            &json!({"type":"response.output_item.added","output_index":0,
            "item":{"id":id,"type":"reasoning","summary":[]}}),
        ),
        event(
            &json!({"type":"response.reasoning_summary_part.added","item_id":id,
            "output_index":0,"summary_index":0,"part":{"type":"summary_text","text":""}}),
        ),
    ];
    for piece in pieces(summary) {
        chunks.push(event(
            &json!({"type":"response.reasoning_summary_text.delta",
            "item_id":id,"output_index":0,"summary_index":0,"delta":piece}),
        ));
    }
    chunks.push(event(
        &json!({"type":"response.reasoning_summary_part.done","item_id":id,
        "output_index":0,"summary_index":0,"part":{"type":"summary_text","text":summary}}),
    ));
    let reasoning = json!({"id":id,"type":"reasoning","encrypted_content":encrypted_content,
        "summary":[{"type":"summary_text","text":summary}]});
    chunks.push(event(
        &json!({"type":"response.output_item.done","output_index":0,
        "item":reasoning}),
    ));
    let (events, message) = message_events(1, text);
    chunks.extend(events);
    chunks.push(completed(vec![reasoning, message]));
    MockResponse::sse(chunks)
}

/// A text answer ended by `response.incomplete` with `reason`
/// (`max_output_tokens` | `content_filter`).
pub fn incomplete_turn(text: &str, reason: &str) -> MockResponse {
    let mut chunks = vec![head()];
    let (events, item) = message_events(0, text);
    chunks.extend(events);
    let mut resp = response("incomplete", vec![item], mock_usage());
    resp["incomplete_details"] = json!({"reason":reason});
    chunks.push(event(
        &json!({"type":"response.incomplete","response":resp}),
    ));
    MockResponse::sse(chunks)
}

/// Some text, then `response.failed` with `error{code,message}`.
pub fn text_then_failed(text: &str, code: &str, message: &str) -> MockResponse {
    let mut chunks = vec![head()];
    let (events, _) = message_events(0, text);
    chunks.extend(events.into_iter().take(3));
    let mut resp = response("failed", vec![], Value::Null);
    resp["error"] = json!({"code":code,"message":message});
    chunks.push(event(&json!({"type":"response.failed","response":resp})));
    MockResponse::sse(chunks)
}

/// Some text, then a mid-stream `error` event (nested shape, as recorded), then the
/// connection closes with no terminal event.
pub fn text_then_error_event(text: &str, error_type: &str, message: &str) -> MockResponse {
    let mut chunks = vec![head()];
    let (events, _) = message_events(0, text);
    chunks.extend(events.into_iter().take(3));
    chunks.push(event(&json!({"type":"error","sequence_number":9,
        "error":{"type":error_type,"code":error_type,"message":message,"param":null}})));
    MockResponse::sse(chunks)
}

/// An OpenAI error response: JSON body `{"error":{message,type,param,code}}` (`code` =
/// `error_type`), an `x-request-id`, and `retry-after` when given.
pub fn error_status(
    status: u16,
    error_type: &str,
    message: &str,
    retry_after: Option<&str>,
) -> MockResponse {
    let mut headers = vec![("x-request-id".to_string(), "req_mock_error".to_string())];
    if let Some(value) = retry_after {
        headers.push(("retry-after".to_string(), value.to_string()));
    }
    MockResponse::Http {
        status,
        headers,
        body: json!({"error":{"message":message,"type":error_type,"param":null,"code":error_type}})
            .to_string(),
    }
}

/// A recorded fixture, by path relative to `fixtures/wire/` (or to
/// `fixtures/wire/openai-responses/`): `.sse` byte for byte, one chunk per event; `.jsonl`
/// one chunk per line framed as `event: {type}\ndata: {line}\n\n`; `.json` an error body
/// served with the status its name carries (`error_body_429_…` → 429).
pub fn fixture(path: &str) -> MockResponse {
    let full = resolve(path);
    let bytes = std::fs::read(&full).unwrap_or_else(|e| panic!("read {}: {e}", full.display()));
    match full.extension().and_then(|e| e.to_str()) {
        Some("sse") => MockResponse::sse(split_events(&bytes)),
        Some("jsonl") => {
            let text = String::from_utf8(bytes).expect("jsonl fixture is UTF-8");
            MockResponse::sse(
                text.lines()
                    .filter_map(frame_line)
                    .map(|(_, c)| c)
                    .collect(),
            )
        }
        Some("json") => {
            let name = full.file_name().and_then(|n| n.to_str()).unwrap_or("");
            let status = name
                .split('_')
                .find_map(|part| part.parse::<u16>().ok())
                .unwrap_or_else(|| panic!("{name}: no status in the name"));
            MockResponse::Http {
                status,
                headers: vec![("x-request-id".into(), "req_fixture".into())],
                body: String::from_utf8(bytes).expect("json fixture is UTF-8"),
            }
        }
        other => panic!("unsupported fixture kind {other:?}: {}", full.display()),
    }
}

/// A `.jsonl` file holding several recorded streams back to back (each starts with
/// `response.created`), one response per stream.
pub fn fixture_streams(path: &str) -> Vec<MockResponse> {
    let full = resolve(path);
    let text =
        std::fs::read_to_string(&full).unwrap_or_else(|e| panic!("read {}: {e}", full.display()));
    let mut streams: Vec<Vec<Vec<u8>>> = Vec::new();
    for line in text.lines() {
        let Some((kind, chunk)) = frame_line(line) else {
            continue;
        };
        if kind == "response.created" || streams.is_empty() {
            streams.push(Vec::new());
        }
        if let Some(current) = streams.last_mut() {
            current.push(chunk);
        }
    }
    streams.into_iter().map(MockResponse::sse).collect()
}

fn resolve(path: &str) -> std::path::PathBuf {
    let full = wire_fixture_path(path);
    if full.exists() {
        full
    } else {
        wire_fixture_path("openai-responses").join(path)
    }
}

/// A jsonl line framed as one SSE event, with its type.
fn frame_line(line: &str) -> Option<(String, Vec<u8>)> {
    if line.trim().is_empty() {
        return None;
    }
    let v: Value = serde_json::from_str(line).expect("jsonl line is JSON");
    let kind = v["type"].as_str().unwrap_or("message").to_string();
    let chunk = format!("event: {kind}\ndata: {line}\n\n").into_bytes();
    Some((kind, chunk))
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
