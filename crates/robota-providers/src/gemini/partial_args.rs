//! Function-call arguments streamed piece by piece (Vertex `streamFunctionCallArguments`,
//! wire.md §4.3, recorded in `vertex_stream_function_call_partial_args.jsonl`): a part
//! `functionCall{name, willContinue:true}` opens a call, parts
//! `functionCall{partialArgs:[{jsonPath, stringValue|numberValue|boolValue|nullValue,
//! willContinue}], willContinue}` set or extend values at JSONPath locations, and an empty
//! `functionCall:{}` (or any piece without `willContinue`) closes it. `PartialCall` builds
//! the arguments object; a path or value it cannot apply is an error naming the piece.

use serde_json::{Map, Number, Value};

/// Deepest path and largest array index accepted (guards against absurd input).
const MAX_PATH_SEGMENTS: usize = 32;
const MAX_ARRAY_INDEX: usize = 100_000;

/// One step of a JSONPath.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Segment {
    Key(String),
    Index(usize),
}

/// Why one `partialArgs` entry cannot be applied.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub(crate) enum PartialArgsError {
    #[error("partial argument without a jsonPath: {0}")]
    NoPath(Value),
    #[error("partial argument without a value: {0}")]
    NoValue(Value),
    #[error("unsupported jsonPath {path:?}: {why}")]
    BadPath { path: String, why: &'static str },
    #[error("jsonPath {0:?} goes through a non-object")]
    NotAnObject(String),
    #[error("jsonPath {0:?} indexes a non-array")]
    NotAnArray(String),
}

/// A function call whose arguments are still arriving.
#[derive(Debug, Clone)]
pub(crate) struct PartialCall {
    pub(crate) id: String,
    pub(crate) name: String,
    /// The `thoughtSignature` of the part that opened the call.
    pub(crate) signature: Option<String>,
    args: Value,
    /// The path whose string value the next `stringValue` for it extends.
    continuing: Option<Vec<Segment>>,
}

impl PartialCall {
    pub(crate) fn new(id: String, name: String, args: Value, signature: Option<String>) -> Self {
        let args = match args {
            Value::Object(_) => args,
            _ => Value::Object(Map::new()),
        };
        PartialCall {
            id,
            name,
            signature,
            args,
            continuing: None,
        }
    }

    /// Applies one `partialArgs` entry.
    pub(crate) fn apply(&mut self, piece: &Value) -> Result<(), PartialArgsError> {
        let path_text = piece
            .get("jsonPath")
            .and_then(Value::as_str)
            .ok_or_else(|| PartialArgsError::NoPath(piece.clone()))?;
        let path = parse_json_path(path_text)?;
        let will_continue = piece.get("willContinue").and_then(Value::as_bool) == Some(true);
        if let Some(text) = piece.get("stringValue").and_then(Value::as_str) {
            let extend = self.continuing.as_ref() == Some(&path);
            let slot = slot_at(&mut self.args, &path, path_text)?;
            match slot {
                Value::String(existing) if extend => existing.push_str(text),
                other => *other = Value::String(text.to_string()),
            }
            self.continuing = will_continue.then_some(path);
            return Ok(());
        }
        let value = if let Some(number) = piece.get("numberValue").and_then(Value::as_f64) {
            number_value(number)
        } else if let Some(flag) = piece.get("boolValue").and_then(Value::as_bool) {
            Value::Bool(flag)
        } else if piece.get("nullValue").is_some() {
            Value::Null
        } else {
            return Err(PartialArgsError::NoValue(piece.clone()));
        };
        *slot_at(&mut self.args, &path, path_text)? = value;
        self.continuing = None;
        Ok(())
    }

    /// The arguments assembled so far.
    pub(crate) fn args(&self) -> &Value {
        &self.args
    }
}

/// Whole numbers stay integers (`3`, not `3.0`), as a model's JSON would have them.
fn number_value(number: f64) -> Value {
    if number.fract() == 0.0 && number.abs() < 9.0e15 {
        Value::Number(Number::from(number as i64))
    } else {
        Number::from_f64(number).map_or(Value::Null, Value::Number)
    }
}

/// The value at `path`, created (objects, arrays, `null` padding) where missing.
fn slot_at<'a>(
    root: &'a mut Value,
    path: &[Segment],
    text: &str,
) -> Result<&'a mut Value, PartialArgsError> {
    let mut node = root;
    for segment in path {
        node = match segment {
            Segment::Key(key) => {
                if node.is_null() {
                    *node = Value::Object(Map::new());
                }
                let Value::Object(map) = node else {
                    return Err(PartialArgsError::NotAnObject(text.to_string()));
                };
                map.entry(key.clone()).or_insert(Value::Null)
            }
            Segment::Index(index) => {
                if node.is_null() {
                    *node = Value::Array(Vec::new());
                }
                let Value::Array(items) = node else {
                    return Err(PartialArgsError::NotAnArray(text.to_string()));
                };
                if items.len() <= *index {
                    items.resize(index + 1, Value::Null);
                }
                &mut items[*index]
            }
        };
    }
    Ok(node)
}

/// Parses `$`, `$.a.b`, `$.list[2]`, `$['odd key']`, `$["k"]` into segments.
fn parse_json_path(text: &str) -> Result<Vec<Segment>, PartialArgsError> {
    let bad = |why: &'static str| PartialArgsError::BadPath {
        path: text.to_string(),
        why,
    };
    let rest = text
        .trim()
        .strip_prefix('$')
        .ok_or_else(|| bad("it must start with $"))?;
    let chars: Vec<char> = rest.chars().collect();
    let mut segments = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        match chars[i] {
            '.' => {
                let start = i + 1;
                let mut end = start;
                while end < chars.len() && chars[end] != '.' && chars[end] != '[' {
                    end += 1;
                }
                if end == start {
                    return Err(bad("empty name"));
                }
                segments.push(Segment::Key(chars[start..end].iter().collect()));
                i = end;
            }
            '[' => {
                let (segment, next) =
                    bracket_segment(&chars, i + 1).ok_or_else(|| bad("bad brackets"))?;
                segments.push(segment);
                i = next;
            }
            _ => return Err(bad("expected . or [")),
        }
        if segments.len() > MAX_PATH_SEGMENTS {
            return Err(bad("too deep"));
        }
    }
    if segments.is_empty() {
        return Err(bad("it names no argument"));
    }
    Ok(segments)
}

/// A `[…]` segment starting after the `[`; returns it and the index after the `]`.
fn bracket_segment(chars: &[char], start: usize) -> Option<(Segment, usize)> {
    let quote = *chars.get(start)?;
    if quote == '\'' || quote == '"' {
        let mut key = String::new();
        let mut i = start + 1;
        loop {
            let c = *chars.get(i)?;
            if c == '\\' {
                key.push(*chars.get(i + 1)?);
                i += 2;
            } else if c == quote {
                break;
            } else {
                key.push(c);
                i += 1;
            }
        }
        (chars.get(i + 1) == Some(&']')).then_some((Segment::Key(key), i + 2))
    } else {
        let mut end = start;
        while end < chars.len() && chars[end].is_ascii_digit() {
            end += 1;
        }
        let index: usize = chars[start..end].iter().collect::<String>().parse().ok()?;
        (chars.get(end) == Some(&']') && index <= MAX_ARRAY_INDEX)
            .then_some((Segment::Index(index), end + 1))
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn call() -> PartialCall {
        PartialCall::new("call_1".into(), "f".into(), Value::Null, None)
    }

    #[test]
    fn string_pieces_extend_only_while_they_continue() {
        let mut c = call();
        c.apply(&json!({"jsonPath":"$.location","stringValue":"San ","willContinue":true}))
            .unwrap();
        c.apply(&json!({"jsonPath":"$.location","stringValue":"Francisco","willContinue":true}))
            .unwrap();
        c.apply(&json!({"jsonPath":"$.location","stringValue":""}))
            .unwrap();
        assert_eq!(c.args(), &json!({"location":"San Francisco"}));
        c.apply(&json!({"jsonPath":"$.location","stringValue":"Boston"}))
            .unwrap();
        assert_eq!(c.args(), &json!({"location":"Boston"}));
    }

    #[test]
    fn nested_paths_numbers_bools_and_nulls() {
        let mut c = call();
        for piece in [
            json!({"jsonPath":"$.opts.count","numberValue":3.0}),
            json!({"jsonPath":"$.opts.ratio","numberValue":0.5}),
            json!({"jsonPath":"$.opts['dry run']","boolValue":true}),
            json!({"jsonPath":"$.files[1]","stringValue":"b.txt"}),
            json!({"jsonPath":"$.files[0]","stringValue":"a.txt"}),
            json!({"jsonPath":"$[\"x\"]","nullValue":"NULL_VALUE"}),
        ] {
            c.apply(&piece).unwrap();
        }
        assert_eq!(
            c.args(),
            &json!({"opts":{"count":3,"ratio":0.5,"dry run":true},"files":["a.txt","b.txt"],"x":null})
        );
    }

    #[test]
    fn bad_pieces_are_errors_that_say_why() {
        let mut c = call();
        for (piece, why) in [
            (json!({"stringValue":"x"}), "without a jsonPath"),
            (
                json!({"jsonPath":"location","stringValue":"x"}),
                "must start with $",
            ),
            (
                json!({"jsonPath":"$","stringValue":"x"}),
                "names no argument",
            ),
            (
                json!({"jsonPath":"$.a[x]","stringValue":"x"}),
                "bad brackets",
            ),
            (json!({"jsonPath":"$.a"}), "without a value"),
        ] {
            let err = c.apply(&piece).unwrap_err().to_string();
            assert!(err.contains(why), "{err}");
        }
        c.apply(&json!({"jsonPath":"$.a","stringValue":"s"}))
            .unwrap();
        let err = c
            .apply(&json!({"jsonPath":"$.a.b","stringValue":"x"}))
            .unwrap_err()
            .to_string();
        assert!(err.contains("non-object"), "{err}");
        let err = c
            .apply(&json!({"jsonPath":"$.a[0]","stringValue":"x"}))
            .unwrap_err()
            .to_string();
        assert!(err.contains("non-array"), "{err}");
        let deep = format!("${}", ".k".repeat(40));
        assert!(c.apply(&json!({"jsonPath":deep,"boolValue":true})).is_err());
        assert!(
            c.apply(&json!({"jsonPath":"$.a[99999999]","boolValue":true}))
                .is_err()
        );
    }
}
