//! A session's command registry: the built-in commands (the static table in `mod.rs`) and
//! the Markdown ones it found — custom commands and skills, later plugin commands — with
//! one lookup, one listing (help, completion, `system/init`) and one closest-name search
//! for every client. Built-in names cannot be taken by a Markdown command: one named like a
//! built-in is left to the model's `Skill` tool.

use std::sync::Arc;

use super::definition::{DefinitionKind, DefinitionRoots, Origin, PromptCommand, discover};
use super::submission::Submission;
use super::{COMMANDS, CommandScope};

/// One entry of a command listing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandEntry {
    /// The name, without the `/`.
    pub name: String,
    /// What it does, in one line.
    pub description: String,
    /// What its arguments look like (`[model]`, `<instructions>`), or empty.
    pub argument_hint: String,
    /// `built-in`, `project`, `user`, `project skill`, `plugin:x`, …
    pub source: String,
    /// Whether the session runs it or only an interactive client can.
    pub scope: CommandScope,
}

/// The commands of one session.
#[derive(Debug, Default)]
pub struct CommandRegistry {
    prompts: Vec<Arc<PromptCommand>>,
    /// Files that could not be read, and names a built-in keeps.
    pub warnings: Vec<String>,
}

impl CommandRegistry {
    /// Drops the commands and skills whose file `denied` says may not be read, with a
    /// warning for each.
    pub fn leave_out(&mut self, denied: impl Fn(&std::path::Path) -> bool) {
        let warnings = &mut self.warnings;
        self.prompts.retain(|command| {
            let keep = !denied(&command.path);
            if !keep {
                warnings.push(format!(
                    "{}: left out, a Read deny rule covers it (or where it links to)",
                    command.path.display()
                ));
            }
            keep
        });
    }

    /// A registry of the built-in commands and `prompts` (a prompt command named like a
    /// built-in is kept for the model only, with a warning).
    pub fn new(prompts: Vec<Arc<PromptCommand>>) -> CommandRegistry {
        let mut registry = CommandRegistry::default();
        for command in prompts {
            if super::find(&command.name).is_some() {
                registry.add_shadowed(&command);
            } else {
                registry.prompts.push(command);
            }
        }
        registry
    }

    /// A Markdown command named like a built-in: typing `/name` runs the built-in, so it
    /// leaves the slash menu, but the model may still invoke it through the `Skill` tool
    /// (as in Claude Code) unless its frontmatter forbids that.
    fn add_shadowed(&mut self, command: &PromptCommand) {
        let (path, name) = (command.path.display(), &command.name);
        if command.disable_model_invocation {
            self.warnings.push(format!(
                "{path}: /{name} is a built-in command, so this one is not used"
            ));
            return;
        }
        self.warnings.push(format!(
            "{path}: /{name} is a built-in command, so typing /{name} runs the built-in; the model can still invoke this one"
        ));
        let mut kept = command.clone();
        kept.user_invocable = false;
        self.prompts.push(Arc::new(kept));
    }

    /// The built-ins and every custom command and skill under `roots`. In a project that
    /// is not `trusted`, the project's commands keep their text but not their
    /// `allowed-tools`: a repository cannot pre-approve what its commands run until the
    /// user trusts it (the rules then ask as usual).
    pub fn discover(roots: &DefinitionRoots, trusted: bool) -> CommandRegistry {
        let found = discover(roots);
        let mut held_back = Vec::new();
        let commands = found
            .commands
            .into_iter()
            .map(|command| {
                if trusted || command.origin != Origin::Project || command.allowed_tools.is_empty()
                {
                    return command;
                }
                held_back.push(format!("/{}", command.name));
                let mut kept = (*command).clone();
                kept.allowed_tools.clear();
                Arc::new(kept)
            })
            .collect();
        let mut registry = CommandRegistry::new(commands);
        registry.warnings.splice(0..0, found.warnings);
        if !held_back.is_empty() {
            registry.warnings.push(format!(
                "this directory is not trusted, so the allowed-tools of its commands and skills were held back: {} (run `robota trust` to trust it)",
                held_back.join(", ")
            ));
        }
        registry
    }

    /// Adds a plugin's commands and skills after those found in folders: a name already
    /// taken (by a built-in or a folder's command) keeps its first owner, with a warning.
    pub(crate) fn add_plugin_commands(&mut self, commands: Vec<PromptCommand>) {
        for command in commands {
            if self.find(&command.name).is_some() {
                self.warnings.push(format!(
                    "{}: /{} is already a command, so this one is not used",
                    command.path.display(),
                    command.name
                ));
            } else if super::find(&command.name).is_some() {
                self.add_shadowed(&command);
            } else {
                self.prompts.push(Arc::new(command));
            }
        }
    }

    /// The Markdown command or skill of that name.
    pub fn find(&self, name: &str) -> Option<Arc<PromptCommand>> {
        self.prompts.iter().find(|c| c.name == name).cloned()
    }

    /// Every Markdown command and skill.
    pub fn prompts(&self) -> &[Arc<PromptCommand>] {
        &self.prompts
    }

    /// The skills and commands the model may invoke through the `Skill` tool: those with
    /// a description that do not forbid it.
    pub(crate) fn model_invocable(&self) -> impl Iterator<Item = &Arc<PromptCommand>> {
        self.prompts
            .iter()
            .filter(|c| !c.disable_model_invocation && !c.description.is_empty())
    }

    /// Whether any skill is defined.
    pub fn has_skills(&self) -> bool {
        self.prompts.iter().any(|c| c.kind == DefinitionKind::Skill)
    }

    /// The names of the skills (not the custom commands), by name, as `system/init` lists
    /// them for Agent SDK programs.
    pub fn skill_names(&self) -> Vec<String> {
        let mut names: Vec<String> = self
            .prompts
            .iter()
            .filter(|c| c.kind == DefinitionKind::Skill)
            .map(|c| c.name.clone())
            .collect();
        names.sort();
        names
    }

    /// Every command a user can type: the built-ins in table order, then the Markdown
    /// ones by name.
    pub fn entries(&self) -> Vec<CommandEntry> {
        let builtins = COMMANDS.iter().map(|spec| CommandEntry {
            name: spec.name.to_string(),
            description: spec.description.to_string(),
            argument_hint: spec.argument_hint.to_string(),
            source: "built-in".to_string(),
            scope: spec.scope,
        });
        let mut prompts: Vec<&Arc<PromptCommand>> =
            self.prompts.iter().filter(|c| c.user_invocable).collect();
        prompts.sort_by(|a, b| a.name.cmp(&b.name));
        builtins
            .chain(prompts.into_iter().map(|c| CommandEntry {
                name: c.name.clone(),
                description: c.description.clone(),
                argument_hint: c.argument_hint.clone(),
                source: c.source_label(),
                scope: CommandScope::Session,
            }))
            .collect()
    }

    /// Parses typed text with this registry's commands.
    pub fn parse(&self, text: &str) -> Submission {
        self.resolve(Submission::parse(text))
    }

    /// A submission parsed against the built-ins, with this registry's names resolved: an
    /// unknown `/name` that is a custom command or skill becomes [`Submission::Custom`],
    /// and the closest names offered include the Markdown ones.
    pub fn resolve(&self, submission: Submission) -> Submission {
        let Submission::UnknownCommand { name, args, .. } = submission else {
            return submission;
        };
        match self.find(&name).filter(|c| c.user_invocable) {
            Some(command) => Submission::Custom { command, args },
            None => Submission::UnknownCommand {
                suggestions: self.closest(&name),
                name,
                args,
            },
        }
    }

    /// Up to three names close to `name` (a typo, a prefix), closest first.
    pub fn closest(&self, name: &str) -> Vec<String> {
        let names = COMMANDS.iter().map(|c| c.name.to_string()).chain(
            self.prompts
                .iter()
                .filter(|c| c.user_invocable)
                .map(|c| c.name.clone()),
        );
        super::closest_among(name, names)
    }
}
