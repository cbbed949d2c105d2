//! One MCP server's configuration as Claude Code writes it (`.mcp.json`, `mcpServers` in
//! settings, `~/.claude.json`, `--mcp-config`): stdio (`command`, `args`, `env`; `type`
//! `"stdio"` or absent), streamable HTTP (`type: "http"` or `"streamable-http"`, `url`,
//! `headers`), SSE (`type: "sse"`) and a Claude Agent SDK program's in-process server
//! (`type: "sdk"`, reached through the program's pipe). Also the two shapes a file of servers comes in:
//! `{"mcpServers": {...}}` and the bare map.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

/// How a server is reached.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum McpServerConfig {
    /// A child process speaking JSON-RPC over its stdin and stdout.
    Stdio {
        command: String,
        args: Vec<String>,
        env: BTreeMap<String, String>,
    },
    /// Streamable HTTP.
    Http {
        url: String,
        headers: BTreeMap<String, String>,
    },
    /// The older HTTP+SSE transport.
    Sse {
        url: String,
        headers: BTreeMap<String, String>,
    },
    /// A server inside the Agent SDK program that started robota, reached by
    /// `mcp_message` control requests under its `name` (the key it is configured under).
    Sdk { name: String },
}

impl McpServerConfig {
    /// Reads one server entry; `Err` says what is wrong with it.
    pub fn parse(entry: &Value) -> Result<McpServerConfig, String> {
        let map = entry
            .as_object()
            .ok_or("a server entry must be a JSON object")?;
        let kind = match map.get("type") {
            None => None,
            Some(Value::String(t)) => Some(t.as_str()),
            Some(_) => return Err("`type` must be a string".into()),
        };
        match kind {
            None if map.contains_key("url") && !map.contains_key("command") => {
                Err("a server with a `url` needs a `type` (\"http\" or \"sse\")".into())
            }
            None | Some("stdio") => Ok(McpServerConfig::Stdio {
                command: text(map, "command")?
                    .filter(|c| !c.trim().is_empty())
                    .ok_or("a stdio server needs a `command`")?,
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
            Some(other) => Err(format!(
                "transport type {other:?} is not supported (use stdio, http, sse or sdk)"
            )),
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
pub fn server_map(file: &Value) -> Result<&Map<String, Value>, String> {
    let map = file
        .as_object()
        .ok_or("an MCP server file must be a JSON object")?;
    match map.get("mcpServers") {
        Some(Value::Object(servers)) => Ok(servers),
        Some(_) => Err("`mcpServers` must be an object".into()),
        None => Ok(map),
    }
}

fn text(map: &Map<String, Value>, key: &str) -> Result<Option<String>, String> {
    match map.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(_) => Err(format!("`{key}` must be a string")),
    }
}

fn url(map: &Map<String, Value>) -> Result<String, String> {
    let url = text(map, "url")?.ok_or("an http or sse server needs a `url`")?;
    match url::Url::parse(&url) {
        Ok(u) if u.scheme() == "http" || u.scheme() == "https" => Ok(url),
        _ => Err(format!("`url` {url:?} is not an http(s) address")),
    }
}

fn string_list(map: &Map<String, Value>, key: &str) -> Result<Vec<String>, String> {
    match map.get(key) {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Array(items)) => items
            .iter()
            .map(|v| scalar(v).ok_or(format!("`{key}` must hold strings")))
            .collect(),
        Some(_) => Err(format!("`{key}` must be a list of strings")),
    }
}

fn string_map(map: &Map<String, Value>, key: &str) -> Result<BTreeMap<String, String>, String> {
    match map.get(key) {
        None | Some(Value::Null) => Ok(BTreeMap::new()),
        Some(Value::Object(entries)) => entries
            .iter()
            .map(|(k, v)| {
                scalar(v)
                    .map(|v| (k.clone(), v))
                    .ok_or(format!("`{key}.{k}` must be a string"))
            })
            .collect(),
        Some(_) => Err(format!("`{key}` must be an object of strings")),
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
        let err = |v: Value| McpServerConfig::parse(&v).unwrap_err();
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
