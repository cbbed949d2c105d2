//! STUB
use crossterm::event::KeyEvent;
use ratatui::buffer::Buffer;
use ratatui::layout::{Position, Rect};
use crate::sdk::settings::setup_save::SetupProfile;
pub struct SetupChoice { pub model: String }
impl SetupChoice { pub fn to_profile(&self) -> SetupProfile { SetupProfile {} } }
pub enum SetupOutcome { Pending, Done(SetupChoice), Cancelled }
pub struct SetupScreen;
impl SetupScreen {
    pub fn new(_c: bool) -> Self { SetupScreen }
    pub fn handle_key(&mut self, _k: KeyEvent) -> SetupOutcome { SetupOutcome::Cancelled }
    pub fn paste(&mut self, _t: &str) {}
    pub fn render(&self, _a: Rect, _b: &mut Buffer) {}
    pub fn cursor_position(&self, _a: Rect) -> Option<Position> { None }
    pub fn set_error(&mut self, _m: String) {}
}
