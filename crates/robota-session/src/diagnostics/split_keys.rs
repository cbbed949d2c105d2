//! Keys a model streams split across several events (`"sk-ant-"` in one delta, the rest
//! in the next). Each diagnostics line is redacted as it is written, which finds a key
//! only when it is whole in one string; here the text fields of a response's events
//! (`text`, `partial_json`, `thinking`, `delta`, `content`, `arguments`, at any depth) are
//! read as one text, the keys found in it, and every piece of a key replaced in its event:
//! the piece where the key starts by `[REDACTED]`, the later pieces by nothing.

use std::ops::Range;

use serde_json::Value;

use crate::redact::{REDACTED, key_spans};

/// Fields whose string values are streamed text.
const TEXT_FIELDS: &[&str] = &[
    "text",
    "partial_json",
    "thinking",
    "delta",
    "content",
    "arguments",
];

/// One streamed string: its event, where it is in the event's JSON, and where it lies in
/// the joined text.
struct Leaf {
    event: usize,
    pointer: String,
    span: Range<usize>,
}

/// Redacts keys that span events; `datas` are the events' `data` texts, rewritten in
/// place (as compact JSON) only where a piece was replaced.
pub(super) fn redact_split_keys(datas: &mut [String]) {
    let mut parsed: Vec<Option<Value>> =
        datas.iter().map(|d| serde_json::from_str(d).ok()).collect();
    let mut text = String::new();
    let mut leaves = Vec::new();
    for (event, value) in parsed.iter().enumerate() {
        if let Some(value) = value {
            collect(value, String::new(), &mut |pointer, s| {
                let start = text.len();
                text.push_str(s);
                leaves.push(Leaf {
                    event,
                    pointer,
                    span: start..text.len(),
                });
            });
        }
    }
    let spans = key_spans(&text);
    if spans.is_empty() {
        return;
    }
    let mut changed = vec![false; datas.len()];
    // Last key first and, within a string, last piece first: earlier offsets stay valid.
    for key in spans.iter().rev() {
        for leaf in leaves.iter().rev() {
            let from = leaf.span.start.max(key.start);
            let to = leaf.span.end.min(key.end);
            if from >= to {
                continue;
            }
            let Some(Value::String(s)) = parsed[leaf.event]
                .as_mut()
                .and_then(|v| v.pointer_mut(&leaf.pointer))
            else {
                continue;
            };
            let local = from - leaf.span.start..to - leaf.span.start;
            if s.is_char_boundary(local.start) && s.is_char_boundary(local.end) {
                let with = if from == key.start { REDACTED } else { "" };
                s.replace_range(local, with);
                changed[leaf.event] = true;
            }
        }
    }
    for (i, data) in datas.iter_mut().enumerate() {
        if changed[i]
            && let Some(Ok(json)) = parsed[i].as_ref().map(serde_json::to_string)
        {
            *data = json;
        }
    }
}

/// Calls `found` with the JSON pointer and value of every text-field string in `value`.
fn collect(value: &Value, at: String, found: &mut dyn FnMut(String, &str)) {
    match value {
        Value::Object(map) => {
            for (key, child) in map {
                let pointer = format!("{at}/{}", key.replace('~', "~0").replace('/', "~1"));
                match child {
                    Value::String(s) if TEXT_FIELDS.contains(&key.as_str()) => found(pointer, s),
                    _ => collect(child, pointer, found),
                }
            }
        }
        Value::Array(items) => {
            for (i, child) in items.iter().enumerate() {
                collect(child, format!("{at}/{i}"), found);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn delta(text: &str) -> String {
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": text}})
            .to_string()
    }

    #[test]
    fn a_key_split_over_three_deltas_leaves_no_piece() {
        let mut datas = vec![
            delta("the key is sk-ant-"),
            delta("api03-ABCD"),
            json!({"type": "ping"}).to_string(),
            delta("EFGH1234 and more"),
        ];
        redact_split_keys(&mut datas);
        let all = datas.join("\n");
        for piece in ["sk-ant-", "api03", "ABCD", "EFGH1234"] {
            assert!(!all.contains(piece), "{piece} survived: {all}");
        }
        assert!(datas[0].contains("the key is [REDACTED]"), "{}", datas[0]);
        assert!(datas[3].contains("\" and more\""), "{}", datas[3]);
        assert_eq!(datas[2], json!({"type": "ping"}).to_string());
    }

    #[test]
    fn other_providers_fields_and_clean_streams() {
        // OpenAI Responses `delta` strings and Gemini `parts[].text`.
        let mut datas = vec![
            json!({"type": "response.output_text.delta", "delta": "key: sk-proj-0123456789"})
                .to_string(),
            json!({"candidates": [{"content": {"parts": [{"text": "abcdefghijklmnop rest"}]}}]})
                .to_string(),
        ];
        redact_split_keys(&mut datas);
        assert!(!datas.join("").contains("0123456789"), "{datas:?}");
        assert!(!datas[1].contains("abcdefghijklmnop"), "{datas:?}");
        assert!(datas[1].contains(" rest"), "{datas:?}");
        let clean = vec![delta("sk-learn notes"), delta("nothing secret")];
        let mut same = clean.clone();
        redact_split_keys(&mut same);
        assert_eq!(same, clean);
    }
}
