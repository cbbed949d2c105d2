//! "Yes, and don't ask again": the exact rule the user approved, added to the project's
//! `.robota/settings.local.json` (`permissions.allow`), keeping everything else in the file.
//! Written atomically (temp file + rename), so a crash leaves the old file or the new one;
//! that reading and writing is shared with the other settings writers (`setup_save`). The
//! file is kept out of `git status` (`git_exclude`).

use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};

/// The file "don't ask again" writes to.
pub(crate) fn local_settings_path(project_dir: &Path) -> PathBuf {
    project_dir.join(".robota").join("settings.local.json")
}

/// Adds `rule` to `permissions.allow` of the project's local settings; returns the file.
pub(crate) fn add_allow_rule(
    project_dir: &Path,
    rule: &str,
) -> Result<PathBuf, SettingsWriteError> {
    let path = local_settings_path(project_dir);
    let mut root = read_for_edit(&path)?;
    let shape_error = |what: &str| SettingsWriteError::Shape {
        path: path.clone(),
        what: what.to_string(),
    };
    let permissions = root
        .entry("permissions")
        .or_insert_with(|| json!({}))
        .as_object_mut()
        .ok_or_else(|| shape_error("\"permissions\" is not an object"))?;
    let allow = permissions
        .entry("allow")
        .or_insert_with(|| json!([]))
        .as_array_mut()
        .ok_or_else(|| shape_error("\"permissions.allow\" is not an array"))?;
    if !allow.iter().any(|r| r.as_str() == Some(rule)) {
        allow.push(json!(rule));
    }
    write_atomically(&path, &Value::Object(root), FileAccess::Shared)?;
    Ok(path)
}

/// Why a settings file could not be changed. The file is never left half-written: it
/// keeps its old content or gets the new one whole.
#[derive(Debug, thiserror::Error)]
pub enum SettingsWriteError {
    /// The file is not valid JSON.
    #[error("{}:{line}:{column}: malformed JSON, not changed: {message}", path.display())]
    Malformed {
        /// The settings file.
        path: PathBuf,
        /// The line of the parse error, from 1.
        line: usize,
        /// The column of the parse error, from 1.
        column: usize,
        /// The parser's message.
        message: String,
    },
    /// The file is JSON, but a value robota must change has the wrong shape.
    #[error("{}: {what}, not changed", path.display())]
    Shape {
        /// The settings file.
        path: PathBuf,
        /// What is wrong (`not a JSON object`, `"permissions" is not an object` …).
        what: String,
    },
    /// Reading, writing or replacing the file failed.
    #[error("cannot {action} {}: {source}", path.display())]
    Io {
        /// What was tried, as a verb phrase for the message.
        action: &'static str,
        /// The file (or its folder) it was tried on.
        path: PathBuf,
        /// The io error.
        #[source]
        source: std::io::Error,
    },
}

/// Who may read a written settings file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FileAccess {
    /// The process umask decides (project files others may share).
    Shared,
    /// Mode 0600 and a 0700 folder when created: the file may hold an API key.
    Private,
}

/// A settings file's top-level object, to be edited and written back: `{}` when the
/// file is missing or blank; an error naming the file, line and column when it is not a
/// JSON object (the caller must then leave it alone).
pub(crate) fn read_for_edit(path: &Path) -> Result<Map<String, Value>, SettingsWriteError> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Map::new()),
        Err(source) => {
            return Err(SettingsWriteError::Io {
                action: "read",
                path: path.to_path_buf(),
                source,
            });
        }
    };
    if text.trim().is_empty() {
        return Ok(Map::new());
    }
    match serde_json::from_str(&text) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(_) => Err(SettingsWriteError::Shape {
            path: path.to_path_buf(),
            what: "not a JSON object".to_string(),
        }),
        Err(e) => Err(SettingsWriteError::Malformed {
            path: path.to_path_buf(),
            line: e.line(),
            column: e.column(),
            message: e.to_string(),
        }),
    }
}

/// Writes `value` as pretty JSON to `path`, creating its folder: first to a temporary
/// file beside it, then renamed over it, so a crash leaves the old file or the new one.
/// A project's `.robota/settings.local.json` is kept out of `git status`.
pub(crate) fn write_atomically(
    path: &Path,
    value: &Value,
    access: FileAccess,
) -> Result<(), SettingsWriteError> {
    let io = |action: &'static str, at: &Path| {
        let path = at.to_path_buf();
        move |source| SettingsWriteError::Io {
            action,
            path,
            source,
        }
    };
    #[cfg(not(unix))]
    let _ = access;
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        let mut builder = std::fs::DirBuilder::new();
        builder.recursive(true);
        #[cfg(unix)]
        if access == FileAccess::Private {
            std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
        }
        builder
            .create(dir)
            .map_err(io("create the folder of", path))?;
    }
    let text = serde_json::to_string_pretty(value)
        .map_err(|e| io("encode", path)(std::io::Error::other(e)))?;
    let tmp = path.with_extension(format!("json.{}.tmp", std::process::id()));
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    if access == FileAccess::Private {
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    }
    let written = options.open(&tmp).and_then(|mut file| {
        #[cfg(unix)]
        if access == FileAccess::Private {
            // A temp file left by a crashed run keeps its old mode: set it again.
            use std::os::unix::fs::PermissionsExt;
            file.set_permissions(std::fs::Permissions::from_mode(0o600))?;
        }
        std::io::Write::write_all(&mut file, format!("{text}\n").as_bytes())?;
        file.sync_all()
    });
    if let Err(source) = written {
        let _ = std::fs::remove_file(&tmp);
        return Err(io("write", path)(source));
    }
    std::fs::rename(&tmp, path).map_err(|source| {
        let _ = std::fs::remove_file(&tmp);
        io("replace", path)(source)
    })?;
    if path.ends_with(".robota/settings.local.json") {
        super::git_exclude::exclude_from_git(path);
    }
    Ok(())
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
        let err = add_allow_rule(dir.path(), "Read").unwrap_err();
        assert!(
            matches!(&err, SettingsWriteError::Malformed { path: p, .. } if *p == path),
            "{err}"
        );
        assert!(
            err.to_string().contains("malformed JSON, not changed"),
            "{err}"
        );
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "{ nope");
    }
}
