//! Markdown source → width-independent nodes: pulldown-cmark's events folded into styled
//! prose, code blocks, rules and tables, each carrying the prefix its containers give it
//! (quote bars, list markers and their hanging indent). Parsing happens once per block;
//! laying the nodes out for a width is `layout`'s job.

use pulldown_cmark::{CodeBlockKind, Event, HeadingLevel, LinkType, Options, Parser, Tag, TagEnd};
use ratatui::style::{Modifier, Style};
use ratatui::text::Span;

use super::code::CodeBlock;
use super::table::Table;
use crate::theme::Theme;
use crate::wrap::{Row, display_width, sanitize};

/// What a node's rows start with: `first` on its first row, `rest` on the others.
#[derive(Debug, Clone, Default)]
pub(crate) struct Prefix {
    pub first: Row,
    pub rest: Row,
}

/// One laid-out-able piece of a markdown block.
pub(crate) enum Node {
    /// Prose wrapped at spaces: paragraphs, headings, list item text, HTML.
    Text {
        prefix: Prefix,
        spans: Row,
    },
    Code {
        prefix: Prefix,
        block: CodeBlock,
    },
    Rule {
        prefix: Prefix,
    },
    Table {
        prefix: Prefix,
        table: Table,
    },
    /// An empty separating row (still showing quote bars).
    Blank {
        prefix: Row,
    },
}

impl Node {
    /// The code block in this node, if any.
    pub(crate) fn code_mut(&mut self) -> Option<&mut CodeBlock> {
        match self {
            Node::Code { block, .. } => Some(block),
            _ => None,
        }
    }
}

/// The markdown extensions robota renders.
pub(crate) fn options() -> Options {
    Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH | Options::ENABLE_TASKLISTS
}

enum Container {
    Quote,
    List {
        next: Option<u64>,
    },
    Item {
        marker: Row,
        indent: usize,
        marker_shown: bool,
    },
}

struct TableBuilder {
    table: Table,
    row: Vec<Row>,
}

struct Builder<'a> {
    theme: &'a Theme,
    highlight: bool,
    nodes: Vec<Node>,
    containers: Vec<Container>,
    inline: Row,
    styles: Vec<Style>,
    links: Vec<(String, usize)>,
    /// A blank row is due before the next node; it shows the quote bars of when it
    /// became due.
    pending_gap: Option<Row>,
    code: Option<(String, String)>,
    table: Option<TableBuilder>,
}

const BULLETS: [&str; 3] = ["• ", "◦ ", "▪ "];

/// Parses one markdown block (or several) into nodes. `base` is patched under every
/// style (thinking text is dim); `highlight` allows syntax colouring of code.
pub(crate) fn parse(source: &str, theme: &Theme, base: Style, highlight: bool) -> Vec<Node> {
    let mut b = Builder {
        theme,
        highlight,
        nodes: Vec::new(),
        containers: Vec::new(),
        inline: Vec::new(),
        styles: vec![base],
        links: Vec::new(),
        pending_gap: None,
        code: None,
        table: None,
    };
    for event in Parser::new_ext(source, options()) {
        b.event(event);
    }
    b.flush_inline();
    b.nodes
}

impl Builder<'_> {
    fn style(&self) -> Style {
        self.styles.last().copied().unwrap_or_default()
    }

    fn push_style(&mut self, s: Style) {
        let top = self.style().patch(s);
        self.styles.push(top);
    }

    fn pop_style(&mut self) {
        if self.styles.len() > 1 {
            self.styles.pop();
        }
    }

    fn text(&mut self, text: &str, style: Style) {
        if text.is_empty() {
            return;
        }
        self.inline
            .push(Span::styled(sanitize(text).into_owned(), style));
    }

    /// The prefix of a new node; list markers are shown on the first node of their item.
    fn take_prefix(&mut self) -> Prefix {
        let mut prefix = Prefix::default();
        let bar = Span::styled("│ ", self.theme.quote_bar);
        for c in &mut self.containers {
            match c {
                Container::Quote => {
                    prefix.first.push(bar.clone());
                    prefix.rest.push(bar.clone());
                }
                Container::List { .. } => {}
                Container::Item {
                    marker,
                    indent,
                    marker_shown,
                } => {
                    let pad = Span::raw(" ".repeat(*indent));
                    if *marker_shown {
                        prefix.first.push(pad.clone());
                    } else {
                        prefix.first.extend(marker.iter().cloned());
                        *marker_shown = true;
                    }
                    prefix.rest.push(pad);
                }
            }
        }
        prefix
    }

    /// The prefix of a blank separator row: quote bars only, no trailing spaces.
    fn blank_prefix(&self) -> Row {
        let mut row = Vec::new();
        let mut pad = 0;
        for c in &self.containers {
            match c {
                Container::Quote => {
                    if pad > 0 {
                        row.push(Span::raw(" ".repeat(pad)));
                    }
                    row.push(Span::styled("│", self.theme.quote_bar));
                    pad = 1;
                }
                Container::Item { indent, .. } => pad += indent,
                Container::List { .. } => {}
            }
        }
        row
    }

    fn push_node(&mut self, make: impl FnOnce(Prefix) -> Node) {
        if let Some(then) = self.pending_gap.take()
            && !self.nodes.is_empty()
        {
            // Bars shared by the blocks before and after the gap.
            let now = self.blank_prefix();
            let prefix = if then.len() <= now.len() { then } else { now };
            self.nodes.push(Node::Blank { prefix });
        }
        let prefix = self.take_prefix();
        self.nodes.push(make(prefix));
    }

    fn flush_inline(&mut self) {
        if self.inline.is_empty() {
            return;
        }
        let mut spans = std::mem::take(&mut self.inline);
        // Drop trailing newlines (HTML blocks end with one).
        while let Some(last) = spans.last_mut() {
            let trimmed = last.content.trim_end_matches('\n').len();
            if trimmed == last.content.len() {
                break;
            }
            last.content.to_mut().truncate(trimmed);
            if last.content.is_empty() {
                spans.pop();
            } else {
                break;
            }
        }
        if spans.is_empty() {
            return;
        }
        self.push_node(|prefix| Node::Text { prefix, spans });
    }

    fn gap_due(&mut self) {
        self.pending_gap = Some(self.blank_prefix());
    }

    fn block_end(&mut self) {
        self.flush_inline();
        self.gap_due();
    }

    fn event(&mut self, event: Event<'_>) {
        if let Some((_, text)) = &mut self.code {
            match event {
                Event::Text(t) => text.push_str(&t),
                Event::End(TagEnd::CodeBlock) => self.end_code(),
                _ => {}
            }
            return;
        }
        match event {
            Event::Start(tag) => self.start(tag),
            Event::End(tag) => self.end(tag),
            Event::Text(t) => self.text(&t, self.style()),
            Event::Code(t) => self.text(&t, self.style().patch(self.theme.inline_code)),
            Event::InlineMath(t) | Event::DisplayMath(t) => self.text(&t, self.style()),
            Event::Html(t) | Event::InlineHtml(t) => {
                let tag = t.trim().to_ascii_lowercase();
                if matches!(tag.as_str(), "<br>" | "<br/>" | "<br />") {
                    self.text("\n", self.style());
                } else {
                    self.text(&t, self.style().patch(self.theme.dim));
                }
            }
            Event::FootnoteReference(label) => {
                self.text(&format!("[^{label}]"), self.style());
            }
            Event::SoftBreak => self.text(" ", self.style()),
            Event::HardBreak => self.text("\n", self.style()),
            Event::Rule => {
                self.flush_inline();
                self.push_node(|prefix| Node::Rule { prefix });
                self.gap_due();
            }
            Event::TaskListMarker(done) => {
                let mark = if done { "[x] " } else { "[ ] " };
                self.text(mark, self.style().patch(self.theme.list_marker));
            }
        }
    }

    fn start(&mut self, tag: Tag<'_>) {
        match tag {
            Tag::Paragraph => self.flush_inline(),
            Tag::Heading { level, .. } => {
                self.flush_inline();
                let style = match level {
                    HeadingLevel::H1 => self.theme.heading[0],
                    HeadingLevel::H2 => self.theme.heading[1],
                    _ => self.theme.heading[2],
                };
                self.push_style(style);
            }
            Tag::BlockQuote(_) => {
                self.flush_inline();
                self.containers.push(Container::Quote);
                self.push_style(self.theme.quote_text);
            }
            Tag::CodeBlock(kind) => {
                self.flush_inline();
                let lang = match kind {
                    CodeBlockKind::Fenced(info) => info.to_string(),
                    CodeBlockKind::Indented => String::new(),
                };
                self.code = Some((lang, String::new()));
            }
            Tag::HtmlBlock => self.flush_inline(),
            Tag::List(start) => {
                self.flush_inline();
                self.containers.push(Container::List { next: start });
            }
            Tag::Item => {
                self.flush_inline();
                let depth = self
                    .containers
                    .iter()
                    .filter(|c| matches!(c, Container::List { .. }))
                    .count();
                let text = match self.containers.last_mut() {
                    Some(Container::List { next: Some(n) }) => {
                        let text = format!("{n}. ");
                        *n += 1;
                        text
                    }
                    _ => BULLETS[depth.saturating_sub(1) % BULLETS.len()].to_string(),
                };
                let indent = display_width(&text);
                self.containers.push(Container::Item {
                    marker: vec![Span::styled(text, self.theme.list_marker)],
                    indent,
                    marker_shown: false,
                });
            }
            Tag::Table(aligns) => {
                self.flush_inline();
                self.table = Some(TableBuilder {
                    table: Table::new(aligns),
                    row: Vec::new(),
                });
            }
            Tag::TableHead | Tag::TableRow => {
                if let Some(t) = &mut self.table {
                    t.row.clear();
                }
            }
            Tag::TableCell => self.inline.clear(),
            Tag::Emphasis => self.push_style(Style::new().add_modifier(Modifier::ITALIC)),
            Tag::Strong => self.push_style(Style::new().add_modifier(Modifier::BOLD)),
            Tag::Strikethrough => {
                self.push_style(Style::new().add_modifier(Modifier::CROSSED_OUT));
            }
            Tag::Link {
                link_type,
                dest_url,
                ..
            } => {
                let show = !matches!(link_type, LinkType::Autolink | LinkType::Email)
                    && !dest_url.is_empty();
                let url = if show {
                    dest_url.to_string()
                } else {
                    String::new()
                };
                self.links.push((url, self.inline.len()));
                self.push_style(self.theme.link);
            }
            Tag::Image { .. } => {
                self.text("[image: ", self.style().patch(self.theme.dim));
                self.push_style(self.theme.dim);
            }
            Tag::Superscript | Tag::Subscript => self.push_style(Style::new()),
            Tag::FootnoteDefinition(_)
            | Tag::DefinitionList
            | Tag::DefinitionListTitle
            | Tag::DefinitionListDefinition
            | Tag::MetadataBlock(_) => self.flush_inline(),
        }
    }

    fn end(&mut self, tag: TagEnd) {
        match tag {
            TagEnd::Paragraph | TagEnd::HtmlBlock => self.block_end(),
            TagEnd::Heading(_) => {
                self.block_end();
                self.pop_style();
            }
            TagEnd::BlockQuote(_) => {
                self.block_end();
                self.pop_style();
                self.containers.pop();
            }
            TagEnd::CodeBlock => self.end_code(),
            TagEnd::List(_) => {
                self.flush_inline();
                self.containers.pop();
                if !self
                    .containers
                    .iter()
                    .any(|c| matches!(c, Container::List { .. }))
                {
                    self.gap_due();
                }
            }
            TagEnd::Item => {
                self.flush_inline();
                if let Some(Container::Item {
                    marker_shown: false,
                    ..
                }) = self.containers.last()
                {
                    self.push_node(|prefix| Node::Text {
                        prefix,
                        spans: Vec::new(),
                    });
                }
                self.containers.pop();
            }
            TagEnd::Table => {
                self.inline.clear();
                if let Some(t) = self.table.take() {
                    self.push_node(|prefix| Node::Table {
                        prefix,
                        table: t.table,
                    });
                    self.gap_due();
                }
            }
            TagEnd::TableHead => {
                if let Some(t) = &mut self.table {
                    t.table.header = std::mem::take(&mut t.row);
                }
            }
            TagEnd::TableRow => {
                if let Some(t) = &mut self.table {
                    let row = std::mem::take(&mut t.row);
                    t.table.rows.push(row);
                }
            }
            TagEnd::TableCell => {
                let cell = std::mem::take(&mut self.inline);
                if let Some(t) = &mut self.table {
                    t.row.push(cell);
                }
            }
            TagEnd::Emphasis
            | TagEnd::Strong
            | TagEnd::Strikethrough
            | TagEnd::Superscript
            | TagEnd::Subscript => self.pop_style(),
            TagEnd::Link => {
                self.pop_style();
                if let Some((url, from)) = self.links.pop() {
                    let text: String = self.inline[from.min(self.inline.len())..]
                        .iter()
                        .map(|s| s.content.as_ref())
                        .collect();
                    if !url.is_empty() && text != url {
                        let style = self.style().patch(self.theme.link_url);
                        self.text(&format!(" ({url})"), style);
                    }
                }
            }
            TagEnd::Image => {
                self.pop_style();
                self.text("]", self.style().patch(self.theme.dim));
            }
            TagEnd::FootnoteDefinition
            | TagEnd::DefinitionList
            | TagEnd::DefinitionListTitle
            | TagEnd::DefinitionListDefinition
            | TagEnd::MetadataBlock(_) => self.block_end(),
        }
    }

    fn end_code(&mut self) {
        if let Some((lang, text)) = self.code.take() {
            let block = CodeBlock::from_text(&lang, &text, *self.theme, self.highlight);
            self.push_node(|prefix| Node::Code { prefix, block });
            self.gap_due();
        }
    }
}
