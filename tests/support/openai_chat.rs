//! Builders of real OpenAI Chat Completions SSE bytes for the mock server, with the same
//! names and signatures as `support::anthropic` so one script can run over every wire
//! format: scripted text, tool and reasoning turns (`data: {chunk}\n\n` per chunk, a usage
//! chunk with `choices:[]`, then `data: [DONE]`), OpenAI-shaped HTTP errors, and replays of
//! the recorded fixtures (`.sse` byte for byte, `.jsonl` framed per wire.md §7.2, the Ollama
//! notes' `data:` lines, llama.cpp's recorded error responses with their headers).

use serde_json::{Value, json};

use super::{MockResponse, wire_fixture_path};

/// `prompt_tokens` reported by every scripted turn's usage chunk.
pub const MOCK_INPUT_TOKENS: u64 = 12;
/// `completion_tokens` reported by every scripted turn's usage chunk.
pub const MOCK_OUTPUT_TOKENS: u64 = 7;
/// The model every scripted chunk names.
pub const MOCK_MODEL: &str = "gpt-4o-mock";

/// One SSE event as Chat Completions frames it (no `event:` line).
pub fn event(value: &Value) -> Vec<u8> {
    format!("data: {value}\n\n").into_bytes()
}

/// The terminator.
pub fn done() -> Vec<u8> {
    b"data: [DONE]\n\n".to_vec()
}

/// A chunk with one choice carrying `delta` and `finish_reason`.
pub fn chunk(delta: Value, finish_reason: Option<&str>) -> Value {
    json!({"id":"chatcmpl-mock","object":"chat.completion.chunk","created":1,"model":MOCK_MODEL,
        "choices":[{"index":0,"delta":delta,"logprobs":null,"finish_reason":finish_reason}]})
}

/// The usage-only final chunk.
pub fn usage_chunk(prompt: u64, completion: u64, cached: u64) -> Value {
    json!({"id":"chatcmpl-mock","object":"chat.completion.chunk","created":1,"model":MOCK_MODEL,
        "choices":[],"usage":{"prompt_tokens":prompt,"completion_tokens":completion,
        "total_tokens":prompt + completion,"prompt_tokens_details":{"cached_tokens":cached}}})
}

fn end(finish_reason: &str) -> Vec<Vec<u8>> {
    vec![
        event(&chunk(json!({}), Some(finish_reason))),
        event(&usage_chunk(MOCK_INPUT_TOKENS, MOCK_OUTPUT_TOKENS, 0)),
        done(),
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

/// The chunks of a plain text answer. Indices match `support::anthropic`'s: 0 the role
/// chunk, 1 a `: keep-alive` comment (as OpenRouter and proxies send), 2 an empty content
/// delta (as Ollama sends), 3.. up to three content deltas; then the finish chunk (`stop`),
/// the usage chunk and `[DONE]`.
pub fn text_turn_chunks(text: &str) -> Vec<Vec<u8>> {
    let mut chunks = vec![
        event(&chunk(
            json!({"role":"assistant","content":"","refusal":null}),
            None,
        )),
        b": keep-alive\n\n".to_vec(),
        event(&chunk(json!({"content":""}), None)),
    ];
    for piece in pieces(text) {
        chunks.push(event(&chunk(json!({"content":piece}), None)));
    }
    chunks.extend(end("stop"));
    chunks
}

/// A plain text answer.
pub fn text_turn(text: &str) -> MockResponse {
    MockResponse::sse(text_turn_chunks(text))
}

/// A text answer whose connection drops after `after_chunks` chunks (the head is always
/// sent); see `text_turn_chunks` for the indices.
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

/// Parallel tool calls (optionally after some text): each call's first fragment carries
/// `index`, `id`, `type`, `name` and `arguments:""`, then its arguments in up to three
/// pieces keyed by `index` only; finish_reason `tool_calls`.
pub fn tool_turn(preface: Option<&str>, calls: &[(&str, &str, Value)]) -> MockResponse {
    let mut chunks = vec![event(&chunk(
        json!({"role":"assistant","content":null}),
        None,
    ))];
    if let Some(text) = preface {
        for piece in pieces(text) {
            chunks.push(event(&chunk(json!({"content":piece}), None)));
        }
    }
    for (index, (id, name, input)) in calls.iter().enumerate() {
        chunks.push(event(&chunk(
            json!({"tool_calls":[{"index":index,"id":id,"type":"function",
                "function":{"name":name,"arguments":""}}]}),
            None,
        )));
        for piece in pieces(&input.to_string()) {
            chunks.push(event(&chunk(
                json!({"tool_calls":[{"index":index,"function":{"arguments":piece}}]}),
                None,
            )));
        }
    }
    chunks.extend(end("tool_calls"));
    MockResponse::sse(chunks)
}

/// `reasoning_content` deltas (DeepSeek, llama.cpp) followed by a text answer.
pub fn thinking_then_text(thinking: &str, text: &str) -> MockResponse {
    let mut chunks = vec![event(&chunk(
        json!({"role":"assistant","content":null,"reasoning_content":""}),
        None,
    ))];
    for piece in pieces(thinking) {
        chunks.push(event(&chunk(
            json!({"content":null,"reasoning_content":piece}),
            None,
        )));
    }
    for piece in pieces(text) {
        chunks.push(event(&chunk(json!({"content":piece}), None)));
    }
    chunks.extend(end("stop"));
    MockResponse::sse(chunks)
}

/// Some text, then a mid-stream `data: {"error":…}` event, then the connection closes.
pub fn text_then_error_event(text: &str, error_type: &str, message: &str) -> MockResponse {
    MockResponse::sse(vec![
        event(&chunk(json!({"role":"assistant","content":""}), None)),
        event(&chunk(json!({"content":text}), None)),
        event(&json!({"error":{"message":message,"type":error_type,"param":null,"code":null}})),
    ])
}

/// An OpenAI-shaped error response `{"error":{message,type,param,code:null}}` with an
/// `x-request-id`, and `retry-after` when given.
pub fn error_status(
    status: u16,
    error_type: &str,
    message: &str,
    retry_after: Option<&str>,
) -> MockResponse {
    error_with_code(status, error_type, Value::Null, message, retry_after)
}

/// An OpenAI-shaped error response with an explicit `code`.
pub fn error_with_code(
    status: u16,
    error_type: &str,
    code: Value,
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
        body: json!({"error":{"message":message,"type":error_type,"param":null,"code":code}})
            .to_string(),
    }
}

/// A recorded fixture, by path relative to `fixtures/wire/` (or to `fixtures/wire/openai-chat/`):
/// - `.sse`: byte for byte, one chunk per event;
/// - `.jsonl`: one chunk per line framed `data: {line}\n\n`, then `data: [DONE]\n\n`;
/// - `.txt` (the Ollama notes): the commented `# data: {…}` lines as events, with no
///   `[DONE]` (none was recorded, so the end after `finish_reason` is what is tested);
/// - `.body` (llama.cpp errors): the recorded status line and headers (`.headers` beside
///   it) and the body, as raw HTTP;
/// - `.json`: a non-streaming 200 JSON answer.
pub fn fixture(path: &str) -> MockResponse {
    let mut full = wire_fixture_path(path);
    if !full.exists() {
        full = wire_fixture_path("openai-chat").join(path);
    }
    let bytes = std::fs::read(&full).unwrap_or_else(|e| panic!("read {}: {e}", full.display()));
    let text = || String::from_utf8(bytes.clone()).expect("fixture is UTF-8");
    match full.extension().and_then(|e| e.to_str()) {
        Some("sse") => MockResponse::sse(split_events(&bytes)),
        Some("jsonl") => {
            let mut chunks: Vec<Vec<u8>> = text()
                .lines()
                .filter(|l| !l.trim().is_empty())
                .map(|line| format!("data: {line}\n\n").into_bytes())
                .collect();
            chunks.push(done());
            MockResponse::sse(chunks)
        }
        Some("txt") => MockResponse::sse(
            text()
                .lines()
                .filter_map(|l| l.trim().strip_prefix("# data: "))
                .map(|data| format!("data: {data}\n\n").into_bytes())
                .collect(),
        ),
        Some("body") => {
            let headers_path = full.with_extension("headers");
            let head = std::fs::read_to_string(&headers_path)
                .unwrap_or_else(|e| panic!("read {}: {e}", headers_path.display()));
            let mut raw = String::new();
            for line in head.lines().filter(|l| !l.trim().is_empty()) {
                raw.push_str(line.trim_end());
                raw.push_str("\r\n");
            }
            raw.push_str("\r\n");
            let mut out = raw.into_bytes();
            out.extend_from_slice(&bytes);
            MockResponse::Raw(out)
        }
        Some("json") => MockResponse::Http {
            status: 200,
            headers: vec![],
            body: text(),
        },
        other => panic!("unsupported fixture kind {other:?}: {}", full.display()),
    }
}

/// The pretty-printed chunks quoted in ```json blocks of the Ollama notes, compacted.
pub fn ollama_notes_json_chunks() -> Vec<Value> {
    let path = wire_fixture_path("openai-compatible/ollama_parallel_tool_calls_notes.txt");
    let notes = std::fs::read_to_string(&path).expect("read the Ollama notes");
    let mut out = Vec::new();
    let mut block: Option<String> = None;
    for line in notes.lines() {
        match (&mut block, line.trim()) {
            (None, "```json") => block = Some(String::new()),
            (Some(text), "```") => {
                out.push(serde_json::from_str(text).expect("a json block parses"));
                block = None;
            }
            (Some(text), _) => {
                text.push_str(line);
                text.push('\n');
            }
            (None, _) => {}
        }
    }
    out
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
