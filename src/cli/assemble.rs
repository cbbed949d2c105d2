//! Putting a session together from the arguments: provider, tools, permission policy,
//! system prompt, hooks, and the session log — new, continued, resumed or forked.

use crate::core::hooks::HookConfig;
use crate::core::models;
use crate::core::permission::{PermissionMode, PermissionPolicy, PermissionRule, RuleList};
use crate::core::{ServerTool, ToolRegistry};
use crate::sdk::SessionOptions;
use crate::sdk::agents::AgentCatalog;
use crate::sdk::commands::{CommandRegistry, DefinitionRoots};
use crate::sdk::context_files;
use crate::sdk::instructions::{BuiltPrompt, Instructions};
use crate::sdk::mcp::{McpManager, McpSources};
use crate::sdk::settings::{LoadOptions, Scope, Settings};
use crate::session::compact::CompactionConfig;
use crate::session::log::{SessionHeader, SessionLog};
use crate::session::replay;
use crate::session::store::SessionStore;
use crate::session::{Session, SessionConfig};
use crate::tools::TodoList;

use std::sync::Arc;

use super::args::Args;
use super::paths;
use super::provider_setup;

/// The thinking budget of `--thinking adaptive|enabled` without `--max-thinking-tokens`
/// (at most half the answer limit).
const DEFAULT_THINKING_BUDGET: u32 = 16_000;

/// An assembled session and the facts clients print about it.
pub struct Assembled {
    pub session: Session,
    pub model: String,
    pub api_key_source: String,
    /// Where the provider is reached and what configured it, for error messages.
    pub endpoint: crate::sdk::ProviderEndpoint,
    /// The zero-config notice (which provider and model were chosen), if any.
    pub notice: Option<String>,
    /// Lines for stderr (e.g. a log line skipped on resume).
    pub warnings: Vec<String>,
    /// Where `--json-schema` runs find the model's structured answer.
    pub structured: Option<crate::tools::StructuredSlot>,
    /// The session's MCP servers, already connecting in the background.
    pub mcp: Option<Arc<McpManager>>,
    /// The built-in commands and the custom commands and skills found for this directory.
    pub commands: Arc<CommandRegistry>,
    /// The subagents the model may start.
    pub agents: Arc<AgentCatalog>,
    /// The plugins loaded, as `system/init` lists them (`{name, path}`).
    pub plugins: Vec<serde_json::Value>,
    /// The project's checkpoint store (`None` without a session log, or with
    /// `ROBOTA_DISABLE_CHECKPOINTS` set).
    pub checkpoints: Option<crate::sdk::checkpoint::Checkpointer>,
    /// What the system prompt is built from (rebuilt by `/language` and `/memory`).
    pub instructions: Arc<Instructions>,
    /// The Bash tool, whose background jobs `/tasks` lists and stops.
    pub bash: Option<Arc<crate::tools::BashTool>>,
    /// Where `/plugin …` manages plugins for this session.
    pub plugin_places: crate::sdk::plugins::PluginPlaces,
}

impl Assembled {
    /// The options an `InteractiveSession` over this session starts with (the MCP servers,
    /// commands, subagents, checkpoints and prompt parts move into them).
    pub fn session_options(&mut self) -> SessionOptions {
        SessionOptions {
            endpoint: self.endpoint.clone(),
            mcp: self.mcp.clone(),
            commands: self.commands.clone(),
            agents: Some(self.agents.clone()),
            checkpoints: self.checkpoints.take(),
            instructions: Some(self.instructions.clone()),
            bash: self.bash.clone(),
            startup_warnings: self.warnings.clone(),
            plugins: Some(self.plugin_places.clone()),
        }
    }
}

pub fn assemble(args: &Args, interactive: bool) -> Result<Assembled, String> {
    assemble_with(args, interactive, interactive)
}

/// `assemble` with settings loaded for an `interactive` run (trust hold-back) while the
/// session itself may still ask a client (`asks_client`) about permissions (a protocol driver that
/// forwards questions over its pipe).
pub fn assemble_with(
    args: &Args,
    interactive: bool,
    asks_client: bool,
) -> Result<Assembled, String> {
    let cwd =
        std::env::current_dir().map_err(|e| format!("cannot read the working directory: {e}"))?;
    assemble_in(
        args,
        cwd,
        interactive,
        asks_client,
        None,
        &crate::tools::ToolHost::default(),
    )
}

/// `assemble_with` for a session in `cwd` rather than the process's working directory (an
/// ACP client names the directory of each session it opens), with `sdk_mcp` reaching the
/// in-process MCP servers of the Agent SDK program that runs robota, if one does, and the
/// tools using what `host` offers (an ACP editor's files and terminal).
pub fn assemble_in(
    args: &Args,
    cwd: std::path::PathBuf,
    interactive: bool,
    asks_client: bool,
    sdk_mcp: Option<Arc<dyn crate::tools::mcp::SdkMcpRouter>>,
    host: &crate::tools::ToolHost,
) -> Result<Assembled, String> {
    let home = paths::robota_home();
    let user_home = paths::home_dir();
    let sources = args
        .setting_sources
        .as_deref()
        .map(Scope::parse_sources)
        .transpose()?;
    let settings = Settings::load_sources(
        &LoadOptions {
            cwd: &cwd,
            home: user_home.as_deref(),
            robota_home: &home,
            extra: args.settings.as_deref(),
            interactive,
        },
        sources.as_deref(),
    )
    .map_err(|e| e.to_string())?;
    let mut choice =
        provider_setup::choose(&settings, args.provider.as_deref(), args.model.as_deref())?;
    if let Some(fallback) = &args.fallback_model {
        if *fallback == choice.model {
            return Err(format!(
                "--fallback-model {fallback} is the main model; choose a different one"
            ));
        }
        choice.provider = std::sync::Arc::new(crate::providers::FallbackProvider::new(
            choice.provider,
            fallback.clone(),
        ));
    }
    let mut warnings = args.accepted.notes();
    if !settings.held_back.is_empty() {
        warnings.push(format!(
            "this directory is not trusted, so its settings were held back: {} (run `robota trust` to trust it)",
            settings.held_back.join(", ")
        ));
    }

    let mut mode = if args.dangerously_skip_permissions {
        PermissionMode::BypassPermissions
    } else {
        match &args.permission_mode {
            Some(m) => PermissionMode::parse(m).ok_or_else(|| {
                format!(
                    "unknown --permission-mode {m:?}; choose one of: {}",
                    PermissionMode::ALL.map(|m| m.as_str()).join(", ")
                )
            })?,
            None => match settings.text("/permissions/defaultMode") {
                Some(m) => PermissionMode::parse(m).ok_or_else(|| {
                    format!(
                        "unknown permissions.defaultMode {m:?} in {}",
                        settings
                            .source_of("/permissions/defaultMode")
                            .unwrap_or("settings")
                    )
                })?,
                None => PermissionMode::Default,
            },
        }
    };
    let from_settings = |list: &str| -> Vec<PermissionRule> {
        settings
            .rules(list)
            .iter()
            .filter_map(|(rule, _, base)| {
                PermissionRule::parse(rule).map(|r| r.with_base(base.clone()))
            })
            .collect()
    };
    let mut allow = from_settings("allow");
    let ask = from_settings("ask");
    let mut deny = from_settings("deny");
    allow.extend(
        args.allowed_tools
            .iter()
            .flat_map(|a| PermissionRule::parse_list(a)),
    );
    deny.extend(
        args.disallowed_tools
            .iter()
            .flat_map(|a| PermissionRule::parse_list(a)),
    );
    let todos = TodoList::new();
    let defaults = crate::tools::default_tool_set(&cwd, todos.clone(), host);
    let bash = Some(defaults.bash.clone());
    let mut tool_list = defaults.tools;
    tool_list.push(crate::tools::web_fetch_tool(&settings.merged));
    tool_list.push(std::sync::Arc::new(crate::tools::ExitPlanModeTool));
    let search_tool = crate::tools::web_search_tool(&settings.merged);
    let has_search_backend = search_tool.is_some();
    tool_list.extend(search_tool);
    let structured = match &args.json_schema {
        Some(schema) => {
            let slot = crate::tools::StructuredSlot::default();
            let tool = crate::tools::StructuredOutputTool::new(schema, slot.clone())?;
            tool_list.push(std::sync::Arc::new(tool));
            Some(slot)
        }
        None => None,
    };
    let mut tools = ToolRegistry::new(tool_list);
    let whole_tool_denials: Vec<PermissionRule> = deny
        .iter()
        .filter(|r| r.specifier.is_none())
        .cloned()
        .collect();
    let removed = move |name: &str| {
        whole_tool_denials
            .iter()
            .any(|r| r.names_tool(name, RuleList::Deny))
    };
    let chosen = chosen_tools(args.tools.as_deref());
    if let Some(chosen) = &chosen {
        let known = tools.names();
        let unknown: Vec<&str> = chosen
            .iter()
            .filter(|n| !known.contains(n) && !n.starts_with("mcp__"))
            .map(String::as_str)
            .collect();
        if !unknown.is_empty() {
            warnings.push(format!("--tools: no such tool: {}", unknown.join(", ")));
        }
    }
    let plugins = crate::sdk::plugins::discover(&crate::sdk::plugins::PluginSources {
        cwd: &cwd,
        home: user_home.as_deref(),
        robota_home: &home,
        settings: &settings,
        plugin_dirs: &args.plugin_dir,
        interactive,
    });
    warnings.extend(plugins.warnings.iter().cloned());
    if !plugins.held_back.is_empty() {
        warnings.push(format!(
            "this directory is not trusted, so plugins it turns on were held back: {} (run `robota trust` to trust it)",
            plugins.held_back.join(", ")
        ));
    }
    let mut servers = crate::sdk::mcp::collect(&McpSources {
        cwd: &cwd,
        home: user_home.as_deref(),
        settings: &settings,
        flag_configs: &args.mcp_config,
        strict: args.strict_mcp_config,
    })?;
    if !args.strict_mcp_config {
        for plugin in &plugins.plugins {
            let source = format!("plugin {}", plugin.name);
            for (name, entry) in &plugin.mcp_servers {
                servers.add(name, entry, &source);
            }
        }
    }
    if !servers.held_back.is_empty() {
        warnings.push(format!(
            "{} (run `robota trust` to trust this directory)",
            servers.held_back.join("; ")
        ));
    }
    let mcp = (!servers.servers.is_empty())
        .then(|| McpManager::new(servers.servers, cwd.clone(), settings.env(), sdk_mcp));
    if let Some(mcp) = &mcp {
        tools.add_source(mcp.clone());
    }
    let removed_now = removed.clone();
    let chosen_now = chosen.clone();
    tools.retain(move |name| {
        name == crate::tools::STRUCTURED_OUTPUT_TOOL
            || (!removed_now(name)
                && chosen_now
                    .as_ref()
                    .is_none_or(|c| c.iter().any(|n| n == name)))
    });
    // Without a search backend, Anthropic's own web search stands in (never advertised
    // where it cannot work, and not when the user removed WebSearch).
    let server_tools = if !has_search_backend
        && choice.provider.name() == "anthropic"
        && !removed("WebSearch")
        && chosen
            .as_ref()
            .is_none_or(|c| c.iter().any(|n| n == "WebSearch"))
    {
        vec![ServerTool::web_search()]
    } else {
        Vec::new()
    };

    let store = SessionStore::new(home.clone());
    let resume_query = match (&args.resume, args.continue_session) {
        (Some(q), _) if !q.is_empty() => Some(ResumeFrom::Query(q.clone())),
        (Some(_), _) => {
            return Err(
                "--resume needs a session id or name in print mode (the picker is interactive)"
                    .to_string(),
            );
        }
        (None, true) => Some(ResumeFrom::Latest),
        (None, false) => None,
    };
    if args.resume_session_at.is_some() && resume_query.is_none() {
        return Err("--resume-session-at needs --resume or --continue".to_string());
    }
    let (mut hooks, hook_warnings) = HookConfig::from_settings(&settings.merged);
    warnings.extend(hook_warnings);
    if settings.merged.get("disableAllHooks") != Some(&serde_json::Value::Bool(true)) {
        for plugin in &plugins.plugins {
            hooks.merge(plugin.hooks.clone());
        }
    }
    let start_source = if resume_query.is_some() {
        "resume"
    } else {
        "startup"
    };
    let mut history = Vec::new();
    let mut resumed_checkpoints = Vec::new();
    let mut replayed_name = None;
    let mut resumed_mode = None;
    let mut resumed_todos = Vec::new();
    let mut model = choice.model.clone();
    let (session_id, log) = match resume_query {
        Some(from) => {
            let summary = match from {
                ResumeFrom::Query(q) => store.find(&cwd, &q).map_err(|e| e.to_string())?,
                ResumeFrom::Latest => store.latest(&cwd).ok_or_else(|| {
                    format!("no previous session to continue in {}", cwd.display())
                })?,
            };
            let replayed = replay::replay(&summary.path).map_err(|e| e.to_string())?;
            warnings.extend(replayed.warnings.iter().cloned());
            history = replayed.messages.clone();
            resumed_checkpoints = replayed.checkpoints.clone();
            replayed_name = replayed.name.clone();
            resumed_mode = replayed.mode.as_deref().and_then(PermissionMode::parse);
            if let Some(items) = replayed.todos.clone() {
                todos.replace(items.clone());
                resumed_todos = items;
            }
            if args.permission_mode.is_none()
                && !args.dangerously_skip_permissions
                && let Some(m) = replayed.mode.as_deref().and_then(PermissionMode::parse)
                && m != PermissionMode::BypassPermissions
            {
                // Bypass is never restored silently: the user asks for it again.
                mode = m;
            }
            if args.model.is_none()
                && let Some(m) = &replayed.model
            {
                model = m.clone();
            }
            if args.fork_session {
                let id = new_session_id(args)?;
                let path = store
                    .fork(&summary.path, &id, &cwd)
                    .map_err(|e| e.to_string())?;
                let forked = replay::replay(&path).map_err(|e| e.to_string())?;
                let log = SessionLog::open_append(&path, &forked).map_err(|e| e.to_string())?;
                answer_in_log(&log, &forked, &mut warnings);
                (id, Some(log))
            } else {
                let log =
                    SessionLog::open_append(&summary.path, &replayed).map_err(|e| e.to_string())?;
                answer_in_log(&log, &replayed, &mut warnings);
                (replayed.header.session_id.clone(), Some(log))
            }
        }
        None => {
            let id = new_session_id(args)?;
            let log = if args.no_session_persistence {
                None
            } else {
                let mut header = SessionHeader::new(&id, &cwd, &model, choice.provider.name());
                header.git_branch = crate::sdk::system_prompt::checked_out_branch(&cwd);
                Some(SessionLog::create(&home, &header).map_err(|e| e.to_string())?)
            };
            (id, log)
        }
    };

    let log = match log {
        Some(log) if args.debug_log || settings.diagnostics() => {
            Some(log.with_diagnostics().map_err(|e| e.to_string())?)
        }
        log => log,
    };
    if let Some(at) = &args.resume_session_at {
        rewind_to(&mut history, at, log.as_ref(), &session_id, &mut warnings)?;
    }
    clean_up_old_sessions(
        &store,
        &settings,
        log.as_ref().map(|l| l.path().to_path_buf()),
        interactive,
    );
    let trusted = crate::sdk::settings::trust::TrustStore::load(&home).is_trusted(&cwd);
    let roots = DefinitionRoots::new(&cwd, user_home.as_deref(), &home);
    let plugin_list: Vec<serde_json::Value> = plugins
        .plugins
        .iter()
        .map(|p| serde_json::json!({"name": p.name, "path": p.root}))
        .collect();
    let mut commands = CommandRegistry::discover(&roots, trusted);
    let mut agents = AgentCatalog::discover(&roots);
    for plugin in plugins.plugins {
        commands.add_plugin_commands(plugin.commands);
        agents.add_plugin_agents(plugin.agents);
    }
    warnings.extend(commands.warnings.iter().cloned());
    warnings.extend(agents.warnings.iter().cloned());
    let replace = match &args.system_prompt_file {
        Some(path) => Some(read_prompt_file(path, "--system-prompt-file")?),
        None => args.system_prompt.clone(),
    };
    let append = match &args.append_system_prompt_file {
        Some(path) => {
            let file = read_prompt_file(path, "--append-system-prompt-file")?;
            Some(match &args.append_system_prompt {
                Some(text) => format!("{text}\n\n{file}"),
                None => file,
            })
        }
        None => args.append_system_prompt.clone(),
    };
    let append = match (append, structured.is_some()) {
        (Some(text), true) => Some(format!(
            "{text}\n\n{}",
            crate::tools::STRUCTURED_OUTPUT_INSTRUCTION
        )),
        (None, true) => Some(crate::tools::STRUCTURED_OUTPUT_INSTRUCTION.to_string()),
        (append, false) => append,
    };
    let policy = PermissionPolicy {
        mode,
        allow,
        ask,
        deny,
        home: paths::home_dir(),
        additional_dirs: settings
            .merged
            .pointer("/permissions/additionalDirectories")
            .and_then(serde_json::Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(serde_json::Value::as_str)
            .map(std::path::PathBuf::from)
            .chain(args.add_dir.iter().cloned())
            .collect(),
        session_start: Some(std::time::SystemTime::now()),
        sandbox: sandbox_policy(&settings, &cwd, &home, user_home.as_deref(), &mut warnings),
        protected: crate::sdk::settings::protected::protected_paths(
            paths::home_dir().as_deref(),
            Some(&home),
        ),
        ..PermissionPolicy::default()
    };
    let mut instructions = Instructions::new(
        cwd.clone(),
        user_home.clone(),
        home.clone(),
        jiff::Zoned::now().date().to_string(),
        settings.text("/language").map(str::to_string),
    );
    instructions.replace = replace;
    instructions.append = append;
    instructions.read_denial = policy.read_denial(&cwd);
    let BuiltPrompt { prompt, files } = instructions.build(&model);
    let compaction = CompactionConfig {
        auto_threshold: if env_flag("DISABLE_AUTO_COMPACT") {
            None
        } else {
            settings.auto_compact_threshold()?
        },
        instructions: context_files::compact_instructions(&files),
    };
    let info = models::lookup(&model);
    let max_tokens = info.max_output.min(32_000);
    let thinking = match args.thinking.as_deref() {
        None => args.max_thinking_tokens,
        Some("disabled") => Some(0),
        Some("adaptive" | "enabled") => Some(
            args.max_thinking_tokens
                .unwrap_or(DEFAULT_THINKING_BUDGET.min(max_tokens / 2)),
        ),
        Some(other) => {
            return Err(format!(
                "--thinking {other:?}: use adaptive, enabled or disabled"
            ));
        }
    };
    let thinking_budget = match thinking {
        None | Some(0) => None,
        Some(n) if n >= max_tokens => {
            return Err(format!(
                "--max-thinking-tokens {n}: must be below the answer limit of {model} ({max_tokens})"
            ));
        }
        Some(n) => Some(n),
    };
    let config = SessionConfig {
        session_id,
        cwd: cwd.clone(),
        model: model.clone(),
        system_prompt: prompt,
        max_tokens,
        thinking_budget,
        max_rounds: args.max_turns,
        context_window: info.context_window,
        env: settings.env(),
        interactive: asks_client,
        server_tools,
    };
    let mut session = Session::new(config, choice.provider, tools, policy, log)
        .with_history(history, replayed_name)
        .with_hooks(hooks, cwd.clone())
        .with_start_source(start_source)
        .with_compaction(compaction)
        .with_todos(resumed_todos)
        .with_checkpoints(resumed_checkpoints);
    if resumed_mode != Some(mode) && mode != PermissionMode::Default {
        session.set_mode(mode);
    }
    if let Some(bash) = &bash {
        bash.sandboxed_by(session.policy_handle());
    }
    if let Some(name) = args
        .name
        .clone()
        .filter(|n| Some(n.as_str()) != session.name())
    {
        session.rename(name);
    }
    // Connected last, once nothing above can fail: the servers start in the background.
    if let Some(mcp) = &mcp {
        mcp.start();
    }
    let checkpoints = (session.log_path().is_some() && !env_flag("ROBOTA_DISABLE_CHECKPOINTS"))
        .then(|| {
            crate::sdk::checkpoint::Checkpointer::new(
                crate::sdk::checkpoint::store_dir(&home, &cwd),
                cwd.clone(),
            )
        });
    let plugin_places = crate::sdk::plugins::PluginPlaces {
        robota_home: home.clone(),
        cwd: cwd.clone(),
        home: user_home.clone(),
    };
    Ok(Assembled {
        plugin_places,
        mcp,
        commands: Arc::new(commands),
        agents: Arc::new(agents),
        plugins: plugin_list,
        checkpoints,
        instructions: Arc::new(instructions),
        bash,
        session,
        model,
        api_key_source: choice.api_key_source,
        endpoint: choice.endpoint,
        notice: choice.notice,
        warnings,
        structured,
    })
}

/// The Bash sandbox's settings and whether this machine runs it (checked only when the
/// settings do not turn it off; a machine without support is reported once, here).
fn sandbox_policy(
    settings: &Settings,
    cwd: &std::path::Path,
    robota_home: &std::path::Path,
    user_home: Option<&std::path::Path>,
    warnings: &mut Vec<String>,
) -> crate::core::permission::SandboxPolicy {
    let (sandbox, notes) =
        crate::core::permission::SandboxSettings::from_settings(&settings.merged, cwd, user_home);
    warnings.extend(notes);
    let available = sandbox.enabled != Some(false)
        && {
            let support = crate::tools::sandbox::support();
            if let Some(missing) = &support.missing {
                warnings.push(format!(
                "the Bash sandbox is not available on this machine ({missing}); commands are checked by the permission rules only"
            ));
            }
            support.available()
        };
    let mut protected = vec![robota_home.join("settings.json")];
    if let Some(home) = user_home {
        protected.push(home.join(".claude/settings.json"));
        protected.push(home.join(".claude/settings.local.json"));
    }
    crate::core::permission::SandboxPolicy {
        settings: sandbox,
        available,
        protected,
    }
}

/// Whether the environment variable is set to something other than empty, `0` or `false`.
fn env_flag(name: &str) -> bool {
    std::env::var(name).is_ok_and(|v| !matches!(v.trim(), "" | "0" | "false"))
}

/// `--tools`: `None` keeps every tool; `""` none; `default` all; else the names listed
/// (comma- or space-separated).
fn chosen_tools(list: Option<&[String]>) -> Option<Vec<String>> {
    let list = list?;
    let names: Vec<String> = list
        .iter()
        .flat_map(|item| item.split([',', ' ']))
        .map(str::trim)
        .filter(|n| !n.is_empty())
        .map(str::to_string)
        .collect();
    if names.iter().any(|n| n == "default") {
        return None;
    }
    Some(names)
}

fn read_prompt_file(path: &std::path::Path, flag: &str) -> Result<String, String> {
    std::fs::read_to_string(path).map_err(|e| format!("{flag} {}: {e}", path.display()))
}

/// `--resume-session-at`: the history as of message `at` (inclusive), recorded in the log as
/// a rewind line so later resumes see the same; calls it leaves unanswered are answered
/// "not run".
fn rewind_to(
    history: &mut Vec<crate::core::Message>,
    at: &str,
    log: Option<&SessionLog>,
    session_id: &str,
    warnings: &mut Vec<String>,
) -> Result<(), String> {
    let Some(index) = history.iter().position(|m| m.id == at) else {
        return Err(format!(
            "--resume-session-at {at}: session {session_id} has no such message"
        ));
    };
    history.truncate(index + 1);
    let answers = crate::session::repair::answer_orphan_tool_calls(history);
    if let Some(log) = log {
        // The kept message is the next line's parent: the chain branches at `at`.
        let recorded = log
            .append_rewind(at, false, Some(at.to_string()))
            .and_then(|()| match &answers {
                Some(answers) => {
                    log.append_message(answers, crate::session::log::MessageExtra::default())
                }
                None => Ok(()),
            });
        if let Err(e) = recorded {
            warnings.push(format!(
                "could not record the rewind in the session log: {e}"
            ));
        }
    }
    Ok(())
}

/// Claude Code's default transcript retention.
const DEFAULT_CLEANUP_DAYS: f64 = 30.0;

/// Removes session logs older than `cleanupPeriodDays`, never the one being opened nor one
/// another process has open: in the TUI on a background thread (the first frame is not
/// delayed by it), headless before the run (a directory listing; a short run must not exit
/// half way through it).
fn clean_up_old_sessions(
    store: &SessionStore,
    settings: &Settings,
    keep: Option<std::path::PathBuf>,
    background: bool,
) {
    let days = settings
        .merged
        .get("cleanupPeriodDays")
        .and_then(serde_json::Value::as_f64)
        .filter(|d| d.is_finite() && *d >= 0.0)
        .unwrap_or(DEFAULT_CLEANUP_DAYS);
    let max_age = std::time::Duration::from_secs_f64(days.min(1e6) * 86_400.0);
    let store = store.clone();
    let clean = move || {
        let removed = store.remove_older_than(max_age, keep.as_deref());
        if removed > 0 {
            tracing::info!("removed {removed} session log(s) older than {days} days");
        }
    };
    if !background {
        clean();
        return;
    }
    let spawned = std::thread::Builder::new()
        .name("session-cleanup".into())
        .spawn(clean);
    if let Err(e) = spawned {
        tracing::warn!("cannot start the session clean-up: {e}");
    }
}

enum ResumeFrom {
    Query(String),
    Latest,
}

fn new_session_id(args: &Args) -> Result<String, String> {
    match &args.session_id {
        Some(id) if !args.fork_session || args.resume.is_some() || args.continue_session => {
            uuid::Uuid::parse_str(id)
                .map(|u| u.to_string())
                .map_err(|_| format!("--session-id must be a UUID, got {id:?}"))
        }
        _ => Ok(uuid::Uuid::new_v4().to_string()),
    }
}

/// Appends the results replay gave the calls robota stopped during, so the log answers
/// every call from now on (a failed write is only a warning: the history in memory is
/// valid either way).
fn answer_in_log(log: &SessionLog, replayed: &replay::ReplayedSession, warnings: &mut Vec<String>) {
    let Some(results) = &replayed.unanswered_calls else {
        return;
    };
    warnings.push(format!(
        "the session stopped while {} tool call(s) ran; they are marked as not run",
        results.content.len()
    ));
    if let Err(e) = log.append_message(results, crate::session::log::MessageExtra::default()) {
        warnings.push(format!("could not record that in the session log: {e}"));
    }
}
