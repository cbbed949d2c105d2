//! A permission request made into its popup: the tool, a one-line summary (with the
//! reason), the rule "don't ask again" saves, and a preview — the diff of an Edit or
//! Write, the whole command of a multi-line Bash command.

use std::path::Path;

use ratatui::text::Line;
use serde_json::Value;

use super::PermissionPopup;
use crate::diff::DiffView;
use crate::theme::Theme;
use crate::transcript::summarize_input;
use robota_core::ToolDisplay;
use robota_sdk::PermissionRequest;

/// The popup asking about `request`, with a diff for Edit/Write (relative paths under
/// `cwd`, drawn for a popup `width` wide) and the whole command for Bash.
pub fn permission_popup(
    request: &PermissionRequest,
    cwd: &Path,
    width: u16,
    theme: &Theme,
) -> PermissionPopup {
    let diff = file_preview(request, cwd);
    let preview = match &diff {
        Some(diff) => diff.render(width.saturating_sub(2).max(20), true, theme),
        None => command_preview(request),
    };
    let mut summary = if request.tool_name == robota_core::permission::PLAN_APPROVAL_TOOL {
        "Here is robota's plan. Ready to code?".to_string()
    } else {
        summarize_input(&request.tool_name, &request.input)
    };
    if !request.reason.is_empty() {
        summary = format!("{summary}  ({})", request.reason);
    }
    if let Some(subagent) = &request.subagent {
        summary = format!("subagent {subagent} asks — {summary}");
    }
    let popup = PermissionPopup::new(
        &request.tool_name,
        summary,
        preview,
        request.suggested_rule.clone(),
        theme.color,
    );
    match diff {
        Some(diff) => popup.with_diff(diff, *theme),
        None => popup,
    }
}

/// The change the request's tool worked out (the diff of an Edit or Write, exactly what it
/// will write), with its path shown relative to `cwd`; `None` when the tool gave none.
fn file_preview(request: &PermissionRequest, cwd: &Path) -> Option<DiffView> {
    let Some(ToolDisplay::FileDiff {
        file_path,
        before,
        after,
    }) = &request.preview
    else {
        return None;
    };
    let shown = Path::new(file_path)
        .strip_prefix(cwd)
        .map_or_else(|_| file_path.clone(), |p| p.display().to_string());
    Some(DiffView::new(&shown, before.as_deref(), after))
}

/// A multi-line Bash command, whole (a one-line command is already the summary); the plan
/// of a plan-approval request.
fn command_preview(request: &PermissionRequest) -> Vec<Line<'static>> {
    if request.tool_name == robota_core::permission::PLAN_APPROVAL_TOOL {
        let plan = request
            .input
            .get("plan")
            .and_then(Value::as_str)
            .unwrap_or("");
        return plan.lines().map(|l| Line::from(format!("  {l}"))).collect();
    }
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
        with_preview(tool, input, None)
    }

    fn with_preview(tool: &str, input: Value, preview: Option<ToolDisplay>) -> PermissionRequest {
        let (tx, _rx) = tokio::sync::oneshot::channel();
        PermissionRequest::new(
            "t1".into(),
            tool.into(),
            input,
            String::new(),
            String::new(),
            preview,
            tx,
        )
    }

    #[test]
    fn the_diff_is_the_tools_own_preview_with_a_relative_path() {
        let dir = Path::new("/project");
        let diff = ToolDisplay::FileDiff {
            file_path: "/project/src/a.txt".into(),
            before: Some("one\r\ntwo\r\n".into()),
            after: "one\r\n2\r\n".into(),
        };
        let edit = json!({"file_path": "src/a.txt", "old_string": "two", "new_string": "2"});
        let view = file_preview(&with_preview("Edit", edit.clone(), Some(diff)), dir).unwrap();
        assert_eq!(view.counts(), (1, 1));
        assert_eq!(view.path(), "src/a.txt");
        // Without the tool's preview nothing is guessed from the input.
        assert!(file_preview(&request("Edit", edit), dir).is_none());
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
