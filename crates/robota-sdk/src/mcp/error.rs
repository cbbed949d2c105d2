//! Why the MCP servers could not be gathered or reached: [`McpError`] (a `--mcp-config`
//! that cannot be read, no server of that name…) and [`InvalidServerConfig`], a
//! configured entry robota cannot use (listed as failed, with the reason).

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
        source: Box<dyn std::error::Error + Send + Sync>,
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

/// A configured server entry robota cannot use; the message says why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct InvalidServerConfig {
    pub message: String,
}

impl InvalidServerConfig {
    /// The configuration parser's error, as its message.
    pub fn from_parser(error: impl std::fmt::Display) -> Self {
        InvalidServerConfig {
            message: error.to_string(),
        }
    }
}
