//! The typed shape of the settings keys robota reads, used to check each file: a wrong
//! type is an error with the file, line and column; unknown keys are ignored (and logged
//! at debug level), as Claude Code does.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::Value;

/// A string, number or boolean: the types a settings `env` value may have.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum EnvValue {
    Text(String),
    Number(serde_json::Number),
    Bool(bool),
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
#[allow(dead_code)] // fields exist to check their types
pub struct PermissionsShape {
    pub allow: Option<Vec<String>>,
    pub ask: Option<Vec<String>>,
    pub deny: Option<Vec<String>>,
    pub default_mode: Option<String>,
    pub additional_directories: Option<Vec<String>>,
    pub disable_bypass_permissions_mode: Option<Value>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
#[allow(dead_code)]
pub struct ProfileShape {
    #[serde(rename = "type")]
    pub kind: Option<String>,
    pub model: Option<String>,
    pub api_key: Option<String>,
    #[serde(rename = "baseURL")]
    pub base_url: Option<String>,
    pub timeout: Option<u64>,
    pub options: Option<serde_json::Map<String, Value>>,
}

/// `autoCompactThreshold`: a share of the window, or `false` (off).
#[derive(Debug, Deserialize)]
#[serde(untagged)]
#[allow(dead_code)]
pub enum ThresholdShape {
    Share(f64),
    Flag(bool),
}

/// The keys robota reads, with their types.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
#[allow(dead_code)]
pub struct SettingsShape {
    pub permissions: Option<PermissionsShape>,
    pub env: Option<BTreeMap<String, EnvValue>>,
    pub model: Option<String>,
    pub hooks: Option<serde_json::Map<String, Value>>,
    pub providers: Option<BTreeMap<String, ProfileShape>>,
    pub current_provider: Option<String>,
    pub cleanup_period_days: Option<u64>,
    pub include_co_authored_by: Option<bool>,
    pub auto_compact_enabled: Option<bool>,
    pub auto_compact_threshold: Option<ThresholdShape>,
    pub verbose: Option<bool>,
    pub diagnostics: Option<bool>,
}

/// Keys robota knows (read by it or by a later part of it); others are logged as unknown.
pub const KNOWN_KEYS: &[&str] = &[
    "$schema",
    "permissions",
    "env",
    "model",
    "hooks",
    "providers",
    "currentProvider",
    "cleanupPeriodDays",
    "includeCoAuthoredBy",
    "autoCompactEnabled",
    "autoCompactThreshold",
    "verbose",
    "diagnostics",
    "enabledPlugins",
    "enableAllProjectMcpServers",
    "enabledMcpjsonServers",
    "disabledMcpjsonServers",
    "mcpServers",
    "statusLine",
    "outputStyle",
    "apiKeyHelper",
    "theme",
    "language",
    "editorMode",
    "sandbox",
    "extraKnownMarketplaces",
    "disableAllHooks",
    "webFetch",
    "webSearch",
];
