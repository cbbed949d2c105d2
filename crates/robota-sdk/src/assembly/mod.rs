//! The one assembly: the session robota's command line builds, put together from a
//! project directory and typed options — settings (user, project, local), trust, the
//! provider the caller chose, permission mode and rules, tools with MCP servers and
//! plugins, hooks, the session log (new, continued, resumed or forked), commands, skills
//! and agents, and the system prompt. The TUI, headless `-p`, the Agent SDK and ACP
//! drivers and embedding programs all get their sessions here; they only map their own
//! inputs to [`ProjectOptions`].
//!
//! The stages live beside this file, in the order they run: `permissions`, `toolset`,
//! `resume`, `prompt`.

mod git_tracked;
mod lsp;
mod permissions;
mod prompt;
mod resume;
mod toolset;

use std::path::PathBuf;
use std::sync::Arc;

use robota_core::hooks::{HookCallbacks, HookConfig};
use robota_core::permission::PermissionMode;
use robota_core::{Message, Provider, Tool};
use robota_session::Session;
use robota_session::error::LogError;
use robota_session::store::FindError;
use robota_tools::ToolHost;
use robota_tools::mcp::SdkMcpRouter;

use crate::agents::AgentCatalog;
use crate::checkpoint::Checkpointer;
use crate::commands::{CommandEntry, CommandRegistry};
use crate::errors::ProviderEndpoint;
use crate::instructions::Instructions;
use crate::interactive::{InteractiveSession, SessionOptions};
use crate::mcp::McpManager;
use crate::settings::{LoadOptions, Scope, Settings, SettingsError};
use crate::telemetry::{self, SessionTelemetry};

pub use crate::paths::{ProjectPaths, home_dir, robota_home};
pub use prompt::Thinking;
pub use resume::ResumeFrom;

/// Why a session could not be put together. Each message is one a user can act on.
#[derive(Debug, thiserror::Error)]
pub enum AssemblyError {
    /// A settings file could not be read or parsed.
    #[error(transparent)]
    Settings(#[from] SettingsError),
    /// The provider could not be chosen or built (the chooser's error, whole).
    #[error("{0}")]
    Provider(#[source] ProviderChoiceError),
    /// `--json-schema` is not a usable schema.
    #[error("{0}")]
    JsonSchema(#[source] robota_tools::SchemaError),
    /// A `--mcp-config` could not be read.
    #[error(transparent)]
    Mcp(#[from] crate::mcp::McpError),
    /// An option, or a setting, is not usable as given.
    #[error("{0}")]
    Invalid(String),
    /// The session to resume was not found.
    #[error(transparent)]
    Find(#[from] FindError),
    /// The session log could not be read or written.
    #[error(transparent)]
    Log(#[from] LogError),
}

/// The provider a session talks to, built by whoever assembles it (the SDK never builds
/// one).
pub struct ChosenProvider {
    /// The provider.
    pub provider: Arc<dyn Provider>,
    /// The model its requests name.
    pub model: String,
    /// Where the key came from (`ANTHROPIC_API_KEY`, a settings profile …), for
    /// `system/init`.
    pub api_key_source: String,
    /// Where the provider is reached and what configured it, for error messages.
    pub endpoint: ProviderEndpoint,
    /// A one-line notice for zero-config starts (which provider and model were chosen).
    pub notice: Option<String>,
}

/// Why the caller's chooser could not choose or build a provider: its own error type,
/// boxed (the command line's is `ProviderSetupError`; callers may downcast).
pub type ProviderChoiceError = Box<dyn std::error::Error + Send + Sync>;

/// A function that chooses the provider once the settings are read (the command line
/// reads `model`, provider profiles and keys from them).
pub type ProviderChooser =
    Box<dyn FnOnce(&Settings) -> Result<ChosenProvider, ProviderChoiceError> + Send>;

/// Where the session's provider comes from.
pub enum ProviderSource {
    /// A provider the program built; the model is [`ProjectOptions::model`], else the
    /// settings' `model`, else a resumed session's.
    Given(Arc<dyn Provider>),
    /// Chosen from the settings by the caller's function.
    Chosen(ProviderChooser),
}

/// Hooks answered by the program that assembles the session (the Agent SDK's callback
/// hooks), beside the settings' command hooks.
pub struct CallbackHooks {
    /// Which events and matchers the program registered.
    pub config: HookConfig,
    /// Where each hook call is answered.
    pub callbacks: Arc<dyn HookCallbacks>,
}

/// What the assembly finds on disk besides the settings layers (which
/// [`ProjectOptions::setting_sources`] chooses).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Discovery {
    /// Everything the command line finds: the user's and the project's context files,
    /// custom commands, skills, subagents, plugins and MCP servers (`.mcp.json`,
    /// `~/.claude.json`).
    #[default]
    Full,
    /// Only the project's context files (`AGENTS.md`, `CLAUDE.md` … from the filesystem
    /// root down to `cwd`); nothing under the user's home, no commands, skills, subagents,
    /// plugins or MCP servers of its own. What [`SessionBuilder`](crate::SessionBuilder)
    /// sessions read.
    ProjectContextFiles,
    /// Nothing from disk: the session is only what the options say.
    Nothing,
}

/// What a session is assembled from, beside its directory and provider. The default is
/// what `robota -p` does in a directory with no flags.
#[derive(Default)]
pub struct ProjectOptions {
    /// Which settings files are read (`None`: user, project and local).
    pub setting_sources: Option<Vec<Scope>>,
    /// What else is read from disk (default: everything the command line reads).
    pub discovery: Discovery,
    /// `--safe-mode`: the settings' hooks, status line, MCP servers and plugins are turned
    /// off (pair it with a `discovery` that reads no commands, skills or subagents).
    pub safe_mode: bool,
    /// One more settings layer, a file path or inline JSON (`--settings`).
    pub extra_settings: Option<String>,
    /// A person is at the terminal: an untrusted project's settings, plugins and MCP
    /// servers are held back until the directory is trusted, and old session logs are
    /// removed in the background.
    pub interactive: bool,
    /// Calls that need approval are asked about (as permission events); otherwise denied.
    pub ask_permissions: bool,
    /// The model asked for (`None`: the settings', or a resumed session's).
    pub model: Option<String>,
    /// The permission mode (`None`: `permissions.defaultMode`, or a resumed session's).
    pub permission_mode: Option<PermissionMode>,
    /// More allow rules, each a rule list as `--allowedTools` takes it.
    pub allow: Vec<String>,
    /// More deny rules, each a rule list as `--disallowedTools` takes it.
    pub deny: Vec<String>,
    /// Only these built-in tools are offered (`--tools`; `None`: all).
    pub tools: Option<Vec<String>>,
    /// Tools of the embedding program, offered beside the built-in ones whatever
    /// [`tools`](Self::tools) says (a whole-tool deny rule still removes one). Each tool's
    /// [`RiskClass`](robota_core::RiskClass) decides whether a call needs approval.
    pub program_tools: Vec<Arc<dyn Tool>>,
    /// More environment variables for the processes the tools start, after the settings'
    /// `env`.
    pub env: Vec<(String, String)>,
    /// A JSON schema the final answer must follow (`--json-schema`).
    pub json_schema: Option<String>,
    /// More plugin directories (`--plugin-dir`).
    pub plugin_dirs: Vec<PathBuf>,
    /// More MCP server configurations, file paths or inline JSON (`--mcp-config`).
    pub mcp_configs: Vec<String>,
    /// Only the servers of `mcp_configs` (`--strict-mcp-config`).
    pub strict_mcp_config: bool,
    /// The in-process MCP servers of the program that runs robota, if any.
    pub sdk_mcp: Option<Arc<dyn SdkMcpRouter>>,
    /// Hooks the program answers itself.
    pub callback_hooks: Option<CallbackHooks>,
    /// Subagents the program defines (the Agent SDK's `agents`), by name.
    pub program_agents: Option<serde_json::Map<String, serde_json::Value>>,
    /// What the tools use of their host (an ACP editor's files and terminal).
    pub host: ToolHost,
    /// A session to continue instead of starting a new one.
    pub resume: Option<ResumeFrom>,
    /// The messages a new session starts from, as an earlier conversation left them
    /// (ignored when [`resume`](Self::resume) names a session).
    pub history: Vec<Message>,
    /// Continue the resumed session under a new id (`--fork-session`).
    pub fork: bool,
    /// Resume as of this message id (`--resume-session-at`).
    pub resume_at: Option<String>,
    /// The new session's id (`--session-id`): a UUID when the session keeps a log, any
    /// text without one.
    pub session_id: Option<String>,
    /// Keep no session log (`--no-session-persistence`).
    pub no_log: bool,
    /// Log diagnostics beside the session log (`--debug-log`; also the settings').
    pub diagnostics_log: bool,
    /// Replaces robota's built-in instructions.
    pub system_prompt: Option<String>,
    /// Added at the end of the system prompt.
    pub append_system_prompt: Option<String>,
    /// More directories the tools may work in (`--add-dir`).
    pub add_dirs: Vec<PathBuf>,
    /// Extended thinking (`--thinking`, `--max-thinking-tokens`).
    pub thinking: Option<Thinking>,
    /// At most this many tool rounds per prompt (`--max-turns`).
    pub max_turns: Option<u32>,
    /// The answer limit in tokens per provider call (default: the model's own, at most
    /// 32 000).
    pub max_tokens: Option<u32>,
    /// The session's name (`--name`).
    pub name: Option<String>,
}

/// An assembled session, not started yet, and the facts clients print about it.
/// [`start`](Self::start) runs it as an [`InteractiveSession`].
pub struct ProjectSession {
    session: Session,
    /// The model it talks to.
    pub model: String,
    /// Where the key came from, for `system/init`.
    pub api_key_source: String,
    /// Where the provider is reached and what configured it, for error messages.
    pub endpoint: ProviderEndpoint,
    /// The zero-config notice (which provider and model were chosen), if any.
    pub notice: Option<String>,
    /// Lines for the user (a settings file held back, a log line skipped on resume …).
    pub warnings: Vec<String>,
    /// Where `--json-schema` runs find the model's structured answer.
    pub structured: Option<robota_tools::StructuredSlot>,
    /// The settings' `maxTurnSeconds`: the wall deadline of a headless turn, if any.
    pub max_turn_seconds: Option<u64>,
    /// The plugins loaded, as `system/init` lists them (`{name, path}`).
    pub plugins: Vec<serde_json::Value>,
    mcp: Option<Arc<McpManager>>,
    lsp: Option<Arc<robota_lsp::LspManager>>,
    commands: Arc<CommandRegistry>,
    agents: Option<Arc<AgentCatalog>>,
    discovery: Discovery,
    checkpoints: Option<Checkpointer>,
    instructions: Arc<Instructions>,
    bash: Option<Arc<robota_tools::BashTool>>,
    plugin_places: ProjectPaths,
    telemetry: Option<Arc<SessionTelemetry>>,
    older_history: Option<robota_session::replay::OlderHistory>,
}

impl ProjectSession {
    /// Assembles the session robota's command line would build in `paths.cwd` with these
    /// options, talking to the provider `provider` gives.
    pub fn assemble(
        paths: ProjectPaths,
        options: ProjectOptions,
        provider: ProviderSource,
    ) -> Result<ProjectSession, AssemblyError> {
        assemble_stages(paths, options, provider)
    }

    /// The conversation as assembled: its id, history, tools, mode and policy.
    pub fn session(&self) -> &Session {
        &self.session
    }

    /// Where a resumed log's older history is (what came before [`Session::history`]:
    /// summarised by a compaction, or left out for the window), for a client that shows
    /// it on demand ([`crate::OlderHistory::read_page`], off its UI thread). Display
    /// only: the history sent to the model stays as it is.
    pub fn older_history(&self) -> Option<&robota_session::replay::OlderHistory> {
        self.older_history.as_ref()
    }

    /// The session's MCP servers, already connecting in the background.
    pub fn mcp(&self) -> Option<&Arc<McpManager>> {
        self.mcp.as_ref()
    }

    /// The built-in commands and the custom commands and skills found for this directory.
    pub fn command_entries(&self) -> Vec<CommandEntry> {
        self.commands.entries()
    }

    /// The names of the skills the model may use.
    pub fn skill_names(&self) -> Vec<String> {
        self.commands.skill_names()
    }

    /// The names of the subagents the model may start.
    pub fn agent_names(&self) -> Vec<String> {
        self.agents
            .as_ref()
            .map(|agents| agents.names().into_iter().map(str::to_string).collect())
            .unwrap_or_default()
    }

    /// What the system prompt is built from (rebuilt by `/language` and `/memory`).
    pub fn instructions(&self) -> &Arc<Instructions> {
        &self.instructions
    }

    /// Starts the session on the current tokio runtime: its MCP servers, commands,
    /// subagents, checkpoints and prompt parts move into it. A session that discovered
    /// nothing on disk has no `/plugin`, `/memory` or `/language` (they would write files
    /// it never reads).
    pub fn start(self) -> InteractiveSession {
        let full = self.discovery == Discovery::Full;
        let options = SessionOptions {
            endpoint: self.endpoint,
            mcp: self.mcp,
            lsp: self.lsp,
            commands: self.commands,
            agents: self.agents,
            checkpoints: self.checkpoints,
            instructions: full.then_some(self.instructions),
            bash: self.bash,
            startup_warnings: self.warnings,
            plugins: full.then_some(self.plugin_places),
            telemetry: self.telemetry,
        };
        InteractiveSession::start_with(self.session, options)
    }
}

/// The stages, in order; each is a function of its own module.
fn assemble_stages(
    paths: ProjectPaths,
    options: ProjectOptions,
    provider: ProviderSource,
) -> Result<ProjectSession, AssemblyError> {
    let settings = load_settings(&paths, &options)?;
    robota_core::credentials::set_pass_through(settings.credential_pass_through());
    let chosen = choose_provider(provider, &settings, options.model.as_deref())?;
    let mut warnings = Vec::new();
    if !settings.held_back.is_empty() {
        warnings.push(format!(
            "this directory is not trusted, so its settings were held back: {} (run `robota trust` to trust it)",
            settings.held_back.join(", ")
        ));
    }
    let rules = permissions::Rules::gather(&settings, &options, &mut warnings)?;
    let mut tools = toolset::Toolset::assemble(&paths, &settings, &options, &rules, &mut warnings)?;
    let server_tools = tools.server_tools(chosen.provider.name(), &rules, &options);
    let hooks = tools.hooks(&settings, &mut warnings);
    let opened = resume::open(
        &paths,
        &settings,
        &options,
        &chosen,
        &tools.todos,
        &mut warnings,
    )?;
    let telemetry = SessionTelemetry::from_settings(
        &settings,
        &paths.robota_home,
        &opened.session_id,
        telemetry::start_type(opened.start_source, options.resume.as_ref()),
        options.interactive,
        &mut warnings,
    )
    .map(Arc::new);
    let mode = rules.mode_after_resume(&options, opened.resumed_mode);
    let model = match (&options.model, &opened.resumed_model) {
        (None, Some(resumed)) => resumed.clone(),
        _ => chosen.model.clone(),
    };
    let mut policy = rules.into_policy(mode, &settings, &paths, &options, &mut warnings);
    policy.git_tracked_denied = git_tracked::tracked_denied(&policy, &paths.cwd, &mut warnings);
    let read_denial = policy.read_denial(&paths.cwd);
    let definitions = tools.definitions(&paths, &options, read_denial.as_ref(), &mut warnings);
    let built = prompt::build(
        &paths,
        &settings,
        &options,
        &policy,
        &model,
        tools.structured.is_some(),
    )?;
    let mut session = Session::new(
        built.config(
            opened.session_id.clone(),
            &paths,
            &settings,
            &options,
            server_tools,
        ),
        chosen.provider.clone(),
        tools.registry,
        policy,
        opened.log,
    )
    .with_history(opened.history, opened.name)
    .with_usage(opened.usage)
    .with_hooks(hooks, paths.cwd.clone())
    .with_start_source(opened.start_source)
    .with_compaction(built.compaction)
    .with_todos(opened.todos)
    .with_checkpoints(opened.checkpoints);
    if let Some(callback) = options.callback_hooks {
        session =
            session.with_callback_hooks(callback.config, callback.callbacks, paths.cwd.clone());
    }
    if let Some(refusal) = settings.bypass_refusal() {
        session.lock_modes(robota_session::conversation::ModeLock::forbidding_bypass(
            refusal,
        ));
    }
    if opened.resumed_mode != Some(mode) && mode != PermissionMode::Default {
        session.set_mode(mode);
    }
    if let Some(bash) = &tools.bash {
        bash.sandboxed_by(session.policy_handle());
    }
    if let Some(name) = options.name.filter(|n| Some(n.as_str()) != session.name()) {
        session.rename(name);
    }
    // Connected last, once nothing above can fail: the servers start in the background.
    if let Some(mcp) = &tools.mcp {
        mcp.start();
    }
    let checkpoints = resume::checkpoints(&paths, &session);
    Ok(ProjectSession {
        plugin_places: paths.clone(),
        mcp: tools.mcp,
        lsp: tools.lsp,
        commands: Arc::new(definitions.commands),
        agents: definitions.agents.map(Arc::new),
        discovery: options.discovery,
        plugins: definitions.plugin_list,
        checkpoints,
        instructions: Arc::new(built.instructions),
        bash: tools.bash,
        telemetry,
        session,
        model,
        api_key_source: chosen.api_key_source,
        endpoint: chosen.endpoint,
        notice: chosen.notice,
        warnings,
        structured: tools.structured,
        max_turn_seconds: settings.values.max_turn_seconds,
        older_history: opened.older,
    })
}

/// Stage 1: the settings layers the options ask for.
fn load_settings(
    paths: &ProjectPaths,
    options: &ProjectOptions,
) -> Result<Settings, AssemblyError> {
    let mut settings = Settings::load_sources(
        &LoadOptions {
            paths,
            extra: options.extra_settings.as_deref(),
            interactive: options.interactive,
        },
        options.setting_sources.as_deref(),
    )?;
    if options.safe_mode {
        settings.turn_customisations_off();
    }
    Ok(settings)
}

/// Stage 2: the provider, given or chosen from the settings.
fn choose_provider(
    source: ProviderSource,
    settings: &Settings,
    model: Option<&str>,
) -> Result<ChosenProvider, AssemblyError> {
    match source {
        ProviderSource::Chosen(choose) => choose(settings).map_err(AssemblyError::Provider),
        ProviderSource::Given(provider) => {
            let model = model
                .or(settings.values.model.as_deref())
                .ok_or_else(|| {
                    AssemblyError::Invalid(
                        "no model: name one in the options or in the settings' `model`".into(),
                    )
                })?
                .to_string();
            Ok(ChosenProvider {
                endpoint: ProviderEndpoint {
                    provider: provider.name().to_string(),
                    ..ProviderEndpoint::default()
                },
                provider,
                model,
                api_key_source: "none".to_string(),
                notice: None,
            })
        }
    }
}

/// Whether the environment variable is set to something other than empty, `0` or `false`.
fn env_flag(name: &str) -> bool {
    std::env::var(name).is_ok_and(|v| !matches!(v.trim(), "" | "0" | "false"))
}
