//! Routing of keys, pastes and mouse events: the app-wide keys first (Ctrl+C, Ctrl+Z,
//! Ctrl+L), then the overlays from the top down, then the transcript search (`/` while
//! scrolled up) and vim mode's Esc out of insert mode, then the base screen — Shift+Tab,
//! Ctrl+O, Ctrl+B, Ctrl+D, Tab to send a prompt into the running turn, the composer with
//! its completion popups, the transcript's scroll keys,
//! Esc to interrupt. An overlay that is done hands back an [`AppAction`], applied here.

use std::time::{Duration, Instant};

use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers, MouseEvent};

use super::overlay::{AppAction, EventResult};
use super::shortcuts::ShortcutSheet;
use super::state::App;
use crate::completion::InputAction;
use crate::composer::ComposerAction;

/// A second Ctrl+C within this time exits.
const CTRL_C_WINDOW: Duration = Duration::from_secs(2);

/// What the hint line says after Ctrl+B in an attached client.
pub const DETACH_HINT: &str = "Press d to detach (the session keeps running)";

/// What the loop must do after an input event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyOutcome {
    /// Nothing visible changed.
    Nothing,
    /// Draw a frame.
    Redraw,
    /// Clear the screen and draw everything again (Ctrl+L).
    FullRedraw,
    /// Give the terminal back and stop (Ctrl+Z).
    Suspend,
}

impl App {
    pub(crate) fn on_key(&mut self, key: KeyEvent) -> KeyOutcome {
        if key.kind == KeyEventKind::Release {
            return KeyOutcome::Nothing;
        }
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        if !(ctrl && key.code == KeyCode::Char('c')) {
            self.ctrl_c_at = None;
            self.hint = None;
        }
        if key.code != KeyCode::Esc {
            self.esc_at = None;
        }
        match key.code {
            KeyCode::Char('z') if ctrl => return KeyOutcome::Suspend,
            KeyCode::Char('l') if ctrl => return KeyOutcome::FullRedraw,
            KeyCode::Char('c') if ctrl => {
                self.ctrl_c();
                return KeyOutcome::Redraw;
            }
            _ => {}
        }
        if std::mem::take(&mut self.detach_prefix) && key.code == KeyCode::Char('d') && !ctrl {
            // Ctrl+B d: leave the attached session running and close this client.
            self.quit = true;
            return KeyOutcome::Redraw;
        }
        if self.layer_key(key) {
            return KeyOutcome::Redraw;
        }
        if self.layers.is_empty() && self.search_key(key) {
            return KeyOutcome::Redraw;
        }
        if key.code == KeyCode::Esc
            && !self.input.popup_open()
            && self.input.composer_mut().vim_escape()
        {
            // Vim mode: Esc leaves insert (or visual) mode; a running turn stops on it
            // too, as Esc always stops one.
            if self.is_busy() {
                self.interrupt();
            }
            return KeyOutcome::Redraw;
        }
        match key.code {
            KeyCode::BackTab => {
                self.cycle_mode();
                return KeyOutcome::Redraw;
            }
            KeyCode::Char('r') if ctrl => {
                self.open_history_search();
                return KeyOutcome::Redraw;
            }
            KeyCode::Char('v') if ctrl => {
                self.paste_clipboard_image();
                return KeyOutcome::Redraw;
            }
            KeyCode::Char('o') if ctrl => {
                self.transcript.toggle_expanded();
                return KeyOutcome::Redraw;
            }
            // Attached to a session that runs elsewhere, Ctrl+B begins Ctrl+B d (detach).
            KeyCode::Char('b') if ctrl && self.is_attached() => {
                self.detach_prefix = true;
                self.hint = Some(DETACH_HINT.into());
                return KeyOutcome::Redraw;
            }
            // Ctrl+B sends a running Bash command to the background; otherwise the
            // composer has the key.
            KeyCode::Char('b') if ctrl && self.is_busy() && self.send_to_background() => {
                return KeyOutcome::Redraw;
            }
            KeyCode::Char('d') if ctrl && self.input.composer().is_empty() => {
                self.quit = true;
                return KeyOutcome::Redraw;
            }
            KeyCode::PageUp | KeyCode::PageDown => {
                self.transcript.handle_key(&key);
                self.load_older_history_at_top();
                return KeyOutcome::Redraw;
            }
            KeyCode::Home | KeyCode::End if ctrl || self.input.composer().is_empty() => {
                self.transcript.handle_key(&key);
                self.load_older_history_at_top();
                return KeyOutcome::Redraw;
            }
            KeyCode::Esc if !self.input.popup_open() && self.is_busy() => {
                self.interrupt();
                return KeyOutcome::Redraw;
            }
            KeyCode::Esc if !self.input.popup_open() && self.input.composer().is_empty() => {
                self.esc_on_empty(Instant::now());
                return KeyOutcome::Redraw;
            }
            KeyCode::Char('?')
                if !ctrl
                    && self.input.composer().is_empty()
                    && !self.input.composer().is_shell_mode() =>
            {
                self.layers.push(ShortcutSheet {
                    colors: self.theme.color,
                });
                return KeyOutcome::Redraw;
            }
            // While a turn runs, Tab sends the typed prompt now (Enter queues it).
            KeyCode::Tab
                if self.is_busy()
                    && !self.input.popup_open()
                    && !self.input.composer().is_empty()
                    && !self.input.composer().is_shell_mode() =>
            {
                if let ComposerAction::Submit(text) = self.input.composer_mut().submit() {
                    self.steer(text);
                }
                self.input.refresh_completion();
                return KeyOutcome::Redraw;
            }
            KeyCode::Backspace if self.input.composer().is_empty() && self.queued().is_some() => {
                self.unqueue();
                return KeyOutcome::Redraw;
            }
            _ => {}
        }
        match self.input.handle_key(key) {
            InputAction::Ignored => KeyOutcome::Nothing,
            InputAction::Handled => KeyOutcome::Redraw,
            InputAction::Submit(prompt) => {
                for (label, text) in self.input.composer_mut().take_submitted_pastes() {
                    self.transcript.remember_paste(label, text);
                }
                self.submit(prompt);
                KeyOutcome::Redraw
            }
            InputAction::RunShell(command) => {
                self.run_shell(command);
                KeyOutcome::Redraw
            }
        }
    }

    /// Ctrl+C: closes the top layer, else clears the composer, else interrupts the turn,
    /// else asks for a second press and exits on it.
    fn ctrl_c(&mut self) {
        if self.layers.top_is_full_screen() {
            self.layer_key(KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL));
            return;
        }
        if !self.layers.is_empty() {
            self.layer_key(KeyEvent::new(KeyCode::Esc, KeyModifiers::NONE));
            return;
        }
        if !self.input.composer().is_empty() {
            self.input.composer_mut().clear();
            self.input.refresh_completion();
            return;
        }
        if self.is_busy() {
            self.interrupt();
            return;
        }
        let now = Instant::now();
        if self
            .ctrl_c_at
            .is_some_and(|at| now.duration_since(at) < CTRL_C_WINDOW)
        {
            self.quit = true;
        } else {
            self.ctrl_c_at = Some(now);
            self.hint = Some("Press Ctrl+C again to exit".into());
        }
    }

    /// When the "press Ctrl+C again" hint goes away (with the window for the second press).
    pub fn hint_deadline(&self) -> Option<Instant> {
        self.hint.as_ref()?;
        match (self.ctrl_c_at, self.esc_at) {
            (Some(at), _) => Some(at + CTRL_C_WINDOW),
            (None, Some(at)) => Some(at + super::rewind::DOUBLE_ESC_WINDOW),
            (None, None) => None,
        }
    }

    /// The window for a second Ctrl+C (or Esc) has passed: the hint goes.
    pub fn expire_hint(&mut self) {
        self.hint = None;
        self.ctrl_c_at = None;
        self.esc_at = None;
    }

    /// Offers a key to the overlays; returns whether one took it.
    fn layer_key(&mut self, key: KeyEvent) -> bool {
        match self.layers.on_key(key) {
            EventResult::Ignored => false,
            EventResult::Consumed => true,
            EventResult::Done(action) => {
                self.apply(action);
                true
            }
        }
    }

    /// What a finished overlay asked for.
    fn apply(&mut self, action: AppAction) {
        match action {
            AppAction::Permission(request, choice) => self.answer_permission(*request, choice),
            AppAction::Picked(purpose, id) => self.picked(purpose, id),
            AppAction::PickerCancelled => self.picker_cancelled(),
            AppAction::Trust(trust) => self.trust_answered(trust),
            AppAction::SetupDone(choice) => self.setup_done(choice),
            AppAction::Dismissed => {}
        }
    }

    /// A bracketed paste: into the top overlay, else the composer.
    pub fn on_paste(&mut self, text: &str) {
        if !self.layers.on_paste(text) {
            self.paste_into_composer(text);
        }
    }

    /// The mouse wheel scrolls the top overlay when it takes it (a long preview in the
    /// permission popup), else the transcript unless a full-screen overlay hides it.
    /// Returns whether anything changed.
    pub fn on_mouse(&mut self, mouse: &MouseEvent) -> bool {
        if self.layers.covers_screen() {
            return false;
        }
        if self.layers.on_mouse(mouse) {
            return true;
        }
        let scrolled = self.transcript.handle_mouse(mouse);
        if scrolled {
            self.load_older_history_at_top();
        }
        scrolled
    }
}
