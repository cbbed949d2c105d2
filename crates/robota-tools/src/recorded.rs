//! The display of a finished call rebuilt from what a session log keeps — the call's input
//! and the text its result gave the model — for a resumed or rewound transcript and a
//! client loading a session: an Edit's diff at the file's own line numbers (from the
//! numbered snippet its result carries), a created file, a todo list, a command that went
//! on in the background. A result these tools did not write this way has no display.

use serde_json::Value;

use super::background_note::parse_background_note;
use super::edit::SNIPPET_HEADER;
use robota_core::ToolDisplay;

const CREATED: &str = "File created successfully at: ";

/// The display the call `name(input)` had live, as far as its result's text (`content`)
/// and input tell it; `None` for a failed call or one with nothing to show but its text.
pub fn recorded_display(name: &str, input: &Value, content: &str) -> Option<ToolDisplay> {
    let field = |key: &str| input.get(key).and_then(Value::as_str);
    match name {
        "Edit" | "Write" if content.starts_with(CREATED) => Some(ToolDisplay::FileDiff {
            file_path: field("file_path")?.to_string(),
            before: None,
            after: field(if name == "Edit" {
                "new_string"
            } else {
                "content"
            })?
            .to_string(),
        }),
        "Edit" => edit_diff(input, content),
        "TodoWrite" => Some(ToolDisplay::Todos {
            todos: serde_json::from_value(input.get("todos")?.clone()).ok()?,
        }),
        "Bash" => parse_background_note(content),
        _ => None,
    }
}

/// An Edit's diff: the snippet its result shows is the file after the edit; putting
/// `old_string` back where `new_string` is gives the same lines before it. Both start with
/// blank lines up to the snippet's first line number, so the diff's numbers are the file's
/// (the blank lines are equal on both sides and never shown: the snippet has more leading
/// context than the diff). Without a snippet to place it, the strings themselves.
fn edit_diff(input: &Value, content: &str) -> Option<ToolDisplay> {
    let field = |key: &str| input.get(key).and_then(Value::as_str);
    let file_path = field("file_path")?.to_string();
    let old = field("old_string")?.replace('\r', "");
    let new = field("new_string")?.replace('\r', "");
    let placed = snippet_of(content).and_then(|(first_line, after)| {
        if new.is_empty() || !after.contains(&new) {
            return None;
        }
        let before = if input.get("replace_all").and_then(Value::as_bool) == Some(true) {
            after.replace(&new, &old)
        } else {
            after.replacen(&new, &old, 1)
        };
        let padding = "\n".repeat(first_line.saturating_sub(1));
        Some((format!("{padding}{before}"), format!("{padding}{after}")))
    });
    let (before, after) = placed.unwrap_or((old, new));
    Some(ToolDisplay::FileDiff {
        file_path,
        before: Some(before),
        after,
    })
}

/// The first line number of an Edit result's snippet and its lines' text.
fn snippet_of(content: &str) -> Option<(usize, String)> {
    let (_, numbered) = content.split_once(SNIPPET_HEADER)?;
    let mut first_line = None;
    let mut text = String::new();
    for line in numbered.lines() {
        let (number, line) = line.split_once('\t')?;
        let number: usize = number.trim().parse().ok()?;
        first_line.get_or_insert(number);
        text.push_str(line);
        text.push('\n');
    }
    Some((first_line?, text))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::call;
    use crate::{BashTool, EditTool, FileReadTracker, ReadTool};
    use serde_json::json;

    #[tokio::test]
    async fn an_edits_recorded_diff_is_its_live_diff_at_the_files_line_numbers() {
        let dir = tempfile::tempdir().unwrap();
        let lines: Vec<String> = (1..=40).map(|n| format!("line {n}")).collect();
        std::fs::write(dir.path().join("a.txt"), lines.join("\n") + "\n").unwrap();
        let input = json!({
            "file_path": "a.txt",
            "old_string": "line 20\nline 21\n",
            "new_string": "twenty\n",
        });
        let tracker = FileReadTracker::new();
        let read = json!({"file_path": "a.txt"});
        call(&ReadTool::new(tracker.clone()), dir.path(), read).await;
        let out = call(&EditTool::new(tracker), dir.path(), input.clone()).await;
        assert!(!out.is_error, "{}", out.content);
        let Some(ToolDisplay::FileDiff { before, after, .. }) =
            recorded_display("Edit", &input, &out.content)
        else {
            panic!("no diff from {:?}", out.content);
        };
        let (before, after) = (before.unwrap(), after);
        // Same lines at the same numbers as the file before and after.
        let nth = |text: &str, n: usize| text.lines().nth(n - 1).map(str::to_string);
        assert_eq!(nth(&before, 20).as_deref(), Some("line 20"));
        assert_eq!(nth(&before, 21).as_deref(), Some("line 21"));
        assert_eq!(nth(&after, 20).as_deref(), Some("twenty"));
        assert_eq!(nth(&after, 21).as_deref(), Some("line 22"));
        assert_eq!(nth(&after, 16).as_deref(), Some("line 16"));
    }

    #[test]
    fn a_result_without_a_snippet_falls_back_to_the_strings() {
        let input = json!({"file_path": "a.txt", "old_string": "x = 1\n", "new_string": ""});
        let display = recorded_display("Edit", &input, "The file a.txt has been updated.");
        assert_eq!(
            display,
            Some(ToolDisplay::FileDiff {
                file_path: "a.txt".into(),
                before: Some("x = 1\n".into()),
                after: String::new(),
            })
        );
    }

    #[test]
    fn created_files_todos_and_other_tools() {
        let write = json!({"file_path": "n.txt", "content": "hi\n"});
        assert_eq!(
            recorded_display("Write", &write, "File created successfully at: /p/n.txt"),
            Some(ToolDisplay::FileDiff {
                file_path: "n.txt".into(),
                before: None,
                after: "hi\n".into()
            })
        );
        // An overwrite's earlier text is not in the log: its text stays.
        assert_eq!(
            recorded_display("Write", &write, "The file /p/n.txt has been updated."),
            None
        );
        let todos = json!({"todos": [{"content": "Test", "status": "pending"}]});
        assert!(matches!(
            recorded_display("TodoWrite", &todos, "Todos have been modified successfully."),
            Some(ToolDisplay::Todos { todos }) if todos.len() == 1
        ));
        assert_eq!(recorded_display("Read", &json!({}), "text"), None);
    }

    #[tokio::test]
    async fn a_background_command_reads_back_as_its_job() {
        let dir = tempfile::tempdir().unwrap();
        let input = json!({"command": "true", "run_in_background": true});
        let out = call(&BashTool::new(dir.path()), dir.path(), input.clone()).await;
        assert!(
            matches!(&out.display, Some(ToolDisplay::Background { job_id, .. }) if job_id == "bash_1")
        );
        assert_eq!(recorded_display("Bash", &input, &out.content), out.display);
    }
}
