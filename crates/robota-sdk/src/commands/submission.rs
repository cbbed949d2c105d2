//! What a client submits to a session, parsed once: a prompt for the model, a known slash
//! command, an unknown one (answered with the closest names, never sent to the model), or
//! a `!command` for the shell. A path-like prompt (`/usr/bin/env is broken`) stays a
//! prompt, as in Claude Code. Every submission gets a [`SubmissionId`] that its start and
//! end events carry.

use std::fmt;
use std::sync::Arc;

use super::definition::PromptCommand;
use super::{CommandSpec, closest, find};
use robota_core::message::ImageSource;

/// Names one submission in the events it causes; ids count up from 1 in submission order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SubmissionId(
    /// The number (shown as `#n`).
    pub u64,
);

impl fmt::Display for SubmissionId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "#{}", self.0)
    }
}

/// One typed submission.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Submission {
    /// Text for the model.
    Prompt(String),
    /// Text for the model with images attached (pasted, dropped, or sent as image blocks
    /// in stream-json input); the text names each one `[Image #n]`.
    PromptWithImages {
        /// The prompt text, with an `[Image #n]` placeholder per image.
        text: String,
        /// The images, in placeholder order.
        images: Vec<ImageSource>,
    },
    /// A command of the registry with its argument text.
    Command {
        /// The command as the registry lists it.
        spec: &'static CommandSpec,
        /// The text after the name.
        args: String,
    },
    /// A custom command or skill (a Markdown prompt template) with its argument text.
    Custom {
        /// The command's definition (its file, description and template).
        command: Arc<PromptCommand>,
        /// The text after the name.
        args: String,
    },
    /// `/name` that names no command; `suggestions` are the closest known names.
    UnknownCommand {
        /// The name typed, without the `/`.
        name: String,
        /// The text after the name (kept so a registry can resolve the name later).
        args: String,
        /// Known command names close to the one typed, closest first.
        suggestions: Vec<String>,
    },
    /// A `!command` (without the `!`) to run in the session's directory.
    Shell(String),
}

impl Submission {
    /// Parses typed text against the built-in commands: `/name args` is a command (known or
    /// not), anything else a prompt. `!` is not special here: a client that has a shell
    /// mode submits [`Submission::Shell`] itself. A session's
    /// [`CommandRegistry`](super::CommandRegistry) resolves the names of its custom
    /// commands and skills (`InteractiveSession::submit` does).
    pub fn parse(text: &str) -> Submission {
        match parse_slash(text) {
            Some((name, args)) => match find(name) {
                Some(spec) => Submission::Command {
                    spec,
                    args: args.to_string(),
                },
                None => Submission::UnknownCommand {
                    name: name.to_string(),
                    args: args.to_string(),
                    suggestions: closest(name),
                },
            },
            None => Submission::Prompt(text.to_string()),
        }
    }

    /// The text as the user would type it (for queues, echoes and logs).
    pub fn text(&self) -> String {
        match self {
            Submission::Prompt(text) | Submission::PromptWithImages { text, .. } => text.clone(),
            Submission::Command { spec, args } if args.is_empty() => format!("/{}", spec.name),
            Submission::Command { spec, args } => format!("/{} {args}", spec.name),
            Submission::Custom { command, args } if args.is_empty() => {
                format!("/{}", command.name)
            }
            Submission::Custom { command, args } => format!("/{} {args}", command.name),
            Submission::UnknownCommand { name, .. } => format!("/{name}"),
            Submission::Shell(command) => format!("!{command}"),
        }
    }

    /// Whether it runs at once while a turn is in progress instead of waiting behind it.
    pub(crate) fn runs_during_turn(&self) -> bool {
        match self {
            Submission::Command { spec, .. } => spec.during_turn,
            Submission::UnknownCommand { .. } => true,
            Submission::Prompt(_)
            | Submission::PromptWithImages { .. }
            | Submission::Shell(_)
            | Submission::Custom { .. } => false,
        }
    }

    /// A prompt with `images` attached; a plain prompt when there are none.
    pub fn with_images(text: impl Into<String>, images: Vec<ImageSource>) -> Submission {
        let text = text.into();
        if images.is_empty() {
            Submission::Prompt(text)
        } else {
            Submission::PromptWithImages { text, images }
        }
    }

    /// The text of a prompt for the model (with or without images); `None` for commands
    /// and shell lines.
    pub fn prompt(&self) -> Option<&str> {
        match self {
            Submission::Prompt(text) | Submission::PromptWithImages { text, .. } => Some(text),
            _ => None,
        }
    }

    /// The message for an unknown command: `Unknown command: /foo` and the closest names.
    pub(crate) fn unknown_message(name: &str, suggestions: &[String]) -> String {
        match suggestions {
            [] => format!("Unknown command: /{name} — /help lists the commands"),
            names => format!(
                "Unknown command: /{name} — did you mean {}?",
                names
                    .iter()
                    .map(|n| format!("/{n}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        }
    }
}

impl From<&str> for Submission {
    fn from(text: &str) -> Self {
        Submission::parse(text)
    }
}

impl From<String> for Submission {
    fn from(text: String) -> Self {
        Submission::parse(&text)
    }
}

/// Splits `/name args` into its parts; `None` for text that is not a command's shape
/// (no slash, a bare `/`, or a path such as `/usr/bin/env`).
pub(crate) fn parse_slash(prompt: &str) -> Option<(&str, &str)> {
    let rest = prompt.trim_start().strip_prefix('/')?;
    let (name, args) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
    let command_like = !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | ':' | '.'));
    command_like.then_some((name, args.trim()))
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
        assert_eq!(parse_slash("/ alone"), None);
        assert_eq!(parse_slash("no slash"), None);
        assert_eq!(parse_slash("/plugin:cmd x"), Some(("plugin:cmd", "x")));
    }

    #[test]
    fn every_kind_parses_once() {
        assert!(matches!(
            Submission::parse("/help"),
            Submission::Command { spec, .. } if spec.name == "help"
        ));
        assert_eq!(
            Submission::parse("/compactt now"),
            Submission::UnknownCommand {
                name: "compactt".into(),
                args: "now".into(),
                suggestions: vec!["compact".to_string()],
            }
        );
        assert!(matches!(
            Submission::parse("/compact keep the API"),
            Submission::Command { spec, args } if spec.name == "compact" && args == "keep the API"
        ));
        assert_eq!(
            Submission::parse("/usr/bin/env is broken"),
            Submission::Prompt("/usr/bin/env is broken".into())
        );
        assert_eq!(
            Submission::parse("fix it"),
            Submission::Prompt("fix it".into())
        );
        assert_eq!(Submission::parse("/model x").text(), "/model x");
        assert!(Submission::parse("/help").runs_during_turn());
        assert!(!Submission::parse("/clear").runs_during_turn());
        assert!(!Submission::Shell("ls".into()).runs_during_turn());
    }

    #[test]
    fn unknown_commands_name_the_closest() {
        assert_eq!(
            Submission::unknown_message("hlep", &["help".to_string()]),
            "Unknown command: /hlep — did you mean /help?"
        );
        assert_eq!(
            Submission::unknown_message("foo", &[]),
            "Unknown command: /foo — /help lists the commands"
        );
    }
}
