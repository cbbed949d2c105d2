//! STUB
use crossterm::event::KeyEvent;
use ratatui::buffer::Buffer;
use ratatui::layout::{Position, Rect};
pub struct PickerItem { pub id: String, pub title: String, pub detail: String }
pub enum PickerOutcome { Pending, Chosen(String), Cancelled }
pub struct Picker { items: Vec<PickerItem> }
impl Picker {
    pub fn new(_t: impl Into<String>, items: Vec<PickerItem>, _c: bool) -> Self { Picker { items } }
    pub fn handle_key(&mut self, key: KeyEvent) -> PickerOutcome { match key.code { crossterm::event::KeyCode::Enter => PickerOutcome::Chosen(self.items[0].id.clone()), crossterm::event::KeyCode::Esc => PickerOutcome::Cancelled, _ => PickerOutcome::Pending } }
    pub fn paste(&mut self, _t: &str) {}
    pub fn render(&self, area: Rect, buf: &mut Buffer) { for (i, it) in self.items.iter().enumerate() { if (i as u16) < area.height { buf.set_string(area.x, area.y + i as u16, &it.title, ratatui::style::Style::default()); } } }
    pub fn cursor_position(&self, _a: Rect) -> Option<Position> { None }
}
pub fn age_label(_m: std::time::SystemTime, _n: std::time::SystemTime) -> String { "now".into() }
