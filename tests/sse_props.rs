//! Property tests of the SSE decoder over the whole recorded corpus (wire.md §7.1–7.2):
//! every `.sse` fixture, and every `.jsonl` fixture framed the way its provider frames it,
//! decodes to the same events however the bytes are split into reads — at random points,
//! one byte at a time, at every single offset for the small files — and with its line ends
//! rewritten to CRLF or CR.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failed unwrap is a failed test

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use proptest::prelude::*;
use robota::providers::sse::{SseDecoder, SseEvent};

struct Fixture {
    name: String,
    bytes: Vec<u8>,
    /// For framed jsonl: the events the framing must produce.
    expected: Option<Vec<SseEvent>>,
}

fn wire_dir() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/wire"))
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("read {}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            walk(&path, out);
        } else {
            out.push(path);
        }
    }
}

fn event(name: Option<&str>, data: &str) -> SseEvent {
    SseEvent {
        event: name.map(str::to_string),
        data: data.to_string(),
        id: None,
    }
}

/// Frames a jsonl recording as its provider sends it (wire.md §7.2).
fn frame_jsonl(provider: &str, text: &str) -> (Vec<u8>, Vec<SseEvent>) {
    let mut bytes = String::new();
    let mut expected = Vec::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let json: serde_json::Value = serde_json::from_str(line).expect("jsonl line is JSON");
        match provider {
            "anthropic" | "openai-responses" => {
                let kind = json["type"].as_str().expect("typed event");
                bytes.push_str(&format!("event: {kind}\ndata: {line}\n\n"));
                expected.push(event(Some(kind), line));
            }
            "gemini" => {
                bytes.push_str(&format!("data: {line}\r\n\r\n"));
                expected.push(event(None, line));
            }
            _ => {
                bytes.push_str(&format!("data: {line}\n\n"));
                expected.push(event(None, line));
            }
        }
    }
    if provider == "openai-chat" || provider == "openai-compatible" {
        bytes.push_str("data: [DONE]\n\n");
        expected.push(event(None, "[DONE]"));
    }
    (bytes.into_bytes(), expected)
}

fn fixtures() -> &'static [Fixture] {
    static FIXTURES: OnceLock<Vec<Fixture>> = OnceLock::new();
    FIXTURES.get_or_init(|| {
        let root = wire_dir();
        let mut paths = Vec::new();
        walk(&root, &mut paths);
        let mut out = Vec::new();
        for path in paths {
            let name = path.strip_prefix(&root).unwrap().display().to_string();
            let provider = name.split('/').next().unwrap().to_string();
            match path.extension().and_then(|e| e.to_str()) {
                Some("sse") => out.push(Fixture {
                    name,
                    bytes: std::fs::read(&path).unwrap(),
                    expected: None,
                }),
                Some("jsonl") => {
                    let text = std::fs::read_to_string(&path).unwrap();
                    let (bytes, expected) = frame_jsonl(&provider, &text);
                    out.push(Fixture {
                        name,
                        bytes,
                        expected: Some(expected),
                    });
                }
                _ => {}
            }
        }
        out
    })
}

fn decode_chunks<'a>(chunks: impl IntoIterator<Item = &'a [u8]>) -> Vec<SseEvent> {
    let mut decoder = SseDecoder::new();
    let mut out = Vec::new();
    for chunk in chunks {
        out.extend(decoder.push(chunk).expect("fixture decodes"));
    }
    out.extend(decoder.finish());
    out
}

fn decode_whole(bytes: &[u8]) -> Vec<SseEvent> {
    decode_chunks([bytes])
}

fn decode_split_at(bytes: &[u8], cuts: &[usize]) -> Vec<SseEvent> {
    let mut cuts: Vec<usize> = cuts.iter().map(|c| c % (bytes.len() + 1)).collect();
    cuts.sort_unstable();
    let mut chunks = Vec::new();
    let mut start = 0;
    for cut in cuts {
        chunks.push(&bytes[start..cut]);
        start = cut;
    }
    chunks.push(&bytes[start..]);
    decode_chunks(chunks)
}

#[test]
fn corpus_is_found_and_decodes_to_sensible_events() {
    let all = fixtures();
    let sse = all.iter().filter(|f| f.expected.is_none()).count();
    let jsonl = all.len() - sse;
    assert!(sse >= 24, "found {sse} .sse fixtures");
    assert!(jsonl >= 15, "found {jsonl} .jsonl fixtures");
    for fixture in all {
        let events = decode_whole(&fixture.bytes);
        assert!(!events.is_empty(), "{}: no events", fixture.name);
        if let Some(expected) = &fixture.expected {
            assert_eq!(&events, expected, "{}", fixture.name);
        }
        for e in &events {
            let payload = e.data.trim();
            assert!(
                payload == "[DONE]" || serde_json::from_str::<serde_json::Value>(payload).is_ok(),
                "{}: payload is not JSON: {payload:.80}",
                fixture.name
            );
        }
        if fixture.name.starts_with("anthropic/") {
            for e in &events {
                let json: serde_json::Value = serde_json::from_str(&e.data).unwrap();
                assert_eq!(
                    e.event.as_deref(),
                    json["type"].as_str(),
                    "{}",
                    fixture.name
                );
            }
        }
    }
}

#[test]
fn one_byte_reads_decode_like_one_read() {
    for fixture in fixtures() {
        let whole = decode_whole(&fixture.bytes);
        let bytewise = decode_chunks(fixture.bytes.chunks(1));
        assert_eq!(bytewise, whole, "{}", fixture.name);
    }
}

#[test]
fn every_two_way_split_of_small_fixtures_decodes_alike() {
    for fixture in fixtures().iter().filter(|f| f.bytes.len() <= 4096) {
        let whole = decode_whole(&fixture.bytes);
        for cut in 0..=fixture.bytes.len() {
            assert_eq!(
                decode_split_at(&fixture.bytes, &[cut]),
                whole,
                "{} split at {cut}",
                fixture.name
            );
        }
    }
}

#[test]
fn crlf_and_cr_line_ends_decode_alike() {
    for fixture in fixtures() {
        let whole = decode_whole(&fixture.bytes);
        let lf: Vec<u8> = String::from_utf8_lossy(&fixture.bytes)
            .replace("\r\n", "\n")
            .into_bytes();
        let crlf = String::from_utf8_lossy(&lf).replace('\n', "\r\n");
        let cr = String::from_utf8_lossy(&lf).replace('\n', "\r");
        assert_eq!(
            decode_whole(crlf.as_bytes()),
            whole,
            "{} as CRLF",
            fixture.name
        );
        assert_eq!(
            decode_chunks(crlf.as_bytes().chunks(1)),
            whole,
            "{} as CRLF, one byte per read",
            fixture.name
        );
        assert_eq!(
            decode_chunks(cr.as_bytes().chunks(7)),
            whole,
            "{} as CR",
            fixture.name
        );
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn random_splits_decode_alike(
        pick in any::<prop::sample::Index>(),
        cuts in prop::collection::vec(any::<usize>(), 0..48),
    ) {
        let fixture = pick.get(fixtures());
        let whole = decode_whole(&fixture.bytes);
        prop_assert_eq!(decode_split_at(&fixture.bytes, &cuts), whole, "{}", &fixture.name);
    }
}
