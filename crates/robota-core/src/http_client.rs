//! The one way robota builds an outbound HTTP client (providers, WebFetch, web search, MCP
//! over HTTP, HTTP hooks, marketplaces), so all of them work inside a company network:
//! the operating system's trust store (or `SSL_CERT_FILE`/`SSL_CERT_DIR` in its place, as
//! OpenSSL reads them) beside the compiled-in Mozilla roots, plus the extra PEM bundle of
//! `NODE_EXTRA_CA_CERTS` (the variable Claude Code users already set); the proxies of
//! `HTTPS_PROXY`/`HTTP_PROXY`/`ALL_PROXY` and `NO_PROXY` (either case), credentials in the
//! proxy URL included. It also owns turning a connection error into words — an unknown
//! certificate authority says which variable to set — and hiding a proxy's password
//! wherever a URL is shown.

use std::sync::OnceLock;

use rustls_pki_types::{CertificateDer, TrustAnchor};

/// What an error about an untrusted server certificate says.
pub const UNKNOWN_AUTHORITY: &str = "the server's certificate is signed by an unknown authority: \
     set NODE_EXTRA_CA_CERTS or SSL_CERT_FILE to your company's CA bundle";

/// The environment variables that name a proxy, in the order they are reported.
pub const PROXY_VARIABLES: [&str; 8] = [
    "HTTPS_PROXY",
    "https_proxy",
    "HTTP_PROXY",
    "http_proxy",
    "ALL_PROXY",
    "all_proxy",
    "NO_PROXY",
    "no_proxy",
];

/// A client builder with robota's trust roots, proxies and user agent; callers add their
/// timeouts and headers. A caller that must reach a loopback server directly adds
/// `.no_proxy()` itself.
pub fn client_builder() -> reqwest::ClientBuilder {
    static LOGGED: std::sync::Once = std::sync::Once::new();
    LOGGED.call_once(|| {
        tracing::info!(
            proxies = ?proxy_settings(),
            extra_ca_certificates = extra_roots().len(),
            "outbound HTTP"
        );
    });
    let mut builder = reqwest::Client::builder()
        .user_agent(concat!("robota/", env!("CARGO_PKG_VERSION")))
        .tls_built_in_webpki_certs(true);
    for cert in added_roots() {
        builder = builder.add_root_certificate(cert);
    }
    builder
}

/// [`client_builder`] for reqwest's blocking client (the OpenTelemetry exporter posts from
/// threads of its own): the same trust roots, proxies and user agent.
pub fn blocking_client_builder() -> reqwest::blocking::ClientBuilder {
    let mut builder = reqwest::blocking::Client::builder()
        .user_agent(concat!("robota/", env!("CARGO_PKG_VERSION")))
        .tls_built_in_webpki_certs(true);
    for cert in added_roots() {
        builder = builder.add_root_certificate(cert);
    }
    builder
}

/// The roots robota adds to the compiled-in Mozilla ones (the system's and
/// `NODE_EXTRA_CA_CERTS`'), as reqwest takes them.
fn added_roots() -> impl Iterator<Item = reqwest::Certificate> {
    system_roots()
        .iter()
        .chain(extra_roots())
        .filter_map(|der| reqwest::Certificate::from_der(der).ok())
}

/// The trust anchors robota adds to the compiled-in Mozilla roots — the operating system's
/// (or `SSL_CERT_FILE`/`SSL_CERT_DIR`'s) and `NODE_EXTRA_CA_CERTS`' — for a TLS client not
/// built on reqwest (the OTLP/gRPC exporter's tonic channel).
pub fn added_trust_anchors() -> Vec<TrustAnchor<'static>> {
    let mut store = rustls::RootCertStore::empty();
    store.add_parsable_certificates(system_roots().iter().chain(extra_roots()).cloned());
    store.roots
}

/// Starts loading the operating system's trust store on a thread of its own, so the first
/// client built finds it ready (or waits only for the rest of it): reading and parsing a
/// few hundred certificates costs tens of milliseconds, which a start-up need not wait
/// for. Called first thing in `main`.
pub fn load_trust_roots_in_background() {
    let _ = std::thread::Builder::new()
        .name("trust-roots".to_string())
        .spawn(|| {
            system_roots();
            extra_roots();
        });
}

/// The operating system's trust roots (or `SSL_CERT_FILE`/`SSL_CERT_DIR`'s), loaded once
/// per process. Errors reading part of the store are logged; what loaded still applies.
fn system_roots() -> &'static [CertificateDer<'static>] {
    static ROOTS: OnceLock<Vec<CertificateDer<'static>>> = OnceLock::new();
    ROOTS.get_or_init(load_system_roots)
}

#[cfg(not(target_os = "macos"))]
fn load_system_roots() -> Vec<CertificateDer<'static>> {
    let loaded = rustls_native_certs::load_native_certs();
    for error in &loaded.errors {
        tracing::warn!("the system's trust store: {error}");
    }
    loaded.certs
}

/// macOS: `SSL_CERT_FILE` and `SSL_CERT_DIR` as OpenSSL reads them, else the PEM bundle
/// the system keeps of its root store, `/etc/ssl/cert.pem` (the Keychain needs the
/// Security framework, which a cross-linked build cannot link). A CA added only to the
/// Keychain is not in it: `NODE_EXTRA_CA_CERTS` names it, as for Node (Claude Code).
#[cfg(target_os = "macos")]
fn load_system_roots() -> Vec<CertificateDer<'static>> {
    let file = std::env::var_os("SSL_CERT_FILE").filter(|v| !v.is_empty());
    let dir = std::env::var_os("SSL_CERT_DIR").filter(|v| !v.is_empty());
    let mut files: Vec<std::path::PathBuf> = Vec::new();
    if file.is_none() && dir.is_none() {
        files.push("/etc/ssl/cert.pem".into());
    }
    files.extend(file.map(Into::into));
    if let Some(dir) = dir {
        let entries = std::fs::read_dir(&dir).into_iter().flatten().flatten();
        files.extend(entries.map(|e| e.path()).filter(|p| p.is_file()));
    }
    let mut roots = Vec::new();
    for path in files {
        match std::fs::read(&path) {
            Ok(pem) => roots.extend(usable_certificates(&pem, &path.to_string_lossy())),
            Err(e) => tracing::warn!(path = %path.display(), "the system's trust store: {e}"),
        }
    }
    roots
}

/// Whether `url` names this machine (`localhost` or a loopback address): such servers are
/// reached directly, never through a proxy.
pub fn is_loopback(url: &reqwest::Url) -> bool {
    let Some(host) = url.host_str() else {
        return false;
    };
    let host = host.trim_start_matches('[').trim_end_matches(']');
    host.eq_ignore_ascii_case("localhost")
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

/// The certificates of `NODE_EXTRA_CA_CERTS`, read and checked once per process. A missing
/// or unreadable bundle, or a certificate rustls cannot use, is logged and left out: the
/// built-in and system roots still apply.
fn extra_roots() -> &'static [CertificateDer<'static>] {
    static ROOTS: OnceLock<Vec<CertificateDer<'static>>> = OnceLock::new();
    ROOTS.get_or_init(|| {
        let Some(path) = std::env::var_os("NODE_EXTRA_CA_CERTS").filter(|p| !p.is_empty()) else {
            return Vec::new();
        };
        let bytes = match std::fs::read(&path) {
            Ok(bytes) => bytes,
            Err(e) => {
                tracing::warn!(path = %path.to_string_lossy(), "NODE_EXTRA_CA_CERTS cannot be read: {e}");
                return Vec::new();
            }
        };
        usable_certificates(&bytes, &path.to_string_lossy())
    })
}

/// The certificates of a PEM bundle that rustls accepts as trust anchors.
fn usable_certificates(pem: &[u8], origin: &str) -> Vec<CertificateDer<'static>> {
    use rustls_pki_types::pem::PemObject;
    let mut usable = Vec::new();
    for der in CertificateDer::pem_slice_iter(pem) {
        let der = match der {
            Ok(der) => der,
            Err(e) => {
                tracing::warn!(origin, "a certificate in the CA bundle cannot be read: {e}");
                continue;
            }
        };
        let mut store = rustls::RootCertStore::empty();
        if let Err(e) = store.add(der.clone()) {
            tracing::warn!(origin, "a certificate in the CA bundle is not usable: {e}");
            continue;
        }
        match reqwest::Certificate::from_der(&der) {
            Ok(_) => usable.push(der),
            Err(e) => tracing::warn!(origin, "a certificate in the CA bundle is refused: {e}"),
        }
    }
    if usable.is_empty() {
        tracing::warn!(origin, "the CA bundle holds no usable certificate");
    }
    usable
}

/// A connection error in words: the chain of causes, or [`UNKNOWN_AUTHORITY`] when the
/// server's certificate chains to no trusted root. Proxy credentials are hidden.
pub fn describe_error(error: &(dyn std::error::Error + 'static)) -> String {
    if is_unknown_authority(error) {
        return UNKNOWN_AUTHORITY.to_string();
    }
    let mut out = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let text = cause.to_string();
        if !out.contains(&text) {
            out.push_str(": ");
            out.push_str(&text);
        }
        source = cause.source();
    }
    redact_credentials(&out)
}

/// Whether the error, or one of its causes, is rustls refusing a certificate whose issuer
/// it does not know.
pub fn is_unknown_authority(error: &(dyn std::error::Error + 'static)) -> bool {
    let mut current = Some(error);
    while let Some(e) = current {
        let tls = e.downcast_ref::<rustls::Error>().or_else(|| {
            e.downcast_ref::<std::io::Error>()
                .and_then(|io| io.get_ref())
                .and_then(|inner| inner.downcast_ref::<rustls::Error>())
        });
        if let Some(rustls::Error::InvalidCertificate(cert)) = tls
            && matches!(
                cert,
                rustls::CertificateError::UnknownIssuer
                    | rustls::CertificateError::BadSignature
                    | rustls::CertificateError::UnknownRevocationStatus
            )
        {
            return true;
        }
        current = e.source();
    }
    false
}

/// `text` with the password of every `scheme://user:password@host` replaced by `***`.
pub fn redact_credentials(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(scheme_end) = rest.find("://") {
        let (head, tail) = rest.split_at(scheme_end + 3);
        out.push_str(head);
        let authority_end = tail
            .find(|c: char| c == '/' || c == '?' || c == '#' || c.is_whitespace())
            .unwrap_or(tail.len());
        let authority = &tail[..authority_end];
        match authority.rfind('@') {
            Some(at) => {
                let userinfo = &authority[..at];
                let user = userinfo.split(':').next().unwrap_or_default();
                if userinfo.contains(':') {
                    out.push_str(user);
                    out.push_str(":***");
                } else {
                    out.push_str("***");
                }
                out.push_str(&authority[at..]);
            }
            None => out.push_str(authority),
        }
        rest = &tail[authority_end..];
    }
    out.push_str(rest);
    out
}

/// The proxy variables set in this process, each `NAME=value` with credentials hidden (for
/// `robota doctor` and the debug log).
pub fn proxy_settings() -> Vec<String> {
    PROXY_VARIABLES
        .iter()
        .filter_map(|name| {
            let value = std::env::var(name).ok().filter(|v| !v.trim().is_empty())?;
            Some(format!("{name}={}", redact_credentials(&value)))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_proxy_password_is_hidden_and_the_rest_kept() {
        assert_eq!(
            redact_credentials("connect to http://alice:s3cret@proxy.corp:3128/ failed"),
            "connect to http://alice:***@proxy.corp:3128/ failed"
        );
        assert_eq!(
            redact_credentials("https://token@host/x and http://plain:80"),
            "https://***@host/x and http://plain:80"
        );
        assert_eq!(redact_credentials("no url here"), "no url here");
    }

    #[test]
    fn an_unknown_issuer_deep_in_the_chain_is_named() {
        let tls = rustls::Error::InvalidCertificate(rustls::CertificateError::UnknownIssuer);
        let io = std::io::Error::other(tls);
        assert!(is_unknown_authority(&io));
        assert_eq!(describe_error(&io), UNKNOWN_AUTHORITY);
        let other = std::io::Error::other("connection refused");
        assert!(!is_unknown_authority(&other));
    }

    #[test]
    fn a_bundle_without_certificates_yields_none() {
        let none = usable_certificates(b"not a pem", "test");
        assert!(none.is_empty());
    }
}
