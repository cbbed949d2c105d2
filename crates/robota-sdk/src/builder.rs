//! `SessionBuilder`: an [`InteractiveSession`] put together from what an embedding program
//! knows — a provider it created, a model, a working directory — without the session's
//! internals. It is a front for the one assembly ([`ProjectSession`]) with a bare
//! profile: no settings files, nothing discovered on disk but the project's context files,
//! no session log; everything else is what the builder was told.

use std::path::PathBuf;
use std::sync::Arc;

use robota_core::permission::{PermissionMode, PermissionRule};
use robota_core::{Message, Provider, Tool};

use super::assembly::{
    AssemblyError, Discovery, ProjectOptions, ProjectPaths, ProjectSession, ProviderSource,
};
use super::errors::{ErrorKind, TurnError};
use super::interactive::InteractiveSession;

/// Builds an [`InteractiveSession`] over a provider the caller created.
///
/// By default the session has robota's built-in tools (Bash, Glob, Grep, Read, Edit,
/// Write, TodoWrite, WebFetch, ExitPlanMode, and Anthropic's web search on an Anthropic
/// provider) working in `cwd`, Bash in the sandbox where the machine has one, the built-in
/// system prompt with the project's context files (`AGENTS.md`, `CLAUDE.md` … from `cwd`
/// up to the root), the [`PermissionMode::Default`] mode, no turn limit, and **no one to
/// ask** about permissions: a tool call that would need approval is denied, and the model
/// is told why. It reads no settings files and keeps no session log; for the session the
/// command line builds (settings, hooks, MCP servers, plugins, commands, skills,
/// subagents, the log) use [`ProjectSession::assemble`].
///
/// Call [`ask_permissions`](Self::ask_permissions) to receive the permission questions as
/// [`SessionEvent::PermissionRequest`](super::SessionEvent::PermissionRequest) events
/// instead, or [`allow`](Self::allow) to pre-approve calls by rule.
///
/// ```no_run
/// # async fn demo(
/// #     provider: std::sync::Arc<dyn robota_core::Provider>,
/// # ) -> Result<(), robota_sdk::TurnError> {
/// use robota_sdk::{PermissionMode, SessionBuilder};
///
/// let session = SessionBuilder::new(provider, "claude-sonnet-4-6", "/path/to/project")
///     .permission_mode(PermissionMode::AcceptEdits)
///     .allow("Bash(cargo test:*)")
///     .max_turns(20)
///     .start()?;
/// # session.close().await;
/// # Ok(())
/// # }
/// ```
pub struct SessionBuilder {
    provider: Arc<dyn Provider>,
    model: String,
    cwd: PathBuf,
    session_id: Option<String>,
    mode: PermissionMode,
    max_turns: Option<u32>,
    max_tokens: Option<u32>,
    system_prompt: Option<String>,
    append_system_prompt: Option<String>,
    context_files: bool,
    builtin_tools: bool,
    tools: Vec<Arc<dyn Tool>>,
    allow: Vec<String>,
    deny: Vec<String>,
    /// Rules given to `allow`/`deny` that do not parse: `start` refuses them.
    bad_rules: Vec<String>,
    ask_permissions: bool,
    env: Vec<(String, String)>,
    history: Vec<Message>,
}

impl SessionBuilder {
    /// A session that sends `model`'s requests to `provider` and works in `cwd` (the
    /// tools' relative paths resolve against it, Bash starts there).
    pub fn new(
        provider: Arc<dyn Provider>,
        model: impl Into<String>,
        cwd: impl Into<PathBuf>,
    ) -> Self {
        SessionBuilder {
            provider,
            model: model.into(),
            cwd: cwd.into(),
            session_id: None,
            mode: PermissionMode::Default,
            max_turns: None,
            max_tokens: None,
            system_prompt: None,
            append_system_prompt: None,
            context_files: true,
            builtin_tools: true,
            tools: Vec::new(),
            allow: Vec::new(),
            deny: Vec::new(),
            bad_rules: Vec::new(),
            ask_permissions: false,
            env: Vec::new(),
            history: Vec::new(),
        }
    }

    /// The session's id, as events and [`SessionState`](super::SessionState) report it
    /// (default: a fresh UUID).
    pub fn session_id(mut self, id: impl Into<String>) -> Self {
        self.session_id = Some(id.into());
        self
    }

    /// The permission mode the session starts in (default [`PermissionMode::Default`]:
    /// reads run, edits and commands need approval).
    pub fn permission_mode(mut self, mode: PermissionMode) -> Self {
        self.mode = mode;
        self
    }

    /// At most `turns` provider calls that run tools per prompt; a prompt that needs more
    /// ends with [`TurnEnd::MaxTurns`](super::TurnEnd::MaxTurns).
    pub fn max_turns(mut self, turns: u32) -> Self {
        self.max_turns = Some(turns);
        self
    }

    /// The answer limit in tokens per provider call (default: the model's own limit, at
    /// most 32 000).
    pub fn max_tokens(mut self, tokens: u32) -> Self {
        self.max_tokens = Some(tokens);
        self
    }

    /// Replaces robota's built-in instructions at the top of the system prompt (the
    /// environment block and context files still follow).
    pub fn system_prompt(mut self, text: impl Into<String>) -> Self {
        self.system_prompt = Some(text.into());
        self
    }

    /// Adds text at the end of the system prompt.
    pub fn append_system_prompt(mut self, text: impl Into<String>) -> Self {
        self.append_system_prompt = Some(text.into());
        self
    }

    /// Whether the project's context files (`AGENTS.md`, `CLAUDE.md`, `CLAUDE.local.md`,
    /// `.claude/CLAUDE.md` from `cwd` up to the root) join the system prompt (default:
    /// yes). The user's own files under the home directory are never read.
    pub fn context_files(mut self, read: bool) -> Self {
        self.context_files = read;
        self
    }

    /// Whether the built-in tools are offered (default: yes). Without them the model has
    /// only the tools added with [`tool`](Self::tool).
    pub fn builtin_tools(mut self, offered: bool) -> Self {
        self.builtin_tools = offered;
        self
    }

    /// Adds a tool of the embedding program, offered after the built-in ones. Its
    /// [`RiskClass`](robota_core::RiskClass) decides whether a call needs approval, as
    /// for the built-ins.
    pub fn tool(mut self, tool: Arc<dyn Tool>) -> Self {
        self.tools.push(tool);
        self
    }

    /// Allows calls matching a permission rule without asking, in Claude Code's syntax:
    /// `Bash(git status)`, `Edit(src/**)`, `WebFetch(domain:example.com)`, or a tool name
    /// for all its calls. A rule that does not parse makes [`start`](Self::start) fail.
    pub fn allow(mut self, rule: &str) -> Self {
        match PermissionRule::parse(rule) {
            Some(_) => self.allow.push(rule.to_string()),
            None => self.bad_rules.push(rule.to_string()),
        }
        self
    }

    /// Refuses calls matching a permission rule (same syntax as [`allow`](Self::allow));
    /// deny rules win over allow rules and over every mode.
    pub fn deny(mut self, rule: &str) -> Self {
        match PermissionRule::parse(rule) {
            Some(_) => self.deny.push(rule.to_string()),
            None => self.bad_rules.push(rule.to_string()),
        }
        self
    }

    /// Whether calls that need approval are asked about (default: no, they are denied).
    /// When yes, each question arrives as a
    /// [`SessionEvent::PermissionRequest`](super::SessionEvent::PermissionRequest) and the
    /// tool call waits until the program answers it with
    /// [`PermissionRequest::respond`](super::PermissionRequest::respond).
    pub fn ask_permissions(mut self, ask: bool) -> Self {
        self.ask_permissions = ask;
        self
    }

    /// Adds an environment variable for the processes the tools start (Bash).
    pub fn env(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.env.push((name.into(), value.into()));
        self
    }

    /// A conversation to continue: the session starts with these messages (alternating
    /// user and assistant, as an earlier session left them). An assistant message's
    /// `usage` seeds the context estimate, so a conversation near the model's window is
    /// compacted before the first prompt.
    pub fn history(mut self, messages: Vec<Message>) -> Self {
        self.history = messages;
        self
    }

    /// Starts the session's task on the current tokio runtime; submit to it and read its
    /// events. Fails, starting nothing, when a rule given to [`allow`](Self::allow) or
    /// [`deny`](Self::deny) does not parse (a mistyped deny rule must not silently protect
    /// nothing); the error is of kind [`ErrorKind::Config`] and names the rules.
    pub fn start(self) -> Result<InteractiveSession, TurnError> {
        if !self.bad_rules.is_empty() {
            let rules = self
                .bad_rules
                .iter()
                .map(|r| format!("{r:?}"))
                .collect::<Vec<_>>()
                .join(", ");
            return Err(TurnError::new(
                ErrorKind::Config,
                format!("permission rules that do not parse: {rules}"),
            )
            .with_hint("write a rule as `Tool` or `Tool(specifier)`, e.g. `Bash(git status)`"));
        }
        let provider = ProviderSource::Given(self.provider.clone());
        let paths = ProjectPaths::from_env(self.cwd.clone());
        let session = ProjectSession::assemble(paths, self.into_options(), provider)
            .map_err(assembly_error)?;
        Ok(session.start())
    }

    /// The assembly's options for what the builder was told.
    fn into_options(self) -> ProjectOptions {
        ProjectOptions {
            setting_sources: Some(Vec::new()),
            discovery: if self.context_files {
                Discovery::ProjectContextFiles
            } else {
                Discovery::Nothing
            },
            ask_permissions: self.ask_permissions,
            model: Some(self.model),
            permission_mode: Some(self.mode),
            allow: self.allow,
            deny: self.deny,
            tools: (!self.builtin_tools).then(Vec::new),
            program_tools: self.tools,
            env: self.env,
            history: self.history,
            session_id: self.session_id,
            no_log: true,
            system_prompt: self.system_prompt,
            append_system_prompt: self.append_system_prompt,
            max_turns: self.max_turns,
            max_tokens: self.max_tokens,
            ..ProjectOptions::default()
        }
    }
}

/// An assembly that failed: the builder's options were not usable.
fn assembly_error(error: AssemblyError) -> TurnError {
    TurnError::new(ErrorKind::Config, error.to_string())
}
