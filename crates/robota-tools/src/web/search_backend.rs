//! Search backends behind WebSearch when the provider has no search of its own: the
//! [`SearchBackend`] trait, the Brave Search API (`GET /res/v1/web/search` with
//! `X-Subscription-Token`) and a SearXNG instance's JSON API (`GET /search?format=json`),
//! and the settings block that picks one (`webSearch: {provider, apiKey, baseURL,
//! maxResults}`). No block, or one that cannot work (unknown provider, no key), means no
//! backend, so the tool is never advertised in vain.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use reqwest::Url;
use reqwest::header::{ACCEPT, HeaderValue};
use serde::Deserialize;
use serde_json::Value;

/// Brave's API host.
pub const BRAVE_DEFAULT_BASE_URL: &str = "https://api.search.brave.com";
/// Results shown when the settings do not say.
pub const DEFAULT_MAX_RESULTS: usize = 10;
/// Time allowed for one search request.
pub const SEARCH_TIMEOUT: Duration = Duration::from_secs(15);

/// One search result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SearchHit {
    pub title: String,
    pub url: String,
    /// Plain text or light markdown (the engines' `<strong>` highlights become `**`).
    pub snippet: String,
}

/// A web search service.
#[async_trait]
pub trait SearchBackend: Send + Sync {
    /// Shown with the results, e.g. "Brave Search".
    fn name(&self) -> &str;
    /// Up to `count` results for `query`, best first.
    async fn search(&self, query: &str, count: usize) -> Result<Vec<SearchHit>, SearchError>;
}

/// A failed search, in words for the model.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{backend} search failed: {reason}")]
pub struct SearchError {
    pub backend: String,
    pub reason: String,
}

/// Why the `webSearch` settings block cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SearchConfigError {
    /// `provider` names no backend robota has.
    #[error("webSearch.provider \"{0}\" is not supported (use \"brave\" or \"searxng\")")]
    UnknownProvider(String),
    /// The block has no `provider`.
    #[error("webSearch.provider is missing (use \"brave\" or \"searxng\")")]
    MissingProvider,
    /// Brave without a key in the block or the environment.
    #[error(
        "webSearch with provider \"brave\" needs an API key (webSearch.apiKey, e.g. \"$ENV:BRAVE_API_KEY\", or BRAVE_API_KEY)"
    )]
    MissingApiKey,
    /// SearXNG without the address of the instance.
    #[error("webSearch with provider \"searxng\" needs webSearch.baseURL")]
    MissingBaseUrl,
    /// `baseURL` is not an http(s) URL robota can use.
    #[error("webSearch.baseURL {url:?} is not a usable http(s) URL: {reason}")]
    BadBaseUrl {
        /// The address as written.
        url: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The HTTP client could not be built (its error's message).
    #[error("the HTTP client for web search could not be built: {0}")]
    Client(String),
}

/// The configured search backend and result count.
#[derive(Clone)]
pub struct SearchSetup {
    pub backend: Arc<dyn SearchBackend>,
    pub max_results: usize,
}

/// The `webSearch` settings block as written: `{provider, apiKey, baseURL, maxResults}`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct WebSearchSection {
    /// `brave`, `searxng`, or `none`/`off`.
    pub provider: Option<String>,
    /// Brave's key (`$ENV:NAME` reads the environment).
    pub api_key: Option<String>,
    /// The service's address (required for SearXNG).
    #[serde(rename = "baseURL")]
    pub base_url: Option<String>,
    /// Results per search (1 to 20).
    pub max_results: Option<u64>,
}

/// The backend a `webSearch` block configures. `Ok(None)`: no block (or `"provider":
/// "none"`).
pub fn search_setup(
    section: Option<&WebSearchSection>,
) -> Result<Option<SearchSetup>, SearchConfigError> {
    setup_with_env(section, &|name| std::env::var(name).ok())
}

/// [`search_setup`] with the environment looked up through `env`.
fn setup_with_env(
    section: Option<&WebSearchSection>,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Option<SearchSetup>, SearchConfigError> {
    let Some(block) = section else {
        return Ok(None);
    };
    let text = |value: &Option<String>| {
        value
            .as_deref()
            .map(|s| expand_env(s, env))
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty())
    };
    let max_results = block
        .max_results
        .map(|n| n.clamp(1, 20) as usize)
        .unwrap_or(DEFAULT_MAX_RESULTS);
    let provider = text(&block.provider).ok_or(SearchConfigError::MissingProvider)?;
    let backend: Arc<dyn SearchBackend> = match provider.to_ascii_lowercase().as_str() {
        "none" | "off" => return Ok(None),
        "brave" => {
            let api_key = text(&block.api_key)
                .or_else(|| env("BRAVE_API_KEY"))
                .filter(|k| !k.trim().is_empty())
                .ok_or(SearchConfigError::MissingApiKey)?;
            robota_core::credentials::remember_value(&api_key);
            let base = text(&block.base_url).unwrap_or_else(|| BRAVE_DEFAULT_BASE_URL.to_string());
            Arc::new(BraveSearch::new(&api_key, &base)?)
        }
        "searxng" => {
            let base = text(&block.base_url).ok_or(SearchConfigError::MissingBaseUrl)?;
            Arc::new(SearxngSearch::new(&base)?)
        }
        _ => return Err(SearchConfigError::UnknownProvider(provider)),
    };
    Ok(Some(SearchSetup {
        backend,
        max_results,
    }))
}

/// `$ENV:NAME` for settings that reached us unexpanded (the settings layer normally
/// expands it first).
fn expand_env(value: &str, env: &dyn Fn(&str) -> Option<String>) -> String {
    match value.trim().strip_prefix("$ENV:") {
        Some(name) => env(name.trim()).unwrap_or_default(),
        None => value.to_string(),
    }
}

fn parse_base(raw: &str) -> Result<Url, SearchConfigError> {
    let bad = |reason: String| SearchConfigError::BadBaseUrl {
        url: raw.to_string(),
        reason,
    };
    let mut url = Url::parse(raw.trim()).map_err(|e| bad(e.to_string()))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(bad(format!("scheme \"{}\"", url.scheme())));
    }
    if !url.path().ends_with('/') {
        let path = format!("{}/", url.path());
        url.set_path(&path);
    }
    Ok(url)
}

fn client_for(base: &Url) -> Result<reqwest::Client, SearchConfigError> {
    let mut builder = robota_core::http_client::client_builder()
        .timeout(SEARCH_TIMEOUT)
        .connect_timeout(Duration::from_secs(10));
    if robota_core::http_client::is_loopback(base) {
        builder = builder.no_proxy();
    }
    builder
        .build()
        .map_err(|e| SearchConfigError::Client(e.to_string()))
}

/// Sends a GET and returns the JSON body, with readable errors.
async fn get_json(
    backend: &str,
    request: reqwest::RequestBuilder,
    hint_for_status: impl Fn(u16) -> Option<&'static str>,
) -> Result<Value, SearchError> {
    let fail = |reason: String| SearchError {
        backend: backend.to_string(),
        reason,
    };
    let response = request
        .header(ACCEPT, HeaderValue::from_static("application/json"))
        .send()
        .await
        .map_err(|e| {
            if e.is_timeout() {
                fail(format!("no answer within {} s", SEARCH_TIMEOUT.as_secs()))
            } else {
                fail(format!("could not reach the search service: {e}"))
            }
        })?;
    let status = response.status();
    let body = response
        .text()
        .await
        .map_err(|e| fail(format!("the answer could not be read: {e}")))?;
    if !status.is_success() {
        let excerpt: String = body.chars().take(300).collect();
        let hint = hint_for_status(status.as_u16())
            .map(|h| format!(" — {h}"))
            .unwrap_or_default();
        return Err(fail(format!("HTTP {status}{hint}: {excerpt}")));
    }
    serde_json::from_str(&body).map_err(|e| fail(format!("the answer is not JSON ({e})")))
}

/// Brave Search API.
pub struct BraveSearch {
    api_key: String,
    endpoint: Url,
    client: reqwest::Client,
}

impl BraveSearch {
    /// `base_url` is the host root (`https://api.search.brave.com`).
    pub fn new(api_key: &str, base_url: &str) -> Result<Self, SearchConfigError> {
        let base = parse_base(base_url)?;
        let endpoint =
            base.join("res/v1/web/search")
                .map_err(|e| SearchConfigError::BadBaseUrl {
                    url: base_url.to_string(),
                    reason: e.to_string(),
                })?;
        Ok(BraveSearch {
            api_key: api_key.trim().to_string(),
            client: client_for(&endpoint)?,
            endpoint,
        })
    }
}

#[async_trait]
impl SearchBackend for BraveSearch {
    fn name(&self) -> &str {
        "Brave Search"
    }

    async fn search(&self, query: &str, count: usize) -> Result<Vec<SearchHit>, SearchError> {
        let request = self
            .client
            .get(self.endpoint.clone())
            .query(&[("q", query), ("count", &count.clamp(1, 20).to_string())])
            .header("X-Subscription-Token", &self.api_key);
        let json = get_json(self.name(), request, |status| match status {
            401 | 403 => Some("check the Brave API key"),
            429 => Some("rate limited by Brave; try again shortly"),
            _ => None,
        })
        .await?;
        Ok(hits(&json["web"]["results"], "description"))
    }
}

/// A SearXNG instance (its `search.formats` setting must include `json`).
pub struct SearxngSearch {
    endpoint: Url,
    client: reqwest::Client,
}

impl SearxngSearch {
    /// `base_url` is the instance root (`http://localhost:8888`).
    pub fn new(base_url: &str) -> Result<Self, SearchConfigError> {
        let base = parse_base(base_url)?;
        let endpoint = base
            .join("search")
            .map_err(|e| SearchConfigError::BadBaseUrl {
                url: base_url.to_string(),
                reason: e.to_string(),
            })?;
        Ok(SearxngSearch {
            client: client_for(&endpoint)?,
            endpoint,
        })
    }
}

#[async_trait]
impl SearchBackend for SearxngSearch {
    fn name(&self) -> &str {
        "SearXNG"
    }

    async fn search(&self, query: &str, count: usize) -> Result<Vec<SearchHit>, SearchError> {
        let request = self
            .client
            .get(self.endpoint.clone())
            .query(&[("q", query), ("format", "json")]);
        let json = get_json(self.name(), request, |status| match status {
            403 => Some("the instance must allow the json format (search.formats in settings.yml)"),
            429 => Some("rate limited by the instance"),
            _ => None,
        })
        .await?;
        let mut found = hits(&json["results"], "content");
        found.truncate(count);
        Ok(found)
    }
}

/// Results from an array of `{title, url, <snippet_key>}` objects; ones without a URL
/// are skipped.
fn hits(results: &Value, snippet_key: &str) -> Vec<SearchHit> {
    results
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default()
        .iter()
        .filter_map(|r| {
            let url = r.get("url")?.as_str()?.trim().to_string();
            if url.is_empty() {
                return None;
            }
            let field = |k: &str| r.get(k).and_then(Value::as_str).unwrap_or("");
            Some(SearchHit {
                title: plain(field("title")),
                snippet: plain(field(snippet_key)),
                url,
            })
        })
        .collect()
}

/// Engines put light HTML (`<strong>`, entities) in titles and snippets.
fn plain(text: &str) -> String {
    let text = text.trim();
    if !text.contains(['<', '&']) {
        return text.to_string();
    }
    htmd::convert(text)
        .map(|md| md.split_whitespace().collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| text.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn section(value: Value) -> WebSearchSection {
        serde_json::from_value(value).unwrap()
    }

    #[test]
    fn settings_pick_a_backend_or_none() {
        let none = search_setup(None).unwrap();
        assert!(none.is_none());
        let off = search_setup(Some(&section(json!({"provider": "none"}))));
        assert!(off.unwrap().is_none());
        let brave = search_setup(Some(&section(json!({
            "provider": "brave", "apiKey": "k", "maxResults": 5}))))
        .unwrap()
        .unwrap();
        assert_eq!(brave.backend.name(), "Brave Search");
        assert_eq!(brave.max_results, 5);
        let searx = search_setup(Some(&section(json!({
            "provider": "SearXNG", "baseURL": "http://127.0.0.1:8888"}))))
        .unwrap()
        .unwrap();
        assert_eq!(searx.backend.name(), "SearXNG");
        assert_eq!(searx.max_results, DEFAULT_MAX_RESULTS);
    }

    #[test]
    fn unusable_settings_are_errors_that_say_why() {
        let err = |v: Value| search_setup(Some(&section(v))).err().unwrap().to_string();
        assert!(err(json!({"provider": "bing"})).contains("\"bing\" is not supported"));
        assert!(err(json!({})).contains("provider is missing"));
        assert!(err(json!({"provider": "searxng"})).contains("needs webSearch.baseURL"));
        assert!(err(json!({"provider": "searxng", "baseURL": "ftp://x"})).contains("not a usable"));
        let no_env = |_: &str| None;
        let brave = section(json!({"provider": "brave", "apiKey": "$ENV:UNSET_KEY"}));
        let missing = setup_with_env(Some(&brave), &no_env).err().unwrap();
        assert_eq!(missing, SearchConfigError::MissingApiKey);
        let env = |name: &str| (name == "BRAVE_API_KEY").then(|| "from-env".to_string());
        let keyless = section(json!({"provider": "brave"}));
        assert!(setup_with_env(Some(&keyless), &env).unwrap().is_some());
    }

    #[test]
    fn hits_are_read_and_light_html_is_flattened() {
        let json = json!([
            {"title": "Rust &amp; <strong>Cargo</strong>", "url": "https://doc.rust-lang.org/cargo/",
             "description": "The <strong>Cargo</strong> book"},
            {"title": "no url"},
            {"title": "T", "url": "https://x.test/", "description": ""}
        ]);
        let found = hits(&json, "description");
        assert_eq!(found.len(), 2);
        assert_eq!(found[0].title, "Rust & **Cargo**");
        assert_eq!(found[0].snippet, "The **Cargo** book");
        assert_eq!(found[1].snippet, "");
    }
}
