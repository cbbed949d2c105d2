//! `/export [file]`: the whole session as a Markdown transcript — each prompt and answer,
//! tool calls with their input and (shortened) results, from the first prompt on (what a
//! compaction summarised is read back from the log) — written to `file` (relative to the
//! session's directory), or, with no file, given as the command's output for the client
//! to show or copy (nothing is written unasked).

use std::fmt::Write;
use std::path::PathBuf;

use robota_core::{Block, Message, Role};
use robota_session::Session;

use super::CommandError;

/// Characters of a tool result kept in the transcript.
const RESULT_CHARS: usize = 2_000;

/// The transcript (no file named), or writes it and says where.
pub fn export(session: &Session, args: &str) -> Result<String, CommandError> {
    let whole = session
        .log_path()
        .and_then(|log| robota_session::replay::whole_history(&log).ok());
    let history = whole.as_deref().unwrap_or(session.history());
    let text = transcript(
        session.name(),
        session.id(),
        &session.config().model,
        history,
    );
    let path = match args.trim() {
        "" => return Ok(text),
        name => {
            let name = PathBuf::from(name);
            if name.is_absolute() {
                name
            } else {
                session.config().cwd.join(name)
            }
        }
    };
    if let Err(source) = std::fs::write(&path, text) {
        return Err(CommandError::Export { path, source });
    }
    Ok(format!("Exported the conversation to {}", path.display()))
}

/// The Markdown transcript of `history`.
pub fn transcript(name: Option<&str>, id: &str, model: &str, history: &[Message]) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "# {}\n", name.unwrap_or("robota session"));
    let _ = writeln!(out, "- Session: `{id}`\n- Model: `{model}`\n");
    for message in history {
        let heading = match message.role {
            Role::User
                if message
                    .content
                    .iter()
                    .all(|b| matches!(b, Block::ToolResult { .. })) =>
            {
                None
            }
            Role::User => Some("## You"),
            Role::Assistant => Some("## robota"),
        };
        if let Some(heading) = heading {
            let _ = writeln!(out, "{heading}\n");
        }
        for block in &message.content {
            match block {
                Block::Text { text, .. } if !text.trim().is_empty() => {
                    let _ = writeln!(out, "{}\n", text.trim_end());
                }
                Block::ToolUse { name, input, .. } => {
                    let _ = writeln!(out, "**{name}** `{input}`\n");
                }
                Block::ToolResult {
                    content, is_error, ..
                } => {
                    let shown: String = content.chars().take(RESULT_CHARS).collect();
                    let more = if shown.len() < content.len() {
                        "\n…"
                    } else {
                        ""
                    };
                    let label = if *is_error { "Error" } else { "Result" };
                    let _ = writeln!(out, "{label}:\n\n```\n{}{more}\n```\n", shown.trim_end());
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
    fn prompts_answers_and_tool_calls_in_order() {
        let history = vec![
            Message::user_text("what is in a.txt?"),
            Message::new(
                Role::Assistant,
                vec![
                    Block::text("Reading."),
                    Block::ToolUse {
                        id: "t1".into(),
                        name: "Read".into(),
                        input: json!({"file_path": "a.txt"}),
                    },
                ],
            ),
            Message::new(
                Role::User,
                vec![Block::ToolResult {
                    tool_use_id: "t1".into(),
                    content: "alpha".into(),
                    is_error: false,
                }],
            ),
            Message::new(Role::Assistant, vec![Block::text("It says alpha.")]),
        ];
        let text = transcript(Some("my task"), "abc", "m", &history);
        let order = [
            "# my task",
            "## You",
            "what is in a.txt?",
            "## robota",
            "**Read** `{\"file_path\":\"a.txt\"}`",
            "Result:\n\n```\nalpha\n```",
            "It says alpha.",
        ];
        let mut at = 0;
        for needle in order {
            let found = text[at..]
                .find(needle)
                .unwrap_or_else(|| panic!("{needle} in {text}"));
            at += found + needle.len();
        }
        assert_eq!(
            text.matches("## You").count(),
            1,
            "tool results are no prompt"
        );
    }
}
