//! Command-line arguments, spelled as Claude Code spells them so scripts carry over.

use clap::{Parser, ValueEnum};

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OutputFormat {
    Text,
    Json,
    #[value(name = "stream-json")]
    StreamJson,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum InputFormat {
    Text,
    #[value(name = "stream-json")]
    StreamJson,
}

/// robota — a terminal coding agent.
/// Subcommands (anything else is a prompt).
#[derive(Debug, Clone, clap::Subcommand)]
pub enum Subcommand {
    /// Print the merged settings with the file each value comes from.
    Config,
    /// Usage and cost across the sessions under $ROBOTA_HOME: the total, then per day,
    /// per project and per model.
    Stats {
        /// Count only calls on or after this date (YYYY-MM-DD) or time (RFC 3339).
        #[arg(long)]
        since: Option<String>,
        /// Print JSON instead of the table.
        #[arg(long)]
        json: bool,
    },
    /// Trust the current directory: its project settings (allow rules, hooks, MCP servers,
    /// provider hosts) take effect from now on.
    Trust,
    /// robota as an Agent Client Protocol agent on stdio, for editors (Zed, JetBrains,
    /// Neovim, Emacs) to run.
    Acp {
        /// The model (default: the settings' or the provider's).
        #[arg(long)]
        model: Option<String>,
        /// The permission mode sessions start in (default, acceptEdits, plan,
        /// bypassPermissions).
        #[arg(long)]
        permission_mode: Option<String>,
    },
    /// robota as an MCP server.
    Mcp {
        #[command(subcommand)]
        command: McpCommand,
    },
    /// Plugins (Claude Code's layout) and the marketplaces they are installed from.
    #[command(visible_alias = "plugins")]
    Plugin {
        #[command(subcommand)]
        command: PluginCommand,
    },
    /// Session logs and their diagnostics (recorded with --debug-log).
    Session {
        #[command(subcommand)]
        command: SessionCommand,
    },
    /// The background sessions of this machine (robota --bg): id, name, state, turns,
    /// cost, directory.
    #[command(visible_alias = "agents")]
    Ps {
        /// Print JSON instead of the table.
        #[arg(long)]
        json: bool,
    },
    /// A background session's transcript.
    Logs {
        /// Session id, name or unique id prefix.
        id: String,
        /// Keep printing as the session goes on, until it ends.
        #[arg(short, long)]
        follow: bool,
        /// Print the session's stream-json lines as they are.
        #[arg(long)]
        stream_json: bool,
    },
    /// Open the full-screen UI on a background session: its transcript so far, then live;
    /// prompts and permission answers go to it. Ctrl+B d detaches and leaves it running.
    /// An ended session opens read-only.
    Attach {
        /// Session id, name or unique id prefix.
        id: String,
    },
    /// Queue a prompt into a running background session.
    Send {
        /// Session id, name or unique id prefix.
        id: String,
        /// The prompt.
        message: String,
    },
    /// End a background session and every command it started.
    Stop {
        /// Session id, name or unique id prefix.
        id: String,
    },
    /// Remove an ended background session and its worktree (its conversation log stays
    /// for --resume unless --purge).
    Rm {
        /// Session id, name or unique id prefix.
        id: String,
        /// Remove its worktree even with uncommitted changes.
        #[arg(long)]
        force: bool,
        /// Remove its conversation log too (it can no longer be resumed).
        #[arg(long)]
        purge: bool,
    },
}

/// `robota session …`.
#[derive(Debug, Clone, clap::Subcommand)]
pub enum SessionCommand {
    /// Check a session's diagnostics log: every provider request answered, every tool
    /// request given a result, every payload file present and intact.
    Validate {
        /// Session id, name or unique id prefix.
        id: String,
    },
    /// Print a session's conversation as Markdown, or (with --request) what its
    /// diagnostics log recorded.
    Show {
        /// Session id, name or unique id prefix.
        id: String,
        /// Print provider request N (1-based) exactly as it went to the provider.
        #[arg(long, value_name = "N")]
        request: Option<u64>,
        /// Print the request's provider-neutral envelope instead of its body.
        #[arg(long, requires = "request")]
        envelope: bool,
    },
}

/// `robota plugin …`.
#[derive(Debug, Clone, clap::Subcommand)]
pub enum PluginCommand {
    /// List the plugins this directory's sessions load, with what each adds, and the
    /// plugins that could not be loaded.
    List {
        /// Also load the plugin in this folder, as `robota --plugin-dir` does; repeatable.
        #[arg(long = "plugin-dir", value_name = "DIR")]
        plugin_dir: Vec<std::path::PathBuf>,
    },
    /// Install a plugin from a marketplace and enable it.
    #[command(visible_alias = "i")]
    Install {
        /// `name@marketplace` (or a name only one known marketplace has).
        plugin: String,
        /// The settings file that enables it: user, project or local.
        #[arg(long, default_value = "user")]
        scope: String,
    },
    /// Uninstall a plugin (its data folder is kept).
    #[command(visible_alias = "remove")]
    Uninstall {
        plugin: String,
        #[arg(long, default_value = "user")]
        scope: String,
    },
    /// Turn an installed plugin on (`enabledPlugins` in the scope's settings file).
    Enable {
        plugin: String,
        #[arg(long, default_value = "user")]
        scope: String,
    },
    /// Turn an installed plugin off.
    Disable {
        plugin: String,
        #[arg(long, default_value = "user")]
        scope: String,
    },
    /// Refresh a plugin's marketplace and reinstall the plugin from it.
    Update { plugin: String },
    /// Plugin marketplaces.
    Marketplace {
        #[command(subcommand)]
        command: MarketplaceCommand,
    },
}

/// `robota plugin marketplace …`.
#[derive(Debug, Clone, clap::Subcommand)]
pub enum MarketplaceCommand {
    /// Add a marketplace: a folder, a marketplace.json file, a git URL (`#ref` optional)
    /// or a GitHub `owner/repo[@ref]`.
    Add { source: String },
    /// List the known marketplaces.
    List,
    /// Forget a marketplace (plugins installed from it stay).
    #[command(visible_alias = "rm")]
    Remove { name: String },
    /// Pull cloned marketplaces and re-read them (all, or the one named).
    Update { name: Option<String> },
}

/// `robota mcp …`.
#[derive(Debug, Clone, clap::Subcommand)]
pub enum McpCommand {
    /// Serve MCP on stdio: tools `robota` (run a task in a new session) and
    /// `robota-reply` (continue a session), for other agents to delegate to robota.
    Serve,
}

/// The command line: its flags, and a subcommand instead of a session.
#[derive(Debug, Clone, Parser)]
#[command(
    name = "robota",
    version,
    about = "A full-screen terminal coding agent: one binary, every major provider, Claude Code's files.",
    long_about = None,
    args_conflicts_with_subcommands = true
)]
pub struct Args {
    /// A subcommand (`config`, `trust`, `acp`, `mcp`, `plugin`, `session`, `stats`).
    #[command(subcommand)]
    pub command: Option<Subcommand>,

    /// The prompt (with -p: the whole task; piped stdin is added to it).
    pub prompt: Option<String>,

    /// Run the prompt in a background session, detached from this terminal; prints its
    /// id (see robota ps, logs, send, stop, rm).
    #[arg(long)]
    pub bg: bool,

    /// Work in a new git worktree on a new branch robota/NAME, beside the repository
    /// (NAME generated when not given).
    #[arg(short = 'w', long, num_args = 0..=1, require_equals = true, default_missing_value = "", value_name = "NAME")]
    pub worktree: Option<String>,

    /// Print the answer and exit (headless); nothing can prompt for approval.
    #[arg(short = 'p', long = "print")]
    pub print: bool,

    /// Output of print mode: the answer, one JSON result, or NDJSON messages.
    #[arg(long, value_enum, default_value = "text")]
    pub output_format: OutputFormat,

    /// Input of print mode: text, or one JSON user message per stdin line.
    #[arg(long, value_enum, default_value = "text")]
    pub input_format: InputFormat,

    /// With stream-json output: also emit token deltas as `stream_event` lines.
    #[arg(long)]
    pub include_partial_messages: bool,

    /// With stream-json output: emit `system/hook_started` and `system/hook_response`
    /// lines for every hook (SessionStart hooks are always emitted).
    #[arg(long)]
    pub include_hook_events: bool,

    /// Full turn-by-turn output (required by stream-json output, as in Claude Code).
    #[arg(long)]
    pub verbose: bool,

    /// Record replay-grade diagnostics beside the session log: every provider request as
    /// sent, the raw responses, tool requests and results (settings: `diagnostics: true`).
    #[arg(long)]
    pub debug_log: bool,

    /// Model id (default: the provider's current Sonnet-class model).
    #[arg(long)]
    pub model: Option<String>,

    /// default, acceptEdits, plan or bypassPermissions.
    #[arg(long)]
    pub permission_mode: Option<String>,

    /// Lets the model think before answering, up to this many tokens (0: no thinking).
    #[arg(long)]
    pub max_thinking_tokens: Option<u32>,

    /// `stdio`: ask the program on the other end of stdin/stdout (`can_use_tool` control
    /// requests; needs --input-format stream-json).
    #[arg(long)]
    pub permission_prompt_tool: Option<String>,

    /// Same as --permission-mode bypassPermissions.
    #[arg(long)]
    pub dangerously_skip_permissions: bool,

    /// Stop after this many tool rounds (print mode), with a final summary.
    #[arg(long)]
    pub max_turns: Option<u32>,

    /// Stop a print-mode turn that runs longer than this many seconds, with an error
    /// result naming what it waited on (exit 124; 0: no deadline; setting
    /// `maxTurnSeconds`).
    #[arg(long, value_name = "N")]
    pub max_turn_seconds: Option<u64>,

    /// Replace the built-in system prompt.
    #[arg(long)]
    pub system_prompt: Option<String>,

    /// Add text to the end of the system prompt.
    #[arg(long)]
    pub append_system_prompt: Option<String>,

    /// Allow rules, e.g. "Bash(git diff *),Read".
    #[arg(long = "allowedTools", visible_alias = "allowed-tools", num_args = 1..)]
    pub allowed_tools: Vec<String>,

    /// Deny rules; a bare tool name also removes the tool.
    #[arg(long = "disallowedTools", visible_alias = "disallowed-tools", num_args = 1..)]
    pub disallowed_tools: Vec<String>,

    /// Continue the most recent session of this directory.
    #[arg(short = 'c', long = "continue")]
    pub continue_session: bool,

    /// Resume a session by id, name or id prefix.
    #[arg(short = 'r', long, num_args = 0..=1, default_missing_value = "")]
    pub resume: Option<String>,

    /// With --resume/--continue: resume as of this message (its id, the `uuid` of a
    /// stream-json message); what came after it is left out from then on.
    #[arg(long)]
    pub resume_session_at: Option<String>,

    /// With --resume/--continue: continue as a new session, leaving the original as it was.
    #[arg(long)]
    pub fork_session: bool,

    /// Use this session id (a UUID) for a new session.
    #[arg(long)]
    pub session_id: Option<String>,

    /// Do not write a session log (print mode).
    #[arg(long)]
    pub no_session_persistence: bool,

    /// More working directories the tools may read and edit without asking for the path.
    #[arg(long = "add-dir", num_args = 1..)]
    pub add_dir: Vec<std::path::PathBuf>,

    /// MCP servers from a JSON file or inline JSON (`{"mcpServers": {...}}` or the bare
    /// map); repeatable.
    #[arg(long = "mcp-config", num_args = 1..)]
    pub mcp_config: Vec<String>,

    /// Load the plugin in this folder (Claude Code's layout) for this session; repeatable.
    #[arg(long = "plugin-dir", value_name = "DIR")]
    pub plugin_dir: Vec<std::path::PathBuf>,

    /// Use only the servers of --mcp-config, none from files.
    #[arg(long)]
    pub strict_mcp_config: bool,

    /// Start with every customisation off, for troubleshooting: no hooks, plugins, MCP
    /// servers, skills, custom commands, subagents or status line (the project's context
    /// files and settings otherwise apply).
    #[arg(long)]
    pub safe_mode: bool,

    /// Provider profile from settings (or anthropic, openai, google).
    #[arg(long)]
    pub provider: Option<String>,

    /// An extra settings layer: a file path or inline JSON.
    #[arg(long)]
    pub settings: Option<String>,

    /// Name the session.
    #[arg(short = 'n', long)]
    pub name: Option<String>,

    /// Replace the built-in system prompt with this file's text.
    #[arg(long, conflicts_with = "system_prompt")]
    pub system_prompt_file: Option<std::path::PathBuf>,

    /// Add this file's text to the end of the system prompt.
    #[arg(long)]
    pub append_system_prompt_file: Option<std::path::PathBuf>,

    /// The tools the model gets: "default" (all), "" (none) or names, e.g. "Read,Grep".
    #[arg(long, num_args = 1.., allow_hyphen_values = false)]
    pub tools: Option<Vec<String>>,

    /// Stop once the run has cost this many US dollars (print mode and protocol drivers).
    #[arg(long)]
    pub max_budget_usd: Option<f64>,

    /// The model to switch to for the rest of the run when the main one is overloaded.
    #[arg(long)]
    pub fallback_model: Option<String>,

    /// The answer must be JSON valid against this JSON Schema (print mode): the model
    /// hands it over through a `StructuredOutput` tool; the result carries it as
    /// `structured_output`.
    #[arg(long)]
    pub json_schema: Option<String>,

    /// Which settings files are read: a comma list of user, project, local (empty: none).
    #[arg(long)]
    pub setting_sources: Option<String>,

    /// `adaptive` or `enabled` (the model may think), or `disabled`.
    #[arg(long)]
    pub thinking: Option<String>,

    /// Options robota accepts for the Claude Agent SDK's sake and cannot honour yet; each
    /// is named on stderr when given.
    #[command(flatten)]
    pub accepted: AcceptedFlags,
}

/// Flags the Claude Agent SDK may pass that robota does not act on (yet). They are
/// accepted, so an app does not break, and named on stderr.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct AcceptedFlags {
    /// Accepted and not acted on: beta headers of Anthropic's API.
    #[arg(long, num_args = 1.., hide = true)]
    pub betas: Vec<String>,
    /// Accepted and not acted on: how much effort the model spends (low, medium, high, max).
    #[arg(long, hide = true)]
    pub effort: Option<String>,
    /// Accepted and not acted on: how thinking is displayed.
    #[arg(long, hide = true)]
    pub thinking_display: Option<String>,
    /// Accepted and not acted on: a token budget for the task.
    #[arg(long, hide = true)]
    pub task_budget: Option<String>,
    /// Accepted and not acted on.
    #[arg(long, hide = true)]
    pub resume_drops_turn: Option<String>,
    /// Accepted and not acted on: mirror the session to the SDK's session store.
    #[arg(long, hide = true)]
    pub session_mirror: bool,
}

impl AcceptedFlags {
    /// One stderr line per accepted flag that was given.
    pub fn notes(&self) -> Vec<String> {
        let mut given = Vec::new();
        if !self.betas.is_empty() {
            given.push("--betas");
        }
        if self.effort.is_some() {
            given.push("--effort");
        }
        if self.thinking_display.is_some() {
            given.push("--thinking-display");
        }
        if self.task_budget.is_some() {
            given.push("--task-budget");
        }
        if self.resume_drops_turn.is_some() {
            given.push("--resume-drops-turn");
        }
        if self.session_mirror {
            given.push("--session-mirror");
        }
        given
            .into_iter()
            .map(|flag| format!("{flag} is accepted but robota does not act on it yet"))
            .collect()
    }
}
