//! Why the MCP servers could not be gathered or reached: [`McpError`] (a `--mcp-config`
//! that cannot be read, no server of that name…).

/// Why the servers could not be gathered, or one could not be reached.
#[derive(Debug, thiserror::Error)]
pub enum McpError {
    #[error("cannot read --mcp-config file {file}: {source}")]
    ReadConfig {
        file: String,
        #[source]
        source: std::io::Error,
    },
    #[error("--mcp-config {label}: invalid JSON: {source}")]
    ConfigJson {
        label: String,
        #[source]
        source: serde_json::Error,
    },
    /// The file is JSON but not a server map.
    #[error("--mcp-config {label}: {source}")]
    ConfigShape {
        label: String,
        #[source]
        source: robota_tools::mcp::McpConfigError,
    },
    #[error(
        "No MCP server named {name:?} (configured: {})",
        if .configured.is_empty() { "none".to_string() } else { .configured.join(", ") }
    )]
    NoServer {
        name: String,
        configured: Vec<String>,
    },
    #[error("{}", super::command::NO_SERVERS)]
    NoServers,
}
