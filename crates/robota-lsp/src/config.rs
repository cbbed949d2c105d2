//! What language servers there are: an entry of `lspServers` in the format Claude Code
//! plugins use (`command`, `args`, `extensionToLanguage`, `initializationOptions`, `env`, …),
//! robota's own `lsp` settings section (diagnostics after edits, their wait, the built-in
//! table), and the built-in table of common servers, each used only when its command is on
//! `PATH`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;
use serde_json::Value;

/// One language server, as `lspServers` (settings, a plugin's `.lsp.json` or
/// `plugin.json`) declares it. Unknown keys are ignored, as Claude Code does.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct LspServerConfig {
    /// The program to run (a name looked up on `PATH`, or a path).
    pub command: String,
    /// Its arguments (`["--stdio"]`).
    pub args: Vec<String>,
    /// File extension (with its dot, `.py`) → the language id the server is told.
    pub extension_to_language: BTreeMap<String, String>,
    /// `initializationOptions` of the `initialize` request.
    pub initialization_options: Option<Value>,
    /// Answers to the server's `workspace/configuration` requests and the body of a
    /// `workspace/didChangeConfiguration` sent after start.
    pub settings: Option<Value>,
    /// Extra environment of the server process.
    pub env: BTreeMap<String, String>,
    /// Milliseconds the server may take to answer `initialize` (default 10 s).
    pub startup_timeout: Option<u64>,
    /// How many times a server that crashed or hung is started again (default 3).
    pub max_restarts: Option<u32>,
}

impl LspServerConfig {
    /// The language id of `path` by its extension, if this server handles it.
    pub fn language_of(&self, path: &Path) -> Option<&str> {
        let extension = path.extension()?.to_str()?;
        self.extension_to_language
            .get(&format!(".{extension}"))
            .map(String::as_str)
    }

    /// How long `initialize` may take.
    pub fn startup_timeout(&self) -> Duration {
        Duration::from_millis(self.startup_timeout.unwrap_or(10_000))
    }
}

/// robota's `lsp` settings section.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct LspSection {
    /// `false`: no language servers at all (no LSP tool, no diagnostics).
    pub enabled: Option<bool>,
    /// `false`: Edit and Write do not report diagnostics.
    pub diagnostics: Option<bool>,
    /// Milliseconds an Edit or Write waits for fresh diagnostics (default 1000).
    pub diagnostics_timeout_ms: Option<u64>,
    /// Warnings reported after an edit at most (default 5; errors are all reported, up to 30).
    pub max_warnings: Option<usize>,
    /// `false`: only the servers `lspServers` names, not the built-in table.
    pub builtin_servers: Option<bool>,
    /// Milliseconds an LSP tool request may take (default 10 000).
    pub request_timeout_ms: Option<u64>,
}

impl LspSection {
    /// Whether language servers are used at all.
    pub fn enabled(&self) -> bool {
        self.enabled != Some(false)
    }

    /// How long an edit waits for diagnostics; `None` when diagnostics are off.
    pub fn diagnostics_wait(&self) -> Option<Duration> {
        (self.diagnostics != Some(false))
            .then(|| Duration::from_millis(self.diagnostics_timeout_ms.unwrap_or(1000)))
    }

    /// How long an LSP tool request may take.
    pub fn request_timeout(&self) -> Duration {
        Duration::from_millis(self.request_timeout_ms.unwrap_or(10_000))
    }
}

/// One server of the built-in table: name, command, arguments, and the extensions it
/// handles with their language ids.
type BuiltinServer = (
    &'static str,
    &'static str,
    &'static [&'static str],
    &'static [(&'static str, &'static str)],
);

/// The built-in table.
const BUILTIN: &[BuiltinServer] = &[
    ("rust-analyzer", "rust-analyzer", &[], &[(".rs", "rust")]),
    (
        "basedpyright",
        "basedpyright-langserver",
        &["--stdio"],
        &[(".py", "python"), (".pyi", "python")],
    ),
    (
        "pyright",
        "pyright-langserver",
        &["--stdio"],
        &[(".py", "python"), (".pyi", "python")],
    ),
    (
        "typescript",
        "typescript-language-server",
        &["--stdio"],
        &[
            (".ts", "typescript"),
            (".tsx", "typescriptreact"),
            (".mts", "typescript"),
            (".cts", "typescript"),
            (".js", "javascript"),
            (".jsx", "javascriptreact"),
            (".mjs", "javascript"),
            (".cjs", "javascript"),
        ],
    ),
    ("gopls", "gopls", &[], &[(".go", "go")]),
    (
        "clangd",
        "clangd",
        &[],
        &[
            (".c", "c"),
            (".h", "c"),
            (".cc", "cpp"),
            (".cpp", "cpp"),
            (".cxx", "cpp"),
            (".hpp", "cpp"),
            (".hh", "cpp"),
        ],
    ),
];

/// The servers of the built-in table whose command `path_var` (a `PATH` value) holds,
/// each under its name.
pub fn builtin_servers(path_var: Option<&std::ffi::OsStr>) -> Vec<(String, LspServerConfig)> {
    BUILTIN
        .iter()
        .filter(|(_, command, _, _)| find_on_path(command, path_var).is_some())
        .map(|(name, command, args, extensions)| {
            let config = LspServerConfig {
                command: command.to_string(),
                args: args.iter().map(|a| a.to_string()).collect(),
                extension_to_language: extensions
                    .iter()
                    .map(|(e, l)| (e.to_string(), l.to_string()))
                    .collect(),
                ..LspServerConfig::default()
            };
            (name.to_string(), config)
        })
        .collect()
}

/// Whether a file's permission bits let someone run it.
#[cfg(unix)]
fn is_executable(meta: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::PermissionsExt;
    meta.permissions().mode() & 0o111 != 0
}

/// Any file may be run (Windows has no execute bit).
#[cfg(not(unix))]
fn is_executable(_meta: &std::fs::Metadata) -> bool {
    true
}

/// Where `command` is: itself when it names a path, else the first executable file of
/// that name in `path_var`'s directories.
pub fn find_on_path(command: &str, path_var: Option<&std::ffi::OsStr>) -> Option<PathBuf> {
    let executable = |p: &Path| p.metadata().is_ok_and(|m| m.is_file() && is_executable(&m));
    if command.contains('/') {
        let path = PathBuf::from(command);
        return executable(&path).then_some(path);
    }
    std::env::split_paths(path_var?)
        .map(|dir| dir.join(command))
        .find(|p| executable(p))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_plugin_entry_reads_with_its_extensions_and_unknown_keys_are_ignored() {
        let entry = json!({"command": "pyright-langserver", "args": ["--stdio"],
            "extensionToLanguage": {".py": "python"}, "startupTimeout": 120000,
            "transport": "stdio", "restartOnCrash": true});
        let config: LspServerConfig = serde_json::from_value(entry).unwrap();
        assert_eq!(config.language_of(Path::new("/a/b.py")), Some("python"));
        assert_eq!(config.language_of(Path::new("/a/b.rs")), None);
        assert_eq!(config.startup_timeout(), Duration::from_secs(120));
    }

    #[cfg(unix)]
    #[test]
    fn the_builtin_table_keeps_only_servers_on_path() {
        let dir = tempfile::tempdir().unwrap();
        let gopls = dir.path().join("gopls");
        std::fs::write(&gopls, "#!/bin/sh\n").unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&gopls, std::fs::Permissions::from_mode(0o755)).unwrap();
        std::fs::write(dir.path().join("clangd"), "not executable").unwrap();
        let found = builtin_servers(Some(dir.path().as_os_str()));
        let names: Vec<&str> = found.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["gopls"]);
        assert!(builtin_servers(None).is_empty());
    }

    #[test]
    fn the_section_defaults_to_on_with_a_one_second_wait() {
        let section = LspSection::default();
        assert!(section.enabled());
        assert_eq!(section.diagnostics_wait(), Some(Duration::from_secs(1)));
        let off: LspSection = serde_json::from_value(json!({"diagnostics": false})).unwrap();
        assert_eq!(off.diagnostics_wait(), None);
    }
}
