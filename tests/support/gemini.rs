//! Builders of real Gemini `streamGenerateContent?alt=sse` bytes for the mock server, with
//! the same names and signatures as `support::anthropic` so one script can run over every
//! wire format: scripted text, tool and thinking turns (each chunk a whole
//! `GenerateContentResponse` framed `data: {json}\r\n\r\n`, cumulative `usageMetadata` on
//! every chunk, `finishReason` on the last, no terminator), HTTP and mid-stream errors in
//! Google's `{"error":{code,message,status,details}}` shape, and replays of the recorded
//! fixtures (`.jsonl` framed per wire.md §7.2, `.json` error bodies as HTTP responses).

use serde_json::{Value, json};

use super::{MockResponse, wire_fixture_path};

/// `promptTokenCount` reported by every scripted turn (so `input_tokens`).
pub const MOCK_INPUT_TOKENS: u64 = 12;
/// `candidatesTokenCount` of every scripted turn's last chunk (so `output_tokens`).
pub const MOCK_OUTPUT_TOKENS: u64 = 7;
/// `modelVersion` of every scripted chunk.
pub const MOCK_MODEL: &str = "gemini-2.5-flash";
/// `thoughtSignature` on the first function call of `tool_turn`.
pub const MOCK_CALL_SIGNATURE: &str = "mock_call_signature";

/// One SSE event as the Gemini API frames it (CRLF, no `event:` line).
pub fn event(value: &Value) -> Vec<u8> {
    format!("data: {value}\r\n\r\n").into_bytes()
}

/// A response chunk holding `parts`, with `finishReason` when given.
pub fn chunk(parts: Value, finish: Option<&str>, output_tokens: u64) -> Vec<u8> {
    let mut candidate = json!({"content":{"parts":parts,"role":"model"},"index":0});
    if let Some(reason) = finish {
        candidate["finishReason"] = json!(reason);
    }
    event(&json!({
        "candidates": [candidate],
        "usageMetadata": {
            "promptTokenCount": MOCK_INPUT_TOKENS,
            "candidatesTokenCount": output_tokens,
            "totalTokenCount": MOCK_INPUT_TOKENS + output_tokens,
        },
        "modelVersion": MOCK_MODEL,
        "responseId": "resp_mock",
    }))
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

fn text_chunks(text: &str) -> Vec<Vec<u8>> {
    pieces(text)
        .into_iter()
        .map(|piece| chunk(json!([{"text": piece}]), None, MOCK_OUTPUT_TOKENS / 2))
        .collect()
}

fn final_chunk() -> Vec<u8> {
    chunk(json!([{"text": ""}]), Some("STOP"), MOCK_OUTPUT_TOKENS)
}

/// The chunks of a plain text answer: up to three text chunks, then an empty text part
/// with `finishReason: STOP` (as in the recorded `function_call.jsonl`).
pub fn text_turn_chunks(text: &str) -> Vec<Vec<u8>> {
    let mut chunks = text_chunks(text);
    chunks.push(final_chunk());
    chunks
}

/// A plain text answer.
pub fn text_turn(text: &str) -> MockResponse {
    MockResponse::sse(text_turn_chunks(text))
}

/// A text answer whose connection drops after `after_chunks` chunks. Chunk 0.. are the
/// text pieces; the count is capped so the `finishReason` chunk is never sent (an end after
/// it would be a complete answer, not a cut).
pub fn text_turn_cut(text: &str, after_chunks: usize) -> MockResponse {
    let chunks = text_turn_chunks(text);
    let cut = after_chunks.min(chunks.len() - 1);
    MockResponse::Sse {
        chunks,
        cut_after: Some(cut),
        hold_after: None,
    }
}

/// A text answer that stalls after `after_chunks` chunks (capped as in `text_turn_cut`)
/// until `release_held()`.
pub fn text_turn_held(text: &str, after_chunks: usize) -> MockResponse {
    let chunks = text_turn_chunks(text);
    let hold = after_chunks.min(chunks.len() - 1);
    MockResponse::Sse {
        chunks,
        cut_after: None,
        hold_after: Some(hold),
    }
}

/// Parallel function calls (optionally after text): the text chunks, then one chunk with
/// every `functionCall{name,args,id}` part (the first signed with `MOCK_CALL_SIGNATURE`, as
/// Gemini 3 signs the first call; an empty id is left out, as the Gemini API does), then an
/// empty text part with `finishReason: STOP` — there is no tool-use finish reason.
pub fn tool_turn(preface: Option<&str>, calls: &[(&str, &str, Value)]) -> MockResponse {
    let mut chunks = preface.map(text_chunks).unwrap_or_default();
    let parts: Vec<Value> = calls
        .iter()
        .enumerate()
        .map(|(i, (id, name, args))| {
            let mut call = json!({"name": name, "args": args});
            if !id.is_empty() {
                call["id"] = json!(id);
            }
            let mut part = json!({"functionCall": call});
            if i == 0 {
                part["thoughtSignature"] = json!(MOCK_CALL_SIGNATURE);
            }
            part
        })
        .collect();
    chunks.push(chunk(Value::Array(parts), None, MOCK_OUTPUT_TOKENS));
    chunks.push(final_chunk());
    MockResponse::sse(chunks)
}

/// Thought-summary parts, then the text, then an empty part carrying `signature` with
/// `finishReason: STOP` (the shape of the recorded `text.jsonl`).
pub fn thinking_then_text(thinking: &str, signature: &str, text: &str) -> MockResponse {
    let mut chunks: Vec<Vec<u8>> = pieces(thinking)
        .into_iter()
        .map(|piece| chunk(json!([{"text": piece, "thought": true}]), None, 1))
        .collect();
    chunks.extend(text_chunks(text));
    chunks.push(chunk(
        json!([{"text": "", "thoughtSignature": signature}]),
        Some("STOP"),
        MOCK_OUTPUT_TOKENS,
    ));
    MockResponse::sse(chunks)
}

/// Some text, then a mid-stream `{"error":…}` chunk, then the connection closes.
pub fn text_then_error_event(text: &str, error_type: &str, message: &str) -> MockResponse {
    let (code, status) = google_status(error_type, 500);
    MockResponse::sse(vec![
        chunk(json!([{"text": text}]), None, 1),
        event(&json!({"error": {"code": code, "message": message, "status": status}})),
    ])
}

/// A Gemini error response `{"error":{code,message,status,details}}`. `error_type` is the
/// Google status (`RESOURCE_EXHAUSTED`…; Anthropic type names are translated), and
/// `retry_after` (seconds) becomes a `RetryInfo.retryDelay` detail, which is how Gemini
/// asks for a wait.
pub fn error_status(
    status: u16,
    error_type: &str,
    message: &str,
    retry_after: Option<&str>,
) -> MockResponse {
    let (_, google) = google_status(error_type, status);
    let mut details = vec![];
    if let Some(seconds) = retry_after {
        details.push(json!({"@type":"type.googleapis.com/google.rpc.RetryInfo",
            "retryDelay": format!("{seconds}s")}));
    }
    MockResponse::Http {
        status,
        headers: vec![],
        body: json!({"error": {"code": status, "message": message, "status": google,
            "details": details}})
        .to_string(),
    }
}

/// The Google code and status for a status or an Anthropic error type name.
fn google_status(error_type: &str, fallback_code: u16) -> (u16, String) {
    let (code, status) = match error_type {
        "overloaded_error" | "UNAVAILABLE" => (503, "UNAVAILABLE"),
        "api_error" | "INTERNAL" => (500, "INTERNAL"),
        "rate_limit_error" | "RESOURCE_EXHAUSTED" => (429, "RESOURCE_EXHAUSTED"),
        "authentication_error" | "UNAUTHENTICATED" => (401, "UNAUTHENTICATED"),
        "permission_error" | "PERMISSION_DENIED" => (403, "PERMISSION_DENIED"),
        "not_found_error" | "NOT_FOUND" => (404, "NOT_FOUND"),
        "invalid_request_error" | "INVALID_ARGUMENT" => (400, "INVALID_ARGUMENT"),
        other => return (fallback_code, other.to_string()),
    };
    (code, status.to_string())
}

/// A recorded fixture, by path relative to `fixtures/wire/` (or to `fixtures/wire/gemini/`):
/// `.jsonl` one chunk per line framed `data: {line}\r\n\r\n`; `.json` an error body served
/// with the HTTP status in its `error.code`.
pub fn fixture(path: &str) -> MockResponse {
    let mut full = wire_fixture_path(path);
    if !full.exists() {
        full = wire_fixture_path("gemini").join(path);
    }
    let text =
        std::fs::read_to_string(&full).unwrap_or_else(|e| panic!("read {}: {e}", full.display()));
    match full.extension().and_then(|e| e.to_str()) {
        Some("jsonl") => MockResponse::sse(
            text.lines()
                .filter(|l| !l.trim().is_empty())
                .map(|line| format!("data: {line}\r\n\r\n").into_bytes())
                .collect(),
        ),
        Some("json") => {
            let body: Value = serde_json::from_str(&text).expect("json fixture parses");
            let status = body["error"]["code"].as_u64().expect("error.code") as u16;
            MockResponse::Http {
                status,
                headers: vec![],
                body: text,
            }
        }
        other => panic!("unsupported fixture kind {other:?}: {}", full.display()),
    }
}
