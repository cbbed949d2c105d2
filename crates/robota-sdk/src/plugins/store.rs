//! robota's own plugin state under `$ROBOTA_HOME/plugins/`, in Claude Code's layout:
//! `known_marketplaces.json` (`{name: {source, installLocation, lastUpdated}}`),
//! `marketplaces/<name>/` (cloned marketplaces), `installed_plugins.json` (`{"version": 2,
//! "plugins": {"name@marketplace": [{scope, installPath, version, installedAt, lastUpdated,
//! gitCommitSha?}]}}`), `cache/<marketplace>/<plugin>/<version>/` (installed copies) and
//! `data/<id>/` (each plugin's persistent `${CLAUDE_PLUGIN_DATA}`). The JSON files are
//! written atomically; a malformed one is an error naming it and is never overwritten.
//! Also here: switching a plugin on or off in a settings file (`enabledPlugins`).

use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};

use super::error::PluginError;
use crate::settings::local_rules::{
    FileAccess, SettingsWriteError, read_for_edit, write_atomically,
};

/// Which settings file `enabledPlugins` is written to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// `$ROBOTA_HOME/settings.json`.
    User,
    /// `.robota/settings.json` of the project.
    Project,
    /// `.robota/settings.local.json` of the project.
    Local,
}

impl Scope {
    /// The scope a word names: `user`, `project` or `local`.
    pub fn parse(text: &str) -> Result<Scope, PluginError> {
        match text {
            "user" => Ok(Scope::User),
            "project" => Ok(Scope::Project),
            "local" => Ok(Scope::Local),
            other => Err(PluginError::UnknownScope(other.to_string())),
        }
    }

    /// The word for it, as [`Scope::parse`] reads it.
    pub fn as_str(self) -> &'static str {
        match self {
            Scope::User => "user",
            Scope::Project => "project",
            Scope::Local => "local",
        }
    }

    /// The settings file of this scope.
    pub(crate) fn settings_path(self, robota_home: &Path, project: &Path) -> PathBuf {
        match self {
            Scope::User => crate::settings::setup_save::user_settings_path(robota_home),
            Scope::Project => project.join(".robota").join("settings.json"),
            Scope::Local => project.join(".robota").join("settings.local.json"),
        }
    }
}

/// Sets `enabledPlugins[id]` to `on` (`None` removes it) in the settings file at `path`,
/// keeping every other key. The user file stays private (it may hold an API key).
pub(crate) fn set_enabled(
    path: &Path,
    id: &str,
    on: Option<bool>,
    scope: Scope,
) -> Result<(), SettingsWriteError> {
    let mut root = read_for_edit(path)?;
    let map = root
        .entry("enabledPlugins")
        .or_insert_with(|| json!({}))
        .as_object_mut()
        .ok_or_else(|| SettingsWriteError::Shape {
            path: path.to_path_buf(),
            what: "\"enabledPlugins\" is not an object".to_string(),
        })?;
    match on {
        Some(on) => {
            map.insert(id.to_string(), Value::Bool(on));
        }
        None if map.remove(id).is_none() => return Ok(()),
        None => {}
    }
    let access = if scope == Scope::User {
        FileAccess::Private
    } else {
        FileAccess::Shared
    };
    write_atomically(path, &Value::Object(root), access)
}

/// `$ROBOTA_HOME/plugins/` and the files in it.
#[derive(Debug, Clone)]
pub struct PluginStore {
    /// The folder itself.
    pub dir: PathBuf,
}

impl PluginStore {
    /// The store under `robota_home` (nothing is created until written).
    pub fn new(robota_home: &Path) -> PluginStore {
        PluginStore {
            dir: robota_home.join("plugins"),
        }
    }

    pub(crate) fn known_path(&self) -> PathBuf {
        self.dir.join("known_marketplaces.json")
    }

    pub(crate) fn installed_path(&self) -> PathBuf {
        self.dir.join("installed_plugins.json")
    }

    pub(crate) fn marketplaces_dir(&self) -> PathBuf {
        self.dir.join("marketplaces")
    }

    /// `cache/<marketplace>/<plugin>/`: every installed version of one plugin.
    pub(crate) fn plugin_cache(&self, marketplace: &str, plugin: &str) -> PathBuf {
        self.dir.join("cache").join(marketplace).join(plugin)
    }

    /// `data/<id>/`, the id with every character outside `a-z A-Z 0-9 _ -` made `-`
    /// (Claude Code's rule: `formatter@team` → `formatter-team`).
    pub(crate) fn data_dir(&self, id: &str) -> PathBuf {
        let name: String = id
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                    c
                } else {
                    '-'
                }
            })
            .collect();
        self.dir.join("data").join(name)
    }

    /// The known marketplaces by name.
    pub fn known(&self) -> Result<Map<String, Value>, SettingsWriteError> {
        read_for_edit(&self.known_path())
    }

    pub(crate) fn save_known(&self, known: Map<String, Value>) -> Result<(), SettingsWriteError> {
        write_atomically(
            &self.known_path(),
            &Value::Object(known),
            FileAccess::Shared,
        )
    }

    /// The install records by `name@marketplace` (the `plugins` map).
    pub fn installed(&self) -> Result<Map<String, Value>, SettingsWriteError> {
        let path = self.installed_path();
        let root = read_for_edit(&path)?;
        match root.get("plugins") {
            None => Ok(Map::new()),
            Some(Value::Object(map)) => Ok(map.clone()),
            Some(_) => Err(SettingsWriteError::Shape {
                path,
                what: "\"plugins\" is not an object".to_string(),
            }),
        }
    }

    pub(crate) fn save_installed(
        &self,
        plugins: Map<String, Value>,
    ) -> Result<(), SettingsWriteError> {
        let path = self.installed_path();
        let mut root = read_for_edit(&path)?;
        root.insert("version".into(), json!(2));
        root.insert("plugins".into(), Value::Object(plugins));
        write_atomically(&path, &Value::Object(root), FileAccess::Shared)
    }

    /// The record of an installed plugin (the last of its list).
    pub fn record(&self, id: &str) -> Result<Option<Value>, SettingsWriteError> {
        Ok(self.installed()?.get(id).and_then(|e| match e {
            Value::Array(items) => items.last().cloned(),
            other => Some(other.clone()),
        }))
    }
}

/// A temporary folder name beside the real one (`.staging-<pid>-<nanos>`).
pub(crate) fn staging_name(what: &str) -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    format!(".{what}-{}-{nanos}", std::process::id())
}

/// Now, as Claude Code writes it in these files (RFC 3339, UTC).
pub(crate) fn now_text() -> String {
    jiff::Timestamp::now().to_string()
}

/// Copies the folder `from` into `to` (created), leaving out `.git`; symlinks are copied
/// as links.
pub(crate) fn copy_tree(from: &Path, to: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let name = entry.file_name();
        if name == ".git" {
            continue;
        }
        let kind = entry.file_type()?;
        let target = to.join(&name);
        if kind.is_dir() {
            copy_tree(&entry.path(), &target)?;
        } else if kind.is_symlink() {
            #[cfg(unix)]
            std::os::unix::fs::symlink(std::fs::read_link(entry.path())?, &target)?;
        } else {
            std::fs::copy(entry.path(), &target)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn data_dirs_follow_claude_codes_rule() {
        let store = PluginStore::new(Path::new("/rh"));
        assert_eq!(
            store.data_dir("formatter@my.team"),
            Path::new("/rh/plugins/data/formatter-my-team")
        );
    }

    #[test]
    fn enabling_keeps_other_keys_and_refuses_a_malformed_file() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("settings.json");
        std::fs::write(&path, r#"{"model": "m", "enabledPlugins": {"x@y": false}}"#).unwrap();
        set_enabled(&path, "p@m", Some(true), Scope::Project).unwrap();
        let v: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(
            v,
            json!({"model": "m", "enabledPlugins": {"x@y": false, "p@m": true}})
        );
        set_enabled(&path, "x@y", None, Scope::Project).unwrap();
        let v: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(v["enabledPlugins"], json!({"p@m": true}));
        std::fs::write(&path, "{\"enabledPlugins\": ").unwrap();
        let err = set_enabled(&path, "p@m", Some(false), Scope::User).unwrap_err();
        assert!(matches!(err, SettingsWriteError::Malformed { .. }), "{err}");
        assert!(
            err.to_string().contains("malformed JSON, not changed"),
            "{err}"
        );
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "{\"enabledPlugins\": "
        );
    }

    #[test]
    fn copies_leave_out_git() {
        let tmp = tempfile::tempdir().unwrap();
        let from = tmp.path().join("a");
        std::fs::create_dir_all(from.join(".git")).unwrap();
        std::fs::create_dir_all(from.join("sub")).unwrap();
        std::fs::write(from.join("sub/f.md"), "x").unwrap();
        copy_tree(&from, &tmp.path().join("b")).unwrap();
        assert!(tmp.path().join("b/sub/f.md").is_file());
        assert!(!tmp.path().join("b/.git").exists());
    }
}
