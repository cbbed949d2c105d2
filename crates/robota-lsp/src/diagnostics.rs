//! Diagnostics after an edit: the changed text goes to the file's server, robota waits a
//! bounded time for fresh diagnostics of that file, and turns the errors (all, up to a
//! cap) and warnings (a few) into lines the model can act on:
//! `path:line:col severity message (source code)`.

use std::path::Path;
use std::sync::Arc;

use lsp_types::{Diagnostic, DiagnosticSeverity, NumberOrString};
use tokio::time::Instant;

use crate::manager::LspManager;
use crate::server::Sync;

/// Errors reported after one edit at most.
const MAX_ERRORS: usize = 30;
/// Warnings reported after one edit at most, unless the settings say otherwise.
const DEFAULT_MAX_WARNINGS: usize = 5;

/// What the server said about a file after an edit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EditDiagnostics {
    /// The server's name.
    pub server: String,
    /// The file.
    pub path: std::path::PathBuf,
    /// Errors found.
    pub errors: usize,
    /// Warnings found.
    pub warnings: usize,
    /// The lines for the model, errors first (capped).
    pub lines: Vec<String>,
}

impl EditDiagnostics {
    /// The text appended to the tool result; empty when there is nothing to report.
    pub fn for_model(&self) -> String {
        if self.lines.is_empty() {
            return String::new();
        }
        let mut text = format!(
            "\n\n<diagnostics server=\"{}\">\nThe language server reports {} error(s) and {} warning(s) in {}:\n",
            self.server,
            self.errors,
            self.warnings,
            self.path.display()
        );
        for line in &self.lines {
            text.push_str(line);
            text.push('\n');
        }
        let shown = self.lines.len();
        if shown < self.errors + self.warnings {
            text.push_str(&format!(
                "({} more not shown)\n",
                self.errors + self.warnings - shown
            ));
        }
        text.push_str("</diagnostics>");
        text
    }

    /// One line for a person: `pyright: 2 errors, 1 warning`.
    pub fn summary(&self) -> String {
        format!(
            "{}: {} error{}, {} warning{}",
            self.server,
            self.errors,
            if self.errors == 1 { "" } else { "s" },
            self.warnings,
            if self.warnings == 1 { "" } else { "s" },
        )
    }
}

impl LspManager {
    /// Tells the server of `path` that the file now holds `text` and waits (at most the
    /// settings' wait) for its diagnostics; `None` when diagnostics are off, no server
    /// handles the file, or none came in time.
    pub async fn diagnostics_after_write(
        self: &Arc<Self>,
        path: &Path,
        text: &str,
    ) -> Option<EditDiagnostics> {
        self.remember(path, text);
        let wait = self.section().diagnostics_wait()?;
        self.server_for(path)?;
        let deadline = Instant::now() + wait;
        let (server, name, language) = match self.server(path, deadline).await {
            Ok(found) => found?,
            Err(error) => {
                tracing::debug!(%error, "no diagnostics after the edit");
                return None;
            }
        };
        let (uri, generation, version) = server
            .sync_document(path, &language, text, Sync::Edited)
            .await
            .ok()??;
        let remaining = deadline.saturating_duration_since(Instant::now());
        let found = server
            .fresh_diagnostics(&uri, generation, version, remaining)
            .await?;
        let max_warnings = self.section().max_warnings.unwrap_or(DEFAULT_MAX_WARNINGS);
        Some(summarize(&name, path, &found, max_warnings))
    }

    /// After a command (Bash): the files of the session (read or edited, of a configured
    /// language, at most `MAX_KNOWN_FILES`) whose text on disk is not what robota last saw
    /// — a formatter, a `sed -i`, a checkout changed them — are sent to their servers, and
    /// the reports that have something to say come back, each file waited for at most the
    /// settings' wait, all at once. Nothing else is read.
    pub async fn diagnostics_after_command(self: &Arc<Self>) -> Vec<EditDiagnostics> {
        if self.section().diagnostics_wait().is_none() {
            return Vec::new();
        }
        let mut checks = tokio::task::JoinSet::new();
        for (path, seen) in self.known_files() {
            let manager = self.clone();
            checks.spawn(async move {
                let text = tokio::fs::read_to_string(&path).await.ok()?;
                if crate::manager::text_hash(&text) == seen {
                    return None;
                }
                manager.diagnostics_after_write(&path, &text).await
            });
        }
        let mut reports = Vec::new();
        while let Some(done) = checks.join_next().await {
            if let Ok(Some(report)) = done
                && !report.lines.is_empty()
            {
                reports.push(report);
            }
        }
        reports.sort_by(|a, b| a.lines.cmp(&b.lines));
        reports
    }

    /// Opens `path` on its server in the background (starting the server), so that an
    /// edit that follows finds it warm. Does nothing for a file no server handles.
    pub fn file_was_read(self: &Arc<Self>, path: &Path) {
        if self.server_for(path).is_none() || self.section().diagnostics_wait().is_none() {
            return;
        }
        self.warm_up(path);
        // The text as the Read saw it: what a later command's changes are found against.
        let Ok(text) = std::fs::read_to_string(path) else {
            return;
        };
        self.remember(path, &text);
        let manager = self.clone();
        let path = path.to_path_buf();
        tokio::spawn(async move {
            let deadline = Instant::now() + std::time::Duration::from_secs(60);
            let Ok(Some((server, _, language))) = manager.server(&path, deadline).await else {
                return;
            };
            let _ = server
                .sync_document(&path, &language, &text, Sync::OpenOnly)
                .await;
        });
    }
}

/// The counts and lines of `diagnostics` of `path`.
fn summarize(
    server: &str,
    path: &Path,
    diagnostics: &[Diagnostic],
    max_warnings: usize,
) -> EditDiagnostics {
    let severity = |d: &Diagnostic| d.severity.unwrap_or(DiagnosticSeverity::ERROR);
    let errors: Vec<&Diagnostic> = diagnostics
        .iter()
        .filter(|d| severity(d) == DiagnosticSeverity::ERROR)
        .collect();
    let warnings: Vec<&Diagnostic> = diagnostics
        .iter()
        .filter(|d| severity(d) == DiagnosticSeverity::WARNING)
        .collect();
    let lines = errors
        .iter()
        .take(MAX_ERRORS)
        .chain(warnings.iter().take(max_warnings))
        .map(|d| diagnostic_line(path, d))
        .collect();
    EditDiagnostics {
        server: server.to_string(),
        path: path.to_path_buf(),
        errors: errors.len(),
        warnings: warnings.len(),
        lines,
    }
}

/// `path:line:col severity message (source code)`, line and column counted from 1.
pub fn diagnostic_line(path: &Path, diagnostic: &Diagnostic) -> String {
    let severity = match diagnostic.severity {
        Some(DiagnosticSeverity::WARNING) => "warning",
        Some(DiagnosticSeverity::INFORMATION) => "info",
        Some(DiagnosticSeverity::HINT) => "hint",
        _ => "error",
    };
    let message = diagnostic.message.replace('\n', " ");
    let code = match &diagnostic.code {
        Some(NumberOrString::String(code)) => Some(code.clone()),
        Some(NumberOrString::Number(code)) => Some(code.to_string()),
        None => None,
    };
    let origin = match (&diagnostic.source, code) {
        (Some(source), Some(code)) => format!(" ({source} {code})"),
        (Some(source), None) => format!(" ({source})"),
        (None, Some(code)) => format!(" ({code})"),
        (None, None) => String::new(),
    };
    format!(
        "{}:{}:{} {severity} {message}{origin}",
        path.display(),
        diagnostic.range.start.line + 1,
        diagnostic.range.start.character + 1
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use lsp_types::{Position, Range};

    fn diagnostic(line: u32, severity: DiagnosticSeverity, message: &str) -> Diagnostic {
        Diagnostic {
            range: Range::new(Position::new(line, 4), Position::new(line, 9)),
            severity: Some(severity),
            source: Some("Pyright".into()),
            code: Some(NumberOrString::String("reportAssignmentType".into())),
            message: message.into(),
            ..Diagnostic::default()
        }
    }

    #[test]
    fn errors_come_first_warnings_are_capped_and_hints_left_out() {
        let mut found = vec![diagnostic(0, DiagnosticSeverity::HINT, "unused")];
        for line in 0..4 {
            found.push(diagnostic(line, DiagnosticSeverity::WARNING, "w"));
        }
        found.push(diagnostic(
            2,
            DiagnosticSeverity::ERROR,
            "Type \"str\"\nis bad",
        ));
        let report = summarize("pyright", Path::new("/p/a.py"), &found, 2);
        assert_eq!((report.errors, report.warnings), (1, 4));
        assert_eq!(
            report.lines[0],
            "/p/a.py:3:5 error Type \"str\" is bad (Pyright reportAssignmentType)"
        );
        assert_eq!(report.lines.len(), 3);
        let text = report.for_model();
        assert!(text.contains("1 error(s) and 4 warning(s)"), "{text}");
        assert!(text.contains("(2 more not shown)"), "{text}");
        assert_eq!(report.summary(), "pyright: 1 error, 4 warnings");
    }

    #[test]
    fn a_clean_file_adds_nothing() {
        let report = summarize("pyright", Path::new("/p/a.py"), &[], 5);
        assert_eq!(report.for_model(), "");
    }
}
