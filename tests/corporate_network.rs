//! End to end: robota inside a company network. The real binary reaches the mock served
//! over HTTPS through mitmproxy, a real TLS-inspecting proxy named by `HTTPS_PROXY`
//! (with credentials in its URL, which nothing may show): without the proxy's CA it fails
//! with the message that says what to set, and with `NODE_EXTRA_CA_CERTS` pointing at the
//! CA it works. WebFetch reaches a page whose host only the proxy can resolve, and an MCP
//! server over HTTPS behind the proxy fails with the same message until the CA is given.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failed unwrap is a failed test

mod support;

use support::mitm::{Mitm, mitmdump};
use support::project::{json_result, output_text, project};
use support::skip::skip;
use support::tls::TlsFront;
use support::{MockServer, anthropic};

use std::io::{Read, Write};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::json;

/// A host name that is not loopback, so robota sends it through the proxy; mitmproxy's
/// addon maps it to the mock's TLS port.
const HOST: &str = "mock.robota.test";

const UNKNOWN_AUTHORITY: &str = "the server's certificate is signed by an unknown authority: \
     set NODE_EXTRA_CA_CERTS or SSL_CERT_FILE to your company's CA bundle";

#[test]
fn through_a_tls_inspecting_proxy_robota_needs_the_company_ca_and_then_works() {
    let Some(program) = mitmdump_or_skip() else {
        return;
    };
    let p = project();
    let server = MockServer::start(vec![anthropic::text_turn("through the proxy")]);
    let front = TlsFront::start(HOST, server.addr());
    let mitm = Mitm::start(&program, &p.user_home, HOST, front.port());
    let proxy = mitm
        .proxy_url()
        .replace("http://", "http://alice:pr0xy-s3cret@");
    let run = |extra: &[(&str, &str)]| {
        let mut cmd = p.command(&server, &["-p", "hello", "--output-format", "json"]);
        cmd.env("ANTHROPIC_BASE_URL", format!("https://{HOST}"))
            .env("HTTPS_PROXY", &proxy);
        for (name, value) in extra {
            cmd.env(name, value);
        }
        cmd.output().unwrap()
    };

    let refused = run(&[]);
    assert_ne!(refused.status.code(), Some(0), "{}", output_text(&refused));
    assert!(
        output_text(&refused).contains(UNKNOWN_AUTHORITY),
        "the failure names the certificate problem:\n{}",
        output_text(&refused)
    );
    assert!(
        server.requests().is_empty(),
        "nothing reached the server past the untrusted proxy"
    );

    let ca = mitm.ca_pem();
    let trusted = run(&[("NODE_EXTRA_CA_CERTS", ca.to_str().unwrap())]);
    let result = json_result(&trusted);
    assert_eq!(trusted.status.code(), Some(0), "{}", output_text(&trusted));
    assert_eq!(result["result"], "through the proxy", "{result}");
    let requests = server.requests();
    assert_eq!(requests.len(), 1, "the request went through the proxy");
    assert_eq!(requests[0].path, "/v1/messages");

    for out in [&refused, &trusted] {
        assert!(
            !output_text(out).contains("pr0xy-s3cret"),
            "the proxy password is never shown:\n{}",
            output_text(out)
        );
    }
    for log in walk(&p.home) {
        let content = std::fs::read(&log).unwrap_or_default();
        assert!(
            !String::from_utf8_lossy(&content).contains("pr0xy-s3cret"),
            "{} holds the proxy password",
            log.display()
        );
    }
}

#[test]
fn a_loopback_https_server_is_reached_directly_and_trusted_through_node_extra_ca_certs() {
    // A loopback server is reached without the proxy (which points nowhere here), and its
    // self-signed certificate is trusted because NODE_EXTRA_CA_CERTS names it.
    let p = project();
    let server = MockServer::start(vec![anthropic::text_turn("direct")]);
    let front = TlsFront::start("localhost", server.addr());
    let bundle = p.user_home.join("mock-ca.pem");
    std::fs::write(&bundle, &front.cert_pem).unwrap();
    let mut cmd = p.command(&server, &["-p", "hello", "--output-format", "json"]);
    cmd.env(
        "ANTHROPIC_BASE_URL",
        format!("https://localhost:{}", front.port()),
    )
    .env("HTTPS_PROXY", support::refused_url())
    .env("NODE_EXTRA_CA_CERTS", &bundle);
    let out = cmd.output().unwrap();
    let result = json_result(&out);
    assert_eq!(out.status.code(), Some(0), "{}", output_text(&out));
    assert_eq!(result["result"], "direct");
}

/// A page host no resolver here knows (`.test` is reserved): only the proxy, through its
/// addon, reaches it.
const DOCS_HOST: &str = "docs.robota.test";

#[test]
fn webfetch_reaches_a_page_whose_host_only_the_proxy_resolves() {
    let Some(program) = mitmdump_or_skip() else {
        return;
    };
    let p = project();
    let page =
        PageServer::start("<html><body><h1>Handbook</h1><p>Badges open door 7.</p></body></html>");
    let front = TlsFront::start(DOCS_HOST, page.addr);
    let mitm = Mitm::start(&program, &p.user_home, DOCS_HOST, front.port());
    let fetch = || {
        anthropic::tool_turn(
            None,
            &[(
                "f1",
                "WebFetch",
                json!({"url": format!("https://{DOCS_HOST}/handbook"), "prompt": "Which door?"}),
            )],
        )
    };
    let server = MockServer::start(vec![
        fetch(),
        anthropic::text_turn("refused"),
        fetch(),
        anthropic::text_turn("read it"),
    ]);
    let run = |extra: &[(&str, &str)]| {
        let mut cmd = p.command(
            &server,
            &["-p", "read the handbook", "--allowedTools", "WebFetch"],
        );
        cmd.env("HTTPS_PROXY", mitm.proxy_url());
        for (name, value) in extra {
            cmd.env(name, value);
        }
        cmd.output().unwrap()
    };

    let refused = run(&[]);
    assert_eq!(refused.status.code(), Some(0), "{}", output_text(&refused));
    let result = tool_result_sent(&server, 1);
    assert!(
        result.contains(UNKNOWN_AUTHORITY),
        "the tool result names the certificate problem, not a DNS failure: {result}"
    );
    assert_eq!(
        page.hits(),
        0,
        "nothing reached the page past the untrusted proxy"
    );

    let ca = mitm.ca_pem();
    let trusted = run(&[("NODE_EXTRA_CA_CERTS", ca.to_str().unwrap())]);
    assert_eq!(trusted.status.code(), Some(0), "{}", output_text(&trusted));
    let result = tool_result_sent(&server, 3);
    assert!(
        result.contains("Badges open door 7."),
        "the page reached the model through the proxy: {result}"
    );
    assert_eq!(page.hits(), 1);
}

#[test]
fn behind_the_proxy_webfetch_still_refuses_addresses_of_this_machine() {
    // The proxy would forward to loopback; names this machine resolves (and literal
    // addresses) are still checked before the request goes to it.
    let Some(program) = mitmdump_or_skip() else {
        return;
    };
    let p = project();
    let page = PageServer::start("<html><body>internal admin page</body></html>");
    let mitm = Mitm::start(&program, &p.user_home, DOCS_HOST, page.addr.port());
    let port = page.addr.port();
    let fetch = |id: &str, url: String| (id.to_string(), url);
    let calls = [
        fetch("f1", format!("http://localhost:{port}/admin")),
        fetch("f2", format!("http://127.0.0.1:{port}/admin")),
        fetch("f3", format!("http://[::ffff:127.0.0.1]:{port}/admin")),
    ];
    let calls: Vec<(&str, &str, serde_json::Value)> = calls
        .iter()
        .map(|(id, url)| {
            (
                id.as_str(),
                "WebFetch",
                json!({"url": url, "prompt": "read"}),
            )
        })
        .collect();
    let server = MockServer::start(vec![
        anthropic::tool_turn(None, &calls),
        anthropic::text_turn("done"),
    ]);
    let mut cmd = p.command(&server, &["-p", "read it", "--allowedTools", "WebFetch"]);
    cmd.env("HTTPS_PROXY", mitm.proxy_url())
        .env("HTTP_PROXY", mitm.proxy_url())
        .env("NO_PROXY", "");
    let out = cmd.output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", output_text(&out));
    let results = tool_result_sent(&server, 1);
    assert_eq!(
        results.matches("Refused to fetch").count(),
        3,
        "each loopback fetch is refused: {results}"
    );
    assert_eq!(page.hits(), 0, "nothing reached the loopback page");
}

#[test]
fn an_mcp_server_behind_the_proxy_names_the_certificate_problem_until_the_ca_is_given() {
    let Some(program) = mitmdump_or_skip() else {
        return;
    };
    const MCP_HOST: &str = "mcp.robota.test";
    let p = project();
    let model = MockServer::start(vec![]);
    let mcp = MockServer::start(vec![]);
    let front = TlsFront::start(MCP_HOST, mcp.addr());
    let mitm = Mitm::start(&program, &p.user_home, MCP_HOST, front.port());
    let config = json!({"mcpServers": {"company": {
        "type": "http", "url": format!("https://{MCP_HOST}/mcp")
    }}})
    .to_string();
    let run = |extra: &[(&str, &str)]| {
        let mut cmd = p.command(
            &model,
            &[
                "-p",
                "/mcp",
                "--output-format",
                "json",
                "--mcp-config",
                &config,
            ],
        );
        cmd.env("HTTPS_PROXY", mitm.proxy_url());
        for (name, value) in extra {
            cmd.env(name, value);
        }
        let out = cmd.output().unwrap();
        json_result(&out)["result"]
            .as_str()
            .unwrap_or_default()
            .to_string()
    };

    let refused = run(&[]);
    assert!(
        refused.contains("company (http): failed") && refused.contains(UNKNOWN_AUTHORITY),
        "/mcp names the certificate problem: {refused}"
    );
    assert!(
        mcp.requests().is_empty(),
        "nothing passed the untrusted proxy"
    );

    let ca = mitm.ca_pem();
    let trusted = run(&[("NODE_EXTRA_CA_CERTS", ca.to_str().unwrap())]);
    assert!(!trusted.contains(UNKNOWN_AUTHORITY), "{trusted}");
    let requests = mcp.requests();
    assert_eq!(
        requests.first().map(|r| r.body["method"].clone()),
        Some(json!("initialize")),
        "the handshake reached the server through the proxy: {trusted}"
    );
}

/// The text of the tool results in the `index`th request the model received.
fn tool_result_sent(server: &MockServer, index: usize) -> String {
    let requests = server.requests();
    let request = requests.get(index).expect("the model was asked again");
    let messages = request.body["messages"].as_array().unwrap();
    let last = messages.last().unwrap();
    last["content"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|b| b["type"] == "tool_result")
        .map(|b| b["content"].to_string())
        .collect()
}

/// A loopback HTTP server answering every request with one HTML page, counting the
/// requests (not the connections: a proxy may connect ahead of any request).
struct PageServer {
    addr: std::net::SocketAddr,
    hits: Arc<AtomicUsize>,
}

impl PageServer {
    fn start(html: &'static str) -> PageServer {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let hits = Arc::new(AtomicUsize::new(0));
        let counted = hits.clone();
        std::thread::spawn(move || {
            for mut conn in listener.incoming().flatten() {
                let mut head = Vec::new();
                let mut byte = [0u8; 1];
                while !head.ends_with(b"\r\n\r\n") && conn.read(&mut byte).unwrap_or(0) == 1 {
                    head.push(byte[0]);
                }
                if !head.ends_with(b"\r\n\r\n") {
                    // A connection opened and closed with no request (the proxy's probe).
                    continue;
                }
                counted.fetch_add(1, Ordering::SeqCst);
                let _ = write!(
                    conn,
                    "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: {}\r\n\
                     Connection: close\r\n\r\n{html}",
                    html.len()
                );
            }
        });
        PageServer { addr, hits }
    }

    fn hits(&self) -> usize {
        self.hits.load(Ordering::SeqCst)
    }
}

/// `mitmdump`, or `None` after saying the test is skipped without it.
fn mitmdump_or_skip() -> Option<std::path::PathBuf> {
    let program = mitmdump();
    if program.is_none() {
        skip(
            "mitmproxy",
            "mitmdump not found (ROBOTA_TEST_MITMDUMP, ~/.cache/robota-ci/mitmproxy or PATH); \
             `.ci/run` installs it from PyPI",
        );
    }
    program
}

fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.extend(walk(&path));
        } else {
            out.push(path);
        }
    }
    out
}
