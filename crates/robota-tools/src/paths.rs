//! Path handling shared by the file tools: resolving what the model wrote (relative,
//! `~/…`, with `.` and `..`) against the session's working directory into a clean absolute
//! path, and suggesting close names when a file is missing.

use std::path::{Component, Path, PathBuf};

/// Resolves `raw` against `cwd` (and `~` against `$HOME`), then removes `.` and `..`
/// lexically, so results always read as absolute paths.
pub fn resolve(cwd: &Path, raw: &str) -> PathBuf {
    let expanded = expand_home(raw);
    let joined = if expanded.is_absolute() {
        expanded
    } else {
        cwd.join(expanded)
    };
    normalize(&joined)
}

fn expand_home(raw: &str) -> PathBuf {
    let home = || std::env::var_os("HOME").map(PathBuf::from);
    if raw == "~" {
        if let Some(home) = home() {
            return home;
        }
    } else if let Some(rest) = raw.strip_prefix("~/")
        && let Some(home) = home()
    {
        return home.join(rest);
    }
    PathBuf::from(raw)
}

/// Removes `.` components and folds `..` into its parent, without touching the disk.
pub fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() {
                    out.push(component);
                }
            }
            other => out.push(other),
        }
    }
    if out.as_os_str().is_empty() {
        out.push(".");
    }
    out
}

/// Names in the missing file's directory that look like what was meant (different case,
/// a different extension, or a small typo). Cheap: one directory listing.
pub fn similar_names(missing: &Path) -> Vec<PathBuf> {
    let (Some(dir), Some(wanted)) = (missing.parent(), missing.file_name()) else {
        return Vec::new();
    };
    let wanted = wanted.to_string_lossy().to_lowercase();
    let wanted_stem = stem(&wanted);
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut found: Vec<(usize, PathBuf)> = entries
        .flatten()
        .take(5_000)
        .filter_map(|entry| {
            let name = entry.file_name().to_string_lossy().to_lowercase();
            let distance = if name == wanted {
                0
            } else if stem(&name) == wanted_stem {
                1
            } else {
                let d = edit_distance(&name, &wanted);
                if d > 2 || d * 3 > wanted.chars().count() {
                    return None;
                }
                d + 1
            };
            Some((distance, entry.path()))
        })
        .collect();
    found.sort();
    found.into_iter().take(3).map(|(_, p)| p).collect()
}

fn stem(name: &str) -> &str {
    match name.rfind('.') {
        Some(i) if i > 0 => &name[..i],
        _ => name,
    }
}

fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut previous: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut current = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            let substitution = previous[j] + usize::from(ca != *cb);
            current[j + 1] = substitution.min(previous[j + 1] + 1).min(current[j] + 1);
        }
        previous = current;
    }
    previous[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_paths_resolve_against_cwd_and_are_cleaned() {
        let cwd = Path::new("/work/repo");
        assert_eq!(
            resolve(cwd, "src/./a.rs"),
            PathBuf::from("/work/repo/src/a.rs")
        );
        assert_eq!(
            resolve(cwd, "../other/b.rs"),
            PathBuf::from("/work/other/b.rs")
        );
        assert_eq!(resolve(cwd, "/etc/hosts"), PathBuf::from("/etc/hosts"));
        assert_eq!(resolve(cwd, "."), PathBuf::from("/work/repo"));
    }

    #[test]
    fn close_names_are_suggested() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("config.toml"), "").unwrap();
        std::fs::write(dir.path().join("README.md"), "").unwrap();
        std::fs::write(dir.path().join("unrelated.txt"), "").unwrap();
        let by_ext = similar_names(&dir.path().join("config.json"));
        assert_eq!(by_ext, vec![dir.path().join("config.toml")]);
        let by_typo = similar_names(&dir.path().join("READNE.md"));
        assert_eq!(by_typo, vec![dir.path().join("README.md")]);
        assert!(similar_names(&dir.path().join("zzz.rs")).is_empty());
    }
}
