//! A code block's content as styled rows, one per source line, built line by line so a
//! streaming fence costs each line once. Highlighted with syntect when the theme has
//! colours, the language is known, the syntaxes are loaded and the block is small enough;
//! otherwise plain, with an upgrade to highlighted once the syntaxes arrive.

use ratatui::style::Style;
use ratatui::text::Span;

use super::highlight::{self, LineHighlighter, MAX_HIGHLIGHT_BYTES, MAX_HIGHLIGHT_LINE};
use crate::theme::Theme;
use crate::wrap::{Row, WrapMode, sanitize, wrap_spans};

/// Whether (and how) a block is coloured.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Colouring {
    /// Coloured line by line as lines arrive.
    Highlighting,
    /// Plain for now; highlighted once the syntaxes are loaded.
    WaitingForSyntaxes,
    /// Plain for good (no colours, unknown language, too big, or not wanted).
    Plain,
}

/// The lines of one code block.
pub(crate) struct CodeBlock {
    lang: String,
    /// Style of unhighlighted code (and the base under highlighting).
    style: Style,
    source: Vec<String>,
    rows: Vec<Row>,
    bytes: usize,
    colouring: Colouring,
    highlighter: Option<Box<LineHighlighter<'static>>>,
}

impl CodeBlock {
    /// An empty block. `highlight == false` keeps it plain (used for the volatile tail).
    pub(crate) fn new(lang: &str, theme: Theme, highlight: bool) -> Self {
        let lang = lang.split_whitespace().next().unwrap_or("").to_string();
        let mut block = CodeBlock {
            lang,
            style: theme.code,
            source: Vec::new(),
            rows: Vec::new(),
            bytes: 0,
            colouring: Colouring::Plain,
            highlighter: None,
        };
        if highlight && theme.highlights_code() && !block.lang.is_empty() {
            block.colouring = Colouring::WaitingForSyntaxes;
            block.try_start_highlighting();
        }
        block
    }

    /// A block holding `text` (lines split at `\n`; a final newline ends the last line).
    pub(crate) fn from_text(lang: &str, text: &str, theme: Theme, highlight: bool) -> Self {
        let mut block = CodeBlock::new(lang, theme, highlight);
        let text = text.strip_suffix('\n').unwrap_or(text);
        if !text.is_empty() {
            for line in text.split('\n') {
                block.push_line(line);
            }
        }
        block
    }

    fn try_start_highlighting(&mut self) {
        if self.colouring != Colouring::WaitingForSyntaxes {
            return;
        }
        if !highlight::is_ready() {
            highlight::request();
            return;
        }
        match LineHighlighter::new(&self.lang, self.style) {
            Some(h) => {
                self.highlighter = Some(Box::new(h));
                self.colouring = Colouring::Highlighting;
                let source = std::mem::take(&mut self.source);
                self.rows.clear();
                self.bytes = 0;
                for line in &source {
                    self.push_line(line);
                }
            }
            None => self.colouring = Colouring::Plain,
        }
    }

    /// Whether the block waits for the syntaxes to be coloured.
    pub(crate) fn is_waiting(&self) -> bool {
        self.colouring == Colouring::WaitingForSyntaxes
    }

    /// Colours the block if the syntaxes have arrived since; true when its rows changed.
    pub(crate) fn upgrade(&mut self) -> bool {
        if self.is_waiting() && highlight::is_ready() {
            self.try_start_highlighting();
            return self.colouring == Colouring::Highlighting;
        }
        false
    }

    fn plain_row(&self, line: &str) -> Row {
        vec![Span::styled(line.to_string(), self.style)]
    }

    /// Appends one complete source line (without its newline).
    pub(crate) fn push_line(&mut self, line: &str) {
        let line = sanitize(line).into_owned();
        self.bytes += line.len() + 1;
        if self.colouring == Colouring::Highlighting
            && (self.bytes > MAX_HIGHLIGHT_BYTES || line.len() > MAX_HIGHLIGHT_LINE)
        {
            self.stop_highlighting();
        }
        let row = match (&mut self.highlighter, self.colouring) {
            (Some(h), Colouring::Highlighting) => h.line(&line),
            _ => None,
        };
        let row = match row {
            Some(row) => row,
            None => {
                if self.colouring == Colouring::Highlighting {
                    self.stop_highlighting();
                }
                self.plain_row(&line)
            }
        };
        self.rows.push(row);
        self.source.push(line);
    }

    /// Lines from here on stay plain; rows already shown keep their colours, so a block
    /// renders the same however it was streamed.
    fn stop_highlighting(&mut self) {
        self.colouring = Colouring::Plain;
        self.highlighter = None;
    }

    /// Rows per source line so far.
    pub(crate) fn rows(&self) -> &[Row] {
        &self.rows
    }

    /// A line still being streamed, shown plain.
    pub(crate) fn partial_row(&self, line: &str) -> Row {
        self.plain_row(&sanitize(line))
    }
}

/// Wraps one code row to `width` columns (code is hard-wrapped, spaces kept).
pub(crate) fn wrap_code_row(row: &Row, width: usize) -> Vec<Row> {
    if row.is_empty() {
        return vec![Vec::new()];
    }
    wrap_spans(row, width, width, WrapMode::Chars)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_when_the_theme_has_no_colour() {
        highlight::load_blocking();
        let block = CodeBlock::from_text("rust", "fn x() {}\n", Theme::new(false), true);
        assert_eq!(block.rows().len(), 1);
        assert_eq!(block.rows()[0].len(), 1);
        assert_eq!(block.rows()[0][0].style.fg, None);
    }

    #[test]
    fn highlighted_when_allowed() {
        highlight::load_blocking();
        let block = CodeBlock::from_text("rust", "fn x() {}", Theme::new(true), true);
        assert!(block.rows()[0].len() > 1);
        let tail = CodeBlock::from_text("rust", "fn x() {}", Theme::new(true), false);
        assert_eq!(tail.rows()[0].len(), 1);
    }

    #[test]
    fn huge_blocks_stop_highlighting_at_the_limit() {
        highlight::load_blocking();
        let line = "let x = 1; // padding padding padding padding padding padding\n";
        let lines = MAX_HIGHLIGHT_BYTES / line.len() + 20;
        let text = line.repeat(lines);
        let block = CodeBlock::from_text("rust", &text, Theme::new(true), true);
        assert_eq!(block.rows().len(), lines);
        assert!(block.rows()[0].len() > 1);
        assert!(block.rows()[lines - 10..].iter().all(|r| r.len() == 1));
    }
}
