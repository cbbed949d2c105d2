//! The overlays stacked above the base screen (transcript, composer, status line), in the
//! manner of helix's compositor: the permission popup, the pickers, the setup screen and
//! the trust question each implement [`Overlay`], and the app keeps them in [`Overlays`].
//!
//! - Keys go to the top overlay first and fall through to the one below (and at last to
//!   the base screen) while an overlay ignores them. Today's overlays are modal dialogs
//!   and consume every key.
//! - When an overlay is done it returns an [`AppAction`]; the stack drops the overlay and
//!   the app applies the action. Overlays never touch the app's state themselves.
//! - A paste goes to the top overlay only.
//! - Rendering runs bottom-up from the topmost full-screen overlay (what lies under it is
//!   hidden, so it is not drawn); each overlay picks its own area from the [`Stage`].
//! - The topmost overlay with an opinion about the terminal cursor places (or hides) it,
//!   so an IME draws its preedit in the field being typed into.
//!
//! Adding a popup: implement [`Overlay`] in the popup's file and push it where it opens
//! (`app.layers.push(MyPopup::new(…))`); a new kind of answer is one more [`AppAction`].

use crossterm::event::{KeyEvent, MouseEvent};
use ratatui::buffer::Buffer;
use ratatui::layout::{Position, Rect};

use super::permission::PermissionChoice;
use super::picker::PickerPurpose;
use super::setup::SetupChoice;
use robota_sdk::PermissionRequest;

/// What the app does when an overlay is finished.
#[derive(Debug)]
pub enum AppAction {
    /// The permission popup was answered (the request is boxed: it is large).
    Permission(Box<PermissionRequest>, PermissionChoice),
    /// A picker's choice (an item's id).
    Picked(PickerPurpose, String),
    /// A picker was closed without a choice.
    PickerCancelled,
    /// The trust question: trust the folder or not.
    Trust(bool),
    /// The setup screen finished (`None`: cancelled).
    SetupDone(Option<SetupChoice>),
    /// An overlay that only shows something was closed.
    Dismissed,
}

/// What an overlay made of a key.
#[derive(Debug)]
pub enum EventResult {
    /// Not for this overlay: the key goes to the one below.
    Ignored,
    /// Handled; the overlay stays.
    Consumed,
    /// The overlay is finished: it is removed and the app applies the action.
    Done(AppAction),
}

/// Where an overlay wants the terminal cursor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cursor {
    /// No opinion: the layer below decides.
    PassThrough,
    /// Hidden (the overlay has no text field in use).
    Hidden,
    /// On this cell.
    At(Position),
}

impl From<Option<Position>> for Cursor {
    fn from(position: Option<Position>) -> Self {
        position.map_or(Cursor::Hidden, Cursor::At)
    }
}

/// The areas an overlay may draw into.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stage {
    /// Everything above the status line.
    pub screen: Rect,
    /// The room above the composer (the transcript and the queued prompt), where floating
    /// popups sit; all of `screen` when a full-screen overlay hides the base.
    pub free: Rect,
}

/// One layer above the base screen.
pub trait Overlay {
    /// A key press (releases never arrive here).
    fn on_key(&mut self, key: KeyEvent) -> EventResult;

    /// A bracketed paste; ignored unless the overlay has a text field.
    fn on_paste(&mut self, _text: &str) {}

    /// A mouse event; returns whether the overlay used it (else the screen below may).
    fn on_mouse(&mut self, _mouse: &MouseEvent) -> bool {
        false
    }

    /// Whether the overlay covers everything above the status line, hiding the base
    /// screen and the overlays below it (rather than floating over the transcript).
    fn is_full_screen(&self) -> bool;

    /// Draws the overlay into the area of `stage` it chooses.
    fn draw(&self, stage: &Stage, buf: &mut Buffer);

    /// Where the terminal cursor goes while this overlay is shown.
    fn cursor(&self, stage: &Stage) -> Cursor;

    /// A name to find the overlay by (the permission popup has one).
    fn id(&self) -> Option<&'static str> {
        None
    }
}

/// The stack of overlays, bottom first.
#[derive(Default)]
pub struct Overlays {
    stack: Vec<Box<dyn Overlay>>,
}

impl std::fmt::Debug for Overlays {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list()
            .entries(self.stack.iter().map(|o| o.id().unwrap_or("overlay")))
            .finish()
    }
}

impl Overlays {
    /// Whether no overlay is shown.
    pub fn is_empty(&self) -> bool {
        self.stack.is_empty()
    }

    /// How many overlays are stacked.
    pub fn len(&self) -> usize {
        self.stack.len()
    }

    /// Puts `overlay` on top.
    pub fn push(&mut self, overlay: impl Overlay + 'static) {
        self.stack.push(Box::new(overlay));
    }

    /// Puts `overlay` below the full-screen overlays (a picker opened meanwhile stays on
    /// top), else on top.
    pub fn push_below_full_screen(&mut self, overlay: impl Overlay + 'static) {
        let at = self
            .stack
            .iter()
            .position(|o| o.is_full_screen())
            .unwrap_or(self.stack.len());
        self.stack.insert(at, Box::new(overlay));
    }

    /// Whether the top overlay fills the screen (setup, trust): Ctrl+C there leaves it
    /// whole rather than stepping back.
    pub fn top_is_full_screen(&self) -> bool {
        self.stack.last().is_some_and(|o| o.is_full_screen())
    }

    /// Whether an overlay with this id is on the stack.
    pub fn contains(&self, id: &str) -> bool {
        self.stack.iter().any(|o| o.id() == Some(id))
    }

    /// Drops every overlay with this id.
    pub fn remove(&mut self, id: &str) {
        self.stack.retain(|o| o.id() != Some(id));
    }

    /// Offers `key` to the overlays from the top down; a finished overlay is removed.
    /// `Ignored` when every overlay ignored it.
    pub fn on_key(&mut self, key: KeyEvent) -> EventResult {
        for at in (0..self.stack.len()).rev() {
            match self.stack[at].on_key(key) {
                EventResult::Ignored => {}
                EventResult::Consumed => return EventResult::Consumed,
                EventResult::Done(action) => {
                    self.stack.remove(at);
                    return EventResult::Done(action);
                }
            }
        }
        EventResult::Ignored
    }

    /// A paste for the top overlay; `false` when there is none.
    pub fn on_paste(&mut self, text: &str) -> bool {
        match self.stack.last_mut() {
            Some(top) => {
                top.on_paste(text);
                true
            }
            None => false,
        }
    }

    /// A mouse event for the top overlay; whether it used it.
    pub fn on_mouse(&mut self, mouse: &MouseEvent) -> bool {
        self.stack.last_mut().is_some_and(|top| top.on_mouse(mouse))
    }

    /// Whether a full-screen overlay hides the base screen.
    pub fn covers_screen(&self) -> bool {
        self.stack.iter().any(|o| o.is_full_screen())
    }

    /// The overlays that show: from the topmost full-screen one up.
    fn visible(&self) -> &[Box<dyn Overlay>] {
        let from = self
            .stack
            .iter()
            .rposition(|o| o.is_full_screen())
            .unwrap_or(0);
        &self.stack[from..]
    }

    /// Draws the visible overlays, bottom first.
    pub fn draw(&self, stage: &Stage, buf: &mut Buffer) {
        for overlay in self.visible() {
            overlay.draw(stage, buf);
        }
    }

    /// The cursor of the topmost visible overlay with an opinion; `PassThrough` when none
    /// has one (the base screen places it).
    pub fn cursor(&self, stage: &Stage) -> Cursor {
        self.visible()
            .iter()
            .rev()
            .map(|o| o.cursor(stage))
            .find(|c| *c != Cursor::PassThrough)
            .unwrap_or(Cursor::PassThrough)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crossterm::event::{KeyCode, KeyModifiers};

    /// A test overlay: consumes or ignores keys, finishes on Enter.
    struct Probe {
        name: &'static str,
        full: bool,
        consume: bool,
        cursor: Cursor,
    }

    impl Overlay for Probe {
        fn on_key(&mut self, key: KeyEvent) -> EventResult {
            match key.code {
                KeyCode::Enter => EventResult::Done(AppAction::Trust(self.full)),
                _ if self.consume => EventResult::Consumed,
                _ => EventResult::Ignored,
            }
        }
        fn is_full_screen(&self) -> bool {
            self.full
        }
        fn draw(&self, _stage: &Stage, buf: &mut Buffer) {
            buf.set_string(0, 0, self.name, ratatui::style::Style::new());
        }
        fn cursor(&self, _stage: &Stage) -> Cursor {
            self.cursor
        }
        fn id(&self) -> Option<&'static str> {
            Some(self.name)
        }
    }

    fn probe(name: &'static str, full: bool, consume: bool, cursor: Cursor) -> Probe {
        Probe {
            name,
            full,
            consume,
            cursor,
        }
    }

    fn key(code: KeyCode) -> KeyEvent {
        KeyEvent::new(code, KeyModifiers::NONE)
    }

    #[test]
    fn keys_fall_through_ignoring_overlays_and_a_finished_one_is_removed() {
        let mut stack = Overlays::default();
        stack.push(probe("below", false, true, Cursor::PassThrough));
        stack.push(probe("top", false, false, Cursor::PassThrough));
        assert!(matches!(
            stack.on_key(key(KeyCode::Char('x'))),
            EventResult::Consumed
        ));
        assert!(matches!(
            stack.on_key(key(KeyCode::Enter)),
            EventResult::Done(AppAction::Trust(false))
        ));
        assert_eq!(stack.len(), 1, "the top one finished");
        stack.remove("below");
        assert!(stack.is_empty());
        assert!(matches!(
            stack.on_key(key(KeyCode::Enter)),
            EventResult::Ignored
        ));
    }

    #[test]
    fn floating_overlays_go_below_full_screen_ones_which_hide_what_is_under_them() {
        let mut stack = Overlays::default();
        stack.push(probe("picker", true, true, Cursor::Hidden));
        stack.push_below_full_screen(probe("popup", false, true, Cursor::PassThrough));
        assert!(stack.contains("popup") && stack.covers_screen());
        let area = Rect::new(0, 0, 10, 1);
        let stage = Stage {
            screen: area,
            free: area,
        };
        let mut buf = Buffer::empty(area);
        stack.draw(&stage, &mut buf);
        assert_eq!(buf[(0, 0)].symbol(), "p");
        assert_eq!(buf[(1, 0)].symbol(), "i", "only the picker is drawn");
        assert_eq!(stack.cursor(&stage), Cursor::Hidden);
        stack.remove("picker");
        assert!(!stack.covers_screen());
        assert_eq!(
            stack.cursor(&stage),
            Cursor::PassThrough,
            "the base places it"
        );
    }
}
