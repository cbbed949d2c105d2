//! Settings (DESIGN §9): the layers from lowest to highest —
//! `~/.claude/settings.json`, `$ROBOTA_HOME/settings.json`, `.claude/settings.json`,
//! `.robota/settings.json`, `.claude/settings.local.json`, `.robota/settings.local.json`,
//! `--settings <file|json>`, command-line flags (applied by the caller), and above them
//! all the managed settings an administrator put at a system path (see `managed`) —
//! merged with provenance, env-expanded, type-checked per file (errors name file, line
//! and column), and gated by workspace trust.

pub mod expand;
pub(crate) mod git_exclude;
pub(crate) mod local_rules;
pub mod managed;
pub mod merge;
pub mod model;
pub mod protected;
pub mod setup_save;
pub mod trust;

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::paths::ProjectPaths;
use merge::Provenance;
pub use model::SettingsModel;
pub(crate) use model::UnknownKey;
use robota_core::permission::RuleList;

/// Where a layer sits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// The user's own files: `~/.claude/settings.json` and `$ROBOTA_HOME/settings.json`.
    User,
    /// The project's shared files: `.claude/settings.json` and `.robota/settings.json`.
    Project,
    /// The project's uncommitted files: `.claude/settings.local.json` and
    /// `.robota/settings.local.json`.
    Local,
    /// `--settings` on the command line (a file or inline JSON).
    Flag,
    /// `managed-settings.json` at a system path: the administrator's policy, above all.
    Managed,
}

impl Scope {
    /// Project and local files live in the checkout: trust applies to them.
    pub(crate) fn is_project(self) -> bool {
        matches!(self, Scope::Project | Scope::Local)
    }

    /// `--setting-sources`: a comma list of `user`, `project`, `local` (empty: none).
    pub fn parse_sources(list: &str) -> Result<Vec<Scope>, SettingsError> {
        list.split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(|name| match name {
                "user" => Ok(Scope::User),
                "project" => Ok(Scope::Project),
                "local" => Ok(Scope::Local),
                other => Err(SettingsError::UnknownSource(other.to_string())),
            })
            .collect()
    }
}

/// One settings source.
#[derive(Debug, Clone)]
pub struct Layer {
    /// The file's path (or `--settings`).
    pub label: String,
    /// Where the file sits.
    pub scope: Scope,
    /// The project directory rules of this file are relative to.
    pub base: PathBuf,
    /// The file as written, less what an untrusted project may not set.
    pub value: Value,
    /// `value`, read into the model.
    pub model: SettingsModel,
}

/// Why the settings could not be used; each message names the file (and line and
/// column) to fix.
#[derive(Debug, thiserror::Error)]
pub enum SettingsError {
    /// A settings file exists but could not be read.
    #[error("cannot read {}: {source}", path.display())]
    Read {
        /// The settings file.
        path: PathBuf,
        /// The io error.
        #[source]
        source: std::io::Error,
    },
    /// The `--settings` file could not be read.
    #[error("cannot read --settings file {file}: {source}")]
    ReadFlagFile {
        /// The file as given on the command line.
        file: String,
        /// The io error.
        #[source]
        source: std::io::Error,
    },
    /// The file still has git merge-conflict markers.
    #[error(
        "{file}:{line}: this file has unresolved merge-conflict markers (<<<<<<<, =======, >>>>>>>) from git; keep the side you want, delete the markers, and start robota again"
    )]
    MergeConflict {
        /// The file's label (its path, or `--settings`).
        file: String,
        /// The line of the first marker, from 1.
        line: usize,
    },
    /// The file is not valid JSON.
    #[error("{file}:{}:{}: malformed JSON: {source}", .source.line(), .source.column())]
    Malformed {
        /// The file's label (its path, or `--settings`).
        file: String,
        /// The parse error, with its line and column.
        #[source]
        source: serde_json::Error,
    },
    /// The file is JSON but not an object.
    #[error("{file}: settings must be a JSON object")]
    NotObject {
        /// The file's label (its path, or `--settings`).
        file: String,
    },
    /// A value of the wrong type; the source names its key's path.
    #[error(
        "{file}:{}:{}: wrong type at {}: {}",
        .source.inner().line(),
        .source.inner().column(),
        .source.path(),
        .source.inner()
    )]
    WrongType {
        /// The file's label (its path, or `--settings`).
        file: String,
        /// The type error and the path of the key it is at.
        #[source]
        source: model::ModelError<serde_json::Error>,
    },
    /// The files are each well typed, but merged they are not.
    #[error("the merged settings: wrong type: {0}")]
    Merged(#[source] model::ModelError<serde_json::Error>),
    /// `autoCompactThreshold` is a number outside (0, 1].
    #[error(
        "autoCompactThreshold {share} in {file} must be a share of the window above 0 and at most 1 (e.g. 0.835), or false"
    )]
    Threshold {
        /// The number given.
        share: f64,
        /// The file's label (its path, or `--settings`).
        file: String,
    },
    /// `--setting-sources` names a source (the word given) other than user, project or
    /// local.
    #[error("--setting-sources: unknown source {0:?} (use user, project, local)")]
    UnknownSource(String),
}

/// How to load.
#[derive(Debug, Clone)]
pub struct LoadOptions<'a> {
    /// The project (the working directory) and the homes the user files live in.
    pub paths: &'a ProjectPaths,
    /// `--settings`: a file path or inline JSON.
    pub extra: Option<&'a str>,
    /// Interactive runs hold back project hooks until trusted; headless runs keep them.
    pub interactive: bool,
}

/// The merged settings.
#[derive(Debug, Clone)]
pub struct Settings {
    /// The merged layers, read into the model: what every consumer reads.
    pub values: SettingsModel,
    /// The merged layers as JSON (what `robota config` prints).
    merged: Value,
    /// Which file set each value.
    pub provenance: Provenance,
    /// The files, lowest first.
    pub layers: Vec<Layer>,
    /// What an untrusted project's files asked for and did not get.
    pub held_back: Vec<String>,
    /// What other files set and managed policy ignores (`allowManagedHooksOnly`, …).
    pub overruled: Vec<String>,
    /// Keys no part of robota reads, with the file that has them.
    pub(crate) unknown_keys: Vec<UnknownKey>,
    /// Whether the project is trusted.
    pub trusted: bool,
}

impl Settings {
    /// Loads and merges every layer that exists.
    pub fn load(options: &LoadOptions<'_>) -> Result<Settings, SettingsError> {
        Settings::load_sources(options, None)
    }

    /// `load`, reading only the files of these scopes (`--setting-sources`; `None`: all).
    /// `--settings` is always read.
    pub(crate) fn load_sources(
        options: &LoadOptions<'_>,
        sources: Option<&[Scope]>,
    ) -> Result<Settings, SettingsError> {
        let paths = options.paths;
        let store = trust::TrustStore::load(&paths.robota_home);
        let trusted = store.is_trusted(&paths.cwd);
        let mut unknown_keys = Vec::new();
        let mut layers = Vec::new();
        for (path, scope, base) in settings_files(paths, sources) {
            match std::fs::read_to_string(&path) {
                Ok(text) => {
                    let label = path.display().to_string();
                    let value = parse(&text, &label, &mut unknown_keys)?;
                    layers.push(Layer::new(label, scope, base, value));
                }
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(source) => return Err(SettingsError::Read { path, source }),
            }
        }
        if let Some(extra) = options.extra {
            let (label, text) = if extra.trim_start().starts_with('{') {
                ("--settings".to_string(), extra.to_string())
            } else {
                let text = std::fs::read_to_string(extra).map_err(|source| {
                    SettingsError::ReadFlagFile {
                        file: extra.to_string(),
                        source,
                    }
                })?;
                (extra.to_string(), text)
            };
            let value = parse(&text, &label, &mut unknown_keys)?;
            layers.push(Layer::new(label, Scope::Flag, paths.cwd.clone(), value));
        }
        for path in managed::managed_files() {
            match std::fs::read_to_string(&path) {
                Ok(text) => {
                    let label = path.display().to_string();
                    let value = parse(&text, &label, &mut unknown_keys)?;
                    layers.push(Layer::new(label, Scope::Managed, paths.cwd.clone(), value));
                }
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(source) => return Err(SettingsError::Read { path, source }),
            }
        }
        let held_back = if trusted {
            Vec::new()
        } else {
            hold_back_untrusted(&mut layers, &store, &paths.cwd, options.interactive)
        };
        let overruled = managed::restrict_other_layers(&mut layers);
        let mut merged = merge::empty();
        let mut provenance = Provenance::new();
        for layer in &layers {
            merge::merge_into(
                &mut merged,
                layer.value.clone(),
                &layer.label,
                "",
                &mut provenance,
            );
        }
        let values = model::read_model(&merged, "merged settings", &mut Vec::new())
            .map_err(SettingsError::Merged)?;
        Ok(Settings {
            values,
            merged,
            provenance,
            layers,
            held_back,
            overruled,
            unknown_keys,
            trusted,
        })
    }

    /// The file that set the value at `pointer` (or the nearest value below it).
    pub fn source_of(&self, pointer: &str) -> Option<&str> {
        self.provenance
            .get(pointer)
            .map(String::as_str)
            .or_else(|| {
                self.provenance
                    .range(pointer.to_string()..)
                    .next()
                    .filter(|(k, _)| k.starts_with(&format!("{pointer}/")))
                    .map(|(_, v)| v.as_str())
            })
    }

    /// The layer that set the value at `pointer`.
    pub fn layer_of(&self, pointer: &str) -> Option<&Layer> {
        let source = self.source_of(pointer)?;
        self.layers.iter().find(|l| l.label == source)
    }

    /// Permission rules of one list, each with its file's scope and base directory.
    pub fn rules(&self, list: RuleList) -> Vec<(String, Scope, PathBuf)> {
        let mut out = Vec::new();
        for layer in &self.layers {
            let permissions = &layer.model.permissions;
            let rules = match list {
                RuleList::Allow => &permissions.allow,
                RuleList::Ask => &permissions.ask,
                RuleList::Deny => &permissions.deny,
            };
            for rule in rules {
                out.push((rule.clone(), layer.scope, layer.base.clone()));
            }
        }
        out
    }

    /// Where automatic compaction starts, as a share of the context window: Claude Code's
    /// `autoCompactEnabled: false` and `autoCompactThreshold: false` turn it off; a number
    /// must be above 0 and at most 1. Default 0.835.
    pub(crate) fn auto_compact_threshold(&self) -> Result<Option<f64>, SettingsError> {
        let default = robota_core::context::AUTO_COMPACT_THRESHOLD;
        match self.values.auto_compact_threshold {
            Some(model::Threshold::Flag(false)) => return Ok(None),
            Some(model::Threshold::Share(share)) => {
                return if share > 0.0 && share <= 1.0 {
                    Ok(Some(share))
                } else {
                    Err(SettingsError::Threshold {
                        share,
                        file: self
                            .source_of("/autoCompactThreshold")
                            .unwrap_or("settings")
                            .to_string(),
                    })
                };
            }
            _ => {}
        }
        Ok((self.values.auto_compact_enabled != Some(false)).then_some(default))
    }

    /// `--safe-mode`: no hooks, status line, MCP servers from settings or plugins.
    pub fn turn_customisations_off(&mut self) {
        let values = &mut self.values;
        values.hooks = None;
        values.disable_all_hooks = Some(true);
        values.status_line = None;
        values.mcp_servers = None;
        values.enabled_plugins.clear();
        values.extra_known_marketplaces.clear();
    }

    /// Whether replay-grade diagnostics are on (`diagnostics: true`; default off).
    pub fn diagnostics(&self) -> bool {
        self.values.diagnostics == Some(true)
    }

    /// `env` as name/value pairs, for tool and hook processes.
    pub fn env(&self) -> Vec<(String, String)> {
        self.values
            .env
            .iter()
            .map(|(name, value)| (name.clone(), value.to_env_text()))
            .collect()
    }

    /// `env` of the user's, `--settings` and managed files (in that precedence, the last
    /// winning), as name/value pairs: what robota itself is configured from where a project
    /// file must not choose (where telemetry goes, with which headers).
    pub fn env_outside_project(&self) -> Vec<(String, String)> {
        let rank = |scope: Scope| match scope {
            Scope::Managed => 2,
            Scope::Flag => 1,
            _ => 0,
        };
        let mut layers: Vec<&Layer> = self
            .layers
            .iter()
            .filter(|l| !l.scope.is_project())
            .collect();
        layers.sort_by_key(|l| rank(l.scope));
        let mut env: Vec<(String, String)> = Vec::new();
        for layer in layers {
            for (name, value) in &layer.model.env {
                env.retain(|(k, _)| k != name);
                env.push((name.clone(), value.to_env_text()));
            }
        }
        env
    }

    /// `subprocessEnv.passThrough` of the user's, managed and `--settings` files: a project
    /// file, trusted or not, may not hand the user's credentials to the processes it
    /// configures (its hooks, its MCP servers).
    pub fn credential_pass_through(&self) -> Vec<String> {
        let mut names = Vec::new();
        for layer in &self.layers {
            if layer.scope.is_project() {
                continue;
            }
            for name in &layer.model.subprocess_env.pass_through {
                if !names.contains(name) {
                    names.push(name.clone());
                }
            }
        }
        names
    }

    /// The merged settings with each leaf's source, as `robota config` prints them, then
    /// what was held back and the keys robota does not read.
    pub fn describe(&self) -> String {
        let mut out = String::new();
        for (pointer, source) in &self.provenance {
            let value = self
                .merged
                .pointer(pointer)
                .map(|v| v.to_string())
                .unwrap_or_default();
            let shown = if is_secret(pointer) {
                "\"[REDACTED]\"".to_string()
            } else {
                value
            };
            let managed = if self.managed_layers().any(|l| &l.label == source) {
                " [managed: cannot be overridden]"
            } else {
                ""
            };
            out.push_str(&format!("{pointer} = {shown}    ({source}){managed}\n"));
        }
        if out.is_empty() {
            out.push_str("(no settings files)\n");
        }
        for held in &self.held_back {
            out.push_str(&format!("held back until trusted: {held}\n"));
        }
        for overruled in &self.overruled {
            out.push_str(&format!("ignored by managed policy: {overruled}\n"));
        }
        for unknown in &self.unknown_keys {
            out.push_str(&format!(
                "not read by robota: {} in {}\n",
                unknown.key, unknown.file
            ));
        }
        out
    }
}

impl Layer {
    fn new(label: String, scope: Scope, base: PathBuf, value: Value) -> Layer {
        let mut layer = Layer {
            label,
            scope,
            base,
            value,
            model: SettingsModel::default(),
        };
        layer.read_model();
        layer
    }

    /// Reads `value` into `model` again (after trust held some of it back). The file was
    /// type-checked when read, so this cannot fail but for a bug; then it keeps the
    /// defaults and says so.
    fn read_model(&mut self) {
        match model::read_model(&self.value, &self.label, &mut Vec::new()) {
            Ok(model) => self.model = model,
            Err(error) => tracing::warn!(file = %self.label, %error, "settings not read"),
        }
    }
}

/// The settings files of `paths`, lowest first, each with its scope and the directory its
/// rules are relative to; a file reached twice (a link) is read once.
fn settings_files(
    paths: &ProjectPaths,
    sources: Option<&[Scope]>,
) -> Vec<(PathBuf, Scope, PathBuf)> {
    let mut files: Vec<(PathBuf, Scope, PathBuf)> = Vec::new();
    if let Some(home) = paths.home() {
        files.push((
            home.join(".claude/settings.json"),
            Scope::User,
            home.to_path_buf(),
        ));
    }
    files.push((
        paths.robota_home.join("settings.json"),
        Scope::User,
        paths.home().unwrap_or(&paths.robota_home).to_path_buf(),
    ));
    for (dir, name, scope) in [
        (".claude", "settings.json", Scope::Project),
        (".robota", "settings.json", Scope::Project),
        (".claude", "settings.local.json", Scope::Local),
        (".robota", "settings.local.json", Scope::Local),
    ] {
        files.push((paths.cwd.join(dir).join(name), scope, paths.cwd.clone()));
    }
    files.retain(|(_, scope, _)| sources.is_none_or(|s| s.contains(scope)));
    let mut seen = Vec::new();
    files.retain(|(path, _, _)| {
        let canonical = std::fs::canonicalize(path).unwrap_or_else(|_| path.clone());
        let first = !seen.contains(&canonical);
        seen.push(canonical);
        first
    });
    files
}

/// Takes out of an untrusted project's files what they may not set (see `trust`), and
/// says what was held back.
fn hold_back_untrusted(
    layers: &mut [Layer],
    store: &trust::TrustStore,
    cwd: &Path,
    interactive: bool,
) -> Vec<String> {
    let mut held_back = Vec::new();
    // Rules robota saved itself ("don't ask again") are the user's: they stay.
    let own_file = local_rules::local_settings_path(cwd).display().to_string();
    let saved = store.saved_rules(cwd);
    for layer in layers.iter_mut().filter(|l| l.scope.is_project()) {
        let own = if layer.label == own_file {
            trust::take_saved_allow(&mut layer.value, saved)
        } else {
            Vec::new()
        };
        held_back.extend(trust::hold_back(
            &mut layer.value,
            &layer.label,
            !interactive,
        ));
        trust::restore_allow(&mut layer.value, own);
        layer.read_model();
    }
    held_back
}

/// Whether the value at `pointer` is a credential (shown redacted), by its key's name.
fn is_secret(pointer: &str) -> bool {
    pointer
        .rsplit('/')
        .next()
        .is_some_and(robota_session::redact::is_secret_key)
}

/// The first line (1-based) that opens a git merge conflict, if any.
fn conflict_marker(text: &str) -> Option<usize> {
    text.lines()
        .position(|l| l.starts_with("<<<<<<< ") || l == "<<<<<<<")
        .map(|i| i + 1)
}

/// Parses one file: JSON syntax, then the model's types (collecting the keys it does not
/// name), then env expansion.
fn parse(text: &str, label: &str, unknown: &mut Vec<UnknownKey>) -> Result<Value, SettingsError> {
    let file = || label.to_string();
    let mut value: Value =
        serde_json::from_str(text).map_err(|source| match conflict_marker(text) {
            Some(line) => SettingsError::MergeConflict { file: file(), line },
            None => SettingsError::Malformed {
                file: file(),
                source,
            },
        })?;
    if !value.is_object() {
        return Err(SettingsError::NotObject { file: file() });
    }
    let mut input = serde_json::Deserializer::from_str(text);
    model::read_model(&mut input, label, unknown).map_err(|source| SettingsError::WrongType {
        file: file(),
        source,
    })?;
    // Hook and status-line commands are shell text: their `$VAR`s expand when they run.
    if let Some(map) = value.as_object_mut() {
        for (key, entry) in map.iter_mut() {
            if key != "hooks" && key != "statusLine" {
                expand::expand_value(entry, &|name| std::env::var(name).ok());
            }
        }
    }
    Ok(value)
}

#[cfg(test)]
mod tests;
