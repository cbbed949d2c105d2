//! A permission request made into its popup: the tool, a one-line summary (with the
//! reason), the rule "don't ask again" saves, and a preview — the diff of an Edit or
//! Write, the whole command of a multi-line Bash command.

use std::path::Path;

use ratatui::text::Line;
use serde_json::Value;

use super::PermissionPopup;
use crate::sdk::PermissionRequest;
use crate::tui::diff::DiffView;
use crate::tui::theme::Theme;
use crate::tui::transcript::summarize_input;

/// The popup asking about `request`, with a diff for Edit/Write (relative paths under
/// `cwd`, drawn for a popup `width` wide) and the whole command for Bash.
pub fn permission_popup(
    request: &PermissionRequest,
    cwd: &Path,
    width: u16,
    theme: &Theme,
) -> PermissionPopup {
    let preview = match file_preview(request, cwd) {
        Some(diff) => diff.render(width.saturating_sub(2).max(20), true, theme),
        None => command_preview(request),
    };
    let mut summary = summarize_input(&request.tool_name, &request.input);
    if !request.reason.is_empty() {
        summary = format!("{summary}  ({})", request.reason);
    }
    PermissionPopup::new(
        &request.tool_name,
        summary,
        preview,
        request.suggested_rule.clone(),
        theme.color,
    )
}

/// The change an Edit or Write request would make, as a diff against the file as it is
/// now; `None` for other tools and for an input that is not one (the tool will report the
/// error itself). The one place the preview is computed.
fn file_preview(request: &PermissionRequest, cwd: &Path) -> Option<DiffView> {
    let tool = request.tool_name.as_str();
    if !matches!(tool, "Edit" | "Write") {
        return None;
    }
    let input = &request.input;
    let path = input.get("file_path")?.as_str()?;
    let full = cwd.join(path);
    let before = std::fs::read_to_string(&full).ok();
    let after = if tool == "Write" {
        input.get("content")?.as_str()?.to_string()
    } else {
        let old = input.get("old_string")?.as_str()?;
        let new = input.get("new_string")?.as_str()?;
        let current = before.as_deref()?;
        let all = input
            .get("replace_all")
            .and_then(Value::as_bool)
            .unwrap_or(false);
        if all {
            current.replace(old, new)
        } else {
            current.replacen(old, new, 1)
        }
    };
    Some(DiffView::new(path, before.as_deref(), &after))
}

/// A multi-line Bash command, whole (a one-line command is already the summary).
fn command_preview(request: &PermissionRequest) -> Vec<Line<'static>> {
    if request.tool_name != "Bash" {
        return Vec::new();
    }
    request
        .input
        .get("command")
        .and_then(Value::as_str)
        .filter(|command| command.trim().contains('\n'))
        .map(|command| {
            command
                .lines()
                .map(|l| Line::from(format!("  {l}")))
                .collect()
        })
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn request(tool: &str, input: Value) -> PermissionRequest {
        let (tx, _rx) = tokio::sync::oneshot::channel();
        PermissionRequest::new(
            "t1".into(),
            tool.into(),
            input,
            String::new(),
            String::new(),
            None,
            tx,
        )
    }

    #[test]
    fn edit_previews_diff_the_file_on_disk_and_write_of_a_new_file_is_all_additions() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.txt"), "one\ntwo\nthree\n").unwrap();
        let edit = json!({"file_path": "a.txt", "old_string": "two", "new_string": "2"});
        let diff = file_preview(&request("Edit", edit.clone()), dir.path()).unwrap();
        assert_eq!(diff.counts(), (1, 1));
        let write = json!({"file_path": "new.txt", "content": "x\ny\n"});
        let diff = file_preview(&request("Write", write), dir.path()).unwrap();
        assert_eq!(diff.counts(), (2, 0));
        let bad = json!({"file_path": "a.txt"});
        assert!(file_preview(&request("Edit", bad), dir.path()).is_none());
        assert!(file_preview(&request("Bash", edit), dir.path()).is_none());
    }

    #[test]
    fn a_multi_line_bash_command_is_shown_whole_and_a_one_line_one_not() {
        let theme = Theme::new(false);
        let cwd = Path::new("/nonexistent");
        let multi = request("Bash", json!({"command": "cd x\nmake"}));
        let popup = permission_popup(&multi, cwd, 80, &theme);
        assert_eq!(popup.preview.len(), 2);
        let single = request("Bash", json!({"command": "make"}));
        assert!(
            permission_popup(&single, cwd, 80, &theme)
                .preview
                .is_empty()
        );
        let other = request("Grep", json!({"command": "a\nb"}));
        assert!(permission_popup(&other, cwd, 80, &theme).preview.is_empty());
    }
}
