//! STUB
use crossterm::event::KeyEvent;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
pub enum TrustOutcome { Pending, Trust, Decline }
pub struct TrustPrompt;
impl TrustPrompt {
    pub fn new(_d: &std::path::Path, _h: Vec<String>, _c: bool) -> Self { TrustPrompt }
    pub fn handle_key(&mut self, _k: KeyEvent) -> TrustOutcome { TrustOutcome::Trust }
    pub fn render(&self, _a: Rect, _b: &mut Buffer) {}
}
