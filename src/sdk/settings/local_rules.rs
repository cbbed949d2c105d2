//! "Yes, and don't ask again": the exact rule the user approved, added to the project's
//! `.robota/settings.local.json` (`permissions.allow`), keeping everything else in the file.
//! Written atomically (temp file + rename), so a crash leaves the old file or the new one.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::SettingsError;

/// The file "don't ask again" writes to.
pub fn local_settings_path(project_dir: &Path) -> PathBuf {
    project_dir.join(".robota").join("settings.local.json")
}

/// Adds `rule` to `permissions.allow` of the project's local settings; returns the file.
pub fn add_allow_rule(project_dir: &Path, rule: &str) -> Result<PathBuf, SettingsError> {
    let path = local_settings_path(project_dir);
    let fail = |what: &str, e: &dyn std::fmt::Display| {
        SettingsError(format!("cannot {what} {}: {e}", path.display()))
    };
    let mut value: Value = match std::fs::read_to_string(&path) {
        Ok(text) if !text.trim().is_empty() => serde_json::from_str(&text).map_err(|e| {
            SettingsError(format!(
                "{}:{}:{}: malformed JSON, not changed: {e}",
                path.display(),
                e.line(),
                e.column()
            ))
        })?,
        Ok(_) => json!({}),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => json!({}),
        Err(e) => return Err(fail("read", &e)),
    };
    let root = value
        .as_object_mut()
        .ok_or_else(|| SettingsError(format!("{} is not a JSON object", path.display())))?;
    let permissions = root
        .entry("permissions")
        .or_insert_with(|| json!({}))
        .as_object_mut()
        .ok_or_else(|| {
            SettingsError(format!(
                "{}: \"permissions\" is not an object",
                path.display()
            ))
        })?;
    let allow = permissions
        .entry("allow")
        .or_insert_with(|| json!([]))
        .as_array_mut()
        .ok_or_else(|| {
            SettingsError(format!(
                "{}: \"permissions.allow\" is not an array",
                path.display()
            ))
        })?;
    if !allow.iter().any(|r| r.as_str() == Some(rule)) {
        allow.push(json!(rule));
    }
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| fail("create the folder of", &e))?;
    }
    let text = serde_json::to_string_pretty(&value).map_err(|e| fail("encode", &e))?;
    let tmp = path.with_extension(format!("json.{}.tmp", std::process::id()));
    std::fs::write(&tmp, text + "\n").map_err(|e| fail("write", &e))?;
    std::fs::rename(&tmp, &path).map_err(|e| fail("replace", &e))?;
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules_are_added_once_and_other_keys_kept() {
        let dir = tempfile::tempdir().unwrap();
        let path = add_allow_rule(dir.path(), "Bash(npm test)").unwrap();
        add_allow_rule(dir.path(), "Bash(npm test)").unwrap();
        let mut v: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(v, json!({"permissions": {"allow": ["Bash(npm test)"]}}));
        v["model"] = json!("m");
        v["permissions"]["deny"] = json!(["Bash(rm *)"]);
        std::fs::write(&path, v.to_string()).unwrap();
        add_allow_rule(dir.path(), "Edit(src/a.rs)").unwrap();
        let v: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(
            v,
            json!({"model": "m", "permissions": {"allow": ["Bash(npm test)", "Edit(src/a.rs)"], "deny": ["Bash(rm *)"]}})
        );
        assert_eq!(
            std::fs::read_dir(path.parent().unwrap()).unwrap().count(),
            1,
            "no temp files left"
        );
    }

    #[test]
    fn a_malformed_file_is_left_alone_with_a_clear_error() {
        let dir = tempfile::tempdir().unwrap();
        let path = local_settings_path(dir.path());
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, "{ nope").unwrap();
        let err = add_allow_rule(dir.path(), "Read").unwrap_err().0;
        assert!(err.contains("malformed JSON, not changed"), "{err}");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "{ nope");
    }
}
