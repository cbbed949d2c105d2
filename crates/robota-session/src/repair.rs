//! A replayed history made valid for every provider: each `tool_use` is answered by a
//! `tool_result` in the message right after it. A log can lack results when robota was
//! killed, crashed or lost the disk while a tool ran, or when a torn line was skipped;
//! every provider rejects such a history, so each missing result becomes "not run". The
//! results for the calls of the last message are returned so the caller can append them to
//! the log (it is never rewritten); earlier gaps are filled the same way at every replay.

use std::collections::HashSet;

use robota_core::{Block, Message, Role};

/// The result a call gets when the log holds none.
pub const NOT_RUN_RESULT: &str =
    "Not run: robota stopped before this tool call finished (the session was resumed).";

/// Answers every unanswered tool call in `messages`. Returns the message added after the
/// last one, if its calls were unanswered (append it to the log).
pub fn answer_orphan_tool_calls(messages: &mut Vec<Message>) -> Option<Message> {
    let mut appended = None;
    let mut index = 0;
    while index < messages.len() {
        if messages[index].role != Role::Assistant {
            index += 1;
            continue;
        }
        let calls: Vec<String> = messages[index]
            .tool_uses()
            .map(|(id, _, _)| id.to_string())
            .collect();
        if calls.is_empty() {
            index += 1;
            continue;
        }
        let next = index + 1;
        let answered: HashSet<String> = messages
            .get(next)
            .filter(|m| m.role == Role::User)
            .map(|m| {
                m.content
                    .iter()
                    .filter_map(|b| match b {
                        Block::ToolResult { tool_use_id, .. } => Some(tool_use_id.clone()),
                        _ => None,
                    })
                    .collect()
            })
            .unwrap_or_default();
        let missing: Vec<Block> = calls
            .into_iter()
            .filter(|id| !answered.contains(id))
            .map(|id| Block::ToolResult {
                tool_use_id: id,
                content: NOT_RUN_RESULT.into(),
                is_error: true,
            })
            .collect();
        if !missing.is_empty() {
            match messages.get_mut(next).filter(|m| m.role == Role::User) {
                // Results come first in the user message that follows the calls.
                Some(following) => {
                    following.content.splice(0..0, missing);
                }
                None => {
                    let message = Message::new(Role::User, missing);
                    if next == messages.len() {
                        appended = Some(message.clone());
                    }
                    messages.insert(next, message);
                }
            }
        }
        index += 1;
    }
    appended
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn call(id: &str) -> Block {
        Block::ToolUse {
            id: id.into(),
            name: "Bash".into(),
            input: json!({"command": "sleep 30"}),
        }
    }

    fn result(id: &str) -> Block {
        Block::ToolResult {
            tool_use_id: id.into(),
            content: "ok".into(),
            is_error: false,
        }
    }

    fn result_ids(message: &Message) -> Vec<String> {
        message
            .content
            .iter()
            .filter_map(|b| match b {
                Block::ToolResult { tool_use_id, .. } => Some(tool_use_id.clone()),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn calls_cut_off_at_the_end_get_results_to_append() {
        let mut messages = vec![
            Message::user_text("go"),
            Message::new(Role::Assistant, vec![call("a"), call("b")]),
        ];
        let appended = answer_orphan_tool_calls(&mut messages).expect("results to append");
        assert_eq!(result_ids(&appended), ["a", "b"]);
        assert_eq!(messages.len(), 3);
        assert_eq!(messages[2], appended);
        // A second replay of the repaired history adds nothing.
        assert_eq!(answer_orphan_tool_calls(&mut messages), None);
        assert_eq!(messages.len(), 3);
    }

    #[test]
    fn gaps_in_the_middle_are_filled_in_place() {
        let mut messages = vec![
            Message::user_text("go"),
            Message::new(Role::Assistant, vec![call("a"), call("b")]),
            // The result of `b` was on a torn line.
            Message::new(Role::User, vec![result("a")]),
            Message::new(Role::Assistant, vec![call("c")]),
            Message::user_text("a later prompt"),
            Message::new(Role::Assistant, vec![Block::text("done")]),
        ];
        assert_eq!(answer_orphan_tool_calls(&mut messages), None);
        assert_eq!(result_ids(&messages[2]), ["b", "a"]);
        assert_eq!(result_ids(&messages[4]), ["c"]);
        assert_eq!(
            messages[4].content.len(),
            2,
            "the prompt stays after its result"
        );
        assert_eq!(messages.len(), 6);
    }

    #[test]
    fn a_complete_history_is_left_alone() {
        let mut messages = vec![
            Message::user_text("go"),
            Message::new(Role::Assistant, vec![call("a")]),
            Message::new(Role::User, vec![result("a")]),
            Message::new(Role::Assistant, vec![Block::text("done")]),
        ];
        let before = messages.clone();
        assert_eq!(answer_orphan_tool_calls(&mut messages), None);
        assert_eq!(messages, before);
    }
}
