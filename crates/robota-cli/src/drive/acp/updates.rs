//! What robota's session events and recorded history look like as ACP `session/update`s:
//! message and thought chunks, tool calls (kind, title, locations, status, diff or text
//! content), the TodoWrite plan, and the commands a client may offer. Pure mapping, no I/O.

use agent_client_protocol::v1::schema::{
    AvailableCommand, AvailableCommandInput, ContentBlock, ContentChunk, Diff, Plan, PlanEntry,
    PlanEntryPriority, PlanEntryStatus, SessionUpdate, TextContent, ToolCall, ToolCallContent,
    ToolCallLocation, ToolCallStatus, ToolCallUpdate, ToolCallUpdateFields, ToolKind,
    UnstructuredCommandInput,
};
use serde_json::Value;

use crate::core::{Block, Message, Role, TodoItem, ToolDisplay};
use crate::sdk::commands::{CommandEntry, CommandScope};
use crate::sdk::recorded_display;

/// How much of a tool's text output goes into its update (the model saw all of it).
const OUTPUT_CAP: usize = 4_000;

pub fn text_block(text: impl Into<String>) -> ContentBlock {
    ContentBlock::Text(TextContent::new(text.into()))
}

pub fn agent_text(text: impl Into<String>) -> SessionUpdate {
    SessionUpdate::AgentMessageChunk(ContentChunk::new(text_block(text)))
}

pub fn agent_thought(text: impl Into<String>) -> SessionUpdate {
    SessionUpdate::AgentThoughtChunk(ContentChunk::new(text_block(text)))
}

pub fn user_text(text: impl Into<String>) -> SessionUpdate {
    SessionUpdate::UserMessageChunk(ContentChunk::new(text_block(text)))
}

/// The ACP kind of a robota tool (MCP and unknown tools are `other`).
pub fn tool_kind(name: &str) -> ToolKind {
    match name {
        "Read" => ToolKind::Read,
        "Write" | "Edit" | "MultiEdit" | "NotebookEdit" => ToolKind::Edit,
        "Bash" | "BashOutput" | "KillShell" => ToolKind::Execute,
        "Glob" | "Grep" => ToolKind::Search,
        "WebFetch" | "WebSearch" | "web_search" => ToolKind::Fetch,
        "TodoWrite" => ToolKind::Think,
        "ExitPlanMode" => ToolKind::SwitchMode,
        _ => ToolKind::Other,
    }
}

fn str_field<'a>(input: &'a Value, key: &str) -> Option<&'a str> {
    input
        .get(key)
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
}

/// A short title for a call, as an editor shows it: the tool and its main argument.
pub fn tool_title(name: &str, input: &Value) -> String {
    let argument = match name {
        "Read" | "Write" | "Edit" | "MultiEdit" => str_field(input, "file_path"),
        "Bash" => str_field(input, "command"),
        "Glob" | "Grep" => str_field(input, "pattern"),
        "WebFetch" => str_field(input, "url"),
        "WebSearch" => str_field(input, "query"),
        _ => None,
    };
    match argument {
        Some(argument) => {
            let first_line = argument.lines().next().unwrap_or_default();
            let short: String = first_line.chars().take(120).collect();
            format!("{name} {short}")
        }
        None => name.to_string(),
    }
}

/// The files a call touches (with the line a Read starts at).
pub fn tool_locations(name: &str, input: &Value) -> Vec<ToolCallLocation> {
    let path = match name {
        "Read" | "Write" | "Edit" | "MultiEdit" | "NotebookEdit" => str_field(input, "file_path"),
        "Glob" | "Grep" => str_field(input, "path"),
        _ => None,
    };
    let Some(path) = path else {
        return Vec::new();
    };
    let line = (name == "Read")
        .then(|| input.get("offset").and_then(Value::as_u64))
        .flatten()
        .and_then(|l| u32::try_from(l).ok());
    vec![ToolCallLocation::new(path).line(line)]
}

/// A call the model made, before it runs: `pending`.
pub fn tool_call(id: &str, name: &str, input: &Value) -> SessionUpdate {
    SessionUpdate::ToolCall(
        ToolCall::new(id.to_string(), tool_title(name, input))
            .kind(tool_kind(name))
            .status(ToolCallStatus::Pending)
            .locations(tool_locations(name, input))
            .raw_input(input.clone()),
    )
}

/// The fields a permission question shows of its call: what it is and what it would change.
pub fn permission_call(
    id: &str,
    name: &str,
    input: &Value,
    preview: Option<&ToolDisplay>,
) -> ToolCallUpdate {
    let mut fields = ToolCallUpdateFields::new()
        .title(tool_title(name, input))
        .kind(tool_kind(name))
        .locations(tool_locations(name, input))
        .raw_input(input.clone());
    if let Some(ToolDisplay::FileDiff { .. }) = preview {
        fields = fields.content(display_content(preview));
    }
    ToolCallUpdate::new(id.to_string(), fields)
}

pub fn status_update(id: &str, status: ToolCallStatus) -> SessionUpdate {
    SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(
        id.to_string(),
        ToolCallUpdateFields::new().status(status),
    ))
}

/// A call that ended: `completed` or `failed`, with its diff (Edit, Write) or its text.
pub fn tool_finished(
    id: &str,
    content: &str,
    is_error: bool,
    display: Option<&ToolDisplay>,
) -> SessionUpdate {
    let status = if is_error {
        ToolCallStatus::Failed
    } else {
        ToolCallStatus::Completed
    };
    let mut shown = display_content(display);
    if shown.is_empty() || is_error {
        shown = text_content(content);
    }
    SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(
        id.to_string(),
        ToolCallUpdateFields::new()
            .status(status)
            .content(shown)
            .raw_output(Value::String(capped(content))),
    ))
}

fn capped(text: &str) -> String {
    if text.len() <= OUTPUT_CAP {
        return text.to_string();
    }
    let mut end = OUTPUT_CAP;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}\n…", &text[..end])
}

fn text_content(text: &str) -> Vec<ToolCallContent> {
    if text.is_empty() {
        return Vec::new();
    }
    vec![ToolCallContent::from(text_block(capped(text)))]
}

fn display_content(display: Option<&ToolDisplay>) -> Vec<ToolCallContent> {
    match display {
        Some(ToolDisplay::FileDiff {
            file_path,
            before,
            after,
        }) => vec![ToolCallContent::Diff(
            Diff::new(file_path.as_str(), after.as_str()).old_text(before.clone()),
        )],
        _ => Vec::new(),
    }
}

/// The plan a TodoWrite left.
pub fn plan(todos: &[TodoItem]) -> SessionUpdate {
    let entries = todos
        .iter()
        .map(|t| {
            let status = match t.status.as_str() {
                "completed" => PlanEntryStatus::Completed,
                "in_progress" => PlanEntryStatus::InProgress,
                _ => PlanEntryStatus::Pending,
            };
            PlanEntry::new(t.content.clone(), PlanEntryPriority::Medium, status)
        })
        .collect();
    SessionUpdate::Plan(Plan::new(entries))
}

/// The commands a session runs for any client (the full-screen UI's own ones are left
/// out): the built-ins, then its custom commands and skills.
pub fn available_commands(entries: Vec<CommandEntry>) -> SessionUpdate {
    let list = entries
        .into_iter()
        .filter(|c| c.scope == CommandScope::Session)
        .map(|c| {
            let command = AvailableCommand::new(c.name, c.description);
            if c.argument_hint.is_empty() {
                command
            } else {
                command.input(AvailableCommandInput::Unstructured(
                    UnstructuredCommandInput::new(c.argument_hint),
                ))
            }
        })
        .collect();
    SessionUpdate::AvailableCommandsUpdate(
        agent_client_protocol::v1::schema::AvailableCommandsUpdate::new(list),
    )
}

/// A recorded history as the updates that show it again (`session/load`): user text,
/// answers, thoughts, each tool call with its result, and the last plan.
pub fn replay(history: &[Message]) -> Vec<SessionUpdate> {
    let mut out = Vec::new();
    let mut names = std::collections::HashMap::new();
    for message in history {
        for block in &message.content {
            match (message.role, block) {
                (Role::User, Block::Text { text, .. }) if !text.is_empty() => {
                    out.push(user_text(text.clone()));
                }
                (Role::Assistant, Block::Text { text, .. }) if !text.is_empty() => {
                    out.push(agent_text(text.clone()));
                }
                (Role::Assistant, Block::Thinking { thinking, .. }) if !thinking.is_empty() => {
                    out.push(agent_thought(thinking.clone()));
                }
                (_, Block::ToolUse { id, name, input }) => {
                    names.insert(id.clone(), (name.clone(), input.clone()));
                    out.push(tool_call(id, name, input));
                    if name == "TodoWrite"
                        && let Some(todos) = input.get("todos")
                        && let Ok(todos) = serde_json::from_value::<Vec<TodoItem>>(todos.clone())
                    {
                        out.push(plan(&todos));
                    }
                }
                (
                    _,
                    Block::ToolResult {
                        tool_use_id,
                        content,
                        is_error,
                    },
                ) => {
                    let display = names
                        .get(tool_use_id)
                        .and_then(|(name, input)| recorded_display(name, input, content));
                    out.push(tool_finished(
                        tool_use_id,
                        content,
                        *is_error,
                        display.as_ref().filter(|_| !is_error),
                    ));
                }
                _ => {}
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn kinds_titles_and_locations_follow_the_tool() {
        assert_eq!(tool_kind("Edit"), ToolKind::Edit);
        assert_eq!(tool_kind("Bash"), ToolKind::Execute);
        assert_eq!(tool_kind("Grep"), ToolKind::Search);
        assert_eq!(tool_kind("mcp__fs__read"), ToolKind::Other);
        let read = json!({"file_path": "/p/a.rs", "offset": 12});
        assert_eq!(tool_title("Read", &read), "Read /p/a.rs");
        let loc = serde_json::to_value(tool_locations("Read", &read)).unwrap();
        assert_eq!(loc, json!([{"path": "/p/a.rs", "line": 12}]));
        assert_eq!(tool_title("Bash", &json!({"command": "ls\nrm"})), "Bash ls");
    }

    #[test]
    fn an_edit_finishes_with_a_diff_and_a_failure_with_its_text() {
        let display = ToolDisplay::FileDiff {
            file_path: "/p/a.py".into(),
            before: Some("a - b".into()),
            after: "a + b".into(),
        };
        let done = serde_json::to_value(tool_finished("t1", "ok", false, Some(&display))).unwrap();
        assert_eq!(done["sessionUpdate"], "tool_call_update");
        assert_eq!(done["status"], "completed");
        assert_eq!(
            done["content"][0],
            json!({"type": "diff", "path": "/p/a.py", "oldText": "a - b", "newText": "a + b"})
        );
        let failed = serde_json::to_value(tool_finished("t1", "no such file", true, None)).unwrap();
        assert_eq!(failed["status"], "failed");
        assert_eq!(failed["content"][0]["content"]["text"], "no such file");
    }

    #[test]
    fn history_replays_as_chunks_calls_and_results() {
        let history = vec![
            Message::new(Role::User, vec![Block::text("fix it")]),
            Message::new(
                Role::Assistant,
                vec![
                    Block::text("Looking."),
                    Block::ToolUse {
                        id: "t1".into(),
                        name: "Edit".into(),
                        input: json!({"file_path": "/p/a", "old_string": "x", "new_string": "y"}),
                    },
                ],
            ),
            Message::new(
                Role::User,
                vec![Block::ToolResult {
                    tool_use_id: "t1".into(),
                    content: "edited".into(),
                    is_error: false,
                }],
            ),
        ];
        let updates: Vec<Value> = replay(&history)
            .iter()
            .map(|u| serde_json::to_value(u).unwrap())
            .collect();
        let kinds: Vec<&str> = updates
            .iter()
            .map(|u| u["sessionUpdate"].as_str().unwrap())
            .collect();
        assert_eq!(
            kinds,
            [
                "user_message_chunk",
                "agent_message_chunk",
                "tool_call",
                "tool_call_update"
            ]
        );
        assert_eq!(updates[2]["kind"], "edit");
        assert_eq!(updates[3]["content"][0]["oldText"], "x");
    }
}
