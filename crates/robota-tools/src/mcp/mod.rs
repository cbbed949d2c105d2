//! The MCP client's tool side (DESIGN §15), on the `rmcp` crate: a server's configuration
//! and the file shapes it comes in (`server_config`), a live connection over stdio,
//! streamable HTTP, SSE or an Agent SDK program's pipe (`connection`, `sdk_transport`), and a server's tools as robota tools (`tool`).
//! Which servers a session has, and when they connect, is the SDK's business
//! (`sdk::mcp`).

mod connection;
mod sdk_transport;
mod server_config;
mod tool;

pub use connection::{ConnectError, McpConnection, ServerOffer};
pub use sdk_transport::{SdkMcpAnswer, SdkMcpRouter};
pub use server_config::{McpServerConfig, server_map};
pub use tool::{McpTool, normalize, output_of, qualified_name};
