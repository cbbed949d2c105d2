//! Reading a diagnostics log back: rebuilding each request exactly as it was sent (its
//! body bytes and its provider-neutral envelope, from the pieces of the requests before
//! it and the payload files), and validating a log — every request answered, every tool
//! request given a result, every payload reference present and matching its hash, every
//! request rebuildable to the bytes whose hash it recorded.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::fs;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::diagnostics_path;
use super::payloads::{
    PayloadProblem, PayloadReader, Piece, decode_pieces, payload_dir, sha256_hex,
};

/// Why a session's diagnostics log cannot be read.
#[derive(Debug, thiserror::Error)]
#[error(
    "cannot read {}: {source} (diagnostics are recorded only with --debug-log or settings \"diagnostics\": true)",
    path.display()
)]
pub struct DiagnosticsReadError {
    /// The diagnostics log.
    pub path: PathBuf,
    /// The operating system's error.
    #[source]
    pub source: std::io::Error,
}

/// Why a request cannot be rebuilt from the log.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RebuildError {
    /// The log has no request `n`.
    #[error("the diagnostics log has no request {0}")]
    NoSuchRequest(u64),
    /// Its `body` or `envelope` (`part`) builds on a request not in the log, or its delta
    /// is malformed.
    #[error("its {part} refers to pieces of a request not in the log")]
    UnknownBase {
        /// Which part of the request: `body` or `envelope`.
        part: &'static str,
    },
    /// A payload it refers to is missing or damaged.
    #[error(transparent)]
    Payload(#[from] PayloadProblem),
    /// The rebuilt body's hash is not the one the log recorded.
    #[error("its rebuilt body does not match the recorded hash")]
    HashMismatch,
}

/// A diagnostics log read into memory.
#[derive(Debug)]
pub struct DiagnosticsLog {
    /// Each parsed line with its 1-based line number.
    lines: Vec<(usize, Value)>,
    /// Lines that were not JSON, by number.
    unreadable: Vec<usize>,
    payloads: PayloadReader,
}

/// One request rebuilt from the log.
#[derive(Debug, Clone, PartialEq)]
pub struct RebuiltRequest {
    /// The request's number in the log, counting from 1.
    pub n: u64,
    /// The body as sent (credentials redacted), or why it cannot be rebuilt.
    pub body: Result<String, RebuildError>,
    /// The provider-neutral envelope as JSON text, or why it cannot be rebuilt.
    pub envelope: Result<String, RebuildError>,
    /// Credentials were redacted out of the body: it differs from the bytes sent there.
    pub redacted: bool,
}

impl DiagnosticsLog {
    /// Reads the diagnostics log of the session log at `session_log`.
    pub fn load(session_log: &Path) -> Result<DiagnosticsLog, DiagnosticsReadError> {
        let path = diagnostics_path(session_log);
        let text = match fs::read_to_string(&path) {
            Ok(text) => text,
            Err(source) => return Err(DiagnosticsReadError { path, source }),
        };
        let mut lines = Vec::new();
        let mut unreadable = Vec::new();
        for (i, line) in text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            match serde_json::from_str::<Value>(line) {
                Ok(value) => lines.push((i + 1, value)),
                Err(_) => unreadable.push(i + 1),
            }
        }
        Ok(DiagnosticsLog {
            lines,
            unreadable,
            payloads: PayloadReader::new(payload_dir(session_log)),
        })
    }

    fn of_type<'a>(&'a self, kind: &'a str) -> impl Iterator<Item = &'a (usize, Value)> + 'a {
        self.lines
            .iter()
            .filter(move |(_, line)| line.get("type").and_then(Value::as_str) == Some(kind))
    }

    /// Every request in order, rebuilt.
    pub fn requests(&self) -> Vec<RebuiltRequest> {
        let mut envelopes: HashMap<u64, Vec<Piece>> = HashMap::new();
        let mut bodies: HashMap<u64, Vec<Piece>> = HashMap::new();
        let mut out = Vec::new();
        for (_, line) in self.of_type("provider_request") {
            let Some(n) = line.get("n").and_then(Value::as_u64) else {
                continue;
            };
            let envelope_pieces = rebuild_pieces(line, "envelope", &envelopes);
            let body_pieces = rebuild_pieces(line, "body", &bodies);
            let join = |found: &Option<Vec<Piece>>, part: &'static str| match found {
                None => Err(RebuildError::UnknownBase { part }),
                Some(found) => Ok(self.payloads.join(found)?),
            };
            let mut body = join(&body_pieces, "body");
            if let (Ok(text), Some(expected)) =
                (&body, line.get("body_sha256").and_then(Value::as_str))
                && sha256_hex(text.as_bytes()) != expected
            {
                body = Err(RebuildError::HashMismatch);
            }
            let envelope = join(&envelope_pieces, "envelope");
            if let Some(pieces) = envelope_pieces {
                envelopes.insert(n, pieces);
            }
            if let Some(pieces) = body_pieces {
                bodies.insert(n, pieces);
            }
            let redacted = line.get("redacted").and_then(Value::as_bool) == Some(true);
            out.push(RebuiltRequest {
                n,
                body,
                envelope,
                redacted,
            });
        }
        out
    }

    /// Request `n` rebuilt, or why not.
    pub fn request(&self, n: u64) -> Result<RebuiltRequest, RebuildError> {
        self.requests()
            .into_iter()
            .find(|r| r.n == n)
            .ok_or(RebuildError::NoSuchRequest(n))
    }

    /// What the log lacks or gets wrong; empty when it is whole.
    pub fn validate(&self) -> Vec<String> {
        let mut problems: Vec<String> = self
            .unreadable
            .iter()
            .map(|n| format!("line {n} is not JSON"))
            .collect();

        let mut requests = BTreeMap::new();
        for (line_no, line) in self.of_type("provider_request") {
            if let Some(n) = line.get("n").and_then(Value::as_u64) {
                requests.insert(n, *line_no);
            }
        }
        let mut responses = BTreeMap::new();
        for (line_no, line) in self.of_type("provider_response") {
            if let Some(n) = line.get("n").and_then(Value::as_u64) {
                responses.insert(n, *line_no);
            }
        }
        for (n, line_no) in &requests {
            if !responses.contains_key(n) {
                problems.push(format!(
                    "provider request {n} (line {line_no}) has no response"
                ));
            }
        }
        for (n, line_no) in &responses {
            if !requests.contains_key(n) {
                problems.push(format!(
                    "provider response {n} (line {line_no}) has no request"
                ));
            }
        }

        // Tool-use ids may repeat across rounds: results pair with the oldest open request.
        let mut open: Vec<(String, String, usize)> = Vec::new();
        let mut orphans = Vec::new();
        for (line_no, line) in &self.lines {
            let id = line
                .get("tool_use_id")
                .and_then(Value::as_str)
                .unwrap_or("");
            let tool = line.get("tool").and_then(Value::as_str).unwrap_or("");
            match line.get("type").and_then(Value::as_str) {
                Some("tool_execution_request") => {
                    open.push((id.to_string(), tool.to_string(), *line_no));
                }
                Some("tool_execution_result") => {
                    match open.iter().position(|(open_id, _, _)| open_id == id) {
                        Some(i) => {
                            open.remove(i);
                        }
                        None => orphans.push((id.to_string(), *line_no)),
                    }
                }
                _ => {}
            }
        }
        for (id, tool, line_no) in open {
            problems.push(format!(
                "tool request {id} ({tool}, line {line_no}) has no result"
            ));
        }
        for (id, line_no) in orphans {
            problems.push(format!("tool result {id} (line {line_no}) has no request"));
        }

        let mut seen = HashMap::new();
        for (line_no, line) in &self.lines {
            let mut references = Vec::new();
            PayloadReader::references(line, &mut references);
            for hash in references {
                let result = seen
                    .entry(hash.clone())
                    .or_insert_with(|| self.payloads.load(&hash).err())
                    .clone();
                if let Some(problem) = result {
                    problems.push(format!("line {line_no}: {problem}"));
                }
            }
        }
        let mut pending: VecDeque<_> = self.requests().into();
        while let Some(request) = pending.pop_front() {
            for (what, result) in [("body", &request.body), ("envelope", &request.envelope)] {
                if let Err(why) = result {
                    // A missing payload is reported above, once.
                    if !matches!(why, RebuildError::Payload(PayloadProblem::Missing(_))) {
                        problems.push(format!(
                            "provider request {} cannot be rebuilt ({what}): {why}",
                            request.n
                        ));
                    }
                }
            }
        }
        problems
    }

    /// Counts of each line type, for a summary.
    pub fn counts(&self) -> BTreeMap<String, usize> {
        let mut counts = BTreeMap::new();
        for (_, line) in &self.lines {
            let kind = line.get("type").and_then(Value::as_str).unwrap_or("?");
            *counts.entry(kind.to_string()).or_insert(0) += 1;
        }
        counts
    }
}

/// The pieces of a request line's `field` (`body`, `envelope`), given those of the
/// requests before it; `None` when its base is not among them or the delta is malformed.
fn rebuild_pieces(
    line: &Value,
    field: &str,
    earlier: &HashMap<u64, Vec<Piece>>,
) -> Option<Vec<Piece>> {
    let delta = line.get(field)?;
    let base = match delta.get("base").and_then(Value::as_u64) {
        Some(base) => Some(earlier.get(&base)?.as_slice()),
        None => None,
    };
    decode_pieces(delta, base)
}
