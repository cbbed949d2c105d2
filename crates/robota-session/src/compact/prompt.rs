//! The text of a summary request: the conversation as the summariser reads it, cut into
//! stages that each fit the request's budget, what the summary must keep, and what is taken
//! from the answer (the `<summary>` part, the TodoWrite list appended verbatim).

use robota_core::truncate::truncate_middle;
use robota_core::{Block, Message, Role, TodoItem};

/// What the summary must keep (Claude Code's sections, in its order).
const SUMMARY_INSTRUCTIONS: &str = "Your task is to create a detailed summary of the conversation above. It will replace the conversation: the agent continues the work from this summary alone (the system prompt and project instructions stay), so keep everything needed to go on without losing context.

Write the summary in these sections:
1. Primary request and intent: the user's objective, and every request and instruction the user gave, quoted verbatim in order.
2. Key decisions and constraints: what was decided or agreed, and the constraints and preferences the user stated.
3. Files and code: every file read, created or changed, with what matters about it (the changes made, and short code snippets where they are needed to go on).
4. Errors and fixes: each error met and how it was solved (or that it is not solved yet), including what the user said about it.
5. Pending tasks: what the user asked for that is not done yet.
6. Current state: exactly what was being worked on just before this summary.
7. Next step: the next step, in line with the user's latest request (quote it); none if the work is done.

Answer with the summary only: no preamble, no tool calls.";

/// Put before a later stage's part of the conversation: the summary so far.
const EARLIER_SUMMARY_INTRO: &str = "The conversation is summarised in parts. This is the summary of the parts before the one below; merge it into your summary (keep everything it says that still matters):";

/// Tool results in the text the summariser reads are cut to this many characters.
const TOOL_RESULT_CHARS: usize = 2_000;

/// Share of a stage's budget the summary of the earlier stages may take.
const EARLIER_SUMMARY_SHARE: usize = 4;

/// The summary request: the summary of earlier stages (if any), this stage's part of the
/// conversation, then what the summary must keep, the project's Compact Instructions and the
/// user's focus.
pub fn summary_prompt(
    earlier: Option<&str>,
    conversation: &str,
    instructions: Option<&str>,
    focus: &str,
) -> String {
    let mut prompt = String::new();
    if let Some(earlier) = earlier {
        prompt.push_str(EARLIER_SUMMARY_INTRO);
        prompt.push_str(&format!("\n<summary>\n{earlier}\n</summary>\n\n"));
    }
    prompt.push_str(&format!(
        "<conversation>\n{conversation}\n</conversation>\n\n"
    ));
    prompt.push_str(SUMMARY_INSTRUCTIONS);
    if let Some(instructions) = instructions.map(str::trim).filter(|i| !i.is_empty()) {
        prompt.push_str("\n\nCompact Instructions from the project (follow them):\n");
        prompt.push_str(instructions);
    }
    let focus = focus.trim();
    if !focus.is_empty() {
        prompt.push_str("\n\nThe user asks this summary to focus on: ");
        prompt.push_str(focus);
    }
    prompt
}

/// The earlier stages' summary as a later stage carries it: at most a quarter of the
/// stage's budget (head and tail kept).
pub fn earlier_for_stage(summary: &str, budget_chars: usize) -> String {
    truncate_middle(summary, budget_chars / EARLIER_SUMMARY_SHARE)
}

/// The conversation cut into stages of at most `budget_chars` characters each, at message
/// boundaries (a single message longer than a stage keeps its head and tail); one stage when
/// it all fits. A later stage leaves room for the summary of the ones before it.
pub fn stages(messages: &[Message], budget_chars: usize) -> Vec<String> {
    let whole = budget_chars.max(1);
    let later = whole - whole / EARLIER_SUMMARY_SHARE;
    let mut out: Vec<String> = Vec::new();
    let mut current = String::new();
    for text in messages.iter().map(message_text).filter(|t| !t.is_empty()) {
        let limit = if out.is_empty() { whole } else { later };
        if !current.is_empty() && current.len() + text.len() > limit {
            out.push(take_trimmed(&mut current));
        }
        let limit = if out.is_empty() { whole } else { later };
        current.push_str(&truncate_middle(&text, limit));
    }
    if !current.is_empty() || out.is_empty() {
        out.push(take_trimmed(&mut current));
    }
    out
}

fn take_trimmed(text: &mut String) -> String {
    let mut taken = std::mem::take(text);
    taken.truncate(taken.trim_end().len());
    taken
}

/// The conversation as the summariser reads it: each message under its role, tool calls
/// with their input, tool results cut to 2,000 characters; thinking left out.
pub fn conversation_text(messages: &[Message]) -> String {
    let mut out: String = messages.iter().map(message_text).collect();
    out.truncate(out.trim_end().len());
    out
}

/// One message as the summariser reads it (empty for a message with nothing to read).
fn message_text(message: &Message) -> String {
    let role = match message.role {
        Role::User => "User",
        Role::Assistant => "Assistant",
    };
    let mut out = String::new();
    for block in &message.content {
        match block {
            Block::Text { text, .. } if !text.trim().is_empty() => {
                out.push_str(&format!("[{role}]\n{}\n\n", text.trim_end()));
            }
            Block::ToolUse { id, name, input } => {
                out.push_str(&format!("[Tool call {name} {id}]\n{input}\n\n"));
            }
            Block::ToolResult {
                tool_use_id,
                content,
                is_error,
            } => {
                let kind = if *is_error {
                    "Tool error"
                } else {
                    "Tool result"
                };
                let content = truncate_middle(content, TOOL_RESULT_CHARS);
                out.push_str(&format!("[{kind} {tool_use_id}]\n{content}\n\n"));
            }
            Block::Image { .. } => out.push_str(&format!("[{role}]\n[image]\n\n")),
            _ => {}
        }
    }
    out
}

/// The text inside `<summary>…</summary>` when the model wrapped it so (after an analysis),
/// else the whole answer; trimmed.
pub fn extract_summary(text: &str) -> &str {
    let inner = text
        .split_once("<summary>")
        .map(|(_, rest)| rest.split_once("</summary>").map_or(rest, |(s, _)| s));
    inner.unwrap_or(text).trim()
}

/// The summary followed by the TodoWrite list exactly as it stands (never the model's
/// retelling of it).
pub fn with_todo_list(summary: &str, todos: &[TodoItem]) -> String {
    if todos.is_empty() {
        return summary.to_string();
    }
    let list = serde_json::to_string_pretty(todos).unwrap_or_default();
    format!("{summary}\n\nThe current todo list (TodoWrite), exactly as it stands:\n{list}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn todo(content: &str, status: &str) -> TodoItem {
        serde_json::from_value(json!({"content": content, "status": status, "activeForm": content}))
            .unwrap()
    }

    #[test]
    fn the_prompt_holds_the_conversation_the_instructions_and_the_focus() {
        let call = Message::new(
            Role::Assistant,
            vec![
                Block::Thinking {
                    thinking: "secret plan".into(),
                    signature: "s".into(),
                },
                Block::ToolUse {
                    id: "t1".into(),
                    name: "Read".into(),
                    input: json!({"file_path": "src/api.rs"}),
                },
            ],
        );
        let result = Message::new(
            Role::User,
            vec![Block::ToolResult {
                tool_use_id: "t1".into(),
                content: "x".repeat(10_000).into(),
                is_error: false,
            }],
        );
        let messages = vec![Message::user_text("port the API to v2"), call, result];
        let prompt = summary_prompt(
            None,
            &conversation_text(&messages),
            Some("Keep the endpoint names."),
            "the API details",
        );
        assert!(prompt.contains("[User]\nport the API to v2"), "{prompt}");
        assert!(prompt.contains("[Tool call Read t1]\n{\"file_path\":\"src/api.rs\"}"));
        assert!(prompt.contains("output truncated: 10000 chars total"));
        assert!(!prompt.contains("secret plan"));
        assert!(prompt.contains("quoted verbatim"));
        assert!(!prompt.contains("summarised in parts"));
        assert!(prompt.contains(
            "Compact Instructions from the project (follow them):\nKeep the endpoint names."
        ));
        assert!(prompt.ends_with("focus on: the API details"));
    }

    #[test]
    fn a_conversation_beyond_the_budget_is_cut_into_stages_that_each_fit() {
        let messages: Vec<Message> = (0..40)
            .map(|i| Message::user_text(format!("message {i} {}", "a".repeat(5_000))))
            .collect();
        let parts = stages(&messages, 40_000);
        assert!(parts.len() >= 5, "{}", parts.len());
        assert!(parts.iter().all(|p| p.len() <= 40_000));
        assert!(parts[1..].iter().all(|p| p.len() <= 30_000));
        let all = parts.join("\n");
        assert!((0..40).all(|i| all.contains(&format!("message {i} "))));
        assert!(parts[0].starts_with("[User]\nmessage 0 "));
        let earlier = earlier_for_stage(&"s".repeat(50_000), 40_000);
        assert!(earlier.len() < 10_200, "{}", earlier.len());
        let prompt = summary_prompt(Some(&earlier), &parts[1], None, "");
        assert!(prompt.starts_with("The conversation is summarised in parts."));
    }

    #[test]
    fn one_message_longer_than_a_stage_keeps_its_head_and_tail() {
        let messages = vec![
            Message::user_text(format!("OBJECTIVE {} LATEST", "a".repeat(100_000))),
            Message::user_text("short"),
        ];
        let parts = stages(&messages, 20_000);
        assert!(parts[0].len() < 20_200, "{}", parts[0].len());
        assert!(parts[0].contains("OBJECTIVE") && parts[0].contains("LATEST"));
        assert!(parts.concat().contains("short"));
        assert_eq!(stages(&[], 1_000), vec![String::new()]);
    }

    #[test]
    fn the_summary_tag_is_taken_when_present_and_todos_follow_verbatim() {
        assert_eq!(
            extract_summary("<analysis>x</analysis>\n<summary>\nS\n</summary>"),
            "S"
        );
        assert_eq!(extract_summary("  plain  "), "plain");
        assert_eq!(with_todo_list("S", &[]), "S");
        let with = with_todo_list("S", &[todo("write tests", "in_progress")]);
        assert!(with.starts_with("S\n\nThe current todo list"));
        assert!(with.contains("\"content\": \"write tests\""));
        assert!(with.contains("\"status\": \"in_progress\""));
    }
}
