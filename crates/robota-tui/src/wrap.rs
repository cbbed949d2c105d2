//! Wrapping styled text by terminal display width: graphemes measured with `unicode-width`
//! (CJK and emoji take two columns), never split. Prose breaks where the Unicode line
//! breaking algorithm (UAX #14, `unicode-linebreak`) allows: at spaces, between CJK
//! ideographs and kana, after hyphens — never before closing punctuation (`)`, `」`, `。`,
//! `,` …) nor after opening punctuation. Korean is kept whole as words are (CSS
//! `word-break: keep-all`): it breaks at spaces, not between syllables. Only a word longer
//! than the line is hard-wrapped. Also the text sanitiser
//! every renderer runs untrusted text through (tabs expanded, control characters dropped so
//! no escape sequence reaches the terminal).

use std::borrow::Cow;

use ratatui::style::Style;
use ratatui::text::Span;
use unicode_segmentation::UnicodeSegmentation;
use unicode_width::UnicodeWidthStr;

/// Spaces a tab expands to.
const TAB: &str = "    ";

/// How text is broken into rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WrapMode {
    /// Prose: break at spaces (dropped at the break) and between wide characters.
    Words,
    /// Code and tool output: break at any grapheme, keep every space.
    Chars,
}

/// One row of wrapped output: styled spans, at most the row's width in columns (a single
/// grapheme wider than the whole row is the only exception; it gets a row of its own).
pub type Row = Vec<Span<'static>>;

/// Columns one grapheme cluster occupies, as ratatui's buffer counts them.
pub fn grapheme_width(g: &str) -> usize {
    if g.len() == 1 {
        return usize::from(!g.as_bytes()[0].is_ascii_control());
    }
    let sound_marks = g
        .chars()
        .filter(|c| matches!(c, '\u{FF9E}' | '\u{FF9F}'))
        .count();
    g.width() + sound_marks
}

/// Columns a string occupies.
pub fn display_width(s: &str) -> usize {
    if s.is_ascii() {
        return s.bytes().filter(|b| !b.is_ascii_control()).count();
    }
    s.graphemes(true).map(grapheme_width).sum()
}

/// Columns a row of spans occupies.
pub fn spans_width(spans: &[Span<'_>]) -> usize {
    spans.iter().map(|s| display_width(&s.content)).sum()
}

/// Text safe to hand to the terminal: tabs become spaces, `\r\n` becomes `\n`, other
/// control characters (ESC, BEL, lone CR, C1 controls) are dropped.
pub fn sanitize(text: &str) -> Cow<'_, str> {
    let clean = |c: char| c == '\n' || !c.is_control();
    if text.chars().all(clean) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\t' => out.push_str(TAB),
            c if clean(c) => out.push(c),
            _ => {}
        }
    }
    Cow::Owned(out)
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Class {
    Newline,
    Space,
    Wide,
    Narrow,
}

struct Piece<'a> {
    text: &'a str,
    style: Style,
    width: usize,
    class: Class,
    /// Whether UAX #14 allows a line to break just before this grapheme.
    break_before: bool,
}

fn is_closing_punctuation(g: &str) -> bool {
    let mut chars = g.chars();
    let Some(c) = chars.next() else { return false };
    "、。，．,.:;!?)]}」』】〉》）］｝〕！？：；ー…・ぁぃぅぇぉっゃゅょァィゥェォッャュョ%"
        .contains(c)
}

fn is_opening_punctuation(g: &str) -> bool {
    g.chars()
        .next()
        .is_some_and(|c| "（［｛「『【〈《〔([{".contains(c))
}

/// Hangul syllables and jamo: Korean words stay whole (keep-all).
fn is_hangul(g: &str) -> bool {
    g.chars().next().is_some_and(|c| {
        matches!(c,
            '\u{AC00}'..='\u{D7A3}'
            | '\u{1100}'..='\u{11FF}'
            | '\u{3130}'..='\u{318F}'
            | '\u{A960}'..='\u{A97F}'
            | '\u{D7B0}'..='\u{D7FF}')
    })
}

fn pieces<'a>(spans: &'a [Span<'a>]) -> Vec<Piece<'a>> {
    let text: String = spans.iter().map(|s| s.content.as_ref()).collect();
    let mut breaks = vec![false; text.len() + 1];
    for (at, _) in unicode_linebreak::linebreaks(&text) {
        breaks[at] = true;
    }
    let mut out = Vec::new();
    let mut base = 0;
    for span in spans {
        for (at, g) in span.content.grapheme_indices(true) {
            let (class, width) = if g == "\n" || g == "\r\n" {
                (Class::Newline, 0)
            } else if g == " " || g == "\u{3000}" || g == "\t" {
                (Class::Space, grapheme_width(g).max(1))
            } else {
                let w = grapheme_width(g);
                if w >= 2 {
                    (Class::Wide, w)
                } else {
                    (Class::Narrow, w)
                }
            };
            out.push(Piece {
                text: g,
                style: span.style,
                width,
                class,
                break_before: breaks[base + at],
            });
        }
        base += span.content.len();
    }
    out
}

/// Builds rows, merging neighbouring graphemes of one style into one span.
struct Rows {
    rows: Vec<Row>,
    current: Row,
    width: usize,
    first_width: usize,
    rest_width: usize,
}

impl Rows {
    fn limit(&self) -> usize {
        if self.rows.is_empty() {
            self.first_width
        } else {
            self.rest_width
        }
    }

    fn push(&mut self, piece: &Piece<'_>) {
        self.width += piece.width;
        if let Some(last) = self.current.last_mut()
            && last.style == piece.style
        {
            last.content.to_mut().push_str(piece.text);
            return;
        }
        self.current
            .push(Span::styled(piece.text.to_string(), piece.style));
    }

    /// Pushes one grapheme, starting a new row first when it would not fit.
    fn push_breaking(&mut self, piece: &Piece<'_>) {
        if self.width > 0 && self.width + piece.width > self.limit() {
            self.flush();
        }
        self.push(piece);
    }

    fn flush(&mut self) {
        self.rows.push(std::mem::take(&mut self.current));
        self.width = 0;
    }
}

/// Whether a line may break before `pieces[i]` (both it and the one before are not
/// spaces): where UAX #14 allows it, except inside Korean words and (kept as a guard for
/// tailorings the default algorithm leaves open, such as small kana) before closing or
/// after opening punctuation. Between two narrow characters only a hyphen inside a word
/// ("well-known") breaks: URLs, paths and `--options` stay whole as words.
fn may_break_between(pieces: &[Piece<'_>], i: usize) -> bool {
    let (before, after) = (&pieces[i - 1], &pieces[i]);
    if !after.break_before
        || (is_hangul(before.text) && is_hangul(after.text))
        || is_closing_punctuation(after.text)
        || is_opening_punctuation(before.text)
    {
        return false;
    }
    if before.class == Class::Narrow && after.class == Class::Narrow {
        let in_word = i >= 2
            && pieces[i - 2]
                .text
                .chars()
                .next()
                .is_some_and(char::is_alphanumeric);
        return before.text == "-" && in_word;
    }
    true
}

/// Wraps styled text into rows: the first row holds at most `first_width` columns, the
/// others `rest_width`. `\n` in the text forces a row break (an empty line gives an empty
/// row; empty text gives one empty row). Widths below 1 count as 1.
pub fn wrap_spans(
    spans: &[Span<'_>],
    first_width: usize,
    rest_width: usize,
    mode: WrapMode,
) -> Vec<Row> {
    let pieces = pieces(spans);
    let mut rows = Rows {
        rows: Vec::new(),
        current: Vec::new(),
        width: 0,
        first_width: first_width.max(1),
        rest_width: rest_width.max(1),
    };
    match mode {
        WrapMode::Chars => {
            for piece in &pieces {
                if piece.class == Class::Newline {
                    rows.flush();
                } else {
                    rows.push_breaking(piece);
                }
            }
        }
        WrapMode::Words => wrap_words(&pieces, &mut rows),
    }
    rows.flush();
    rows.rows
}

fn wrap_words(pieces: &[Piece<'_>], rows: &mut Rows) {
    let mut line_start = true;
    let mut pending_space: Option<(usize, usize)> = None;
    let mut i = 0;
    while i < pieces.len() {
        let piece = &pieces[i];
        match piece.class {
            Class::Newline => {
                rows.flush();
                line_start = true;
                pending_space = None;
                i += 1;
            }
            Class::Space => {
                let start = i;
                while i < pieces.len() && pieces[i].class == Class::Space {
                    i += 1;
                }
                if line_start {
                    // Indentation at the start of a source line is kept.
                    for p in &pieces[start..i] {
                        rows.push_breaking(p);
                    }
                } else {
                    pending_space = Some((start, i));
                }
            }
            Class::Wide | Class::Narrow => {
                let start = i;
                i += 1;
                while i < pieces.len()
                    && matches!(pieces[i].class, Class::Wide | Class::Narrow)
                    && !may_break_between(pieces, i)
                {
                    i += 1;
                }
                let word = &pieces[start..i];
                let word_width: usize = word.iter().map(|p| p.width).sum();
                let space = pending_space
                    .take()
                    .map_or(&pieces[0..0], |(a, b)| &pieces[a..b]);
                let space_width: usize = space.iter().map(|p| p.width).sum();
                if rows.width + space_width + word_width <= rows.limit() {
                    for p in space.iter().chain(word) {
                        rows.push(p);
                    }
                } else {
                    if rows.width > 0 {
                        rows.flush();
                    }
                    if word_width <= rows.limit() {
                        for p in word {
                            rows.push(p);
                        }
                    } else {
                        for p in word {
                            rows.push_breaking(p);
                        }
                    }
                }
                line_start = false;
            }
        }
    }
}

/// Cuts a row of spans to `width` columns; when something was cut the last column shows
/// `…`. Returns the spans and whether anything was cut.
pub fn truncate_spans(spans: &[Span<'_>], width: usize) -> (Row, bool) {
    if spans_width(spans) <= width {
        let row = spans
            .iter()
            .map(|s| Span::styled(s.content.to_string(), s.style))
            .collect();
        return (row, false);
    }
    let budget = width.saturating_sub(1);
    let mut used = 0;
    let mut row: Row = Vec::new();
    let mut last_style = Style::new();
    'outer: for span in spans {
        let mut kept = String::new();
        for g in span.content.graphemes(true) {
            let w = grapheme_width(g);
            if used + w > budget {
                if !kept.is_empty() {
                    row.push(Span::styled(kept, span.style));
                }
                last_style = span.style;
                break 'outer;
            }
            used += w;
            kept.push_str(g);
        }
        last_style = span.style;
        if !kept.is_empty() {
            row.push(Span::styled(kept, span.style));
        }
    }
    if width > 0 {
        row.push(Span::styled("…", last_style));
    }
    (row, true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use ratatui::style::Modifier;

    fn texts(rows: &[Row]) -> Vec<String> {
        rows.iter()
            .map(|r| r.iter().map(|s| s.content.as_ref()).collect())
            .collect()
    }

    fn wrap(text: &str, width: usize) -> Vec<String> {
        texts(&wrap_spans(
            &[Span::raw(text)],
            width,
            width,
            WrapMode::Words,
        ))
    }

    #[test]
    fn words_break_at_spaces() {
        assert_eq!(
            wrap("the quick brown fox jumps", 10),
            ["the quick", "brown fox", "jumps"]
        );
    }

    #[test]
    fn long_words_are_hard_wrapped() {
        assert_eq!(wrap("abcdefghij xy", 4), ["abcd", "efgh", "ij", "xy"]);
    }

    #[test]
    fn cjk_breaks_between_characters_and_counts_two_columns() {
        assert_eq!(wrap("안녕하세요 세계", 6), ["안녕하", "세요", "세계"]);
        assert_eq!(wrap("日本語のテキスト", 8), ["日本語の", "テキスト"]);
        // No break before a closing mark: "す。" stays together.
        assert_eq!(wrap("ですます。", 8), ["ですま", "す。"]);
    }

    #[test]
    fn korean_breaks_at_spaces_not_between_syllables() {
        // Syllable-by-syllable breaking would give "안녕하세요 세" and "계".
        assert_eq!(wrap("안녕하세요 세계", 14), ["안녕하세요", "세계"]);
        assert_eq!(
            wrap("한국어 문장은 띄어쓰기 단위로 줄을 바꿉니다.", 16),
            ["한국어 문장은", "띄어쓰기 단위로", "줄을 바꿉니다."]
        );
        // A Korean word wider than the line is still cut to fit.
        assert_eq!(wrap("가나다라마바", 4), ["가나", "다라", "마바"]);
    }

    #[test]
    fn no_row_starts_with_closing_punctuation() {
        assert_eq!(wrap("「日本語」です。", 8), ["「日本", "語」で", "す。"]);
        assert_eq!(wrap("(안녕하세요), 세계", 13), ["(안녕하세요),", "세계"]);
        assert_eq!(
            wrap("中文文本，没有空格。", 6),
            ["中文文", "本，没", "有空", "格。"]
        );
        // From 8 columns every unbreakable run ("かっこ」") fits, so no cut is forced.
        for width in 8..16 {
            for row in wrap("「かっこ」と（括弧）、句読点。", width) {
                let first = row.chars().next().unwrap_or(' ');
                assert!(!"」）、。っ".contains(first), "{row:?} at width {width}");
            }
        }
    }

    #[test]
    fn latin_breaks_after_hyphens_but_not_inside_numbers() {
        assert_eq!(
            wrap("well-known 1,000.50", 7),
            ["well-", "known", "1,000.5", "0"]
        );
        // URLs, paths and options move to the next row whole.
        assert_eq!(
            wrap("see https://example.com/a/b", 24),
            ["see", "https://example.com/a/b"]
        );
        assert_eq!(wrap("run --dry-run now", 8), ["run", "--dry-", "run now"]);
    }

    #[test]
    fn emoji_are_two_columns_and_never_split() {
        let rows = wrap("👍🏽👍🏽👍🏽", 5);
        assert_eq!(rows, ["👍🏽👍🏽", "👍🏽"]);
        assert_eq!(display_width("👨‍👩‍👧"), 2);
    }

    #[test]
    fn newlines_force_rows_and_keep_indentation() {
        assert_eq!(wrap("a\n\n  b c", 20), ["a", "", "  b c"]);
        assert_eq!(wrap("", 5), [""]);
    }

    #[test]
    fn first_row_can_be_narrower() {
        let rows = wrap_spans(&[Span::raw("aa bb cc dd")], 2, 5, WrapMode::Words);
        assert_eq!(texts(&rows), ["aa", "bb cc", "dd"]);
    }

    #[test]
    fn styles_survive_and_merge() {
        let bold = Style::new().add_modifier(Modifier::BOLD);
        let spans = [
            Span::styled("he", bold),
            Span::styled("llo", bold),
            Span::raw(" x"),
        ];
        let rows = wrap_spans(&spans, 80, 80, WrapMode::Words);
        assert_eq!(rows[0].len(), 2);
        assert_eq!(rows[0][0].content, "hello");
        assert_eq!(rows[0][0].style, bold);
    }

    #[test]
    fn chars_mode_keeps_spaces() {
        let rows = wrap_spans(&[Span::raw("a  b  c")], 3, 3, WrapMode::Chars);
        assert_eq!(texts(&rows), ["a  ", "b  ", "c"]);
    }

    #[test]
    fn sanitize_drops_escapes_and_expands_tabs() {
        assert_eq!(sanitize("a\x1b[31mb\tc\r\n"), "a[31mb    c\n");
        assert!(matches!(sanitize("plain"), Cow::Borrowed(_)));
    }

    #[test]
    fn truncation_marks_the_cut() {
        let (row, cut) = truncate_spans(&[Span::raw("hello world")], 6);
        assert!(cut);
        assert_eq!(texts(&[row]), ["hello…"]);
        let (row, cut) = truncate_spans(&[Span::raw("한국어")], 4);
        assert!(cut);
        assert_eq!(texts(&[row]), ["한…"]);
    }

    proptest! {
        #[test]
        fn wrapped_rows_never_exceed_the_width(
            text in "[a-z \\-\\n가-힣ぁ-んア-ン一-龥😀-🙏\u{301}.,。、]{0,120}",
            width in 2usize..40,
            chars_mode in any::<bool>(),
        ) {
            let mode = if chars_mode { WrapMode::Chars } else { WrapMode::Words };
            let rows = wrap_spans(&[Span::raw(text.clone())], width, width, mode);
            for row in &rows {
                prop_assert!(spans_width(row) <= width, "{:?} wider than {}", texts(std::slice::from_ref(row)), width);
            }
            // Nothing but break spaces is lost.
            let kept: String = texts(&rows).concat().chars().filter(|c| !c.is_whitespace()).collect();
            let source: String = text.chars().filter(|c| !c.is_whitespace()).collect();
            prop_assert_eq!(kept, source);
        }
    }
}
