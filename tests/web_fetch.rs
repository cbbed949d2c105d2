//! WebFetch and WebSearch against real HTTP servers on 127.0.0.1 started by each test: an
//! HTML page, redirect chains (same host, another host, a private target, a loop), an
//! oversized body, slow responses under a short time cap, text, JSON, binary, bad URLs,
//! DNS failures, the private-address refusal; WebSearch over fake Brave and SearXNG
//! backends; and Anthropic's server-side web search carried through a full round trip.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failed unwrap is a failed test

mod support;

use std::collections::HashMap;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use async_trait::async_trait;
use robota::core::{
    Block, Message, Provider, ProviderRequest, Role, Tool, ToolContext, ToolOutput,
};
use robota::providers::{AnthropicConfig, AnthropicProvider};
use robota::tools::web::address::HostResolver;
use robota::tools::{WebFetchConfig, WebFetchTool, WebSearchSection, web_search_tool};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

// ---------------------------------------------------------------------------------------
// A routed loopback HTTP/1.1 server.

enum Reply {
    /// A complete response with a content length.
    Full {
        status: u16,
        headers: Vec<(&'static str, String)>,
        body: Vec<u8>,
    },
    /// These bytes, then nothing until the server is dropped.
    Stall(Vec<u8>),
}

fn page(content_type: &str, body: impl Into<Vec<u8>>) -> Reply {
    Reply::Full {
        status: 200,
        headers: vec![("Content-Type", content_type.to_string())],
        body: body.into(),
    }
}

fn redirect(status: u16, location: &str) -> Reply {
    Reply::Full {
        status,
        headers: vec![("Location", location.to_string())],
        body: Vec::new(),
    }
}

/// A request as received: path with query, and headers (names lower-cased).
#[derive(Debug, Clone)]
struct Hit {
    path: String,
    headers: HashMap<String, String>,
}

type Route = dyn Fn(&str) -> Reply + Send + Sync;

#[derive(Default)]
struct ServerState {
    hits: Vec<Hit>,
    shutdown: bool,
}

struct WebServer {
    addr: SocketAddr,
    state: Arc<(Mutex<ServerState>, Condvar)>,
    accept: Option<JoinHandle<()>>,
}

impl WebServer {
    fn start(route: impl Fn(&str) -> Reply + Send + Sync + 'static) -> WebServer {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let state: Arc<(Mutex<ServerState>, Condvar)> = Arc::default();
        let route: Arc<Route> = Arc::new(route);
        let accept_state = state.clone();
        let accept = std::thread::spawn(move || {
            for conn in listener.incoming() {
                if accept_state.0.lock().unwrap().shutdown {
                    break;
                }
                let Ok(conn) = conn else { continue };
                let (state, route) = (accept_state.clone(), route.clone());
                std::thread::spawn(move || serve(conn, &state, route.as_ref()));
            }
        });
        WebServer {
            addr,
            state,
            accept: Some(accept),
        }
    }

    fn port(&self) -> u16 {
        self.addr.port()
    }

    fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    fn hits(&self) -> Vec<Hit> {
        self.state.0.lock().unwrap().hits.clone()
    }
}

impl Drop for WebServer {
    fn drop(&mut self) {
        self.state.0.lock().unwrap().shutdown = true;
        self.state.1.notify_all();
        let _ = TcpStream::connect(self.addr);
        if let Some(accept) = self.accept.take() {
            let _ = accept.join();
        }
    }
}

fn serve(mut conn: TcpStream, state: &(Mutex<ServerState>, Condvar), route: &Route) {
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        match conn.read(&mut byte) {
            Ok(1) => head.push(byte[0]),
            _ => return,
        }
    }
    let head = String::from_utf8_lossy(&head).into_owned();
    let mut lines = head.lines();
    let path = lines
        .next()
        .and_then(|l| l.split_whitespace().nth(1))
        .unwrap_or("/")
        .to_string();
    let headers = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    state.0.lock().unwrap().hits.push(Hit {
        path: path.clone(),
        headers,
    });
    match route(&path) {
        Reply::Full {
            status,
            headers,
            body,
        } => {
            let mut out = format!(
                "HTTP/1.1 {status} {}\r\nContent-Length: {}\r\nConnection: close\r\n",
                reason(status),
                body.len()
            );
            for (name, value) in headers {
                out.push_str(&format!("{name}: {value}\r\n"));
            }
            out.push_str("\r\n");
            let _ = conn.write_all(out.as_bytes());
            // Large bodies go out in pieces; the client may hang up part-way.
            for piece in body.chunks(16 * 1024) {
                if conn.write_all(piece).is_err() {
                    return;
                }
            }
        }
        Reply::Stall(bytes) => {
            let _ = conn.write_all(&bytes);
            let _ = conn.flush();
            let guard = state.0.lock().unwrap();
            let _guard = state.1.wait_while(guard, |s| !s.shutdown).unwrap();
        }
    }
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        301 => "Moved Permanently",
        302 => "Found",
        307 => "Temporary Redirect",
        404 => "Not Found",
        _ => "Status",
    }
}

// ---------------------------------------------------------------------------------------
// Tool helpers.

/// Names mapped to addresses; anything else fails like a DNS miss.
struct MapResolver(HashMap<&'static str, &'static str>);

#[async_trait]
impl HostResolver for MapResolver {
    async fn resolve(&self, host: &str, port: u16) -> std::io::Result<Vec<SocketAddr>> {
        match self.0.get(host) {
            Some(ip) => Ok(vec![SocketAddr::new(ip.parse().unwrap(), port)]),
            None => Err(std::io::Error::new(
                std::io::ErrorKind::NotFound,
                "failed to lookup address information: Name or service not known",
            )),
        }
    }
}

fn resolver() -> Arc<MapResolver> {
    Arc::new(MapResolver(HashMap::from([
        ("site.test", "127.0.0.1"),
        ("other.test", "127.0.0.1"),
        ("public.test", "127.0.0.1"),
        ("mixed.test", "10.0.0.7"),
    ])))
}

fn config(allowed: &[&str]) -> WebFetchConfig {
    WebFetchConfig {
        allow_private_hosts: allowed.iter().map(|s| s.to_string()).collect(),
        timeout: Duration::from_secs(10),
        ..WebFetchConfig::default()
    }
}

/// WebFetch that may reach the loopback test servers.
fn loopback_fetch() -> WebFetchTool {
    WebFetchTool::with_resolver(
        config(&["127.0.0.1", "site.test", "other.test"]),
        resolver(),
    )
}

fn ctx() -> ToolContext {
    ToolContext {
        cwd: std::env::temp_dir(),
        cancel: CancellationToken::new(),
        tool_use_id: "toolu_web".into(),
        env: Vec::new(),
        read_denial: None,
        progress: Default::default(),
    }
}

async fn fetch(tool: &WebFetchTool, url: &str) -> ToolOutput {
    tool.call(json!({"url": url, "prompt": "What does it say?"}), &ctx())
        .await
}

#[track_caller]
fn ok(out: &ToolOutput) -> &str {
    assert!(!out.is_error, "unexpected error: {}", out.content);
    &out.content
}

#[track_caller]
fn err<'a>(out: &'a ToolOutput, needle: &str) -> &'a str {
    assert!(out.is_error, "expected an error, got: {}", out.content);
    assert!(
        out.content.contains(needle),
        "{:?} lacks {needle:?}",
        out.content
    );
    &out.content
}

// ---------------------------------------------------------------------------------------
// WebFetch.

const HTML: &str = r#"<!DOCTYPE html><html><head><title>Guide</title>
<style>body { color: red }</style><script>var tracking = 1;</script></head>
<body><nav><a href="/">Home</a></nav>
<h1>Install guide</h1><p>Run <code>cargo install robota</code> first. See <a href="/docs/faq">the FAQ</a>.</p>
<h2>Steps</h2><ol><li>Download</li><li>Configure</li></ol>
<ul><li>fast</li><li>small</li></ul>
<table><tr><th>OS</th><th>Ok</th></tr><tr><td>Linux</td><td>yes</td></tr></table>
</body></html>"#;

#[tokio::test]
async fn an_html_page_becomes_markdown_headed_by_the_prompt() {
    let server = WebServer::start(|_| page("text/html; charset=utf-8", HTML));
    let out = fetch(&loopback_fetch(), &server.url("/guide")).await;
    let text = ok(&out);
    assert!(text.starts_with("Answer this from the page below: What does it say?\n\n"));
    let source = format!(
        "Source: {} (text/html, converted to markdown)",
        server.url("/guide")
    );
    assert!(text.contains(&source), "{text}");
    assert!(text.contains("# Install guide"), "{text}");
    assert!(text.contains("## Steps"), "{text}");
    assert!(text.contains("1. Download\n2. Configure"), "{text}");
    assert!(text.contains("- fast\n- small"), "{text}");
    assert!(text.contains("`cargo install robota`"), "{text}");
    let faq = format!("[the FAQ]({})", server.url("/docs/faq"));
    assert!(text.contains(&faq), "relative link made absolute: {text}");
    assert!(text.contains("| Linux | yes |"), "{text}");
    assert!(
        !text.contains("tracking") && !text.contains("color: red"),
        "{text}"
    );
    let hit = &server.hits()[0];
    assert_eq!(hit.path, "/guide");
    assert!(hit.headers["user-agent"].starts_with("robota/"));
    assert!(hit.headers["accept"].starts_with("text/markdown"));
}

#[tokio::test]
async fn a_same_host_redirect_chain_is_followed_to_the_final_page() {
    let port = Arc::new(Mutex::new(0u16));
    let port_in_route = port.clone();
    let server = WebServer::start(move |path| match path {
        "/r1" => redirect(301, "/r2"),
        "/r2" => redirect(302, "r3?x=1"),
        "/r3?x=1" => {
            let port = *port_in_route.lock().unwrap();
            redirect(307, &format!("http://www.site.test:{port}/final"))
        }
        "/final" => page("text/plain", "arrived"),
        _ => page("text/plain", "wrong"),
    });
    *port.lock().unwrap() = server.port();
    let with_www = WebFetchTool::with_resolver(
        config(&["site.test", "www.site.test"]),
        Arc::new(MapResolver(HashMap::from([
            ("site.test", "127.0.0.1"),
            ("www.site.test", "127.0.0.1"),
        ]))),
    );
    let start = format!("http://site.test:{}/r1", server.port());
    let out = fetch(&with_www, &start).await;
    let text = ok(&out);
    let last = format!("http://www.site.test:{}/final", server.port());
    assert!(
        text.contains(&format!("Source: {last} (text/plain)")),
        "{text}"
    );
    assert!(text.contains(&format!("Requested: {start}")), "{text}");
    assert!(text.ends_with("---\n\narrived"), "{text}");
    let paths: Vec<String> = server.hits().into_iter().map(|h| h.path).collect();
    assert_eq!(paths, ["/r1", "/r2", "/r3?x=1", "/final"]);
}

#[tokio::test]
async fn a_redirect_loop_stops_after_ten_hops() {
    let server = WebServer::start(|path| {
        let n: u32 = path.trim_start_matches("/loop/").parse().unwrap_or(0);
        redirect(302, &format!("/loop/{}", n + 1))
    });
    let out = fetch(&loopback_fetch(), &server.url("/loop/0")).await;
    err(&out, "Too many redirects (more than 10)");
    assert_eq!(server.hits().len(), 11);
}

#[tokio::test]
async fn a_redirect_to_another_host_is_handed_back_not_followed() {
    let server = WebServer::start(|path| match path {
        "/away" => redirect(301, "/moved"),
        _ => page("text/plain", "should not be fetched"),
    });
    let port = server.port();
    let other = WebServer::start(move |_| redirect(302, &format!("http://other.test:{port}/x")));
    let url = format!("http://site.test:{}/start", other.port());
    let out = fetch(&loopback_fetch(), &url).await;
    let text = ok(&out);
    assert!(text.starts_with("REDIRECT DETECTED"), "{text}");
    assert!(
        text.contains(&format!("Redirect URL: http://other.test:{port}/x")),
        "{text}"
    );
    assert!(text.contains("call WebFetch again"), "{text}");
    assert!(server.hits().is_empty(), "the other host was contacted");
}

#[tokio::test]
async fn a_redirect_to_a_private_address_is_refused() {
    let server = WebServer::start(|path| match path {
        "/to-loopback-literal" => redirect(302, "http://127.0.0.1/admin"),
        "/to-private-name" => redirect(302, "http://mixed.test/admin"),
        _ => page("text/plain", "secret"),
    });
    // Only site.test may be private; the redirect targets may not.
    let tool = WebFetchTool::with_resolver(config(&["site.test"]), resolver());
    let base = format!("http://site.test:{}", server.port());
    let out = fetch(&tool, &format!("{base}/to-loopback-literal")).await;
    err(&out, "Refused to fetch 127.0.0.1: it resolves to 127.0.0.1");
    let out = fetch(&tool, &format!("{base}/to-private-name")).await;
    err(&out, "Refused to fetch mixed.test: it resolves to 10.0.0.7");
    assert_eq!(server.hits().len(), 2);
}

#[tokio::test]
async fn private_and_loopback_addresses_are_refused_by_default() {
    let server = WebServer::start(|_| page("text/plain", "internal"));
    let tool = WebFetchTool::with_resolver(WebFetchConfig::default(), resolver());
    let port = server.port();
    for url in [
        format!("http://127.0.0.1:{port}/"),
        format!("http://[::1]:{port}/"),
        format!("http://[::ffff:127.0.0.1]:{port}/"),
        format!("http://public.test:{port}/"),
    ] {
        let out = fetch(&tool, &url).await;
        let text = err(&out, "non-public address");
        assert!(text.contains("webFetch.allowPrivateHosts"), "{text}");
    }
    let real_dns = WebFetchTool::new(WebFetchConfig::default());
    let out = fetch(&real_dns, &format!("http://localhost:{port}/")).await;
    err(&out, "Refused to fetch localhost");
    assert!(server.hits().is_empty(), "a refused address was contacted");
}

#[tokio::test]
async fn an_oversized_body_is_cut_with_a_note() {
    let big = "0123456789abcdef".repeat(64 * 1024); // 1 MB
    let server = WebServer::start(move |_| page("text/plain", big.clone()));
    let tool = WebFetchTool::with_resolver(
        WebFetchConfig {
            max_bytes: 64 * 1024,
            ..config(&["127.0.0.1"])
        },
        resolver(),
    );
    let out = fetch(&tool, &server.url("/big")).await;
    let text = ok(&out);
    assert!(
        text.ends_with("[Content cut: only the first 64 KB of 1 MB were downloaded.]"),
        "{}",
        &text[text.len().saturating_sub(200)..]
    );
    let body = text.split("---\n\n").nth(1).unwrap();
    let kept = body.split("\n\n[Content cut").next().unwrap();
    assert_eq!(kept.len(), 64 * 1024);
}

#[tokio::test]
async fn a_slow_response_hits_the_time_cap() {
    let server = WebServer::start(|path| match path {
        "/no-head" => Reply::Stall(Vec::new()),
        _ => Reply::Stall(
            b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 100\r\n\r\npartial"
                .to_vec(),
        ),
    });
    let tool = WebFetchTool::with_resolver(
        WebFetchConfig {
            timeout: Duration::from_millis(300),
            ..config(&["127.0.0.1"])
        },
        resolver(),
    );
    for path in ["/no-head", "/slow-body"] {
        let started = Instant::now();
        let out = fetch(&tool, &server.url(path)).await;
        err(&out, "timed out after 0.3 s");
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "{path} not bounded"
        );
    }
}

#[tokio::test]
async fn cancellation_stops_a_fetch_at_once() {
    let server = WebServer::start(|_| Reply::Stall(Vec::new()));
    let tool = loopback_fetch();
    let context = ctx();
    let cancel = context.cancel.clone();
    let url = server.url("/hang");
    let call = tool.call(json!({"url": url, "prompt": "p"}), &context);
    let (out, ()) = tokio::join!(call, async {
        // Cancel once the server has the request.
        while server.hits().is_empty() {
            tokio::task::yield_now().await;
        }
        cancel.cancel();
    });
    err(&out, "interrupted by user");
}

#[tokio::test]
async fn text_and_json_come_back_as_they_are() {
    let server = WebServer::start(|path| match path {
        "/notes.txt" => page(
            "text/plain; charset=utf-8",
            "line 1\n  line 2 <b>not html</b>\n",
        ),
        "/data.json" => page("application/json", r#"{"a": [1, 2]}"#),
        "/raw" => Reply::Full {
            status: 200,
            headers: vec![],
            body: "# README\n한국어 텍스트".into(),
        },
        _ => page("application/xml", "<a><b>x</b></a>"),
    });
    let tool = loopback_fetch();
    let text = ok(&fetch(&tool, &server.url("/notes.txt")).await).to_string();
    assert!(text.contains("(text/plain)\n"), "{text}");
    assert!(
        text.ends_with("---\n\nline 1\n  line 2 <b>not html</b>"),
        "{text}"
    );
    let json = ok(&fetch(&tool, &server.url("/data.json")).await).to_string();
    assert!(json.ends_with("---\n\n{\"a\": [1, 2]}"), "{json}");
    let raw = ok(&fetch(&tool, &server.url("/raw")).await).to_string();
    assert!(raw.contains("(no content type)"), "{raw}");
    assert!(raw.ends_with("# README\n한국어 텍스트"), "{raw}");
    let xml = ok(&fetch(&tool, &server.url("/feed.xml")).await).to_string();
    assert!(xml.ends_with("<a><b>x</b></a>"), "{xml}");
}

#[tokio::test]
async fn binary_content_is_refused() {
    let server = WebServer::start(|path| match path {
        "/logo.png" => page("image/png", b"\x89PNG\r\n\x1a\n\x00\x00".to_vec()),
        _ => page(
            "application/octet-stream",
            b"\x7fELF\x02\x01\x00\x00".to_vec(),
        ),
    });
    let tool = loopback_fetch();
    let out = fetch(&tool, &server.url("/logo.png")).await;
    err(&out, "returned binary content (image/png)");
    let out = fetch(&tool, &server.url("/tool")).await;
    err(&out, "binary content (application/octet-stream)");
}

#[tokio::test]
async fn http_errors_bad_urls_and_dns_failures_are_explained() {
    let server = WebServer::start(|_| Reply::Full {
        status: 404,
        headers: vec![],
        body: b"missing".to_vec(),
    });
    let tool = loopback_fetch();
    let out = fetch(&tool, &server.url("/gone")).await;
    err(&out, "answered HTTP 404 Not Found");
    err(
        &fetch(&tool, "not a url").await,
        "Invalid URL \"not a url\"",
    );
    err(&fetch(&tool, "ftp://example.com/").await, "scheme \"ftp\"");
    let out = fetch(&tool, "http://nowhere.test:8080/").await;
    err(&out, "Could not resolve host \"nowhere.test\"");
    err(&out, "Name or service not known");
    let missing_prompt = tool.call(json!({"url": 5}), &ctx()).await;
    err(&missing_prompt, "\"url\" must be a string");
}

#[test]
fn web_fetch_advertises_claude_codes_schema() {
    let tool = WebFetchTool::new(WebFetchConfig::default());
    assert_eq!(tool.name(), "WebFetch");
    let schema = tool.input_schema();
    assert_eq!(schema["required"], json!(["url", "prompt"]));
    assert_eq!(
        tool.primary_argument(&json!({"url": "https://docs.rs/tokio", "prompt": "p"})),
        Some("https://docs.rs/tokio".to_string())
    );
}

// ---------------------------------------------------------------------------------------
// WebSearch.

fn brave_results() -> Value {
    json!({"type": "search", "query": {"original": "rust async"}, "web": {"type": "search", "results": [
        {"title": "Async in <strong>Rust</strong>", "url": "https://rust-lang.github.io/async-book/",
         "description": "The <strong>async</strong> book &amp; more", "language": "en"},
        {"title": "Tokio", "url": "https://tokio.rs/", "description": "An asynchronous runtime"},
        {"title": "Spam", "url": "https://www.spam.test/rust", "description": "buy now"}
    ]}})
}

#[tokio::test]
async fn web_search_lists_brave_results_as_numbered_markdown() {
    let server = WebServer::start(|_| page("application/json", brave_results().to_string()));
    let settings = search_section(json!({"provider": "brave", "apiKey": "brave-key",
                                         "baseURL": server.url("")}));
    let tool = web_search_tool(Some(&settings))
        .unwrap()
        .expect("a configured backend offers the tool");
    assert_eq!(tool.name(), "WebSearch");
    let out = tool
        .call(
            json!({"query": "rust async", "blocked_domains": ["spam.test"]}),
            &ctx(),
        )
        .await;
    let text = ok(&out);
    assert!(
        text.starts_with("Web search results for \"rust async\" (Brave Search):"),
        "{text}"
    );
    assert!(text.contains(
        "1. [Async in **Rust**](https://rust-lang.github.io/async-book/)\n   The **async** book & more"
    ), "{text}");
    assert!(text.contains("2. [Tokio](https://tokio.rs/)"), "{text}");
    assert!(!text.contains("Spam"), "{text}");
    let hit = &server.hits()[0];
    assert!(
        hit.path
            .starts_with("/res/v1/web/search?q=rust+async&count=20"),
        "{}",
        hit.path
    );
    assert_eq!(hit.headers["x-subscription-token"], "brave-key");
    assert_eq!(hit.headers["accept"], "application/json");
}

#[tokio::test]
async fn web_search_reads_searxng_and_reports_backend_errors() {
    let server = WebServer::start(|path| {
        if path.contains("q=fail") {
            return Reply::Full {
                status: 403,
                headers: vec![],
                body: b"Forbidden".to_vec(),
            };
        }
        page("application/json", json!({"query": "q", "results": [
            {"title": "Docs", "url": "https://docs.rs/serde", "content": "Serde docs", "engine": "ddg"},
            {"title": "Blog", "url": "https://blog.example.com/serde", "content": "A post"}
        ]}).to_string())
    });
    let settings = search_section(json!({"provider": "searxng", "baseURL": server.url("/searx")}));
    let tool = web_search_tool(Some(&settings)).unwrap().unwrap();
    let out = tool
        .call(
            json!({"query": "serde", "allowed_domains": ["docs.rs"]}),
            &ctx(),
        )
        .await;
    let text = ok(&out);
    assert!(text.contains("(SearXNG)"), "{text}");
    assert!(
        text.contains("1. [Docs](https://docs.rs/serde)\n   Serde docs"),
        "{text}"
    );
    assert!(!text.contains("Blog"), "{text}");
    assert_eq!(server.hits()[0].path, "/searx/search?q=serde&format=json");
    let out = tool.call(json!({"query": "fail"}), &ctx()).await;
    err(&out, "SearXNG search failed: HTTP 403 Forbidden");
    err(&out, "json format");
}

#[test]
fn web_search_is_absent_without_a_working_backend() {
    assert!(web_search_tool(None).unwrap().is_none());
    let off = web_search_tool(Some(&search_section(json!({"provider": "none"}))));
    assert!(off.unwrap().is_none());
    for (block, says) in [
        (json!({"provider": "searxng"}), "needs webSearch.baseURL"),
        (
            json!({"provider": "altavista"}),
            "\"altavista\" is not supported",
        ),
    ] {
        let error = web_search_tool(Some(&search_section(block))).err().unwrap();
        assert!(error.to_string().contains(says), "{error}");
    }
}

fn search_section(block: Value) -> WebSearchSection {
    serde_json::from_value(block).unwrap()
}

// ---------------------------------------------------------------------------------------
// Anthropic's server-side web search: decode → history → re-send.

#[tokio::test]
async fn anthropic_server_web_search_survives_a_round_trip() {
    let server = support::MockServer::start(vec![
        support::anthropic::fixture("anthropic/web_search_server_tool.jsonl"),
        support::anthropic::text_turn("You're welcome."),
    ]);
    let mut config = AnthropicConfig::new("sk-ant-test");
    config.base_url = server.base_url();
    let provider = AnthropicProvider::new(config).unwrap();
    let mut request = ProviderRequest {
        model: "claude-sonnet-4-5".into(),
        system: "You are robota.".into(),
        messages: vec![Message::user_text("What is in the tech news today?")],
        tools: vec![],
        max_tokens: 1024,
        thinking_budget: None,
        tools_disabled: false,
        server_tools: Vec::new(),
        wire: None,
    };
    let cancel = CancellationToken::new();
    let first = provider.stream(&request, &|_| {}, &cancel).await.unwrap();
    let answer = Message::new(Role::Assistant, first.content.clone());
    let readable = answer.text();
    assert!(
        readable.starts_with("Based on my search results"),
        "{readable}"
    );
    assert!(
        readable
            .contains("## Apple News\nApple today announced the grand reopening of Apple Ginza")
    );
    assert!(readable.ends_with("retail expansion."));

    request.messages.push(answer);
    request.messages.push(Message::user_text("Thanks!"));
    let second = provider.stream(&request, &|_| {}, &cancel).await.unwrap();
    assert_eq!(
        Message::new(Role::Assistant, second.content).text(),
        "You're welcome."
    );

    let sent = &server.requests()[1].body["messages"];
    assert_eq!(sent.as_array().unwrap().len(), 3);
    let blocks = sent[1]["content"].as_array().unwrap();
    assert_eq!(blocks[0]["type"], "server_tool_use");
    assert_eq!(blocks[0]["id"], "srvtoolu_01Bj5uzzLcYG5hfueSLcDH8k");
    assert_eq!(
        blocks[0]["input"],
        json!({"query": "tech news today September 26 2025"})
    );
    let recorded = std::fs::read_to_string(support::wire_fixture_path(
        "anthropic/web_search_server_tool.jsonl",
    ))
    .unwrap();
    let recorded_result = recorded
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .find(|v| v["content_block"]["type"] == "web_search_tool_result")
        .unwrap()["content_block"]
        .clone();
    assert_eq!(
        blocks[1], recorded_result,
        "the encrypted results go back verbatim"
    );
    let texts: Vec<&Value> = blocks[2..].iter().collect();
    assert!(
        texts
            .iter()
            .all(|b| b["type"] == "text" && b["text"].is_string())
    );
    let resent: String = texts.iter().map(|b| b["text"].as_str().unwrap()).collect();
    assert_eq!(resent, readable);
    // The history is sendable as a whole: nothing but known block kinds.
    assert!(matches!(&first.content[0], Block::Opaque(_)));
}
