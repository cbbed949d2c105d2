//! Choosing and building the provider: the `currentProvider` profile of
//! `$ROBOTA_HOME/settings.json` when there is one, else the environment
//! (`ANTHROPIC_API_KEY`, `ANTHROPIC_BASE_URL`, `ANTHROPIC_MODEL`). Retry and timeout knobs
//! come from `ROBOTA_MAX_RETRIES`, `ROBOTA_RETRY_BASE_MS` and `ROBOTA_STREAM_IDLE_TIMEOUT_MS`.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

use crate::core::Provider;
use crate::providers::anthropic::{AnthropicConfig, AnthropicProvider};
use crate::providers::retry::RetryPolicy;

/// The model used when neither flag, profile nor environment names one.
pub const DEFAULT_ANTHROPIC_MODEL: &str = "claude-sonnet-4-6";
const DEFAULT_ANTHROPIC_BASE: &str = "https://api.anthropic.com";

/// A built provider and what was chosen.
pub struct ProviderChoice {
    pub provider: Arc<dyn Provider>,
    pub model: String,
    /// Where the key came from, for the init message (`ANTHROPIC_API_KEY`, `settings`…).
    pub api_key_source: String,
}

/// One profile from settings.
#[derive(Debug, Clone, Default, PartialEq)]
struct Profile {
    kind: String,
    model: Option<String>,
    api_key: Option<String>,
    base_url: Option<String>,
    timeout: Option<Duration>,
}

pub fn choose(model_flag: Option<&str>, robota_home: &Path) -> Result<ProviderChoice, String> {
    let profile = current_profile(&robota_home.join("settings.json"))?;
    let env = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
    let (kind, api_key, source, base_url, model, timeout) = match profile {
        Some((name, profile)) => {
            let key = profile.api_key.clone().or_else(|| env("ANTHROPIC_API_KEY"));
            (
                profile.kind.clone(),
                key,
                format!("settings profile {name}"),
                profile.base_url.clone(),
                profile.model.clone(),
                profile.timeout,
            )
        }
        None => (
            "anthropic".to_string(),
            env("ANTHROPIC_API_KEY"),
            "ANTHROPIC_API_KEY".to_string(),
            env("ANTHROPIC_BASE_URL"),
            env("ANTHROPIC_MODEL"),
            None,
        ),
    };
    if kind != "anthropic" {
        return Err(format!(
            "provider type {kind:?} is not supported by this build yet; use an \"anthropic\" profile or set ANTHROPIC_API_KEY"
        ));
    }
    let api_key = api_key.ok_or_else(|| {
        "no provider is configured: set ANTHROPIC_API_KEY (and optionally ANTHROPIC_BASE_URL), or add a provider profile to ~/.robota/settings.json".to_string()
    })?;
    let model = model_flag
        .map(str::to_string)
        .or(model)
        .unwrap_or_else(|| DEFAULT_ANTHROPIC_MODEL.to_string());
    let mut retry = RetryPolicy::default();
    if let Some(n) = env("ROBOTA_MAX_RETRIES").and_then(|v| v.parse().ok()) {
        retry.max_retries = n;
    }
    if let Some(ms) = env("ROBOTA_RETRY_BASE_MS").and_then(|v| v.parse().ok()) {
        retry.base_delay = Duration::from_millis(ms);
    }
    let idle_timeout = env("ROBOTA_STREAM_IDLE_TIMEOUT_MS")
        .and_then(|v| v.parse().ok())
        .map(Duration::from_millis)
        .or(timeout)
        .unwrap_or(Duration::from_secs(120));
    let provider = AnthropicProvider::new(AnthropicConfig {
        api_key,
        base_url: base_url.unwrap_or_else(|| DEFAULT_ANTHROPIC_BASE.to_string()),
        retry,
        idle_timeout,
        connect_timeout: Duration::from_secs(10),
    })
    .map_err(|e| e.user_message())?;
    Ok(ProviderChoice {
        provider: Arc::new(provider),
        model,
        api_key_source: source,
    })
}

/// The `currentProvider` profile of a settings file, if the file names one.
fn current_profile(path: &Path) -> Result<Option<(String, Profile)>, String> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(format!("cannot read {}: {e}", path.display())),
    };
    let value: Value = serde_json::from_str(&text).map_err(|e| {
        format!(
            "{}:{}:{}: malformed settings: {e}",
            path.display(),
            e.line(),
            e.column()
        )
    })?;
    let Some(name) = value.get("currentProvider").and_then(Value::as_str) else {
        return Ok(None);
    };
    let Some(entry) = value.pointer(&format!("/providers/{}", name.replace('/', "~1"))) else {
        return Err(format!(
            "{}: currentProvider {name:?} has no entry under \"providers\"",
            path.display()
        ));
    };
    let text_field = |key: &str| {
        entry
            .get(key)
            .and_then(Value::as_str)
            .map(expand_env)
            .filter(|v| !v.is_empty())
    };
    Ok(Some((
        name.to_string(),
        Profile {
            kind: text_field("type").unwrap_or_else(|| "anthropic".to_string()),
            model: text_field("model"),
            api_key: text_field("apiKey"),
            base_url: text_field("baseURL"),
            timeout: entry
                .get("timeout")
                .and_then(Value::as_u64)
                .map(Duration::from_millis),
        },
    )))
}

/// `$ENV:NAME` → the variable's value (empty when unset).
fn expand_env(value: &str) -> String {
    match value.strip_prefix("$ENV:") {
        Some(name) => std::env::var(name).unwrap_or_default(),
        None => value.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn profiles_are_read_and_malformed_files_name_line_and_column() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("settings.json");
        std::fs::write(
            &path,
            r#"{"currentProvider":"mock","providers":{"mock":{"type":"anthropic","model":"m1","apiKey":"k","baseURL":"http://127.0.0.1:9"}}}"#,
        )
        .unwrap();
        let (name, profile) = current_profile(&path).unwrap().unwrap();
        assert_eq!(name, "mock");
        assert_eq!(profile.model.as_deref(), Some("m1"));
        assert_eq!(profile.base_url.as_deref(), Some("http://127.0.0.1:9"));
        std::fs::write(&path, "{\n  \"currentProvider\": ,\n}").unwrap();
        let err = current_profile(&path).unwrap_err();
        assert!(err.contains("settings.json:2:"), "{err}");
        std::fs::write(&path, r#"{"currentProvider":"gone"}"#).unwrap();
        assert!(current_profile(&path).unwrap_err().contains("\"gone\""));
        std::fs::write(&path, r#"{"model":"x"}"#).unwrap();
        assert_eq!(current_profile(&path).unwrap(), None);
    }
}
