//! Middle truncation of long tool output: keep the head and the tail, say how much was cut.

/// Tool output cap in characters (DESIGN §4).
pub const TOOL_OUTPUT_CAP: usize = 30_000;

/// Keeps the first and last `cap / 2` characters of `text` when it is longer than `cap`,
/// with a marker in between that says how long the whole was.
pub fn truncate_middle(text: &str, cap: usize) -> String {
    let total = text.chars().count();
    if total <= cap {
        return text.to_string();
    }
    let half = cap / 2;
    let head: String = text.chars().take(half).collect();
    let tail_start = text
        .char_indices()
        .nth(total - half)
        .map(|(i, _)| i)
        .unwrap_or(text.len());
    format!(
        "{head}\n\n[... output truncated: {total} chars total, showing first and last {} chars ...]\n\n{}",
        group_thousands(half),
        &text[tail_start..]
    )
}

fn group_thousands(n: usize) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_text_is_untouched() {
        assert_eq!(truncate_middle("abc", 10), "abc");
    }

    #[test]
    fn long_text_keeps_head_and_tail_and_says_how_much() {
        let text: String = (0..40_000)
            .map(|i| if i < 20_000 { 'a' } else { 'b' })
            .collect();
        let out = truncate_middle(&text, TOOL_OUTPUT_CAP);
        assert!(out.starts_with(&"a".repeat(15_000)));
        assert!(out.ends_with(&"b".repeat(15_000)));
        assert!(out.contains("40000 chars total, showing first and last 15,000 chars"));
        assert!(out.len() < 30_200, "the marker is short: {}", out.len());
    }

    #[test]
    fn multibyte_text_is_cut_on_char_boundaries() {
        let text = "가".repeat(100);
        let out = truncate_middle(&text, 10);
        assert!(out.starts_with("가가가가가\n"));
        assert!(out.ends_with("\n가가가가가"));
    }
}
