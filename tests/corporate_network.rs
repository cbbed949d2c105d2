//! End to end: robota inside a company network. The real binary reaches the mock served
//! over HTTPS through mitmproxy, a real TLS-inspecting proxy named by `HTTPS_PROXY`
//! (with credentials in its URL, which nothing may show): without the proxy's CA it fails
//! with the message that says what to set, and with `NODE_EXTRA_CA_CERTS` pointing at the
//! CA it works.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failed unwrap is a failed test

mod support;

use support::mitm::{Mitm, mitmdump};
use support::project::{json_result, output_text, project};
use support::skip::skip;
use support::tls::TlsFront;
use support::{MockServer, anthropic};

/// A host name that is not loopback, so robota sends it through the proxy; mitmproxy's
/// addon maps it to the mock's TLS port.
const HOST: &str = "mock.robota.test";

const UNKNOWN_AUTHORITY: &str = "the server's certificate is signed by an unknown authority: \
     set NODE_EXTRA_CA_CERTS or SSL_CERT_FILE to your company's CA bundle";

#[test]
fn through_a_tls_inspecting_proxy_robota_needs_the_company_ca_and_then_works() {
    let Some(program) = mitmdump() else {
        skip(
            "mitmproxy",
            "mitmdump not found (ROBOTA_TEST_MITMDUMP, ~/.cache/robota-ci/mitmproxy or PATH); \
             `.ci/run` installs it from PyPI",
        );
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
