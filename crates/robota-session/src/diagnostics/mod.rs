//! Replay-grade diagnostics: a second JSONL beside the session log,
//! `<dir>/<id>.diagnostics.jsonl`, written only when diagnostics are on (`--debug-log`,
//! settings `diagnostics: true`). It records what the model saw and what came back:
//! `session_init` (provider, model, system prompt, tool schemas — again whenever they
//! change), each `provider_request` (the provider-neutral envelope and the exact body bytes
//! sent, the URL and headers, credentials redacted), its `provider_response` (status and
//! the raw stream events or body, how it ended), `tool_execution_request` /
//! `tool_execution_result` with the tool-use ids, and `history_mutation`s. Long strings
//! and repeated request pieces live once in `<id>.payloads/` (see `payloads`); `read`
//! rebuilds requests and validates a log.

pub mod payloads;
pub mod read;
mod split_keys;

use std::borrow::Cow;
use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::sync::{LazyLock, Mutex, MutexGuard};
use std::time::Duration;

use regex::Regex;
use serde_json::{Value, json};

use crate::error::{LogAction, LogError};
use crate::line::now_rfc3339;
use crate::redact::{REDACTED, is_secret_key, redact, redact_text};
use robota_core::engine::ToolCall;
use robota_core::wire::{WireObserver, WireRequest};
use robota_core::{Message, ProviderError, ToolOutput, ToolSchema};

use payloads::{PayloadWriter, PieceChain, encode_pieces, payload_dir, sha256_hex};

/// The diagnostics log beside the session log at `session_log`.
pub fn diagnostics_path(session_log: &Path) -> PathBuf {
    session_log.with_extension("diagnostics.jsonl")
}

/// Whether `path` is a diagnostics log (not a session log).
pub fn is_diagnostics_path(path: &Path) -> bool {
    path.file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.ends_with(".diagnostics.jsonl"))
}

/// An open diagnostics log. Writes are best effort: a failed write is counted and the
/// conversation goes on (the session log remains the record of the conversation).
#[derive(Debug)]
pub struct Diagnostics {
    path: PathBuf,
    state: Mutex<State>,
}

#[derive(Debug)]
struct State {
    file: File,
    payloads: PayloadWriter,
    next_request: u64,
    responses: HashMap<u64, Response>,
    /// The last request's envelope and body pieces (the next one's base).
    previous: Option<(PieceChain, PieceChain)>,
    /// Hash of the last `session_init` written.
    last_init: Option<String>,
    bytes_written: u64,
    failed_writes: u64,
}

/// What came back for one request so far.
#[derive(Debug, Default)]
struct Response {
    status: Option<u16>,
    /// Each stream event's name and data, as received.
    events: Vec<(Option<String>, String)>,
    body: Option<String>,
}

impl Diagnostics {
    /// Opens (creating or appending to) the diagnostics log of the session log at
    /// `session_log`; request numbers continue after those already in the file.
    pub fn open(session_log: &Path) -> Result<Diagnostics, LogError> {
        let path = diagnostics_path(session_log);
        let next_request = last_request_number(&path) + 1;
        let mut options = OpenOptions::new();
        options.create(true).append(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        let file = options
            .open(&path)
            .map_err(|e| LogError::io(&path, LogAction::Open, e))?;
        Ok(Diagnostics {
            state: Mutex::new(State {
                file,
                payloads: PayloadWriter::new(payload_dir(session_log)),
                next_request,
                responses: HashMap::new(),
                previous: None,
                last_init: None,
                bytes_written: 0,
                failed_writes: 0,
            }),
            path,
        })
    }

    /// The diagnostics JSONL file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Bytes written to the JSONL and to new payload files' lines so far (the JSONL only).
    pub fn bytes_written(&self) -> u64 {
        self.lock().bytes_written
    }

    /// Records the session's setup when it differs from the last one recorded.
    pub fn session_init(
        &self,
        provider: &str,
        model: &str,
        system: &str,
        tools: &[ToolSchema],
        cwd: &Path,
    ) {
        let line = json!({
            "type": "session_init",
            "provider": provider,
            "model": model,
            "cwd": cwd.to_string_lossy(),
            "system_prompt_length": system.len(),
            "system_prompt": system,
            "tool_schemas": tools,
        });
        let hash = sha256_hex(line.to_string().as_bytes());
        let mut state = self.lock();
        if state.last_init.as_deref() == Some(hash.as_str()) {
            return;
        }
        state.last_init = Some(hash);
        self.write(&mut state, line);
    }

    /// Records a tool call about to run, with its input.
    pub fn tool_request(&self, call: &ToolCall) {
        self.write_now(json!({
            "type": "tool_execution_request",
            "tool_use_id": call.id,
            "tool": call.name,
            "input": call.input,
        }));
    }

    /// Records a finished tool call: its output, whether it is an error, and how long it ran.
    pub fn tool_result(&self, call: &ToolCall, output: &ToolOutput, duration: Duration) {
        self.write_now(json!({
            "type": "tool_execution_result",
            "tool_use_id": call.id,
            "tool": call.name,
            "is_error": output.is_error,
            "duration_ms": duration.as_millis() as u64,
            "content": output.content,
        }));
    }

    /// A message appended to the history.
    pub fn history_append(&self, message: &Message) {
        self.write_now(json!({
            "type": "history_mutation",
            "op": "append",
            "message": message,
        }));
    }

    /// The history replaced by a compaction summary.
    pub fn history_compact(&self, summary: &Message) {
        self.write_now(json!({
            "type": "history_mutation",
            "op": "compact",
            "message": summary,
        }));
    }

    /// The history rewound to message `to` (`before`: dropping it too).
    pub fn history_rewind(&self, to: &str, before: bool) {
        self.write_now(json!({
            "type": "history_mutation",
            "op": "rewind",
            "to": to,
            "before": before,
        }));
    }

    fn write_now(&self, line: Value) {
        let mut state = self.lock();
        self.write(&mut state, line);
    }

    /// Stamps, redacts, moves long strings to payloads and appends one line.
    fn write(&self, state: &mut State, mut line: Value) {
        if let Value::Object(map) = &mut line {
            map.insert("ts".into(), Value::String(now_rfc3339()));
        }
        redact(&mut line);
        state.payloads.externalize(&mut line);
        let mut bytes = line.to_string().into_bytes();
        bytes.push(b'\n');
        match state
            .file
            .write_all(&bytes)
            .and_then(|()| state.file.flush())
        {
            Ok(()) => state.bytes_written += bytes.len() as u64,
            Err(e) => {
                if state.failed_writes == 0 {
                    tracing::warn!(path = %self.path.display(), "diagnostics write failed: {e}");
                }
                state.failed_writes += 1;
            }
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl WireObserver for Diagnostics {
    fn request(&self, request: &WireRequest<'_>) -> u64 {
        let envelope = envelope_text(request);
        let body = String::from_utf8_lossy(request.body);
        let headers: serde_json::Map<String, Value> = request
            .headers
            .iter()
            .map(|(name, value)| {
                let value = if is_secret_key(name) {
                    REDACTED.to_string()
                } else {
                    value.clone()
                };
                (name.clone(), Value::String(value))
            })
            .collect();
        let redact_run = |run: &str| match redact_json_text(run) {
            (text, true) => Some(text.into_owned()),
            (_, false) => None,
        };
        let mut state = self.lock();
        let n = state.next_request;
        state.next_request += 1;
        let (envelope_before, body_before) = state.previous.take().unzip();
        let envelope = encode_pieces(
            &mut state.payloads,
            &envelope,
            n,
            envelope_before.as_ref(),
            redact_run,
        );
        let body = encode_pieces(
            &mut state.payloads,
            &body,
            n,
            body_before.as_ref(),
            redact_run,
        );
        state.responses.insert(n, Response::default());
        let line = json!({
            "type": "provider_request",
            "n": n,
            "attempt": request.attempt,
            "provider": request.provider,
            "model": request.envelope.model,
            "url": redact_url(request.url),
            "headers": headers,
            "envelope": envelope.delta,
            "body": body.delta,
            "body_bytes": request.body.len(),
            "body_sha256": body.sha256,
            "redacted": body.redacted,
        });
        state.previous = Some((envelope.chain, body.chain));
        self.write(&mut state, line);
        n
    }

    fn response_status(&self, exchange: u64, status: u16) {
        if let Some(response) = self.lock().responses.get_mut(&exchange) {
            response.status = Some(status);
        }
    }

    fn response_event(&self, exchange: u64, event: Option<&str>, data: &str) {
        if let Some(response) = self.lock().responses.get_mut(&exchange) {
            response
                .events
                .push((event.map(str::to_string), data.to_string()));
        }
    }

    fn response_body(&self, exchange: u64, body: &[u8]) {
        if let Some(response) = self.lock().responses.get_mut(&exchange) {
            response.body = Some(String::from_utf8_lossy(body).into_owned());
        }
    }

    fn response_end(&self, exchange: u64, error: Option<&ProviderError>) {
        let mut state = self.lock();
        let response = state.responses.remove(&exchange).unwrap_or_default();
        let (names, mut datas): (Vec<Option<String>>, Vec<String>) =
            response.events.into_iter().unzip();
        split_keys::redact_split_keys(&mut datas);
        let mut stream = String::new();
        for (name, data) in names.iter().zip(&datas) {
            if let Some(name) = name {
                stream.push_str("event: ");
                stream.push_str(name);
                stream.push('\n');
            }
            for line in data.split('\n') {
                stream.push_str("data: ");
                stream.push_str(line);
                stream.push('\n');
            }
            stream.push('\n');
        }
        let mut line = json!({
            "type": "provider_response",
            "n": exchange,
            "status": response.status,
            "ok": error.is_none(),
            "events": datas.len(),
            "stream": stream,
        });
        if let Some(body) = response.body {
            line["body"] = Value::String(body);
        }
        if let Some(error) = error {
            line["error"] = json!({"kind": error.kind, "message": error.message});
        }
        self.write(&mut state, line);
    }
}

/// The provider-neutral request as compact JSON, the messages last so that one request
/// shares all but its tail with the next.
fn envelope_text(request: &WireRequest<'_>) -> String {
    let envelope = request.envelope;
    let server_tools: Vec<String> = envelope
        .server_tools
        .iter()
        .map(|tool| format!("{tool:?}"))
        .collect();
    json!({
        "provider": request.provider,
        "model": envelope.model,
        "max_tokens": envelope.max_tokens,
        "thinking_budget": envelope.thinking_budget,
        "tools_disabled": envelope.tools_disabled,
        "server_tools": server_tools,
        "system": envelope.system,
        "tools": envelope.tools,
        "messages": envelope.messages,
    })
    .to_string()
}

/// A JSON string field whose name may be a credential: `"name": "value"`.
static JSON_STRING_FIELD: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r#""([A-Za-z0-9_-]+)"(\s*:\s*)"(?:[^"\\]|\\.)*""#).ok());

/// JSON text with credentials redacted in place (fields named like credentials, provider
/// keys inside strings), leaving every other byte as it was. Says whether anything changed.
pub fn redact_json_text(text: &str) -> (Cow<'_, str>, bool) {
    let keys_out = redact_text(text);
    let fields_out = match JSON_STRING_FIELD.as_ref() {
        Some(pattern) if pattern.is_match(&keys_out) => {
            let replaced = pattern.replace_all(&keys_out, |caps: &regex::Captures<'_>| {
                if is_secret_key(&caps[1]) {
                    format!("\"{}\"{}\"{REDACTED}\"", &caps[1], &caps[2])
                } else {
                    caps[0].to_string()
                }
            });
            Cow::Owned(replaced.into_owned())
        }
        _ => keys_out,
    };
    let changed = fields_out.as_ref() != text;
    (fields_out, changed)
}

/// The URL with any `key=` query value (Gemini's URL key) and the userinfo's password
/// redacted.
fn redact_url(url: &str) -> String {
    let url = robota_core::http_client::redact_credentials(url);
    let Some((base, query)) = url.split_once('?') else {
        return redact_text(&url).into_owned();
    };
    let query: Vec<String> = query
        .split('&')
        .map(|pair| match pair.split_once('=') {
            Some((name, _)) if name == "key" || is_secret_key(name) => {
                format!("{name}={REDACTED}")
            }
            _ => pair.to_string(),
        })
        .collect();
    redact_text(&format!("{base}?{}", query.join("&"))).into_owned()
}

/// The highest request number in an existing diagnostics log (0 when none).
fn last_request_number(path: &Path) -> u64 {
    let Ok(file) = File::open(path) else {
        return 0;
    };
    BufReader::new(file)
        .lines()
        .map_while(Result::ok)
        .filter(|line| line.contains("\"provider_request\""))
        .filter_map(|line| serde_json::from_str::<Value>(&line).ok())
        .filter_map(|line| line.get("n").and_then(Value::as_u64))
        .max()
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_text_loses_credentials_and_nothing_else() {
        let text = r#"{"api_key":"abc","x":{"Authorization" : "Bearer q"},"note":"say \"token\": \"t\"","k":"sk-ant-api03-AbCdEf123456","input_tokens":3}"#;
        let (out, changed) = redact_json_text(text);
        assert!(changed);
        assert_eq!(
            out,
            r#"{"api_key":"[REDACTED]","x":{"Authorization" : "[REDACTED]"},"note":"say \"token\": \"t\"","k":"[REDACTED]","input_tokens":3}"#
        );
        let clean = r#"{"messages":[{"role":"user","content":"hi"}]}"#;
        assert_eq!(redact_json_text(clean), (Cow::Borrowed(clean), false));
    }

    #[test]
    fn url_keys_are_redacted() {
        assert_eq!(
            redact_url("http://h/v1beta/models/m:streamGenerateContent?alt=sse&key=AIzaXYZ"),
            "http://h/v1beta/models/m:streamGenerateContent?alt=sse&key=[REDACTED]"
        );
        assert_eq!(redact_url("http://h/v1/messages"), "http://h/v1/messages");
    }
}
