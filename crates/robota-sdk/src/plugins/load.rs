//! Loading one plugin folder: its manifest (or, without one, the folder's name), then its
//! commands, skills, agents, hooks and MCP servers from the default places and the paths
//! the manifest adds. Anything broken is a warning naming the file; the rest still loads.

use std::path::{Component, Path, PathBuf};

use serde_json::Value;

use super::error::{FormatError, PluginFileError};
use super::manifest::{ComponentPaths, Manifest};
use crate::agents::AgentDefinition;
use crate::agents::definition::{parse as parse_agent, read_folder};
use crate::commands::definition::{
    DefinitionKind, Origin, PromptCommand, TextFileError, read_command_file, read_commands,
    read_skills, read_text_capped,
};
use robota_core::hooks::HookConfig;
use robota_tools::mcp::server_map;

/// A JSON file larger than this is not read.
const MAX_JSON_BYTES: u64 = 1024 * 1024;

/// One loaded plugin and everything it adds.
#[derive(Debug, Clone)]
pub struct Plugin {
    /// Its name (the manifest's, else its folder's): the prefix of its commands.
    pub name: String,
    /// The manifest's `version`.
    pub version: Option<String>,
    /// The manifest's `description`.
    pub description: Option<String>,
    /// The manifest's `author` name.
    pub author: Option<String>,
    /// Its folder (`${CLAUDE_PLUGIN_ROOT}`).
    pub root: PathBuf,
    /// Where it was found (`--plugin-dir`, `name@marketplace`, `$ROBOTA_HOME/plugins`).
    pub source: String,
    /// Its commands and skills, named `plugin:name`.
    pub commands: Vec<PromptCommand>,
    /// Its agents, named `plugin:name`.
    pub agents: Vec<AgentDefinition>,
    /// Its hooks (`hooks/hooks.json` or the manifest's `hooks`).
    pub hooks: HookConfig,
    /// Its MCP servers as `(plugin_<plugin>_<server>, entry)`, `${CLAUDE_PLUGIN_ROOT}`
    /// expanded (and, for stdio servers, set in their environment).
    pub mcp_servers: Vec<(String, Value)>,
    /// Its language servers (`.lsp.json`, the manifest's `lspServers`) by name, with
    /// `${CLAUDE_PLUGIN_ROOT}` expanded.
    pub lsp_servers: Vec<(String, Value)>,
    /// Its persistent data directory (`${CLAUDE_PLUGIN_DATA}`), once given one.
    pub data_dir: Option<PathBuf>,
}

impl Plugin {
    /// Gives the plugin its data directory (creating it): `${CLAUDE_PLUGIN_DATA}` expands
    /// in its hooks and MCP server entries, and hook processes and stdio servers get
    /// `CLAUDE_PLUGIN_DATA` in their environment.
    pub(crate) fn set_data_dir(&mut self, dir: &Path) -> std::io::Result<()> {
        std::fs::create_dir_all(dir)?;
        self.hooks.set_plugin_data(dir);
        let text = dir.to_string_lossy().into_owned();
        for (_, entry) in &mut self.mcp_servers {
            expand_var(entry, "${CLAUDE_PLUGIN_DATA}", &text);
            set_server_env(entry, "CLAUDE_PLUGIN_DATA", &text);
        }
        self.data_dir = Some(dir.to_path_buf());
        Ok(())
    }

    /// What it adds, for listings: `2 commands, 1 skill, 1 agent, 3 hooks, 1 MCP server`.
    pub fn summary(&self) -> String {
        let skills = self
            .commands
            .iter()
            .filter(|c| c.kind == DefinitionKind::Skill)
            .count();
        let parts = [
            (self.commands.len() - skills, "command"),
            (skills, "skill"),
            (self.agents.len(), "agent"),
            (self.hooks.handler_count(), "hook"),
            (self.mcp_servers.len(), "MCP server"),
        ];
        let listed: Vec<String> = parts
            .iter()
            .filter(|(n, _)| *n > 0)
            .map(|(n, what)| format!("{n} {what}{}", if *n == 1 { "" } else { "s" }))
            .collect();
        if listed.is_empty() {
            "nothing".to_string()
        } else {
            listed.join(", ")
        }
    }
}

/// Loads the plugin at `root`. `None` when its manifest is unusable (a warning says why);
/// broken parts of a usable plugin are warnings too.
pub fn load_plugin(root: &Path, source: &str, warnings: &mut Vec<String>) -> Option<Plugin> {
    if !root.is_dir() {
        warnings.push(format!("plugin {}: not a directory", root.display()));
        return None;
    }
    let manifest_path = root.join(".claude-plugin").join("plugin.json");
    let manifest = if manifest_path.is_file() {
        let parsed = read_text(&manifest_path)
            .map_err(PluginFileError::from)
            .and_then(|t| Ok(Manifest::parse(&t)?));
        match parsed {
            Ok(m) => m,
            Err(e) => {
                warnings.push(format!("{}: {e}; plugin skipped", manifest_path.display()));
                return None;
            }
        }
    } else {
        let name = root.file_name()?.to_string_lossy().to_string();
        Manifest {
            name,
            ..Manifest::default()
        }
    };
    let name = manifest.name.clone();
    let origin = Origin::Plugin(name.clone());
    let mut plugin = Plugin {
        name: name.clone(),
        version: manifest.version.clone(),
        description: manifest.description.clone(),
        author: manifest.author.clone(),
        root: root.to_path_buf(),
        source: source.to_string(),
        commands: Vec::new(),
        agents: Vec::new(),
        hooks: HookConfig::default(),
        mcp_servers: Vec::new(),
        lsp_servers: Vec::new(),
        data_dir: None,
    };

    add_skills_and_commands(
        &mut plugin,
        root,
        &manifest,
        &manifest_path,
        &origin,
        warnings,
    );
    add_agents(
        &mut plugin,
        root,
        &manifest,
        &manifest_path,
        &origin,
        warnings,
    );
    add_hook_files(&mut plugin, root, &manifest, &manifest_path, warnings);
    add_server_files(&mut plugin, root, &manifest, &manifest_path, warnings);
    let lsp_paths = custom_paths(root, &manifest.lsp_servers, &manifest_path, warnings);
    super::lsp_servers::add_lsp_servers(
        &mut plugin,
        &manifest,
        &manifest_path,
        lsp_paths,
        warnings,
    );
    Some(plugin)
}

/// The plugin's skills and commands: its `skills/` and `commands/` folders, then the
/// manifest's paths. Skills first: on a name clash a skill wins over a command, as
/// elsewhere.
fn add_skills_and_commands(
    plugin: &mut Plugin,
    root: &Path,
    manifest: &Manifest,
    manifest_path: &Path,
    origin: &Origin,
    warnings: &mut Vec<String>,
) {
    let mut skill_places = vec![root.join("skills")];
    skill_places.extend(custom_paths(
        root,
        &manifest.skills,
        manifest_path,
        warnings,
    ));
    for place in skill_places {
        let found = if place.join("SKILL.md").is_file() {
            place
                .parent()
                .map(|parent| read_skills(parent, origin, warnings))
                .unwrap_or_default()
                .into_iter()
                .filter(|s| s.path == place.join("SKILL.md"))
                .collect()
        } else {
            read_skills(&place, origin, warnings)
        };
        add_commands(&mut plugin.commands, found);
    }
    let mut command_places = vec![root.join("commands")];
    command_places.extend(custom_paths(
        root,
        &manifest.commands,
        manifest_path,
        warnings,
    ));
    for place in command_places {
        let found = if place.is_file() {
            place
                .file_stem()
                .and_then(|stem| {
                    let name = stem.to_string_lossy().to_string();
                    read_command_file(&place, name, origin, warnings)
                })
                .into_iter()
                .collect()
        } else {
            read_commands(&place, origin, warnings)
        };
        add_commands(&mut plugin.commands, found);
    }
}

/// The plugin's agents, named `<plugin>:<agent>`: its `agents/` folder, then the
/// manifest's paths.
fn add_agents(
    plugin: &mut Plugin,
    root: &Path,
    manifest: &Manifest,
    manifest_path: &Path,
    origin: &Origin,
    warnings: &mut Vec<String>,
) {
    let mut agent_places = vec![root.join("agents")];
    agent_places.extend(custom_paths(
        root,
        &manifest.agents,
        manifest_path,
        warnings,
    ));
    for place in agent_places {
        let found = if place.is_file() {
            std::fs::read_to_string(&place)
                .ok()
                .and_then(|text| parse_agent(&text, origin, &place))
                .into_iter()
                .collect()
        } else {
            read_folder(&place, origin, warnings)
        };
        for mut agent in found {
            agent.name = format!("{}:{}", plugin.name, agent.name);
            if !plugin.agents.iter().any(|a| a.name == agent.name) {
                plugin.agents.push(agent);
            }
        }
    }
}

/// The plugin's hooks: `hooks/hooks.json`, then the manifest's.
fn add_hook_files(
    plugin: &mut Plugin,
    root: &Path,
    manifest: &Manifest,
    manifest_path: &Path,
    warnings: &mut Vec<String>,
) {
    let mut hook_files = Vec::new();
    let default_hooks = root.join("hooks").join("hooks.json");
    if default_hooks.is_file() {
        hook_files.push(default_hooks);
    }
    hook_files.extend(custom_paths(root, &manifest.hooks, manifest_path, warnings));
    for file in hook_files {
        if let Some(value) = read_json(&file, warnings) {
            add_hooks(&mut plugin.hooks, &value, root, &file, warnings);
        }
    }
    if let Some(ComponentPaths::Inline(value)) = &manifest.hooks {
        add_hooks(&mut plugin.hooks, value, root, manifest_path, warnings);
    }
}

/// The plugin's MCP servers: `.mcp.json`, then the manifest's.
fn add_server_files(
    plugin: &mut Plugin,
    root: &Path,
    manifest: &Manifest,
    manifest_path: &Path,
    warnings: &mut Vec<String>,
) {
    let mut server_files = Vec::new();
    let default_servers = root.join(".mcp.json");
    if default_servers.is_file() {
        server_files.push(default_servers);
    }
    server_files.extend(custom_paths(
        root,
        &manifest.mcp_servers,
        manifest_path,
        warnings,
    ));
    for file in server_files {
        if let Some(value) = read_json(&file, warnings) {
            add_servers(plugin, &value, &file, warnings);
        }
    }
    if let Some(ComponentPaths::Inline(value)) = &manifest.mcp_servers {
        add_servers(plugin, value, manifest_path, warnings);
    }
}

/// The server name Claude Code gives a plugin's server: `plugin_<plugin>_<server>`.
pub fn server_name(plugin: &str, server: &str) -> String {
    format!("plugin_{plugin}_{server}")
}

fn add_commands(commands: &mut Vec<PromptCommand>, found: Vec<PromptCommand>) {
    for command in found {
        if !commands.iter().any(|c| c.name == command.name) {
            commands.push(command);
        }
    }
}

fn add_hooks(
    hooks: &mut HookConfig,
    value: &Value,
    root: &Path,
    file: &Path,
    warnings: &mut Vec<String>,
) {
    // hooks.json is `{"description"?, "hooks": {…}}`; an inline manifest entry may also be
    // the bare events map.
    let (config, problems) = if value.get("hooks").is_some() {
        HookConfig::from_plugin_file(value, root)
    } else {
        HookConfig::from_hooks(value, Some(root))
    };
    warnings.extend(
        problems
            .into_iter()
            .map(|p| format!("{}: {p}", file.display())),
    );
    hooks.merge(config);
}

fn add_servers(plugin: &mut Plugin, value: &Value, file: &Path, warnings: &mut Vec<String>) {
    let map = match server_map(value) {
        Ok(map) => map,
        Err(e) => {
            warnings.push(format!(
                "{}: {e}; its MCP servers were skipped",
                file.display()
            ));
            return;
        }
    };
    let root = plugin.root.to_string_lossy().into_owned();
    for (server, entry) in map {
        let mut entry = entry.clone();
        expand_var(&mut entry, "${CLAUDE_PLUGIN_ROOT}", &root);
        // A stdio server also finds its folder in its environment, as in Claude Code.
        set_server_env(&mut entry, "CLAUDE_PLUGIN_ROOT", &root);
        let name = server_name(&plugin.name, server);
        plugin.mcp_servers.retain(|(n, _)| *n != name);
        plugin.mcp_servers.push((name, entry));
    }
}

/// Replaces `var` (`${CLAUDE_PLUGIN_ROOT}`, …) with `with` in every string of `value`.
pub(super) fn expand_var(value: &mut Value, var: &str, with: &str) {
    match value {
        Value::String(s) if s.contains(var) => *s = s.replace(var, with),
        Value::Array(items) => items.iter_mut().for_each(|v| expand_var(v, var, with)),
        Value::Object(map) => map.values_mut().for_each(|v| expand_var(v, var, with)),
        _ => {}
    }
}

/// Sets `name` in a stdio server entry's `env` unless the entry sets it itself.
fn set_server_env(entry: &mut Value, name: &str, value: &str) {
    if let Some(obj) = entry.as_object_mut()
        && obj.contains_key("command")
    {
        let env = obj
            .entry("env")
            .or_insert_with(|| Value::Object(Default::default()));
        if let Some(env) = env.as_object_mut() {
            env.entry(name)
                .or_insert_with(|| Value::String(value.to_string()));
        }
    }
}

/// The manifest's paths for one component, resolved under `root`; a path that leaves the
/// plugin or does not exist is a warning.
pub(super) fn custom_paths(
    root: &Path,
    paths: &Option<ComponentPaths>,
    manifest: &Path,
    warnings: &mut Vec<String>,
) -> Vec<PathBuf> {
    let Some(ComponentPaths::Paths(paths)) = paths else {
        return Vec::new();
    };
    paths
        .iter()
        .filter_map(|p| {
            let relative = Path::new(p);
            let inside = relative
                .components()
                .all(|c| matches!(c, Component::Normal(_) | Component::CurDir));
            if !inside {
                warnings.push(format!(
                    "{}: path {p:?} must be relative to the plugin (./…) and stay inside it; ignored",
                    manifest.display()
                ));
                return None;
            }
            let full = root.join(relative);
            if !full.exists() {
                warnings.push(format!(
                    "{}: path {p:?} does not exist; ignored",
                    manifest.display()
                ));
                return None;
            }
            Some(full)
        })
        .collect()
}

fn read_text(path: &Path) -> Result<String, TextFileError> {
    read_text_capped(path, MAX_JSON_BYTES)
}

/// A JSON file (a byte order mark tolerated), or `None` with a warning naming it.
pub(super) fn read_json(path: &Path, warnings: &mut Vec<String>) -> Option<Value> {
    let parsed = read_text(path)
        .map_err(PluginFileError::from)
        .and_then(|text| {
            let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
            Ok(serde_json::from_str(text).map_err(FormatError::from)?)
        });
    match parsed {
        Ok(v) => Some(v),
        Err(e) => {
            warnings.push(format!("{}: {e}; skipped", path.display()));
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use robota_core::hooks::{HandlerKind, HookEvent};

    fn write(path: &Path, text: &str) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    #[test]
    fn default_layout_loads_every_component_under_the_plugin_name() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("kit");
        write(
            &root.join(".claude-plugin/plugin.json"),
            r#"{"name": "deploy", "version": "0.3.0", "author": {"name": "Ann"}}"#,
        );
        write(
            &root.join("commands/ship.md"),
            "---\ndescription: Ships\n---\nShip $ARGUMENTS",
        );
        write(&root.join("commands/db/migrate.md"), "Migrate.");
        write(
            &root.join("skills/check/SKILL.md"),
            "---\ndescription: Checks\n---\nCheck.",
        );
        write(
            &root.join("agents/reviewer.md"),
            "---\nname: reviewer\ndescription: Reviews\n---\nReview.",
        );
        write(
            &root.join("hooks/hooks.json"),
            r#"{"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "${CLAUDE_PLUGIN_ROOT}/h.sh"}]}]}}"#,
        );
        write(
            &root.join(".mcp.json"),
            r#"{"mcpServers": {"db": {"command": "${CLAUDE_PLUGIN_ROOT}/srv", "args": ["--root", "${CLAUDE_PLUGIN_ROOT}"]}}}"#,
        );
        let mut warnings = Vec::new();
        let p = load_plugin(&root, "--plugin-dir", &mut warnings).unwrap();
        assert!(warnings.is_empty(), "{warnings:?}");
        assert_eq!(p.name, "deploy");
        assert_eq!(p.author.as_deref(), Some("Ann"));
        let names: Vec<&str> = p.commands.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["deploy:check", "deploy:db:migrate", "deploy:ship"]);
        assert!(
            p.commands
                .iter()
                .all(|c| c.origin == Origin::Plugin("deploy".into()))
        );
        assert_eq!(p.agents[0].name, "deploy:reviewer");
        assert_eq!(p.agents[0].source, "plugin:deploy");
        let root_text = root.to_string_lossy();
        match &p.hooks.groups(HookEvent::PreToolUse)[0].handlers[0].kind {
            HandlerKind::Command { command, .. } => {
                assert_eq!(*command, format!("{root_text}/h.sh"))
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(p.mcp_servers[0].0, "plugin_deploy_db");
        assert_eq!(p.mcp_servers[0].1["command"], format!("{root_text}/srv"));
        assert_eq!(p.mcp_servers[0].1["args"][1], root_text.as_ref());
        assert_eq!(
            p.mcp_servers[0].1["env"]["CLAUDE_PLUGIN_ROOT"],
            root_text.as_ref()
        );
        assert_eq!(
            p.summary(),
            "2 commands, 1 skill, 1 agent, 1 hook, 1 MCP server"
        );
    }

    #[test]
    fn manifest_paths_inline_objects_bare_mcp_and_a_folder_name() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("kit");
        write(
            &root.join(".claude-plugin/plugin.json"),
            r#"{"name": "k", "commands": ["./extra/one.md", "./more"], "agents": "./crew/a.md",
               "skills": "./abilities/solo",
               "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "echo ${CLAUDE_PLUGIN_ROOT}"}]}]},
               "mcpServers": {"web": {"type": "http", "url": "https://x.example/mcp"}}}"#,
        );
        write(&root.join("extra/one.md"), "One.");
        write(&root.join("more/two.md"), "Two.");
        write(
            &root.join("crew/a.md"),
            "---\nname: a\ndescription: A\n---\nA.",
        );
        write(
            &root.join("abilities/solo/SKILL.md"),
            "---\ndescription: Solo\n---\nS.",
        );
        write(&root.join(".mcp.json"), r#"{"local": {"command": "x"}}"#);
        let mut warnings = Vec::new();
        let p = load_plugin(&root, "t", &mut warnings).unwrap();
        assert!(warnings.is_empty(), "{warnings:?}");
        let mut names: Vec<&str> = p.commands.iter().map(|c| c.name.as_str()).collect();
        names.sort();
        assert_eq!(names, ["k:one", "k:solo", "k:two"]);
        assert_eq!(p.agents[0].name, "k:a");
        assert!(p.hooks.has(HookEvent::Stop));
        let servers: Vec<&str> = p.mcp_servers.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(servers, ["plugin_k_local", "plugin_k_web"]);

        let bare = tmp.path().join("no-manifest");
        write(&bare.join("commands/hi.md"), "Hi.");
        let p = load_plugin(&bare, "t", &mut warnings).unwrap();
        assert_eq!(p.name, "no-manifest");
        assert_eq!(p.commands[0].name, "no-manifest:hi");
    }

    #[test]
    fn broken_parts_are_warnings_naming_the_file() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("kit");
        write(
            &root.join(".claude-plugin/plugin.json"),
            r#"{"name": "k", "commands": "../outside"}"#,
        );
        write(&root.join("hooks/hooks.json"), "{not json");
        write(&root.join(".mcp.json"), r#"{"mcpServers": 3}"#);
        write(&root.join("commands/ok.md"), "Still here.");
        let mut warnings = Vec::new();
        let p = load_plugin(&root, "t", &mut warnings).unwrap();
        assert_eq!(p.commands.len(), 1);
        assert!(p.hooks.is_empty() && p.mcp_servers.is_empty());
        let all = warnings.join("\n");
        assert!(all.contains("hooks/hooks.json: invalid JSON"), "{all}");
        assert!(
            all.contains(".mcp.json: `mcpServers` must be an object"),
            "{all}"
        );
        assert!(all.contains("\"../outside\" must be relative"), "{all}");

        let bad = tmp.path().join("bad");
        write(
            &bad.join(".claude-plugin/plugin.json"),
            "{\"version\": \"1\"}",
        );
        let mut warnings = Vec::new();
        assert!(load_plugin(&bad, "t", &mut warnings).is_none());
        assert!(
            warnings[0].contains("plugin.json: missing \"name\"; plugin skipped"),
            "{warnings:?}"
        );
    }

    #[test]
    fn the_data_dir_expands_in_servers_and_hooks_and_is_created() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("kit");
        write(&root.join(".claude-plugin/plugin.json"), r#"{"name": "k"}"#);
        write(
            &root.join(".mcp.json"),
            r#"{"db": {"command": "srv", "args": ["--state", "${CLAUDE_PLUGIN_DATA}/db"]}, "web": {"type": "http", "url": "http://127.0.0.1:9/${CLAUDE_PLUGIN_DATA}"}}"#,
        );
        write(
            &root.join("hooks/hooks.json"),
            r#"{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "touch $CLAUDE_PLUGIN_DATA/x"}]}]}}"#,
        );
        let mut warnings = Vec::new();
        let mut p = load_plugin(&root, "k@m", &mut warnings).unwrap();
        let data = tmp.path().join("data/k-m");
        p.set_data_dir(&data).unwrap();
        assert!(data.is_dir());
        let data_text = data.to_string_lossy();
        let db = &p.mcp_servers[0].1;
        assert_eq!(db["args"][1], format!("{data_text}/db"));
        assert_eq!(db["env"]["CLAUDE_PLUGIN_DATA"], data_text.as_ref());
        let web = &p.mcp_servers[1].1;
        assert_eq!(web["url"], format!("http://127.0.0.1:9/{data_text}"));
        assert!(
            web.get("env").is_none(),
            "only stdio servers get an environment"
        );
        let handler = &p.hooks.groups(HookEvent::Stop)[0].handlers[0];
        assert_eq!(handler.plugin_data.as_deref(), Some(data.as_path()));
        match &handler.kind {
            HandlerKind::Command { command, .. } => {
                assert_eq!(*command, format!("touch {data_text}/x"))
            }
            other => panic!("{other:?}"),
        }
    }
}
