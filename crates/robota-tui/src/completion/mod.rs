//! Completion over the composer: the slash-command popup (built-in and, later, skill,
//! custom and plugin commands as source-agnostic [`CompletionItem`]s, with their argument
//! values), the `@` file popup over a gitignore-aware [`FileIndex`] built off the UI
//! thread, and [`PromptInput`], which joins them to the composer for the app.
//!
//! The app's part. Layout: `input.set_width(w)` and `input.desired_height(w)`. Frame:
//! `input.render(area, buf)`, `input.render_popup(area, buf)` on the layer above, and the
//! terminal cursor at `input.cursor_position(area)`. Events: `input.handle_key(key)` /
//! `input.paste(text)`, then act on the [`InputAction`]; when
//! `input.file_indexer().subscribe()` fires, `input.refresh_completion()` and redraw.

pub mod file_index;
pub mod file_popup;
pub mod file_search;
pub mod items;
mod list_view;
pub mod prompt_input;
pub mod slash_popup;
#[cfg(test)]
mod tests;

pub use file_index::{FileIndex, FileIndexer};
pub use file_search::{FileMatch, FileSearch};
pub use items::{CompletionItem, builtin_commands, command_items};
pub use prompt_input::{InputAction, PromptInput};
pub use slash_popup::{SlashChoice, SlashPopup};
