//! One MCP server's configuration as Claude Code writes it (`.mcp.json`, `mcpServers` in
//! settings, `~/.claude.json`, `--mcp-config`): stdio (`command`, `args`, `env`; `type`
//! `"stdio"` or absent), streamable HTTP (`type: "http"` or `"streamable-http"`, `url`,
//! `headers`), SSE (`type: "sse"`) and a Claude Agent SDK program's in-process server
//! (`type: "sdk"`, reached through the program's pipe). Also the two shapes a file of servers comes in:
//! `{"mcpServers": {...}}` and the bare map.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

/// What is wrong with a server entry or a file of servers; the caller names the entry.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum McpConfigError {
    /// A server entry is not a JSON object.
    #[error("a server entry must be a JSON object")]
    EntryNotAnObject,
    /// A file of servers is not a JSON object.
    #[error("an MCP server file must be a JSON object")]
    FileNotAnObject,
    /// `mcpServers` is there but not an object.
    #[error("`mcpServers` must be an object")]
    ServersNotAnObject,
    /// A field that must be a string is not (`type`, `url`…; `env.NAME`, `headers.NAME`).
    #[error("`{0}` must be a string")]
    NotAString(String),
    /// An entry has a `url` but no `type`.
    #[error("a server with a `url` needs a `type` (\"http\" or \"sse\")")]
    UrlWithoutType,
    /// A stdio entry has no `command`.
    #[error("a stdio server needs a `command`")]
    NoCommand,
    /// An http or sse entry has no `url`.
    #[error("an http or sse server needs a `url`")]
    NoUrl,
    /// The `url` is not an `http://` or `https://` address.
    #[error("`url` {0:?} is not an http(s) address")]
    NotHttp(String),
    /// The `type` names a transport robota does not have.
    #[error("transport type {0:?} is not supported (use stdio, http, sse or sdk)")]
    UnsupportedTransport(String),
    /// `args` holds something other than strings (or numbers, booleans).
    #[error("`{0}` must hold strings")]
    ListItemNotAString(String),
    /// A field that must be a list of strings is not (the field's name).
    #[error("`{0}` must be a list of strings")]
    NotAList(String),
    /// A field that must be an object of strings is not (the field's name).
    #[error("`{0}` must be an object of strings")]
    NotAMap(String),
}

/// How a server is reached.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum McpServerConfig {
    /// A child process speaking JSON-RPC over its stdin and stdout.
    Stdio {
        /// The program to start.
        command: String,
        /// Its arguments.
        args: Vec<String>,
        /// Extra environment for it.
        env: BTreeMap<String, String>,
    },
    /// Streamable HTTP.
    Http {
        /// The server's endpoint.
        url: String,
        /// Extra request headers (`Authorization`…).
        headers: BTreeMap<String, String>,
    },
    /// The older HTTP+SSE transport.
    Sse {
        /// The server's SSE endpoint.
        url: String,
        /// Extra request headers (`Authorization`…).
        headers: BTreeMap<String, String>,
    },
    /// A server inside the Agent SDK program that started robota, reached by
    /// `mcp_message` control requests under its `name` (the key it is configured under).
    Sdk {
        /// The key the server is configured under.
        name: String,
    },
}

impl McpServerConfig {
    /// Reads one server entry; `Err` says what is wrong with it.
    pub fn parse(entry: &Value) -> Result<McpServerConfig, McpConfigError> {
        let map = entry.as_object().ok_or(McpConfigError::EntryNotAnObject)?;
        let kind = match map.get("type") {
            None => None,
            Some(Value::String(t)) => Some(t.as_str()),
            Some(_) => return Err(McpConfigError::NotAString("type".into())),
        };
        match kind {
            None if map.contains_key("url") && !map.contains_key("command") => {
                Err(McpConfigError::UrlWithoutType)
            }
            None | Some("stdio") => Ok(McpServerConfig::Stdio {
                command: text(map, "command")?
                    .filter(|c| !c.trim().is_empty())
                    .ok_or(McpConfigError::NoCommand)?,
                args: string_list(map, "args")?,
                env: string_map(map, "env")?,
            }),
            Some("http" | "streamable-http" | "streamableHttp") => Ok(McpServerConfig::Http {
                url: url(map)?,
                headers: string_map(map, "headers")?,
            }),
            Some("sse") => Ok(McpServerConfig::Sse {
                url: url(map)?,
                headers: string_map(map, "headers")?,
            }),
            Some("sdk") => Ok(McpServerConfig::Sdk {
                name: text(map, "name")?.unwrap_or_default(),
            }),
            Some(other) => Err(McpConfigError::UnsupportedTransport(other.to_string())),
        }
    }

    /// The transport's name, as `/mcp` shows it.
    pub fn transport(&self) -> &'static str {
        match self {
            McpServerConfig::Stdio { .. } => "stdio",
            McpServerConfig::Http { .. } => "http",
            McpServerConfig::Sse { .. } => "sse",
            McpServerConfig::Sdk { .. } => "sdk",
        }
    }
}

/// The server map of a file's JSON: the `mcpServers` object when there is one, else the
/// whole object (plugins ship both shapes).
pub fn server_map(file: &Value) -> Result<&Map<String, Value>, McpConfigError> {
    let map = file.as_object().ok_or(McpConfigError::FileNotAnObject)?;
    match map.get("mcpServers") {
        Some(Value::Object(servers)) => Ok(servers),
        Some(_) => Err(McpConfigError::ServersNotAnObject),
        None => Ok(map),
    }
}

fn text(map: &Map<String, Value>, key: &str) -> Result<Option<String>, McpConfigError> {
    match map.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(_) => Err(McpConfigError::NotAString(key.to_string())),
    }
}

fn url(map: &Map<String, Value>) -> Result<String, McpConfigError> {
    let url = text(map, "url")?.ok_or(McpConfigError::NoUrl)?;
    match url::Url::parse(&url) {
        Ok(u) if u.scheme() == "http" || u.scheme() == "https" => Ok(url),
        _ => Err(McpConfigError::NotHttp(url)),
    }
}

fn string_list(map: &Map<String, Value>, key: &str) -> Result<Vec<String>, McpConfigError> {
    match map.get(key) {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Array(items)) => items
            .iter()
            .map(|v| scalar(v).ok_or_else(|| McpConfigError::ListItemNotAString(key.to_string())))
            .collect(),
        Some(_) => Err(McpConfigError::NotAList(key.to_string())),
    }
}

fn string_map(
    map: &Map<String, Value>,
    key: &str,
) -> Result<BTreeMap<String, String>, McpConfigError> {
    match map.get(key) {
        None | Some(Value::Null) => Ok(BTreeMap::new()),
        Some(Value::Object(entries)) => entries
            .iter()
            .map(|(k, v)| {
                scalar(v)
                    .map(|v| (k.clone(), v))
                    .ok_or_else(|| McpConfigError::NotAString(format!("{key}.{k}")))
            })
            .collect(),
        Some(_) => Err(McpConfigError::NotAMap(key.to_string())),
    }
}

/// A string, or a number or boolean written without quotes.
fn scalar(value: &Value) -> Option<String> {
    match value {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn an_sdk_server_parses_with_its_name() {
        let sdk = json!({"type": "sdk", "name": "calc"});
        assert_eq!(
            McpServerConfig::parse(&sdk),
            Ok(McpServerConfig::Sdk {
                name: "calc".into()
            })
        );
        assert_eq!(McpServerConfig::parse(&sdk).unwrap().transport(), "sdk");
    }

    #[test]
    fn the_three_transports_parse() {
        let stdio = json!({"command": "npx", "args": ["-y", "pkg", 3], "env": {"K": "v"}});
        assert_eq!(
            McpServerConfig::parse(&stdio),
            Ok(McpServerConfig::Stdio {
                command: "npx".into(),
                args: vec!["-y".into(), "pkg".into(), "3".into()],
                env: BTreeMap::from([("K".into(), "v".into())]),
            })
        );
        let typed = json!({"type": "stdio", "command": "x"});
        assert_eq!(
            McpServerConfig::parse(&typed).map(|c| c.transport()),
            Ok("stdio")
        );
        let http = json!({"type": "http", "url": "https://h/mcp", "headers": {"Authorization": "Bearer t"}});
        assert_eq!(
            McpServerConfig::parse(&http),
            Ok(McpServerConfig::Http {
                url: "https://h/mcp".into(),
                headers: BTreeMap::from([("Authorization".into(), "Bearer t".into())]),
            })
        );
        let sse = json!({"type": "sse", "url": "http://127.0.0.1:1/sse"});
        assert_eq!(
            McpServerConfig::parse(&sse).map(|c| c.transport()),
            Ok("sse")
        );
    }

    #[test]
    fn broken_entries_say_what_is_wrong() {
        let err = |v: Value| McpServerConfig::parse(&v).unwrap_err().to_string();
        assert!(err(json!({"url": "https://h"})).contains("needs a `type`"));
        assert!(err(json!({"type": "ws", "url": "wss://h"})).contains("not supported"));
        assert!(err(json!({})).contains("needs a `command`"));
        assert!(err(json!({"type": "http"})).contains("needs a `url`"));
        assert!(err(json!({"type": "http", "url": "file:///x"})).contains("not an http"));
        assert!(err(json!({"command": "x", "args": "a b"})).contains("list of strings"));
        assert!(err(json!({"command": "x", "env": {"A": []}})).contains("env.A"));
        assert!(err(json!("x")).contains("JSON object"));
    }

    #[test]
    fn wrapped_and_bare_files_give_the_same_servers() {
        let wrapped = json!({"mcpServers": {"a": {"command": "x"}}});
        let bare = json!({"a": {"command": "x"}});
        assert_eq!(server_map(&wrapped), server_map(&bare));
        assert!(server_map(&json!({"mcpServers": []})).is_err());
        assert!(server_map(&json!([])).is_err());
    }
}
