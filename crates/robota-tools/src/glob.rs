//! The Glob tool: files whose path (relative to the search root) matches a glob, found by
//! a parallel gitignore-aware walk that skips hidden files like `rg --files`, listed as
//! absolute paths, newest first, at most 100.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::SystemTime;

use async_trait::async_trait;
use globset::{GlobBuilder, GlobMatcher};
use ignore::{DirEntry, WalkBuilder, WalkState};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::input::{ToolFailure, ToolInput, into_output};
use super::paths::{normalize, resolve};
use super::walk::{collect_parallel, filter_entries, is_file};
use robota_core::permission::PathDenial;
use robota_core::{RiskClass, Tool, ToolContext, ToolOutput};

pub const MAX_GLOB_RESULTS: usize = 100;

const DESCRIPTION: &str = "Finds files by name pattern, e.g. \"**/*.rs\" or \"src/**/test_*.py\" (`*` stays within one directory, `**` crosses directories). \
Searches the working directory or `path`, skipping gitignored and hidden files. \
Returns absolute paths, most recently modified first (at most 100). Use Grep to search file contents.";

/// Finds files by glob pattern (Claude Code's `Glob`), newest first.
pub struct GlobTool;

/// Where to walk and what to match there.
#[derive(Debug)]
struct GlobPlan {
    base: PathBuf,
    matcher: GlobMatcher,
    max_depth: Option<usize>,
    include_hidden: bool,
    /// What deny rules keep from the listing.
    denial: Option<Arc<PathDenial>>,
}

impl GlobTool {
    async fn run(&self, input: &Value, ctx: &ToolContext) -> Result<ToolOutput, ToolFailure> {
        let input = ToolInput::parse("Glob", input)?;
        let pattern = input.required_str("pattern")?;
        if pattern.trim().is_empty() {
            return Err(input.invalid("\"pattern\" must not be empty").into());
        }
        let root = resolve(&ctx.cwd, input.optional_str("path")?.unwrap_or("."));
        if !root.is_dir() {
            let what = if root.exists() {
                "is not a directory"
            } else {
                "does not exist"
            };
            return Err(ToolFailure::failed(format!(
                "Path {what}: {}",
                root.display()
            )));
        }
        let mut plan = plan(&root, pattern)?;
        plan.denial = ctx.read_denial.clone();
        let cancel = ctx.cancel.clone();
        let found = tokio::task::spawn_blocking(move || find(&plan, &cancel))
            .await
            .map_err(|err| ToolFailure::failed(format!("Glob failed: {err}")))?;
        let Some(mut found) = found else {
            return Err(ToolFailure::failed("Glob interrupted by user"));
        };
        Ok(ToolOutput::ok(render(&mut found)))
    }
}

/// Splits the pattern (joined to `root` unless absolute) into the literal directory to
/// walk and the glob part matched below it.
fn plan(root: &Path, pattern: &str) -> Result<GlobPlan, ToolFailure> {
    let pattern = pattern.trim();
    let full = normalize(&root.join(pattern.strip_prefix("./").unwrap_or(pattern)));
    let mut base = PathBuf::new();
    let mut rest: Vec<String> = Vec::new();
    for component in full.components() {
        let text = component.as_os_str().to_string_lossy();
        let has_meta = text.contains(['*', '?', '[', '{']);
        if rest.is_empty() && !has_meta {
            base.push(component);
        } else {
            rest.push(text.into_owned());
        }
    }
    if rest.is_empty() {
        // No wildcard: the pattern names one path; match its file name in its directory.
        let name = base
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        rest.push(globset::escape(&name));
        base.pop();
    }
    let glob = rest.join("/");
    let matcher = GlobBuilder::new(&glob)
        .literal_separator(true)
        .backslash_escape(true)
        .build()
        .map_err(|err| ToolFailure::failed(format!("Invalid glob pattern \"{pattern}\": {err}")))?
        .compile_matcher();
    Ok(GlobPlan {
        max_depth: (!glob.contains("**")).then_some(rest.len()),
        include_hidden: rest
            .iter()
            .any(|part| part.starts_with('.') && part != "." && part != ".."),
        base,
        matcher,
        denial: None,
    })
}

fn find(plan: &GlobPlan, cancel: &CancellationToken) -> Option<Vec<(SystemTime, PathBuf)>> {
    let mut walker = WalkBuilder::new(&plan.base);
    walker
        .hidden(!plan.include_hidden)
        .max_depth(plan.max_depth);
    // When hidden files were asked for, git's own store is still never what is meant.
    let skip_git = plan.include_hidden && !plan.base.components().any(|c| c.as_os_str() == ".git");
    filter_entries(&mut walker, &plan.base, plan.denial.clone(), skip_git);
    let walker = walker.build_parallel();
    collect_parallel(walker, cancel, || {
        |entry: DirEntry, found: &mut Vec<(SystemTime, PathBuf)>| {
            if is_file(&entry)
                && let Ok(relative) = entry.path().strip_prefix(&plan.base)
                && plan.matcher.is_match(relative)
            {
                let modified = entry
                    .metadata()
                    .ok()
                    .and_then(|m| m.modified().ok())
                    .unwrap_or(SystemTime::UNIX_EPOCH);
                found.push((modified, entry.into_path()));
            }
            WalkState::Continue
        }
    })
}

fn render(found: &mut [(SystemTime, PathBuf)]) -> String {
    if found.is_empty() {
        return "No files found".to_string();
    }
    found.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    let mut out: Vec<String> = found
        .iter()
        .take(MAX_GLOB_RESULTS)
        .map(|(_, path)| path.display().to_string())
        .collect();
    if found.len() > MAX_GLOB_RESULTS {
        out.push(format!(
            "(Results are truncated: showing the {MAX_GLOB_RESULTS} most recently modified of {} files. Use a more specific path or pattern.)",
            found.len()
        ));
    }
    out.join("\n")
}

#[async_trait]
impl Tool for GlobTool {
    fn name(&self) -> &str {
        "Glob"
    }

    fn description(&self) -> &str {
        DESCRIPTION
    }

    fn input_schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "pattern": {"type": "string", "description": "The glob pattern to match files against"},
                "path": {"type": "string", "description": "Directory to search in (default: the working directory)"}
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
mod tests {
    use super::*;
    use crate::test_support::{assert_error_contains, assert_ok, call, ctx};
    use std::fs::{File, FileTimes};
    use std::time::Duration;

    /// Writes `files` under `root` with modification times one minute apart, oldest first.
    fn tree(root: &Path, files: &[&str]) {
        let start = SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000);
        for (i, name) in files.iter().enumerate() {
            let path = root.join(name);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, name).unwrap();
            let time = start + Duration::from_secs(60 * i as u64);
            File::options()
                .write(true)
                .open(&path)
                .unwrap()
                .set_times(FileTimes::new().set_modified(time))
                .unwrap();
        }
    }

    fn lines(output: &ToolOutput) -> Vec<String> {
        assert_ok(output).lines().map(str::to_string).collect()
    }

    #[tokio::test]
    async fn matches_relative_to_the_root_newest_first_as_absolute_paths() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        tree(root, &["src/a.rs", "src/deep/b.rs", "top.rs", "notes.md"]);
        let out = call(&GlobTool, root, json!({"pattern": "**/*.rs"})).await;
        let expected: Vec<String> = ["top.rs", "src/deep/b.rs", "src/a.rs"]
            .iter()
            .map(|p| root.join(p).display().to_string())
            .collect();
        assert_eq!(lines(&out), expected);
        let out = call(&GlobTool, root, json!({"pattern": "*.rs"})).await;
        assert_eq!(lines(&out), vec![root.join("top.rs").display().to_string()]);
        let out = call(&GlobTool, root, json!({"pattern": "*.rs", "path": "src"})).await;
        assert_eq!(
            lines(&out),
            vec![root.join("src/a.rs").display().to_string()]
        );
        let absolute = format!("{}/src/**/*.rs", root.display());
        let out = call(&GlobTool, Path::new("/"), json!({"pattern": absolute})).await;
        assert_eq!(lines(&out).len(), 2);
    }

    #[tokio::test]
    async fn gitignored_and_hidden_files_are_skipped_unless_named() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir(root.join(".git")).unwrap();
        tree(
            root,
            &[
                ".gitignore",
                "target/out.txt",
                "keep.txt",
                ".hidden/h.txt",
                ".env.txt",
            ],
        );
        std::fs::write(root.join(".gitignore"), "target/\n").unwrap();
        let out = call(&GlobTool, root, json!({"pattern": "**/*.txt"})).await;
        assert_eq!(
            lines(&out),
            vec![root.join("keep.txt").display().to_string()]
        );
        tree(root, &[".git/config.txt"]);
        let out = call(&GlobTool, root, json!({"pattern": "**/.*/*.txt"})).await;
        assert_eq!(
            lines(&out),
            vec![root.join(".hidden/h.txt").display().to_string()]
        );
        let out = call(&GlobTool, root, json!({"pattern": ".hidden/*.txt"})).await;
        assert_eq!(
            lines(&out),
            vec![root.join(".hidden/h.txt").display().to_string()]
        );
        let out = call(&GlobTool, root, json!({"pattern": "*.nothing"})).await;
        assert_eq!(assert_ok(&out), "No files found");
    }

    #[tokio::test]
    async fn more_than_100_matches_are_cut_with_a_note() {
        let dir = tempfile::tempdir().unwrap();
        let names: Vec<String> = (0..130).map(|i| format!("f{i:03}.txt")).collect();
        let refs: Vec<&str> = names.iter().map(String::as_str).collect();
        tree(dir.path(), &refs);
        let out = call(&GlobTool, dir.path(), json!({"pattern": "*.txt"})).await;
        let lines = lines(&out);
        assert_eq!(lines.len(), 101);
        assert_eq!(lines[0], dir.path().join("f129.txt").display().to_string());
        assert!(lines[100].contains("showing the 100 most recently modified of 130 files"));
    }

    #[tokio::test]
    async fn a_literal_pattern_finds_that_file() {
        let dir = tempfile::tempdir().unwrap();
        tree(dir.path(), &["src/main.rs", "src/lib.rs"]);
        let out = call(&GlobTool, dir.path(), json!({"pattern": "src/main.rs"})).await;
        assert_eq!(
            lines(&out),
            vec![dir.path().join("src/main.rs").display().to_string()]
        );
    }

    #[tokio::test]
    async fn invalid_input_bad_globs_missing_dirs_and_cancellation() {
        let dir = tempfile::tempdir().unwrap();
        let out = call(&GlobTool, dir.path(), json!({"path": "."})).await;
        assert_eq!(
            out.content,
            "Invalid input for Glob: missing required field \"pattern\""
        );
        let out = call(&GlobTool, dir.path(), json!({"pattern": 7})).await;
        assert_error_contains(&out, "\"pattern\" must be a string");
        let out = call(&GlobTool, dir.path(), json!({"pattern": "src/[a"})).await;
        assert_error_contains(&out, "Invalid glob pattern");
        let out = call(
            &GlobTool,
            dir.path(),
            json!({"pattern": "*", "path": "nope"}),
        )
        .await;
        assert_error_contains(&out, "Path does not exist");
        let context = ctx(dir.path());
        context.cancel.cancel();
        let out = GlobTool.call(json!({"pattern": "**/*"}), &context).await;
        assert_error_contains(&out, "interrupted by user");
    }

    #[test]
    fn plans_walk_only_below_the_literal_prefix() {
        let plan = plan(Path::new("/r"), "src/**/x/*.rs").unwrap();
        assert_eq!(plan.base, PathBuf::from("/r/src"));
        assert_eq!(plan.max_depth, None);
        let plan = super::plan(Path::new("/r"), "a/*/b.rs").unwrap();
        assert_eq!(plan.base, PathBuf::from("/r/a"));
        assert_eq!(plan.max_depth, Some(2));
        assert!(!plan.include_hidden);
    }
}
