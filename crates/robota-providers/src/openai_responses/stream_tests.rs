//! Unit tests of the Responses stream decoder over hand-built event sequences; the recorded
//! streams are replayed through the HTTP path in `tests/openai_responses_provider/`.

use std::sync::Mutex;

use serde_json::json;

use super::*;

fn run(lines: &[Value]) -> (Result<AssistantTurn, ProviderError>, Vec<StreamEvent>) {
    run_raw(&lines.iter().map(Value::to_string).collect::<Vec<_>>())
}

fn run_raw(payloads: &[String]) -> (Result<AssistantTurn, ProviderError>, Vec<StreamEvent>) {
    let seen = Mutex::new(Vec::new());
    let sink = |e: StreamEvent| seen.lock().unwrap().push(e);
    let mut decoder = ResponsesDecoder::new("gpt-test");
    let mut result = None;
    for payload in payloads {
        let event = SseEvent {
            event: None,
            data: payload.clone(),
            id: None,
        };
        match decoder.on_event(&event, &sink) {
            Ok(Flow::Continue) => {}
            Ok(Flow::Done) => break,
            Err(e) => {
                result = Some(Err(e));
                break;
            }
        }
    }
    let result = result.unwrap_or_else(|| decoder.finish("fallback"));
    (result, seen.into_inner().unwrap())
}

fn created() -> Value {
    json!({"type":"response.created","response":{"id":"resp_1","model":"gpt-5-2025-08-07","status":"in_progress","usage":null}})
}

fn completed(usage: Value) -> Value {
    json!({"type":"response.completed","response":{"id":"resp_1","status":"completed","usage":usage}})
}

fn usage(input: u64, cached: u64, output: u64) -> Value {
    json!({"input_tokens":input,"input_tokens_details":{"cached_tokens":cached},
           "output_tokens":output,"output_tokens_details":{"reasoning_tokens":3},
           "total_tokens":input + output})
}

fn message_added(index: u64, id: &str) -> Value {
    json!({"type":"response.output_item.added","output_index":index,
           "item":{"type":"message","id":id,"role":"assistant","content":[],"status":"in_progress"}})
}

fn text_delta(index: u64, id: &str, delta: &str) -> Value {
    json!({"type":"response.output_text.delta","item_id":id,"output_index":index,"content_index":0,"delta":delta})
}

#[test]
fn text_streams_and_usage_subtracts_cached_tokens() {
    let (turn, events) = run(&[
        created(),
        json!({"type":"response.in_progress","response":{"id":"resp_1"}}),
        message_added(0, "msg_1"),
        json!({"type":"response.content_part.added","item_id":"msg_1","output_index":0,"content_index":0,"part":{"type":"output_text","text":""}}),
        text_delta(0, "msg_1", "Hel"),
        text_delta(0, "msg_1", ""),
        text_delta(0, "msg_1", "lo"),
        json!({"type":"response.output_text.done","item_id":"msg_1","output_index":0,"content_index":0,"text":"Hello"}),
        json!({"type":"response.brand_new_event","x":1}),
        completed(usage(1200, 1024, 9)),
    ]);
    let turn = turn.unwrap();
    assert_eq!(turn.content, vec![Block::text("Hello")]);
    assert_eq!(turn.stop_reason, StopReason::EndTurn);
    assert_eq!(turn.id.as_deref(), Some("resp_1"));
    assert_eq!(turn.model, "gpt-5-2025-08-07");
    assert_eq!(
        turn.usage,
        Some(Usage {
            input_tokens: 176,
            output_tokens: 9,
            cache_read_input_tokens: 1024,
            cache_creation_input_tokens: 0,
        })
    );
    assert_eq!(
        events,
        vec![
            StreamEvent::TextDelta("Hel".into()),
            StreamEvent::TextDelta("lo".into())
        ]
    );
}

#[test]
fn parallel_function_calls_correlate_by_item_id_and_name_by_call_id() {
    let call = |index: u64, fc: &str, call: &str, name: &str| {
        json!({"type":"response.output_item.added","output_index":index,
               "item":{"type":"function_call","id":fc,"call_id":call,"name":name,"arguments":"","status":"in_progress"}})
    };
    let delta = |fc: &str, d: &str| {
        // No output_index: the item id alone must find the call.
        json!({"type":"response.function_call_arguments.delta","item_id":fc,"delta":d})
    };
    let (turn, events) = run(&[
        created(),
        call(0, "fc_a", "call_A", "Read"),
        call(1, "fc_b", "call_B", "Glob"),
        delta("fc_a", "{\"file_"),
        delta("fc_b", "{\"pattern\":\"*.rs\"}"),
        delta("fc_a", "path\":\"/a\"}"),
        json!({"type":"response.function_call_arguments.done","item_id":"fc_a","output_index":0,"arguments":"{\"file_path\":\"/a\"}"}),
        json!({"type":"response.output_item.done","output_index":1,
               "item":{"type":"function_call","id":"fc_b","call_id":"call_B","name":"Glob","arguments":"{\"pattern\":\"*.rs\"}","status":"completed"}}),
        completed(usage(10, 0, 5)),
    ]);
    let turn = turn.unwrap();
    assert_eq!(turn.stop_reason, StopReason::ToolUse);
    assert_eq!(
        turn.content,
        vec![
            Block::ToolUse {
                id: "call_A".into(),
                name: "Read".into(),
                input: json!({"file_path":"/a"})
            },
            Block::ToolUse {
                id: "call_B".into(),
                name: "Glob".into(),
                input: json!({"pattern":"*.rs"})
            },
        ]
    );
    assert_eq!(
        events[..3],
        [
            StreamEvent::ToolUseStart {
                id: "call_A".into(),
                name: "Read".into()
            },
            StreamEvent::ToolUseStart {
                id: "call_B".into(),
                name: "Glob".into()
            },
            StreamEvent::ToolInputDelta {
                id: "call_A".into(),
                partial_json: "{\"file_".into()
            },
        ]
    );
    assert_eq!(events.len(), 5);
}

#[test]
fn calls_that_arrive_whole_are_announced_and_bad_arguments_kept_raw() {
    let (turn, events) = run(&[
        created(),
        json!({"type":"response.output_item.done","output_index":0,
               "item":{"type":"function_call","id":"fc_1","call_id":"call_1","name":"Write","arguments":"{\"a\": [1,"}}),
        json!({"type":"response.output_item.done","output_index":1,
               "item":{"type":"function_call","id":"fc_2","call_id":"call_2","name":"Noop","arguments":""}}),
        completed(usage(1, 0, 1)),
    ]);
    let turn = turn.unwrap();
    assert_eq!(
        turn.content[0],
        Block::ToolUse {
            id: "call_1".into(),
            name: "Write".into(),
            input: json!({INVALID_INPUT_KEY: "{\"a\": [1,"})
        }
    );
    assert_eq!(
        turn.content[1],
        Block::ToolUse {
            id: "call_2".into(),
            name: "Noop".into(),
            input: json!({})
        }
    );
    assert_eq!(
        events[..2],
        [
            StreamEvent::ToolUseStart {
                id: "call_1".into(),
                name: "Write".into()
            },
            StreamEvent::ToolInputDelta {
                id: "call_1".into(),
                partial_json: "{\"a\": [1,".into()
            },
        ]
    );
}

#[test]
fn reasoning_summary_streams_as_thinking_and_the_item_is_kept_opaque() {
    let summary_delta = |summary_index: u64, d: &str| json!({"type":"response.reasoning_summary_text.delta","item_id":"rs_1","output_index":0,"summary_index":summary_index,"delta":d});
    let done_item = json!({"id":"rs_1","type":"reasoning","encrypted_content":"gAAA-final",
        "summary":[{"type":"summary_text","text":"**Plan**"},{"type":"summary_text","text":"Then act"}]});
    let (turn, events) = run(&[
        created(),
        json!({"type":"response.output_item.added","output_index":0,
               "item":{"id":"rs_1","type":"reasoning","encrypted_content":"gAAA-early","summary":[]}}),
        summary_delta(0, "**Plan**"),
        json!({"type":"response.reasoning_summary_part.done","item_id":"rs_1","output_index":0,"summary_index":0}),
        summary_delta(1, "Then "),
        summary_delta(1, "act"),
        json!({"type":"response.output_item.done","output_index":0,"item":done_item}),
        json!({"type":"response.output_item.added","output_index":1,
               "item":{"id":"rs_2","type":"reasoning","summary":[]}}),
        json!({"type":"response.output_item.done","output_index":1,
               "item":{"id":"rs_2","type":"reasoning","summary":[]}}),
        message_added(2, "msg_1"),
        text_delta(2, "msg_1", "Done."),
        completed(usage(5, 0, 50)),
    ]);
    let turn = turn.unwrap();
    assert_eq!(
        turn.content,
        vec![
            Block::Opaque(json!({"type":"openai_reasoning","model":"gpt-test","item":done_item})),
            Block::text("Done."),
        ]
    );
    let thinking: Vec<&str> = events
        .iter()
        .filter_map(|e| match e {
            StreamEvent::ThinkingDelta(t) => Some(t.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(thinking, ["**Plan**", "\n\nThen ", "act"]);
}

#[test]
fn incomplete_and_refusal_set_the_stop_reason() {
    let incomplete = |reason: &str| {
        json!({"type":"response.incomplete","response":{"id":"resp_1","status":"incomplete",
               "incomplete_details":{"reason":reason},"usage":usage(3, 0, 4)}})
    };
    let (turn, _) = run(&[
        created(),
        message_added(0, "m"),
        text_delta(0, "m", "cut sh"),
        incomplete("max_output_tokens"),
    ]);
    let turn = turn.unwrap();
    assert_eq!(turn.stop_reason, StopReason::MaxTokens);
    assert_eq!(turn.content, vec![Block::text("cut sh")]);
    let (turn, _) = run(&[created(), incomplete("content_filter")]);
    assert_eq!(turn.unwrap().stop_reason, StopReason::Refusal);
    let (turn, events) = run(&[
        created(),
        message_added(0, "m"),
        json!({"type":"response.refusal.delta","item_id":"m","output_index":0,"content_index":0,"delta":"I can't help with that."}),
        completed(usage(3, 0, 4)),
    ]);
    let turn = turn.unwrap();
    assert_eq!(turn.stop_reason, StopReason::Refusal);
    assert_eq!(turn.content, vec![Block::text("I can't help with that.")]);
    assert_eq!(events.len(), 1);
}

#[test]
fn failed_and_error_events_are_typed_errors() {
    let (turn, _) = run(&[
        created(),
        json!({"type":"response.failed","response":{"id":"resp_1","status":"failed",
               "error":{"code":"context_length_exceeded","message":"Your input exceeds the context window of this model."}}}),
    ]);
    assert_eq!(turn.unwrap_err().kind, ProviderErrorKind::ContextTooLong);
    let (turn, events) = run(&[
        created(),
        message_added(0, "m"),
        text_delta(0, "m", "partial"),
        json!({"type":"error","code":"server_is_overloaded","message":"busy","param":null}),
    ]);
    assert_eq!(turn.unwrap_err().kind, ProviderErrorKind::Overloaded);
    assert_eq!(events, vec![StreamEvent::TextDelta("partial".into())]);
}

#[test]
fn an_end_before_the_terminal_event_is_a_stream_cut() {
    let (turn, _) = run(&[created(), message_added(0, "m"), text_delta(0, "m", "Hel")]);
    assert_eq!(turn.unwrap_err().kind, ProviderErrorKind::StreamCut);
    let (turn, _) = run_raw(&[created().to_string(), "[DONE]".to_string()]);
    assert_eq!(turn.unwrap_err().kind, ProviderErrorKind::StreamCut);
    let (turn, _) = run(&[]);
    let error = turn.unwrap_err();
    assert_eq!(error.kind, ProviderErrorKind::StreamCut);
    assert!(error.message.contains("before any response"));
}

#[test]
fn a_terminal_event_alone_still_yields_its_output_and_no_usage_stays_none() {
    let (turn, events) = run(&[
        json!({"type":"response.done","response":{"id":"resp_9","model":"gpt-x",
        "output":[
            {"type":"message","id":"msg_9","role":"assistant","content":[{"type":"output_text","text":"whole"}]},
            {"type":"function_call","id":"fc_9","call_id":"call_9","name":"Read","arguments":"{\"file_path\":\"/x\"}"}
        ]}}),
    ]);
    let turn = turn.unwrap();
    assert_eq!(turn.usage, None);
    assert_eq!(turn.model, "gpt-x");
    assert_eq!(turn.stop_reason, StopReason::ToolUse);
    assert_eq!(turn.content[0], Block::text("whole"));
    assert_eq!(events[0], StreamEvent::TextDelta("whole".into()));
    assert_eq!(events.len(), 3);
}

#[test]
fn non_json_payload_is_a_decode_error() {
    let (turn, _) = run_raw(&["{not json".to_string()]);
    assert_eq!(turn.unwrap_err().kind, ProviderErrorKind::Decode);
}
