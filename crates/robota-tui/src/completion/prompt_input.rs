//! [`PromptInput`]: the composer together with its completion popups, as one piece the
//! app places at the bottom of the screen. Keys go to an open popup first (Up/Down,
//! Tab, Enter, Esc) and fall through to the composer; after every edit the popups follow
//! what is typed (`/command`, `/command arg`, `@path`). Submitted text goes to the app as
//! typed; the SDK's one parse decides what it is.

use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use ratatui::buffer::Buffer;
use ratatui::layout::{Position, Rect};

use super::file_index::FileIndexer;
use super::file_popup::FilePopup;
use super::items::CompletionItem;
use super::slash_popup::{SlashChoice, SlashPopup};
use crate::composer::{CompletionTrigger, Composer, ComposerAction};

/// What the user did, for the app.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InputAction {
    /// Not an input key (Esc with no popup, Ctrl+C, Shift+Tab, PgUp, Ctrl+D on empty…).
    Ignored,
    /// Consumed: redraw.
    Handled,
    /// A prompt to send (pastes expanded).
    Submit(String),
    /// `!command`: run it in a shell and show the output.
    RunShell(String),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Popup {
    Slash,
    File,
}

/// The composer with its completion: the `/command` and `@file` popups open above
/// it as the typed text calls for them, and take the keys that move and accept a choice.
#[derive(Debug)]
pub struct PromptInput {
    composer: Composer,
    slash: SlashPopup,
    files: FilePopup,
    open: Option<Popup>,
    /// The trigger Esc closed the popup on; it stays closed until the trigger changes.
    dismissed: Option<CompletionTrigger>,
}

/// Quotes a path for `@` when it has blanks, so the word stays one token.
fn at_path(path: &str) -> String {
    if path.contains(char::is_whitespace) {
        format!("@\"{path}\"")
    } else {
        format!("@{path}")
    }
}

impl PromptInput {
    /// `commands` are the slash commands offered (e.g. `items::builtin_commands()`);
    /// `files` indexes the project for `@`.
    pub fn new(composer: Composer, commands: Vec<CompletionItem>, files: FileIndexer) -> Self {
        PromptInput {
            composer,
            slash: SlashPopup::new(commands),
            files: FilePopup::new(files),
            open: None,
            dismissed: None,
        }
    }

    /// The composer under the popups.
    pub fn composer(&self) -> &Composer {
        &self.composer
    }

    /// The composer under the popups, to change.
    pub fn composer_mut(&mut self) -> &mut Composer {
        &mut self.composer
    }

    /// Replaces the slash commands offered (when skills or plugins load).
    pub fn set_commands(&mut self, commands: Vec<CompletionItem>) {
        self.slash.set_commands(commands);
        self.refresh_completion();
    }

    /// Colours on or off (`NO_COLOR`) for the composer and the popups.
    pub fn set_colors(&mut self, colors: bool) {
        self.composer.set_colors(colors);
        self.slash.set_colors(colors);
        self.files.set_colors(colors);
    }

    /// Whether a completion popup is showing.
    pub fn popup_open(&self) -> bool {
        self.open.is_some()
    }

    /// The file indexer, whose `subscribe()` tells the app when to call
    /// [`PromptInput::refresh_completion`].
    pub fn file_indexer(&self) -> &FileIndexer {
        self.files.indexer()
    }

    /// Handles a key: an open popup takes Up/Down (Ctrl+P/N), Tab, Enter and Esc first;
    /// the rest go to the composer, after which the popups follow the new text.
    pub fn handle_key(&mut self, key: KeyEvent) -> InputAction {
        if key.kind == KeyEventKind::Release {
            return InputAction::Ignored;
        }
        if self.open.is_some() {
            let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
            match key.code {
                KeyCode::Up => return self.select(false),
                KeyCode::Char('p') if ctrl => return self.select(false),
                KeyCode::Down => return self.select(true),
                KeyCode::Char('n') if ctrl => return self.select(true),
                KeyCode::Tab => return self.accept(false),
                KeyCode::Enter if key.modifiers.is_empty() => return self.accept(true),
                KeyCode::Esc => {
                    self.dismissed = self.composer.completion_trigger();
                    self.open = None;
                    return InputAction::Handled;
                }
                _ => {}
            }
        }
        let action = self.composer.handle_key(key);
        self.refresh_completion();
        self.convert(action)
    }

    /// A bracketed paste into the composer.
    pub fn paste(&mut self, text: &str) {
        self.composer.paste(text);
        self.refresh_completion();
    }

    /// Re-matches the open popup against the composer (after edits, and when a new file
    /// index was published).
    pub fn refresh_completion(&mut self) {
        let trigger = self.composer.completion_trigger();
        if trigger.is_some() && trigger == self.dismissed {
            self.open = None;
            return;
        }
        self.dismissed = None;
        self.open = match trigger {
            Some(CompletionTrigger::File { query }) => {
                self.files.update(&query).then_some(Popup::File)
            }
            Some(t) => self.slash.update(&t).then_some(Popup::Slash),
            None => {
                self.files.hide();
                None
            }
        };
    }

    fn select(&mut self, down: bool) -> InputAction {
        match (self.open, down) {
            (Some(Popup::Slash), true) => self.slash.select_next(),
            (Some(Popup::Slash), false) => self.slash.select_previous(),
            (Some(Popup::File), true) => self.files.select_next(),
            (Some(Popup::File), false) => self.files.select_previous(),
            (None, _) => {}
        }
        InputAction::Handled
    }

    /// Tab (`run` false) completes the selection; Enter also runs a chosen command — one
    /// that needs an argument only when it was typed out in full (it then answers with its
    /// usage), else it waits for the argument.
    fn accept(&mut self, run: bool) -> InputAction {
        let typed = self.composer.display_text();
        let (replacement, then_space, submit) = match self.open {
            Some(Popup::Slash) => match self.slash.choice() {
                Some(SlashChoice::Command(item)) => {
                    let typed_in_full = typed.trim() == format!("/{}", item.label);
                    let submit = run && (!item.needs_argument() || typed_in_full);
                    (
                        format!("/{}", item.label),
                        !submit && !item.hint.is_empty(),
                        submit,
                    )
                }
                Some(SlashChoice::Argument { value, .. }) => (value.label.clone(), false, run),
                None => return InputAction::Handled,
            },
            Some(Popup::File) => match self.files.selected() {
                Some(m) => (at_path(&m.path), !m.is_dir, false),
                None => return InputAction::Handled,
            },
            None => return InputAction::Handled,
        };
        self.composer.complete_token(&replacement, then_space);
        if submit {
            let action = self.composer.submit();
            self.refresh_completion();
            return self.convert(action);
        }
        self.refresh_completion();
        InputAction::Handled
    }

    fn convert(&self, action: ComposerAction) -> InputAction {
        match action {
            ComposerAction::Ignored => InputAction::Ignored,
            ComposerAction::Handled => InputAction::Handled,
            ComposerAction::RunShell(command) => InputAction::RunShell(command),
            ComposerAction::Submit(text) => InputAction::Submit(text),
        }
    }

    /// The composer's width, for Up/Down by visual rows; set it at every layout.
    pub fn set_width(&mut self, width: u16) {
        self.composer.set_width(width);
    }

    /// Rows the composer wants at this width (the popup floats above, outside it).
    pub fn desired_height(&self, width: u16) -> u16 {
        self.composer.desired_height(width)
    }

    /// Draws the composer.
    pub fn render(&self, area: Rect, buf: &mut Buffer) {
        self.composer.render(area, buf);
    }

    /// Where the terminal cursor goes (always in the composer: typing continues there).
    pub fn cursor_position(&self, area: Rect) -> Option<Position> {
        self.composer.cursor_position(area)
    }

    /// Where the open popup goes: directly above the composer, as wide as it, cut to the
    /// room above it within `screen`.
    pub fn popup_area(&self, composer_area: Rect, screen: Rect) -> Option<Rect> {
        let height = match self.open? {
            Popup::Slash => self.slash.height(),
            Popup::File => self.files.height(),
        };
        let room = composer_area.y.saturating_sub(screen.y);
        let height = height.min(room);
        (height > 0).then(|| {
            Rect::new(
                composer_area.x,
                composer_area.y - height,
                composer_area.width,
                height,
            )
        })
    }

    /// Draws the open popup above `composer_area` (a no-op when none is open).
    pub fn render_popup(&self, composer_area: Rect, buf: &mut Buffer) {
        let Some(area) = self.popup_area(composer_area, buf.area) else {
            return;
        };
        match self.open {
            Some(Popup::Slash) => self.slash.render(area, buf),
            Some(Popup::File) => self.files.render(area, buf),
            None => {}
        }
    }
}
