//! Content-addressed payload files of a diagnostics log and the two ways lines refer to
//! them. Any string over [`INLINE_LIMIT`] bytes is written once to
//! `<session>.payloads/<sha256>.json` (the file holds the JSON value; its name is the
//! SHA-256 of those bytes) and replaced by `{"$payload": "<sha256>", "bytes": n}`.
//! Request bodies and envelopes, which repeat the whole conversation each round, are cut
//! into [`Piece`]s at the elements of their top-level arrays (messages, tools, contents…)
//! and stored as a delta against the previous request's pieces, so a log grows with what
//! is new in each request rather than with the conversation's length.

use std::collections::HashSet;
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};

/// Strings longer than this many bytes go to a payload file.
pub const INLINE_LIMIT: usize = 1024;

/// The key that marks a payload reference.
pub const REF_KEY: &str = "$payload";

/// The payload directory of the diagnostics log of `session_log` (`<dir>/<id>.jsonl`).
pub fn payload_dir(session_log: &Path) -> PathBuf {
    session_log.with_extension("payloads")
}

/// Lowercase hex SHA-256 of `bytes`.
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write as _;
    let mut out = String::with_capacity(bytes.len() * 2);
    for byte in bytes {
        let _ = write!(out, "{byte:02x}");
    }
    out
}

/// Writes payload files, each once.
#[derive(Debug)]
pub struct PayloadWriter {
    dir: PathBuf,
    written: HashSet<String>,
}

impl PayloadWriter {
    /// A writer of payload files in `dir`.
    pub fn new(dir: PathBuf) -> Self {
        PayloadWriter {
            dir,
            written: HashSet::new(),
        }
    }

    /// Stores `value` and returns its reference. A file already there (written by an
    /// earlier run of this session) is kept: its name is its content.
    pub fn store(&mut self, value: &Value) -> Value {
        let bytes = serde_json::to_vec(value).unwrap_or_default();
        let hash = sha256_hex(&bytes);
        if !self.written.contains(&hash) {
            let path = self.dir.join(format!("{hash}.json"));
            if path.exists() || write_new(&self.dir, &path, &bytes).is_ok() {
                self.written.insert(hash.clone());
            }
        }
        json!({REF_KEY: hash, "bytes": bytes.len()})
    }

    /// Replaces every long string inside `value` with a reference.
    pub fn externalize(&mut self, value: &mut Value) {
        match value {
            Value::String(text) if text.len() > INLINE_LIMIT => {
                let stored = Value::String(std::mem::take(text));
                *value = self.store(&stored);
            }
            Value::Array(items) => items.iter_mut().for_each(|v| self.externalize(v)),
            Value::Object(map) => map.values_mut().for_each(|v| self.externalize(v)),
            _ => {}
        }
    }

    /// `text` as a piece: inline when short, else a reference.
    fn piece(&mut self, text: &str) -> Piece {
        if text.len() > INLINE_LIMIT {
            let reference = self.store(&Value::String(text.to_string()));
            Piece::Stored(reference[REF_KEY].as_str().unwrap_or_default().to_string())
        } else {
            Piece::Inline(text.to_string())
        }
    }
}

/// Writes a payload file readable by its owner only (it holds conversation text), in a
/// directory likewise private.
fn write_new(dir: &Path, path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut builder = fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(dir)?;
    // Written under a temporary name and renamed: a reader never sees half a payload.
    let tmp = dir.join(format!(".{}.tmp", std::process::id()));
    let mut options = fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let mut file = options.open(&tmp)?;
    file.write_all(bytes)?;
    file.flush()?;
    fs::rename(&tmp, path)
}

/// A run of bytes of a request: inline text, or a payload holding it (by hash).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Piece {
    /// Text recorded in the line itself.
    Inline(String),
    /// Text kept in a payload file, named by its SHA-256 (hex).
    Stored(String),
}

impl Piece {
    fn to_json(&self) -> Value {
        match self {
            Piece::Inline(text) => Value::String(text.clone()),
            Piece::Stored(hash) => json!({ REF_KEY: hash }),
        }
    }

    fn from_json(value: &Value) -> Option<Piece> {
        match value {
            Value::String(text) => Some(Piece::Inline(text.clone())),
            Value::Object(map) => Some(Piece::Stored(map.get(REF_KEY)?.as_str()?.to_string())),
            _ => None,
        }
    }
}

/// The pieces of one recorded request text, kept for the next request to be encoded
/// against (the raw text, so that unchanged runs are recognised without hashing or
/// redacting them again).
#[derive(Debug, Clone, Default)]
pub struct PieceChain {
    /// The request number these pieces belong to.
    pub n: u64,
    raw: String,
    ranges: Vec<std::ops::Range<usize>>,
    pieces: Vec<Piece>,
    /// Each run as recorded, when redaction changed it.
    redacted: Vec<Option<String>>,
}

impl PieceChain {
    /// The raw text of run `i`.
    fn raw_run(&self, i: usize) -> Option<&str> {
        self.raw.get(self.ranges.get(i)?.clone())
    }
}

/// A request text encoded against the previous one.
#[derive(Debug)]
pub struct Encoded {
    /// `{"base", "keep": how many of the base's pieces come first, "append": the rest}`.
    pub delta: Value,
    /// The pieces of the recorded text, for encoding the next request against it.
    pub chain: PieceChain,
    /// Credentials were redacted: the recorded text differs from the raw one.
    pub redacted: bool,
    /// SHA-256 of the recorded (redacted) text.
    pub sha256: String,
}

/// Encodes the raw request `text` (request `n`) as pieces — each run redacted with
/// `redact` (runs never split a JSON string, so credentials are found whole) and stored
/// when long — as a delta against `previous`: the runs it shares with the start of the
/// previous request are kept by count, those it shares with its end (the tool list after
/// the messages) by `{"$base": [from, to]}`, and only the rest is written out. Shared runs
/// are recognised by their raw text, without hashing or redacting them again.
pub fn encode_pieces(
    payloads: &mut PayloadWriter,
    text: &str,
    n: u64,
    previous: Option<&PieceChain>,
    redact: impl Fn(&str) -> Option<String>,
) -> Encoded {
    let parts = split_json_text(text);
    let before_len = previous.map_or(0, |b| b.pieces.len());
    let prefix = previous.map_or(0, |before| {
        (0..parts.len().min(before_len))
            .take_while(|&i| before.raw_run(i) == Some(parts[i]))
            .count()
    });
    let suffix = previous.map_or(0, |before| {
        let room = parts.len().min(before_len) - prefix;
        (1..=room)
            .take_while(|&k| before.raw_run(before_len - k) == Some(parts[parts.len() - k]))
            .count()
    });
    let mut chain = PieceChain {
        n,
        raw: text.to_string(),
        ranges: Vec::with_capacity(parts.len()),
        pieces: Vec::with_capacity(parts.len()),
        redacted: Vec::with_capacity(parts.len()),
    };
    let mut hasher = Sha256::new();
    let mut offset = 0;
    for (i, part) in parts.iter().enumerate() {
        let range = offset..offset + part.len();
        offset = range.end;
        let from_before = match previous {
            Some(_) if i < prefix => Some(i),
            Some(_) if i >= parts.len() - suffix => Some(before_len - (parts.len() - i)),
            _ => None,
        };
        let (piece, redacted) = match (previous, from_before) {
            (Some(before), Some(j)) => (before.pieces[j].clone(), before.redacted[j].clone()),
            _ => {
                let redacted = redact(part);
                let piece = payloads.piece(redacted.as_deref().unwrap_or(part));
                (piece, redacted)
            }
        };
        hasher.update(redacted.as_deref().unwrap_or(part).as_bytes());
        chain.ranges.push(range);
        chain.pieces.push(piece);
        chain.redacted.push(redacted);
    }
    let mut append: Vec<Value> = chain.pieces[prefix..parts.len() - suffix]
        .iter()
        .map(Piece::to_json)
        .collect();
    if suffix > 0 {
        append.push(json!({ BASE_KEY: [before_len - suffix, before_len] }));
    }
    let mut map = Map::new();
    map.insert(
        "base".into(),
        previous.map_or(Value::Null, |before| Value::from(before.n)),
    );
    map.insert("keep".into(), Value::from(prefix));
    map.insert("append".into(), Value::Array(append));
    let redacted = chain.redacted.iter().any(Option::is_some);
    let sha256 = hex(&hasher.finalize());
    Encoded {
        delta: Value::Object(map),
        chain,
        redacted,
        sha256,
    }
}

/// The key of a run of the base request's pieces inside a delta's `append`.
const BASE_KEY: &str = "$base";

/// The pieces a delta stands for, given the pieces of its base; `None` when the delta is
/// malformed or asks for more of the base than there is.
pub fn decode_pieces(delta: &Value, base: Option<&[Piece]>) -> Option<Vec<Piece>> {
    let keep = delta.get("keep")?.as_u64()? as usize;
    let mut pieces = match (delta.get("base").and_then(Value::as_u64), base) {
        (Some(_), Some(before)) if keep <= before.len() => before[..keep].to_vec(),
        (None, _) if keep == 0 => Vec::new(),
        _ => return None,
    };
    for value in delta.get("append")?.as_array()? {
        if let Some(run) = value.get(BASE_KEY) {
            let from = run.get(0)?.as_u64()? as usize;
            let to = run.get(1)?.as_u64()? as usize;
            pieces.extend_from_slice(base?.get(from..to)?);
        } else {
            pieces.push(Piece::from_json(value)?);
        }
    }
    Some(pieces)
}

/// Cuts compact JSON text before each element of the arrays that are fields of the
/// top-level object, and before their closing brackets: each message, tool or content
/// entry becomes its own run (with the comma before it), so runs repeat unchanged from
/// one request to the next. Text that is not such JSON comes back whole. Cuts fall only
/// on ASCII bytes, so every run is valid UTF-8.
pub fn split_json_text(text: &str) -> Vec<&str> {
    let bytes = text.as_bytes();
    let mut cuts = Vec::new();
    let mut stack: Vec<u8> = Vec::new();
    let (mut in_string, mut escaped) = (false, false);
    for (i, &b) in bytes.iter().enumerate() {
        if in_string {
            match b {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        let in_field_array = stack.len() == 2 && stack[0] == b'{' && stack[1] == b'[';
        match b {
            b'"' => in_string = true,
            b'{' | b'[' => {
                stack.push(b);
                if stack.len() == 2 && stack[0] == b'{' && b == b'[' {
                    cuts.push(i + 1);
                }
            }
            b'}' | b']' => {
                if in_field_array && b == b']' {
                    cuts.push(i);
                }
                stack.pop();
            }
            b',' if in_field_array => cuts.push(i),
            _ => {}
        }
    }
    let mut parts = Vec::with_capacity(cuts.len() + 1);
    let mut start = 0;
    for cut in cuts {
        if cut > start {
            parts.push(&text[start..cut]);
            start = cut;
        }
    }
    if start < text.len() || parts.is_empty() {
        parts.push(&text[start..]);
    }
    parts
}

/// Whether `value` is a payload reference.
pub fn as_reference(value: &Value) -> Option<&str> {
    let map = value.as_object()?;
    if map.len() <= 2 && map.keys().all(|k| k == REF_KEY || k == "bytes") {
        map.get(REF_KEY)?.as_str()
    } else {
        None
    }
}

/// Reads payloads back, checking each file's name against its content.
#[derive(Debug)]
pub struct PayloadReader {
    dir: PathBuf,
}

/// Why a payload could not be read; each names the payload's hash.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PayloadProblem {
    /// There is no payload file of this hash (or the hash is not 64 hex digits).
    #[error("payload {0} is missing")]
    Missing(String),
    /// The file's content does not match its hash, or is not JSON.
    #[error("payload {0} does not match its hash or is not JSON")]
    Corrupt(String),
}

impl PayloadReader {
    /// A reader of the payload files in `dir`.
    pub fn new(dir: PathBuf) -> Self {
        PayloadReader { dir }
    }

    /// The JSON payload of `hash`, checked against the hash.
    pub fn load(&self, hash: &str) -> Result<Value, PayloadProblem> {
        let valid_name = hash.len() == 64 && hash.bytes().all(|b| b.is_ascii_hexdigit());
        let path = self.dir.join(format!("{hash}.json"));
        let bytes = match fs::read(&path) {
            Ok(bytes) if valid_name => bytes,
            _ => return Err(PayloadProblem::Missing(hash.to_string())),
        };
        if sha256_hex(&bytes) != hash {
            return Err(PayloadProblem::Corrupt(hash.to_string()));
        }
        serde_json::from_slice(&bytes).map_err(|_| PayloadProblem::Corrupt(hash.to_string()))
    }

    /// `value` with every reference replaced by what it refers to.
    pub fn resolve(&self, value: &Value) -> Result<Value, PayloadProblem> {
        if let Some(hash) = as_reference(value) {
            return self.load(hash);
        }
        Ok(match value {
            Value::Array(items) => Value::Array(
                items
                    .iter()
                    .map(|v| self.resolve(v))
                    .collect::<Result<_, _>>()?,
            ),
            Value::Object(map) => Value::Object(
                map.iter()
                    .map(|(k, v)| Ok((k.clone(), self.resolve(v)?)))
                    .collect::<Result<_, PayloadProblem>>()?,
            ),
            other => other.clone(),
        })
    }

    /// The text `pieces` stand for.
    pub fn join(&self, pieces: &[Piece]) -> Result<String, PayloadProblem> {
        let mut out = String::new();
        for piece in pieces {
            match piece {
                Piece::Inline(text) => out.push_str(text),
                Piece::Stored(hash) => match self.load(hash)? {
                    Value::String(text) => out.push_str(&text),
                    _ => return Err(PayloadProblem::Corrupt(hash.clone())),
                },
            }
        }
        Ok(out)
    }

    /// Every reference in `value` and in the stored pieces it names.
    pub fn references(value: &Value, out: &mut Vec<String>) {
        if let Some(hash) = as_reference(value) {
            out.push(hash.to_string());
            return;
        }
        match value {
            Value::Array(items) => items.iter().for_each(|v| Self::references(v, out)),
            Value::Object(map) => map.values().for_each(|v| Self::references(v, out)),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_is_cut_at_the_elements_of_top_level_arrays_and_rejoins_exactly() {
        let text = r#"{"model":"m","messages":[{"role":"user","content":"a,[b]"},{"role":"assistant","content":[{"x":1},{"y":2}]}],"tools":[],"n":[1,2]}"#;
        let parts = split_json_text(text);
        assert_eq!(parts.concat(), text);
        assert_eq!(
            parts,
            vec![
                r#"{"model":"m","messages":["#,
                r#"{"role":"user","content":"a,[b]"}"#,
                r#",{"role":"assistant","content":[{"x":1},{"y":2}]}"#,
                r#"],"tools":["#,
                r#"],"n":["#,
                "1",
                ",2",
                "]}",
            ]
        );
        assert_eq!(split_json_text("not json"), vec!["not json"]);
        assert_eq!(split_json_text(""), vec![""]);
    }

    #[test]
    fn a_growing_request_stores_only_its_new_pieces() {
        let dir = tempfile::tempdir().unwrap();
        let mut payloads = PayloadWriter::new(dir.path().to_path_buf());
        let big = "x".repeat(INLINE_LIMIT + 1);
        let first = format!(r#"{{"messages":[{{"c":"{big}1"}}],"tools":[{{"d":"{big}"}}]}}"#);
        let second = format!(
            r#"{{"messages":[{{"c":"{big}1"}},{{"c":"{big}2"}}],"tools":[{{"d":"{big}"}}]}}"#
        );
        let no_secrets = |_: &str| None;
        let one = encode_pieces(&mut payloads, &first, 1, None, no_secrets);
        let two = encode_pieces(&mut payloads, &second, 2, Some(&one.chain), no_secrets);
        assert_eq!(two.delta["base"], 1);
        assert_eq!(two.delta["keep"], 2);
        // The new message, then the tool list and the end from request 1.
        assert_eq!(two.delta["append"][1], json!({"$base": [2, 5]}));
        assert!(!two.redacted);
        assert_eq!(two.sha256, sha256_hex(second.as_bytes()));
        let reader = PayloadReader::new(dir.path().to_path_buf());
        let rebuilt = decode_pieces(&two.delta, Some(&one.chain.pieces)).unwrap();
        assert_eq!(rebuilt, two.chain.pieces);
        assert_eq!(reader.join(&rebuilt).unwrap(), second);
        // Three big runs in all: message 1, message 2, the tool.
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 3);
    }

    #[test]
    fn references_resolve_and_a_changed_file_is_caught() {
        let dir = tempfile::tempdir().unwrap();
        let mut payloads = PayloadWriter::new(dir.path().to_path_buf());
        let mut value = json!({"short": "s", "long": "y".repeat(INLINE_LIMIT + 5)});
        let original = value.clone();
        payloads.externalize(&mut value);
        let hash = as_reference(&value["long"]).unwrap().to_string();
        let reader = PayloadReader::new(dir.path().to_path_buf());
        assert_eq!(reader.resolve(&value).unwrap(), original);
        fs::write(dir.path().join(format!("{hash}.json")), "\"z\"").unwrap();
        assert_eq!(
            reader.resolve(&value),
            Err(PayloadProblem::Corrupt(hash.clone()))
        );
        fs::remove_file(dir.path().join(format!("{hash}.json"))).unwrap();
        assert_eq!(reader.resolve(&value), Err(PayloadProblem::Missing(hash)));
    }
}
