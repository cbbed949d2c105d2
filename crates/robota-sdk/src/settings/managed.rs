//! Managed settings: the policy a company's administrators put in `managed-settings.json`
//! at a system path (Linux `/etc/claude-code/` then `/etc/robota/`; macOS
//! `/Library/Application Support/ClaudeCode/` then `/Library/Application Support/robota/`;
//! `ROBOTA_MANAGED_SETTINGS_DIR` replaces them, for tests and unusual installs). Their
//! layers merge above every other, so no user, project, local file or `--settings` can
//! override a value they set; this module also owns what they restrict further: hooks and
//! permission rules from managed files only (`allowManagedHooksOnly`,
//! `allowManagedPermissionRulesOnly`), `disableBypassPermissionsMode`, project MCP servers
//! (`enableAllProjectMcpServers: false`) and the MCP allow and deny lists.

use std::path::PathBuf;

use robota_tools::mcp::McpServerConfig;

use super::model::{McpServerEntry, SettingsModel};
use super::{Layer, Scope, Settings};

/// The variable naming the one directory managed settings are read from instead of the
/// system paths.
pub const MANAGED_DIR_VARIABLE: &str = "ROBOTA_MANAGED_SETTINGS_DIR";

/// The managed settings files, lowest first (robota's own above Claude Code's).
pub fn managed_files() -> Vec<PathBuf> {
    const FILE: &str = "managed-settings.json";
    if let Some(dir) = std::env::var_os(MANAGED_DIR_VARIABLE).filter(|d| !d.is_empty()) {
        return vec![PathBuf::from(dir).join(FILE)];
    }
    let dirs: &[&str] = if cfg!(target_os = "macos") {
        &[
            "/Library/Application Support/ClaudeCode",
            "/Library/Application Support/robota",
        ]
    } else if cfg!(windows) {
        &["C:\\Program Files\\ClaudeCode", "C:\\Program Files\\robota"]
    } else {
        &["/etc/claude-code", "/etc/robota"]
    };
    dirs.iter().map(|d| PathBuf::from(d).join(FILE)).collect()
}

/// Applies the managed files' restrictions to the other layers before they merge: with
/// `allowManagedHooksOnly` their hooks go, with `allowManagedPermissionRulesOnly` their
/// permission rules. Returns what was dropped, for `robota config`.
pub(super) fn restrict_other_layers(layers: &mut [Layer]) -> Vec<String> {
    let managed = |pick: fn(&SettingsModel) -> Option<bool>| {
        layers
            .iter()
            .any(|l| l.scope == Scope::Managed && pick(&l.model) == Some(true))
    };
    let hooks_only = managed(|m| m.allow_managed_hooks_only);
    let rules_only = managed(|m| m.allow_managed_permission_rules_only);
    let mut dropped = Vec::new();
    for layer in layers.iter_mut().filter(|l| l.scope != Scope::Managed) {
        let Some(map) = layer.value.as_object_mut() else {
            continue;
        };
        let mut changed = false;
        if hooks_only && map.remove("hooks").is_some() {
            dropped.push(format!(
                "hooks in {} (allowManagedHooksOnly in managed settings)",
                layer.label
            ));
            changed = true;
        }
        if rules_only && let Some(permissions) = map.get_mut("permissions") {
            for list in ["allow", "ask", "deny"] {
                if permissions
                    .as_object_mut()
                    .and_then(|p| p.remove(list))
                    .is_some()
                {
                    dropped.push(format!(
                        "permissions.{list} in {} (allowManagedPermissionRulesOnly in managed settings)",
                        layer.label
                    ));
                    changed = true;
                }
            }
        }
        if changed {
            layer.read_model();
        }
    }
    dropped
}

impl Settings {
    /// The managed layers, lowest first.
    pub fn managed_layers(&self) -> impl Iterator<Item = &Layer> {
        self.layers.iter().filter(|l| l.scope == Scope::Managed)
    }

    /// The first managed file that sets `pick` to true.
    fn managed_switch(&self, pick: fn(&SettingsModel) -> Option<bool>) -> Option<&str> {
        self.managed_layers()
            .filter(|l| pick(&l.model) == Some(true))
            .map(|l| l.label.as_str())
            .last()
    }

    /// With `allowManagedHooksOnly`, the managed file that says so: plugins' hooks and
    /// every other file's are not run.
    pub fn managed_hooks_only(&self) -> Option<&str> {
        self.managed_switch(|m| m.allow_managed_hooks_only)
    }

    /// With `allowManagedPermissionRulesOnly`, the managed file that says so: permission
    /// rules from other files and the command line are ignored.
    pub fn managed_permission_rules_only(&self) -> Option<&str> {
        self.managed_switch(|m| m.allow_managed_permission_rules_only)
    }

    /// Why `bypassPermissions` may not be used, when `disableBypassPermissionsMode` is
    /// `"disable"` in any file (the file is named).
    pub fn bypass_refusal(&self) -> Option<String> {
        let disabled = self
            .values
            .permissions
            .disable_bypass_permissions_mode
            .as_ref()
            .and_then(|v| v.as_str())
            == Some("disable");
        disabled.then(|| {
            let file = self
                .source_of("/permissions/disableBypassPermissionsMode")
                .unwrap_or("settings");
            let managed = if self.managed_layers().any(|l| l.label == file) {
                "managed settings "
            } else {
                ""
            };
            format!(
                "bypassPermissions mode is disabled by {managed}{file} (permissions.disableBypassPermissionsMode: \"disable\")"
            )
        })
    }

    /// The `permissions.defaultMode` a managed file sets, with that file: the mode a
    /// session starts in, whatever the flags say.
    pub fn managed_default_mode(&self) -> Option<(&str, &str)> {
        self.managed_layers()
            .filter_map(|l| {
                let mode = l.model.permissions.default_mode.as_deref()?;
                Some((mode, l.label.as_str()))
            })
            .last()
    }

    /// With `enableAllProjectMcpServers: false` in managed settings, the file that says so:
    /// the project's `.mcp.json` servers are not started.
    pub fn managed_forbids_project_mcp(&self) -> Option<&str> {
        self.managed_layers()
            .filter(|l| l.model.enable_all_project_mcp_servers == Some(false))
            .map(|l| l.label.as_str())
            .last()
    }

    /// Why the MCP server `name` may not run, by `deniedMcpServers` (any file) or
    /// `allowedMcpServers` (the managed files' list when they set one, else the merged).
    pub fn mcp_server_refusal(
        &self,
        name: &str,
        config: Option<&McpServerConfig>,
    ) -> Option<String> {
        let matches = |e: &McpServerEntry| entry_matches(e, name, config);
        if self.values.denied_mcp_servers.iter().any(matches) {
            return Some(format!("MCP server {name:?} is in deniedMcpServers"));
        }
        let allowed = self
            .managed_layers()
            .filter_map(|l| l.model.allowed_mcp_servers.as_ref())
            .last()
            .or(self.values.allowed_mcp_servers.as_ref())?;
        (!allowed.iter().any(matches))
            .then(|| format!("MCP server {name:?} is not in allowedMcpServers"))
    }
}

/// Whether an allow or deny entry names this server: every field it sets must match.
fn entry_matches(entry: &McpServerEntry, name: &str, config: Option<&McpServerConfig>) -> bool {
    if entry.server_name.is_none() && entry.server_command.is_none() && entry.server_url.is_none() {
        return false;
    }
    let name_ok = entry.server_name.as_deref().is_none_or(|n| n == name);
    let command_ok = entry.server_command.as_ref().is_none_or(|wanted| {
        matches!(config, Some(McpServerConfig::Stdio { command, args, .. })
            if std::iter::once(command).chain(args).eq(wanted.iter()))
    });
    let url_ok = entry
        .server_url
        .as_deref()
        .is_none_or(|pattern| match config {
            Some(McpServerConfig::Http { url, .. } | McpServerConfig::Sse { url, .. }) => {
                url_matches(pattern, url)
            }
            _ => false,
        });
    name_ok && command_ok && url_ok
}

/// A URL pattern where `*` matches any run of characters.
fn url_matches(pattern: &str, url: &str) -> bool {
    let parts: Vec<&str> = pattern.split('*').collect();
    if parts.len() == 1 {
        return pattern == url;
    }
    let (first, last) = (parts[0], parts[parts.len() - 1]);
    if !url.starts_with(first) || !url[first.len()..].ends_with(last) {
        return false;
    }
    let mut rest = &url[first.len()..url.len() - last.len()];
    for middle in &parts[1..parts.len() - 1] {
        match rest.find(middle) {
            Some(at) => rest = &rest[at + middle.len()..],
            None => return false,
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn url_patterns_match_with_stars() {
        assert!(url_matches("https://mcp.corp/*", "https://mcp.corp/github"));
        assert!(url_matches("https://*.corp/mcp", "https://a.b.corp/mcp"));
        assert!(!url_matches("https://mcp.corp/*", "https://evil.com/x"));
        assert!(url_matches("https://x/y", "https://x/y"));
    }

    #[test]
    fn an_entry_names_a_server_by_name_command_or_url() {
        let stdio = McpServerConfig::Stdio {
            command: "npx".into(),
            args: vec!["srv".into()],
            env: Default::default(),
        };
        let by_name = McpServerEntry {
            server_name: Some("github".into()),
            ..Default::default()
        };
        assert!(entry_matches(&by_name, "github", Some(&stdio)));
        assert!(!entry_matches(&by_name, "other", Some(&stdio)));
        let by_command = McpServerEntry {
            server_command: Some(vec!["npx".into(), "srv".into()]),
            ..Default::default()
        };
        assert!(entry_matches(&by_command, "any", Some(&stdio)));
        assert!(!entry_matches(
            &McpServerEntry::default(),
            "any",
            Some(&stdio)
        ));
    }
}
