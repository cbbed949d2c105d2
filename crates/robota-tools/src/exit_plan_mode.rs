//! The `ExitPlanMode` tool (Claude Code's): in plan mode the model explores read-only, then
//! presents its plan through this tool. The permission rules make the call a question to
//! the user (`PLAN_APPROVAL_TOOL`); the session leaves plan mode when the user approves,
//! and this call then tells the model to start. A refusal (with the user's feedback) keeps
//! the model planning.

use async_trait::async_trait;
use serde_json::{Value, json};

use super::input::{ToolInput, into_output};
use robota_core::permission::PLAN_APPROVAL_TOOL;
use robota_core::{RiskClass, Tool, ToolContext, ToolOutput};

const DESCRIPTION: &str = "Use this tool when you are in plan mode and have finished planning: pass the plan (markdown, concise) in `plan`. The user is asked to approve it; once approved you leave plan mode and may edit files and run commands. Only use it for tasks that need writing code, not for research.";

/// Presents the plan made in plan mode for the user's approval (Claude Code's
/// `ExitPlanMode`).
pub struct ExitPlanModeTool;

#[async_trait]
impl Tool for ExitPlanModeTool {
    fn name(&self) -> &str {
        PLAN_APPROVAL_TOOL
    }

    fn description(&self) -> &str {
        DESCRIPTION
    }

    fn input_schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "plan": {"type": "string", "description": "The plan to present for approval (markdown)."}
            },
            "required": ["plan"],
        })
    }

    fn risk(&self) -> RiskClass {
        RiskClass::Execute
    }

    fn primary_argument(&self, _input: &Value) -> Option<String> {
        None
    }

    async fn call(&self, input: Value, _ctx: &ToolContext) -> ToolOutput {
        into_output((|| {
            let input = ToolInput::parse(PLAN_APPROVAL_TOOL, &input)?;
            input.required_str("plan")?;
            Ok(ToolOutput::ok(
                "The user approved your plan. You can now start coding. Start with updating your todo list if applicable.",
            ))
        })())
    }
}
