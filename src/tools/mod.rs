//! Built-in tools with Claude Code's names and input schemas: Bash, Glob, Grep, Read,
//! Edit, Write, TodoWrite. Each implements `core::Tool` and turns every failure (including
//! invalid input from the model) into an error result, never a panic. Shared pieces live
//! here too: input parsing (`input`), path resolution (`paths`), the read-before-write
//! record (`file_tracker`), atomic writes (`file_write`), the todo list (`todo`), and the
//! process runner and background jobs behind Bash.

mod edit;
mod file_tracker;
mod file_write;
mod input;
mod paths;
mod read;
mod todo;
mod write;

#[cfg(test)]
mod test_support;

pub use edit::EditTool;
pub use file_tracker::{FileReadTracker, FileStamp, Staleness};
pub use input::{InvalidInput, ToolFailure};
pub use read::ReadTool;
pub use todo::{TodoList, TodoWriteTool};
pub use write::WriteTool;
