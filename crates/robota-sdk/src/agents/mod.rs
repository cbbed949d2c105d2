//! Subagents: their definitions (`definition`: built-ins and Claude Code's Markdown
//! agents) and the `Agent` tool that runs one as a child session (`tool`).

pub mod definition;
mod tool;

pub use definition::{AgentCatalog, AgentDefinition, builtins};
pub use tool::{
    AGENT_TOOL, AgentRuntime, AgentTool, AgentToolSource, MAX_PARALLEL, ParentNow, SubagentTask,
};
