//! The MCP client's tool side (DESIGN §15), on the `rmcp` crate: a server's configuration
//! and the file shapes it comes in (`server_config`), a live connection over stdio,
//! streamable HTTP, legacy SSE or an Agent SDK program's pipe (`connection`), the parts of
//! those transports rmcp does not bring (`http`: the HTTP client under rmcp's streamable
//! HTTP transport; `sse`: the legacy SSE transport; `event_stream`: reading event streams
//! for both; `sdk_transport`), and a server's tools as robota tools (`tool`).
//! Which servers a session has, and when they connect, is the SDK's business
//! (`sdk::mcp`).

mod connection;
mod event_stream;
mod http;
mod sdk_transport;
mod server_config;
mod sse;
#[cfg(test)]
mod test_http;
mod tool;

pub use connection::{ConnectError, McpConnection, McpRequestError, ServerOffer};
pub use sdk_transport::{SdkMcpAnswer, SdkMcpError, SdkMcpRouter};
pub use server_config::{McpConfigError, McpServerConfig, server_map};
pub use tool::{McpTool, normalize, output_of, qualified_name};
