//! Slash commands: the one registry every client reads (name, description, argument hint,
//! who runs it, whether it may run while a turn is in progress), the one parse of a
//! submission into a typed [`Submission`] (`submission.rs`), and the built-ins' execution
//! against a session (`builtin.rs`). The TUI adds completion on top of the same registry;
//! headless runs `/name args` through the same parse.

mod builtin;
pub mod definition;
pub mod doctor;
mod error;
pub(crate) mod expand;
mod export;
pub mod grants;
mod info;
mod lsp;
mod registry;
mod shell_hook;
mod submission;

pub(crate) use builtin::{CommandEffect, execute};
pub(crate) use builtin::{help_text, mode_set, parse_mode};
pub use definition::{DefinitionKind, DefinitionRoots, Origin, PromptCommand};
pub use error::CommandError;
pub use export::transcript as markdown_transcript;
pub(crate) use info::{INIT_PROMPT, agents_report, skills_report, status_report};
pub(crate) use lsp::lsp_report;
pub use registry::{CommandEntry, CommandRegistry};
pub use submission::{Submission, SubmissionId};

use robota_core::permission::PermissionMode;

/// Who carries a command out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CommandScope {
    /// The session runs it (`InteractiveSession::submit`), in every client.
    Session,
    /// Only an interactive client can (pickers, clipboard, leaving): the client runs it
    /// itself; submitted to a session it is refused with a message.
    Client,
}

/// A command as listed in help and completion.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CommandSpec {
    /// The name typed after `/`.
    pub name: &'static str,
    /// One line saying what it does.
    pub description: &'static str,
    /// Its arguments as completion shows them (empty when it takes none).
    pub argument_hint: &'static str,
    /// Whether the session or only an interactive client runs it.
    pub scope: CommandScope,
    /// Runs at once even while a turn is in progress (it reads or changes nothing the
    /// turn holds); every other submission waits in the queue behind the turn.
    pub during_turn: bool,
}

const fn session(
    name: &'static str,
    description: &'static str,
    argument_hint: &'static str,
    during_turn: bool,
) -> CommandSpec {
    CommandSpec {
        name,
        description,
        argument_hint,
        scope: CommandScope::Session,
        during_turn,
    }
}

const fn client(
    name: &'static str,
    description: &'static str,
    argument_hint: &'static str,
) -> CommandSpec {
    CommandSpec {
        name,
        description,
        argument_hint,
        scope: CommandScope::Client,
        during_turn: true,
    }
}

/// Every command, session ones first.
pub(crate) const COMMANDS: &[CommandSpec] = &[
    session("help", "List the available commands", "", true),
    session("clear", "Clear the conversation and start fresh", "", false),
    session("model", "Show or set the model", "[model id]", false),
    session(
        "mode",
        "Show or set the permission mode",
        "[default|acceptEdits|plan|bypassPermissions]",
        true,
    ),
    session(
        "permissions",
        "Show or set the permission mode",
        "[mode]",
        true,
    ),
    session("context", "Show how full the context window is", "", false),
    session(
        "cost",
        "Show token usage and cost of this session",
        "",
        false,
    ),
    session(
        "compact",
        "Summarise the conversation to free context",
        "[focus]",
        false,
    ),
    session(
        "mcp",
        "Show the MCP servers, or reconnect one",
        "[reconnect <name>]",
        false,
    ),
    session(
        "lsp",
        "Show the language servers: which run, for which roots, their state and last error",
        "",
        false,
    ),
    session(
        "plugin",
        "Manage plugins and marketplaces (list, install, enable, disable, uninstall, update, marketplace add|list|remove|update)",
        "[list | install name@marketplace | marketplace add <source> | …]",
        false,
    ),
    session(
        "rewind",
        "Go back to an earlier prompt: code, conversation or both",
        "[message id] [both|conversation|code|summarize]",
        false,
    ),
    session(
        "rename",
        "Name this session (resume it by that name)",
        "<name>",
        false,
    ),
    session(
        "export",
        "Write the conversation to a Markdown file",
        "[file]",
        false,
    ),
    session(
        "init",
        "Have the model study the repository and write or improve AGENTS.md",
        "[notes]",
        false,
    ),
    session(
        "agents",
        "List the subagents the model can start, with where each is defined",
        "",
        false,
    ),
    session(
        "skills",
        "List the skills and custom commands, with where each is defined",
        "",
        false,
    ),
    session(
        "status",
        "Show the version, provider, model, directories and what was loaded",
        "",
        false,
    ),
    session(
        "language",
        "Show or set the language answers are written in (saved in your settings)",
        "[language|default]",
        false,
    ),
    session(
        "doctor",
        "Check the key, the provider's reachability, settings and the terminal",
        "",
        false,
    ),
    session(
        "tasks",
        "List background Bash jobs and running subagents, or stop one",
        "[stop <id>]",
        true,
    ),
    client(
        "memory",
        "Edit the instruction files (AGENTS.md, CLAUDE.md) in $EDITOR",
        "[project|local|user]",
    ),
    client(
        "reset",
        "Move your user settings aside (provider, model, keys) and leave robota",
        "[confirm]",
    ),
    client(
        "resume",
        "Resume an earlier session of this directory",
        "[id or name]",
    ),
    client(
        "copy",
        "Copy the last answer (or its code block n) to the clipboard",
        "[n]",
    ),
    client(
        "vim",
        "Toggle vim key bindings in the prompt (saved in your settings)",
        "",
    ),
    client(
        "bg",
        "Move this session to the background and leave (robota attach brings it back)",
        "[prompt]",
    ),
    client("exit", "Leave robota", ""),
];

/// Every command a client may offer, in registry order.
pub fn all() -> impl Iterator<Item = &'static CommandSpec> {
    COMMANDS.iter()
}

/// The command of that name (`quit` is `exit`).
pub fn find(name: &str) -> Option<&'static CommandSpec> {
    let name = if name == "quit" { "exit" } else { name };
    COMMANDS.iter().find(|c| c.name == name)
}

/// The fixed values a command's argument takes, for completion (empty: free text).
pub fn argument_choices(name: &str) -> Vec<&'static str> {
    match name {
        "mode" | "permissions" => PermissionMode::ALL.iter().map(|m| m.as_str()).collect(),
        "memory" => vec!["project", "local", "user"],
        _ => Vec::new(),
    }
}

/// Up to three built-in command names close to `name` (a typo, a prefix), closest first.
pub fn closest(name: &str) -> Vec<String> {
    closest_among(name, COMMANDS.iter().map(|c| c.name.to_string()))
}

/// Up to three of `names` close to `name` (a typo, a prefix), closest first.
pub(crate) fn closest_among(name: &str, names: impl Iterator<Item = String>) -> Vec<String> {
    let mut scored: Vec<(f64, String)> = names
        .map(|candidate| {
            let score = if candidate.starts_with(name) || name.starts_with(candidate.as_str()) {
                1.0
            } else {
                strsim::jaro_winkler(name, &candidate)
            };
            (score, candidate)
        })
        .filter(|(score, _)| *score >= 0.8)
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    scored.dedup_by(|a, b| a.1 == b.1);
    scored.into_iter().take(3).map(|(_, n)| n).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_client_commands_are_marked() {
        let mut names: Vec<&str> = all().map(|c| c.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), COMMANDS.len());
        assert_eq!(find("copy").map(|c| c.scope), Some(CommandScope::Client));
        assert_eq!(find("quit").map(|c| c.name), Some("exit"));
        assert_eq!(find("help").map(|c| c.during_turn), Some(true));
        assert_eq!(find("clear").map(|c| c.during_turn), Some(false));
    }

    #[test]
    fn typos_and_prefixes_find_their_commands() {
        assert_eq!(closest("hlep").first().map(String::as_str), Some("help"));
        assert_eq!(closest("mod"), vec!["mode", "model"]);
        assert_eq!(
            closest("contxt").first().map(String::as_str),
            Some("context")
        );
        assert!(closest("zzzzzz").is_empty());
    }
}
