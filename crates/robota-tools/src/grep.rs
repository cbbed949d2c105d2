//! The Grep tool: Claude Code's input (pattern, path, glob, type, output_mode, -i, -n,
//! -A/-B/-C, multiline, head_limit) turned into a search (`grep_search`), and the hits
//! rendered like ripgrep / Claude Code: file lists newest first, content lines and counts
//! sorted by path, `head_limit` applied, a note whenever something was left out.

use async_trait::async_trait;
use serde_json::{Value, json};

use super::grep_search::{OutputMode, SearchHits, SearchOptions, search};
use super::input::{ToolFailure, ToolInput, into_output};
use super::paths::resolve;
use robota_core::{RiskClass, Tool, ToolContext, ToolOutput};

const OUTPUT_MODES: [&str; 3] = ["files_with_matches", "content", "count"];

const DESCRIPTION: &str = "Searches file contents with a regular expression (ripgrep syntax: \"log.*Error\", \"fn\\s+\\w+\"; escape literal braces, e.g. \"interface\\{\\}\"). \
Respects .gitignore; skips hidden and binary files. Filter files with glob (\"*.{ts,tsx}\") or type (\"rust\", \"py\", \"js\"). \
output_mode: \"files_with_matches\" (default; paths, newest first), \"content\" (matching lines; -n line numbers, -A/-B/-C context), \"count\" (matching lines per file). \
Patterns match within a line unless multiline is true. head_limit keeps the first N results. Use this instead of grep or rg in Bash.";

/// Searches file contents with a regular expression (Claude Code's `Grep`, ripgrep's
/// engine).
pub struct GrepTool;

impl GrepTool {
    async fn run(&self, input: &Value, ctx: &ToolContext) -> Result<ToolOutput, ToolFailure> {
        let (options, head_limit) = parse_options(input, ctx)?;
        if !options.root.exists() {
            return Err(ToolFailure::failed(format!(
                "Path does not exist: {}",
                options.root.display()
            )));
        }
        let cancel = ctx.cancel.clone();
        let with_context = options.before_context > 0 || options.after_context > 0;
        let hits = tokio::task::spawn_blocking(move || search(&options, &cancel))
            .await
            .map_err(|err| ToolFailure::failed(format!("Grep failed: {err}")))?
            .map_err(|err| ToolFailure::failed(err.to_string()))?;
        Ok(ToolOutput::ok(render(hits, head_limit, with_context)))
    }
}

fn parse_options(
    input: &Value,
    ctx: &ToolContext,
) -> Result<(SearchOptions, Option<usize>), ToolFailure> {
    let input = ToolInput::parse("Grep", input)?;
    let pattern = input.required_str("pattern")?.to_string();
    let root = resolve(&ctx.cwd, input.optional_str("path")?.unwrap_or("."));
    let globs = input
        .optional_str("glob")?
        .map(split_globs)
        .unwrap_or_default();
    let file_type = input
        .optional_str("type")?
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .map(str::to_string);
    let mode = match input.optional_enum("output_mode", &OUTPUT_MODES)? {
        Some("content") => OutputMode::Content,
        Some("count") => OutputMode::Count,
        _ => OutputMode::FilesWithMatches,
    };
    let context = input.optional_u64("-C")?;
    let as_lines = |n: Option<u64>| n.map(|n| usize::try_from(n).unwrap_or(usize::MAX));
    let options = SearchOptions {
        pattern,
        root,
        globs,
        file_type,
        mode,
        case_insensitive: input.optional_bool("-i")?.unwrap_or(false),
        line_numbers: input.optional_bool("-n")?.unwrap_or(true),
        before_context: as_lines(input.optional_u64("-B")?.or(context)).unwrap_or(0),
        after_context: as_lines(input.optional_u64("-A")?.or(context)).unwrap_or(0),
        multiline: input.optional_bool("multiline")?.unwrap_or(false),
        denial: ctx.read_denial.clone(),
    };
    let head_limit = as_lines(input.optional_u64("head_limit")?).filter(|n| *n > 0);
    Ok((options, head_limit))
}

/// Splits a `glob` argument like Claude Code: on whitespace, then on commas outside
/// brace groups (`"*.ts,*.tsx"` is two globs, `"*.{ts,tsx}"` one).
fn split_globs(raw: &str) -> Vec<String> {
    raw.split_whitespace()
        .flat_map(|part| {
            if part.contains('{') {
                vec![part.to_string()]
            } else {
                part.split(',')
                    .filter(|g| !g.is_empty())
                    .map(str::to_string)
                    .collect()
            }
        })
        .collect()
}

fn render(hits: SearchHits, head_limit: Option<usize>, with_context: bool) -> String {
    match hits {
        SearchHits::Files(mut files) => {
            if files.is_empty() {
                return "No files found".to_string();
            }
            files.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
            let total = files.len();
            let plural = if total == 1 { "" } else { "s" };
            let mut out = format!("Found {total} file{plural}");
            for (_, path) in files.iter().take(head_limit.unwrap_or(usize::MAX)) {
                out.push('\n');
                out.push_str(&path.to_string_lossy());
            }
            push_limit_note(&mut out, head_limit, total, "files");
            out
        }
        SearchHits::Content { mut blocks, capped } => {
            blocks.sort_by(|a, b| a.0.cmp(&b.0));
            let separator = if with_context { "--\n" } else { "" };
            let joined = blocks
                .iter()
                .map(|(_, text)| text.as_str())
                .collect::<Vec<_>>()
                .join(separator);
            let lines: Vec<&str> = joined.lines().collect();
            if lines.is_empty() {
                return "No matches found".to_string();
            }
            let mut out = lines
                .iter()
                .take(head_limit.unwrap_or(usize::MAX))
                .copied()
                .collect::<Vec<_>>()
                .join("\n");
            push_limit_note(&mut out, head_limit, lines.len(), "lines");
            if capped {
                out.push_str("\n\n(Output limit reached: the search stopped early. Narrow it with path, glob or type.)");
            }
            out
        }
        SearchHits::Counts(mut counts) => {
            if counts.is_empty() {
                return "No matches found".to_string();
            }
            counts.sort_by(|a, b| a.0.cmp(&b.0));
            let total_matches: u64 = counts.iter().map(|(_, n)| n).sum();
            let files = counts.len();
            let mut out = counts
                .iter()
                .take(head_limit.unwrap_or(usize::MAX))
                .map(|(path, n)| format!("{}:{n}", path.to_string_lossy()))
                .collect::<Vec<_>>()
                .join("\n");
            push_limit_note(&mut out, head_limit, files, "files");
            let plural = if files == 1 { "" } else { "s" };
            out.push_str(&format!(
                "\n\nFound {total_matches} matching lines across {files} file{plural}."
            ));
            out
        }
    }
}

fn push_limit_note(out: &mut String, head_limit: Option<usize>, total: usize, unit: &str) {
    if let Some(limit) = head_limit
        && total > limit
    {
        out.push_str(&format!(
            "\n\n(Showing the first {limit} of {total} {unit} (head_limit). Raise head_limit or narrow the search to see more.)"
        ));
    }
}

#[async_trait]
impl Tool for GrepTool {
    fn name(&self) -> &str {
        "Grep"
    }

    fn description(&self) -> &str {
        DESCRIPTION
    }

    fn input_schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "pattern": {"type": "string", "description": "Regular expression to search for"},
                "path": {"type": "string", "description": "File or directory to search (default: the working directory)"},
                "glob": {"type": "string", "description": "Glob filter for files, e.g. \"*.js\" or \"*.{ts,tsx}\""},
                "type": {"type": "string", "description": "File type, e.g. js, py, rust, go, java"},
                "output_mode": {"type": "string", "enum": OUTPUT_MODES, "description": "Default files_with_matches"},
                "-i": {"type": "boolean", "description": "Case insensitive"},
                "-n": {"type": "boolean", "description": "Line numbers (content mode; default true)"},
                "-A": {"type": "number", "description": "Lines after each match (content mode)"},
                "-B": {"type": "number", "description": "Lines before each match (content mode)"},
                "-C": {"type": "number", "description": "Lines before and after each match (content mode)"},
                "multiline": {"type": "boolean", "description": "Let . and patterns span lines (default false)"},
                "head_limit": {"type": "number", "description": "Keep only the first N lines / files / entries"}
            },
            "required": ["pattern"]
        })
    }

    fn risk(&self) -> RiskClass {
        RiskClass::Read
    }

    fn primary_argument(&self, input: &Value) -> Option<String> {
        input
            .get("path")
            .and_then(Value::as_str)
            .or_else(|| input.get("pattern").and_then(Value::as_str))
            .map(str::to_string)
    }

    async fn call(&self, input: Value, ctx: &ToolContext) -> ToolOutput {
        into_output(self.run(&input, ctx).await)
    }
}

#[cfg(test)]
#[path = "grep_tests.rs"]
mod tests;
