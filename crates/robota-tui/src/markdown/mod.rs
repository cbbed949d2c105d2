//! Streaming markdown: an assistant answer arrives in small deltas and is rendered after
//! each one, so the work must stay linear in the answer's length. [`StreamingMarkdown`]
//! cuts the source into blocks at boundaries CommonMark agrees on (`blocks`); a finished
//! block is parsed once (pulldown-cmark, `parse`) into width-independent nodes and laid
//! out once per width (`layout`), its lines appended to a cache that is never rebuilt
//! unless the width changes. Only the open tail block is parsed again per frame — except a
//! top-level fenced code block, which is built line by line (`code`, incrementally
//! highlighted by syntect, `highlight`), so even a 5,000-line code block streams in
//! linear time.

mod blocks;
mod code;
pub mod highlight;
mod layout;
mod parse;
mod table;

use ratatui::style::Style;
use ratatui::text::Line;

use self::blocks::{Fence, ListMarker, OpenBlock, indent, is_heading, starts_new_block};
use self::code::CodeBlock;
use self::layout::{layout_code_rows, layout_nodes};
use self::parse::{Node, Prefix, parse};
use crate::theme::Theme;

enum Body {
    Nodes(Vec<Node>),
    Code(CodeBlock),
}

/// A finished block: parsed once, laid out once per width.
struct Chunk {
    /// Whether a blank line separates it from the block before.
    gap: bool,
    body: Body,
}

enum OpenKind {
    Markdown(OpenBlock),
    Fence(Fence, CodeBlock),
}

/// The block still receiving lines.
struct OpenChunk {
    start: usize,
    gap: bool,
    kind: OpenKind,
}

/// Rendered lines for one width. `lines[..stable]` is final; the rest is the open tail.
#[derive(Default)]
struct Cache {
    width: usize,
    lines: Vec<Line<'static>>,
    stable: usize,
    /// Chunks whose lines are all in `lines[..stable]`.
    laid: usize,
    /// For the fence chunk at index `laid` (open or just finished): code rows laid so far.
    fence_rows: Option<usize>,
    /// Whether `lines` reflects the current source.
    fresh: bool,
}

/// A markdown document that grows by deltas and renders to terminal lines per width.
pub struct StreamingMarkdown {
    theme: Theme,
    base: Style,
    source: String,
    /// Bytes of `source` fed to the block splitter (complete lines only).
    scanned: usize,
    chunks: Vec<Chunk>,
    open: Option<OpenChunk>,
    /// Blank lines were seen since the last finished block (while none is open).
    blank_before: bool,
    /// The list marker of the last finished block, when it was a list item.
    last_list: Option<ListMarker>,
    /// Some finished block has code waiting for the syntaxes to load.
    waiting: bool,
    /// `source` was given whole ([`StreamingMarkdown::from_text`]) and is not parsed yet:
    /// it is parsed at the first render (or push), so a resumed session with thousands of
    /// answers parses only those that come into view.
    deferred: bool,
    cache: Cache,
}

impl StreamingMarkdown {
    /// An empty document drawn with `theme`.
    pub fn new(theme: Theme) -> Self {
        StreamingMarkdown {
            theme,
            base: Style::new(),
            source: String::new(),
            scanned: 0,
            chunks: Vec::new(),
            open: None,
            blank_before: false,
            last_list: None,
            waiting: false,
            deferred: false,
            cache: Cache::default(),
        }
    }

    /// A document whose text is all drawn over `base` (thinking text is dim italic).
    pub fn with_base_style(theme: Theme, base: Style) -> Self {
        StreamingMarkdown {
            base,
            ..StreamingMarkdown::new(theme)
        }
    }

    /// A finished document holding `text`, parsed when first rendered.
    pub fn from_text(theme: Theme, text: &str) -> Self {
        StreamingMarkdown {
            source: text.to_string(),
            deferred: true,
            ..StreamingMarkdown::new(theme)
        }
    }

    /// Parses the text [`StreamingMarkdown::from_text`] left for later.
    fn parse_deferred(&mut self) {
        if !self.deferred {
            return;
        }
        self.deferred = false;
        let text = std::mem::take(&mut self.source);
        self.push(&text);
        self.finish();
    }

    /// Marks the document complete: the last line and the open block are finished like
    /// any other (so code in it gets highlighted). Text pushed afterwards starts on a new
    /// line.
    pub fn finish(&mut self) {
        self.parse_deferred();
        let source = std::mem::take(&mut self.source);
        if self.scanned < source.len() {
            self.feed_line(&source, self.scanned, source.len());
            self.scanned = source.len();
        }
        match self.open.take() {
            Some(OpenChunk {
                start,
                gap,
                kind: OpenKind::Markdown(block),
            }) => self.finish_markdown(&source[start..], gap, block.list),
            Some(OpenChunk {
                gap,
                kind: OpenKind::Fence(_, code),
                ..
            }) => self.finish_code(gap, code),
            None => {}
        }
        self.source = source;
        self.cache.fresh = false;
    }

    /// The markdown source so far.
    pub fn source(&self) -> &str {
        &self.source
    }

    /// Whether no text was pushed yet.
    pub fn is_empty(&self) -> bool {
        self.source.is_empty()
    }

    /// Appends a delta. Complete lines are fed to the block splitter at once; finished
    /// blocks are parsed here, once.
    pub fn push(&mut self, delta: &str) {
        self.parse_deferred();
        if delta.is_empty() {
            return;
        }
        self.source.push_str(delta);
        self.cache.fresh = false;
        let source = std::mem::take(&mut self.source);
        while let Some(newline) = source[self.scanned..].find('\n') {
            let start = self.scanned;
            let end = start + newline + 1;
            self.feed_line(&source, start, end);
            self.scanned = end;
        }
        self.source = source;
    }

    fn feed_line(&mut self, source: &str, start: usize, end: usize) {
        let line = source[start..end].trim_end_matches('\n');
        let line = line.strip_suffix('\r').unwrap_or(line);
        let blank = line.trim().is_empty();
        match self.open.take() {
            Some(OpenChunk {
                start: open_start,
                gap,
                kind: OpenKind::Fence(fence, mut code),
            }) => {
                if fence.closes(line) {
                    self.finish_code(gap, code);
                } else {
                    code.push_line(fence.strip(line));
                    self.open = Some(OpenChunk {
                        start: open_start,
                        gap,
                        kind: OpenKind::Fence(fence, code),
                    });
                }
            }
            Some(OpenChunk {
                start: open_start,
                gap,
                kind: OpenKind::Markdown(mut block),
            }) => {
                if blank {
                    block.after_blank = true;
                } else if starts_new_block(&block, line) {
                    self.finish_markdown(&source[open_start..start], gap, block.list);
                    self.blank_before = block.after_blank;
                    self.start_chunk(source, start, end, line);
                    return;
                } else {
                    block.after_blank = false;
                }
                self.open = Some(OpenChunk {
                    start: open_start,
                    gap,
                    kind: OpenKind::Markdown(block),
                });
            }
            None if blank => self.blank_before = true,
            None => self.start_chunk(source, start, end, line),
        }
    }

    /// The list marker of an unindented list item line.
    fn list_marker(line: &str) -> Option<ListMarker> {
        if indent(line) == 0 {
            ListMarker::of(line).map(|(m, _)| m)
        } else {
            None
        }
    }

    /// Whether a block starting with `line` is separated from the previous one.
    fn gap_before(&self, line: &str) -> bool {
        let continues_list = !self.blank_before
            && Self::list_marker(line)
                .zip(self.last_list)
                .is_some_and(|(m, last)| last.same_list(m));
        !self.chunks.is_empty() && !continues_list
    }

    fn start_chunk(&mut self, source: &str, start: usize, end: usize, line: &str) {
        let gap = self.gap_before(line);
        self.blank_before = false;
        if let Some(fence) = Fence::open(line) {
            let code = CodeBlock::new(&fence.info, self.theme, true);
            self.open = Some(OpenChunk {
                start,
                gap,
                kind: OpenKind::Fence(fence, code),
            });
        } else if is_heading(line) {
            self.finish_markdown(&source[start..end], gap, None);
        } else {
            self.open = Some(OpenChunk {
                start,
                gap,
                kind: OpenKind::Markdown(OpenBlock {
                    list: Self::list_marker(line),
                    after_blank: false,
                }),
            });
        }
    }

    fn finish_markdown(&mut self, text: &str, gap: bool, list: Option<ListMarker>) {
        let mut nodes = parse(text, &self.theme, self.base, true);
        self.waiting |= nodes
            .iter_mut()
            .any(|n| n.code_mut().is_some_and(|c| c.is_waiting()));
        self.chunks.push(Chunk {
            gap,
            body: Body::Nodes(nodes),
        });
        self.last_list = list;
    }

    fn finish_code(&mut self, gap: bool, code: CodeBlock) {
        self.waiting |= code.is_waiting();
        self.chunks.push(Chunk {
            gap,
            body: Body::Code(code),
        });
        self.last_list = None;
    }

    /// Colours code blocks whose syntaxes arrived since; true when any changed.
    fn upgrade_code(&mut self) -> bool {
        let mut changed = false;
        if self.waiting {
            for chunk in &mut self.chunks {
                match &mut chunk.body {
                    Body::Nodes(nodes) => {
                        for code in nodes.iter_mut().filter_map(Node::code_mut) {
                            changed |= code.upgrade();
                        }
                    }
                    Body::Code(code) => changed |= code.upgrade(),
                }
            }
            self.waiting = false;
        }
        if let Some(OpenChunk {
            kind: OpenKind::Fence(_, code),
            ..
        }) = &mut self.open
        {
            changed |= code.upgrade();
        }
        changed
    }

    /// The document as lines of at most `width` columns (a lone grapheme wider than the
    /// width is the only exception). Cheap when nothing changed; after a delta only the
    /// open tail block is laid out again.
    pub fn render(&mut self, width: u16) -> &[Line<'static>] {
        self.parse_deferred();
        let width = usize::from(width.max(1));
        if highlight::is_ready() && self.upgrade_code() {
            self.cache = Cache::default();
        }
        if self.cache.width != width {
            self.cache = Cache {
                width,
                ..Cache::default()
            };
        }
        if !self.cache.fresh {
            self.lay_out(width);
            self.cache.fresh = true;
        }
        &self.cache.lines
    }

    fn lay_out(&mut self, width: usize) {
        let theme = self.theme;
        let partial_gap = self.gap_before(&self.source[self.scanned..]);
        let cache = &mut self.cache;
        cache.lines.truncate(cache.stable);
        while cache.laid < self.chunks.len() {
            let chunk = &self.chunks[cache.laid];
            match &chunk.body {
                Body::Nodes(nodes) => {
                    if chunk.gap {
                        cache.lines.push(Line::default());
                    }
                    layout_nodes(nodes, width, &theme, &mut cache.lines);
                }
                Body::Code(code) => {
                    let from = match cache.fence_rows.take() {
                        Some(from) => from,
                        None => {
                            if chunk.gap {
                                cache.lines.push(Line::default());
                            }
                            0
                        }
                    };
                    let rows = code.rows().get(from..).unwrap_or_default();
                    layout_code_rows(&Prefix::default(), rows, false, width, &mut cache.lines);
                }
            }
            cache.laid += 1;
        }
        cache.stable = cache.lines.len();
        let partial = &self.source[self.scanned..];
        match &self.open {
            Some(OpenChunk {
                gap,
                kind: OpenKind::Fence(fence, code),
                ..
            }) => {
                let from = match cache.fence_rows {
                    Some(from) => from,
                    None => {
                        if *gap {
                            cache.lines.push(Line::default());
                        }
                        0
                    }
                };
                let rows = code.rows().get(from..).unwrap_or_default();
                layout_code_rows(&Prefix::default(), rows, false, width, &mut cache.lines);
                cache.fence_rows = Some(code.rows().len());
                cache.stable = cache.lines.len();
                if !partial.is_empty() {
                    let row = code.partial_row(fence.strip(partial));
                    layout_code_rows(&Prefix::default(), &[row], false, width, &mut cache.lines);
                }
            }
            Some(OpenChunk {
                start,
                gap,
                kind: OpenKind::Markdown(_),
            }) => {
                if *gap {
                    cache.lines.push(Line::default());
                }
                let nodes = parse(&self.source[*start..], &theme, self.base, false);
                layout_nodes(&nodes, width, &theme, &mut cache.lines);
            }
            None if !partial.trim().is_empty() => {
                if partial_gap {
                    cache.lines.push(Line::default());
                }
                let nodes = parse(partial, &theme, self.base, false);
                layout_nodes(&nodes, width, &theme, &mut cache.lines);
            }
            None => {}
        }
    }
}

#[cfg(test)]
mod tests;
