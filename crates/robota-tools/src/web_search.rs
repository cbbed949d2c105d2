//! The WebSearch tool, Claude Code's `{query, allowed_domains?, blocked_domains?}`, backed
//! by a configured [`SearchBackend`] (Brave or SearXNG, settings `webSearch`). It exists
//! only when a backend is configured: with the Anthropic provider and no backend, the
//! provider's own server-side `web_search` tool is listed in the request instead; with
//! neither, WebSearch is not offered. Results come back as a numbered markdown list
//! (title, URL, snippet), domain filters applied.

use std::sync::Arc;

use async_trait::async_trait;
use serde_json::{Value, json};

use super::input::{ToolFailure, ToolInput, into_output, type_name};
use super::web::search_backend::{
    SearchBackend, SearchConfigError, SearchHit, WebSearchSection, search_setup,
};
use robota_core::{RiskClass, Tool, ToolContext, ToolOutput};

const DESCRIPTION: &str = "Searches the web and returns the top results (title, URL, snippet). \
Use it for current events and facts beyond your training data. \
allowed_domains keeps only results from those domains, blocked_domains drops them (not both). \
Cite the sources you use in your answer as markdown links.";

/// Results requested from the backend when domain filters will drop some.
const FILTERED_FETCH_COUNT: usize = 20;

/// WebSearch over the backend the `webSearch` settings block configures: `None` when none
/// is configured, an error saying what to fix when the block cannot work.
pub fn web_search_tool(
    section: Option<&WebSearchSection>,
) -> Result<Option<Arc<dyn Tool>>, SearchConfigError> {
    Ok(search_setup(section)?.map(|setup| {
        Arc::new(WebSearchTool::new(setup.backend, setup.max_results)) as Arc<dyn Tool>
    }))
}

pub(crate) struct WebSearchTool {
    backend: Arc<dyn SearchBackend>,
    max_results: usize,
}

impl WebSearchTool {
    pub fn new(backend: Arc<dyn SearchBackend>, max_results: usize) -> Self {
        WebSearchTool {
            backend,
            max_results: max_results.max(1),
        }
    }

    async fn run(&self, raw: &Value, ctx: &ToolContext) -> Result<ToolOutput, ToolFailure> {
        let input = ToolInput::parse("WebSearch", raw)?;
        let query = input.required_str("query")?.trim();
        if query.chars().count() < 2 {
            return Err(input
                .invalid("\"query\" must be at least 2 characters")
                .into());
        }
        let allowed = domain_list(&input, raw, "allowed_domains")?;
        let blocked = domain_list(&input, raw, "blocked_domains")?;
        if !allowed.is_empty() && !blocked.is_empty() {
            return Err(input
                .invalid("give allowed_domains or blocked_domains, not both")
                .into());
        }
        let filtering = !allowed.is_empty() || !blocked.is_empty();
        let count = if filtering {
            FILTERED_FETCH_COUNT.max(self.max_results)
        } else {
            self.max_results
        };
        let found = tokio::select! {
            _ = ctx.cancel.cancelled() => return Err(ToolFailure::failed("WebSearch interrupted by user")),
            found = self.backend.search(query, count) => found,
        }
        .map_err(|e| ToolFailure::failed(e.to_string()))?;
        let total = found.len();
        let kept: Vec<SearchHit> = found
            .into_iter()
            .filter(|hit| {
                let host = host_of(&hit.url);
                (allowed.is_empty() || allowed.iter().any(|d| in_domain(&host, d)))
                    && !blocked.iter().any(|d| in_domain(&host, d))
            })
            .take(self.max_results)
            .collect();
        Ok(ToolOutput::ok(render(
            query,
            self.backend.name(),
            &kept,
            total,
        )))
    }
}

/// A list of domains, each reduced to a lower-case host (`https://Docs.rs/x` → `docs.rs`).
fn domain_list(input: &ToolInput<'_>, raw: &Value, key: &str) -> Result<Vec<String>, ToolFailure> {
    let list = match raw.get(key) {
        None | Some(Value::Null) => return Ok(Vec::new()),
        Some(Value::Array(list)) => list,
        Some(other) => {
            return Err(input
                .invalid(format!(
                    "\"{key}\" must be an array, got {}",
                    type_name(other)
                ))
                .into());
        }
    };
    list.iter()
        .map(|v| match v.as_str() {
            Some(s) if !host_of(s).is_empty() => Ok(host_of(s)),
            Some(_) => Err(input.invalid(format!("{key} has an empty domain")).into()),
            None => Err(input
                .invalid(format!("{key} must hold strings, got {}", type_name(v)))
                .into()),
        })
        .collect()
}

/// The host of a URL or bare domain, lower case, without `www.`, port or trailing dot.
fn host_of(text: &str) -> String {
    let text = text.trim();
    let rest = text.split_once("://").map_or(text, |(_, rest)| rest);
    let host = rest.split(['/', '?', '#']).next().unwrap_or("");
    let host = host.rsplit_once('@').map_or(host, |(_, h)| h);
    let host = if host.starts_with('[') {
        host.split_inclusive(']').next().unwrap_or(host)
    } else {
        host.split(':').next().unwrap_or(host)
    };
    let host = host.trim_end_matches('.').to_ascii_lowercase();
    host.strip_prefix("www.")
        .map(str::to_string)
        .unwrap_or(host)
}

/// Whether `host` is `domain` or one of its subdomains.
fn in_domain(host: &str, domain: &str) -> bool {
    host == domain
        || host
            .strip_suffix(domain)
            .is_some_and(|prefix| prefix.ends_with('.'))
}

fn render(query: &str, backend: &str, hits: &[SearchHit], total: usize) -> String {
    if hits.is_empty() {
        let filtered = if total > 0 {
            format!(" ({total} results were all removed by the domain filters)")
        } else {
            String::new()
        };
        return format!("No web results for \"{query}\"{filtered}.");
    }
    let mut out = format!("Web search results for \"{query}\" ({backend}):\n");
    for (i, hit) in hits.iter().enumerate() {
        let title = if hit.title.is_empty() {
            hit.url.as_str()
        } else {
            hit.title.as_str()
        };
        out.push_str(&format!("\n{}. [{}]({})\n", i + 1, title, hit.url));
        if !hit.snippet.is_empty() {
            out.push_str(&format!("   {}\n", hit.snippet));
        }
    }
    out.push_str("\nCite the sources you use in your answer as markdown links, e.g. [Title](URL).");
    out
}

#[async_trait]
impl Tool for WebSearchTool {
    fn name(&self) -> &str {
        "WebSearch"
    }

    fn description(&self) -> &str {
        DESCRIPTION
    }

    fn input_schema(&self) -> Value {
        let domains =
            |what: &str| json!({"type": "array", "items": {"type": "string"}, "description": what});
        json!({
            "type": "object",
            "properties": {
                "query": {"type": "string", "minLength": 2, "description": "The search query"},
                "allowed_domains": domains("Only include results from these domains"),
                "blocked_domains": domains("Never include results from these domains")
            },
            "required": ["query"],
            "additionalProperties": false
        })
    }

    fn risk(&self) -> RiskClass {
        RiskClass::Network
    }

    /// The query.
    fn primary_argument(&self, input: &Value) -> Option<String> {
        input
            .get("query")
            .and_then(Value::as_str)
            .map(str::to_string)
    }

    async fn call(&self, input: Value, ctx: &ToolContext) -> ToolOutput {
        into_output(self.run(&input, ctx).await)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use super::*;
    use crate::test_support::{assert_error_contains, assert_ok, call};
    use crate::web::search_backend::SearchError;

    /// A backend answering from a fixed list and recording the counts asked for.
    struct FixedBackend {
        hits: Vec<SearchHit>,
        asked: Mutex<Vec<(String, usize)>>,
    }

    #[async_trait]
    impl SearchBackend for FixedBackend {
        fn name(&self) -> &str {
            "Fixed"
        }
        async fn search(&self, query: &str, count: usize) -> Result<Vec<SearchHit>, SearchError> {
            self.asked.lock().unwrap().push((query.to_string(), count));
            Ok(self.hits.iter().take(count).cloned().collect())
        }
    }

    fn hit(title: &str, url: &str) -> SearchHit {
        SearchHit {
            title: title.into(),
            url: url.into(),
            snippet: format!("about {title}"),
        }
    }

    fn tool() -> (WebSearchTool, Arc<FixedBackend>) {
        let backend = Arc::new(FixedBackend {
            hits: vec![
                hit("Docs", "https://docs.rs/tokio"),
                hit("Blog", "https://www.blog.example.com/post"),
                hit("Spam", "https://spam.test/x"),
                hit("Rust", "https://rust-lang.org/"),
            ],
            asked: Mutex::new(Vec::new()),
        });
        (WebSearchTool::new(backend.clone(), 3), backend)
    }

    #[tokio::test]
    async fn results_are_a_numbered_markdown_list() {
        let dir = tempfile::tempdir().unwrap();
        let (tool, backend) = tool();
        let out = call(&tool, dir.path(), json!({"query": "tokio"})).await;
        let text = assert_ok(&out);
        assert!(text.starts_with("Web search results for \"tokio\" (Fixed):"));
        assert!(text.contains("\n1. [Docs](https://docs.rs/tokio)\n   about Docs\n"));
        assert!(text.contains("\n3. [Spam](https://spam.test/x)"));
        assert!(!text.contains("4. "), "{text}");
        assert!(text.ends_with("as markdown links, e.g. [Title](URL)."));
        assert_eq!(backend.asked.lock().unwrap()[0], ("tokio".to_string(), 3));
    }

    #[tokio::test]
    async fn domain_filters_keep_or_drop_subdomains_too() {
        let dir = tempfile::tempdir().unwrap();
        let (tool, backend) = tool();
        let input =
            json!({"query": "qq", "allowed_domains": ["https://Example.com/", "rust-lang.org"]});
        let text = assert_ok(&call(&tool, dir.path(), input).await).to_string();
        assert!(
            text.contains("1. [Blog]") && text.contains("2. [Rust]"),
            "{text}"
        );
        assert!(!text.contains("Docs") && !text.contains("Spam"), "{text}");
        assert_eq!(backend.asked.lock().unwrap()[0].1, FILTERED_FETCH_COUNT);
        let input = json!({"query": "qq", "blocked_domains": ["spam.test", "docs.rs"]});
        let text = assert_ok(&call(&tool, dir.path(), input).await).to_string();
        assert!(!text.contains("Spam") && !text.contains("Docs"), "{text}");
        let input = json!({"query": "qq", "allowed_domains": ["nowhere.test"]});
        let text = assert_ok(&call(&tool, dir.path(), input).await).to_string();
        assert_eq!(
            text,
            "No web results for \"qq\" (4 results were all removed by the domain filters)."
        );
    }

    #[tokio::test]
    async fn bad_input_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let (tool, _) = tool();
        let both =
            json!({"query": "qq", "allowed_domains": ["a.com"], "blocked_domains": ["b.com"]});
        assert_error_contains(&call(&tool, dir.path(), both).await, "not both");
        let short = json!({"query": "q"});
        assert_error_contains(&call(&tool, dir.path(), short).await, "at least 2");
        let wrong = json!({"query": "qq", "allowed_domains": [3]});
        assert_error_contains(&call(&tool, dir.path(), wrong).await, "must hold strings");
        assert_eq!(
            tool.primary_argument(&json!({"query": "rust"})),
            Some("rust".into())
        );
        assert_eq!(tool.risk(), RiskClass::Network);
    }

    #[test]
    fn hosts_and_domains() {
        assert_eq!(host_of("https://WWW.Example.com:8443/a?b"), "example.com");
        assert_eq!(host_of("docs.rs"), "docs.rs");
        assert_eq!(host_of("http://u@[::1]:80/"), "[::1]");
        assert!(in_domain("api.example.com", "example.com"));
        assert!(!in_domain("badexample.com", "example.com"));
    }

    #[test]
    fn no_backend_means_no_tool() {
        let section = |v: Value| serde_json::from_value::<WebSearchSection>(v).unwrap();
        assert!(web_search_tool(None).unwrap().is_none());
        assert!(web_search_tool(Some(&section(json!({"provider": "bing"})))).is_err());
        let tool = web_search_tool(Some(&section(json!({
            "provider": "searxng", "baseURL": "http://127.0.0.1:9"}))));
        assert_eq!(tool.unwrap().unwrap().name(), "WebSearch");
    }
}
