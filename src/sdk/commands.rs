//! Slash commands: the registry of built-ins (name, description, argument hint) and their
//! execution against a session. Prompts such as `/model claude-haiku-4-5` run here in
//! headless mode too; the TUI adds completion on top of the same registry.

use std::fmt::Write;

use crate::core::models;
use crate::core::permission::PermissionMode;
use crate::session::Session;

/// A command as listed in help and completion.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CommandSpec {
    pub name: &'static str,
    pub description: &'static str,
    pub argument_hint: &'static str,
}

/// What running a command produced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CommandEffect {
    Output(String),
}

pub const BUILTINS: &[CommandSpec] = &[
    CommandSpec {
        name: "help",
        description: "List the available commands",
        argument_hint: "",
    },
    CommandSpec {
        name: "clear",
        description: "Clear the conversation and start fresh",
        argument_hint: "",
    },
    CommandSpec {
        name: "model",
        description: "Show or set the model",
        argument_hint: "[model id]",
    },
    CommandSpec {
        name: "mode",
        description: "Show or set the permission mode",
        argument_hint: "[default|acceptEdits|plan|bypassPermissions]",
    },
    CommandSpec {
        name: "permissions",
        description: "Show or set the permission mode",
        argument_hint: "[mode]",
    },
    CommandSpec {
        name: "context",
        description: "Show how full the context window is",
        argument_hint: "",
    },
    CommandSpec {
        name: "cost",
        description: "Show token usage and cost of this session",
        argument_hint: "",
    },
    CommandSpec {
        name: "rename",
        description: "Name this session (resume it by that name)",
        argument_hint: "<name>",
    },
];

/// Commands only an interactive client runs (pickers, clipboard, leaving); listed next to
/// [`BUILTINS`] for completion and help, executed by the client itself.
pub const INTERACTIVE: &[CommandSpec] = &[
    CommandSpec {
        name: "resume",
        description: "Resume an earlier session of this directory",
        argument_hint: "[id or name]",
    },
    CommandSpec {
        name: "copy",
        description: "Copy the last answer (or its code block n) to the clipboard",
        argument_hint: "[n]",
    },
    CommandSpec {
        name: "exit",
        description: "Leave robota",
        argument_hint: "",
    },
];

/// Every command a client may offer: the built-ins, then the interactive ones.
pub fn all() -> impl Iterator<Item = &'static CommandSpec> {
    BUILTINS.iter().chain(INTERACTIVE)
}

/// The fixed values a command's argument takes, for completion (empty: free text).
pub fn argument_choices(name: &str) -> Vec<&'static str> {
    match name {
        "mode" | "permissions" => PermissionMode::ALL.iter().map(|m| m.as_str()).collect(),
        _ => Vec::new(),
    }
}

/// Splits `/name args` into its parts.
pub fn parse_slash(prompt: &str) -> Option<(&str, &str)> {
    let rest = prompt.trim_start().strip_prefix('/')?;
    let (name, args) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
    (!name.is_empty() && !name.contains('/')).then_some((name, args.trim()))
}

pub fn find(name: &str) -> Option<&'static CommandSpec> {
    BUILTINS.iter().find(|c| c.name == name)
}

/// Runs a built-in command; `Err` carries a message for the user.
pub fn execute(session: &mut Session, name: &str, args: &str) -> Result<CommandEffect, String> {
    let output = match name {
        "help" => {
            let mut out = String::from("Commands:\n");
            for c in BUILTINS {
                let _ = writeln!(out, "  /{} {} — {}", c.name, c.argument_hint, c.description);
            }
            out
        }
        "clear" => {
            session.clear();
            "Conversation cleared.".to_string()
        }
        "model" if args.is_empty() => format!("Model: {}", session.config().model),
        "model" => {
            let info = models::lookup(args);
            session.set_model(args.to_string(), info.context_window);
            format!("Model set to {args}.")
        }
        "mode" | "permissions" if args.is_empty() => {
            format!("Permission mode: {}", session.mode())
        }
        "mode" | "permissions" => {
            let mode = PermissionMode::parse(args).ok_or_else(|| {
                format!(
                    "Unknown mode {args:?}; choose one of: {}",
                    PermissionMode::ALL.map(|m| m.as_str()).join(", ")
                )
            })?;
            session.set_mode(mode);
            format!("Permission mode set to {mode}.")
        }
        "context" => {
            let used = session.context_estimate();
            let window = session.config().context_window;
            format!(
                "Context: {used} of {window} tokens ({:.0}%).",
                used as f64 * 100.0 / window.max(1) as f64
            )
        }
        "cost" => cost_report(session),
        "rename" if args.is_empty() => return Err("Usage: /rename <name>".to_string()),
        "rename" => {
            session.rename(args.to_string());
            format!("Session renamed to {args}.")
        }
        _ => {
            return Err(format!(
                "Unknown command /{name}; /help lists the commands."
            ));
        }
    };
    Ok(CommandEffect::Output(output))
}

fn cost_report(session: &Session) -> String {
    let mut out = String::new();
    let mut total = Some(0.0);
    for (model, usage) in session.usage_by_model() {
        let cost = models::lookup(&model).price.map(|p| p.cost(&usage));
        total = total.zip(cost).map(|(a, b)| a + b);
        let _ = writeln!(
            out,
            "{model}: {} input, {} output, {} cache read, {} cache write tokens — {}",
            usage.input_tokens,
            usage.output_tokens,
            usage.cache_read_input_tokens,
            usage.cache_creation_input_tokens,
            cost.map_or("cost unknown".to_string(), |c| format!("${c:.4}"))
        );
    }
    match total {
        _ if out.is_empty() => "No API usage yet.".to_string(),
        Some(t) => format!("{out}Total: ${t:.4}"),
        None => format!("{out}Total: unknown (a model's price is not known)"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slash_prompts_split_into_name_and_arguments() {
        assert_eq!(
            parse_slash("/model  claude-haiku-4-5 "),
            Some(("model", "claude-haiku-4-5"))
        );
        assert_eq!(parse_slash("/help"), Some(("help", "")));
        assert_eq!(parse_slash("/usr/bin/ls is a path"), None);
        assert_eq!(parse_slash("no slash"), None);
    }
}
