//! A plugin's language servers: `.lsp.json` at its root, the files its manifest's
//! `lspServers` names, and an inline `lspServers` object — each a map of server name to
//! entry in Claude Code's format, `${CLAUDE_PLUGIN_ROOT}` expanded. Entries are read when
//! the session assembles its servers, so one bad entry is reported alone.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::load::{Plugin, expand_var, read_json};
use super::manifest::{ComponentPaths, Manifest};

/// Adds the servers of `.lsp.json`, of `files` (the manifest's paths) and of the manifest's
/// inline `lspServers` to `plugin`; a later entry of the same name replaces an earlier one.
pub(super) fn add_lsp_servers(
    plugin: &mut Plugin,
    manifest: &Manifest,
    manifest_path: &Path,
    files: Vec<PathBuf>,
    warnings: &mut Vec<String>,
) {
    let default_file = plugin.root.join(".lsp.json");
    let mut sources: Vec<(Value, PathBuf)> = Vec::new();
    for file in std::iter::once(default_file)
        .filter(|f| f.is_file())
        .chain(files)
    {
        if let Some(value) = read_json(&file, warnings) {
            sources.push((value, file));
        }
    }
    if let Some(ComponentPaths::Inline(value)) = &manifest.lsp_servers {
        sources.push((value.clone(), manifest_path.to_path_buf()));
    }
    let root = plugin.root.to_string_lossy().into_owned();
    for (value, file) in sources {
        let map = value.get("lspServers").unwrap_or(&value);
        let Some(map) = map.as_object() else {
            warnings.push(format!(
                "{}: language servers must be an object of name → server; skipped",
                file.display()
            ));
            continue;
        };
        for (name, entry) in map {
            let mut entry = entry.clone();
            expand_var(&mut entry, "${CLAUDE_PLUGIN_ROOT}", &root);
            plugin.lsp_servers.retain(|(n, _)| n != name);
            plugin.lsp_servers.push((name.clone(), entry));
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::plugins::load::load_plugin;

    #[test]
    fn lsp_json_and_inline_entries_load_with_the_root_expanded() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("py");
        std::fs::create_dir_all(root.join(".claude-plugin")).unwrap();
        std::fs::write(
            root.join(".claude-plugin/plugin.json"),
            r#"{"name": "py", "lspServers": {"ty": {"command": "ty", "extensionToLanguage": {".py": "python"}}}}"#,
        )
        .unwrap();
        std::fs::write(
            root.join(".lsp.json"),
            r#"{"pyright": {"command": "${CLAUDE_PLUGIN_ROOT}/bin/pyright", "args": ["--stdio"]}}"#,
        )
        .unwrap();
        let mut warnings = Vec::new();
        let plugin = load_plugin(&root, "test", &mut warnings).unwrap();
        assert!(warnings.is_empty(), "{warnings:?}");
        let names: Vec<&str> = plugin.lsp_servers.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["pyright", "ty"]);
        let command = plugin.lsp_servers[0].1["command"].as_str().unwrap();
        assert_eq!(command, format!("{}/bin/pyright", root.display()));
    }
}
