//! Helpers for the tools' unit tests: a context rooted in a temp dir and a one-line call.

use std::path::Path;

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use robota_core::{Tool, ToolContext, ToolOutput};

pub fn ctx(cwd: &Path) -> ToolContext {
    ToolContext {
        cwd: cwd.to_path_buf(),
        cancel: CancellationToken::new(),
        tool_use_id: "toolu_test".to_string(),
        env: Vec::new(),
        read_denial: None,
        progress: Default::default(),
    }
}

pub async fn call(tool: &dyn Tool, cwd: &Path, input: Value) -> ToolOutput {
    tool.call(input, &ctx(cwd)).await
}

/// Asserts an error result whose text contains `needle`.
#[track_caller]
pub fn assert_error_contains(output: &ToolOutput, needle: &str) {
    assert!(
        output.is_error,
        "expected an error, got: {}",
        output.content
    );
    assert!(
        output.content.contains(needle),
        "error {:?} does not contain {needle:?}",
        output.content
    );
}

/// Asserts a successful result and returns its text.
#[track_caller]
pub fn assert_ok(output: &ToolOutput) -> &str {
    assert!(!output.is_error, "unexpected error: {}", output.content);
    &output.content
}
