//! Saving what the first-run setup chose: a provider profile written into
//! `$ROBOTA_HOME/settings.json` as `providers.<name>` = `{type, model, apiKey, baseURL}`
//! (the keys the provider setup reads) with `currentProvider` pointing at it. Every other
//! key of the file is kept; a malformed file is refused and left untouched; the file is
//! written atomically with mode 0600 because it may hold an API key.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};

pub use super::local_rules::SettingsWriteError;
use super::local_rules::{FileAccess, read_for_edit, write_atomically};

/// One provider profile to save.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SetupProfile {
    /// The profile's name under `providers` (and the value of `currentProvider`).
    pub name: String,
    /// The provider type as profiles spell it: `anthropic`, `openai`, `google`,
    /// `openai-compatible`.
    pub kind: &'static str,
    /// A literal key, or `$ENV:NAME` to read it from the environment at start-up.
    pub api_key: Option<String>,
    /// The endpoint, when not the provider's default (required for
    /// `openai-compatible`).
    pub base_url: Option<String>,
    /// The model the profile starts sessions with.
    pub model: String,
}

/// The user settings file under `robota_home`.
pub(crate) fn user_settings_path(robota_home: &Path) -> PathBuf {
    robota_home.join("settings.json")
}

/// Adds (or replaces) `providers.<profile.name>` in `$ROBOTA_HOME/settings.json`, makes it
/// the `currentProvider`, and returns the file written.
pub fn save_setup(
    robota_home: &Path,
    profile: &SetupProfile,
) -> Result<PathBuf, SettingsWriteError> {
    let path = user_settings_path(robota_home);
    let mut root = read_for_edit(&path)?;
    let providers = root
        .entry("providers")
        .or_insert_with(|| json!({}))
        .as_object_mut()
        .ok_or_else(|| SettingsWriteError::Shape {
            path: path.clone(),
            what: "\"providers\" is not an object".to_string(),
        })?;
    let mut entry = Map::new();
    entry.insert("type".into(), json!(profile.kind));
    entry.insert("model".into(), json!(profile.model));
    if let Some(key) = profile.api_key.as_deref().filter(|k| !k.is_empty()) {
        entry.insert("apiKey".into(), json!(key));
    }
    if let Some(url) = profile.base_url.as_deref().filter(|u| !u.is_empty()) {
        entry.insert("baseURL".into(), json!(url));
    }
    providers.insert(profile.name.clone(), Value::Object(entry));
    root.insert("currentProvider".into(), json!(profile.name));
    write_atomically(&path, &Value::Object(root), FileAccess::Private)?;
    Ok(path)
}

/// Sets (or with `None` removes) one top-level key of `$ROBOTA_HOME/settings.json`,
/// keeping everything else in the file, and returns the file written.
pub fn set_user_setting(
    robota_home: &Path,
    key: &str,
    value: Option<Value>,
) -> Result<PathBuf, SettingsWriteError> {
    let path = user_settings_path(robota_home);
    let mut root = read_for_edit(&path)?;
    match value {
        Some(value) => {
            root.insert(key.to_string(), value);
        }
        None => {
            root.remove(key);
        }
    }
    write_atomically(&path, &Value::Object(root), FileAccess::Private)?;
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::paths::ProjectPaths;
    use crate::settings::{LoadOptions, Settings};

    fn anthropic() -> SetupProfile {
        SetupProfile {
            name: "anthropic".into(),
            kind: "anthropic",
            api_key: Some("sk-ant-test-1234".into()),
            base_url: None,
            model: "claude-sonnet-4-6".into(),
        }
    }

    fn load(robota_home: &Path) -> Settings {
        let cwd = robota_home.join("project");
        std::fs::create_dir_all(&cwd).unwrap();
        let paths = ProjectPaths::new(cwd, None, robota_home.to_path_buf());
        Settings::load(&LoadOptions {
            paths: &paths,
            extra: None,
            interactive: true,
        })
        .unwrap()
    }

    #[test]
    fn a_new_file_is_created_with_the_folder_and_loads_back() {
        let tmp = tempfile::tempdir().unwrap();
        let home = tmp.path().join("nested").join("rh");
        let path = save_setup(&home, &anthropic()).unwrap();
        assert_eq!(path, home.join("settings.json"));
        assert_eq!(
            std::fs::read_dir(&home).unwrap().count(),
            1,
            "no temp file left beside it"
        );
        let settings = load(&home);
        assert_eq!(
            settings.values.current_provider.as_deref(),
            Some("anthropic")
        );
        assert_eq!(
            settings.values.providers["anthropic"].kind.as_deref(),
            Some("anthropic")
        );
        assert_eq!(
            settings.values.providers["anthropic"].model.as_deref(),
            Some("claude-sonnet-4-6")
        );
        assert_eq!(
            settings.values.providers["anthropic"].api_key.as_deref(),
            Some("sk-ant-test-1234")
        );
        assert_eq!(settings.values.providers["anthropic"].base_url, None);
    }

    #[test]
    fn existing_keys_are_kept_and_a_profile_of_the_same_name_replaced() {
        let tmp = tempfile::tempdir().unwrap();
        let path = user_settings_path(tmp.path());
        std::fs::write(
            &path,
            r#"{"model":"m","permissions":{"allow":["Bash(ls)"]},"currentProvider":"old",
               "providers":{"old":{"type":"openai","model":"gpt-5.4"},
                            "local":{"type":"anthropic","model":"x","apiKey":"stale"}}}"#,
        )
        .unwrap();
        let profile = SetupProfile {
            name: "local".into(),
            kind: "openai-compatible",
            api_key: Some("$ENV:ROBOTA_SETUP_SAVE_TEST_UNSET_VAR".into()),
            base_url: Some("http://127.0.0.1:8080/v1".into()),
            model: "qwen3-coder".into(),
        };
        save_setup(tmp.path(), &profile).unwrap();
        let raw: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(
            raw,
            json!({
                "model": "m",
                "permissions": {"allow": ["Bash(ls)"]},
                "currentProvider": "local",
                "providers": {
                    "old": {"type": "openai", "model": "gpt-5.4"},
                    "local": {
                        "type": "openai-compatible",
                        "model": "qwen3-coder",
                        "apiKey": "$ENV:ROBOTA_SETUP_SAVE_TEST_UNSET_VAR",
                        "baseURL": "http://127.0.0.1:8080/v1"
                    }
                }
            })
        );
        let settings = load(tmp.path());
        assert_eq!(settings.values.current_provider.as_deref(), Some("local"));
        assert_eq!(
            settings.values.providers["local"].api_key.as_deref(),
            Some(""),
            "$ENV: is expanded when loaded (the variable is unset here)"
        );
        assert_eq!(
            settings.values.providers["old"].model.as_deref(),
            Some("gpt-5.4")
        );
    }

    #[test]
    fn a_malformed_file_is_refused_and_left_untouched() {
        let tmp = tempfile::tempdir().unwrap();
        let path = user_settings_path(tmp.path());
        std::fs::write(&path, "{ \"model\": ").unwrap();
        let err = save_setup(tmp.path(), &anthropic())
            .unwrap_err()
            .to_string();
        assert!(err.contains(&path.display().to_string()), "{err}");
        assert!(err.contains("malformed JSON, not changed"), "{err}");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "{ \"model\": ");
        std::fs::write(&path, r#"{"providers": ["not", "a", "map"]}"#).unwrap();
        let err = save_setup(tmp.path(), &anthropic())
            .unwrap_err()
            .to_string();
        assert!(err.contains("\"providers\" is not an object"), "{err}");
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            r#"{"providers": ["not", "a", "map"]}"#
        );
        assert_eq!(std::fs::read_dir(tmp.path()).unwrap().count(), 1);
    }

    #[cfg(unix)]
    #[test]
    fn the_file_is_private_even_when_it_existed_with_a_wider_mode() {
        use std::os::unix::fs::PermissionsExt;
        let tmp = tempfile::tempdir().unwrap();
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        let fresh = tmp.path().join("fresh");
        let path = save_setup(&fresh, &anthropic()).unwrap();
        assert_eq!(mode(&path), 0o600);
        assert_eq!(mode(&fresh), 0o700, "a created ROBOTA_HOME is private too");
        let path = user_settings_path(tmp.path());
        std::fs::write(&path, "{}").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        save_setup(tmp.path(), &anthropic()).unwrap();
        assert_eq!(mode(&path), 0o600);
    }
}
