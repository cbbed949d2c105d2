//! The Edit tool: exact string replacement in a file the model has read, refusing zero or
//! ambiguous matches with the count, matching LF `old_string`s against CRLF files and
//! keeping CRLF, writing atomically, and answering with a numbered snippet of the change.

use std::path::{Path, PathBuf};

use async_trait::async_trait;
use serde_json::{Value, json};

use super::file_tracker::FileReadTracker;
use super::file_write::{ExistingFile, ensure_fresh, to_crlf, uses_crlf};
use super::host::{ToolHost, load_for_replace, write_replacement};
use super::input::{ToolFailure, ToolInput, into_output, into_preview};
use super::paths::{resolve, similar_names};
use super::read::push_numbered_line;
use robota_core::{PreviewError, RiskClass, Tool, ToolContext, ToolDisplay, ToolOutput};

/// Lines of context shown around the change in the result.
const SNIPPET_CONTEXT_LINES: usize = 4;
/// What leads the numbered snippet in an Edit's result.
pub(crate) const SNIPPET_HEADER: &str =
    "Here's the result of running `cat -n` on a snippet of the edited file:\n";

const DESCRIPTION: &str = "Replaces an exact string in a file. The file must have been Read in this session first. \
old_string must match the file exactly (indentation included; never include the line-number prefix from Read output) \
and be unique in the file unless replace_all is true: add surrounding lines to make it unique. \
replace_all replaces every occurrence (e.g. renaming a variable). An empty old_string creates a new file.";

/// One edit the model asked for.
struct EditRequest {
    old_string: String,
    new_string: String,
    replace_all: bool,
}

pub(crate) struct EditTool {
    tracker: FileReadTracker,
    host: ToolHost,
}

impl EditTool {
    pub fn new(tracker: FileReadTracker) -> Self {
        EditTool {
            tracker,
            host: ToolHost::default(),
        }
    }

    /// Loads and writes files through what `host` offers.
    pub fn on_host(mut self, host: ToolHost) -> Self {
        self.host = host;
        self
    }

    /// The request in `input` and the file it names.
    fn request(input: &Value, ctx: &ToolContext) -> Result<(PathBuf, EditRequest), ToolFailure> {
        let input = ToolInput::parse("Edit", input)?;
        let file_path = input.required_str("file_path")?;
        let request = EditRequest {
            old_string: input.required_str("old_string")?.to_string(),
            new_string: input.required_str("new_string")?.to_string(),
            replace_all: input.optional_bool("replace_all")?.unwrap_or(false),
        };
        if request.old_string == request.new_string {
            return Err(ToolFailure::failed(
                "No changes to make: old_string and new_string are exactly the same.",
            ));
        }
        Ok((resolve(&ctx.cwd, file_path), request))
    }

    async fn run(&self, input: &Value, ctx: &ToolContext) -> Result<ToolOutput, ToolFailure> {
        let (path, request) = Self::request(input, ctx)?;
        let existing = load_for_replace(&self.host, &path).await?;
        let plan = plan_edit(&path, existing, &request, &self.tracker)?;
        apply_edit(&self.host, &path, plan, &self.tracker).await
    }

    async fn plan(&self, input: &Value, ctx: &ToolContext) -> Result<ToolDisplay, ToolFailure> {
        let (path, request) = Self::request(input, ctx)?;
        let existing = load_for_replace(&self.host, &path).await?;
        plan_edit(&path, existing, &request, &self.tracker).map(|plan| plan.display(&path))
    }
}

/// An edit worked out against the file as it is now, not yet written: what the permission
/// question shows is exactly what [`apply_edit`] writes.
struct PlannedEdit {
    /// The file as read; `None` when the edit creates it.
    existing: Option<ExistingFile>,
    before: Option<String>,
    after: String,
    /// Byte offset and length of the first replacement in `after`.
    change_start: usize,
    change_len: usize,
    /// Occurrences replaced.
    count: usize,
}

impl PlannedEdit {
    fn display(&self, path: &Path) -> ToolDisplay {
        ToolDisplay::FileDiff {
            file_path: path.display().to_string(),
            before: self.before.clone(),
            after: self.after.clone(),
        }
    }
}

/// Checks the edit against the file (read before, unchanged since, one match or
/// `replace_all`) and works out the new text.
fn plan_edit(
    path: &Path,
    existing: Option<ExistingFile>,
    request: &EditRequest,
    tracker: &FileReadTracker,
) -> Result<PlannedEdit, ToolFailure> {
    let Some(existing) = existing else {
        if request.old_string.is_empty() {
            return Ok(PlannedEdit {
                existing: None,
                before: None,
                after: request.new_string.clone(),
                change_start: 0,
                change_len: request.new_string.len(),
                count: 1,
            });
        }
        let mut message = format!("File does not exist: {}", path.display());
        if let Some(close) = similar_names(path).first() {
            message.push_str(&format!("\nDid you mean {}?", close.display()));
        }
        return Err(ToolFailure::failed(message));
    };
    let before = String::from_utf8(existing.bytes.clone()).map_err(|_| {
        ToolFailure::failed(format!(
            "{} is not valid UTF-8 text; Edit only changes UTF-8 files.",
            path.display()
        ))
    })?;
    ensure_fresh(tracker, path, &existing)?;
    let (after, change_start, change_len, count) = if request.old_string.is_empty() {
        if !before.trim().is_empty() {
            return Err(ToolFailure::failed(
                "Cannot create new file - file already exists. Use a non-empty old_string to edit it.",
            ));
        }
        let new = if uses_crlf(&before) {
            to_crlf(&request.new_string)
        } else {
            request.new_string.clone()
        };
        let len = new.len();
        (new, 0, len, 1)
    } else {
        apply_replacement(&before, request)?
    };
    Ok(PlannedEdit {
        existing: Some(existing),
        before: Some(before),
        after,
        change_start,
        change_len,
        count,
    })
}

/// Writes a planned edit (atomically on disk, or through the host) and answers with a
/// numbered snippet of the change.
async fn apply_edit(
    host: &ToolHost,
    path: &Path,
    plan: PlannedEdit,
    tracker: &FileReadTracker,
) -> Result<ToolOutput, ToolFailure> {
    let display = plan.display(path);
    let permissions = plan.existing.as_ref().and_then(|e| e.permissions.clone());
    write_replacement(host, tracker, path, &plan.after, permissions).await?;
    if plan.existing.is_none() {
        let message = format!("File created successfully at: {}", path.display());
        return Ok(ToolOutput::ok(message).with_display(display));
    }
    let summary = if plan.count > 1 {
        format!(
            "The file {} has been updated ({} occurrences replaced).",
            path.display(),
            plan.count
        )
    } else {
        format!("The file {} has been updated.", path.display())
    };
    let message = format!(
        "{summary} {SNIPPET_HEADER}{}",
        snippet(&plan.after, plan.change_start, plan.change_len)
    );
    Ok(ToolOutput::ok(message).with_display(display))
}

/// The new text, the byte offset and length of the first replacement in it, and how many
/// occurrences were replaced.
fn apply_replacement(
    before: &str,
    request: &EditRequest,
) -> Result<(String, usize, usize, usize), ToolFailure> {
    let (old, new) = matching_strings(before, request);
    let count = before.matches(old.as_str()).count();
    if count == 0 {
        return Err(ToolFailure::failed(format!(
            "String to replace not found in file.\nString: {}",
            request.old_string
        )));
    }
    if count > 1 && !request.replace_all {
        return Err(ToolFailure::failed(format!(
            "Found {count} matches of the string to replace, but replace_all is false. \
To replace all occurrences, set replace_all to true. To replace only one occurrence, \
add more context to old_string to identify the instance uniquely.\nString: {}",
            request.old_string
        )));
    }
    let start = before.find(old.as_str()).unwrap_or(0);
    let after = if request.replace_all {
        before.replace(old.as_str(), &new)
    } else {
        before.replacen(old.as_str(), &new, 1)
    };
    Ok((after, start, new.len(), count))
}

/// The strings to match and insert. In a CRLF file an LF `old_string` (as models write
/// it) is matched as CRLF and `new_string` gets CRLF endings too; when only the string
/// as given matches, it is used as given.
fn matching_strings(before: &str, request: &EditRequest) -> (String, String) {
    if uses_crlf(before) {
        let old = to_crlf(&request.old_string);
        if before.contains(old.as_str()) {
            return (old, to_crlf(&request.new_string));
        }
    }
    (request.old_string.clone(), request.new_string.clone())
}

/// Numbered lines around the bytes `start..start + len` of `text`.
fn snippet(text: &str, start: usize, len: usize) -> String {
    let start = start.min(text.len());
    let end = (start + len).min(text.len());
    let first_line = text.as_bytes()[..start]
        .iter()
        .filter(|b| **b == b'\n')
        .count();
    let last_line = first_line
        + text.as_bytes()[start..end]
            .iter()
            .filter(|b| **b == b'\n')
            .count();
    let from = first_line.saturating_sub(SNIPPET_CONTEXT_LINES);
    let to = last_line + SNIPPET_CONTEXT_LINES;
    let mut out = String::new();
    for (index, line) in text.split_inclusive('\n').enumerate() {
        if index > to {
            break;
        }
        if index >= from {
            push_numbered_line(&mut out, index as u64 + 1, line);
        }
    }
    if out.ends_with('\n') {
        out.pop();
    }
    out
}

#[async_trait]
impl Tool for EditTool {
    fn name(&self) -> &str {
        "Edit"
    }

    fn description(&self) -> &str {
        DESCRIPTION
    }

    fn input_schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "file_path": {"type": "string", "description": "Path of the file to modify (absolute preferred)"},
                "old_string": {"type": "string", "description": "The exact text to replace"},
                "new_string": {"type": "string", "description": "The text to replace it with (must differ from old_string)"},
                "replace_all": {"type": "boolean", "default": false, "description": "Replace every occurrence of old_string"}
            },
            "required": ["file_path", "old_string", "new_string"]
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

    struct Fixture {
        dir: tempfile::TempDir,
        read: ReadTool,
        edit: EditTool,
    }

    impl Fixture {
        fn new(name: &str, content: &str) -> Self {
            let dir = tempfile::tempdir().unwrap();
            std::fs::write(dir.path().join(name), content).unwrap();
            let tracker = FileReadTracker::new();
            Fixture {
                dir,
                read: ReadTool::new(tracker.clone()),
                edit: EditTool::new(tracker),
            }
        }

        async fn read(&self, name: &str) {
            assert_ok(&call(&self.read, self.dir.path(), json!({"file_path": name})).await);
        }

        async fn edit(&self, input: Value) -> ToolOutput {
            call(&self.edit, self.dir.path(), input).await
        }

        fn content(&self, name: &str) -> String {
            std::fs::read_to_string(self.dir.path().join(name)).unwrap()
        }
    }

    #[tokio::test]
    async fn replaces_a_unique_string_and_shows_a_numbered_snippet() {
        let fx = Fixture::new("a.rs", "fn a() {}\nfn b() {}\nfn c() {}\n");
        fx.read("a.rs").await;
        let out = fx
            .edit(json!({"file_path": "a.rs", "old_string": "fn b() {}", "new_string": "fn b2() {}\nfn b3() {}"}))
            .await;
        let text = assert_ok(&out);
        assert!(text.starts_with(&format!(
            "The file {} has been updated.",
            fx.dir.path().join("a.rs").display()
        )));
        assert!(text.ends_with(
            "     1\tfn a() {}\n     2\tfn b2() {}\n     3\tfn b3() {}\n     4\tfn c() {}"
        ));
        assert_eq!(
            fx.content("a.rs"),
            "fn a() {}\nfn b2() {}\nfn b3() {}\nfn c() {}\n"
        );
        assert!(matches!(
            &out.display,
            Some(ToolDisplay::FileDiff { before: Some(b), after, .. })
                if b == "fn a() {}\nfn b() {}\nfn c() {}\n" && after.contains("b3")
        ));
        // Tracker updated: a second edit needs no re-read.
        let out = fx
            .edit(json!({"file_path": "a.rs", "old_string": "fn c", "new_string": "fn d"}))
            .await;
        assert_ok(&out);
    }

    #[tokio::test]
    async fn zero_and_ambiguous_matches_are_errors_with_counts() {
        let fx = Fixture::new("a.txt", "x = 1\nx = 1\nx = 1\n");
        fx.read("a.txt").await;
        let out = fx
            .edit(json!({"file_path": "a.txt", "old_string": "x = 1", "new_string": "y = 2"}))
            .await;
        assert_error_contains(&out, "Found 3 matches");
        assert_error_contains(&out, "replace_all");
        let out = fx
            .edit(json!({"file_path": "a.txt", "old_string": "z", "new_string": "y"}))
            .await;
        assert_error_contains(&out, "String to replace not found in file.\nString: z");
        let out = fx
            .edit(json!({"file_path": "a.txt", "old_string": "x", "new_string": "x"}))
            .await;
        assert_error_contains(&out, "No changes to make");
        assert_eq!(fx.content("a.txt"), "x = 1\nx = 1\nx = 1\n");
    }

    #[tokio::test]
    async fn replace_all_replaces_every_occurrence() {
        let fx = Fixture::new("a.txt", "foo bar foo\nfoo\n");
        fx.read("a.txt").await;
        let out = fx
            .edit(json!({"file_path": "a.txt", "old_string": "foo", "new_string": "baz", "replace_all": true}))
            .await;
        assert!(assert_ok(&out).contains("(3 occurrences replaced)"));
        assert_eq!(fx.content("a.txt"), "baz bar baz\nbaz\n");
    }

    #[tokio::test]
    async fn read_before_write_and_staleness() {
        let fx = Fixture::new("a.txt", "one\n");
        let input = json!({"file_path": "a.txt", "old_string": "one", "new_string": "two"});
        assert_error_contains(&fx.edit(input.clone()).await, "File has not been read yet");
        fx.read("a.txt").await;
        std::fs::write(fx.dir.path().join("a.txt"), "one\nmore\n").unwrap();
        assert_error_contains(&fx.edit(input.clone()).await, "modified since read");
        assert_eq!(fx.content("a.txt"), "one\nmore\n");
        fx.read("a.txt").await;
        assert_ok(&fx.edit(input).await);
        assert_eq!(fx.content("a.txt"), "two\nmore\n");
    }

    #[tokio::test]
    async fn lf_old_string_matches_a_crlf_file_and_crlf_is_kept() {
        let fx = Fixture::new("w.txt", "line one\r\nline two\r\nline three\r\n");
        fx.read("w.txt").await;
        let out = fx
            .edit(json!({"file_path": "w.txt", "old_string": "line one\nline two", "new_string": "first\nsecond\nextra"}))
            .await;
        assert_ok(&out);
        assert_eq!(
            fx.content("w.txt"),
            "first\r\nsecond\r\nextra\r\nline three\r\n"
        );
    }

    #[cfg(unix)]
    #[tokio::test]
    async fn permissions_are_kept_and_no_temp_file_is_left() {
        let fx = Fixture::new("run.sh", "echo hi\n");
        let path = fx.dir.path().join("run.sh");
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o700)).unwrap();
        fx.read("run.sh").await;
        assert_ok(
            &fx.edit(json!({"file_path": "run.sh", "old_string": "hi", "new_string": "bye"}))
                .await,
        );
        assert_eq!(
            std::fs::metadata(&path).unwrap().permissions().mode() & 0o777,
            0o700
        );
        assert_eq!(std::fs::read_dir(fx.dir.path()).unwrap().count(), 1);
    }

    #[tokio::test]
    async fn empty_old_string_creates_a_missing_file_but_not_over_an_existing_one() {
        let fx = Fixture::new("exists.txt", "content\n");
        let out = fx
            .edit(json!({"file_path": "sub/new.txt", "old_string": "", "new_string": "fresh\n"}))
            .await;
        assert!(assert_ok(&out).starts_with("File created successfully at:"));
        assert_eq!(fx.content("sub/new.txt"), "fresh\n");
        fx.read("exists.txt").await;
        let out = fx
            .edit(json!({"file_path": "exists.txt", "old_string": "", "new_string": "x"}))
            .await;
        assert_error_contains(&out, "file already exists");
        let out = fx
            .edit(json!({"file_path": "missing.txt", "old_string": "a", "new_string": "b"}))
            .await;
        assert_error_contains(&out, "File does not exist:");
    }

    #[tokio::test]
    async fn invalid_input_is_an_error_result() {
        let fx = Fixture::new("a.txt", "a\n");
        let out = fx
            .edit(json!({"file_path": "a.txt", "new_string": "b"}))
            .await;
        assert_eq!(
            out.content,
            "Invalid input for Edit: missing required field \"old_string\""
        );
        let out = fx
            .edit(json!({"file_path": "a.txt", "old_string": "a", "new_string": "b", "replace_all": "yes"}))
            .await;
        assert_error_contains(&out, "\"replace_all\" must be a boolean, got a string");
        let out = fx.edit(json!(["a.txt"])).await;
        assert_error_contains(&out, "expected a JSON object");
    }
}
