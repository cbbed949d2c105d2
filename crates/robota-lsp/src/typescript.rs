//! What typescript-language-server needs in its initialization options to serve a batch
//! client, added unless the user's options say otherwise:
//! - A TypeScript to drive: the project's own (`node_modules/typescript`), else
//!   `tsserver.path`. A server installed with TypeScript beside it (`npm i -g typescript
//!   typescript-language-server`, or both in one prefix) does not find that one by itself,
//!   so robota names it.
//! - `tsserver.useSyntaxServer: "never"`: by default, until the project has loaded, the
//!   server answers from a syntax-only process — a definition across files comes back as
//!   the import line, or empty. An editor asks again as the user moves; the model asks
//!   once, so it waits for the project instead.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::config::{LspServerConfig, find_on_path};

/// The program's file name.
const PROGRAM: &str = "typescript-language-server";

/// `config`'s initialization options, with what typescript-language-server needs added
/// when it is that server: `tsserver.useSyntaxServer`, and `tsserver.path` when `root` has
/// no TypeScript of its own and one is installed beside the server.
pub(crate) fn initialization_options(
    config: &LspServerConfig,
    root: &Path,
    path_var: Option<&std::ffi::OsStr>,
) -> Option<Value> {
    let options = config.initialization_options.clone();
    let is_tsls = Path::new(&config.command)
        .file_name()
        .is_some_and(|n| n == PROGRAM);
    if !is_tsls {
        return options;
    }
    let mut options = match options {
        Some(Value::Object(map)) => map,
        // Options that are not an object are the user's business.
        Some(other) => return Some(other),
        None => serde_json::Map::new(),
    };
    let tsserver = options.entry("tsserver").or_insert_with(|| json!({}));
    let Some(tsserver) = tsserver.as_object_mut() else {
        return Some(Value::Object(options));
    };
    tsserver
        .entry("useSyntaxServer")
        .or_insert_with(|| json!("never"));
    if !tsserver.contains_key("path") && !root.join("node_modules/typescript").is_dir() {
        let beside = find_on_path(&config.command, path_var).and_then(|p| typescript_beside(&p));
        if let Some(lib) = beside {
            tsserver.insert("path".into(), json!(lib));
        }
    }
    Some(Value::Object(options))
}

/// `typescript/lib` in the `node_modules` that holds the server `program` (followed
/// through its `.bin` link).
fn typescript_beside(program: &Path) -> Option<PathBuf> {
    let real = std::fs::canonicalize(program).ok()?;
    let modules = real.ancestors().find(|a| a.ends_with("node_modules"))?;
    let lib = modules.join("typescript/lib");
    lib.join("tsserver.js").is_file().then_some(lib)
}

// The tests run real programs through `/bin/sh` and Unix file modes.
#[cfg(test)]
#[cfg(unix)]
mod tests {
    use super::*;

    /// A prefix with the server's package, its `.bin` link and TypeScript beside it.
    fn install(prefix: &Path, with_typescript: bool) -> PathBuf {
        use std::os::unix::fs::PermissionsExt;
        let modules = prefix.join("node_modules");
        let cli = modules.join("typescript-language-server/lib/cli.mjs");
        std::fs::create_dir_all(cli.parent().unwrap()).unwrap();
        std::fs::write(&cli, "#!/usr/bin/env node\n").unwrap();
        std::fs::set_permissions(&cli, std::fs::Permissions::from_mode(0o755)).unwrap();
        std::fs::create_dir_all(modules.join(".bin")).unwrap();
        let bin = modules.join(".bin").join(PROGRAM);
        std::os::unix::fs::symlink("../typescript-language-server/lib/cli.mjs", &bin).unwrap();
        if with_typescript {
            std::fs::create_dir_all(modules.join("typescript/lib")).unwrap();
            std::fs::write(modules.join("typescript/lib/tsserver.js"), "").unwrap();
        }
        bin
    }

    fn config(command: &Path, options: Option<Value>) -> LspServerConfig {
        LspServerConfig {
            command: command.display().to_string(),
            initialization_options: options,
            ..LspServerConfig::default()
        }
    }

    #[test]
    fn the_typescript_beside_the_server_is_named_unless_the_project_or_options_have_one() {
        let tmp = tempfile::tempdir().unwrap();
        let bin = install(&tmp.path().join("prefix"), true);
        let root = tmp.path().join("project");
        std::fs::create_dir_all(&root).unwrap();
        let lib = tmp.path().join("prefix/node_modules/typescript/lib");
        let lib = std::fs::canonicalize(lib).unwrap();

        let found = initialization_options(&config(&bin, Some(json!({"a": 1}))), &root, None);
        let added = json!({"a": 1, "tsserver": {"useSyntaxServer": "never", "path": lib}});
        assert_eq!(found, Some(added));

        let own = json!({"tsserver": {"path": "/mine", "useSyntaxServer": "auto"}});
        let kept = initialization_options(&config(&bin, Some(own.clone())), &root, None);
        assert_eq!(kept, Some(own));

        std::fs::create_dir_all(root.join("node_modules/typescript")).unwrap();
        let project_own = initialization_options(&config(&bin, None), &root, None);
        assert_eq!(
            project_own,
            Some(json!({"tsserver": {"useSyntaxServer": "never"}}))
        );
    }

    #[test]
    fn no_path_is_added_without_typescript_beside_it_and_nothing_for_another_server() {
        let tmp = tempfile::tempdir().unwrap();
        let bin = install(tmp.path(), false);
        let options = initialization_options(&config(&bin, None), tmp.path(), None);
        assert_eq!(
            options,
            Some(json!({"tsserver": {"useSyntaxServer": "never"}}))
        );
        let other = tmp.path().join("pyright-langserver");
        std::fs::write(&other, "").unwrap();
        assert_eq!(
            initialization_options(&config(&other, None), tmp.path(), None),
            None
        );
    }
}
