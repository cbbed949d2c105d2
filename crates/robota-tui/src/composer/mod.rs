//! The composer: the multi-line prompt editor at the bottom of the screen. It owns the
//! text (grapheme clusters, collapsed pastes), the editing keys, prompt history, the
//! `!` shell mode and vim mode (`vim/`), and tells its owner what the user did through [`ComposerAction`]. It
//! knows nothing of popups: [`Composer::completion_trigger`] says what is being typed
//! (`/command`, `@file`) and [`Composer::complete_token`] writes the chosen completion.
//!
//! Rendering lives in `render`; `cursor_position` gives the cell where the app must put
//! the real terminal cursor so an IME draws its preedit in place.

pub mod buffer;
pub mod history;
pub mod keys;
pub mod layout;
pub mod paste;
mod render;
#[cfg(test)]
mod render_tests;
#[cfg(test)]
pub(crate) mod test_support;
#[cfg(test)]
mod tests;
pub mod vim;
mod vim_motion;

use crossterm::event::KeyEvent;

use buffer::{Atom, TextBuffer, TextPosition};
pub use history::{HistoryEntry, HistoryError, PromptHistory};
use keys::EditCommand;
use paste::PasteStore;

/// What a key or paste did, for the composer's owner.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ComposerAction {
    /// Not a composer key: the app may use it (Esc, Ctrl+C, Tab, Ctrl+D on empty, …).
    Ignored,
    /// The text or cursor changed, or the key was consumed without effect.
    Handled,
    /// Enter: the prompt, with pastes expanded and trailing blanks trimmed.
    Submit(String),
    /// Enter in shell mode (`!` typed first): the command to run.
    RunShell(String),
}

/// What the text before the cursor asks to complete.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CompletionTrigger {
    /// `/query` at the start of the prompt.
    Command {
        /// The text after the slash, up to the cursor.
        query: String,
    },
    /// `/command query`: the argument being typed.
    Argument {
        /// The command, without the slash.
        command: String,
        /// The argument typed so far, up to the cursor.
        query: String,
    },
    /// `@query` starting a word: a file path being typed.
    File {
        /// The path typed after the `@`, up to the cursor.
        query: String,
    },
}

/// The text typed before history was walked, put back when walking past the newest.
#[derive(Debug, Clone)]
struct Draft {
    buffer: TextBuffer,
    shell: bool,
}

/// The prompt editor. See the module docs.
#[derive(Debug, Clone)]
pub struct Composer {
    buffer: TextBuffer,
    pastes: PasteStore,
    history: PromptHistory,
    /// Steps back into history while walking it (0 = newest).
    browsing: Option<usize>,
    draft: Option<Draft>,
    kill_ring: Vec<Vec<Atom>>,
    /// The column Up/Down aim for, kept across consecutive vertical moves.
    preferred_x: Option<usize>,
    width: u16,
    shell: bool,
    colors: bool,
    hint: String,
    /// The images of the prompt just submitted, until the owner takes them.
    submitted_images: Vec<robota_core::message::ImageSource>,
    /// Vim mode's state, while `/vim` has it on.
    vim: Option<vim::Vim>,
    /// The collapsed pastes of the last submitted prompt, as (placeholder, text).
    submitted_pastes: Vec<(String, String)>,
}

/// The hint shown in an empty composer.
pub const DEFAULT_HINT: &str = "Ask anything · / commands · @ files · ! shell";

impl Default for Composer {
    fn default() -> Self {
        Composer::new(PromptHistory::in_memory())
    }
}

impl Composer {
    /// An empty composer walking `history` on Up/Down and recording submitted prompts.
    pub fn new(history: PromptHistory) -> Self {
        Composer {
            buffer: TextBuffer::default(),
            pastes: PasteStore::default(),
            history,
            browsing: None,
            draft: None,
            kill_ring: Vec::new(),
            preferred_x: None,
            width: 80,
            shell: false,
            colors: true,
            hint: DEFAULT_HINT.to_string(),
            submitted_images: Vec::new(),
            vim: None,
            submitted_pastes: Vec::new(),
        }
    }

    /// Whether to colour the prompt marker, hint and placeholders (off under `NO_COLOR`).
    pub fn set_colors(&mut self, colors: bool) {
        self.colors = colors;
    }

    /// Replaces the dimmed hint shown while the composer is empty (default [`DEFAULT_HINT`]).
    pub fn set_hint(&mut self, hint: impl Into<String>) {
        self.hint = hint.into();
    }

    /// The width of the composer's area, used by Up/Down to move by visual rows. The app
    /// sets it whenever it lays the screen out (render itself takes `&self`).
    pub fn set_width(&mut self, width: u16) {
        self.width = width;
    }

    /// Whether the composer holds no text.
    pub fn is_empty(&self) -> bool {
        self.buffer.is_empty()
    }

    /// Whether `!` switched the composer into shell mode.
    pub fn is_shell_mode(&self) -> bool {
        self.shell
    }

    /// The prompts submitted before, for Up/Down and Ctrl+R.
    pub fn history(&self) -> &PromptHistory {
        &self.history
    }

    /// The text as shown (placeholders as labels).
    pub fn display_text(&self) -> String {
        self.buffer.display_text()
    }

    /// The text with every collapsed paste expanded.
    pub fn expanded_text(&self) -> String {
        self.buffer
            .text_with(|id, label| self.pastes.get(id).unwrap_or(label).to_string())
    }

    /// Empties the composer (leaving shell mode and any history walk).
    pub fn clear(&mut self) {
        self.buffer = TextBuffer::default();
        self.pastes.clear();
        self.shell = false;
        self.browsing = None;
        self.draft = None;
        self.preferred_x = None;
        self.reset_vim();
    }

    /// Replaces the text (e.g. a queued prompt given back), cursor at the end.
    pub fn set_text(&mut self, text: &str) {
        self.clear();
        self.buffer.insert_str(text);
    }

    /// Puts a prompt taken back from the queue at the end of the composer (on a line of
    /// its own after a draft, whose pastes and images stay as they are), its images as
    /// placeholders again: the k-th `[Image #N]` of `text` is `images[k]`.
    pub fn take_back(&mut self, text: &str, images: Vec<robota_core::message::ImageSource>) {
        self.leave_history();
        self.buffer.set_cursor(self.buffer.end());
        if !self.is_empty() {
            self.buffer.insert_str("\n");
        }
        let mut images = images.into_iter();
        let mut rest = text;
        while let Some((at, len)) = paste::find_image_label(rest) {
            match images.next() {
                Some(image) => {
                    self.buffer.insert_str(&rest[..at]);
                    let (id, label) = self.pastes.add_image(image);
                    self.buffer.insert_paste(id, &label);
                }
                None => self.buffer.insert_str(&rest[..at + len]),
            }
            rest = &rest[at + len..];
        }
        self.buffer.insert_str(rest);
    }

    /// Handles a key press; see [`ComposerAction`].
    pub fn handle_key(&mut self, key: KeyEvent) -> ComposerAction {
        if let Some(action) = self.vim_key(key) {
            return action;
        }
        let Some(command) = keys::edit_command(key) else {
            return ComposerAction::Ignored;
        };
        if command == EditCommand::DeleteForward && self.is_empty() && !self.shell {
            // Ctrl+D / Delete on an empty composer: the app's (Ctrl+D exits).
            return ComposerAction::Ignored;
        }
        if !matches!(command, EditCommand::Up | EditCommand::Down) {
            self.preferred_x = None;
        }
        self.apply(command)
    }

    /// A bracketed paste: line endings folded to `\n`, control characters dropped, and
    /// a large paste collapsed into a placeholder.
    pub fn paste(&mut self, text: &str) {
        let clean = buffer::sanitize(text);
        if clean.is_empty() {
            return;
        }
        self.leave_history();
        self.preferred_x = None;
        if paste::should_collapse(&clean) {
            let (id, label) = self.pastes.add(clean);
            self.buffer.insert_paste(id, &label);
        } else {
            self.buffer.insert_str(&clean);
        }
    }

    /// Attaches an image at the cursor as an atomic `[Image #N]` placeholder; Enter sends
    /// it with the prompt ([`Composer::take_submitted_images`]).
    pub fn attach_image(&mut self, image: robota_core::message::ImageSource) {
        self.leave_history();
        self.preferred_x = None;
        let (id, label) = self.pastes.add_image(image);
        self.buffer.insert_paste(id, &label);
    }

    /// The images of the prompt Enter last returned, in the order of their placeholders
    /// (an image whose placeholder was deleted is not sent). Taking them leaves none.
    pub fn take_submitted_images(&mut self) -> Vec<robota_core::message::ImageSource> {
        std::mem::take(&mut self.submitted_images)
    }

    fn apply(&mut self, command: EditCommand) -> ComposerAction {
        use EditCommand::*;
        let cursor = self.buffer.cursor();
        match command {
            Enter => {
                let after_backslash = matches!(
                    self.buffer.before_cursor().last(),
                    Some(Atom::Grapheme(g)) if g.as_ref() == "\\"
                );
                if !after_backslash {
                    return self.submit();
                }
                let back = self.buffer.prev(cursor).unwrap_or(cursor);
                self.buffer.delete_range(back, cursor);
                self.edit(|b| b.insert_str("\n"));
            }
            Newline => self.edit(|b| b.insert_str("\n")),
            Insert('!') if self.buffer.is_empty() && !self.shell => {
                self.leave_history();
                self.shell = true;
            }
            Insert(c) => self.edit(|b| b.insert_str(c.encode_utf8(&mut [0; 4]))),
            Backspace if self.buffer.is_empty() && self.shell => self.shell = false,
            Backspace => {
                if let Some(p) = self.buffer.prev(cursor) {
                    self.edit(|b| {
                        b.delete_range(p, cursor);
                    });
                }
            }
            DeleteForward => {
                if let Some(n) = self.buffer.next(cursor) {
                    self.edit(|b| {
                        b.delete_range(cursor, n);
                    });
                }
            }
            Left => self.buffer.move_left(),
            Right => self.buffer.move_right(),
            LineStart => self.buffer.line_start(),
            LineEnd => self.buffer.line_end(),
            BufferStart => self.buffer.set_cursor(TextPosition::default()),
            BufferEnd => self.buffer.set_cursor(self.buffer.end()),
            WordLeft => self.buffer.set_cursor(self.buffer.word_left_position()),
            WordRight => self.buffer.set_cursor(self.buffer.word_right_position()),
            DeleteWordBack => self.kill(self.buffer.word_rubout_position()),
            DeleteWordForward => self.kill(self.buffer.word_right_position()),
            KillToLineStart => self.kill(self.buffer.line_start_kill_position()),
            KillToLineEnd => self.kill(self.buffer.line_end_kill_position()),
            Yank => {
                let lines = self.kill_ring.clone();
                self.edit(|b| b.insert_lines(lines));
            }
            Up => self.vertical(true),
            Down => self.vertical(false),
        }
        ComposerAction::Handled
    }

    /// An edit of the text: leaves any history walk, so the edited entry is what stays.
    fn edit(&mut self, f: impl FnOnce(&mut TextBuffer)) {
        self.leave_history();
        f(&mut self.buffer);
    }

    fn kill(&mut self, to: TextPosition) {
        let cursor = self.buffer.cursor();
        if to != cursor {
            self.leave_history();
            self.kill_ring = self.buffer.delete_range(cursor, to);
        }
    }

    fn leave_history(&mut self) {
        self.browsing = None;
        self.draft = None;
    }

    /// Enter: records the prompt in history, empties the composer and returns the text.
    /// Blank prompts are consumed without effect.
    pub fn submit(&mut self) -> ComposerAction {
        let display = self.buffer.display_text();
        if display.trim().is_empty() {
            return ComposerAction::Handled;
        }
        let ids = self
            .buffer
            .lines()
            .iter()
            .flatten()
            .filter_map(|a| match a {
                Atom::Paste { id, .. } => Some(*id),
                Atom::Grapheme(_) => None,
            });
        let ids: Vec<u32> = ids.collect();
        self.submitted_images = self.pastes.images(ids.iter().copied());
        let images = self.pastes.image_subset(ids.iter().copied());
        let pastes = self.pastes.subset(ids);
        self.submitted_pastes = pastes
            .iter()
            .map(|(id, text)| (paste::label(*id, text), text.clone()))
            .collect();
        let shown = if self.shell {
            format!("!{display}")
        } else {
            display
        };
        let mut entry = HistoryEntry::new(shown, pastes);
        entry.images = images;
        if let Err(e) = self.history.push(entry) {
            tracing::warn!("could not save prompt history: {e}");
        }
        let text = self.expanded_text();
        let text = text.trim_end().trim_start_matches('\n').to_string();
        let shell = self.shell;
        self.clear();
        if shell {
            ComposerAction::RunShell(text)
        } else {
            ComposerAction::Submit(text)
        }
    }

    /// The collapsed pastes of the prompt just submitted, as (placeholder, text), taken
    /// (so the transcript can show the placeholders too).
    pub fn take_submitted_pastes(&mut self) -> Vec<(String, String)> {
        std::mem::take(&mut self.submitted_pastes)
    }

    /// Up/Down: a visual row up or down at the preferred column; from the first (last)
    /// row, the older (newer) history entry.
    fn vertical(&mut self, up: bool) {
        let lines = self.buffer.lines();
        let rows = layout::wrap(lines, render::text_width(self.width));
        let (row, x) = layout::locate(&rows, lines, self.buffer.cursor());
        let target_x = *self.preferred_x.get_or_insert(x);
        let target = if up {
            row.checked_sub(1)
        } else {
            Some(row + 1).filter(|r| *r < rows.len())
        };
        match target {
            Some(r) => {
                let pos = layout::position_at(&rows, lines, r, target_x);
                self.buffer.set_cursor(pos);
            }
            None if up => self.history_back(),
            None => self.history_forward(),
        }
    }

    fn history_back(&mut self) {
        let next = self.browsing.map_or(0, |b| b + 1);
        let Some(entry) = self.history.get_back(next).cloned() else {
            self.buffer.set_cursor(TextPosition::default());
            return;
        };
        if self.browsing.is_none() {
            self.draft = Some(Draft {
                buffer: self.buffer.clone(),
                shell: self.shell,
            });
        }
        self.load_entry(&entry);
        self.buffer.set_cursor(TextPosition::default());
        self.browsing = Some(next);
    }

    fn history_forward(&mut self) {
        match self.browsing {
            None => self.buffer.set_cursor(self.buffer.end()),
            Some(0) => {
                if let Some(draft) = self.draft.take() {
                    self.buffer = draft.buffer;
                    self.shell = draft.shell;
                }
                self.browsing = None;
            }
            Some(back) => {
                if let Some(entry) = self.history.get_back(back - 1).cloned() {
                    self.load_entry(&entry);
                }
                self.browsing = Some(back - 1);
            }
        }
    }

    /// Puts a history entry (from a search) into the composer, pastes and shell mode
    /// restored, as Up would.
    pub fn recall(&mut self, entry: &HistoryEntry) {
        self.load_entry(entry);
    }

    fn load_entry(&mut self, entry: &HistoryEntry) {
        let (shell, mut rest) = match entry.display.strip_prefix('!') {
            Some(command) => (true, command),
            None => (false, entry.display.as_str()),
        };
        let labels: Vec<(u32, String)> = entry
            .pastes
            .iter()
            .map(|(id, text)| (*id, paste::label(*id, text)))
            .chain(
                entry
                    .images
                    .iter()
                    .map(|(id, (label, _))| (*id, label.clone())),
            )
            .collect();
        let mut buffer = TextBuffer::default();
        while !rest.is_empty() {
            let next = labels
                .iter()
                .filter_map(|(id, label)| rest.find(label.as_str()).map(|at| (at, *id, label)))
                .min_by_key(|(at, _, _)| *at);
            match next {
                Some((at, id, label)) => {
                    buffer.insert_str(&rest[..at]);
                    buffer.insert_paste(id, label);
                    rest = &rest[at + label.len()..];
                }
                None => {
                    buffer.insert_str(rest);
                    rest = "";
                }
            }
        }
        for (id, text) in &entry.pastes {
            self.pastes.restore(*id, text.clone());
        }
        for (id, (label, image)) in &entry.images {
            self.pastes.restore_image(*id, label.clone(), image.clone());
        }
        self.buffer = buffer;
        self.shell = shell;
    }

    /// The token being completed, if the text before the cursor is one.
    pub fn completion_trigger(&self) -> Option<CompletionTrigger> {
        if self.shell {
            return None;
        }
        let cursor = self.buffer.cursor();
        let before = self.buffer.before_cursor();
        if cursor.row == 0 && matches!(before.first(), Some(Atom::Grapheme(g)) if g.as_ref() == "/")
        {
            let text: Option<String> = before
                .iter()
                .map(|a| match a {
                    Atom::Grapheme(g) => Some(g.as_ref()),
                    Atom::Paste { .. } => None,
                })
                .collect();
            let text = text?;
            let body = &text[1..];
            return match body.split_once(char::is_whitespace) {
                None => Some(CompletionTrigger::Command {
                    query: body.to_string(),
                }),
                Some((command, arg)) => {
                    let query = arg.trim_start();
                    (!command.is_empty() && !query.contains(char::is_whitespace)).then(|| {
                        CompletionTrigger::Argument {
                            command: command.to_string(),
                            query: query.to_string(),
                        }
                    })
                }
            };
        }
        let start = self.token_start();
        match before.get(start) {
            Some(Atom::Grapheme(g)) if g.as_ref() == "@" => {
                let query = before[start + 1..]
                    .iter()
                    .map(|a| match a {
                        Atom::Grapheme(g) => g.as_ref(),
                        Atom::Paste { .. } => "",
                    })
                    .collect();
                Some(CompletionTrigger::File { query })
            }
            _ => None,
        }
    }

    /// Where the word at the cursor starts: back over non-blank text on the line.
    fn token_start(&self) -> usize {
        let before = self.buffer.before_cursor();
        before
            .iter()
            .rposition(|a| a.is_whitespace() || matches!(a, Atom::Paste { .. }))
            .map_or(0, |i| i + 1)
    }

    /// Replaces the word at the cursor (the non-blank run around it) with `replacement`
    /// and moves after it; with `then_space`, a space follows (reused if one is there).
    pub fn complete_token(&mut self, replacement: &str, then_space: bool) {
        self.leave_history();
        let cursor = self.buffer.cursor();
        let line = &self.buffer.lines()[cursor.row];
        let end = line[cursor.col..]
            .iter()
            .position(|a| a.is_whitespace() || matches!(a, Atom::Paste { .. }))
            .map_or(line.len(), |i| cursor.col + i);
        let space_follows = line.get(end).is_some_and(Atom::is_whitespace);
        let start = TextPosition {
            row: cursor.row,
            col: self.token_start(),
        };
        self.buffer.delete_range(
            start,
            TextPosition {
                row: cursor.row,
                col: end,
            },
        );
        self.buffer.insert_str(replacement);
        if then_space {
            if space_follows {
                self.buffer.move_right();
            } else {
                self.buffer.insert_str(" ");
            }
        }
    }
}
