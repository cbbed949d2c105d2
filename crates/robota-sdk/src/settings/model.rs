//! The one typed model of a settings file — Claude Code's keys and robota's own. Each file
//! is read into it (a wrong type is an error naming the file, line and column), the merged
//! layers are read into it once more, and every consumer reads its fields. Keys the model
//! does not name are collected with their file, to be reported once. A few values stay
//! JSON on purpose: `hooks`, `mcpServers`, `lspServers` and `extraKnownMarketplaces` are read entry by
//! entry by their own parsers, so one bad entry is reported while the rest still work.

use std::collections::BTreeMap;

use robota_core::permission::SandboxSection;
use robota_lsp::LspSection;
use robota_tools::{WebFetchSection, WebSearchSection};
use serde::{Deserialize, Deserializer};
use serde_json::{Map, Value};

/// Every settings key robota reads, with its type.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct SettingsModel {
    /// `$schema`: the JSON schema editors check the file with.
    #[serde(rename = "$schema")]
    pub schema: Option<String>,
    /// `permissions`: rules, the default mode, more directories.
    pub(crate) permissions: PermissionsSection,
    /// `env`: variables for tool and hook processes (and provider keys).
    pub(crate) env: BTreeMap<String, EnvValue>,
    /// `subprocessEnv`: what of robota's own environment its child processes get.
    pub subprocess_env: SubprocessEnvSection,
    /// `model`: the model to use.
    pub model: Option<String>,
    /// `hooks`: event name → matcher groups (read by the hook configuration, entry by entry).
    pub hooks: Option<Map<String, Value>>,
    /// `disableAllHooks`.
    pub disable_all_hooks: Option<bool>,
    /// `allowManagedHooksOnly` (read from managed settings only): hooks of every other
    /// file and of plugins are ignored.
    pub allow_managed_hooks_only: Option<bool>,
    /// `allowManagedPermissionRulesOnly` (read from managed settings only): permission
    /// rules of every other file and of the command line are ignored.
    pub allow_managed_permission_rules_only: Option<bool>,
    /// `allowedMcpServers`: when set, only the MCP servers one of these entries names run.
    pub allowed_mcp_servers: Option<Vec<McpServerEntry>>,
    /// `deniedMcpServers`: MCP servers that never run, whatever configures them.
    pub denied_mcp_servers: Vec<McpServerEntry>,
    /// `providers`: robota's named provider profiles.
    pub providers: BTreeMap<String, ProviderProfile>,
    /// `currentProvider`: the profile in use.
    pub current_provider: Option<String>,
    /// `cleanupPeriodDays`: session logs older than this are removed.
    pub cleanup_period_days: Option<u64>,
    /// `includeCoAuthoredBy`.
    pub include_co_authored_by: Option<bool>,
    /// `autoCompactEnabled`.
    pub auto_compact_enabled: Option<bool>,
    /// `autoCompactThreshold`: a share of the context window, or `false`.
    pub(crate) auto_compact_threshold: Option<Threshold>,
    /// `verbose`.
    pub verbose: Option<bool>,
    /// `diagnostics`: replay-grade diagnostics in the session's diagnostics log.
    pub diagnostics: Option<bool>,
    /// `enabledPlugins`: `name@marketplace` → on or off.
    pub enabled_plugins: BTreeMap<String, bool>,
    /// `enableAllProjectMcpServers`: every `.mcp.json` server of a trusted project.
    pub enable_all_project_mcp_servers: Option<bool>,
    /// `enabledMcpjsonServers`: the `.mcp.json` servers to use (unset: all).
    pub enabled_mcpjson_servers: Option<Vec<String>>,
    /// `disabledMcpjsonServers`: the `.mcp.json` servers not to use.
    pub disabled_mcpjson_servers: Vec<String>,
    /// `mcpServers`: name → server (each read by the MCP configuration, one at a time).
    pub mcp_servers: Option<Map<String, Value>>,
    /// `lspServers`: name → language server, in Claude Code's plugin format (each read
    /// by the language-server configuration, one at a time).
    pub lsp_servers: Option<Map<String, Value>>,
    /// `lsp`: robota's language-server settings (diagnostics after edits, their wait, the
    /// built-in servers).
    pub lsp: LspSection,
    /// `statusLine`: a command whose output is the status line.
    pub status_line: Option<StatusLineSection>,
    /// `outputStyle`: the output style's name.
    pub output_style: Option<String>,
    /// `apiKeyHelper`: a command that prints the API key.
    pub api_key_helper: Option<String>,
    /// `theme`.
    pub theme: Option<String>,
    /// `language`: the language answers are written in.
    pub language: Option<String>,
    /// `editorMode`: `"vim"` for vim key bindings in the composer.
    pub editor_mode: Option<String>,
    /// `sandbox`: the Bash sandbox.
    pub sandbox: Option<SandboxSection>,
    /// `extraKnownMarketplaces`: name → marketplace (each read by the plugin catalog).
    pub extra_known_marketplaces: BTreeMap<String, Value>,
    /// `webFetch`.
    pub web_fetch: WebFetchSection,
    /// `webSearch`: the search backend behind WebSearch.
    pub web_search: Option<WebSearchSection>,
    /// `exitTranscript`: what stays in the scrollback on leaving (`true`/`"conversation"`,
    /// `false`/`"none"`, or the last answer).
    pub exit_transcript: Option<FlagOrName>,
    /// `notifications`: how a finished turn is announced (`"osc9"`, `"bell"`, `false`).
    pub notifications: Option<FlagOrName>,
    /// `preferredNotifChannel`: Claude Code's name for `notifications`.
    pub preferred_notif_channel: Option<String>,
    /// `maxTurnSeconds`: a headless turn (`-p`) that runs longer than this is stopped and
    /// ends with an error result naming what it waited on (`--max-turn-seconds`; 0: none).
    pub max_turn_seconds: Option<u64>,
}

/// `permissions`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub(crate) struct PermissionsSection {
    /// `allow` rules.
    pub allow: Vec<String>,
    /// `ask` rules.
    pub ask: Vec<String>,
    /// `deny` rules.
    pub deny: Vec<String>,
    /// `defaultMode`: the permission mode a session starts in.
    pub default_mode: Option<String>,
    /// `additionalDirectories`: more working directories.
    pub additional_directories: Vec<String>,
    /// `disableBypassPermissionsMode` (`"disable"`).
    pub disable_bypass_permissions_mode: Option<Value>,
}

/// One of `providers`: a provider and how to reach it.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ProviderProfile {
    /// `type`: `anthropic` (the default), `openai`, `openai-compatible`, `google`.
    #[serde(rename = "type")]
    pub kind: Option<String>,
    /// `model`.
    pub model: Option<String>,
    /// `apiKey`.
    pub api_key: Option<String>,
    /// `baseURL`.
    #[serde(rename = "baseURL")]
    pub base_url: Option<String>,
    /// `timeout`: milliseconds a stream may stay idle.
    pub timeout: Option<u64>,
    /// `options`: provider-specific request options.
    pub options: Map<String, Value>,
}

/// One entry of `allowedMcpServers`/`deniedMcpServers`: a server by its name, its command
/// line or its URL (Claude Code's `serverName`, `serverCommand`, `serverUrl`; a `*` in a
/// URL matches anything).
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct McpServerEntry {
    /// `serverName`: the name the server is configured under.
    pub server_name: Option<String>,
    /// `serverCommand`: the command and its arguments, exactly.
    pub server_command: Option<Vec<String>>,
    /// `serverUrl`: the URL of an HTTP or SSE server.
    pub server_url: Option<String>,
}

/// `subprocessEnv`: `{"passThrough": ["ANTHROPIC_API_KEY"]}`. The credentials robota uses
/// (provider keys and tokens) are kept out of the environment of Bash commands, hooks, MCP
/// servers, language servers and the status line; `passThrough` names the variables they
/// get all the same. Read from the user's, managed and `--settings` files only.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct SubprocessEnvSection {
    /// `passThrough`: variable names passed on although they carry a credential.
    pub pass_through: Vec<String>,
}

/// `statusLine`: `{"type": "command", "command": "…", "padding": 0}`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct StatusLineSection {
    /// `type` (only `"command"` is known).
    #[serde(rename = "type")]
    pub kind: Option<String>,
    /// `command`: run with the session's facts as JSON on stdin.
    pub command: Option<String>,
    /// `padding`: extra indent.
    pub padding: Option<u16>,
}

/// A string, number or boolean: the types a settings `env` value may have.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(untagged)]
pub(crate) enum EnvValue {
    /// A string.
    Text(String),
    /// A number, passed on as written.
    Number(serde_json::Number),
    /// `true` or `false`.
    Bool(bool),
}

impl EnvValue {
    /// The value as an environment variable holds it.
    pub(crate) fn to_env_text(&self) -> String {
        match self {
            EnvValue::Text(text) => text.clone(),
            EnvValue::Number(n) => n.to_string(),
            EnvValue::Bool(b) => b.to_string(),
        }
    }
}

/// `autoCompactThreshold`: a share of the window, or `false` (off).
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(untagged)]
pub(crate) enum Threshold {
    /// A share of the context window.
    Share(f64),
    /// `false`: off (`true` means the default).
    Flag(bool),
}

/// A setting that is either a switch or a name (`false` or `"bell"`).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(untagged)]
pub enum FlagOrName {
    /// `true` or `false`.
    Flag(bool),
    /// A name.
    Name(String),
}

/// A key of a settings file that the model does not name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct UnknownKey {
    /// The file (or `--settings`).
    pub file: String,
    /// The key's path, dotted (`sandbox.enableWeakerNestedSandbox`).
    pub key: String,
}

/// A value of the wrong type, with the dotted path of its key.
pub(crate) type ModelError<E> = serde_path_to_error::Error<E>;

/// Reads one settings file (or the merged value) into the model, collecting the keys it
/// does not name; a wrong type names its key's path.
pub(crate) fn read_model<'de, D: Deserializer<'de>>(
    input: D,
    file: &str,
    unknown: &mut Vec<UnknownKey>,
) -> Result<SettingsModel, ModelError<D::Error>> {
    let mut note = |path: serde_ignored::Path<'_>| {
        unknown.push(UnknownKey {
            file: file.to_string(),
            key: dotted(&path),
        })
    };
    let input = serde_ignored::Deserializer::new(input, &mut note);
    serde_path_to_error::deserialize(input)
}

/// A key's path as a user writes it: `sandbox.network.x`, `hooks.Stop[0]`.
fn dotted(path: &serde_ignored::Path<'_>) -> String {
    use serde_ignored::Path;
    match path {
        Path::Root => String::new(),
        Path::Seq { parent, index } => format!("{}[{index}]", dotted(parent)),
        Path::Map { parent, key } => match dotted(parent) {
            above if above.is_empty() => key.clone(),
            above => format!("{above}.{key}"),
        },
        Path::Some { parent }
        | Path::NewtypeStruct { parent }
        | Path::NewtypeVariant { parent } => dotted(parent),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn unknown_keys_are_named_with_their_path_and_known_ones_typed() {
        let mut unknown = Vec::new();
        let model = read_model(
            &json!({"model": "m", "permissions": {"allow": ["Read"], "extra": 1},
                    "sandbox": {"enabled": true, "enableWeakerNestedSandbox": false},
                    "feedbackSurveyState": {}, "env": {"N": 3, "B": true}}),
            "/p/.claude/settings.json",
            &mut unknown,
        )
        .unwrap();
        assert_eq!(model.model.as_deref(), Some("m"));
        assert_eq!(model.permissions.allow, ["Read"]);
        assert_eq!(model.env["N"].to_env_text(), "3");
        assert_eq!(model.env["B"].to_env_text(), "true");
        let keys: Vec<&str> = unknown.iter().map(|u| u.key.as_str()).collect();
        assert_eq!(
            keys,
            [
                "permissions.extra",
                "sandbox.enableWeakerNestedSandbox",
                "feedbackSurveyState"
            ]
        );
        assert!(unknown.iter().all(|u| u.file == "/p/.claude/settings.json"));
    }

    #[test]
    fn a_wrong_type_is_an_error_naming_the_key() {
        let mut unknown = Vec::new();
        for (value, key) in [
            (json!({"enabledPlugins": {"p@m": "yes"}}), "enabledPlugins"),
            (json!({"statusLine": "echo"}), "statusLine"),
            (json!({"webSearch": "brave"}), "webSearch"),
            (
                json!({"sandbox": {"excludedCommands": "docker"}}),
                "sandbox",
            ),
        ] {
            let error = read_model(&value, "f", &mut unknown).unwrap_err();
            assert!(error.path().to_string().starts_with(key), "{key}: {error}");
            assert!(
                error.inner().to_string().contains("invalid type"),
                "{error}"
            );
        }
    }
}
