//! `.claude-plugin/plugin.json`: the plugin's name (required), version, description and
//! author (a string or `{name, email?, url?}`), and the component paths that replace or
//! add to the default folders (`commands`, `agents`, `skills`, `hooks`, `mcpServers`: a
//! `./` path or a list of them; `hooks` and `mcpServers` may also be inline objects).
//! A UTF-8 byte order mark is tolerated and unknown keys are ignored.

use serde_json::Value;

use super::error::FormatError;

/// One component entry of a manifest.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum ComponentPaths {
    /// Paths relative to the plugin root.
    Paths(Vec<String>),
    /// An inline object (hooks, MCP servers).
    Inline(Value),
}

/// A parsed manifest.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Manifest {
    pub name: String,
    pub version: Option<String>,
    pub description: Option<String>,
    pub author: Option<String>,
    pub commands: Option<ComponentPaths>,
    pub agents: Option<ComponentPaths>,
    pub skills: Option<ComponentPaths>,
    pub hooks: Option<ComponentPaths>,
    pub mcp_servers: Option<ComponentPaths>,
    pub lsp_servers: Option<ComponentPaths>,
}

impl Manifest {
    /// Parses the text of a `plugin.json`; `Err` says what is wrong with it.
    pub fn parse(text: &str) -> Result<Manifest, FormatError> {
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        let value: Value = serde_json::from_str(text)?;
        let obj = value
            .as_object()
            .ok_or_else(|| FormatError::top("expected a JSON object"))?;
        let name = match obj.get("name") {
            Some(Value::String(s)) if !s.trim().is_empty() => s.trim().to_string(),
            Some(Value::String(_)) | None | Some(Value::Null) => {
                return Err(FormatError::top("missing \"name\""));
            }
            Some(_) => return Err(FormatError::top("\"name\" must be a string")),
        };
        if name.contains(['/', '\\', ' ', ':']) {
            return Err(FormatError::top(format!(
                "\"name\" {name:?} may not contain spaces, slashes or colons"
            )));
        }
        let text = |key: &str| obj.get(key).and_then(scalar_text);
        let author = obj.get("author").and_then(|a| match a {
            Value::Object(o) => o.get("name").and_then(Value::as_str).map(str::to_string),
            other => scalar_text(other),
        });
        let paths = |key: &str, inline: bool| -> Result<Option<ComponentPaths>, FormatError> {
            match obj.get(key) {
                None | Some(Value::Null) => Ok(None),
                Some(Value::String(s)) => Ok(Some(ComponentPaths::Paths(vec![s.clone()]))),
                Some(Value::Array(items)) => items
                    .iter()
                    .map(|v| {
                        v.as_str()
                            .map(str::to_string)
                            .ok_or_else(|| FormatError::top(format!("\"{key}\" must list paths")))
                    })
                    .collect::<Result<Vec<_>, _>>()
                    .map(|p| Some(ComponentPaths::Paths(p))),
                Some(v @ Value::Object(_)) if inline => Ok(Some(ComponentPaths::Inline(v.clone()))),
                Some(_) => Err(FormatError::top(format!(
                    "\"{key}\" must be a path or a list of paths"
                ))),
            }
        };
        Ok(Manifest {
            version: text("version"),
            description: text("description"),
            author,
            commands: paths("commands", false)?,
            agents: paths("agents", false)?,
            skills: paths("skills", false)?,
            hooks: paths("hooks", true)?,
            mcp_servers: paths("mcpServers", true)?,
            lsp_servers: paths("lspServers", true)?,
            name,
        })
    }
}

fn scalar_text(value: &Value) -> Option<String> {
    match value {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_authors_paths_bom_and_unknown_keys() {
        let m = Manifest::parse(
            "\u{feff}{\"name\": \"deploy-kit\", \"version\": \"1.2.0\", \"author\": {\"name\": \"Ann\", \"email\": \"a@x\"}, \"commands\": [\"./extra/cmds\", \"./one.md\"], \"hooks\": {\"Stop\": []}, \"mcpServers\": \"./servers.json\", \"keywords\": [\"x\"], \"license\": \"MIT\"}",
        )
        .unwrap();
        assert_eq!(m.name, "deploy-kit");
        assert_eq!(m.version.as_deref(), Some("1.2.0"));
        assert_eq!(m.author.as_deref(), Some("Ann"));
        assert_eq!(
            m.commands,
            Some(ComponentPaths::Paths(vec![
                "./extra/cmds".into(),
                "./one.md".into()
            ]))
        );
        assert!(matches!(m.hooks, Some(ComponentPaths::Inline(_))));
        assert_eq!(
            m.mcp_servers,
            Some(ComponentPaths::Paths(vec!["./servers.json".into()]))
        );
        assert_eq!(
            Manifest::parse("{\"name\": \"a\", \"author\": \"Bob <b@x>\"}")
                .unwrap()
                .author
                .as_deref(),
            Some("Bob <b@x>")
        );
    }

    #[test]
    fn bad_manifests_say_why() {
        assert!(
            Manifest::parse("{\"version\": \"1\"}")
                .unwrap_err()
                .to_string()
                .contains("name")
        );
        assert!(
            Manifest::parse("{\"name\": 3}")
                .unwrap_err()
                .to_string()
                .contains("string")
        );
        assert!(
            Manifest::parse("{\"name\": \"a b\"}")
                .unwrap_err()
                .to_string()
                .contains("spaces")
        );
        assert!(
            Manifest::parse("{nope")
                .unwrap_err()
                .to_string()
                .contains("invalid JSON")
        );
        assert!(
            Manifest::parse("{\"name\": \"a\", \"commands\": {\"x\": 1}}")
                .unwrap_err()
                .to_string()
                .contains("commands")
        );
    }
}
