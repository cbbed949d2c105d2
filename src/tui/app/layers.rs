//! The layers stacked above the base screen (transcript, composer, status line): the
//! permission popup with the request it answers, the pickers, the setup screen and the
//! trust question. A key goes to the top layer; rendering draws the base, then each layer.
//! This module also builds a permission request's preview (the Edit/Write diff, the Bash
//! command) from the tool's input and the file on disk.

use std::path::Path;

use serde_json::Value;

use super::permission::PermissionPopup;
use super::picker::Picker;
use super::setup::SetupScreen;
use super::trust::TrustPrompt;
use crate::sdk::PermissionRequest;
use crate::tui::diff::DiffView;
use crate::tui::theme::Theme;
use crate::tui::transcript::summarize_input;

/// What a picker's choice is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PickerPurpose {
    /// `robota --resume` at start, or `/resume`.
    Session,
    /// `/model`.
    Model,
}

/// One layer above the base screen.
pub enum Layer {
    Permission {
        popup: PermissionPopup,
        request: PermissionRequest,
    },
    Picker {
        picker: Picker,
        purpose: PickerPurpose,
    },
    Setup(SetupScreen),
    Trust(TrustPrompt),
}

impl Layer {
    /// Whether the layer covers the whole screen (above the status line) rather than
    /// floating over the transcript.
    pub fn is_full_screen(&self) -> bool {
        !matches!(self, Layer::Permission { .. })
    }
}

/// The popup asking about `request`, with a diff for Edit/Write (against the file as it
/// is now, relative paths under `cwd`, drawn for a popup `width` wide) and the whole
/// command for Bash.
pub fn permission_popup(
    request: &PermissionRequest,
    cwd: &Path,
    width: u16,
    theme: &Theme,
) -> PermissionPopup {
    let input = &request.input;
    let field = |key: &str| input.get(key).and_then(Value::as_str);
    let preview = match request.tool_name.as_str() {
        "Edit" | "Write" => file_preview(&request.tool_name, input, cwd)
            .map(|diff| diff.render(width.saturating_sub(2).max(20), true, theme))
            .unwrap_or_default(),
        // A one-line command is already the summary.
        "Bash" => field("command")
            .filter(|command| command.trim().contains('\n'))
            .map(|command| {
                command
                    .lines()
                    .map(|l| ratatui::text::Line::from(format!("  {l}")))
                    .collect()
            })
            .unwrap_or_default(),
        _ => Vec::new(),
    };
    let mut summary = summarize_input(&request.tool_name, input);
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

/// The change an Edit or Write would make, as a diff; `None` when the input is not one
/// (the tool will report the error itself).
fn file_preview(tool: &str, input: &Value, cwd: &Path) -> Option<DiffView> {
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn edit_previews_diff_the_file_on_disk_and_write_of_a_new_file_is_all_additions() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.txt"), "one\ntwo\nthree\n").unwrap();
        let edit = json!({"file_path": "a.txt", "old_string": "two", "new_string": "2"});
        let diff = file_preview("Edit", &edit, dir.path()).unwrap();
        assert_eq!(diff.counts(), (1, 1));
        let write = json!({"file_path": "new.txt", "content": "x\ny\n"});
        let diff = file_preview("Write", &write, dir.path()).unwrap();
        assert_eq!(diff.counts(), (2, 0));
        let bad = json!({"file_path": "a.txt"});
        assert!(file_preview("Edit", &bad, dir.path()).is_none());
    }
}
