//! The language-server stage: the servers of the settings' `lspServers`, the plugins'
//! and the built-in table (only in a trusted directory, only those on `PATH`), the first
//! of a name winning; with any, Read, Edit and Write tell them about the files they touch
//! and the `LSP` tool is offered. No server starts here: each starts on the first file of
//! its language.

use std::sync::Arc;

use robota_core::Tool;
use robota_lsp::{LspManager, LspServerConfig, LspTool};

use super::{Discovery, ProjectOptions, ProjectPaths};
use crate::plugins::PluginSet;
use crate::settings::Settings;

/// The session's language servers, or `None` when there are none (or they are off).
pub(super) fn language_servers(
    paths: &ProjectPaths,
    settings: &Settings,
    options: &ProjectOptions,
    plugins: &PluginSet,
    warnings: &mut Vec<String>,
) -> Option<Arc<LspManager>> {
    let section = &settings.values.lsp;
    if !section.enabled() || options.discovery != Discovery::Full {
        return None;
    }
    let mut servers: Vec<(String, LspServerConfig)> = Vec::new();
    let mut add = |name: &str,
                   entry: &serde_json::Value,
                   source: &str,
                   warnings: &mut Vec<String>| {
        if servers.iter().any(|(n, _)| n == name) {
            return;
        }
        match serde_json::from_value::<LspServerConfig>(entry.clone()) {
            Ok(config) if !config.command.is_empty() => servers.push((name.to_string(), config)),
            Ok(_) => warnings.push(format!(
                "language server {name} ({source}) has no `command`; it is not used"
            )),
            Err(error) => warnings.push(format!(
                "language server {name} ({source}) is not usable: {error}"
            )),
        }
    };
    for (name, entry) in settings.values.lsp_servers.iter().flatten() {
        add(name, entry, "lspServers", warnings);
    }
    for plugin in &plugins.plugins {
        let source = format!("plugin {}", plugin.name);
        for (name, entry) in &plugin.lsp_servers {
            add(name, entry, &source, warnings);
        }
    }
    if settings.trusted && section.builtin_servers != Some(false) {
        let path_var = std::env::var_os("PATH");
        for (name, config) in robota_lsp::builtin_servers(path_var.as_deref()) {
            let covered = servers.iter().any(|(n, c)| {
                *n == name
                    || c.extension_to_language
                        .keys()
                        .any(|e| config.extension_to_language.contains_key(e))
            });
            if !covered {
                servers.push((name, config));
            }
        }
    }
    if servers.is_empty() {
        return None;
    }
    let env = super::toolset::session_env(settings, options);
    Some(Arc::new(LspManager::new(
        servers,
        section.clone(),
        paths.cwd.clone(),
        env,
    )))
}

/// `tools` with Read, Edit and Write telling `lsp` about their files, and the `LSP` tool.
pub(super) fn with_lsp(tools: Vec<Arc<dyn Tool>>, lsp: &Arc<LspManager>) -> Vec<Arc<dyn Tool>> {
    let mut tools = robota_lsp::with_language_servers(tools, lsp);
    tools.push(Arc::new(LspTool::new(lsp.clone())));
    tools
}
