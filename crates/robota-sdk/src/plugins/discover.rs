//! Where a session's plugins come from, first found of a name wins: each `--plugin-dir`,
//! the folders of `$ROBOTA_HOME/plugins/`, then the installed plugins that `enabledPlugins`
//! in settings turns on (`{"name@marketplace": true}`) — robota's own installs
//! (`$ROBOTA_HOME/plugins/installed_plugins.json`) before those the user installed with
//! Claude Code (`~/.claude/plugins/installed_plugins.json`). Both indexes are
//! `{"version": 2, "plugins": {"name@marketplace": [{scope, installPath, version,
//! projectPath?, …}]}}` (version 1 had one object per plugin). An installed plugin whose
//! `installPath` is gone is looked for in `<plugins>/cache/<marketplace>/<name>/<version>/`.
//! A plugin turned on by a project's settings file adds no hooks or MCP servers until the
//! directory is trusted (hooks only in interactive runs, as with the project's own hooks).
//! Every plugin gets its data folder `$ROBOTA_HOME/plugins/data/<id>/`
//! (`${CLAUDE_PLUGIN_DATA}`; the id is `name@marketplace`, or `name@inline` for a folder).

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::load::{Plugin, load_plugin, read_json};
use super::store::PluginStore;
use crate::paths::ProjectPaths;
use crate::settings::Settings;

/// Where to look.
pub struct PluginSources<'a> {
    /// The project and the homes (`~/.claude/plugins`, `$ROBOTA_HOME/plugins`).
    pub paths: &'a ProjectPaths,
    /// The settings (`enabledPlugins`, trust).
    pub settings: &'a Settings,
    /// `--plugin-dir` values.
    pub plugin_dirs: &'a [PathBuf],
    /// Whether the session is interactive: only then are an untrusted project's plugin
    /// hooks held back (headless runs do not run project hooks at all).
    pub interactive: bool,
}

/// The plugins found, what could not be loaded, and what an untrusted project held back.
#[derive(Debug, Default)]
pub struct PluginSet {
    /// The plugins loaded, first found of a name only.
    pub plugins: Vec<Plugin>,
    /// One line per plugin or file that could not be loaded, and why.
    pub warnings: Vec<String>,
    /// What an untrusted project's plugins would add and was left out (`MCP servers of
    /// plugin x`, `hooks of plugin x`).
    pub held_back: Vec<String>,
}

/// Folders of `$ROBOTA_HOME/plugins/` that are not plugins.
const NOT_PLUGINS: &[&str] = &["cache", "marketplaces", "repos", "data"];

/// Finds and loads the session's plugins from `sources`, in the order the module header
/// gives.
pub fn discover(sources: &PluginSources<'_>) -> PluginSet {
    let mut set = PluginSet::default();
    for dir in sources.plugin_dirs {
        let dir = if dir.is_absolute() {
            dir.clone()
        } else {
            sources.paths.cwd.join(dir)
        };
        set.add(&dir, "--plugin-dir", None, sources);
    }
    let own = sources.paths.robota_home.join("plugins");
    let mut folders: Vec<PathBuf> = std::fs::read_dir(&own)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.is_dir()
                && p.file_name().is_some_and(|n| {
                    let n = n.to_string_lossy();
                    !n.starts_with('.') && !NOT_PLUGINS.contains(&n.as_ref())
                })
        })
        .collect();
    folders.sort();
    for folder in folders {
        let name = folder
            .file_name()
            .map(|n| n.to_string_lossy().to_string())
            .unwrap_or_default();
        if enabled_value(sources.settings, &name) == Some(false) {
            continue;
        }
        set.add(&folder, "$ROBOTA_HOME/plugins", None, sources);
    }
    set.add_installed(sources);
    let store = PluginStore::new(&sources.paths.robota_home);
    for plugin in &mut set.plugins {
        let id = if plugin.source.contains('@') {
            plugin.source.clone()
        } else {
            format!("{}@inline", plugin.name)
        };
        let dir = store.data_dir(&id);
        if let Err(e) = plugin.set_data_dir(&dir) {
            set.warnings.push(format!(
                "plugin {}: cannot create its data folder {}: {e}",
                plugin.name,
                dir.display()
            ));
        }
    }
    set
}

/// `enabledPlugins[id]` as a boolean, if set.
fn enabled_value(settings: &Settings, id: &str) -> Option<bool> {
    settings.values.enabled_plugins.get(id).copied()
}

/// Whether the user's own settings (their files or `--settings`) turn `id` off: a
/// project's or a checkout's local file may not turn it back on, or a repository could
/// run the hooks of a plugin the user switched off.
fn turned_off_by_user(settings: &Settings, id: &str) -> bool {
    settings
        .layers
        .iter()
        .any(|l| !l.scope.is_project() && l.model.enabled_plugins.get(id) == Some(&false))
}

/// Whether the settings file that last set `enabledPlugins[id]` is a project's.
fn enabled_by_project(settings: &Settings, id: &str) -> bool {
    settings
        .layers
        .iter()
        .rev()
        .find(|l| l.model.enabled_plugins.contains_key(id))
        .is_some_and(|l| l.scope.is_project())
}

impl PluginSet {
    /// Loads the plugin at `dir` unless one of its name is already here; `id` is its
    /// `name@marketplace` when `enabledPlugins` turned it on.
    fn add(&mut self, dir: &Path, source: &str, id: Option<&str>, sources: &PluginSources<'_>) {
        let Some(mut plugin) = load_plugin(dir, source, &mut self.warnings) else {
            return;
        };
        if let Some(kept) = self.plugins.iter().find(|p| p.name == plugin.name) {
            self.warnings.push(format!(
                "plugin {} at {} is already loaded from {}; this one is not used",
                plugin.name,
                dir.display(),
                kept.root.display()
            ));
            return;
        }
        let untrusted_project = id.is_some_and(|id| enabled_by_project(sources.settings, id))
            && !sources.settings.trusted;
        if untrusted_project {
            if !plugin.mcp_servers.is_empty() {
                plugin.mcp_servers.clear();
                self.held_back
                    .push(format!("MCP servers of plugin {}", plugin.name));
            }
            if !plugin.lsp_servers.is_empty() {
                plugin.lsp_servers.clear();
                self.held_back
                    .push(format!("language servers of plugin {}", plugin.name));
            }
            if sources.interactive && !plugin.hooks.is_empty() {
                plugin.hooks = Default::default();
                self.held_back
                    .push(format!("hooks of plugin {}", plugin.name));
            }
            // As with the project's own commands: no pre-approved tools until trusted.
            for command in &mut plugin.commands {
                command.allowed_tools.clear();
            }
        }
        self.plugins.push(plugin);
    }

    /// The plugins in `installed_plugins.json` that settings turn on: robota's own
    /// (`$ROBOTA_HOME/plugins/`) first, then Claude Code's (`~/.claude/plugins/`).
    fn add_installed(&mut self, sources: &PluginSources<'_>) {
        let enabled = &sources.settings.values.enabled_plugins;
        if enabled.is_empty() {
            return;
        }
        let mut places = vec![sources.paths.robota_home.join("plugins")];
        if let Some(home) = sources.paths.home() {
            places.push(home.join(".claude").join("plugins"));
        }
        let indexes: Vec<(PathBuf, PathBuf, Option<Value>)> = places
            .into_iter()
            .map(|dir| {
                let path = dir.join("installed_plugins.json");
                let index = if path.is_file() {
                    read_json(&path, &mut self.warnings)
                } else {
                    None
                };
                (dir, path, index)
            })
            .collect();
        // A BTreeMap: in name order.
        let ids = enabled.iter().filter(|(_, on)| **on).map(|(id, _)| id);
        for id in ids {
            if turned_off_by_user(sources.settings, id) {
                self.warnings.push(format!(
                    "plugin {id} stays off: your user settings turn it off, and {} may not turn it back on",
                    sources.settings.source_of("/enabledPlugins").unwrap_or("a project's settings")
                ));
                continue;
            }
            let (name, marketplace) = id.split_once('@').unwrap_or((id.as_str(), ""));
            let mut found = None;
            let mut listed_in = None;
            for (plugins_dir, index_path, index) in &indexes {
                let entry = index
                    .as_ref()
                    .and_then(|i| i.get("plugins"))
                    .and_then(|p| p.get(id))
                    .and_then(|e| applicable_entry(e, &sources.paths.cwd));
                if entry.is_some() || (index.is_some() && listed_in.is_none()) {
                    listed_in = Some(index_path.clone());
                }
                let path = entry
                    .as_ref()
                    .and_then(|e| e.get("installPath"))
                    .and_then(Value::as_str)
                    .map(PathBuf::from)
                    .filter(|p| p.is_dir())
                    .or_else(|| {
                        let version = entry
                            .as_ref()
                            .and_then(|e| e.get("version"))
                            .and_then(Value::as_str);
                        cached(plugins_dir, marketplace, name, version)
                    });
                if path.is_some() {
                    found = path;
                    break;
                }
            }
            match (found, listed_in) {
                (Some(path), _) => self.add(&path, id, Some(id), sources),
                (None, Some(index_path)) => self.warnings.push(format!(
                    "plugin {id} is enabled in {} but not installed (not in {} nor its cache)",
                    sources
                        .settings
                        .source_of("/enabledPlugins")
                        .unwrap_or("settings"),
                    index_path.display()
                )),
                (None, None) => {}
            }
        }
    }
}

/// The install record that applies in `cwd`: user-scope records everywhere, project and
/// local ones in their project (and below it); the last applicable one wins.
fn applicable_entry(entry: &Value, cwd: &Path) -> Option<Value> {
    let records: Vec<&Value> = match entry {
        Value::Array(items) => items.iter().collect(),
        Value::Object(_) => vec![entry],
        _ => Vec::new(),
    };
    records
        .into_iter()
        .rfind(|r| match r.get("projectPath").and_then(Value::as_str) {
            Some(project) if r.get("scope").and_then(Value::as_str) != Some("user") => {
                cwd.starts_with(project)
            }
            _ => true,
        })
        .cloned()
}

/// `cache/<marketplace>/<name>/<version>/` (the newest-named version when none is given).
fn cached(
    plugins_dir: &Path,
    marketplace: &str,
    name: &str,
    version: Option<&str>,
) -> Option<PathBuf> {
    if marketplace.is_empty() {
        return None;
    }
    let base = plugins_dir.join("cache").join(marketplace).join(name);
    if let Some(version) = version {
        let dir = base.join(version);
        return dir.is_dir().then_some(dir);
    }
    let mut versions: Vec<PathBuf> = std::fs::read_dir(&base)
        .ok()?
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    versions.sort();
    versions.pop()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::settings::LoadOptions;

    fn write(path: &Path, text: &str) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    fn plugin(root: &Path, name: &str) {
        write(
            &root.join(".claude-plugin/plugin.json"),
            &format!(r#"{{"name": "{name}"}}"#),
        );
        write(&root.join("commands/go.md"), "Go.");
        write(
            &root.join("hooks/hooks.json"),
            r#"{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "true"}]}]}}"#,
        );
        write(&root.join(".mcp.json"), r#"{"s": {"command": "x"}}"#);
    }

    struct Env {
        _tmp: tempfile::TempDir,
        cwd: PathBuf,
        home: PathBuf,
        robota_home: PathBuf,
    }

    fn env() -> Env {
        let tmp = tempfile::tempdir().unwrap();
        let cwd = tmp.path().join("repo");
        std::fs::create_dir_all(cwd.join(".git")).unwrap();
        Env {
            cwd,
            home: tmp.path().join("home"),
            robota_home: tmp.path().join("rh"),
            _tmp: tmp,
        }
    }

    fn run(e: &Env, dirs: &[PathBuf], interactive: bool) -> PluginSet {
        let paths = ProjectPaths::new(e.cwd.clone(), Some(e.home.clone()), e.robota_home.clone());
        let settings = Settings::load(&LoadOptions {
            paths: &paths,
            extra: None,
            interactive,
        })
        .unwrap();
        discover(&PluginSources {
            paths: &paths,
            settings: &settings,
            plugin_dirs: dirs,
            interactive,
        })
    }

    fn names(set: &PluginSet) -> Vec<String> {
        set.plugins
            .iter()
            .map(|p| format!("{}<{}", p.name, p.source))
            .collect()
    }

    #[test]
    fn installed_plugins_follow_enabled_plugins_and_flags_come_first() {
        let e = env();
        let cache = e.home.join(".claude/plugins/cache/mkt");
        plugin(&cache.join("alpha/1.0.0"), "alpha");
        plugin(&cache.join("beta/2.0.0"), "beta");
        plugin(&cache.join("gamma/0.1.0"), "gamma");
        write(
            &e.home.join(".claude/plugins/installed_plugins.json"),
            &serde_json::json!({"version": 2, "plugins": {
                "alpha@mkt": [{"scope": "user", "installPath": cache.join("alpha/1.0.0"), "version": "1.0.0"}],
                "beta@mkt": [{"scope": "user", "installPath": "/gone", "version": "2.0.0"}],
                "gamma@mkt": {"installPath": cache.join("gamma/0.1.0"), "version": "0.1.0"},
                "elsewhere@mkt": [{"scope": "project", "projectPath": "/other", "installPath": cache.join("alpha/1.0.0")}]
            }})
            .to_string(),
        );
        write(
            &e.home.join(".claude/settings.json"),
            r#"{"enabledPlugins": {"alpha@mkt": true, "beta@mkt": true, "gamma@mkt": false, "elsewhere@mkt": true, "missing@mkt": true}}"#,
        );
        let flag = e.cwd.join("local-alpha");
        plugin(&flag, "alpha");
        plugin(&e.robota_home.join("plugins/mine"), "mine");
        std::fs::create_dir_all(e.robota_home.join("plugins/cache")).unwrap();
        let set = run(&e, &[PathBuf::from("local-alpha")], false);
        assert_eq!(
            names(&set),
            [
                "alpha<--plugin-dir",
                "mine<$ROBOTA_HOME/plugins",
                "beta<beta@mkt"
            ]
        );
        let all = set.warnings.join("\n");
        assert!(all.contains("plugin alpha at"), "{all}");
        assert!(all.contains("plugin missing@mkt is enabled"), "{all}");
        assert!(all.contains("plugin elsewhere@mkt is enabled"), "{all}");
        assert!(set.held_back.is_empty());
        // A folder of $ROBOTA_HOME/plugins is turned off by its name.
        write(
            &e.home.join(".claude/settings.json"),
            r#"{"enabledPlugins": {"alpha@mkt": true, "mine": false}}"#,
        );
        assert_eq!(names(&run(&e, &[], false)), ["alpha<alpha@mkt"]);
    }

    #[test]
    fn a_plugin_enabled_by_an_untrusted_project_adds_no_hooks_or_servers() {
        let e = env();
        let dir = e.home.join(".claude/plugins/cache/mkt/p/1");
        plugin(&dir, "p");
        write(
            &e.home.join(".claude/plugins/installed_plugins.json"),
            &serde_json::json!({"version": 2, "plugins": {"p@mkt": [{"scope": "user", "installPath": dir}]}}).to_string(),
        );
        write(
            &e.cwd.join(".claude/settings.json"),
            r#"{"enabledPlugins": {"p@mkt": true}}"#,
        );
        let set = run(&e, &[], true);
        let p = &set.plugins[0];
        assert_eq!(p.commands.len(), 1);
        assert!(p.hooks.is_empty() && p.mcp_servers.is_empty());
        assert_eq!(
            set.held_back,
            ["MCP servers of plugin p", "hooks of plugin p"]
        );
        // Headless runs keep the hooks, as they keep the project's own.
        let set = run(&e, &[], false);
        assert!(!set.plugins[0].hooks.is_empty());
        assert!(set.plugins[0].mcp_servers.is_empty());
        // Trusted: everything.
        crate::settings::trust::TrustStore::load(&e.robota_home)
            .trust(&e.cwd)
            .unwrap();
        let set = run(&e, &[], true);
        assert!(set.held_back.is_empty());
        assert_eq!(set.plugins[0].mcp_servers.len(), 1);
        // Switched off in the user's own settings, no project file turns it back on,
        // trusted or not, headless or not, shared or local.
        write(
            &e.home.join(".claude/settings.json"),
            r#"{"enabledPlugins": {"p@mkt": false}}"#,
        );
        for file in ["settings.json", "settings.local.json"] {
            write(
                &e.cwd.join(".claude").join(file),
                r#"{"enabledPlugins": {"p@mkt": true}}"#,
            );
            for interactive in [true, false] {
                let set = run(&e, &[], interactive);
                assert!(set.plugins.is_empty(), "{file}: {:?}", names(&set));
                assert!(
                    set.warnings
                        .iter()
                        .any(|w| w.contains("plugin p@mkt stays off"))
                );
            }
        }
        // The user's own switch still works both ways.
        write(&e.cwd.join(".claude/settings.json"), "{}");
        write(&e.cwd.join(".claude/settings.local.json"), "{}");
        write(
            &e.home.join(".claude/settings.json"),
            r#"{"enabledPlugins": {"p@mkt": true}}"#,
        );
        assert_eq!(names(&run(&e, &[], true)), ["p<p@mkt"]);
    }
}
