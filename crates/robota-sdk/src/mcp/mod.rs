//! The MCP client's SDK side (DESIGN §15): which servers a session has and where they are
//! configured (`sources`), their life while it runs — background connection, status,
//! reconnect, shutdown, and their tools as a live tool source (`manager`) — and the `/mcp`
//! command (`command`). Transports and tools are `tools::mcp`.

pub mod command;
pub mod error;
pub mod manager;
pub mod sources;

pub use error::McpError;
pub use manager::{McpManager, ServerReport, ServerStatus, startup_wait};
pub use sources::{ConfiguredServer, ServerList, untrusted_project_servers};
pub(crate) use sources::{McpSources, collect};
