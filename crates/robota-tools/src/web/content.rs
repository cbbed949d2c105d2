//! What a fetched body is and how it becomes text for the model: the media type from
//! `Content-Type` (or sniffed when absent), text decoded by its declared or `<meta>`
//! charset (`encoding_rs`, UTF-8 by default), and HTML converted to markdown by `htmd` —
//! scripts, styles and other non-content elements dropped, link and image addresses made
//! absolute against the page's URL, inline `data:` images reduced to their alt text.

use encoding_rs::{Encoding, UTF_8};
use htmd::element_handler::Handlers;
use htmd::options::{BulletListMarker, Options};
use htmd::{Element, HtmlToMarkdown};
use reqwest::Url;

/// How a response body is treated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BodyKind {
    /// Converted to markdown.
    Html,
    /// Returned as it is (text/*, JSON, XML, JavaScript…).
    Text,
    /// Refused: images, archives, PDFs, executables.
    Binary,
}

/// The media type (lower case, without parameters) and charset label of a
/// `Content-Type` header value.
pub fn parse_content_type(header: &str) -> (String, Option<String>) {
    let mut parts = header.split(';');
    let media = parts.next().unwrap_or("").trim().to_ascii_lowercase();
    let charset = parts.find_map(|p| {
        let (key, value) = p.split_once('=')?;
        key.trim()
            .eq_ignore_ascii_case("charset")
            .then(|| value.trim().trim_matches('"').to_string())
    });
    (media, charset)
}

/// Classifies a media type; an empty one is decided by looking at the first bytes.
pub fn classify(media_type: &str, head: &[u8]) -> BodyKind {
    match media_type {
        "" => sniff(head),
        "text/html" | "application/xhtml+xml" => BodyKind::Html,
        t if t.starts_with("text/") => BodyKind::Text,
        t if t.ends_with("+json") || t.ends_with("+xml") => BodyKind::Text,
        "application/json"
        | "application/xml"
        | "application/javascript"
        | "application/ecmascript"
        | "application/x-javascript"
        | "application/x-sh"
        | "application/x-yaml"
        | "application/yaml"
        | "application/toml"
        | "application/graphql"
        | "application/sql"
        | "application/x-ndjson"
        | "application/jsonl"
        | "application/x-www-form-urlencoded" => BodyKind::Text,
        // Servers label unknown files octet-stream; text (a raw source file) is read.
        "application/octet-stream" | "binary/octet-stream" => match sniff(head) {
            BodyKind::Binary => BodyKind::Binary,
            _ => BodyKind::Text,
        },
        _ => BodyKind::Binary,
    }
}

/// Without a usable type: NUL bytes or invalid UTF-8 mean binary; `<html`/doctype HTML.
fn sniff(head: &[u8]) -> BodyKind {
    let sample = &head[..head.len().min(1024)];
    if sample.contains(&0) {
        return BodyKind::Binary;
    }
    match std::str::from_utf8(sample) {
        Ok(text) => looks_like_html(text),
        // A multi-byte character cut at the sample's end is still text.
        Err(e) if e.error_len().is_none() => {
            looks_like_html(std::str::from_utf8(&sample[..e.valid_up_to()]).unwrap_or(""))
        }
        Err(_) => BodyKind::Binary,
    }
}

fn looks_like_html(text: &str) -> BodyKind {
    let start = text.trim_start().to_ascii_lowercase();
    if start.starts_with("<!doctype html") || start.starts_with("<html") {
        BodyKind::Html
    } else {
        BodyKind::Text
    }
}

/// Decodes a body: the header's charset, else (for HTML) a `<meta charset>` near the top,
/// else UTF-8; a byte-order mark wins over both. Invalid sequences become U+FFFD.
pub fn decode(body: &[u8], header_charset: Option<&str>, kind: BodyKind) -> String {
    let encoding = header_charset
        .and_then(|label| Encoding::for_label(label.as_bytes()))
        .or_else(|| {
            (kind == BodyKind::Html)
                .then(|| meta_charset(body))
                .flatten()
        })
        .unwrap_or(UTF_8);
    let (text, _, _) = encoding.decode(body);
    text.into_owned()
}

/// The charset a page declares in its first 2 KB (`<meta charset="…">` or the
/// `http-equiv` form's `charset=…`).
fn meta_charset(body: &[u8]) -> Option<&'static Encoding> {
    let head = String::from_utf8_lossy(&body[..body.len().min(2048)]).to_ascii_lowercase();
    let mut rest = head.as_str();
    while let Some(at) = rest.find("charset=") {
        rest = &rest[at + "charset=".len()..];
        let label: String = rest
            .trim_start_matches(['"', '\''])
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | ':' | '.'))
            .collect();
        if let Some(encoding) = Encoding::for_label(label.as_bytes()) {
            return Some(encoding);
        }
    }
    None
}

/// Elements that carry no readable content.
const SKIPPED_TAGS: [&str; 11] = [
    "script", "style", "noscript", "template", "svg", "canvas", "iframe", "object", "embed",
    "form", "button",
];

/// Converts an HTML page to markdown, resolving relative links against `base`. CPU-bound
/// (~10 ms per MB): call it from `spawn_blocking`.
pub fn html_to_markdown(html: &str, base: &Url) -> std::io::Result<String> {
    let link_base = base.clone();
    let image_base = base.clone();
    let converter = HtmlToMarkdown::builder()
        .options(Options {
            bullet_list_marker: BulletListMarker::Dash,
            ul_bullet_spacing: 1,
            ol_number_spacing: 1,
            ..Options::default()
        })
        .skip_tags(SKIPPED_TAGS.to_vec())
        .add_handler(
            vec!["a"],
            move |handlers: &dyn Handlers, element: Element| {
                with_absolute_attr(handlers, element, "href", &link_base)
            },
        )
        .add_handler(
            vec!["img"],
            move |handlers: &dyn Handlers, element: Element| {
                let src = attr(&element, "src").unwrap_or_default();
                if src.trim_start().starts_with("data:") {
                    let alt = attr(&element, "alt").unwrap_or_default();
                    let alt = alt.trim();
                    return (!alt.is_empty()).then(|| format!("[image: {alt}]").into());
                }
                with_absolute_attr(handlers, element, "src", &image_base)
            },
        )
        .build();
    Ok(tidy(&converter.convert(html)?))
}

fn attr(element: &Element, name: &str) -> Option<String> {
    element
        .attrs
        .iter()
        .find(|a| &*a.name.local == name)
        .map(|a| a.value.to_string())
}

/// Hands the element to htmd's own handler with `name` made absolute against `base`.
fn with_absolute_attr(
    handlers: &dyn Handlers,
    element: Element,
    name: &str,
    base: &Url,
) -> Option<htmd::element_handler::HandlerResult> {
    let mut attrs = element.attrs.to_vec();
    for attribute in attrs.iter_mut().filter(|a| &*a.name.local == name) {
        let value = attribute.value.trim();
        if value.starts_with('#') || value.is_empty() {
            continue;
        }
        if let Ok(absolute) = base.join(value) {
            attribute.value = absolute.to_string().into();
        }
    }
    // Element is covariant: the rebinding may borrow the local attributes.
    let mut element = element;
    element.attrs = &attrs;
    handlers.fallback(element)
}

/// Collapses runs of blank lines (left by skipped elements) to one.
fn tidy(markdown: &str) -> String {
    let mut out = String::with_capacity(markdown.len());
    let mut blank_run = 0;
    for line in markdown.trim().lines() {
        if line.trim().is_empty() {
            blank_run += 1;
            if blank_run > 1 {
                continue;
            }
            out.push('\n');
        } else {
            blank_run = 0;
            out.push_str(line.trim_end());
            out.push('\n');
        }
    }
    out.trim_end().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn base() -> Url {
        Url::parse("https://example.com/docs/page.html").unwrap()
    }

    #[test]
    fn content_types_are_classified() {
        let (media, charset) = parse_content_type("Text/HTML; Charset=\"Shift_JIS\"");
        assert_eq!(media, "text/html");
        assert_eq!(charset.as_deref(), Some("Shift_JIS"));
        assert_eq!(classify("text/html", b""), BodyKind::Html);
        assert_eq!(classify("text/plain", b""), BodyKind::Text);
        assert_eq!(classify("application/json", b""), BodyKind::Text);
        assert_eq!(classify("application/ld+json", b""), BodyKind::Text);
        assert_eq!(classify("image/png", b"\x89PNG"), BodyKind::Binary);
        assert_eq!(classify("application/pdf", b"%PDF"), BodyKind::Binary);
        assert_eq!(classify("", b"<!DOCTYPE html><p>x"), BodyKind::Html);
        assert_eq!(classify("", b"plain words"), BodyKind::Text);
        assert_eq!(classify("", b"\x00\x01\x02"), BodyKind::Binary);
        assert_eq!(
            classify("application/octet-stream", b"fn main() {}"),
            BodyKind::Text
        );
        assert_eq!(
            classify("application/octet-stream", b"\x7fELF\x00\x00"),
            BodyKind::Binary
        );
        assert_eq!(classify("", "한국어 텍스트".as_bytes()), BodyKind::Text);
    }

    #[test]
    fn charsets_come_from_the_header_the_meta_tag_or_utf8() {
        let (sjis, _, _) = encoding_rs::SHIFT_JIS.encode("日本語のページ");
        assert_eq!(
            decode(&sjis, Some("shift_jis"), BodyKind::Text),
            "日本語のページ"
        );
        let mut page = b"<html><head><meta charset=\"euc-kr\"></head><body>".to_vec();
        page.extend_from_slice(&encoding_rs::EUC_KR.encode("안녕하세요").0);
        assert!(decode(&page, None, BodyKind::Html).contains("안녕하세요"));
        assert_eq!(decode("café".as_bytes(), None, BodyKind::Text), "café");
        assert_eq!(decode(b"a\xffb", None, BodyKind::Text), "a\u{fffd}b");
    }

    #[test]
    fn html_becomes_markdown_with_absolute_links() {
        let html = r##"<html><head><title>T</title><style>p{color:red}</style></head><body>
            <h1>Title</h1><h2>Sub</h2>
            <p>See <a href="../guide/">the guide</a> and <a href="#top">top</a>.</p>
            <ul><li>one</li><li>two</li></ul><ol><li>first</li></ol>
            <script>alert(1)</script>
            <img src="/logo.png" alt="Logo"><img src="data:image/png;base64,AAAA" alt="inline">
            <pre><code>let x = 1;</code></pre>
            </body></html>"##;
        let md = html_to_markdown(html, &base()).unwrap();
        assert!(md.contains("# Title"), "{md}");
        assert!(md.contains("## Sub"), "{md}");
        assert!(
            md.contains("[the guide](https://example.com/guide/)"),
            "{md}"
        );
        assert!(md.contains("[top](#top)"), "{md}");
        assert!(md.contains("- one\n- two"), "{md}");
        assert!(md.contains("1. first"), "{md}");
        assert!(md.contains("![Logo](https://example.com/logo.png)"), "{md}");
        assert!(md.contains("[image: inline]"), "{md}");
        assert!(!md.contains("base64"), "{md}");
        assert!(md.contains("```\nlet x = 1;\n```"), "{md}");
        assert!(!md.contains("alert") && !md.contains("color:red"), "{md}");
        assert!(!md.contains("\n\n\n"), "{md}");
    }
}
