//! The WebFetch tool, Claude Code's `{url, prompt}`: fetches one page within time, size and
//! redirect caps, refuses non-public addresses unless the user allowed the host, and
//! returns the page as markdown (HTML converted, text and JSON as they are). Claude Code
//! runs a small model over the page with `prompt`; robota instead heads the page with the
//! prompt ("Answer this from the page below: …") and lets the main model answer, which
//! needs no second model or key and loses nothing the small model would have dropped.
//! The permission argument is the full URL; `WebFetch(domain:…)` rules match its host,
//! and since redirects to another host are handed back rather than followed, that host is
//! the only one contacted.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use serde_json::{Value, json};

use super::input::{ToolFailure, ToolInput, into_output};
use super::web::address::{AddressPolicy, HostResolver, system_resolver};
use super::web::content::{BodyKind, decode, html_to_markdown};
use super::web::fetch::{FetchLimits, FetchOutcome, FetchedPage, Fetcher};
use robota_core::{RiskClass, Tool, ToolContext, ToolOutput};

/// Total time for one fetch, all redirects and the body included.
pub const WEB_FETCH_TIMEOUT: Duration = Duration::from_secs(30);
/// Bytes downloaded at most; the engine then cuts the text to its 30,000-character cap.
pub const WEB_FETCH_MAX_BYTES: usize = 10 * 1024 * 1024;
/// Same-host redirects followed at most.
pub const WEB_FETCH_MAX_REDIRECTS: usize = 10;

const DESCRIPTION: &str = "Fetches a URL and returns its content as markdown (HTML converted; text and JSON as they are), \
headed by your prompt so you can answer it from the page. http:// is upgraded to https://. \
A redirect to another host is not followed: you get the new URL and must call WebFetch again with it. \
Pages are cut at 10 MB and binary files refused. Only public addresses are reachable unless the user allowed a local host. \
For GitHub and other APIs with a CLI, prefer that CLI through Bash.";

/// How WebFetch behaves; the defaults are the production values.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebFetchConfig {
    /// Hosts (names or IP literals, `*` for all) that may resolve to private, loopback or
    /// other non-public addresses: settings `webFetch.allowPrivateHosts`. Listed hosts
    /// are also fetched over plain http when asked to.
    pub allow_private_hosts: Vec<String>,
    /// Total time for one fetch, redirects and the body included.
    pub timeout: Duration,
    /// Bytes downloaded at most.
    pub max_bytes: usize,
    /// Same-host redirects followed at most.
    pub max_redirects: usize,
    /// Upgrade `http://` to `https://` (not for listed hosts or URLs with a port).
    pub upgrade_to_https: bool,
}

impl Default for WebFetchConfig {
    fn default() -> Self {
        WebFetchConfig {
            allow_private_hosts: Vec::new(),
            timeout: WEB_FETCH_TIMEOUT,
            max_bytes: WEB_FETCH_MAX_BYTES,
            max_redirects: WEB_FETCH_MAX_REDIRECTS,
            upgrade_to_https: true,
        }
    }
}

/// The `webFetch` settings block as written.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct WebFetchSection {
    /// `allowPrivateHosts`: see [`WebFetchConfig::allow_private_hosts`].
    pub allow_private_hosts: Vec<String>,
}

impl WebFetchConfig {
    /// The defaults with the `webFetch` settings block applied.
    pub fn from_section(section: &WebFetchSection) -> Self {
        WebFetchConfig {
            allow_private_hosts: section.allow_private_hosts.clone(),
            ..WebFetchConfig::default()
        }
    }
}

/// WebFetch with its settings, for the session's tool list.
pub fn web_fetch_tool(section: &WebFetchSection) -> Arc<dyn Tool> {
    Arc::new(WebFetchTool::new(WebFetchConfig::from_section(section)))
}

/// Fetches one page and returns it as markdown headed by the prompt (Claude Code's
/// `WebFetch`).
pub struct WebFetchTool {
    fetcher: Fetcher,
}

impl WebFetchTool {
    /// WebFetch with `config`, resolving host names through the system resolver.
    pub fn new(config: WebFetchConfig) -> Self {
        WebFetchTool::with_resolver(config, system_resolver())
    }

    /// With another resolver for host names (tests map names to loopback servers).
    pub fn with_resolver(config: WebFetchConfig, resolver: Arc<dyn HostResolver>) -> Self {
        WebFetchTool {
            fetcher: Fetcher {
                policy: AddressPolicy::new(&config.allow_private_hosts),
                resolver,
                limits: FetchLimits {
                    timeout: config.timeout,
                    max_bytes: config.max_bytes,
                    max_redirects: config.max_redirects,
                },
                upgrade_to_https: config.upgrade_to_https,
            },
        }
    }

    async fn run(&self, input: &Value, ctx: &ToolContext) -> Result<ToolOutput, ToolFailure> {
        let input = ToolInput::parse("WebFetch", input)?;
        let url = input.required_str("url")?.trim();
        if url.is_empty() {
            return Err(input.invalid("\"url\" must not be empty").into());
        }
        let prompt = input
            .optional_str("prompt")?
            .unwrap_or("")
            .trim()
            .to_string();
        let outcome = self
            .fetcher
            .fetch(url, &ctx.cancel)
            .await
            .map_err(|e| ToolFailure::failed(e.to_string()))?;
        let page = match outcome {
            FetchOutcome::Page(page) => page,
            FetchOutcome::OtherHostRedirect { from, to, status } => {
                return Ok(ToolOutput::ok(format!(
                    "REDIRECT DETECTED: {from} redirects (HTTP {status}) to a different host, which was not fetched.\n\
                     Redirect URL: {to}\n\
                     To read it, call WebFetch again with url \"{to}\" and the same prompt."
                )));
            }
        };
        let requested = url.to_string();
        let (text, converted) = tokio::task::spawn_blocking(move || page_text(page))
            .await
            .map_err(|e| ToolFailure::failed(format!("WebFetch failed: {e}")))??;
        Ok(ToolOutput::ok(render(
            &requested, &prompt, &converted, text,
        )))
    }
}

/// What the page turned into, besides its text.
struct ConvertedPage {
    final_url: String,
    media_type: String,
    kind: BodyKind,
    downloaded: usize,
    truncated: bool,
    declared_len: Option<u64>,
}

/// Decodes the body and converts HTML; blocking (HTML conversion is CPU work).
fn page_text(page: FetchedPage) -> Result<(String, ConvertedPage), ToolFailure> {
    let text = decode(&page.body, page.charset.as_deref(), page.kind);
    let text = match page.kind {
        BodyKind::Html => html_to_markdown(&text, &page.final_url).map_err(|e| {
            ToolFailure::failed(format!(
                "The HTML of {} could not be converted: {e}",
                page.final_url
            ))
        })?,
        _ => text,
    };
    Ok((
        text,
        ConvertedPage {
            final_url: page.final_url.to_string(),
            media_type: page.media_type,
            kind: page.kind,
            downloaded: page.body.len(),
            truncated: page.truncated,
            declared_len: page.declared_len,
        },
    ))
}

fn render(requested: &str, prompt: &str, page: &ConvertedPage, text: String) -> String {
    let mut out = String::with_capacity(text.len() + 512);
    if !prompt.is_empty() {
        out.push_str(&format!("Answer this from the page below: {prompt}\n\n"));
    }
    let media = if page.media_type.is_empty() {
        "no content type"
    } else {
        &page.media_type
    };
    let how = if page.kind == BodyKind::Html {
        ", converted to markdown"
    } else {
        ""
    };
    out.push_str(&format!("Source: {} ({media}{how})\n", page.final_url));
    if requested.trim_end_matches('/') != page.final_url.trim_end_matches('/') {
        out.push_str(&format!("Requested: {requested}\n"));
    }
    out.push_str("\n---\n\n");
    if text.trim().is_empty() {
        out.push_str("(The page has no text content.)");
    } else {
        out.push_str(text.trim_end());
    }
    if page.truncated {
        let total = page
            .declared_len
            .map(|n| format!(" of {}", human_bytes(n)))
            .unwrap_or_default();
        out.push_str(&format!(
            "\n\n[Content cut: only the first {}{total} were downloaded.]",
            human_bytes(page.downloaded as u64)
        ));
    }
    out
}

fn human_bytes(n: u64) -> String {
    const KB: u64 = 1024;
    const MB: u64 = 1024 * KB;
    if n >= MB {
        format!("{:.1} MB", n as f64 / MB as f64).replace(".0 MB", " MB")
    } else if n >= KB {
        format!("{} KB", n / KB)
    } else {
        format!("{n} bytes")
    }
}

#[async_trait]
impl Tool for WebFetchTool {
    fn name(&self) -> &str {
        "WebFetch"
    }

    fn description(&self) -> &str {
        DESCRIPTION
    }

    fn input_schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "url": {"type": "string", "format": "uri", "description": "The URL to fetch"},
                "prompt": {"type": "string", "description": "What to find out from the page"}
            },
            "required": ["url", "prompt"],
            "additionalProperties": false
        })
    }

    fn risk(&self) -> RiskClass {
        RiskClass::Network
    }

    /// The full URL as given; `WebFetch(domain:…)` rules match its host.
    fn primary_argument(&self, input: &Value) -> Option<String> {
        input
            .get("url")
            .and_then(Value::as_str)
            .map(|u| u.trim().to_string())
    }

    async fn call(&self, input: Value, ctx: &ToolContext) -> ToolOutput {
        into_output(self.run(&input, ctx).await)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::{assert_error_contains, call};

    #[test]
    fn settings_supply_the_private_allow_list() {
        let section: WebFetchSection =
            serde_json::from_value(json!({"allowPrivateHosts": ["localhost", "127.0.0.1"]}))
                .unwrap();
        let config = WebFetchConfig::from_section(&section);
        assert_eq!(config.allow_private_hosts, ["localhost", "127.0.0.1"]);
        assert_eq!(config.timeout, WEB_FETCH_TIMEOUT);
        assert!(
            WebFetchConfig::from_section(&WebFetchSection::default())
                .allow_private_hosts
                .is_empty()
        );
        let wrong = serde_json::from_value::<WebFetchSection>(json!({"allowPrivateHosts": [7]}));
        assert!(wrong.is_err(), "a host that is not text is a type error");
    }

    #[test]
    fn schema_risk_and_primary_argument() {
        let tool = WebFetchTool::new(WebFetchConfig::default());
        assert_eq!(tool.risk(), RiskClass::Network);
        assert_eq!(tool.input_schema()["required"], json!(["url", "prompt"]));
        assert_eq!(
            tool.primary_argument(&json!({"url": " https://docs.rs/x ", "prompt": "p"})),
            Some("https://docs.rs/x".into())
        );
        assert_eq!(tool.primary_argument(&json!({"prompt": "p"})), None);
    }

    #[tokio::test]
    async fn bad_input_is_an_error_result() {
        let dir = tempfile::tempdir().unwrap();
        let tool = WebFetchTool::new(WebFetchConfig::default());
        let out = call(&tool, dir.path(), json!({"prompt": "p"})).await;
        assert_error_contains(&out, "missing required field \"url\"");
        let out = call(
            &tool,
            dir.path(),
            json!({"url": "mailto:a@b.c", "prompt": "p"}),
        )
        .await;
        assert_error_contains(&out, "scheme \"mailto\" is not supported");
    }

    #[test]
    fn rendering_heads_with_the_prompt_and_notes_cuts() {
        let page = ConvertedPage {
            final_url: "https://example.com/b".into(),
            media_type: "text/html".into(),
            kind: BodyKind::Html,
            downloaded: 10 * 1024 * 1024,
            truncated: true,
            declared_len: Some(25 * 1024 * 1024),
        };
        let out = render("https://example.com/a", "what is it?", &page, "# Hi".into());
        assert!(out.starts_with("Answer this from the page below: what is it?\n\n"));
        assert!(out.contains("Source: https://example.com/b (text/html, converted to markdown)"));
        assert!(out.contains("Requested: https://example.com/a"));
        assert!(out.contains("\n---\n\n# Hi"));
        assert!(out.ends_with("[Content cut: only the first 10 MB of 25 MB were downloaded.]"));
        assert_eq!(human_bytes(1536), "1 KB");
        assert_eq!(human_bytes(12), "12 bytes");
        assert_eq!(human_bytes(3 * 1024 * 1024 / 2), "1.5 MB");
    }
}
