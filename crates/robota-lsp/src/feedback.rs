//! The built-in file tools with a language server beside them: after a successful Edit or
//! Write the file's fresh diagnostics are appended to the result; after a Read the file's
//! server is started and told about the file in the background, so the edit that follows
//! finds it warm; after a Bash command, the open files it changed are checked the same way.
//! Everything else is the wrapped tool's own.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use async_trait::async_trait;
use robota_core::{PreviewError, RiskClass, Tool, ToolContext, ToolDisplay, ToolOutput};
use serde_json::Value;

use crate::manager::LspManager;

/// What the wrapper does after a successful call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum After {
    /// Read: warm the file's server up.
    Read,
    /// Edit or Write: report the file's diagnostics.
    Write,
    /// Bash: report the diagnostics of the open files the command changed.
    Command,
}

/// A built-in file tool with the session's language servers beside it.
pub struct WithLanguageServers {
    inner: Arc<dyn Tool>,
    lsp: Arc<LspManager>,
    after: After,
}

/// Wraps `Read`, `Edit`, `Write` and `Bash` of `tools` so that they tell `lsp` about the
/// files they touch; other tools are left as they are.
pub fn with_language_servers(
    tools: Vec<Arc<dyn Tool>>,
    lsp: &Arc<LspManager>,
) -> Vec<Arc<dyn Tool>> {
    tools
        .into_iter()
        .map(|tool| {
            let after = match tool.name() {
                "Read" => After::Read,
                "Edit" | "Write" => After::Write,
                "Bash" => After::Command,
                _ => return tool,
            };
            Arc::new(WithLanguageServers {
                inner: tool,
                lsp: lsp.clone(),
                after,
            }) as Arc<dyn Tool>
        })
        .collect()
}

/// `file_path` of a call, resolved against the working directory.
fn file_path(input: &Value, cwd: &Path) -> Option<PathBuf> {
    let path = Path::new(input.get("file_path")?.as_str()?);
    Some(if path.is_absolute() {
        path.to_path_buf()
    } else {
        cwd.join(path)
    })
}

#[async_trait]
impl Tool for WithLanguageServers {
    fn name(&self) -> &str {
        self.inner.name()
    }
    fn description(&self) -> &str {
        self.inner.description()
    }
    fn input_schema(&self) -> Value {
        self.inner.input_schema()
    }
    fn risk(&self) -> RiskClass {
        self.inner.risk()
    }
    fn primary_argument(&self, input: &Value) -> Option<String> {
        self.inner.primary_argument(input)
    }
    fn start_dir(&self) -> Option<PathBuf> {
        self.inner.start_dir()
    }
    fn max_result_chars(&self) -> Option<usize> {
        self.inner.max_result_chars()
    }
    async fn preview(
        &self,
        input: &Value,
        ctx: &ToolContext,
    ) -> Result<Option<ToolDisplay>, PreviewError> {
        self.inner.preview(input, ctx).await
    }

    async fn call(&self, input: Value, ctx: &ToolContext) -> ToolOutput {
        let path = file_path(&input, &ctx.cwd);
        let mut output = self.inner.call(input, ctx).await;
        if self.after == After::Command {
            // A failed command may have changed files too (a formatter that found errors).
            let reports = tokio::select! {
                reports = self.lsp.diagnostics_after_command() => reports,
                _ = ctx.cancel.cancelled() => Vec::new(),
            };
            for report in reports {
                output.content.push_str(&report.for_model());
            }
            return output;
        }
        if output.is_error {
            return output;
        }
        match (self.after, path) {
            (After::Read, Some(path)) => self.lsp.file_was_read(&path),
            (After::Write, Some(path)) => {
                let Some(ToolDisplay::FileDiff { after, .. }) = &output.display else {
                    return output;
                };
                let report = tokio::select! {
                    report = self.lsp.diagnostics_after_write(&path, after) => report,
                    _ = ctx.cancel.cancelled() => None,
                };
                if let Some(report) = report {
                    output.content.push_str(&report.for_model());
                }
            }
            (After::Command, _) | (_, None) => {}
        }
        output
    }
}
