//! Choosing and building the provider. A profile (`--provider NAME`, else the settings'
//! `currentProvider`) from `providers: {name: {type, model, apiKey, baseURL, timeout,
//! options}}` wins; with none, the environment decides (`ANTHROPIC_API_KEY`,
//! `OPENAI_API_KEY`, `GEMINI_API_KEY`/`GOOGLE_API_KEY`, with `*_BASE_URL` overrides). A base
//! URL set by a project file is never sent a key the project file did not set itself.
//! Retry and timeout knobs: `ROBOTA_MAX_RETRIES`, `ROBOTA_RETRY_BASE_MS`,
//! `ROBOTA_STREAM_IDLE_TIMEOUT_MS`.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Map, Value};

use crate::core::{Adapter, AdapterConfig, Provider, ProviderError, ProviderFactory};
use crate::core::{credentials, models};
use crate::sdk::ProviderEndpoint;
use crate::sdk::settings::model::ProviderProfile;
use crate::sdk::settings::{Scope, Settings};

/// The wire format a profile speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProviderKind {
    /// Anthropic's Messages API.
    Anthropic,
    /// OpenAI's Responses API.
    OpenAi,
    /// A server speaking OpenAI's Chat Completions (a local model, a gateway).
    OpenAiCompatible,
    /// Google's Gemini API.
    Google,
}

impl ProviderKind {
    /// The kind a settings `type` names (`anthropic`, `openai`, `openai-compatible`,
    /// `google`, and their aliases).
    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "anthropic" => Some(ProviderKind::Anthropic),
            "openai" => Some(ProviderKind::OpenAi),
            "openai-compatible" | "openai_compatible" | "local" => {
                Some(ProviderKind::OpenAiCompatible)
            }
            "google" | "gemini" => Some(ProviderKind::Google),
            _ => None,
        }
    }

    /// The adapter that speaks this kind's wire format.
    fn adapter(self) -> Adapter {
        match self {
            ProviderKind::Anthropic => Adapter::Anthropic,
            ProviderKind::OpenAi => Adapter::OpenAiResponses,
            ProviderKind::Google => Adapter::Gemini,
            ProviderKind::OpenAiCompatible => Adapter::OpenAiChat,
        }
    }

    /// The settings type string of this kind.
    fn type_name(self) -> &'static str {
        match self {
            ProviderKind::Anthropic => "anthropic",
            ProviderKind::OpenAi => "openai",
            ProviderKind::Google => "google",
            ProviderKind::OpenAiCompatible => "openai-compatible",
        }
    }

    /// The zero-config model: the first the model table offers for this kind.
    fn default_model(self) -> Option<&'static str> {
        models::default_models(self.type_name()).first().copied()
    }

    fn key_vars(self) -> &'static [&'static str] {
        match self {
            // A gateway's token is sent as `Authorization: Bearer`.
            ProviderKind::Anthropic => &["ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"],
            ProviderKind::OpenAi => &["OPENAI_API_KEY"],
            ProviderKind::Google => &["GEMINI_API_KEY", "GOOGLE_API_KEY"],
            ProviderKind::OpenAiCompatible => &[],
        }
    }

    fn base_var(self) -> Option<&'static str> {
        match self {
            ProviderKind::Anthropic => Some("ANTHROPIC_BASE_URL"),
            ProviderKind::OpenAi => Some("OPENAI_BASE_URL"),
            ProviderKind::Google => Some("GOOGLE_GEMINI_BASE_URL"),
            ProviderKind::OpenAiCompatible => None,
        }
    }
}

/// A built provider and what was chosen.
pub struct ProviderChoice {
    pub provider: Arc<dyn Provider>,
    pub model: String,
    /// Where the key came from, for the init message.
    pub api_key_source: String,
    /// A one-line notice for zero-config starts (which provider and model were chosen).
    pub notice: Option<String>,
    /// Where the provider is reached and what configured it, for error messages.
    pub endpoint: ProviderEndpoint,
    /// What chose the provider and the model (`robota config` shows them).
    pub provider_source: String,
    pub model_source: String,
}

/// Everything needed to build one provider.
#[derive(Debug, Clone, PartialEq)]
pub struct ProviderSpec {
    pub kind: ProviderKind,
    pub model: Option<String>,
    pub api_key: Option<String>,
    pub api_key_source: String,
    pub base_url: Option<String>,
    /// What set `base_url` (a variable, a settings key), for error messages.
    pub base_url_source: Option<String>,
    pub timeout: Option<Duration>,
    pub options: Map<String, Value>,
    /// Send the key as `Authorization: Bearer` (`ANTHROPIC_AUTH_TOKEN`).
    pub bearer: bool,
}

/// The variables a provider is configured from: the settings' `env` (user settings and
/// trusted project settings, as Claude Code applies them) over the process environment.
pub struct ProviderEnv {
    settings: Vec<(String, String)>,
}

impl ProviderEnv {
    pub fn new(settings: &Settings) -> Self {
        ProviderEnv {
            settings: settings.env(),
        }
    }

    /// The value of `name` (blank counts as unset) and where it came from.
    fn get(&self, name: &str) -> Option<(String, String)> {
        let from_settings = self
            .settings
            .iter()
            .rev()
            .find(|(k, v)| k == name && !v.trim().is_empty())
            .map(|(_, v)| (v.clone(), format!("{name} in settings env")));
        from_settings.or_else(|| env_var(name).map(|v| (v, name.to_string())))
    }

    fn value(&self, name: &str) -> Option<String> {
        self.get(name).map(|(v, _)| v)
    }
}

fn env_var(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.trim().is_empty())
}

/// Why no provider could be chosen or built; the message says what to set.
#[derive(Debug, thiserror::Error)]
#[allow(missing_docs)] // each variant's message is its documentation
pub enum ProviderSetupError {
    /// Nothing is configured (the TUI opens its setup screen, without an error line).
    #[error(
        "no provider is configured. Set one of ANTHROPIC_API_KEY, OPENAI_API_KEY, GEMINI_API_KEY (or GOOGLE_API_KEY), or add a provider profile (\"providers\" and \"currentProvider\") to ~/.robota/settings.json"
    )]
    NoProvider,
    /// A provider is configured but has no usable key (the setup screen reopens).
    #[error("no API key for {provider}: set {variables}, or \"apiKey\" in the provider profile")]
    NoKey {
        provider: &'static str,
        variables: String,
    },
    #[error(
        "{0} is not set in this environment: export it before starting robota, or paste the key itself"
    )]
    KeyVariableUnset(String),
    #[error("{url} is not a URL: {source}")]
    NotUrl {
        url: String,
        #[source]
        source: url::ParseError,
    },
    #[error("{0} names no host")]
    NoHost(String),
    #[error("{0} names no port")]
    NoPort(String),
    #[error("cannot resolve {host}: {source}")]
    Resolve {
        host: String,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot reach {url}: {source} — is the server running?")]
    Unreachable {
        url: String,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot reach {0}: no address")]
    NoAddress(String),
    #[error("provider profile {0:?} is not defined under \"providers\" in any settings file")]
    UnknownProfile(String),
    #[error(
        "provider profile {name:?} has unknown type {kind:?}; use anthropic, openai, openai-compatible or google"
    )]
    UnknownType { name: String, kind: String },
    #[error("the provider profile names no model: add \"model\" to it or pass --model")]
    NoModel,
    /// A project file points the profile at a host, and the key is the user's.
    #[error(
        "{file} sets providers.{name}.baseURL; robota will not send your API key ({key_source}) to a host a project file chose. Set the URL in ~/.robota/settings.json or with --settings if you trust it."
    )]
    ProjectBaseUrl {
        file: String,
        name: String,
        key_source: String,
    },
    #[error("an openai-compatible profile needs \"baseURL\" (e.g. http://127.0.0.1:11434/v1)")]
    NoBaseUrl,
    /// The adapter refused its configuration.
    #[error("{}", .0.user_message())]
    Build(#[source] ProviderError),
    #[error("--fallback-model {0} is the main model; choose a different one")]
    FallbackIsMain(String),
}

/// Checks a provider the setup screen is about to save: a key named by `$ENV:NAME` must be
/// set, and an OpenAI-compatible server must answer on its address. `Err` says what to fix.
pub fn check_setup(
    profile: &crate::sdk::settings::setup_save::SetupProfile,
) -> Result<(), ProviderSetupError> {
    if let Some(name) = profile
        .api_key
        .as_deref()
        .and_then(|k| k.strip_prefix("$ENV:"))
        && env_var(name).is_none()
    {
        return Err(ProviderSetupError::KeyVariableUnset(name.to_string()));
    }
    if let Some(url) = profile.base_url.as_deref() {
        reachable(url)?;
    }
    Ok(())
}

/// Whether something listens at the URL's host and port (within 2 s).
fn reachable(url: &str) -> Result<(), ProviderSetupError> {
    use std::net::{TcpStream, ToSocketAddrs};
    let parsed = url::Url::parse(url).map_err(|source| ProviderSetupError::NotUrl {
        url: url.to_string(),
        source,
    })?;
    let host = parsed
        .host_str()
        .ok_or_else(|| ProviderSetupError::NoHost(url.to_string()))?;
    let port = parsed
        .port_or_known_default()
        .ok_or_else(|| ProviderSetupError::NoPort(url.to_string()))?;
    let addrs: Vec<_> = (host, port)
        .to_socket_addrs()
        .map_err(|source| ProviderSetupError::Resolve {
            host: host.to_string(),
            source,
        })?
        .collect();
    let timeout = Duration::from_secs(2);
    let mut last = None;
    for addr in addrs {
        match TcpStream::connect_timeout(&addr, timeout) {
            Ok(_) => return Ok(()),
            Err(e) => last = Some(e),
        }
    }
    Err(match last {
        Some(source) => ProviderSetupError::Unreachable {
            url: url.to_string(),
            source,
        },
        None => ProviderSetupError::NoAddress(url.to_string()),
    })
}

/// Picks the provider from flags, settings and environment.
pub fn choose(
    settings: &Settings,
    provider_flag: Option<&str>,
    model_flag: Option<&str>,
    providers: &'static dyn ProviderFactory,
) -> Result<ProviderChoice, ProviderSetupError> {
    let env = ProviderEnv::new(settings);
    let profile_name = provider_flag
        .map(str::to_string)
        .or_else(|| settings.values.current_provider.clone());
    let in_file = |pointer: &str| {
        settings
            .source_of(pointer)
            .unwrap_or("settings")
            .to_string()
    };
    let provider_source = match (&profile_name, provider_flag) {
        (Some(_), Some(_)) => "--provider".to_string(),
        (Some(_), None) => format!("currentProvider in {}", in_file("/currentProvider")),
        (None, _) => String::new(),
    };
    let (mut spec, zero_config) = match profile_name.clone() {
        Some(name) => match settings.values.providers.get(&name) {
            Some(profile) => (profile_spec(settings, &name, profile, &env)?, None),
            None => match ProviderKind::parse(&name) {
                Some(kind) if provider_flag.is_some() => (env_spec(kind, &env), None),
                _ => return Err(ProviderSetupError::UnknownProfile(name)),
            },
        },
        None => {
            let kind = detect_from_env(&env)
                .or_else(|| key_helper(settings).map(|_| ProviderKind::Anthropic))
                .ok_or(ProviderSetupError::NoProvider)?;
            (env_spec(kind, &env), Some(kind))
        }
    };
    let mut model_source = match (&profile_name, &spec.model) {
        (Some(name), Some(_)) => {
            let pointer = format!("/providers/{}/model", name.replace('/', "~1"));
            format!("providers.{name}.model in {}", in_file(&pointer))
        }
        _ => "the provider's default".to_string(),
    };
    let profile_model = spec.model.clone();
    if let Some(model) = model_flag {
        spec.model = Some(model.to_string());
        model_source = "--model".to_string();
    } else if let Some(model) = settings
        .values
        .model
        .as_deref()
        .filter(|_| spec.model.is_none())
    {
        spec.model = Some(model.to_string());
        model_source = format!("model in {}", in_file("/model"));
    }
    let fallback = profile_model.or_else(|| spec.kind.default_model().map(str::to_string));
    let model = spec
        .model
        .clone()
        .or_else(|| fallback.clone())
        .ok_or(ProviderSetupError::NoModel)?;
    // `sonnet`, `opus`, `haiku` (as in Claude Code's settings) name the provider's models.
    let model = models::resolve(
        &model,
        spec.kind.type_name(),
        fallback.as_deref().unwrap_or(&model),
    );
    let provider = match key_helper(settings).filter(|_| spec.api_key.is_none()) {
        Some((helper, file)) => {
            spec.api_key_source = format!("apiKeyHelper in {file}");
            with_key_helper(&spec, helper, providers)?
        }
        None => build(&spec, providers)?,
    };
    let endpoint = endpoint(&spec, providers);
    let notice = zero_config.map(|kind| {
        format!(
            "using {} ({model}) from {}",
            kind_name(kind),
            spec.api_key_source
        )
    });
    let provider_source = match zero_config {
        Some(_) => format!("found {} in the environment", spec.api_key_source),
        None => provider_source,
    };
    Ok(ProviderChoice {
        provider,
        model,
        api_key_source: spec.api_key_source,
        notice,
        endpoint,
        provider_source,
        model_source,
    })
}

/// `apiKeyHelper` and the file that set it, when that file is the user's or managed: a
/// project file may not choose a command that receives the key's trust. The key's time to
/// live is `CLAUDE_CODE_API_KEY_HELPER_TTL_MS`.
fn key_helper(settings: &Settings) -> Option<(KeyHelper, String)> {
    let command = settings.values.api_key_helper.clone()?;
    let layer = settings.layer_of("/apiKeyHelper")?;
    if !matches!(layer.scope, Scope::User | Scope::Managed) {
        tracing::warn!(file = %layer.label, "apiKeyHelper is only read from user or managed settings; ignored");
        return None;
    }
    let ttl = env_var("CLAUDE_CODE_API_KEY_HELPER_TTL_MS")
        .and_then(|v| v.trim().parse().ok())
        .map(Duration::from_millis);
    Some((KeyHelper { command, ttl }, layer.label.clone()))
}

/// The `apiKeyHelper` command and how long a key it printed is good for.
struct KeyHelper {
    command: String,
    ttl: Option<Duration>,
}

/// The provider of `spec`, its key from `helper` (run now, and again when needed).
fn with_key_helper(
    spec: &ProviderSpec,
    helper: KeyHelper,
    providers: &'static dyn ProviderFactory,
) -> Result<Arc<dyn Provider>, ProviderSetupError> {
    // The helper's key is not known yet: the config is checked without it.
    remember_credentials(spec);
    let mut keyed = spec.clone();
    keyed.api_key.get_or_insert_default();
    let adapter = adapter_config(&keyed)?;
    let build_with_key = Arc::new(move |key: String| {
        credentials::remember_value(&key);
        let mut adapter = adapter.clone();
        adapter.api_key = Some(key);
        providers.build(&adapter)
    });
    providers
        .with_key_command(helper.command, helper.ttl, build_with_key)
        .map_err(ProviderSetupError::Build)
}

/// The base URL a spec sends to (the provider's default when none is set) and the settings
/// that chose it and the key.
fn endpoint(spec: &ProviderSpec, providers: &dyn ProviderFactory) -> ProviderEndpoint {
    let default_url = providers
        .default_base_url(spec.kind.adapter())
        .unwrap_or_default();
    let base_url = spec.base_url.as_deref().unwrap_or(default_url);
    ProviderEndpoint {
        provider: spec.kind.type_name().to_string(),
        // Messages name it: a password in its userinfo never shows.
        base_url: crate::core::http_client::redact_credentials(base_url),
        base_url_source: spec.base_url_source.clone(),
        key_source: (spec.api_key_source != "none").then(|| spec.api_key_source.clone()),
    }
}

fn kind_name(kind: ProviderKind) -> &'static str {
    match kind {
        ProviderKind::Anthropic => "Anthropic",
        ProviderKind::OpenAi => "OpenAI",
        ProviderKind::OpenAiCompatible => "an OpenAI-compatible server",
        ProviderKind::Google => "Google Gemini",
    }
}

/// The provider whose key is in the environment (Anthropic first when several are).
fn detect_from_env(env: &ProviderEnv) -> Option<ProviderKind> {
    [
        ProviderKind::Anthropic,
        ProviderKind::OpenAi,
        ProviderKind::Google,
    ]
    .into_iter()
    .find(|k| k.key_vars().iter().any(|v| env.get(v).is_some()))
}

fn env_spec(kind: ProviderKind, env: &ProviderEnv) -> ProviderSpec {
    let (api_key, source, bearer) = kind
        .key_vars()
        .iter()
        .find_map(|v| {
            env.get(v)
                .map(|(key, source)| (Some(key), source, *v == "ANTHROPIC_AUTH_TOKEN"))
        })
        .unwrap_or((None, "none".to_string(), false));
    let base = kind.base_var().and_then(|v| env.get(v));
    ProviderSpec {
        kind,
        model: (kind == ProviderKind::Anthropic)
            .then(|| env.value("ANTHROPIC_MODEL"))
            .flatten(),
        api_key,
        api_key_source: source,
        base_url: base.as_ref().map(|(url, _)| url.clone()),
        base_url_source: base.map(|(_, source)| source),
        timeout: None,
        options: Map::new(),
        bearer,
    }
}

fn profile_spec(
    settings: &Settings,
    name: &str,
    profile: &ProviderProfile,
    env: &ProviderEnv,
) -> Result<ProviderSpec, ProviderSetupError> {
    let pointer = |key: &str| format!("/providers/{}/{key}", name.replace('/', "~1"));
    let text = |value: &Option<String>| {
        value
            .as_deref()
            .map(str::trim)
            .filter(|v| !v.is_empty())
            .map(str::to_string)
    };
    let kind_text = text(&profile.kind).unwrap_or_else(|| "anthropic".to_string());
    let kind = ProviderKind::parse(&kind_text).ok_or_else(|| ProviderSetupError::UnknownType {
        name: name.to_string(),
        kind: kind_text.clone(),
    })?;
    let env = env_spec(kind, env);
    let (api_key, api_key_source, bearer) = match text(&profile.api_key) {
        Some(key) => (Some(key), format!("settings profile {name}"), false),
        None => (env.api_key, env.api_key_source, env.bearer),
    };
    let base_url_source = match text(&profile.base_url) {
        Some(_) => Some(format!(
            "providers.{name}.baseURL in {}",
            settings
                .source_of(&pointer("baseURL"))
                .unwrap_or("settings")
        )),
        None => env.base_url_source,
    };
    let base_url = text(&profile.base_url).or(env.base_url);
    // A project file may point a profile at a host; it may not send the user's key there.
    let scope_of = |key: &str| {
        settings
            .layer_of(&pointer(key))
            .map(|l| (l.scope, l.label.clone()))
    };
    if let Some((Scope::Project | Scope::Local, url_file)) = scope_of("baseURL") {
        let key_from_same_scope =
            matches!(scope_of("apiKey"), Some((Scope::Project | Scope::Local, _)));
        if api_key.is_some() && !key_from_same_scope {
            return Err(ProviderSetupError::ProjectBaseUrl {
                file: url_file,
                name: name.to_string(),
                key_source: api_key_source,
            });
        }
    }
    Ok(ProviderSpec {
        kind,
        model: text(&profile.model),
        api_key,
        api_key_source,
        base_url,
        base_url_source,
        timeout: profile.timeout.map(Duration::from_millis),
        options: profile.options.clone(),
        bearer,
    })
}

/// The variables every provider reads a key from, and the web search's key: kept out of the
/// processes robota starts whichever provider is in use.
const CREDENTIAL_VARIABLES: [&str; 6] = [
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "OPENAI_API_KEY",
    "GEMINI_API_KEY",
    "GOOGLE_API_KEY",
    "BRAVE_API_KEY",
];

/// The variables moved out of the environment block `/proc/PID/environ` shows: the
/// credential variables and the base URLs (which may carry a password).
pub(crate) const HIDDEN_VARIABLES: [&str; 9] = [
    CREDENTIAL_VARIABLES[0],
    CREDENTIAL_VARIABLES[1],
    CREDENTIAL_VARIABLES[2],
    CREDENTIAL_VARIABLES[3],
    CREDENTIAL_VARIABLES[4],
    CREDENTIAL_VARIABLES[5],
    "ANTHROPIC_BASE_URL",
    "OPENAI_BASE_URL",
    "GOOGLE_GEMINI_BASE_URL",
];

/// Tells core which credentials robota uses for `spec` (its key, its base URL's password,
/// the key variables set in the environment) and which variables carry them: kept out of
/// child processes, redacted in every file.
fn remember_credentials(spec: &ProviderSpec) {
    credentials::withhold_variables(CREDENTIAL_VARIABLES);
    // The other providers' keys too: a copy of one (a project's `env` entry built from
    // `${OPENAI_API_KEY}`) is left out and redacted like the key in use.
    for name in CREDENTIAL_VARIABLES {
        if let Some(value) = env_var(name) {
            credentials::remember_value(&value);
        }
    }
    if let Some(key) = &spec.api_key {
        credentials::remember_value(key);
    }
    if let Some(url) = &spec.base_url {
        credentials::remember_url_password(url);
    }
}

/// What the factory builds `spec`'s adapter from; `Err` when it lacks a key or address.
fn adapter_config(spec: &ProviderSpec) -> Result<AdapterConfig, ProviderSetupError> {
    let needs_key = spec.kind != ProviderKind::OpenAiCompatible;
    if needs_key && spec.api_key.is_none() {
        return Err(ProviderSetupError::NoKey {
            provider: kind_name(spec.kind),
            variables: spec.kind.key_vars().join(" or "),
        });
    }
    if !needs_key && spec.base_url.is_none() {
        return Err(ProviderSetupError::NoBaseUrl);
    }
    Ok(AdapterConfig {
        adapter: spec.kind.adapter(),
        api_key: spec.api_key.clone(),
        bearer: spec.bearer,
        base_url: spec.base_url.clone(),
        max_retries: env_var("ROBOTA_MAX_RETRIES").and_then(|v| v.parse().ok()),
        retry_base_delay: env_var("ROBOTA_RETRY_BASE_MS")
            .and_then(|v| v.parse().ok())
            .map(Duration::from_millis),
        idle_timeout: env_var("ROBOTA_STREAM_IDLE_TIMEOUT_MS")
            .and_then(|v| v.parse().ok())
            .map(Duration::from_millis)
            .or(spec.timeout)
            .unwrap_or(Duration::from_secs(120)),
        options: spec.options.clone(),
    })
}

/// Builds the adapter a spec names.
pub fn build(
    spec: &ProviderSpec,
    providers: &dyn ProviderFactory,
) -> Result<Arc<dyn Provider>, ProviderSetupError> {
    remember_credentials(spec);
    providers
        .build(&adapter_config(spec)?)
        .map_err(ProviderSetupError::Build)
}

#[cfg(test)]
mod tests;
