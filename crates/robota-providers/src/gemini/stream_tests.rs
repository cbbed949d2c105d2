//! Unit tests of the Gemini stream decoder, fed chunk by chunk without HTTP.

use std::sync::Mutex;

use serde_json::json;

use super::*;
use robota_core::Role;

fn run_with(
    ids: ToolIds,
    chunks: &[Value],
) -> (Result<AssistantTurn, ProviderError>, Vec<StreamEvent>) {
    let seen = Mutex::new(Vec::new());
    let sink = |e: StreamEvent| seen.lock().unwrap().push(e);
    let mut decoder = GeminiStreamDecoder::new(ids);
    let mut failed = None;
    for chunk in chunks {
        let event = SseEvent {
            event: None,
            data: chunk.to_string(),
            id: None,
        };
        if let Err(e) = decoder.on_event(&event, &sink) {
            failed = Some(e);
            break;
        }
    }
    let result = match failed {
        Some(e) => Err(e),
        None => decoder.finish("fallback-model"),
    };
    (result, seen.into_inner().unwrap())
}

fn run(chunks: &[Value]) -> (Result<AssistantTurn, ProviderError>, Vec<StreamEvent>) {
    run_with(ToolIds::default(), chunks)
}

fn chunk(parts: Value, finish: Option<&str>) -> Value {
    let mut candidate = json!({"content":{"role":"model","parts":parts},"index":0});
    if let Some(reason) = finish {
        candidate["finishReason"] = json!(reason);
    }
    json!({"candidates":[candidate],"modelVersion":"gemini-test","responseId":"r1"})
}

fn vertex_fixture() -> Vec<Value> {
    std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/fixtures/wire/gemini/vertex_stream_function_call_partial_args.jsonl"
    ))
    .unwrap()
    .lines()
    .filter(|l| !l.trim().is_empty())
    .map(|l| serde_json::from_str(l).unwrap())
    .collect()
}

#[test]
fn text_thoughts_and_the_trailing_signature() {
    let (turn, events) = run(&[
        chunk(json!([{"text":"Let me think","thought":true}]), None),
        chunk(
            json!([{"text":" more","thought":true},{"text":"Hello"}]),
            None,
        ),
        chunk(json!([{"text":" world"}]), None),
        chunk(json!([{"text":"","thoughtSignature":"SIG"}]), Some("STOP")),
    ]);
    let turn = turn.unwrap();
    assert_eq!(
        turn.content,
        vec![
            Block::Thinking {
                thinking: "Let me think more".into(),
                signature: String::new()
            },
            Block::text("Hello world"),
            parts::signature_marker("SIG", true),
        ]
    );
    assert_eq!(turn.stop_reason, StopReason::EndTurn);
    assert_eq!(turn.usage, None);
    assert_eq!(turn.model, "gemini-test");
    assert_eq!(turn.id.as_deref(), Some("r1"));
    assert_eq!(
        events,
        vec![
            StreamEvent::ThinkingDelta("Let me think".into()),
            StreamEvent::ThinkingDelta(" more".into()),
            StreamEvent::TextDelta("Hello".into()),
            StreamEvent::TextDelta(" world".into()),
        ]
    );
}

#[test]
fn a_signed_text_part_starts_its_own_block() {
    let (turn, _) = run(&[
        chunk(json!([{"text":"a"}]), None),
        chunk(
            json!([{"text":"b","thoughtSignature":"S"},{"text":"c"}]),
            Some("STOP"),
        ),
    ]);
    assert_eq!(
        turn.unwrap().content,
        vec![
            Block::text("a"),
            parts::signature_marker("S", false),
            Block::text("bc"),
        ]
    );
}

#[test]
fn whole_calls_get_ids_unique_in_the_conversation() {
    let history = vec![Message::new(
        Role::Assistant,
        vec![Block::ToolUse {
            id: "call_2".into(),
            name: "Read".into(),
            input: json!({}),
        }],
    )];
    let (turn, events) = run_with(
        ToolIds::from_history(&history),
        &[chunk(
            json!([
                {"functionCall":{"name":"Read","args":{"file_path":"a"}},"thoughtSignature":"S1"},
                {"functionCall":{"name":"Read","args":{"file_path":"b"}}},
                {"functionCall":{"name":"Bash","args":{"command":"ls"},"id":"server-7"}},
                {"functionCall":{"name":"Bash","id":"server-7"}}
            ]),
            Some("STOP"),
        )],
    );
    let turn = turn.unwrap();
    assert_eq!(turn.stop_reason, StopReason::ToolUse);
    let calls: Vec<_> = turn
        .content
        .iter()
        .filter_map(|b| match b {
            Block::ToolUse { id, name, input } => Some((id.as_str(), name.as_str(), input.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(
        calls,
        vec![
            ("call_3", "Read", json!({"file_path":"a"})),
            ("call_4", "Read", json!({"file_path":"b"})),
            ("server-7", "Bash", json!({"command":"ls"})),
            ("call_5", "Bash", json!({})),
        ]
    );
    assert_eq!(turn.content[0], parts::signature_marker("S1", false));
    assert_eq!(
        events[..2],
        [
            StreamEvent::ToolUseStart {
                id: "call_3".into(),
                name: "Read".into()
            },
            StreamEvent::ToolInputDelta {
                id: "call_3".into(),
                partial_json: r#"{"file_path":"a"}"#.into()
            },
        ]
    );
}

#[test]
fn the_recorded_vertex_streamed_arguments_assemble() {
    let (turn, events) = run(&vertex_fixture());
    let turn = turn.unwrap();
    assert_eq!(turn.stop_reason, StopReason::ToolUse);
    assert_eq!(turn.model, "gemini-3.1-pro-preview");
    assert_eq!(turn.id.as_deref(), Some("dqHOab6xGLzWodAPkPuViA4"));
    let Block::Opaque(marker) = &turn.content[0] else {
        panic!("signature first: {:?}", turn.content[0]);
    };
    assert!(
        marker["thoughtSignature"]
            .as_str()
            .unwrap()
            .starts_with("CiMBjz1rX25KieIB4d4AwFn8")
    );
    assert_eq!(
        turn.content[1..],
        [
            Block::ToolUse {
                id: "call_1".into(),
                name: "getWeather".into(),
                input: json!({"location":"Boston"})
            },
            Block::ToolUse {
                id: "call_2".into(),
                name: "getWeather".into(),
                input: json!({"location":"San Francisco"})
            },
        ]
    );
    assert_eq!(
        turn.usage,
        Some(Usage {
            input_tokens: 26,
            output_tokens: 23 + 132,
            ..Usage::default()
        })
    );
    let deltas: Vec<_> = events
        .iter()
        .filter_map(|e| match e {
            StreamEvent::ToolInputDelta { id, partial_json } => {
                Some((id.as_str(), partial_json.as_str()))
            }
            _ => None,
        })
        .collect();
    assert_eq!(
        deltas,
        vec![
            ("call_1", r#"{"location":"Boston"}"#),
            ("call_2", r#"{"location":"San Francisco"}"#)
        ]
    );
}

#[test]
fn a_streamed_call_left_open_is_flagged_not_run() {
    let mut chunks = vertex_fixture();
    chunks.truncate(2);
    chunks.push(chunk(json!([]), Some("MAX_TOKENS")));
    let (turn, _) = run(&chunks);
    let turn = turn.unwrap();
    assert_eq!(turn.stop_reason, StopReason::MaxTokens);
    let Some(Block::ToolUse { input, .. }) = turn.content.last() else {
        panic!("a tool use: {:?}", turn.content);
    };
    let raw = input[INVALID_INPUT_KEY].as_str().unwrap();
    assert!(raw.contains("Boston") && raw.contains("before this call's arguments were complete"));
}

#[test]
fn stray_partial_arguments_fail_clearly() {
    let (turn, _) = run(&[chunk(
        json!([{"functionCall":{"partialArgs":[{"jsonPath":"$.a","stringValue":"x"}],"willContinue":true}}]),
        None,
    )]);
    let err = turn.unwrap_err();
    assert_eq!(err.kind, ProviderErrorKind::Decode);
    assert!(err.message.contains("no call open"));
    let (turn, _) = run(&[
        chunk(
            json!([{"functionCall":{"name":"f","willContinue":true}}]),
            None,
        ),
        chunk(
            json!([{"functionCall":{"partialArgs":[{"jsonPath":"a.b","stringValue":"x"}],"willContinue":true}}]),
            None,
        ),
    ]);
    let err = turn.unwrap_err();
    assert_eq!(err.kind, ProviderErrorKind::Decode);
    assert!(
        err.message
            .contains("cannot assemble streamed arguments of f")
    );
}

#[test]
fn end_without_finish_reason_is_a_stream_cut() {
    let (turn, events) = run(&[chunk(json!([{"text":"partial"}]), None)]);
    assert_eq!(turn.unwrap_err().kind, ProviderErrorKind::StreamCut);
    assert_eq!(events, vec![StreamEvent::TextDelta("partial".into())]);
    let (turn, _) = run(&[]);
    assert_eq!(turn.unwrap_err().kind, ProviderErrorKind::StreamCut);
}

#[test]
fn usage_subtracts_cached_and_adds_thoughts_and_tool_prompt() {
    let mut last = chunk(json!([{"text":"ok"}]), Some("STOP"));
    last["usageMetadata"] = json!({"promptTokenCount":1000,"cachedContentTokenCount":600,
        "toolUsePromptTokenCount":5,"candidatesTokenCount":20,"thoughtsTokenCount":30,
        "totalTokenCount":1055});
    let mut first = chunk(json!([]), None);
    first["usageMetadata"] = json!({"promptTokenCount":999,"trafficType":"ON_DEMAND"});
    let (turn, _) = run(&[first, last]);
    assert_eq!(
        turn.unwrap().usage,
        Some(Usage {
            input_tokens: 405,
            output_tokens: 50,
            cache_read_input_tokens: 600,
            cache_creation_input_tokens: 0
        })
    );
}

#[test]
fn finish_reasons_map_onto_stop_reasons() {
    for (reason, want) in [
        ("MAX_TOKENS", StopReason::MaxTokens),
        ("SAFETY", StopReason::Refusal),
        ("RECITATION", StopReason::Refusal),
        ("PROHIBITED_CONTENT", StopReason::Refusal),
        ("OTHER", StopReason::Other("other".into())),
        (
            "TOO_MANY_TOOL_CALLS",
            StopReason::Other("too_many_tool_calls".into()),
        ),
    ] {
        let (turn, _) = run(&[chunk(json!([{"text":"x"}]), Some(reason))]);
        assert_eq!(turn.unwrap().stop_reason, want, "{reason}");
    }
}

#[test]
fn malformed_function_call_is_a_retryable_error() {
    let mut last = chunk(json!([]), Some("MALFORMED_FUNCTION_CALL"));
    last["candidates"][0]["finishMessage"] = json!("Malformed function call: print(x");
    let (turn, _) = run(&[last]);
    let err = turn.unwrap_err();
    assert_eq!(err.kind, ProviderErrorKind::Server);
    assert!(err.is_retryable());
    assert!(err.message.contains("MALFORMED_FUNCTION_CALL") && err.message.contains("print(x"));
}

#[test]
fn blocked_prompt_is_a_refusal_and_error_chunks_are_errors() {
    let (turn, _) = run(&[json!({"promptFeedback":{"blockReason":"SAFETY"},
        "usageMetadata":{"promptTokenCount":7,"totalTokenCount":7}})]);
    let turn = turn.unwrap();
    assert_eq!(turn.stop_reason, StopReason::Refusal);
    assert!(turn.content.is_empty());
    assert_eq!(turn.usage.unwrap().input_tokens, 7);

    let (turn, events) = run(&[
        chunk(json!([{"text":"so far"}]), None),
        json!({"error":{"code":503,"message":"The model is overloaded.","status":"UNAVAILABLE"}}),
    ]);
    assert_eq!(turn.unwrap_err().kind, ProviderErrorKind::Overloaded);
    assert_eq!(events.len(), 1);
}

#[test]
fn unknown_parts_are_kept_and_bad_json_is_a_decode_error() {
    let code = json!({"executableCode":{"language":"PYTHON","code":"print(1)"}});
    let (turn, _) = run(&[chunk(json!([code.clone(), {}]), Some("STOP"))]);
    assert_eq!(turn.unwrap().content, vec![parts::raw_part(&code)]);

    let mut decoder = GeminiStreamDecoder::new(ToolIds::default());
    let sink = |_: StreamEvent| {};
    let bad = SseEvent {
        event: None,
        data: "{not json".into(),
        id: None,
    };
    assert_eq!(
        decoder.on_event(&bad, &sink).unwrap_err().kind,
        ProviderErrorKind::Decode
    );
}
