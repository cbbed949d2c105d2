//! The `Block::Opaque` values the Gemini adapter owns, shared by the stream decoder that
//! creates them and the request builder that turns them back into parts:
//!
//! - `{"type":"gemini_thought_signature","thoughtSignature":S}` stands right before the
//!   block whose part carried `S` (a function call, a text or a thought part); the request
//!   builder puts `S` back on the part made from that block, byte for byte. With
//!   `"standalone":true` the API sent `S` on an empty text part, which is echoed as one.
//! - `{"type":"gemini_part","part":{…}}` is a part of a kind robota does not model
//!   (`executableCode`, `inlineData`, …), echoed verbatim.
//!
//! Opaque values of any other `type` belong to other providers and are never sent to Gemini.

use serde_json::{Map, Value, json};

use robota_core::Block;

/// `type` of the opaque block holding a `thoughtSignature`.
pub const THOUGHT_SIGNATURE_TYPE: &str = "gemini_thought_signature";
/// `type` of the opaque block holding a part kind robota does not model.
pub const GEMINI_PART_TYPE: &str = "gemini_part";
/// Google's documented stand-in signature for function calls Gemini did not produce
/// (history from another provider), which skips the signature check of Gemini 3 models.
pub const SKIP_SIGNATURE_VALIDATOR: &str = "skip_thought_signature_validator";

/// The block carrying `signature` for the part that follows it (or, when `standalone`, for
/// an empty text part of its own).
pub(crate) fn signature_marker(signature: &str, standalone: bool) -> Block {
    let mut value = Map::new();
    value.insert("type".into(), json!(THOUGHT_SIGNATURE_TYPE));
    value.insert("thoughtSignature".into(), json!(signature));
    if standalone {
        value.insert("standalone".into(), json!(true));
    }
    Block::Opaque(Value::Object(value))
}

/// A part robota does not model, kept verbatim.
pub(crate) fn raw_part(part: &Value) -> Block {
    Block::Opaque(json!({"type": GEMINI_PART_TYPE, "part": part}))
}

/// What an opaque block means to this adapter.
pub(crate) enum OwnedOpaque<'a> {
    Signature {
        signature: &'a str,
        standalone: bool,
    },
    Part(&'a Value),
    /// Another provider's block (or a malformed one of ours): not sent.
    Foreign,
}

pub(crate) fn classify(value: &Value) -> OwnedOpaque<'_> {
    match value.get("type").and_then(Value::as_str) {
        Some(THOUGHT_SIGNATURE_TYPE) => match value.get("thoughtSignature").and_then(Value::as_str)
        {
            Some(signature) if !signature.is_empty() => OwnedOpaque::Signature {
                signature,
                standalone: value.get("standalone").and_then(Value::as_bool) == Some(true),
            },
            _ => OwnedOpaque::Foreign,
        },
        Some(GEMINI_PART_TYPE) => match value.get("part") {
            Some(part @ Value::Object(_)) => OwnedOpaque::Part(part),
            _ => OwnedOpaque::Foreign,
        },
        _ => OwnedOpaque::Foreign,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markers_round_trip_through_classify() {
        let Block::Opaque(v) = signature_marker("EqUC", false) else {
            panic!("opaque");
        };
        assert!(matches!(
            classify(&v),
            OwnedOpaque::Signature {
                signature: "EqUC",
                standalone: false
            }
        ));
        let Block::Opaque(v) = signature_marker("S", true) else {
            panic!("opaque");
        };
        assert!(matches!(
            classify(&v),
            OwnedOpaque::Signature {
                standalone: true,
                ..
            }
        ));
        let Block::Opaque(v) = raw_part(&json!({"executableCode":{"code":"1"}})) else {
            panic!("opaque");
        };
        assert!(matches!(classify(&v), OwnedOpaque::Part(p) if p["executableCode"]["code"] == "1"));
        let anthropic = json!({"type":"server_tool_use","id":"srvtoolu_1"});
        assert!(matches!(classify(&anthropic), OwnedOpaque::Foreign));
        let empty = json!({"type":THOUGHT_SIGNATURE_TYPE,"thoughtSignature":""});
        assert!(matches!(classify(&empty), OwnedOpaque::Foreign));
    }

    #[test]
    fn markers_survive_the_transcript_serialisation() {
        let block = signature_marker("sig", true);
        let text = serde_json::to_string(&block).unwrap();
        let back: Block = serde_json::from_str(&text).unwrap();
        assert_eq!(back, block);
    }
}
