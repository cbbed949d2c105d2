//! Built-in tools with Claude Code's names and input schemas: Bash, Glob, Grep, Read,
//! Edit, Write, TodoWrite (one file each, tests of the larger ones in `*_tests.rs`). Each
//! implements `core::Tool` and turns every failure, invalid input from the model included,
//! into an error result, never a panic. Shared pieces: input parsing (`input`), path
//! resolution (`paths`), the read-before-write record (`file_tracker`), atomic writes
//! (`file_write`), the parallel walk behind Glob and Grep (`walk`, `grep_search`), the
//! process runner and background jobs behind Bash (`shell_process`, `live_run` for a run
//! watched live or sent to the background, `background_jobs`),
//! the session's todo list (`todo`), and what a hosting editor offers instead of the disk
//! and local processes (`host`). `default_tools` wires the seven together. WebFetch
//! and WebSearch (`web_fetch`, `web_search`, machinery in `web`) depend on settings, so
//! the caller adds them: `web_fetch_tool(section)`, and `web_search_tool(section)` when a
//! search backend is configured.

#![deny(missing_docs)]

mod background_jobs;
mod background_note;
mod bash;
mod edit;
mod exit_plan_mode;
mod file_tracker;
mod file_write;
mod glob;
mod grep;
mod grep_search;
mod host;
mod input;
mod live_run;
pub mod mcp;
mod paths;
mod read;
mod recorded;
pub use robota_sandbox as sandbox;
mod shell_process;
mod structured_output;
mod todo;
mod walk;
pub mod web;
mod web_fetch;
mod web_search;
mod write;

#[cfg(test)]
mod test_support;

use std::path::Path;
use std::sync::Arc;

use robota_core::Tool;

pub use background_jobs::BackgroundJob;
pub use bash::BashTool;
use edit::EditTool;
pub use exit_plan_mode::ExitPlanModeTool;
pub use file_tracker::FileReadTracker;
pub use glob::GlobTool;
pub use grep::GrepTool;
pub use host::{
    HostEnding, HostError, HostFiles, HostSource, HostTerminal, TerminalCommand, TerminalRun,
    ToolHost,
};
pub use live_run::{RunWatch, TAIL_LINES, WatchedRun, run_watched};
pub use paths::resolve as resolve_path;
pub use read::ReadTool;
pub use recorded::recorded_display;
pub use shell_process::{Ending, ShellRun, ShellScript, run_script};
pub use structured_output::{
    STRUCTURED_OUTPUT_INSTRUCTION, STRUCTURED_OUTPUT_TOOL, SchemaError, StructuredOutputTool,
    StructuredSlot,
};
pub use todo::TodoList;
use todo::TodoWriteTool;
pub use web::search_backend::{SearchConfigError, WebSearchSection};
pub use web_fetch::{WebFetchConfig, WebFetchSection, WebFetchTool, web_fetch_tool};
pub use web_search::web_search_tool;
use write::WriteTool;

/// The built-in tools of a session with the state they share, for a session that needs
/// more than the list: the todo list (to show and persist it) and the Bash tool (its
/// current directory, its background jobs).
pub struct DefaultTools {
    /// Bash, Glob, Grep, Read, Edit, Write, TodoWrite, in that order.
    pub tools: Vec<Arc<dyn Tool>>,
    /// The Bash tool of `tools`, for its current directory and background jobs.
    pub bash: Arc<BashTool>,
    /// The list TodoWrite writes to (the one [`default_tool_set`] was given).
    pub todos: TodoList,
    /// The read-before-write record Read, Edit and Write share.
    pub read_tracker: FileReadTracker,
}

/// Builds the seven built-in tools: Read, Edit and Write share one [`FileReadTracker`];
/// TodoWrite writes to `todos`; Bash starts in `cwd`. Read, Edit, Write and Bash use what
/// `host` offers (its files, its terminal) and the disk and local processes otherwise.
pub fn default_tool_set(cwd: &Path, todos: TodoList, host: &ToolHost) -> DefaultTools {
    let read_tracker = FileReadTracker::new();
    let bash = Arc::new(BashTool::new(cwd).on_host(host));
    let tools: Vec<Arc<dyn Tool>> = vec![
        bash.clone(),
        Arc::new(GlobTool),
        Arc::new(GrepTool),
        Arc::new(ReadTool::new(read_tracker.clone()).on_host(host.clone())),
        Arc::new(EditTool::new(read_tracker.clone()).on_host(host.clone())),
        Arc::new(WriteTool::new(read_tracker.clone()).on_host(host.clone())),
        Arc::new(TodoWriteTool::new(todos.clone())),
    ];
    DefaultTools {
        tools,
        bash,
        todos,
        read_tracker,
    }
}

/// The seven built-in tools in the order they are advertised: Bash, Glob, Grep, Read,
/// Edit, Write, TodoWrite.
pub fn default_tools(cwd: &Path) -> Vec<Arc<dyn Tool>> {
    default_tool_set(cwd, TodoList::new(), &ToolHost::default()).tools
}

#[cfg(test)]
mod tests {
    use super::*;
    use robota_core::RiskClass;
    use serde_json::json;

    #[test]
    fn seven_tools_in_order_with_their_risks() {
        let dir = tempfile::tempdir().unwrap();
        let tools = default_tools(dir.path());
        let names: Vec<&str> = tools.iter().map(|t| t.name()).collect();
        assert_eq!(
            names,
            ["Bash", "Glob", "Grep", "Read", "Edit", "Write", "TodoWrite"]
        );
        let risks: Vec<RiskClass> = tools.iter().map(|t| t.risk()).collect();
        use RiskClass::*;
        assert_eq!(risks, [Execute, Read, Read, Read, Edit, Edit, Read]);
    }

    #[test]
    fn primary_arguments() {
        let dir = tempfile::tempdir().unwrap();
        let tools = default_tools(dir.path());
        let primary = |i: usize, input: serde_json::Value| tools[i].primary_argument(&input);
        assert_eq!(
            primary(0, json!({"command": "ls -la"})),
            Some("ls -la".into())
        );
        assert_eq!(
            primary(1, json!({"pattern": "*.rs", "path": "src"})),
            Some("src".into())
        );
        assert_eq!(primary(2, json!({"pattern": "TODO"})), Some("TODO".into()));
        for i in 3..6 {
            assert_eq!(
                primary(i, json!({"file_path": "/a/b"})),
                Some("/a/b".into())
            );
        }
        assert_eq!(primary(6, json!({"todos": []})), None);
        assert_eq!(primary(3, json!({})), None);
    }

    #[test]
    fn schemas_and_descriptions_fit_the_budget_and_name_required_fields() {
        let dir = tempfile::tempdir().unwrap();
        let tools = default_tools(dir.path());
        let schemas: Vec<_> = tools.iter().map(|t| t.schema()).collect();
        let size = serde_json::to_string(&schemas).unwrap().len();
        assert!(size < 7 * 1024, "tool list is {size} bytes of JSON");
        let required = |i: usize| schemas[i].input_schema["required"].clone();
        assert_eq!(required(0), json!(["command"]));
        assert_eq!(required(3), json!(["file_path"]));
        assert_eq!(
            required(4),
            json!(["file_path", "old_string", "new_string"])
        );
        assert_eq!(required(5), json!(["file_path", "content"]));
        assert_eq!(required(6), json!(["todos"]));
        let grep_props = schemas[2].input_schema["properties"].as_object().unwrap();
        let keys: Vec<&str> = grep_props.keys().map(String::as_str).collect();
        assert_eq!(
            keys,
            [
                "pattern",
                "path",
                "glob",
                "type",
                "output_mode",
                "-i",
                "-n",
                "-A",
                "-B",
                "-C",
                "multiline",
                "head_limit"
            ]
        );
    }

    #[tokio::test]
    async fn read_edit_and_write_share_one_tracker_and_todos_are_exposed() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("f.txt"), "old\n").unwrap();
        let set = default_tool_set(dir.path(), TodoList::new(), &ToolHost::default());
        let ctx = test_support::ctx(dir.path());
        let read = set.tools[3].call(json!({"file_path": "f.txt"}), &ctx).await;
        assert!(!read.is_error);
        assert!(set.read_tracker.stamp(&dir.path().join("f.txt")).is_some());
        let edit = set.tools[4]
            .call(
                json!({"file_path": "f.txt", "old_string": "old", "new_string": "new"}),
                &ctx,
            )
            .await;
        assert!(!edit.is_error, "{}", edit.content);
        let write = set.tools[5]
            .call(json!({"file_path": "f.txt", "content": "final\n"}), &ctx)
            .await;
        assert!(!write.is_error, "{}", write.content);
        let todo = json!({"todos": [{"content": "a", "status": "pending", "activeForm": "A"}]});
        assert!(!set.tools[6].call(todo, &ctx).await.is_error);
        assert_eq!(set.todos.items().len(), 1);
    }

    #[tokio::test]
    async fn every_tool_answers_unparseable_input_with_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let ctx = test_support::ctx(dir.path());
        for tool in default_tools(dir.path()) {
            let cut = json!({robota_core::INVALID_INPUT_KEY: "{\"trunc"});
            let out = tool.call(cut, &ctx).await;
            assert!(out.is_error);
            assert!(
                out.content
                    .starts_with(&format!("Invalid input for {}: ", tool.name())),
                "{}",
                out.content
            );
            let out = tool.call(json!(null), &ctx).await;
            assert!(
                out.content.contains("expected a JSON object"),
                "{}",
                out.content
            );
        }
    }
}
