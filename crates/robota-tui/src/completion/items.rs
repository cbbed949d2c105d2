//! What the slash popup offers: [`CompletionItem`]s, independent of where a command comes
//! from (built-ins today; skills, custom commands and plugins add their own items later),
//! and the ranking of items against what the user typed: prefix matches first, then fuzzy
//! matches by score.

use nucleo_matcher::pattern::{AtomKind, CaseMatching, Normalization, Pattern};
use nucleo_matcher::{Config, Matcher, Utf32Str};

use robota_sdk::CommandEntry;
use robota_sdk::commands;

/// One entry of a completion list: a command (label without the slash) or an argument.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CompletionItem {
    pub(crate) label: String,
    pub(crate) description: String,
    /// Argument hint shown after the label (`[model id]`, `<name>`); empty when none.
    pub hint: String,
    /// Where the item comes from when not built in (`skill`, `plugin:x`), shown dimmed.
    pub source: Option<String>,
    /// Fixed argument values (subcommands), offered once the command is typed.
    pub arguments: Vec<CompletionItem>,
}

impl CompletionItem {
    /// An item with no hint, source or arguments. `label` is the command name without
    /// the slash (or the argument value).
    pub fn new(label: impl Into<String>, description: impl Into<String>) -> Self {
        CompletionItem {
            label: label.into(),
            description: description.into(),
            ..CompletionItem::default()
        }
    }

    pub(crate) fn with_hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = hint.into();
        self
    }

    pub(crate) fn with_source(mut self, source: impl Into<String>) -> Self {
        self.source = Some(source.into());
        self
    }

    pub(crate) fn with_arguments(mut self, arguments: Vec<CompletionItem>) -> Self {
        self.arguments = arguments;
        self
    }

    /// Whether the command cannot run without an argument (`<name>` hints).
    pub fn needs_argument(&self) -> bool {
        self.hint.starts_with('<')
    }
}

/// The built-in commands (and the interactive ones) as completion items, with their
/// argument choices.
pub fn builtin_commands() -> Vec<CompletionItem> {
    command_items(commands::CommandRegistry::default().entries())
}

/// Every command of a session's registry as a completion item: the built-ins with their
/// argument choices, then its custom commands and skills marked with their source.
pub fn command_items(entries: Vec<CommandEntry>) -> Vec<CompletionItem> {
    entries
        .into_iter()
        .map(|entry| {
            let arguments = commands::argument_choices(&entry.name)
                .into_iter()
                .map(|choice| CompletionItem::new(choice, ""))
                .collect();
            let item = CompletionItem::new(entry.name, entry.description)
                .with_hint(entry.argument_hint)
                .with_arguments(arguments);
            if entry.source == "built-in" {
                item
            } else {
                item.with_source(entry.source)
            }
        })
        .collect()
}

/// A fuzzy matcher tuned for short names (prefix-friendly) or for paths.
pub(crate) fn matcher_for(paths: bool) -> Matcher {
    let mut config = if paths {
        Config::DEFAULT.match_paths()
    } else {
        Config::DEFAULT
    };
    config.prefer_prefix = true;
    Matcher::new(config)
}

/// A one-word fuzzy pattern with smart case (an upper-case letter makes it exact-case).
pub(crate) fn pattern(query: &str) -> Pattern {
    Pattern::new(
        query,
        CaseMatching::Smart,
        Normalization::Smart,
        AtomKind::Fuzzy,
    )
}

/// Indices of the items matching `query`: labels starting with it (exact match first,
/// then in registry order), then the other fuzzy matches, best first.
pub fn rank(items: &[CompletionItem], query: &str, matcher: &mut Matcher) -> Vec<usize> {
    let lower = query.to_lowercase();
    let mut prefixed: Vec<usize> = (0..items.len())
        .filter(|&i| items[i].label.to_lowercase().starts_with(&lower))
        .collect();
    prefixed.sort_by_key(|&i| items[i].label.to_lowercase() != lower);
    if query.is_empty() {
        return prefixed;
    }
    let pattern = pattern(query);
    let mut buf = Vec::new();
    let mut fuzzy: Vec<(u32, usize)> = (0..items.len())
        .filter(|i| !prefixed.contains(i))
        .filter_map(|i| {
            let score = pattern.score(Utf32Str::new(&items[i].label, &mut buf), matcher)?;
            Some((score, i))
        })
        .collect();
    fuzzy.sort_by_key(|&(score, i)| (std::cmp::Reverse(score), i));
    prefixed.extend(fuzzy.into_iter().map(|(_, i)| i));
    prefixed
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(items: &[CompletionItem], query: &str) -> Vec<String> {
        let mut m = matcher_for(false);
        rank(items, query, &mut m)
            .into_iter()
            .map(|i| items[i].label.clone())
            .collect()
    }

    #[test]
    fn builtins_carry_hints_and_mode_choices() {
        let items = builtin_commands();
        let names: Vec<&str> = items.iter().map(|i| i.label.as_str()).collect();
        for name in [
            "help",
            "clear",
            "model",
            "mode",
            "permissions",
            "context",
            "cost",
            "resume",
            "rename",
            "copy",
            "exit",
        ] {
            assert!(names.contains(&name), "missing /{name}");
        }
        let mode = items.iter().find(|i| i.label == "mode").unwrap();
        let choices: Vec<&str> = mode.arguments.iter().map(|a| a.label.as_str()).collect();
        assert_eq!(
            choices,
            vec!["default", "acceptEdits", "plan", "bypassPermissions"]
        );
        let rename = items.iter().find(|i| i.label == "rename").unwrap();
        assert!(rename.needs_argument());
    }

    #[test]
    fn prefix_matches_come_first_then_fuzzy_ones() {
        let items = builtin_commands();
        assert_eq!(labels(&items, "mode"), vec!["mode", "model"]);
        assert_eq!(labels(&items, "c")[..3], ["clear", "context", "cost"]);
        let fuzzy = labels(&items, "cst");
        assert_eq!(fuzzy.first().map(String::as_str), Some("cost"));
        assert!(labels(&items, "zzz").is_empty());
        assert_eq!(labels(&items, "").len(), items.len());
        assert_eq!(
            labels(&items, "MODE"),
            vec!["mode", "model"],
            "prefix matching ignores case"
        );
    }
}
