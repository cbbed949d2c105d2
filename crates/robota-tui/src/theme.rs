//! The TUI's palette: one `Style` per role (user prompt, assistant, tool states, diff
//! lines, markdown elements, notices). Colours come only from the terminal's ANSI palette
//! (`Color::Red`, `Color::DarkGray`, …), never RGB, so light and dark terminal themes both
//! stay readable; with `NO_COLOR` set every role keeps its modifiers (bold, italic, …) but
//! loses its colours.

use ratatui::style::{Color, Modifier, Style};

/// Styles for every role the TUI paints. Build with [`Theme::from_env`] (honours
/// `NO_COLOR`) or [`Theme::new`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Theme {
    /// Whether colours are used at all (`false` under `NO_COLOR`).
    pub color: bool,
    /// Secondary text: hints, counts, URLs after links.
    pub dim: Style,
    /// The `>` gutter of a user prompt.
    pub user_gutter: Style,
    /// The text of a user prompt.
    pub user_text: Style,
    /// The `⏺` gutter of an assistant answer.
    pub assistant_gutter: Style,
    /// Thinking text (gutter and body).
    pub thinking: Style,
    /// Headings by level: `#`, `##`, `###` and deeper.
    pub heading: [Style; 3],
    pub(crate) inline_code: Style,
    /// Code block text when it is not highlighted.
    pub code: Style,
    /// Link text.
    pub link: Style,
    /// The ` (url)` shown after a link's text.
    pub link_url: Style,
    pub(crate) quote_bar: Style,
    pub(crate) quote_text: Style,
    pub(crate) list_marker: Style,
    /// A horizontal rule (`---`).
    pub rule: Style,
    pub(crate) table_border: Style,
    pub(crate) table_header: Style,
    /// A tool call's name in its header, and a diff's summary line.
    pub tool_name: Style,
    pub(crate) tool_running: Style,
    pub(crate) tool_ok: Style,
    pub(crate) tool_error: Style,
    pub(crate) tool_denied: Style,
    /// Result preview text of a tool call.
    pub tool_output: Style,
    pub(crate) diff_add: Style,
    pub(crate) diff_del: Style,
    pub(crate) diff_context: Style,
    pub(crate) diff_hunk: Style,
    pub(crate) diff_line_no: Style,
    pub(crate) notice_info: Style,
    pub(crate) notice_warning: Style,
    pub(crate) notice_error: Style,
    pub(crate) notice_retry: Style,
    /// The "new output below" indicator over the transcript's last row.
    pub new_output: Style,
}

impl Theme {
    /// The theme for this process: colours unless `NO_COLOR` is set to a non-empty value
    /// (<https://no-color.org>).
    pub fn from_env() -> Self {
        let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
        Theme::new(!no_color)
    }

    /// A theme with colours (`true`) or modifiers only (`false`).
    pub fn new(color: bool) -> Self {
        let fg = |c: Color| {
            if color {
                Style::new().fg(c)
            } else {
                Style::new()
            }
        };
        let plain = Style::new();
        Theme {
            color,
            dim: fg(Color::DarkGray),
            user_gutter: fg(Color::Cyan).add_modifier(Modifier::BOLD),
            user_text: plain,
            assistant_gutter: plain,
            thinking: fg(Color::DarkGray).add_modifier(Modifier::ITALIC),
            heading: [
                plain.add_modifier(Modifier::BOLD | Modifier::UNDERLINED),
                plain.add_modifier(Modifier::BOLD),
                plain.add_modifier(Modifier::BOLD | Modifier::ITALIC),
            ],
            inline_code: fg(Color::Cyan),
            code: plain,
            link: fg(Color::Blue).add_modifier(Modifier::UNDERLINED),
            link_url: fg(Color::DarkGray),
            quote_bar: fg(Color::DarkGray),
            quote_text: plain.add_modifier(Modifier::ITALIC),
            list_marker: fg(Color::DarkGray),
            rule: fg(Color::DarkGray),
            table_border: fg(Color::DarkGray),
            table_header: plain.add_modifier(Modifier::BOLD),
            tool_name: plain.add_modifier(Modifier::BOLD),
            tool_running: fg(Color::Yellow),
            tool_ok: fg(Color::Green),
            tool_error: fg(Color::Red),
            tool_denied: fg(Color::Yellow),
            tool_output: plain,
            diff_add: fg(Color::Green),
            diff_del: fg(Color::Red),
            diff_context: plain,
            diff_hunk: fg(Color::Cyan),
            diff_line_no: fg(Color::DarkGray),
            notice_info: fg(Color::DarkGray),
            notice_warning: fg(Color::Yellow),
            notice_error: fg(Color::Red),
            notice_retry: fg(Color::Yellow),
            new_output: plain.add_modifier(Modifier::REVERSED),
        }
    }

    /// Colours for code highlighting are used only when the theme has colours.
    pub fn highlights_code(&self) -> bool {
        self.color
    }
}

impl Default for Theme {
    fn default() -> Self {
        Theme::new(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all_styles(t: &Theme) -> Vec<Style> {
        let mut v = vec![
            t.dim,
            t.user_gutter,
            t.user_text,
            t.assistant_gutter,
            t.thinking,
            t.inline_code,
            t.code,
            t.link,
            t.link_url,
            t.quote_bar,
            t.quote_text,
            t.list_marker,
            t.rule,
            t.table_border,
            t.table_header,
            t.tool_name,
            t.tool_running,
            t.tool_ok,
            t.tool_error,
            t.tool_denied,
            t.tool_output,
            t.diff_add,
            t.diff_del,
            t.diff_context,
            t.diff_hunk,
            t.diff_line_no,
            t.notice_info,
            t.notice_warning,
            t.notice_error,
            t.notice_retry,
            t.new_output,
        ];
        v.extend(t.heading);
        v
    }

    #[test]
    fn no_color_theme_has_no_colours_but_keeps_modifiers() {
        let t = Theme::new(false);
        for s in all_styles(&t) {
            assert_eq!(s.fg, None);
            assert_eq!(s.bg, None);
        }
        assert!(t.heading[0].add_modifier.contains(Modifier::BOLD));
        assert!(!t.highlights_code());
    }

    #[test]
    fn colours_are_palette_colours_only() {
        let t = Theme::new(true);
        let mut coloured = 0;
        for s in all_styles(&t) {
            for c in [s.fg, s.bg].into_iter().flatten() {
                coloured += 1;
                assert!(
                    !matches!(c, Color::Rgb(..) | Color::Indexed(_)),
                    "{c:?} is not an ANSI palette colour"
                );
            }
        }
        assert!(coloured > 10);
    }
}
