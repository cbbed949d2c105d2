//! The slash-command popup: the commands matching what follows `/` (or, once a command
//! with fixed arguments is typed, its argument values), a selection moved with Up/Down,
//! drawn as a bordered list of `/name hint   description` rows.

use nucleo_matcher::Matcher;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use unicode_width::UnicodeWidthStr;

use super::items::{CompletionItem, matcher_for, rank};
use super::list_view;
use crate::composer::CompletionTrigger;

/// Which list the popup shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Level {
    Commands,
    /// The argument values of `commands[index]`.
    Arguments(usize),
}

/// What the selected row stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SlashChoice<'a> {
    /// A command, selected while its name is being typed.
    Command(&'a CompletionItem),
    /// An argument value of a command, offered once the command name and a space are typed.
    Argument {
        /// The command being given the argument.
        command: &'a CompletionItem,
        /// The argument value selected.
        value: &'a CompletionItem,
    },
}

/// The `/command` completion popup: the commands (or a command's arguments) matching
/// what is typed, ranked, with one selected.
pub struct SlashPopup {
    commands: Vec<CompletionItem>,
    level: Level,
    /// Ranked indices into the current level's items.
    shown: Vec<usize>,
    selected: usize,
    matcher: Matcher,
    colors: bool,
}

impl std::fmt::Debug for SlashPopup {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SlashPopup")
            .field("level", &self.level)
            .field("shown", &self.shown)
            .field("selected", &self.selected)
            .finish_non_exhaustive()
    }
}

impl SlashPopup {
    /// A hidden popup offering `commands`.
    pub fn new(commands: Vec<CompletionItem>) -> Self {
        SlashPopup {
            commands,
            level: Level::Commands,
            shown: Vec::new(),
            selected: 0,
            matcher: matcher_for(false),
            colors: true,
        }
    }

    /// Replaces the offered commands (built-ins plus skills, custom commands, plugins).
    pub fn set_commands(&mut self, commands: Vec<CompletionItem>) {
        self.commands = commands;
        self.shown.clear();
        self.level = Level::Commands;
        self.selected = 0;
    }

    /// The commands offered, in the order given.
    pub fn commands(&self) -> &[CompletionItem] {
        &self.commands
    }

    /// The offered command whose label is `name` (without the `/`).
    pub fn find(&self, name: &str) -> Option<&CompletionItem> {
        self.commands.iter().find(|c| c.label == name)
    }

    pub(crate) fn set_colors(&mut self, colors: bool) {
        self.colors = colors;
    }

    fn level_items(&self) -> &[CompletionItem] {
        match self.level {
            Level::Commands => &self.commands,
            Level::Arguments(i) => &self.commands[i].arguments,
        }
    }

    /// Filters for what is typed; returns whether there is anything to show.
    pub fn update(&mut self, trigger: &CompletionTrigger) -> bool {
        let (level, query) = match trigger {
            CompletionTrigger::Command { query } => (Level::Commands, query.as_str()),
            CompletionTrigger::Argument { command, query } => {
                match self.commands.iter().position(|c| &c.label == command) {
                    Some(i) if !self.commands[i].arguments.is_empty() => {
                        (Level::Arguments(i), query.as_str())
                    }
                    _ => return self.hide(),
                }
            }
            CompletionTrigger::File { .. } => return self.hide(),
        };
        self.level = level;
        self.shown = match level {
            Level::Commands => rank(&self.commands, query, &mut self.matcher),
            Level::Arguments(i) => rank(&self.commands[i].arguments, query, &mut self.matcher),
        };
        self.selected = 0;
        !self.shown.is_empty()
    }

    fn hide(&mut self) -> bool {
        self.shown.clear();
        self.selected = 0;
        false
    }

    /// Whether nothing is shown (no match, or not updated since it was hidden).
    pub fn is_empty(&self) -> bool {
        self.shown.is_empty()
    }

    /// Moves the selection down (wrapping).
    pub fn select_next(&mut self) {
        if !self.shown.is_empty() {
            self.selected = (self.selected + 1) % self.shown.len();
        }
    }

    /// Moves the selection up (wrapping).
    pub fn select_previous(&mut self) {
        if !self.shown.is_empty() {
            self.selected = (self.selected + self.shown.len() - 1) % self.shown.len();
        }
    }

    pub(crate) fn choice(&self) -> Option<SlashChoice<'_>> {
        let index = *self.shown.get(self.selected)?;
        Some(match self.level {
            Level::Commands => SlashChoice::Command(&self.commands[index]),
            Level::Arguments(i) => SlashChoice::Argument {
                command: &self.commands[i],
                value: &self.commands[i].arguments[index],
            },
        })
    }

    /// Rows needed, borders included.
    pub fn height(&self) -> u16 {
        list_view::height(self.shown.len())
    }

    /// Draws the popup's bordered list into `area`.
    pub fn render(&self, area: Rect, buf: &mut Buffer) {
        let items = self.level_items();
        let prefix = match self.level {
            Level::Commands => "/",
            Level::Arguments(_) => "",
        };
        let heads: Vec<String> = self
            .shown
            .iter()
            .map(|&i| {
                let item = &items[i];
                let mut head = format!("{prefix}{}", item.label);
                if !item.hint.is_empty() {
                    head.push(' ');
                    head.push_str(&item.hint);
                }
                head
            })
            .collect();
        // Description column: after the widest head, but never past 40 % of the row (a
        // longer head pushes only its own description along).
        let inner = usize::from(area.width.saturating_sub(4));
        let widest = heads.iter().map(|h| h.width()).max().unwrap_or(0);
        let column = widest.min((inner * 2 / 5).max(12)) + 2;
        let rows = self
            .shown
            .iter()
            .zip(heads)
            .map(|(&i, head)| {
                let item = &items[i];
                let pad = column.saturating_sub(head.width()).max(1);
                let head_width = head.width();
                let mut spans = vec![Span::raw(head), Span::raw(" ".repeat(pad))];
                if let Some(source) = &item.source {
                    spans.push(Span::styled(
                        format!("({source}) "),
                        list_view::secondary(self.colors),
                    ));
                }
                let used = (head_width + pad) + item.source.as_ref().map_or(0, |s| s.width() + 3);
                let description = truncate(&item.description, inner.saturating_sub(used));
                spans.push(Span::styled(description, list_view::secondary(self.colors)));
                Line::from(spans)
            })
            .collect();
        let title = match self.level {
            Level::Commands => " commands ".to_string(),
            Level::Arguments(i) => format!(" /{} ", self.commands[i].label),
        };
        list_view::render(area, buf, &title, rows, Some(self.selected), self.colors);
    }
}

/// `text` cut to `width` columns, ending in `…` when cut.
fn truncate(text: &str, width: usize) -> String {
    if text.width() <= width {
        return text.to_string();
    }
    let mut out = String::new();
    let mut used = 0;
    for c in text.chars() {
        let w = unicode_width::UnicodeWidthChar::width(c).unwrap_or(0);
        if used + w + 1 > width {
            break;
        }
        used += w;
        out.push(c);
    }
    if width > 0 {
        out.push('…');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::truncate;

    #[test]
    fn descriptions_are_cut_with_an_ellipsis() {
        assert_eq!(truncate("Show the model", 20), "Show the model");
        assert_eq!(truncate("Show the model", 8), "Show th…");
        assert_eq!(truncate("모델 보기", 4), "모…");
        assert_eq!(truncate("abc", 0), "");
    }
}
