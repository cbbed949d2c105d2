//! Syntax highlighting of code blocks with syntect, mapped onto the terminal's ANSI
//! palette. The syntax set is loaded once, lazily and off the first-frame path: the first
//! code block asks for it on a background thread and renders plain until it is ready (the
//! app may also start the load early with [`request`] and get a callback to redraw,
//! [`set_ready_hook`]).
//! Highlighting is incremental, one line at a time, so a streaming code block costs its
//! length once; past a size limit the rest of a block stays plain. The loader thread also
//! warms the common languages up (syntect compiles its regexes on first use, ~20 ms each).

use std::str::FromStr;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};

use ratatui::style::{Color, Modifier, Style};
use ratatui::text::Span;
use syntect::highlighting::{
    Color as SynColor, FontStyle, HighlightIterator, HighlightState, Highlighter, ScopeSelectors,
    StyleModifier, Theme as SynTheme, ThemeItem, ThemeSettings,
};
use syntect::parsing::{ParseState, ScopeStack, SyntaxReference, SyntaxSet};

use crate::wrap::Row;

/// Highlighting of a code block stops after this many source bytes (the rest is plain).
pub const MAX_HIGHLIGHT_BYTES: usize = 64 * 1024;
/// A code line longer than this stops its block's highlighting (regexes on minified text
/// crawl).
pub const MAX_HIGHLIGHT_LINE: usize = 2_000;

/// The loaded syntaxes and the palette theme.
pub struct Catalog {
    syntaxes: SyntaxSet,
    theme: SynTheme,
}

static CATALOG: OnceLock<Catalog> = OnceLock::new();
static LOAD_STARTED: AtomicBool = AtomicBool::new(false);
/// Called once the syntaxes a [`request`] started are loaded (the app redraws in it).
static READY_HOOK: OnceLock<Box<dyn Fn() + Send + Sync>> = OnceLock::new();

/// Sets what runs when a requested load finishes (once per process; later calls are
/// ignored). The app sets a redraw here, so a code block drawn plain gets its colours.
pub fn set_ready_hook(hook: impl Fn() + Send + Sync + 'static) {
    let _ = READY_HOOK.set(Box::new(hook));
}

/// Snippets exercising the common constructs of the languages answers use most, so
/// syntect compiles their regexes on the loader thread instead of during a frame.
const WARM_UP: &[(&str, &str)] = &[
    (
        "rust",
        "use std::io;\n#[derive(Debug)]\npub struct A<'a, T> { x: &'a [u8], t: T }\nimpl<T: Clone> A<'_, T> {\n    pub fn f(&self) -> Option<u32> {\n        let s = \"text {}\"; // note\n        match self.x.len() { 0 => None, n => Some(n as u32 * 2) }\n    }\n}\nmacro_rules! m { () => {} }\n",
    ),
    (
        "python",
        "import os\n@dataclass\nclass A(B):\n    def f(self, x: int = 1) -> str:\n        \"\"\"Doc.\"\"\"\n        return f\"{x}\" if x else 'n'  # c\n",
    ),
    (
        "js",
        "import { a } from './b';\nexport const f = async (x) => { const y = `t${x}`; return await g(y, 1.5, /re/g); }; // c\nclass C extends D { constructor() { super(); this.x = null; } }\n",
    ),
    (
        "bash",
        "#!/bin/bash\nset -euo pipefail\nfor f in *.rs; do echo \"$f\" | grep -q x && cd \"${HOME}\"; done # c\nif [ -n \"$1\" ]; then exit 1; fi\n",
    ),
    (
        "json",
        "{\"a\": [1, 2.5, true, null], \"b\": {\"c\": \"d\"}}\n",
    ),
    (
        "diff",
        "--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n-old\n+new\n context\n",
    ),
    (
        "go",
        "package main\nimport \"fmt\"\nfunc main() { x := []int{1}; fmt.Println(x) } // c\n",
    ),
    (
        "c",
        "#include <stdio.h>\nint main(void) { char *s = \"x\"; return 0; } /* c */\n",
    ),
];

fn load() -> Catalog {
    let catalog = Catalog {
        syntaxes: SyntaxSet::load_defaults_newlines(),
        theme: palette_theme(),
    };
    for (lang, code) in WARM_UP {
        if let Some(mut h) = LineHighlighter::with_catalog(&catalog, lang, Style::new()) {
            for line in code.lines() {
                let _ = h.line(line);
            }
        }
    }
    catalog
}

/// The catalog if it is loaded; never blocks.
pub fn catalog() -> Option<&'static Catalog> {
    CATALOG.get()
}

/// Whether highlighting is available now.
pub fn is_ready() -> bool {
    CATALOG.get().is_some()
}

/// Starts loading on a background thread (once); code renders plain until it is ready,
/// then the ready hook runs.
pub fn request() {
    if CATALOG.get().is_some() || LOAD_STARTED.swap(true, Ordering::SeqCst) {
        return;
    }
    let spawned = std::thread::Builder::new()
        .name("syntax-load".into())
        .spawn(|| {
            let _ = CATALOG.get_or_init(load);
            if let Some(hook) = READY_HOOK.get() {
                hook();
            }
        });
    if let Err(err) = spawned {
        tracing::warn!("cannot start the syntax loader: {err}; code stays plain");
    }
}

/// Loads the syntaxes on this thread (tests and benchmarks, for deterministic output).
pub fn load_blocking() -> &'static Catalog {
    LOAD_STARTED.store(true, Ordering::SeqCst);
    CATALOG.get_or_init(load)
}

/// A colour of the palette theme: the ANSI index in `r`, `a == 0` (bat's convention).
const fn ansi(index: u8) -> SynColor {
    SynColor {
        r: index,
        g: 0,
        b: 0,
        a: 0,
    }
}

/// "No colour": the terminal's default foreground.
const DEFAULT: SynColor = SynColor {
    r: 0,
    g: 0,
    b: 0,
    a: 1,
};

/// A syntect theme whose colours are ANSI palette indices, scopes chosen like bat's
/// `ansi` theme so it reads on light and dark terminals.
fn palette_theme() -> SynTheme {
    const RULES: &[(&str, Option<u8>, Option<FontStyle>)] = &[
        (
            "comment, punctuation.definition.comment",
            Some(8),
            Some(FontStyle::ITALIC),
        ),
        ("string, punctuation.definition.string", Some(2), None),
        ("constant.character.escape", Some(6), None),
        (
            "constant.numeric, constant.language, constant.character",
            Some(3),
            None,
        ),
        ("keyword, storage, keyword.operator.word", Some(5), None),
        ("keyword.operator", None, None),
        (
            "entity.name.function, support.function, meta.function-call variable.function",
            Some(4),
            None,
        ),
        (
            "entity.name.type, entity.name.class, entity.name.struct, entity.name.enum, support.type, support.class, storage.type.rust",
            Some(3),
            None,
        ),
        ("entity.name.tag", Some(4), None),
        ("entity.other.attribute-name", Some(3), None),
        ("variable.parameter, variable.language", Some(1), None),
        ("entity.name.macro, support.macro", Some(6), None),
        (
            "markup.heading, entity.name.section",
            Some(4),
            Some(FontStyle::BOLD),
        ),
        ("markup.bold", None, Some(FontStyle::BOLD)),
        ("markup.italic", None, Some(FontStyle::ITALIC)),
        ("markup.inserted", Some(2), None),
        ("markup.deleted", Some(1), None),
        (
            "meta.diff.range, meta.diff.header, meta.diff.index",
            Some(6),
            None,
        ),
        ("markup.raw, markup.inline.raw", Some(6), None),
        ("invalid", Some(1), None),
    ];
    let scopes = RULES
        .iter()
        .filter_map(|(selector, color, font)| {
            Some(ThemeItem {
                scope: ScopeSelectors::from_str(selector).ok()?,
                style: StyleModifier {
                    foreground: Some(color.map_or(DEFAULT, ansi)),
                    background: None,
                    font_style: *font,
                },
            })
        })
        .collect();
    SynTheme {
        name: Some("robota-ansi".into()),
        author: None,
        settings: ThemeSettings {
            foreground: Some(DEFAULT),
            ..ThemeSettings::default()
        },
        scopes,
    }
}

fn palette_color(c: SynColor) -> Option<Color> {
    if c.a != 0 {
        return None;
    }
    Some(match c.r {
        0 => Color::Black,
        1 => Color::Red,
        2 => Color::Green,
        3 => Color::Yellow,
        4 => Color::Blue,
        5 => Color::Magenta,
        6 => Color::Cyan,
        7 => Color::Gray,
        8 => Color::DarkGray,
        9 => Color::LightRed,
        10 => Color::LightGreen,
        11 => Color::LightYellow,
        12 => Color::LightBlue,
        13 => Color::LightMagenta,
        14 => Color::LightCyan,
        _ => Color::White,
    })
}

fn to_style(style: syntect::highlighting::Style, base: Style) -> Style {
    let mut out = base;
    if let Some(c) = palette_color(style.foreground) {
        out = out.fg(c);
    }
    if style.font_style.contains(FontStyle::BOLD) {
        out = out.add_modifier(Modifier::BOLD);
    }
    if style.font_style.contains(FontStyle::ITALIC) {
        out = out.add_modifier(Modifier::ITALIC);
    }
    if style.font_style.contains(FontStyle::UNDERLINE) {
        out = out.add_modifier(Modifier::UNDERLINED);
    }
    out
}

impl Catalog {
    /// The syntax for a fence's language word (`rust`, `py`, `ts`, `sh`, …).
    pub fn syntax_for(&self, lang: &str) -> Option<&SyntaxReference> {
        let lang = lang.trim().to_ascii_lowercase();
        let token = match lang.as_str() {
            "" | "text" | "txt" | "plain" | "plaintext" => return None,
            "ts" | "typescript" | "tsx" | "jsx" | "mjs" | "cjs" | "javascript" | "node" => "js",
            "shell" | "console" | "zsh" | "sh" | "shellscript" | "bash" => "bash",
            "yml" => "yaml",
            "c++" => "cpp",
            "golang" => "go",
            "py3" | "python3" => "py",
            "patch" => "diff",
            other => other,
        };
        self.syntaxes.find_syntax_by_token(token)
    }
}

/// Highlights one code block line by line, keeping syntect's state between lines.
pub struct LineHighlighter<'c> {
    catalog: &'c Catalog,
    parse: ParseState,
    state: HighlightState,
    base: Style,
}

impl LineHighlighter<'static> {
    /// A highlighter for `lang`, or `None` when the catalog is not loaded or the language
    /// is unknown.
    pub fn new(lang: &str, base: Style) -> Option<Self> {
        LineHighlighter::with_catalog(catalog()?, lang, base)
    }
}

impl<'c> LineHighlighter<'c> {
    fn with_catalog(catalog: &'c Catalog, lang: &str, base: Style) -> Option<Self> {
        let syntax = catalog.syntax_for(lang)?;
        let highlighter = Highlighter::new(&catalog.theme);
        Some(LineHighlighter {
            catalog,
            parse: ParseState::new(syntax),
            state: HighlightState::new(&highlighter, ScopeStack::new()),
            base,
        })
    }

    /// Highlights the next line (without its newline). `None` when syntect fails; the
    /// caller then shows the block plain.
    pub fn line(&mut self, line: &str) -> Option<Row> {
        let with_newline = format!("{line}\n");
        let ops = self
            .parse
            .parse_line(&with_newline, &self.catalog.syntaxes)
            .ok()?;
        let highlighter = Highlighter::new(&self.catalog.theme);
        let mut row: Row = Vec::new();
        for (style, text) in
            HighlightIterator::new(&mut self.state, &ops, &with_newline, &highlighter)
        {
            let text = text.strip_suffix('\n').unwrap_or(text);
            if text.is_empty() {
                continue;
            }
            let style = to_style(style, self.base);
            match row.last_mut() {
                Some(last) if last.style == style => last.content.to_mut().push_str(text),
                _ => row.push(Span::styled(text.to_string(), style)),
            }
        }
        Some(row)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rust_keywords_and_strings_get_palette_colours() {
        load_blocking();
        let mut h = LineHighlighter::new("rust", Style::new()).unwrap();
        let row = h.line("fn main() { let s = \"hi\"; }").unwrap();
        let text: String = row.iter().map(|s| s.content.as_ref()).collect();
        assert_eq!(text, "fn main() { let s = \"hi\"; }");
        let fn_kw = row.iter().find(|s| s.content == "fn").unwrap();
        assert_eq!(fn_kw.style.fg, Some(Color::Magenta));
        let string = row.iter().find(|s| s.content.contains("hi")).unwrap();
        assert_eq!(string.style.fg, Some(Color::Green));
        for span in &row {
            assert!(!matches!(span.style.fg, Some(Color::Rgb(..))));
        }
    }

    #[test]
    fn state_carries_across_lines() {
        load_blocking();
        let mut h = LineHighlighter::new("py", Style::new()).unwrap();
        h.line("s = \"\"\"start").unwrap();
        let row = h.line("still inside").unwrap();
        assert_eq!(row[0].style.fg, Some(Color::Green));
    }

    #[test]
    fn unknown_languages_have_no_highlighter() {
        load_blocking();
        assert!(LineHighlighter::new("no-such-language", Style::new()).is_none());
        assert!(LineHighlighter::new("", Style::new()).is_none());
        assert!(LineHighlighter::new("ts", Style::new()).is_some());
        assert!(LineHighlighter::new("diff", Style::new()).is_some());
    }
}
