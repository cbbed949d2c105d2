//! The TodoWrite tool and the session's [`TodoList`] it replaces on every call: validated
//! items (content, status, activeForm), a short confirmation with the list for the model,
//! and a `Todos` display for the UI. The session reads (and on resume restores) the list.

use std::sync::{Arc, Mutex, MutexGuard};

use async_trait::async_trait;
use serde_json::{Value, json};

use super::input::{ToolFailure, ToolInput, into_output, quoted_list, type_name};
use robota_core::{RiskClass, TodoItem, Tool, ToolContext, ToolDisplay, ToolOutput};

pub const TODO_STATUSES: [&str; 3] = ["pending", "in_progress", "completed"];

const DESCRIPTION: &str = "Replaces the session's task list (send the whole list each time). \
Use it for work with 3+ steps or when the user lists several tasks: plan the steps, keep exactly one in_progress while working, \
mark each completed as soon as it is done, add tasks you discover. Skip it for a single trivial task. \
content is imperative (\"Run tests\"); activeForm is shown while in progress (\"Running tests\").";

/// The current todo items, shared between TodoWrite and the session. Cloning shares it.
#[derive(Debug, Clone, Default)]
pub struct TodoList {
    items: Arc<Mutex<Vec<TodoItem>>>,
}

impl TodoList {
    /// An empty list.
    pub fn new() -> Self {
        Self::default()
    }

    fn lock(&self) -> MutexGuard<'_, Vec<TodoItem>> {
        self.items
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// A copy of the current items.
    pub fn items(&self) -> Vec<TodoItem> {
        self.lock().clone()
    }

    /// Replaces the list (TodoWrite, or a resumed session restoring its state).
    pub fn replace(&self, items: Vec<TodoItem>) {
        *self.lock() = items;
    }
}

pub(crate) struct TodoWriteTool {
    list: TodoList,
}

impl TodoWriteTool {
    pub fn new(list: TodoList) -> Self {
        TodoWriteTool { list }
    }

    fn run(&self, input: &Value) -> Result<ToolOutput, ToolFailure> {
        let input = ToolInput::parse("TodoWrite", input)?;
        let raw = input.required_array("todos")?;
        let mut items = Vec::with_capacity(raw.len());
        for (index, value) in raw.iter().enumerate() {
            items.push(parse_item(&input, index, value)?);
        }
        self.list.replace(items.clone());
        Ok(ToolOutput::ok(render(&items)).with_display(ToolDisplay::Todos { todos: items }))
    }
}

fn parse_item(input: &ToolInput<'_>, index: usize, value: &Value) -> Result<TodoItem, ToolFailure> {
    let Some(item) = value.as_object() else {
        return Err(input
            .invalid(format!(
                "todos[{index}] must be an object, got {}",
                type_name(value)
            ))
            .into());
    };
    let text = |key: &str| -> Result<Option<String>, ToolFailure> {
        match item.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(other) => Err(input
                .invalid(format!(
                    "todos[{index}].{key} must be a string, got {}",
                    type_name(other)
                ))
                .into()),
        }
    };
    let content = text("content")?
        .filter(|c| !c.trim().is_empty())
        .ok_or_else(|| input.invalid(format!("todos[{index}] needs a non-empty \"content\"")))?;
    let status = text("status")?
        .ok_or_else(|| input.invalid(format!("todos[{index}] is missing \"status\"")))?;
    if !TODO_STATUSES.contains(&status.as_str()) {
        return Err(input
            .invalid(format!(
                "todos[{index}].status must be one of {}, got \"{status}\"",
                quoted_list(&TODO_STATUSES)
            ))
            .into());
    }
    let active_form = text("activeForm")?.unwrap_or_else(|| content.clone());
    Ok(TodoItem {
        content,
        status,
        active_form,
    })
}

fn render(items: &[TodoItem]) -> String {
    if items.is_empty() {
        return "Todo list cleared.".to_string();
    }
    let done = items.iter().filter(|i| i.status == "completed").count();
    let mut out = format!(
        "Todo list updated ({done} of {} completed). Keep it current as you work:",
        items.len()
    );
    for item in items {
        let mark = match item.status.as_str() {
            "completed" => "[x]",
            "in_progress" => "[~]",
            _ => "[ ]",
        };
        out.push_str(&format!("\n{mark} {}", item.content));
    }
    out
}

#[async_trait]
impl Tool for TodoWriteTool {
    fn name(&self) -> &str {
        "TodoWrite"
    }

    fn description(&self) -> &str {
        DESCRIPTION
    }

    fn input_schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "todos": {
                    "type": "array",
                    "description": "The updated todo list",
                    "items": {
                        "type": "object",
                        "properties": {
                            "content": {"type": "string", "minLength": 1},
                            "status": {"type": "string", "enum": TODO_STATUSES},
                            "activeForm": {"type": "string", "minLength": 1}
                        },
                        "required": ["content", "status", "activeForm"]
                    }
                }
            },
            "required": ["todos"]
        })
    }

    fn risk(&self) -> RiskClass {
        RiskClass::Read
    }

    fn primary_argument(&self, _input: &Value) -> Option<String> {
        None
    }

    async fn call(&self, input: Value, _ctx: &ToolContext) -> ToolOutput {
        into_output(self.run(&input))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::{assert_error_contains, assert_ok, call};

    #[tokio::test]
    async fn replaces_the_shared_list_and_confirms_with_it() {
        let dir = tempfile::tempdir().unwrap();
        let list = TodoList::new();
        let tool = TodoWriteTool::new(list.clone());
        let out = call(
            &tool,
            dir.path(),
            json!({"todos": [
                {"content": "Write tests", "status": "completed", "activeForm": "Writing tests"},
                {"content": "Fix bug", "status": "in_progress", "activeForm": "Fixing bug"},
                {"content": "Ship", "status": "pending"}
            ]}),
        )
        .await;
        assert_eq!(
            assert_ok(&out),
            "Todo list updated (1 of 3 completed). Keep it current as you work:\n[x] Write tests\n[~] Fix bug\n[ ] Ship"
        );
        let items = list.items();
        assert_eq!(items.len(), 3);
        assert_eq!(items[1].active_form, "Fixing bug");
        assert_eq!(items[2].active_form, "Ship");
        assert_eq!(out.display, Some(ToolDisplay::Todos { todos: items }));

        let out = call(&tool, dir.path(), json!({"todos": []})).await;
        assert_eq!(assert_ok(&out), "Todo list cleared.");
        assert!(list.items().is_empty());
    }

    #[tokio::test]
    async fn invalid_items_are_refused_and_the_list_is_kept() {
        let dir = tempfile::tempdir().unwrap();
        let list = TodoList::new();
        list.replace(vec![TodoItem {
            content: "keep".into(),
            status: "pending".into(),
            active_form: "Keeping".into(),
        }]);
        let tool = TodoWriteTool::new(list.clone());
        let bad_status = json!({"todos": [{"content": "a", "status": "done", "activeForm": "A"}]});
        assert_error_contains(
            &call(&tool, dir.path(), bad_status).await,
            "todos[0].status must be one of \"pending\", \"in_progress\", \"completed\", got \"done\"",
        );
        let no_content = json!({"todos": [{"status": "pending"}]});
        assert_error_contains(
            &call(&tool, dir.path(), no_content).await,
            "non-empty \"content\"",
        );
        let not_object = json!({"todos": ["a"]});
        assert_error_contains(
            &call(&tool, dir.path(), not_object).await,
            "todos[0] must be an object",
        );
        let out = call(&tool, dir.path(), json!({})).await;
        assert_eq!(
            out.content,
            "Invalid input for TodoWrite: missing required field \"todos\""
        );
        let out = call(&tool, dir.path(), json!({"todos": "a"})).await;
        assert_error_contains(&out, "\"todos\" must be an array");
        assert_eq!(list.items()[0].content, "keep");
    }
}
