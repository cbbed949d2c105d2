//! Subagents: their definitions (`definition`: built-ins and Claude Code's Markdown
//! agents) and the `Agent` tool that runs one as a child session (`tool`).

pub mod definition;
mod tool;

pub use definition::{AgentCatalog, AgentDefinition, builtins};
pub(crate) use tool::{AgentRuntime, AgentTool, AgentToolSource, ParentNow, SubagentTask};
