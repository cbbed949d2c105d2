//! The tool contract: schema, risk class, the argument permission rules look at, and an
//! async call that never fails past the engine — every failure is an error result the
//! model can read. Also the registry the engine looks tools up in.

use std::path::PathBuf;
use std::sync::Arc;

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::provider::ToolSchema;

/// What a tool can do to the world; permission modes decide by it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RiskClass {
    /// Reads files or state; never asks in the default mode.
    Read,
    /// Changes files.
    Edit,
    /// Runs programs.
    Execute,
    /// Reaches the network.
    Network,
}

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
}

/// A todo item as TodoWrite keeps it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TodoItem {
    pub content: String,
    pub status: String,
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
        file_path: String,
        before: Option<String>,
        after: String,
    },
    /// The todo list after a TodoWrite.
    Todos { todos: Vec<TodoItem> },
}

/// What a tool call produced.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolOutput {
    pub content: String,
    pub is_error: bool,
    pub display: Option<ToolDisplay>,
}

impl ToolOutput {
    pub fn ok(content: impl Into<String>) -> Self {
        ToolOutput {
            content: content.into(),
            is_error: false,
            display: None,
        }
    }

    pub fn error(content: impl Into<String>) -> Self {
        ToolOutput {
            content: content.into(),
            is_error: true,
            display: None,
        }
    }

    pub fn with_display(mut self, display: ToolDisplay) -> Self {
        self.display = Some(display);
        self
    }
}

/// A capability the model can call.
#[async_trait]
pub trait Tool: Send + Sync {
    fn name(&self) -> &str;
    fn description(&self) -> &str;
    /// JSON Schema of the input object.
    fn input_schema(&self) -> Value;
    fn risk(&self) -> RiskClass;
    /// The argument permission rules match against: the command for Bash, the path for
    /// file tools, the URL for WebFetch. `None` when the input lacks it.
    fn primary_argument(&self, input: &Value) -> Option<String>;
    /// Runs the call. Must not panic; a failure is `ToolOutput::error`.
    async fn call(&self, input: Value, ctx: &ToolContext) -> ToolOutput;

    /// What the call would change, worked out by the code that will apply it, for the
    /// permission question (the diff of an Edit or Write); nothing is changed. `Err` is the
    /// error result the call would give: it fails before anyone is asked.
    async fn preview(
        &self,
        _input: &Value,
        _ctx: &ToolContext,
    ) -> Result<Option<ToolDisplay>, String> {
        Ok(None)
    }

    fn schema(&self) -> ToolSchema {
        ToolSchema {
            name: self.name().to_string(),
            description: self.description().to_string(),
            input_schema: self.input_schema(),
        }
    }
}

/// The tools offered in a session, in the order they are advertised.
#[derive(Clone, Default)]
pub struct ToolRegistry {
    tools: Vec<Arc<dyn Tool>>,
}

impl ToolRegistry {
    pub fn new(tools: Vec<Arc<dyn Tool>>) -> Self {
        ToolRegistry { tools }
    }

    pub fn get(&self, name: &str) -> Option<&Arc<dyn Tool>> {
        self.tools.iter().find(|t| t.name() == name)
    }

    pub fn names(&self) -> Vec<String> {
        self.tools.iter().map(|t| t.name().to_string()).collect()
    }

    pub fn schemas(&self) -> Vec<ToolSchema> {
        self.tools.iter().map(|t| t.schema()).collect()
    }

    /// Keeps only the tools `keep` accepts.
    pub fn retain(&mut self, keep: impl Fn(&str) -> bool) {
        self.tools.retain(|t| keep(t.name()));
    }

    pub fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }
}
