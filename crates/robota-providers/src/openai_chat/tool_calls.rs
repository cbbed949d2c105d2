//! Assembly of streamed Chat Completions tool calls (wire.md §2.3, §6, §7.3) across the
//! servers' disagreements: fragments keyed by `index` (which may start at 1, be sparse,
//! repeat or be missing), ids that may be missing, repeated on every fragment or shared by
//! every call, names sent once or on every fragment, arguments streamed in pieces, sent
//! whole, or as an object. Policy: a fragment with an id not seen at its index starts a new
//! call; one without an id continues the call at its index, else the most recent call.
//! Each call gets a stable id, unique within the turn, before its first event.

use serde_json::{Map, Value};

use robota_core::{Block, INVALID_INPUT_KEY, StreamEvent};

/// One call being assembled.
#[derive(Debug)]
struct PendingCall {
    index: Option<u64>,
    /// The id the server sent, if any.
    wire_id: Option<String>,
    /// The id used in events and in the finished block.
    id: String,
    name: String,
    arguments: String,
    /// `ToolUseStart` was emitted (it waits for the name).
    started: bool,
}

/// What one fragment did.
#[derive(Debug, Default)]
pub(crate) struct FragmentOutcome {
    /// The position of a call this fragment started.
    pub(crate) new_call: Option<usize>,
    /// Events to forward, in order.
    pub(crate) events: Vec<StreamEvent>,
}

/// Every tool call of one streamed answer, in the order they started.
#[derive(Debug, Default)]
pub(crate) struct ToolCallAccumulator {
    calls: Vec<PendingCall>,
}

impl ToolCallAccumulator {
    /// Handles one element of `delta.tool_calls` (or a legacy `delta.function_call`).
    pub(crate) fn on_fragment(&mut self, fragment: &Value) -> FragmentOutcome {
        let index = fragment.get("index").and_then(Value::as_u64);
        let wire_id = fragment
            .get("id")
            .and_then(Value::as_str)
            .map(str::trim)
            .filter(|id| !id.is_empty());
        let function = fragment.get("function").unwrap_or(&Value::Null);
        let name = function
            .get("name")
            .and_then(Value::as_str)
            .map(str::trim)
            .filter(|n| !n.is_empty());
        let arguments = match function.get("arguments") {
            Some(Value::String(s)) => s.clone(),
            Some(v @ (Value::Object(_) | Value::Array(_))) => v.to_string(),
            _ => String::new(),
        };

        let mut outcome = FragmentOutcome::default();
        let position = match self.find(index, wire_id, name, &arguments) {
            Some(position) => position,
            None => {
                let id = self.fresh_id(wire_id);
                self.calls.push(PendingCall {
                    index,
                    wire_id: wire_id.map(str::to_string),
                    id,
                    name: String::new(),
                    arguments: String::new(),
                    started: false,
                });
                let position = self.calls.len() - 1;
                outcome.new_call = Some(position);
                position
            }
        };
        let call = &mut self.calls[position];
        if call.name.is_empty()
            && let Some(name) = name
        {
            call.name = name.to_string();
        }
        call.arguments.push_str(&arguments);
        if !call.started && !call.name.is_empty() {
            call.started = true;
            outcome.events.push(StreamEvent::ToolUseStart {
                id: call.id.clone(),
                name: call.name.clone(),
            });
            // Arguments that arrived before the name go out in one piece.
            if !call.arguments.is_empty() {
                outcome.events.push(StreamEvent::ToolInputDelta {
                    id: call.id.clone(),
                    partial_json: call.arguments.clone(),
                });
            }
        } else if call.started && !arguments.is_empty() {
            outcome.events.push(StreamEvent::ToolInputDelta {
                id: call.id.clone(),
                partial_json: arguments,
            });
        }
        outcome
    }

    /// The call a fragment continues, or `None` when it starts a new one.
    fn find(
        &self,
        index: Option<u64>,
        wire_id: Option<&str>,
        name: Option<&str>,
        arguments: &str,
    ) -> Option<usize> {
        let found = match wire_id {
            Some(id) => self.calls.iter().rposition(|c| {
                c.wire_id.as_deref() == Some(id) && (index.is_none() || c.index == index)
            }),
            None => match index {
                Some(i) => self.calls.iter().rposition(|c| c.index == Some(i)),
                None => self.calls.len().checked_sub(1),
            },
        }?;
        // A server that gives every call the same id and index (or none) still marks a new
        // call by sending a name and a fresh object after the previous arguments completed.
        let call = &self.calls[found];
        let starts_object = arguments.trim_start().starts_with('{');
        let previous_complete = matches!(
            serde_json::from_str::<Value>(&call.arguments),
            Ok(Value::Object(_))
        );
        if wire_id.is_some() && name.is_some() && starts_object && previous_complete {
            return None;
        }
        Some(found)
    }

    /// The server's id when it is new in this turn, else a synthesised one.
    fn fresh_id(&self, wire_id: Option<&str>) -> String {
        if let Some(id) = wire_id
            && !self.calls.iter().any(|c| c.id == id)
        {
            return id.to_string();
        }
        loop {
            let simple = uuid::Uuid::new_v4().simple().to_string();
            let id = format!("call_{}", &simple[..24]);
            if !self.calls.iter().any(|c| c.id == id) {
                return id;
            }
        }
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.calls.is_empty()
    }

    /// The finished block of the call at `position`.
    pub(crate) fn block(&self, position: usize) -> Option<Block> {
        let call = self.calls.get(position)?;
        Some(Block::ToolUse {
            id: call.id.clone(),
            name: call.name.clone(),
            input: parse_arguments(&call.arguments),
        })
    }
}

/// Arguments from their concatenated text: empty is `{}`; a JSON object is used as is (also
/// when double-encoded as a JSON string); anything else is kept raw under
/// `INVALID_INPUT_KEY` for the engine to report to the model.
pub(crate) fn parse_arguments(raw: &str) -> Value {
    if raw.trim().is_empty() {
        return Value::Object(Map::new());
    }
    match serde_json::from_str::<Value>(raw) {
        Ok(v @ Value::Object(_)) => v,
        Ok(Value::String(inner)) => match serde_json::from_str::<Value>(&inner) {
            Ok(v @ Value::Object(_)) => v,
            _ => invalid(raw),
        },
        _ => invalid(raw),
    }
}

fn invalid(raw: &str) -> Value {
    let mut obj = Map::new();
    obj.insert(
        INVALID_INPUT_KEY.to_string(),
        Value::String(raw.to_string()),
    );
    Value::Object(obj)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn feed(fragments: &[Value]) -> (ToolCallAccumulator, Vec<StreamEvent>) {
        let mut acc = ToolCallAccumulator::default();
        let mut events = Vec::new();
        for f in fragments {
            events.extend(acc.on_fragment(f).events);
        }
        (acc, events)
    }

    fn blocks(acc: &ToolCallAccumulator) -> Vec<Block> {
        (0..acc.calls.len()).filter_map(|i| acc.block(i)).collect()
    }

    fn tool(id: &str, name: &str, input: Value) -> Block {
        Block::ToolUse {
            id: id.into(),
            name: name.into(),
            input,
        }
    }

    #[test]
    fn fragments_by_index_with_first_index_one_and_empty_repeats() {
        let (acc, events) = feed(&[
            json!({"index":1,"id":"toolu_x","type":"function","function":{"name":"read_file","arguments":""}}),
            json!({"index":1,"function":{"arguments":""}}),
            json!({"index":1,"function":{"arguments":"{\"pa"}}),
            json!({"index":1,"function":{"arguments":"th\": \"a.txt\"}"}}),
        ]);
        assert_eq!(
            blocks(&acc),
            vec![tool("toolu_x", "read_file", json!({"path":"a.txt"}))]
        );
        assert_eq!(events.len(), 3);
    }

    #[test]
    fn id_and_name_repeated_on_every_fragment_do_not_split_or_concatenate() {
        let frag = |args: &str| json!({"index":0,"id":"call__0","type":"function","function":{"name":"read_file","arguments":args}});
        let (acc, _) = feed(&[
            frag("{"),
            frag(" \"path\""),
            frag(": \"x\""),
            frag(" }"),
            frag(""),
            frag("\n"),
        ]);
        assert_eq!(
            blocks(&acc),
            vec![tool("call__0", "read_file", json!({"path":"x"}))]
        );
    }

    #[test]
    fn same_id_for_every_call_still_gives_distinct_calls_and_ids() {
        let (acc, events) = feed(&[
            json!({"index":0,"id":"SAME","function":{"name":"Read","arguments":"{\"a\":1}"}}),
            json!({"index":1,"id":"SAME","function":{"name":"Read","arguments":"{\"b\":2}"}}),
            json!({"id":"SAME","function":{"name":"Bash","arguments":"{\"c\":3}"}}),
        ]);
        let b = blocks(&acc);
        assert_eq!(b.len(), 3);
        let ids: Vec<String> = b
            .iter()
            .map(|b| match b {
                Block::ToolUse { id, .. } => id.clone(),
                _ => unreachable!(),
            })
            .collect();
        assert_eq!(ids[0], "SAME");
        assert!(ids[1] != "SAME" && ids[2] != "SAME" && ids[1] != ids[2]);
        let starts: Vec<&StreamEvent> = events
            .iter()
            .filter(|e| matches!(e, StreamEvent::ToolUseStart { .. }))
            .collect();
        assert_eq!(starts.len(), 3);
        assert!(
            matches!(starts[2], StreamEvent::ToolUseStart { id, name } if *id == ids[2] && name == "Bash")
        );
    }

    #[test]
    fn missing_ids_and_indexes_are_handled() {
        let (acc, events) = feed(&[
            json!({"function":{"name":"Glob","arguments":"{\"pattern\":"}}),
            json!({"function":{"arguments":"\"*.rs\"}"}}),
            json!({"index":3,"function":{"name":"Read","arguments":"{}"}}),
        ]);
        let b = blocks(&acc);
        assert_eq!(b.len(), 2);
        let Block::ToolUse { id, input, .. } = &b[0] else {
            panic!()
        };
        assert!(id.starts_with("call_") && id.len() == 29);
        assert_eq!(input, &json!({"pattern":"*.rs"}));
        assert!(events.contains(&StreamEvent::ToolUseStart {
            id: id.clone(),
            name: "Glob".into()
        }));
    }

    #[test]
    fn arguments_before_the_name_are_flushed_at_start() {
        let (acc, events) = feed(&[
            json!({"index":0,"id":"c1","function":{"arguments":"{\"x\":"}}),
            json!({"index":0,"function":{"name":"Edit","arguments":"1}"}}),
        ]);
        assert_eq!(
            events,
            vec![
                StreamEvent::ToolUseStart {
                    id: "c1".into(),
                    name: "Edit".into()
                },
                StreamEvent::ToolInputDelta {
                    id: "c1".into(),
                    partial_json: "{\"x\":1}".into()
                }
            ]
        );
        assert_eq!(blocks(&acc), vec![tool("c1", "Edit", json!({"x":1}))]);
    }

    #[test]
    fn arguments_parse_rules() {
        assert_eq!(parse_arguments(""), json!({}));
        assert_eq!(parse_arguments("{\"a\":1}"), json!({"a":1}));
        assert_eq!(parse_arguments("\"{\\\"a\\\":1}\""), json!({"a":1}));
        assert_eq!(
            parse_arguments("{\"a\": [1,"),
            json!({INVALID_INPUT_KEY: "{\"a\": [1,"})
        );
        assert_eq!(parse_arguments("[1]"), json!({INVALID_INPUT_KEY: "[1]"}));
        let (acc, _) =
            feed(&[json!({"index":0,"id":"o","function":{"name":"X","arguments":{"k":"v"}}})]);
        assert_eq!(blocks(&acc), vec![tool("o", "X", json!({"k":"v"}))]);
    }
}
