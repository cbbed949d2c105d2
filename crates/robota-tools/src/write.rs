//! The Write tool: creates a file or replaces one the model has read (and that has not
//! changed since), atomically, keeping its permissions and CRLF line endings, and reports
//! the change as a `FileDiff` display.

use std::fs::Permissions;
use std::path::{Path, PathBuf};

use async_trait::async_trait;
use serde_json::{Value, json};

use super::file_tracker::FileReadTracker;
use super::file_write::{ExistingFile, ensure_fresh, to_crlf, uses_crlf};
use super::host::{ToolHost, load_for_replace, write_replacement};
use super::input::{ToolFailure, ToolInput, into_output, into_preview};
use super::paths::resolve;
use robota_core::{PreviewError, RiskClass, Tool, ToolContext, ToolDisplay, ToolOutput};

const DESCRIPTION: &str = "Writes a file, creating parent directories as needed, or replaces an existing file entirely. \
An existing file must have been Read in this session first (and not changed since). \
Prefer Edit for changes to existing files; only create new files (including docs) when they are needed.";

pub(crate) struct WriteTool {
    tracker: FileReadTracker,
    host: ToolHost,
}

impl WriteTool {
    pub fn new(tracker: FileReadTracker) -> Self {
        WriteTool {
            tracker,
            host: ToolHost::default(),
        }
    }

    /// Loads and writes files through what `host` offers.
    pub fn on_host(mut self, host: ToolHost) -> Self {
        self.host = host;
        self
    }

    async fn run(&self, input: &Value, ctx: &ToolContext) -> Result<ToolOutput, ToolFailure> {
        let (path, content) = request(input, ctx)?;
        let existing = load_for_replace(&self.host, &path).await?;
        let plan = plan_write(&path, existing, content, &self.tracker)?;
        apply_write(&self.host, &path, plan, &self.tracker).await
    }

    async fn plan(&self, input: &Value, ctx: &ToolContext) -> Result<ToolDisplay, ToolFailure> {
        let (path, content) = request(input, ctx)?;
        let existing = load_for_replace(&self.host, &path).await?;
        plan_write(&path, existing, content, &self.tracker).map(|plan| plan.display(&path))
    }
}

/// The file a Write names and the content it asks for.
fn request(input: &Value, ctx: &ToolContext) -> Result<(PathBuf, String), ToolFailure> {
    let input = ToolInput::parse("Write", input)?;
    let file_path = input.required_str("file_path")?;
    let content = input.required_str("content")?.to_string();
    Ok((resolve(&ctx.cwd, file_path), content))
}

/// A write worked out against the file as it is now: what the permission question shows
/// is exactly what [`apply_write`] writes.
struct PlannedWrite {
    /// The file's text before (`None`: created) and its permissions on disk, kept.
    before: Option<(String, Option<Permissions>)>,
    /// The content with the file's CRLF endings kept.
    content: String,
}

impl PlannedWrite {
    fn display(&self, path: &Path) -> ToolDisplay {
        ToolDisplay::FileDiff {
            file_path: path.display().to_string(),
            before: self.before.as_ref().map(|(text, _)| text.clone()),
            after: self.content.clone(),
        }
    }
}

fn plan_write(
    path: &Path,
    existing: Option<ExistingFile>,
    content: String,
    tracker: &FileReadTracker,
) -> Result<PlannedWrite, ToolFailure> {
    let Some(existing) = existing else {
        return Ok(PlannedWrite {
            before: None,
            content,
        });
    };
    ensure_fresh(tracker, path, &existing)?;
    let before = String::from_utf8_lossy(&existing.bytes).into_owned();
    let content = if uses_crlf(&before) && !content.contains("\r\n") {
        to_crlf(&content)
    } else {
        content
    };
    Ok(PlannedWrite {
        before: Some((before, existing.permissions)),
        content,
    })
}

async fn apply_write(
    host: &ToolHost,
    path: &Path,
    plan: PlannedWrite,
    tracker: &FileReadTracker,
) -> Result<ToolOutput, ToolFailure> {
    let display = plan.display(path);
    let permissions = plan.before.as_ref().and_then(|(_, p)| p.clone());
    write_replacement(host, tracker, path, &plan.content, permissions).await?;
    let message = match plan.before {
        None => format!("File created successfully at: {}", path.display()),
        Some(_) => format!("The file {} has been updated.", path.display()),
    };
    Ok(ToolOutput::ok(message).with_display(display))
}

#[async_trait]
impl Tool for WriteTool {
    fn name(&self) -> &str {
        "Write"
    }

    fn description(&self) -> &str {
        DESCRIPTION
    }

    fn input_schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "file_path": {"type": "string", "description": "Path of the file to write (absolute preferred)"},
                "content": {"type": "string", "description": "The full content to write"}
            },
            "required": ["file_path", "content"]
        })
    }

    fn risk(&self) -> RiskClass {
        RiskClass::Edit
    }

    fn primary_argument(&self, input: &Value) -> Option<String> {
        input.get("file_path")?.as_str().map(str::to_string)
    }

    async fn call(&self, input: Value, ctx: &ToolContext) -> ToolOutput {
        into_output(self.run(&input, ctx).await)
    }

    async fn preview(
        &self,
        input: &Value,
        ctx: &ToolContext,
    ) -> Result<Option<ToolDisplay>, PreviewError> {
        into_preview(self.plan(input, ctx).await)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::read::ReadTool;
    use crate::test_support::{assert_error_contains, assert_ok, call};
    #[cfg(unix)]
    use std::os::unix::fs::PermissionsExt;

    fn tools() -> (ReadTool, WriteTool) {
        let tracker = FileReadTracker::new();
        (ReadTool::new(tracker.clone()), WriteTool::new(tracker))
    }

    #[tokio::test]
    async fn creates_new_files_with_parents_and_a_diff_display() {
        let dir = tempfile::tempdir().unwrap();
        let (_, write) = tools();
        let out = call(
            &write,
            dir.path(),
            json!({"file_path": "new/dir/a.txt", "content": "hello\n"}),
        )
        .await;
        let path = dir.path().join("new/dir/a.txt");
        assert_eq!(
            assert_ok(&out),
            format!("File created successfully at: {}", path.display())
        );
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "hello\n");
        assert_eq!(
            out.display,
            Some(ToolDisplay::FileDiff {
                file_path: path.display().to_string(),
                before: None,
                after: "hello\n".to_string(),
            })
        );
    }

    #[tokio::test]
    async fn an_existing_file_must_be_read_first_and_unchanged_since() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.txt");
        std::fs::write(&path, "original").unwrap();
        let (read, write) = tools();
        let input = json!({"file_path": "a.txt", "content": "replaced"});

        let out = call(&write, dir.path(), input.clone()).await;
        assert_error_contains(
            &out,
            "File has not been read yet. Read it first before writing to it.",
        );
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "original");

        assert_ok(&call(&read, dir.path(), json!({"file_path": "a.txt"})).await);
        std::fs::write(&path, "changed by the user").unwrap();
        let out = call(&write, dir.path(), input.clone()).await;
        assert_error_contains(&out, "File has been modified since read");
        assert_error_contains(&out, "Read it again");

        assert_ok(&call(&read, dir.path(), json!({"file_path": "a.txt"})).await);
        let out = call(&write, dir.path(), input).await;
        assert_eq!(
            assert_ok(&out),
            format!("The file {} has been updated.", path.display())
        );
        assert!(matches!(
            &out.display,
            Some(ToolDisplay::FileDiff { before: Some(b), .. }) if b == "changed by the user"
        ));
        // The tracker knows the new content: a second write needs no re-read.
        let again = json!({"file_path": "a.txt", "content": "third"});
        assert_ok(&call(&write, dir.path(), again).await);
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "third");
    }

    #[cfg(unix)]
    #[tokio::test]
    async fn keeps_permissions_and_crlf_and_leaves_no_temp_files() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("script.sh");
        std::fs::write(&path, "echo a\r\necho b\r\n").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        let (read, write) = tools();
        assert_ok(&call(&read, dir.path(), json!({"file_path": "script.sh"})).await);
        let out = call(
            &write,
            dir.path(),
            json!({"file_path": "script.sh", "content": "echo c\necho d\n"}),
        )
        .await;
        assert_ok(&out);
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "echo c\r\necho d\r\n"
        );
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o755);
        let entries: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(entries.len(), 1, "a temp file was left behind");
    }

    #[tokio::test]
    async fn invalid_input_and_directories() {
        let dir = tempfile::tempdir().unwrap();
        let (_, write) = tools();
        let out = call(&write, dir.path(), json!({"file_path": "a.txt"})).await;
        assert_eq!(
            out.content,
            "Invalid input for Write: missing required field \"content\""
        );
        let out = call(
            &write,
            dir.path(),
            json!({"file_path": "a", "content": ["x"]}),
        )
        .await;
        assert_error_contains(&out, "\"content\" must be a string, got an array");
        let out = call(
            &write,
            dir.path(),
            json!({"file_path": ".", "content": "x"}),
        )
        .await;
        assert_error_contains(&out, "is a directory");
    }
}
