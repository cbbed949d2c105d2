//! Settings (DESIGN §9): the eight layers from lowest to highest —
//! `~/.claude/settings.json`, `$ROBOTA_HOME/settings.json`, `.claude/settings.json`,
//! `.robota/settings.json`, `.claude/settings.local.json`, `.robota/settings.local.json`,
//! `--settings <file|json>`, then command-line flags (applied by the caller) — merged
//! with provenance, env-expanded, type-checked per file (errors name file, line and
//! column), and gated by workspace trust.

pub mod expand;
pub mod local_rules;
pub mod merge;
pub mod protected;
pub mod setup_save;
pub mod shape;
pub mod trust;

use std::path::{Path, PathBuf};

use serde_json::Value;

use merge::Provenance;

/// Where a layer sits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    User,
    Project,
    Local,
    Flag,
}

impl Scope {
    /// Project and local files live in the checkout: trust applies to them.
    pub fn is_project(self) -> bool {
        matches!(self, Scope::Project | Scope::Local)
    }

    /// `--setting-sources`: a comma list of `user`, `project`, `local` (empty: none).
    pub fn parse_sources(list: &str) -> Result<Vec<Scope>, String> {
        list.split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(|name| match name {
                "user" => Ok(Scope::User),
                "project" => Ok(Scope::Project),
                "local" => Ok(Scope::Local),
                other => Err(format!(
                    "--setting-sources: unknown source {other:?} (use user, project, local)"
                )),
            })
            .collect()
    }
}

/// One settings source.
#[derive(Debug, Clone)]
pub struct Layer {
    pub label: String,
    pub scope: Scope,
    /// The project directory rules of this file are relative to.
    pub base: PathBuf,
    pub value: Value,
}

/// A settings file that could not be used.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{0}")]
pub struct SettingsError(pub String);

/// How to load.
#[derive(Debug, Clone)]
pub struct LoadOptions<'a> {
    pub cwd: &'a Path,
    pub home: Option<&'a Path>,
    pub robota_home: &'a Path,
    /// `--settings`: a file path or inline JSON.
    pub extra: Option<&'a str>,
    /// Interactive runs hold back project hooks until trusted; headless runs keep them.
    pub interactive: bool,
}

/// The merged settings.
#[derive(Debug, Clone)]
pub struct Settings {
    pub merged: Value,
    pub provenance: Provenance,
    pub layers: Vec<Layer>,
    /// What an untrusted project's files asked for and did not get.
    pub held_back: Vec<String>,
    pub trusted: bool,
}

impl Settings {
    /// Loads and merges every layer that exists.
    pub fn load(options: &LoadOptions<'_>) -> Result<Settings, SettingsError> {
        Settings::load_sources(options, None)
    }

    /// `load`, reading only the files of these scopes (`--setting-sources`; `None`: all).
    /// `--settings` is always read.
    pub fn load_sources(
        options: &LoadOptions<'_>,
        sources: Option<&[Scope]>,
    ) -> Result<Settings, SettingsError> {
        let store = trust::TrustStore::load(options.robota_home);
        let trusted = store.is_trusted(options.cwd);
        let mut files: Vec<(PathBuf, Scope, PathBuf)> = Vec::new();
        if let Some(home) = options.home {
            files.push((
                home.join(".claude/settings.json"),
                Scope::User,
                home.to_path_buf(),
            ));
        }
        files.push((
            options.robota_home.join("settings.json"),
            Scope::User,
            options.home.unwrap_or(options.robota_home).to_path_buf(),
        ));
        for (dir, name, scope) in [
            (".claude", "settings.json", Scope::Project),
            (".robota", "settings.json", Scope::Project),
            (".claude", "settings.local.json", Scope::Local),
            (".robota", "settings.local.json", Scope::Local),
        ] {
            files.push((
                options.cwd.join(dir).join(name),
                scope,
                options.cwd.to_path_buf(),
            ));
        }
        let mut layers = Vec::new();
        let mut seen = Vec::new();
        files.retain(|(_, scope, _)| sources.is_none_or(|s| s.contains(scope)));
        for (path, scope, base) in files {
            let canonical = std::fs::canonicalize(&path).unwrap_or_else(|_| path.clone());
            if seen.contains(&canonical) {
                continue;
            }
            seen.push(canonical);
            match std::fs::read_to_string(&path) {
                Ok(text) => {
                    let label = path.display().to_string();
                    let value = parse(&text, &label)?;
                    layers.push(Layer {
                        label,
                        scope,
                        base,
                        value,
                    });
                }
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => {
                    return Err(SettingsError(format!(
                        "cannot read {}: {e}",
                        path.display()
                    )));
                }
            }
        }
        if let Some(extra) = options.extra {
            let (label, text) = if extra.trim_start().starts_with('{') {
                ("--settings".to_string(), extra.to_string())
            } else {
                let text = std::fs::read_to_string(extra).map_err(|e| {
                    SettingsError(format!("cannot read --settings file {extra}: {e}"))
                })?;
                (extra.to_string(), text)
            };
            let value = parse(&text, &label)?;
            layers.push(Layer {
                label,
                scope: Scope::Flag,
                base: options.cwd.to_path_buf(),
                value,
            });
        }
        let mut held_back = Vec::new();
        if !trusted {
            // Rules robota saved itself ("don't ask again") are the user's: they stay.
            let own_file = local_rules::local_settings_path(options.cwd)
                .display()
                .to_string();
            let saved = store.saved_rules(options.cwd);
            for layer in layers.iter_mut().filter(|l| l.scope.is_project()) {
                let own = if layer.label == own_file {
                    trust::take_saved_allow(&mut layer.value, saved)
                } else {
                    Vec::new()
                };
                held_back.extend(trust::hold_back(
                    &mut layer.value,
                    &layer.label,
                    !options.interactive,
                ));
                trust::restore_allow(&mut layer.value, own);
            }
        }
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
        Ok(Settings {
            merged,
            provenance,
            layers,
            held_back,
            trusted,
        })
    }

    /// A string setting at a JSON pointer (e.g. `/model`).
    pub fn text(&self, pointer: &str) -> Option<&str> {
        self.merged.pointer(pointer).and_then(Value::as_str)
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

    /// Permission rules of one list (`allow`, `ask`, `deny`), each with its file's scope.
    pub fn rules(&self, list: &str) -> Vec<(String, Scope, PathBuf)> {
        let mut out = Vec::new();
        for layer in &self.layers {
            if let Some(items) = layer
                .value
                .pointer(&format!("/permissions/{list}"))
                .and_then(Value::as_array)
            {
                for rule in items.iter().filter_map(Value::as_str) {
                    out.push((rule.to_string(), layer.scope, layer.base.clone()));
                }
            }
        }
        out
    }

    /// Where automatic compaction starts, as a share of the context window: Claude Code's
    /// `autoCompactEnabled: false` and `autoCompactThreshold: false` turn it off; a number
    /// must be above 0 and at most 1. Default 0.835.
    pub fn auto_compact_threshold(&self) -> Result<Option<f64>, String> {
        let default = robota_core::context::AUTO_COMPACT_THRESHOLD;
        match self.merged.get("autoCompactThreshold") {
            Some(Value::Bool(false)) => return Ok(None),
            Some(Value::Number(n)) => {
                return match n.as_f64() {
                    Some(share) if share > 0.0 && share <= 1.0 => Ok(Some(share)),
                    _ => Err(format!(
                        "autoCompactThreshold {n} in {} must be a share of the window above 0 and at most 1 (e.g. 0.835), or false",
                        self.source_of("/autoCompactThreshold")
                            .unwrap_or("settings")
                    )),
                };
            }
            _ => {}
        }
        let enabled = self
            .merged
            .get("autoCompactEnabled")
            .and_then(Value::as_bool);
        Ok((enabled != Some(false)).then_some(default))
    }

    /// Whether replay-grade diagnostics are on (`diagnostics: true`; default off).
    pub fn diagnostics(&self) -> bool {
        self.merged.get("diagnostics").and_then(Value::as_bool) == Some(true)
    }

    /// `env` as name/value pairs, for tool and hook processes.
    pub fn env(&self) -> Vec<(String, String)> {
        self.merged
            .get("env")
            .and_then(Value::as_object)
            .map(|m| {
                m.iter()
                    .filter_map(|(k, v)| {
                        let text = match v {
                            Value::String(s) => s.clone(),
                            Value::Number(n) => n.to_string(),
                            Value::Bool(b) => b.to_string(),
                            _ => return None,
                        };
                        Some((k.clone(), text))
                    })
                    .collect()
            })
            .unwrap_or_default()
    }

    /// The merged settings with each leaf's source, as `robota config` prints them.
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
            out.push_str(&format!("{pointer} = {shown}    ({source})\n"));
        }
        if out.is_empty() {
            out.push_str("(no settings files)\n");
        }
        for held in &self.held_back {
            out.push_str(&format!("held back until trusted: {held}\n"));
        }
        out
    }
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

/// Parses one file: JSON syntax, then the known keys' types, then env expansion.
fn parse(text: &str, label: &str) -> Result<Value, SettingsError> {
    let position = |e: &serde_json::Error| format!("{label}:{}:{}", e.line(), e.column());
    let mut value: Value = serde_json::from_str(text).map_err(|e| match conflict_marker(text) {
        Some(line) => SettingsError(format!(
            "{label}:{line}: this file has unresolved merge-conflict markers (<<<<<<<, =======, >>>>>>>) from git; keep the side you want, delete the markers, and start robota again"
        )),
        None => SettingsError(format!("{}: malformed JSON: {e}", position(&e))),
    })?;
    if !value.is_object() {
        return Err(SettingsError(format!(
            "{label}: settings must be a JSON object"
        )));
    }
    serde_json::from_str::<shape::SettingsShape>(text)
        .map_err(|e| SettingsError(format!("{}: wrong type: {e}", position(&e))))?;
    if let Some(map) = value.as_object() {
        for key in map
            .keys()
            .filter(|k| !shape::KNOWN_KEYS.contains(&k.as_str()))
        {
            tracing::debug!(file = label, key = %key, "unknown settings key ignored");
        }
    }
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
