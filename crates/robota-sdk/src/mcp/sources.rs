//! Which MCP servers a session has, from Claude Code's places, lowest to highest (a later
//! entry of the same name replaces the whole earlier one): `~/.claude.json`'s top-level
//! `mcpServers` (user), `mcpServers` in the settings files, the project's `.mcp.json`
//! (only in a trusted directory; `enabledMcpjsonServers` / `disabledMcpjsonServers`
//! pick among its servers), `~/.claude.json`'s `projects[<cwd>].mcpServers` (local), then
//! each `--mcp-config` (a file or inline JSON). `--strict-mcp-config` keeps only the
//! last. Files come wrapped (`{"mcpServers": …}`) or bare; `${VAR}` and `${VAR:-default}`
//! expand in every string of an entry.

use std::path::Path;

use serde_json::Value;

use super::error::McpError;
use crate::paths::ProjectPaths;
use crate::settings::Settings;
use crate::settings::expand::expand_value;
use robota_tools::mcp::{McpConfigError, McpServerConfig, server_map};

/// Where the servers are looked for.
pub(crate) struct McpSources<'a> {
    /// The project (`.mcp.json`) and the user's home (`~/.claude.json`).
    pub paths: &'a ProjectPaths,
    pub settings: &'a Settings,
    /// `--mcp-config` values: paths or inline JSON.
    pub flag_configs: &'a [String],
    pub strict: bool,
}

/// One configured server; `config` is `Err` when its entry is broken (it is listed as
/// failed, with the reason).
#[derive(Debug, Clone, PartialEq)]
pub struct ConfiguredServer {
    /// The server's name (its key in `mcpServers`).
    pub name: String,
    /// How to start or reach it; `Err`: what is wrong with its entry.
    pub config: Result<McpServerConfig, McpConfigError>,
    /// The file (or flag) it came from.
    pub source: String,
}

/// The servers found, and notes for stderr (what an untrusted project held back).
#[derive(Debug, Clone, Default)]
pub struct ServerList {
    /// The servers, one per name.
    pub servers: Vec<ConfiguredServer>,
    /// Notes on files whose servers were skipped (not JSON …).
    pub held_back: Vec<String>,
    /// The project's servers that wait for the directory to be trusted, as the user names
    /// them (`.mcp.json: github, sentry`).
    pub untrusted: Vec<String>,
}

impl ServerList {
    /// Adds one server from elsewhere (a plugin), `${VAR}` expanded; it replaces an
    /// earlier one of the same name.
    pub fn add(&mut self, name: &str, entry: &Value, source: &str) {
        self.put(name, entry, source, true);
    }

    fn put(&mut self, name: &str, entry: &Value, source: &str, expand: bool) {
        let mut entry = entry.clone();
        if expand {
            expand_value(&mut entry, &robota_core::credentials::shared_variable);
        }
        // An SDK server is asked for under the key it is configured under.
        let config = McpServerConfig::parse(&entry).map(|config| match config {
            McpServerConfig::Sdk { .. } => McpServerConfig::Sdk {
                name: name.to_string(),
            },
            other => other,
        });
        let server = ConfiguredServer {
            name: name.to_string(),
            config,
            source: source.to_string(),
        };
        match self.servers.iter_mut().find(|s| s.name == name) {
            Some(existing) => *existing = server,
            None => self.servers.push(server),
        }
    }

    fn put_all(&mut self, file: &Value, source: &str, expand: bool, keep: impl Fn(&str) -> bool) {
        if let Ok(map) = server_map(file) {
            for (name, entry) in map.iter().filter(|(n, _)| keep(n)) {
                self.put(name, entry, source, expand);
            }
        }
    }
}

/// Gathers the servers. `Err` is a `--mcp-config` that cannot be read or parsed (the run
/// stops, as Claude Code's does); a broken file elsewhere is skipped with a note.
pub(crate) fn collect(sources: &McpSources<'_>) -> Result<ServerList, McpError> {
    let mut list = ServerList::default();
    if !sources.strict {
        let claude_json = sources.paths.home().map(|h| h.join(".claude.json"));
        let user_state = claude_json.as_deref().and_then(|p| read_json(p, &mut list));
        if let (Some(state), Some(path)) = (&user_state, &claude_json)
            && let Some(servers) = state.get("mcpServers")
        {
            list.put_all(servers, &path.display().to_string(), true, |_| true);
        }
        if let Some(servers) = &sources.settings.values.mcp_servers {
            let source = sources
                .settings
                .source_of("/mcpServers")
                .unwrap_or("settings")
                .to_string();
            // Settings strings were expanded when the files were read.
            for (name, entry) in servers {
                list.put(name, entry, &source, false);
            }
        }
        let project = sources.paths.cwd.join(".mcp.json");
        if project.is_file() {
            if let Some(policy) = sources.settings.managed_forbids_project_mcp() {
                list.held_back.push(format!(
                    "{}: project MCP servers are turned off by managed settings {policy} (enableAllProjectMcpServers: false)",
                    project.display()
                ));
            } else if sources.settings.trusted {
                if let Some(file) = read_json(&project, &mut list) {
                    let values = &sources.settings.values;
                    let enabled = &values.enabled_mcpjson_servers;
                    let disabled = &values.disabled_mcpjson_servers;
                    let all = values.enable_all_project_mcp_servers == Some(true);
                    list.put_all(&file, &project.display().to_string(), true, |name| {
                        !disabled.iter().any(|d| d == name)
                            && (all || enabled.as_ref().is_none_or(|e| e.iter().any(|n| n == name)))
                    });
                }
            } else if let Some(waiting) = untrusted_project_servers(sources.paths) {
                list.untrusted.push(waiting);
            }
        }
        if let (Some(state), Some(path)) = (&user_state, &claude_json)
            && let Some(servers) = state
                .get("projects")
                .and_then(|p| p.get(sources.paths.cwd.to_string_lossy().as_ref()))
                .and_then(|p| p.get("mcpServers"))
        {
            list.put_all(servers, &path.display().to_string(), true, |_| true);
        }
    }
    for value in sources.flag_configs {
        let (label, text) = if value.trim_start().starts_with('{') {
            ("--mcp-config".to_string(), value.clone())
        } else {
            let text = std::fs::read_to_string(value).map_err(|source| McpError::ReadConfig {
                file: value.clone(),
                source,
            })?;
            (value.clone(), text)
        };
        let file: Value = serde_json::from_str(&text).map_err(|source| McpError::ConfigJson {
            label: label.clone(),
            source,
        })?;
        if let Err(e) = server_map(&file) {
            return Err(McpError::ConfigShape { label, source: e });
        }
        list.put_all(&file, &label, true, |_| true);
    }
    list.hold_back_refused(sources.settings);
    Ok(list)
}

impl ServerList {
    /// Leaves out (with a note) the servers `deniedMcpServers` or `allowedMcpServers`
    /// refuse; call it again after adding servers (a plugin's).
    pub(crate) fn hold_back_refused(&mut self, settings: &Settings) {
        let held_back = &mut self.held_back;
        self.servers.retain(|server| {
            let refusal = settings.mcp_server_refusal(&server.name, server.config.as_ref().ok());
            if let Some(refusal) = &refusal {
                held_back.push(format!("{refusal} (from {}); not started", server.source));
            }
            refusal.is_none()
        });
    }
}

/// A JSON file, or `None` (missing, or broken — then a note says so).
/// The servers of the project's `.mcp.json`, as `.mcp.json: a, b`, when it names any: what
/// an untrusted directory does not start until the user trusts it.
pub fn untrusted_project_servers(paths: &ProjectPaths) -> Option<String> {
    let text = std::fs::read_to_string(paths.cwd.join(".mcp.json")).ok()?;
    let file: Value = serde_json::from_str(&text).ok()?;
    let names: Vec<&str> = server_map(&file).ok()?.keys().map(String::as_str).collect();
    (!names.is_empty()).then(|| format!(".mcp.json: {}", names.join(", ")))
}

fn read_json(path: &Path, list: &mut ServerList) -> Option<Value> {
    let text = std::fs::read_to_string(path).ok()?;
    match serde_json::from_str(&text) {
        Ok(value) => Some(value),
        Err(e) => {
            list.held_back.push(format!(
                "{} is not valid JSON ({e}); its MCP servers were skipped",
                path.display()
            ));
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::settings::LoadOptions;
    use serde_json::json;

    fn paths(cwd: &Path, robota_home: &Path, home: &Path) -> ProjectPaths {
        ProjectPaths::new(
            cwd.to_path_buf(),
            Some(home.to_path_buf()),
            robota_home.to_path_buf(),
        )
    }

    fn settings(paths: &ProjectPaths) -> Settings {
        Settings::load(&LoadOptions {
            paths,
            extra: None,
            interactive: false,
        })
        .unwrap()
    }

    fn names(list: &ServerList) -> Vec<(String, String)> {
        list.servers
            .iter()
            .map(|s| {
                let what = match &s.config {
                    Ok(McpServerConfig::Stdio { command, .. }) => command.clone(),
                    Ok(other) => other.transport().to_string(),
                    Err(e) => format!("error: {e}"),
                };
                (s.name.clone(), what)
            })
            .collect()
    }

    #[test]
    fn every_place_contributes_and_later_places_win() {
        let home = tempfile::tempdir().unwrap();
        let robota = tempfile::tempdir().unwrap();
        let cwd = tempfile::tempdir().unwrap();
        let cwd_key = cwd.path().to_string_lossy().to_string();
        std::fs::write(
            home.path().join(".claude.json"),
            json!({
                "mcpServers": {"user": {"command": "u"}, "shared": {"command": "from-user"}},
                "projects": {cwd_key: {"mcpServers": {"local": {"command": "${ROBOTA_MCP_TEST_UNSET:-l}"}}}}
            })
            .to_string(),
        )
        .unwrap();
        std::fs::write(
            cwd.path().join(".mcp.json"),
            json!({"mcpServers": {"shared": {"command": "from-project"}, "off": {"command": "x"}, "bad": {"url": "http://h"}}}).to_string(),
        )
        .unwrap();
        std::fs::create_dir_all(cwd.path().join(".claude")).unwrap();
        std::fs::write(
            cwd.path().join(".claude/settings.json"),
            json!({"disabledMcpjsonServers": ["off"]}).to_string(),
        )
        .unwrap();
        let flag =
            vec![json!({"flagged": {"type": "http", "url": "http://127.0.0.1:1/mcp"}}).to_string()];

        // Untrusted: .mcp.json is held back.
        let project = paths(cwd.path(), robota.path(), home.path());
        let s = settings(&project);
        let sources = McpSources {
            paths: &project,
            settings: &s,
            flag_configs: &flag,
            strict: false,
        };
        let list = collect(&sources).unwrap();
        assert_eq!(
            names(&list),
            [
                ("user".into(), "u".into()),
                ("shared".into(), "from-user".into()),
                ("local".into(), "l".into()),
                ("flagged".into(), "http".into()),
            ]
        );
        assert_eq!(list.untrusted.len(), 1, "{:?}", list.untrusted);
        assert!(
            list.untrusted[0].starts_with(".mcp.json: "),
            "{:?}",
            list.untrusted
        );

        // Trusted: the project's servers join, minus the disabled one.
        crate::settings::trust::TrustStore::load(robota.path())
            .trust(cwd.path())
            .unwrap();
        let s = settings(&project);
        let list = collect(&McpSources {
            settings: &s,
            ..sources
        })
        .unwrap();
        let got = names(&list);
        assert!(
            got.contains(&("shared".into(), "from-project".into())),
            "{got:?}"
        );
        assert!(!got.iter().any(|(n, _)| n == "off"), "{got:?}");
        assert!(
            got.iter()
                .any(|(n, w)| n == "bad" && w.contains("needs a `type`"))
        );

        // Strict: only the flag's.
        let list = collect(&McpSources {
            settings: &s,
            strict: true,
            ..sources
        })
        .unwrap();
        assert_eq!(names(&list), [("flagged".into(), "http".into())]);
    }

    #[test]
    fn a_broken_flag_config_stops_the_run() {
        let home = tempfile::tempdir().unwrap();
        let cwd = tempfile::tempdir().unwrap();
        let project = paths(cwd.path(), home.path(), home.path());
        let s = settings(&project);
        let kinds = ["invalid JSON", "cannot read", "not a map"];
        for (bad, kind) in ["{not json", "/no/such/file.json", "{\"mcpServers\": 3}"]
            .into_iter()
            .zip(kinds)
        {
            let flag = vec![bad.to_string()];
            let sources = McpSources {
                paths: &project,
                settings: &s,
                flag_configs: &flag,
                strict: false,
            };
            let err = collect(&sources).unwrap_err();
            let expected = match kind {
                "invalid JSON" => matches!(err, McpError::ConfigJson { .. }),
                "cannot read" => matches!(err, McpError::ReadConfig { .. }),
                _ => matches!(err, McpError::ConfigShape { .. }),
            };
            assert!(expected, "{bad}: {err}");
            assert!(err.to_string().contains("--mcp-config"), "{err}");
        }
    }
}
