//! The tool contract: schema, risk class, the argument permission rules look at, and an
//! async call that never fails past the engine — every failure is an error result the
//! model can read. Also the registry the engine looks tools up in.

use std::path::PathBuf;
use std::sync::Arc;

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::message::ImageSource;
use super::provider::ToolSchema;

pub use crate::permission::RiskClass;

/// Per-call context handed to a tool.
#[derive(Debug, Clone)]
pub struct ToolContext {
    /// The session's working directory (relative paths resolve against it).
    pub cwd: PathBuf,
    /// Fires when the user aborts the turn.
    pub cancel: CancellationToken,
    /// The provider's id for this call.
    pub tool_use_id: String,
    /// Extra environment for processes the tool starts (settings `env`).
    pub env: Vec<(String, String)>,
    /// The files deny rules keep from reading, for tools that walk directories (Grep,
    /// Glob) and so reach files no permission check named; `None` when there are none.
    pub read_denial: Option<std::sync::Arc<super::permission::PathDenial>>,
    /// Where the call reports what it is doing while it runs (the last lines a command
    /// printed); clients show it until the result comes.
    pub progress: ToolProgress,
}

/// A running tool's progress reports: the last few lines of output so far, replacing the
/// previous report. Reporting never blocks; with no one listening it does nothing.
#[derive(Debug, Clone, Default)]
pub struct ToolProgress(Option<tokio::sync::mpsc::UnboundedSender<Vec<String>>>);

impl ToolProgress {
    /// A progress handle and the receiver its reports arrive on.
    pub fn channel() -> (Self, tokio::sync::mpsc::UnboundedReceiver<Vec<String>>) {
        let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
        (ToolProgress(Some(tx)), rx)
    }

    /// Reports the last lines of output so far.
    pub fn tail(&self, lines: Vec<String>) {
        if let Some(tx) = &self.0 {
            let _ = tx.send(lines);
        }
    }
}

/// A todo item as TodoWrite keeps it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TodoItem {
    /// What to do, in the imperative (`Run the tests`).
    pub content: String,
    /// `pending`, `in_progress` or `completed`.
    pub status: String,
    /// The same in the present continuous, shown while the item is in progress
    /// (`Running the tests`).
    #[serde(
        rename = "activeForm",
        default,
        skip_serializing_if = "String::is_empty"
    )]
    pub active_form: String,
}

/// Structured data for display next to a tool's text result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ToolDisplay {
    /// A file changed: its text before (None when created) and after.
    FileDiff {
        /// The file's path.
        file_path: String,
        /// Its text before the change; `None` when the file was created.
        before: Option<String>,
        /// Its text after the change.
        after: String,
    },
    /// The todo list after a TodoWrite.
    Todos {
        /// The whole list, in order.
        todos: Vec<TodoItem>,
    },
    /// A command that goes on running in the background (started there, or sent there by
    /// the user while it ran).
    Background {
        /// The job's id, which the model and `/tasks` use.
        job_id: String,
        /// The file its output goes to.
        output_file: String,
    },
}

/// What a tool call produced.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolOutput {
    /// The text the model reads as the call's result.
    pub content: String,
    /// Images the model sees with the text (Read of a picture).
    pub images: Vec<ImageSource>,
    /// Whether the call failed (the model is told so).
    pub is_error: bool,
    /// Structured data clients show beside the text (a diff, the todo list).
    pub display: Option<ToolDisplay>,
}

impl ToolOutput {
    /// A successful result with `content` for the model.
    pub fn ok(content: impl Into<String>) -> Self {
        ToolOutput {
            content: content.into(),
            images: Vec::new(),
            is_error: false,
            display: None,
        }
    }

    /// A failed result: `content` says what went wrong, for the model.
    pub fn error(content: impl Into<String>) -> Self {
        ToolOutput {
            content: content.into(),
            images: Vec::new(),
            is_error: true,
            display: None,
        }
    }

    /// A successful result the model reads as `content` and sees as `images`.
    pub fn with_images(content: impl Into<String>, images: Vec<ImageSource>) -> Self {
        ToolOutput {
            images,
            ..ToolOutput::ok(content)
        }
    }

    /// The same result with `display` for clients.
    pub fn with_display(mut self, display: ToolDisplay) -> Self {
        self.display = Some(display);
        self
    }
}

/// A call that fails before it runs, found by the tool's preview: `message` is the error
/// result the call would end with, for the model.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct PreviewError {
    /// The error result the call would end with.
    pub message: String,
}

impl PreviewError {
    /// A preview failure with this message for the model.
    pub fn new(message: impl Into<String>) -> Self {
        PreviewError {
            message: message.into(),
        }
    }
}

/// A capability the model can call. An embedding program implements it (with
/// `#[async_trait]`) to give the model its own tools; see `robota::sdk::SessionBuilder::tool`.
#[async_trait]
pub trait Tool: Send + Sync {
    /// The name the model calls it by and permission rules name (`Bash`, `SaveNote`).
    fn name(&self) -> &str;
    /// What it does and when to use it, for the model.
    fn description(&self) -> &str;
    /// JSON Schema of the input object.
    fn input_schema(&self) -> Value;
    /// What it can do to the world; the permission mode decides by it whether a call
    /// needs approval.
    fn risk(&self) -> RiskClass;
    /// The argument permission rules match against: the command for Bash, the path for
    /// file tools, the URL for WebFetch. `None` when the input lacks it.
    fn primary_argument(&self, input: &Value) -> Option<String>;
    /// Runs the call. Must not panic; a failure is `ToolOutput::error`.
    async fn call(&self, input: Value, ctx: &ToolContext) -> ToolOutput;

    /// Where the next call's command starts, for a tool that keeps a directory of its own
    /// between calls (Bash follows `cd`); permission checks resolve the command's relative
    /// paths there. `None`: the session's working directory.
    fn start_dir(&self) -> Option<std::path::PathBuf> {
        None
    }

    /// The longest result the model reads from it, in characters; a longer one is cut in
    /// the middle with a marker. `None`: never cut (a skill's instructions arrive whole,
    /// as in Claude Code).
    fn max_result_chars(&self) -> Option<usize> {
        Some(crate::truncate::TOOL_OUTPUT_CAP)
    }

    /// What the call would change, worked out by the code that will apply it, for the
    /// permission question (the diff of an Edit or Write); nothing is changed. `Err` is the
    /// error result the call would give: it fails before anyone is asked.
    async fn preview(
        &self,
        _input: &Value,
        _ctx: &ToolContext,
    ) -> Result<Option<ToolDisplay>, PreviewError> {
        Ok(None)
    }

    /// Its name, description and input schema as providers advertise it.
    fn schema(&self) -> ToolSchema {
        ToolSchema {
            name: self.name().to_string(),
            description: self.description().to_string(),
            input_schema: self.input_schema(),
        }
    }
}

/// Tools that come and go while a session runs (an MCP server's tools join when it
/// connects): asked afresh each time the registry is read.
pub trait ToolSource: Send + Sync {
    /// The tools the source offers now.
    fn tools(&self) -> Vec<Arc<dyn Tool>>;
}

type ToolFilter = Arc<dyn Fn(&str) -> bool + Send + Sync>;

/// The tools offered in a session, in the order they are advertised: the fixed ones, then
/// those of the live sources, each time the registry is read (so a model request sees the
/// tools that exist when it is made).
#[derive(Clone, Default)]
pub struct ToolRegistry {
    tools: Vec<Arc<dyn Tool>>,
    sources: Vec<Arc<dyn ToolSource>>,
    filters: Vec<ToolFilter>,
}

impl ToolRegistry {
    /// A registry of these fixed tools, in this order, with no sources or filters.
    pub fn new(tools: Vec<Arc<dyn Tool>>) -> Self {
        ToolRegistry {
            tools,
            ..ToolRegistry::default()
        }
    }

    /// Adds a source whose tools follow the fixed ones.
    pub fn add_source(&mut self, source: Arc<dyn ToolSource>) {
        self.sources.push(source);
    }

    /// Every tool now offered: the fixed ones, then the sources', minus those filtered
    /// out.
    pub fn all(&self) -> Vec<Arc<dyn Tool>> {
        let mut all = self.tools.clone();
        for source in &self.sources {
            all.extend(
                source
                    .tools()
                    .into_iter()
                    .filter(|t| self.filters.iter().all(|keep| keep(t.name()))),
            );
        }
        all
    }

    /// The tool offered under `name`, if any.
    pub fn get(&self, name: &str) -> Option<Arc<dyn Tool>> {
        if let Some(tool) = self.tools.iter().find(|t| t.name() == name) {
            return Some(tool.clone());
        }
        self.all().into_iter().find(|t| t.name() == name)
    }

    /// The names of every tool now offered, in order.
    pub fn names(&self) -> Vec<String> {
        self.all().iter().map(|t| t.name().to_string()).collect()
    }

    /// The schemas of every tool now offered, in order, as providers advertise them.
    pub fn schemas(&self) -> Vec<ToolSchema> {
        self.all().iter().map(|t| t.schema()).collect()
    }

    /// Keeps only the tools `keep` accepts, those sources add later included.
    pub fn retain(&mut self, keep: impl Fn(&str) -> bool + Send + Sync + 'static) {
        self.tools.retain(|t| keep(t.name()));
        self.filters.push(Arc::new(keep));
    }

    /// Whether no tool is offered now.
    pub fn is_empty(&self) -> bool {
        self.all().is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    struct Named(&'static str);

    #[async_trait]
    impl Tool for Named {
        fn name(&self) -> &str {
            self.0
        }
        fn description(&self) -> &str {
            "d"
        }
        fn input_schema(&self) -> Value {
            serde_json::json!({"type": "object"})
        }
        fn risk(&self) -> RiskClass {
            RiskClass::Read
        }
        fn primary_argument(&self, _input: &Value) -> Option<String> {
            None
        }
        async fn call(&self, _input: Value, _ctx: &ToolContext) -> ToolOutput {
            ToolOutput::ok("")
        }
    }

    struct Late(Mutex<Vec<Arc<dyn Tool>>>);

    impl ToolSource for Late {
        fn tools(&self) -> Vec<Arc<dyn Tool>> {
            self.0.lock().map(|t| t.clone()).unwrap_or_default()
        }
    }

    #[test]
    fn tools_of_a_source_join_when_they_appear_and_filters_apply_to_them() {
        let late = Arc::new(Late(Mutex::new(Vec::new())));
        let mut registry =
            ToolRegistry::new(vec![Arc::new(Named("Read")), Arc::new(Named("Bash"))]);
        registry.add_source(late.clone());
        registry.retain(|name| name != "Bash" && name != "mcp__s__gone");
        assert_eq!(registry.names(), ["Read"]);
        late.0.lock().unwrap().extend([
            Arc::new(Named("mcp__s__a")) as Arc<dyn Tool>,
            Arc::new(Named("mcp__s__gone")),
        ]);
        assert_eq!(registry.names(), ["Read", "mcp__s__a"]);
        assert!(registry.get("mcp__s__a").is_some());
        assert!(registry.get("mcp__s__gone").is_none());
        assert_eq!(registry.schemas().len(), 2);
    }
}
