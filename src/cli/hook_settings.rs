//! Where the session's hooks come from: the `hooks` object of every settings file of
//! DESIGN §9, lowest layer first (`~/.claude/settings.json`, `$ROBOTA_HOME/settings.json`,
//! `.claude/settings.json`, `.robota/settings.json`, `.claude/settings.local.json`,
//! `.robota/settings.local.json`), their matcher groups concatenated, and
//! `disableAllHooks` taken from the highest layer that sets it. This stands in for the
//! settings layer until it exists; then the merged settings value is handed to
//! `HookConfig::from_settings` instead. A malformed file is an error naming file, line and
//! column; a bad hook entry is a warning and the rest still loads.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::core::hooks::HookConfig;

/// The settings files that may carry hooks, lowest precedence first.
pub fn settings_files(cwd: &Path, user_home: Option<&Path>, robota_home: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    if let Some(home) = user_home {
        files.push(home.join(".claude").join("settings.json"));
    }
    files.push(robota_home.join("settings.json"));
    for name in [
        ".claude/settings.json",
        ".robota/settings.json",
        ".claude/settings.local.json",
        ".robota/settings.local.json",
    ] {
        files.push(cwd.join(name));
    }
    files
}

/// Reads and merges the hooks of `files`; warnings name the file they come from.
pub fn load(files: &[PathBuf]) -> Result<(HookConfig, Vec<String>), String> {
    let mut config = HookConfig::default();
    let mut warnings = Vec::new();
    let mut disabled = false;
    for path in files {
        let text = match std::fs::read_to_string(path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => return Err(format!("cannot read {}: {e}", path.display())),
        };
        let value: Value = serde_json::from_str(&text).map_err(|e| {
            format!(
                "{}:{}:{}: malformed settings: {e}",
                path.display(),
                e.line(),
                e.column()
            )
        })?;
        if let Some(flag) = value.get("disableAllHooks").and_then(Value::as_bool) {
            disabled = flag;
        }
        if let Some(hooks) = value.get("hooks") {
            let (layer, layer_warnings) = HookConfig::from_hooks(hooks, None);
            config.merge(layer);
            warnings.extend(
                layer_warnings
                    .into_iter()
                    .map(|w| format!("{}: {w}", path.display())),
            );
        }
    }
    if disabled {
        return Ok((HookConfig::default(), warnings));
    }
    Ok((config, warnings))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::hooks::HookEvent;

    #[test]
    fn layers_concatenate_and_the_highest_disable_flag_wins() {
        let dir = tempfile::tempdir().unwrap();
        let cwd = dir.path().join("p");
        let home = dir.path().join("h");
        std::fs::create_dir_all(cwd.join(".claude")).unwrap();
        std::fs::create_dir_all(home.join(".claude")).unwrap();
        let hook = |cmd: &str| {
            format!(
                r#"{{"hooks":{{"Stop":[{{"hooks":[{{"type":"command","command":"{cmd}"}}]}}]}}}}"#
            )
        };
        std::fs::write(home.join(".claude/settings.json"), hook("user")).unwrap();
        std::fs::write(cwd.join(".claude/settings.json"), hook("project")).unwrap();
        let files = settings_files(&cwd, Some(&home), &dir.path().join("rh"));
        let (config, warnings) = load(&files).unwrap();
        assert!(warnings.is_empty());
        let labels: Vec<String> = config
            .groups(HookEvent::Stop)
            .iter()
            .map(|g| g.handlers[0].label())
            .collect();
        assert_eq!(labels, vec!["user", "project"]);

        std::fs::write(
            cwd.join(".claude/settings.local.json"),
            r#"{"disableAllHooks": true}"#,
        )
        .unwrap();
        assert!(load(&files).unwrap().0.is_empty());

        std::fs::write(
            cwd.join(".claude/settings.local.json"),
            "{\n  \"hooks\": ,\n}",
        )
        .unwrap();
        let err = load(&files).unwrap_err();
        assert!(err.contains("settings.local.json:2:"), "{err}");
    }
}
