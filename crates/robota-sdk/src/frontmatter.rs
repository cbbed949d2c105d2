//! The YAML frontmatter of Claude Code's Markdown definitions (custom commands, skills,
//! agents): the `---` block at the top of a file, read into a JSON object, and the body
//! after it. Real files are not always valid YAML (a description with `: ` in it, a tab),
//! so a block YAML cannot read falls back to plain `key: value` lines, as Claude Code's
//! loader is forgiving too. Also the value shapes those keys take: tool lists as a YAML
//! list or a comma/space-separated string (commas inside `Bash(…)` kept), and booleans
//! as `true`/`yes`/`on`/`1`.

use serde_json::{Map, Number, Value};

use robota_core::permission::split_rule_list;
use yaml_rust2::{Yaml, YamlLoader};

/// A Markdown file split into its frontmatter and body.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Document {
    /// The frontmatter's keys (empty when the file has none).
    pub fields: Map<String, Value>,
    /// The text after the frontmatter.
    pub body: String,
}

impl Document {
    /// Splits `text` (a UTF-8 BOM and CRLF line ends tolerated).
    pub fn parse(text: &str) -> Document {
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        let Some((block, body)) = split(text) else {
            return Document {
                fields: Map::new(),
                body: text.to_string(),
            };
        };
        let fields = parse_yaml(&block).unwrap_or_else(|| parse_lines(&block));
        Document {
            fields,
            body: body.to_string(),
        }
    }

    /// A string field (numbers and booleans as written); `None` when absent or empty.
    pub fn text(&self, key: &str) -> Option<String> {
        match self.fields.get(key)? {
            Value::String(s) => Some(s.trim().to_string()).filter(|s| !s.is_empty()),
            Value::Number(n) => Some(n.to_string()),
            Value::Bool(b) => Some(b.to_string()),
            _ => None,
        }
    }

    /// A boolean field: `true`, `yes`, `on`, `1` (any case) are true; absent is `default`.
    pub fn flag(&self, key: &str, default: bool) -> bool {
        match self.fields.get(key) {
            Some(Value::Bool(b)) => *b,
            Some(Value::Number(n)) => n.as_f64().is_some_and(|n| n != 0.0),
            Some(Value::String(s)) => matches!(
                s.trim().to_ascii_lowercase().as_str(),
                "true" | "yes" | "on" | "1"
            ),
            _ => default,
        }
    }

    /// A list field: a YAML list, or one string of items separated by commas or spaces
    /// (separators inside parentheses belong to the item: `Bash(git add:*), Read`).
    pub fn list(&self, key: &str) -> Vec<String> {
        match self.fields.get(key) {
            Some(Value::Array(items)) => items
                .iter()
                .filter_map(|v| match v {
                    Value::String(s) => Some(s.trim().to_string()),
                    Value::Number(n) => Some(n.to_string()),
                    _ => None,
                })
                .filter(|s| !s.is_empty())
                .collect(),
            Some(Value::String(s)) => split_rule_list(s),
            _ => Vec::new(),
        }
    }

    /// The first paragraph of the body, for a definition without a `description`.
    pub(crate) fn first_paragraph(&self) -> Option<String> {
        let paragraph: Vec<&str> = self
            .body
            .lines()
            .map(str::trim)
            .skip_while(|l| l.is_empty())
            .take_while(|l| !l.is_empty())
            .collect();
        let text = paragraph.join(" ");
        let text = text.trim_start_matches('#').trim();
        (!text.is_empty()).then(|| text.to_string())
    }
}

/// The frontmatter block and the body, when the text opens with a `---` line that a
/// later `---` line closes.
fn split(text: &str) -> Option<(String, &str)> {
    let mut lines = text.split_inclusive('\n');
    let first = lines.next()?;
    if first.trim_end() != "---" {
        return None;
    }
    let mut offset = first.len();
    let mut block = String::new();
    for line in lines {
        offset += line.len();
        if line.trim_end() == "---" {
            return Some((block, &text[offset..]));
        }
        block.push_str(line.trim_end_matches(['\n', '\r']));
        block.push('\n');
    }
    None
}

fn parse_yaml(block: &str) -> Option<Map<String, Value>> {
    let docs = YamlLoader::load_from_str(block).ok()?;
    match docs.into_iter().next() {
        None => Some(Map::new()),
        Some(Yaml::Hash(hash)) => Some(
            hash.into_iter()
                .filter_map(|(k, v)| Some((key_text(k)?, to_json(v))))
                .collect(),
        ),
        Some(Yaml::Null) => Some(Map::new()),
        Some(_) => None,
    }
}

/// `key: value` lines for a block YAML refuses; indented lines continue the value before.
fn parse_lines(block: &str) -> Map<String, Value> {
    let mut fields = Map::new();
    let mut last: Option<String> = None;
    for line in block.lines() {
        let continues = line.starts_with([' ', '\t']);
        match (continues, &last, line.split_once(':')) {
            (true, Some(key), _) => {
                if let Some(Value::String(value)) = fields.get_mut(key) {
                    if !value.is_empty() {
                        value.push(' ');
                    }
                    value.push_str(line.trim());
                }
            }
            (false, _, Some((key, value))) if !key.trim().is_empty() => {
                let key = key.trim().to_string();
                let value = value.trim().trim_matches(['"', '\'']).to_string();
                fields.insert(key.clone(), Value::String(value));
                last = Some(key);
            }
            _ => {}
        }
    }
    fields
}

fn key_text(key: Yaml) -> Option<String> {
    match key {
        Yaml::String(s) | Yaml::Real(s) => Some(s),
        Yaml::Integer(i) => Some(i.to_string()),
        Yaml::Boolean(b) => Some(b.to_string()),
        _ => None,
    }
}

fn to_json(value: Yaml) -> Value {
    match value {
        Yaml::String(s) => Value::String(s),
        Yaml::Integer(i) => Value::Number(i.into()),
        Yaml::Real(s) => s
            .parse::<f64>()
            .ok()
            .and_then(Number::from_f64)
            .map(Value::Number)
            .unwrap_or(Value::String(s)),
        Yaml::Boolean(b) => Value::Bool(b),
        Yaml::Array(items) => Value::Array(items.into_iter().map(to_json).collect()),
        Yaml::Hash(hash) => Value::Object(
            hash.into_iter()
                .filter_map(|(k, v)| Some((key_text(k)?, to_json(v))))
                .collect(),
        ),
        Yaml::Alias(_) | Yaml::Null | Yaml::BadValue => Value::Null,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_command_file_with_a_rule_list_string() {
        let doc = Document::parse(
            "---\nallowed-tools: Bash(git checkout --branch:*), Bash(git add:*), Read\ndescription: Commit, push, and open a PR\n---\n\n## Context\n",
        );
        assert_eq!(
            doc.list("allowed-tools"),
            ["Bash(git checkout --branch:*)", "Bash(git add:*)", "Read"]
        );
        assert_eq!(
            doc.text("description").as_deref(),
            Some("Commit, push, and open a PR")
        );
        assert_eq!(doc.body, "\n## Context\n");
    }

    #[test]
    fn yaml_lists_booleans_and_folded_text() {
        let doc = Document::parse(
            "---\r\nname: review\r\ntools:\r\n  - Read\r\n  - Grep\r\ndisable-model-invocation: yes\r\nmaxTurns: 5\r\ndescription: >\r\n  Reviews code\r\n  carefully.\r\n---\r\nBody\r\n",
        );
        assert_eq!(doc.list("tools"), ["Read", "Grep"]);
        assert!(doc.flag("disable-model-invocation", false));
        assert!(!doc.flag("user-invocable", false));
        assert_eq!(doc.text("maxTurns").as_deref(), Some("5"));
        assert_eq!(
            doc.text("description").as_deref(),
            Some("Reviews code carefully.")
        );
        assert_eq!(doc.body, "Body\r\n");
    }

    #[test]
    fn invalid_yaml_falls_back_to_lines() {
        let doc = Document::parse(
            "---\ndescription: Use this: when things break\n\tand more\nmodel: opus\n---\nx",
        );
        assert_eq!(
            doc.text("description").as_deref(),
            Some("Use this: when things break and more")
        );
        assert_eq!(doc.text("model").as_deref(), Some("opus"));
    }

    #[test]
    fn no_frontmatter_or_an_unclosed_one_is_all_body() {
        let doc = Document::parse("\u{feff}# Title\n\nFirst para\nline two.\n\nnext");
        assert!(doc.fields.is_empty());
        assert_eq!(doc.first_paragraph().as_deref(), Some("Title"));
        let doc = Document::parse("---\nname: x\nno end");
        assert!(doc.fields.is_empty());
        assert!(doc.body.starts_with("---"));
        assert_eq!(
            split_rule_list("Read Grep,  Bash(npm run test, lint)"),
            ["Read", "Grep", "Bash(npm run test, lint)"]
        );
    }
}
