//! Unit tests of streaming markdown: structure, streaming ≡ whole, resize exactness.

use proptest::prelude::*;
use ratatui::style::{Color, Modifier};

use super::*;
use crate::wrap::spans_width;

const SAMPLE: &str = "# Plan\n\nSome **bold** and *italic* text with `code` and a [link](https://example.com).\n\n1. first step\n2. second step\n   - nested bullet\n   - another 日本語のテキスト\n3. third\n\n- tight a\n- tight b\n\n> quoted line one\n> quoted 한국어 line two\n\n```rust\nfn main() {\n    println!(\"hi\");\n}\n```\n\n| Name | Value |\n|:-----|------:|\n| a    | 1     |\n| 絵文字 | 🎉 |\n\n---\n\nClosing paragraph after the rule, long enough to wrap at narrow widths.\n";

fn text_of(lines: &[Line<'_>]) -> Vec<String> {
    lines
        .iter()
        .map(|l| l.spans.iter().map(|s| s.content.as_ref()).collect())
        .collect()
}

fn render_whole(text: &str, width: u16) -> Vec<Line<'static>> {
    StreamingMarkdown::from_text(Theme::new(true), text)
        .render(width)
        .to_vec()
}

#[test]
fn renders_the_sample_structure() {
    highlight::load_blocking();
    let lines = text_of(&render_whole(SAMPLE, 60));
    let expect_prefixes = [
        "Plan",
        "",
        "Some bold and italic text with code and a link",
        "(https://example.com).",
        "",
        "1. first step",
        "2. second step",
        "   ◦ nested bullet",
        "   ◦ another 日本語のテキスト",
        "3. third",
        "",
        "• tight a",
        "• tight b",
        "",
        "│ quoted line one quoted 한국어 line two",
        "",
        "fn main() {",
        "    println!(\"hi\");",
        "}",
        "",
        "┌────────┬───────┐",
        "│ Name   │ Value │",
        "├────────┼───────┤",
        "│ a      │     1 │",
        "│ 絵文字 │    🎉 │",
        "└────────┴───────┘",
        "",
        "────────",
        "",
        "Closing paragraph",
        "narrow widths.",
    ];
    assert_eq!(lines.len(), expect_prefixes.len(), "{lines:#?}");
    for (line, prefix) in lines.iter().zip(expect_prefixes) {
        assert!(
            line.starts_with(prefix),
            "{line:?} should start with {prefix:?}"
        );
    }
}

#[test]
fn inline_styles_and_heading() {
    let lines = render_whole("# Title\n\n**b** *i* ~~s~~ `c`\n", 40);
    assert!(
        lines[0].spans[0]
            .style
            .add_modifier
            .contains(Modifier::BOLD)
    );
    let body = &lines[2].spans;
    let find = |t: &str| body.iter().find(|s| s.content == t).unwrap().style;
    assert!(find("b").add_modifier.contains(Modifier::BOLD));
    assert!(find("i").add_modifier.contains(Modifier::ITALIC));
    assert!(find("s").add_modifier.contains(Modifier::CROSSED_OUT));
    assert_eq!(find("c").fg, Some(Color::Cyan));
}

#[test]
fn heading_levels_look_different_with_and_without_colour() {
    for color in [true, false] {
        let mut md =
            StreamingMarkdown::from_text(Theme::new(color), "# One\n\n## Two\n\n### Three\n");
        let lines = md.render(40).to_vec();
        let style_of = |text: &str| {
            lines
                .iter()
                .flat_map(|l| l.spans.iter())
                .find(|s| s.content.contains(text))
                .map(|s| s.style)
                .unwrap()
        };
        let (one, two, three) = (style_of("One"), style_of("Two"), style_of("Three"));
        assert!(one.add_modifier.contains(Modifier::UNDERLINED), "{one:?}");
        assert_ne!(one, two);
        assert_ne!(two, three);
        assert_ne!(one, three);
        for style in [one, two, three] {
            assert!(style.add_modifier.contains(Modifier::BOLD), "{style:?}");
        }
    }
}

#[test]
fn code_is_highlighted_once_loaded_and_plain_without_colour() {
    highlight::load_blocking();
    let text = "```rust\nlet x = 1;\n```\n";
    let lines = render_whole(text, 40);
    assert!(lines[0].spans.len() > 1, "{lines:?}");
    let mut plain = StreamingMarkdown::from_text(Theme::new(false), text);
    let plain = plain.render(40);
    assert!(plain[0].spans.iter().all(|s| s.style.fg.is_none()));
}

#[test]
fn wrapped_list_items_keep_their_hanging_indent() {
    let lines = text_of(&render_whole("- alpha beta gamma delta\n", 12));
    assert_eq!(lines, ["• alpha beta", "  gamma", "  delta"]);
    let lines = text_of(&render_whole("> one two three four\n", 10));
    assert_eq!(lines, ["│ one two", "│ three", "│ four"]);
}

#[test]
fn ordered_numbers_survive_item_by_item_blocks() {
    let lines = text_of(&render_whole("1. a\n2. b\n3. c\n\n9. nine\n10. ten\n", 20));
    assert_eq!(lines, ["1. a", "2. b", "3. c", "", "9. nine", "10. ten"]);
}

#[test]
fn unclosed_fence_streams_and_blank_lines_stay_inside() {
    let mut md = StreamingMarkdown::new(Theme::new(false));
    md.push("intro\n```\nline one\n\nline three\n");
    assert_eq!(
        text_of(md.render(30)),
        ["intro", "", "line one", "", "line three"]
    );
    md.push("```\nafter\n");
    assert_eq!(
        text_of(md.render(30)),
        ["intro", "", "line one", "", "line three", "", "after"]
    );
}

#[test]
fn tiny_widths_do_not_panic_and_stay_within_bounds() {
    highlight::load_blocking();
    for width in 1..=6u16 {
        let lines = render_whole(SAMPLE, width);
        assert!(!lines.is_empty());
        if width >= 2 {
            for line in &lines {
                assert!(
                    spans_width(&line.spans) <= usize::from(width),
                    "{:?} at {width}",
                    text_of(std::slice::from_ref(line))
                );
            }
        }
    }
}

#[test]
fn resize_rewraps_exactly() {
    highlight::load_blocking();
    let mut md = StreamingMarkdown::from_text(Theme::new(true), SAMPLE);
    let at_80 = md.render(80).to_vec();
    let at_25 = md.render(25).to_vec();
    assert_ne!(at_80, at_25);
    assert_eq!(md.render(80), render_whole(SAMPLE, 80).as_slice());
    assert_eq!(md.render(25), at_25.as_slice());
    assert_eq!(at_25, render_whole(SAMPLE, 25));
}

#[test]
fn stable_lines_are_not_rebuilt_per_delta() {
    let mut md = StreamingMarkdown::new(Theme::new(false));
    md.push("para one\n\npara two\n\n");
    md.render(40);
    let stable = md.cache.stable;
    md.push("tail");
    md.render(40);
    assert_eq!(md.cache.stable, stable);
    // "para two" is finished only once a later block starts.
    assert_eq!(md.cache.laid, 1);
    md.push("\n\nthird\n");
    md.render(40);
    assert_eq!(md.cache.laid, 3);
    assert!(md.cache.stable > stable);
}

fn split_by(text: &str, sizes: &[usize]) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    let mut k = 0;
    while i < chars.len() {
        let n = sizes
            .get(k % sizes.len().max(1))
            .copied()
            .unwrap_or(7)
            .max(1);
        let end = (i + n).min(chars.len());
        out.push(chars[i..end].iter().collect());
        i = end;
        k += 1;
    }
    out
}

const STREAM_SAMPLES: &[&str] = &[
    SAMPLE,
    "Text then list:\n- a\n- b\n  continued\n- c\n\nand ```inline``` fence\n```\nunclosed code\n\nstill code",
    "## 見出し\n\n日本語の段落です。とても長い文章がここに続きます。\n\n* 항목 하나\n* 항목 둘\n\n1) x\n2) y\n\n    indented code\n\n~~~py\ndef f():\n    return 1\n~~~\n",
    "> quote\n> - list in quote\n\n| a | b |\n|---|---|\n| 1 | 2 |\npara right after table\n# heading\ntext",
];

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn streaming_in_any_chunking_renders_like_the_whole(
        sample in 0..STREAM_SAMPLES.len(),
        sizes in prop::collection::vec(1usize..25, 1..12),
        width in prop::sample::select(vec![20u16, 37, 80]),
        render_every in 1usize..4,
    ) {
        highlight::load_blocking();
        let text = STREAM_SAMPLES[sample];
        let mut md = StreamingMarkdown::new(Theme::new(true));
        for (i, delta) in split_by(text, &sizes).iter().enumerate() {
            md.push(delta);
            if i % render_every == 0 {
                md.render(width);
            }
        }
        let streamed = md.render(width).to_vec();
        let mut whole = StreamingMarkdown::new(Theme::new(true));
        whole.push(text);
        prop_assert_eq!(&streamed, &whole.render(width).to_vec());
        md.finish();
        prop_assert_eq!(md.render(width).to_vec(), render_whole(text, width));
    }
}

#[test]
fn a_document_given_whole_is_parsed_when_drawn_and_takes_later_deltas() {
    highlight::load_blocking();
    let theme = Theme::new(true);
    let mut whole = StreamingMarkdown::from_text(theme, "# Title\n\nfirst part");
    assert_eq!(whole.source(), "# Title\n\nfirst part");
    assert!(!whole.is_empty());
    // A delta after `from_text` starts on a new line, as after `finish`.
    whole.push("second part\n");
    let mut streamed = StreamingMarkdown::new(theme);
    streamed.push("# Title\n\nfirst part");
    streamed.finish();
    streamed.push("second part\n");
    assert_eq!(text_of(whole.render(40)), text_of(streamed.render(40)));
    let lines = text_of(whole.render(40));
    assert!(lines.iter().any(|l| l.contains("second part")), "{lines:?}");
}
