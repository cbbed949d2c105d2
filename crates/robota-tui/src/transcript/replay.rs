//! Transcript replay for a resumed session: the history's messages become the cells the
//! user saw — typed prompts (hook context in `<system-reminder>` parts left out), `!command`
//! notes as shell cells, answers, thinking and tool calls through the same path committed
//! messages take live, and tool results matched to their calls by id (✓ / ✗ and the text
//! of the result), each with the display it had live as far as the log tells it (an
//! edit's diff, a created file, the todo list, a command sent to the background: see
//! `recorded_display`). It ends like a completed turn, so live events carry on from a
//! clean state.

use std::collections::HashMap;

use super::Transcript;
use super::cell::Cell;
use robota_core::{Block, Message, MessageState, Role, ToolDisplay};
use robota_sdk::shell_command::parse_shell_note;
use robota_sdk::{CONTEXT_SUMMARY_PREFIX, SUMMARY_FROM_HERE_PREFIX};
use robota_sdk::{TurnEnd, recorded_display};
use serde_json::Value;

const REMINDER_OPEN: &str = "<system-reminder>";
const REMINDER_CLOSE: &str = "</system-reminder>";

impl Transcript {
    /// Appends the cells of `history` (a resumed session's messages) as the user saw them.
    pub fn replay(&mut self, history: &[Message]) {
        let mut calls = HashMap::new();
        for message in history {
            match message.role {
                Role::Assistant => {
                    calls.extend(calls_of(message));
                    self.replay_assistant(message);
                }
                Role::User => self.replay_user(message, &calls),
            }
        }
        self.turn_complete(&TurnEnd::Success);
        self.begin_attempt();
    }

    fn replay_assistant(&mut self, message: &Message) {
        // Nothing streamed: the message's own blocks make the cells.
        self.events.streamed = false;
        self.assistant_message(message);
        if message.state == MessageState::Interrupted {
            self.turn_complete(&TurnEnd::Interrupted);
        }
    }

    fn replay_user(&mut self, message: &Message, calls: &HashMap<&str, (&str, &Value)>) {
        let mut text = String::new();
        let mut images = 0;
        for block in &message.content {
            match block {
                Block::ToolResult {
                    tool_use_id,
                    content,
                    is_error,
                } => {
                    let display = calls
                        .get(tool_use_id.as_str())
                        .filter(|_| !*is_error)
                        .and_then(|(name, input)| recorded_display(name, input, content));
                    self.replay_tool_result(tool_use_id, content, *is_error, display.as_ref());
                }
                Block::Text { text: part, .. } => {
                    let part = without_reminders(part);
                    if !part.trim().is_empty() {
                        if !text.is_empty() {
                            text.push('\n');
                        }
                        text.push_str(part.trim());
                    }
                }
                Block::Image { .. } => images += 1,
                _ => {}
            }
        }
        // A prompt typed with images names them already; stream-json input may not.
        let named: Vec<bool> = (1..=images)
            .map(|n| text.contains(&format!("[Image #{n}]")))
            .collect();
        for n in (1..=images).filter(|n| !named[n - 1]) {
            if !text.is_empty() {
                text.push(' ');
            }
            text.push_str(&format!("[Image #{n}]"));
        }
        if text.is_empty() {
            return;
        }
        if text.starts_with(CONTEXT_SUMMARY_PREFIX.trim_end()) {
            self.turn_complete(&TurnEnd::Success);
            self.push(Cell::Divider("earlier conversation compacted".to_string()));
            return;
        }
        // "Summarize from here" left a summary for the model, not a prompt of the user's.
        if text.starts_with(SUMMARY_FROM_HERE_PREFIX.trim_end()) {
            self.turn_complete(&TurnEnd::Success);
            self.push(Cell::Divider(
                "summarised from here at your request".to_string(),
            ));
            return;
        }
        if let Some(note) = parse_shell_note(&text) {
            self.turn_complete(&TurnEnd::Success);
            let output = note.output();
            self.push(Cell::Shell {
                command: note.command,
                output,
                exit_code: None,
            });
            return;
        }
        // A new prompt: whatever the last turn left open ends here.
        self.turn_complete(&TurnEnd::Success);
        self.push(Cell::UserPrompt(text));
        self.begin_attempt();
    }

    /// A result finishes its call's cell; a TodoWrite's shows the list it wrote, as live.
    fn replay_tool_result(
        &mut self,
        tool_use_id: &str,
        content: &str,
        is_error: bool,
        display: Option<&ToolDisplay>,
    ) {
        let Some(index) = self.events.tools.remove(tool_use_id) else {
            return;
        };
        self.update(index, |cell| {
            if let Cell::ToolCall(call) = cell {
                call.finish(content, is_error, display);
            }
        });
    }
}

/// An answer's tool calls by id: their names and inputs (what the log keeps of a call).
fn calls_of(message: &Message) -> impl Iterator<Item = (&str, (&str, &Value))> {
    message.content.iter().filter_map(|block| match block {
        Block::ToolUse {
            id, name, input, ..
        } => Some((id.as_str(), (name.as_str(), input))),
        _ => None,
    })
}

/// `text` without its `<system-reminder>…</system-reminder>` parts (an unclosed one runs
/// to the end).
fn without_reminders(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.contains(REMINDER_OPEN) {
        return text.into();
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find(REMINDER_OPEN) {
        out.push_str(&rest[..start]);
        let after = &rest[start + REMINDER_OPEN.len()..];
        rest = match after.find(REMINDER_CLOSE) {
            Some(end) => &after[end + REMINDER_CLOSE.len()..],
            None => "",
        };
    }
    out.push_str(rest);
    out.into()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::theme::Theme;
    use crate::transcript::{ToolResultView, ToolStatus};
    use robota_core::Role;
    use robota_sdk::SessionEvent;
    use robota_sdk::shell_command::shell_note;
    use serde_json::json;

    fn user(blocks: Vec<Block>) -> Message {
        Message::new(Role::User, blocks)
    }

    fn assistant(blocks: Vec<Block>) -> Message {
        Message::new(Role::Assistant, blocks)
    }

    fn tool_use(id: &str, name: &str, input: serde_json::Value) -> Block {
        Block::ToolUse {
            id: id.into(),
            name: name.into(),
            input,
        }
    }

    fn tool_result(id: &str, content: &str, is_error: bool) -> Block {
        Block::ToolResult {
            tool_use_id: id.into(),
            content: content.into(),
            is_error,
        }
    }

    /// One short description per cell.
    fn describe(t: &Transcript) -> Vec<String> {
        t.cells()
            .map(|cell| match cell {
                Cell::UserPrompt(text) => format!("prompt: {text}"),
                Cell::Assistant(_) => "answer".to_string(),
                Cell::Thinking(th) => format!("thinking done={}", th.done),
                Cell::ToolCall(call) => {
                    let result = match &call.result {
                        ToolResultView::Text(text) => text.clone(),
                        other => format!("{other:?}"),
                    };
                    format!(
                        "{}({}) {:?}: {result}",
                        call.name, call.summary, call.status
                    )
                }
                Cell::Shell {
                    command,
                    output,
                    exit_code,
                } => format!("! {command} → {output:?} {exit_code:?}"),
                Cell::ShellRunning { command, tail } => format!("! {command} running {tail:?}"),
                Cell::Notice { kind, text } => format!("{kind:?}: {text}"),
                Cell::CommandOutput { command, .. } => format!("/{command}"),
                Cell::Diff(_) => "diff".to_string(),
                Cell::Interrupted => "interrupted".to_string(),
                Cell::Divider(label) => format!("── {label} ──"),
                Cell::Welcome(w) => format!("welcome {}", w.model),
            })
            .collect()
    }

    #[test]
    fn history_becomes_the_cells_the_user_saw() {
        let history = vec![
            user(vec![
                Block::text("fix it"),
                Block::text("<system-reminder>\nhook context\n</system-reminder>"),
            ]),
            assistant(vec![
                Block::Thinking {
                    thinking: "hmm".into(),
                    signature: "sig".into(),
                },
                Block::text("Looking."),
                tool_use("a", "Bash", json!({"command": "cargo test"})),
                tool_use("b", "Read", json!({"file_path": "src/x.rs"})),
            ]),
            user(vec![
                tool_result("a", "1 failed", true),
                tool_result("b", "     1\tfn x() {}\n", false),
            ]),
            // Hook context alone is not something the user typed.
            user(vec![Block::text(
                "<system-reminder>\nonly context\n</system-reminder>",
            )]),
            assistant(vec![Block::text("Done.")]),
            user(vec![Block::text(shell_note("ls", "a.txt", "warn"))]),
            user(vec![
                Block::text("before <system-reminder>x</system-reminder>after"),
                Block::Image {
                    source: robota_core::message::ImageSource {
                        kind: "base64".into(),
                        media_type: "image/png".into(),
                        data: "AAAA".into(),
                    },
                },
            ]),
            // Typed with its placeholder: not named twice.
            user(vec![
                Block::text("[Image #1] and this?"),
                Block::Image {
                    source: robota_core::message::ImageSource::base64("image/png", "AAAA"),
                },
                Block::Image {
                    source: robota_core::message::ImageSource::base64("image/gif", "R0lG"),
                },
            ]),
        ];
        let mut t = Transcript::new(Theme::new(false));
        t.replay(&history);
        assert_eq!(
            describe(&t),
            [
                "prompt: fix it",
                "thinking done=true",
                "answer",
                "Bash(cargo test) Error: 1 failed",
                "Read(src/x.rs) Ok: Read 1 line",
                "answer",
                "! ls → \"a.txt\\nwarn\" None",
                "prompt: before after [Image #1]",
                "prompt: [Image #1] and this? [Image #2]",
            ]
        );
        assert!(!t.has_running_tools());
    }

    #[test]
    fn unanswered_calls_and_interrupted_answers_end_as_interrupted() {
        let mut cut = assistant(vec![Block::text("Half an ans")]);
        cut.state = MessageState::Interrupted;
        let history = vec![
            user(vec![Block::text("go")]),
            assistant(vec![tool_use("t", "Bash", json!({"command": "sleep 9"}))]),
            user(vec![Block::text("never mind")]),
            cut,
        ];
        let mut t = Transcript::new(Theme::new(false));
        t.replay(&history);
        assert_eq!(
            describe(&t),
            [
                "prompt: go",
                "Bash(sleep 9) Error: Interrupted",
                "prompt: never mind",
                "answer",
                "interrupted",
            ]
        );
    }

    #[test]
    fn a_todo_write_is_replayed_as_its_list_not_the_models_text() {
        let todos = json!([{"content": "Run the tests", "status": "in_progress", "activeForm": "Running the tests"}]);
        let history = vec![
            user(vec![Block::text("plan it")]),
            assistant(vec![tool_use("t1", "TodoWrite", json!({"todos": todos}))]),
            user(vec![tool_result(
                "t1",
                "Todos have been modified successfully.",
                false,
            )]),
        ];
        let mut t = Transcript::new(Theme::new(false));
        t.replay(&history);
        let cells = describe(&t);
        assert!(cells[1].contains("Todos(["), "{cells:?}");
        assert!(cells[1].contains("Run the tests"), "{cells:?}");
        assert!(!cells[1].contains("modified successfully"), "{cells:?}");
    }

    #[test]
    fn a_summary_from_here_is_a_divider_not_a_prompt() {
        let history = vec![
            user(vec![Block::text("first")]),
            assistant(vec![Block::text("ok")]),
            user(vec![Block::text(format!(
                "{SUMMARY_FROM_HERE_PREFIX}The user asked for X."
            ))]),
            assistant(vec![Block::text("next")]),
        ];
        let mut t = Transcript::new(Theme::new(false));
        t.replay(&history);
        assert_eq!(
            describe(&t),
            [
                "prompt: first",
                "answer",
                "── summarised from here at your request ──",
                "answer",
            ]
        );
    }

    #[test]
    fn live_events_carry_on_after_a_replay() {
        let history = vec![
            user(vec![Block::text("first")]),
            // A reused id: the live call of the same id must get its own cell.
            assistant(vec![tool_use("call_0", "Bash", json!({"command": "true"}))]),
            user(vec![tool_result("call_0", "", false)]),
            assistant(vec![Block::text("ok")]),
        ];
        let mut t = Transcript::new(Theme::new(false));
        t.replay(&history);
        let replayed = t.len();
        t.apply(&crate::transcript::test_events::started("second"));
        t.apply(&SessionEvent::TextDelta("streaming".into()));
        t.apply(&SessionEvent::ToolUseStreaming {
            id: "call_0".into(),
            name: "Bash".into(),
        });
        assert_eq!(t.len(), replayed + 3);
        match t.cell(replayed + 2) {
            Some(Cell::ToolCall(call)) => assert_eq!(call.status, ToolStatus::Pending),
            _ => panic!("the live call has its own cell"),
        }
        match t.cell(1) {
            Some(Cell::ToolCall(call)) => assert_eq!(call.status, ToolStatus::Ok),
            _ => panic!("the replayed call keeps its cell"),
        }
    }

    #[test]
    fn a_compacted_history_starts_with_a_divider() {
        let history = vec![
            user(vec![Block::text(format!(
                "{CONTEXT_SUMMARY_PREFIX}We fixed the parser."
            ))]),
            user(vec![Block::text("continue")]),
        ];
        let mut t = Transcript::new(Theme::new(false));
        t.replay(&history);
        assert_eq!(
            describe(&t),
            ["── earlier conversation compacted ──", "prompt: continue"]
        );
    }

    #[test]
    fn reminders_are_cut_out() {
        assert_eq!(without_reminders("plain"), "plain");
        assert_eq!(
            without_reminders("a<system-reminder>x</system-reminder>b<system-reminder>y"),
            "ab"
        );
    }
}
