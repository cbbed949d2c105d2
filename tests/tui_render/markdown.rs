//! Markdown samples (English, Korean, Japanese, emoji, tables, nested lists, code, quotes
//! and links) rendered at every snapshot width, plus a 1×1 area and a mid-stream state.

use robota::tui::markdown::{StreamingMarkdown, highlight};
use robota::tui::theme::Theme;

use crate::{WIDTHS, assert_buffer_snapshot, assert_rows_fit, buffer_of};

const ENGLISH: &str = "# Release notes\n\nThis release makes **streaming** faster and *much* smoother. Run `cargo test` to check, or read [the guide](https://example.com/guide).\n\n## What changed\n\nParagraphs wrap at word boundaries, and a verylongwordwithoutanyspacesthatmustbehardwrapped still fits.\n\n---\n\n### Small print\n\nThat's all.\n";

const KOREAN: &str = "## 변경 사항\n\n스트리밍 마크다운이 이제 **훨씬** 빠릅니다. 긴 답변도 부드럽게 표시됩니다.\n\n- 한글 문장은 글자 단위로 줄바꿈됩니다\n- `코드`와 *강조*도 지원합니다\n";

const JAPANESE: &str = "# 概要\n\n日本語の文章は、句読点の前で改行されないように折り返されます。これは長い文章の例です。\n\n1. 最初の項目\n2. 二番目の項目です。少し長めの説明が続きます。\n";

const EMOJI: &str = "Emoji take two columns: 🎉 party, 👍🏽 thumbs, 👨‍👩‍👧 family, 🇰🇷 flag.\n\n- ✅ done\n- 🚧 in progress 🚀🚀🚀🚀🚀🚀🚀🚀\n";

const TABLE: &str = "| Language | Greeting | Notes |\n|:---------|:--------:|------:|\n| English | Hello | The usual one |\n| 한국어 | 안녕하세요 | Hangul is two columns wide |\n| 日本語 | こんにちは | 🎌 |\n";

const NESTED_LISTS: &str = "1. Prepare\n   - fetch the sources\n   - check the toolchain\n     1. rustc\n     2. cargo, which builds and tests the whole workspace\n2. Build\n\n- [x] write tests\n- [ ] review snapshots\n  - carefully, one by one\n";

const CODE: &str = "Here is the fix:\n\n```rust\nfn main() {\n    let greeting = \"hello\"; // a comment\n    println!(\"{greeting}, world {}\", 42);\n}\n```\n\n```diff\n- old line\n+ new line\n```\n\n```unknownlang\nplain text stays plain\n```\n\n1. In a list:\n\n   ```py\n   def f(x):\n       return x * 2\n   ```\n";

const QUOTES_LINKS: &str = "> A quote with **bold** text that is long enough to wrap around at narrow widths.\n>\n> > And a nested quote.\n\nSee <https://example.com/auto> or [docs](https://docs.rs/ratatui) and ![a diagram](img.png).\n";

const SAMPLES: [(&str, &str); 8] = [
    ("english", ENGLISH),
    ("korean", KOREAN),
    ("japanese", JAPANESE),
    ("emoji", EMOJI),
    ("table", TABLE),
    ("nested_lists", NESTED_LISTS),
    ("code", CODE),
    ("quotes_links", QUOTES_LINKS),
];

#[test]
fn markdown_samples_at_every_width() {
    highlight::load_blocking();
    for (name, text) in SAMPLES {
        for width in WIDTHS {
            let mut md = StreamingMarkdown::from_text(Theme::new(true), text);
            let lines = md.render(width);
            assert_rows_fit(lines, width);
            assert_buffer_snapshot!(format!("markdown_{name}_{width}"), buffer_of(lines, width));
        }
    }
}

#[test]
fn markdown_without_colour() {
    highlight::load_blocking();
    let mut md = StreamingMarkdown::from_text(Theme::new(false), CODE);
    let lines = md.render(40);
    for line in lines {
        for span in &line.spans {
            assert_eq!(span.style.fg, None, "{span:?}");
        }
    }
    assert_buffer_snapshot!("markdown_code_no_color_40", buffer_of(lines, 40));
}

#[test]
fn markdown_in_a_one_by_one_area() {
    highlight::load_blocking();
    for (_, text) in SAMPLES {
        let mut md = StreamingMarkdown::from_text(Theme::new(true), text);
        let lines = md.render(1);
        assert!(!lines.is_empty());
        let buf = buffer_of(&lines[..1], 1);
        assert_eq!(buf.area.width, 1);
    }
    let mut md = StreamingMarkdown::from_text(Theme::new(true), ENGLISH);
    let lines = md.render(1);
    assert_buffer_snapshot!("markdown_english_1x1", buffer_of(&lines[..1], 1));
}

#[test]
fn markdown_mid_stream() {
    highlight::load_blocking();
    let mut md = StreamingMarkdown::new(Theme::new(true));
    let cut = CODE.find("println").unwrap_or(CODE.len());
    let head: Vec<char> = CODE[..cut + 4].chars().collect();
    for chunk in head.chunks(5) {
        md.push(&chunk.iter().collect::<String>());
        md.render(40);
    }
    let lines = md.render(40);
    assert_buffer_snapshot!("markdown_code_mid_stream_40", buffer_of(lines, 40));
}
