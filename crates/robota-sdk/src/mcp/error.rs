//! Why the MCP servers could not be gathered or reached: [`McpError`] (a `--mcp-config`
//! that cannot be read, no server of that name…).

/// Why the servers could not be gathered, or one could not be reached.
#[derive(Debug, thiserror::Error)]
pub enum McpError {
    /// A `--mcp-config` file could not be read.
    #[error("cannot read --mcp-config file {file}: {source}")]
    ReadConfig {
        /// The file as given on the command line.
        file: String,
        /// The io error.
        #[source]
        source: std::io::Error,
    },
    /// A `--mcp-config` value is not JSON.
    #[error("--mcp-config {label}: invalid JSON: {source}")]
    ConfigJson {
        /// The file it came from, or `--mcp-config` for inline JSON.
        label: String,
        /// The parse error.
        #[source]
        source: serde_json::Error,
    },
    /// The file is JSON but not a server map.
    #[error("--mcp-config {label}: {source}")]
    ConfigShape {
        /// The file it came from, or `--mcp-config` for inline JSON.
        label: String,
        /// What is wrong with the server map.
        #[source]
        source: robota_tools::mcp::McpConfigError,
    },
    /// No configured server has the name asked for.
    #[error(
        "No MCP server named {name:?} (configured: {})",
        if .configured.is_empty() { "none".to_string() } else { .configured.join(", ") }
    )]
    NoServer {
        /// The name asked for.
        name: String,
        /// The names of the configured servers.
        configured: Vec<String>,
    },
    /// The session has no MCP servers at all.
    #[error("{}", super::command::NO_SERVERS)]
    NoServers,
}
