//! The sandbox's domain filter: an HTTP proxy robota runs on a Unix socket for sandboxed
//! commands when `sandbox.network.allowedDomains` names domains (without `"*"`). Their
//! network namespace has only loopback; a relay inside it (`relay.rs`) carries each
//! connection to `127.0.0.1:3128` over that socket, and the commands get
//! `HTTP_PROXY`/`HTTPS_PROXY` pointing there. Here each connection's first request is read
//! — `CONNECT host:port` (HTTPS and any TLS) or an absolute `http://host/…` request — and
//! the host judged against the allowed domains: allowed, robota connects out and relays
//! both ways; refused, the client gets `403` and a line saying why. Programs that ignore
//! the proxy variables reach nothing at all.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpStream, UnixListener, UnixStream};

/// The port the relay listens on inside the sandbox's network namespace.
pub const PROXY_PORT: u16 = 3128;
/// The longest request head read before giving up on a client.
const MAX_HEAD: usize = 16 * 1024;
/// How long connecting out may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(15);

/// Whether `host` may be reached: a pattern names it exactly, or `*.example.com` names
/// any host below `example.com`. Case and a final dot do not count.
pub fn domain_allowed(patterns: &[String], host: &str) -> bool {
    let host = host.trim_end_matches('.').to_ascii_lowercase();
    let host = host.trim_start_matches('[').trim_end_matches(']');
    patterns.iter().any(|pattern| {
        let pattern = pattern.trim_end_matches('.').to_ascii_lowercase();
        match pattern.strip_prefix("*.") {
            Some(parent) => host.len() > parent.len() + 1 && host.ends_with(&format!(".{parent}")),
            None => pattern == "*" || host == pattern,
        }
    })
}

/// Says which hosts may be reached (asked per connection, so a settings change applies to
/// the next one).
pub type DomainCheck = Arc<dyn Fn(&str) -> bool + Send + Sync>;

/// The running proxy: its socket, and the task serving it (stopped when dropped).
#[derive(Debug)]
pub struct DomainProxy {
    socket: PathBuf,
    task: tokio::task::JoinHandle<()>,
}

impl DomainProxy {
    /// Listens on `socket` (a path sandboxed commands cannot replace) on the current
    /// tokio runtime.
    pub fn start(socket: &Path, allowed: DomainCheck) -> std::io::Result<DomainProxy> {
        let runtime = tokio::runtime::Handle::try_current().map_err(std::io::Error::other)?;
        let _ = std::fs::remove_file(socket);
        let _entered = runtime.enter();
        let listener = UnixListener::bind(socket)?;
        let task = runtime.spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                let allowed = Arc::clone(&allowed);
                tokio::spawn(async move {
                    if let Err(e) = serve(client, allowed).await {
                        tracing::debug!("sandbox proxy: {e}");
                    }
                });
            }
        });
        Ok(DomainProxy {
            socket: socket.to_path_buf(),
            task,
        })
    }

    /// The Unix socket the proxy listens on.
    pub fn socket(&self) -> &Path {
        &self.socket
    }
}

impl Drop for DomainProxy {
    fn drop(&mut self) {
        self.task.abort();
        let _ = std::fs::remove_file(&self.socket);
    }
}

/// What a client asked for.
#[derive(Debug, PartialEq, Eq)]
struct Request {
    host: String,
    port: u16,
    /// `CONNECT`: a tunnel; otherwise the head to send on, in origin form.
    tunnel: bool,
    head: Vec<u8>,
}

/// Why a client's request head cannot be served; the text goes back in the `400` reply.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
enum RequestError {
    #[error("the request is not text")]
    NotText,
    #[error("not an HTTP request line: {0:?}")]
    RequestLine(String),
    #[error("only CONNECT and http:// requests pass the proxy, not {0:?}")]
    Target(String),
    #[error("bad address {0:?}")]
    Address(String),
    #[error("bad port in {0:?}")]
    Port(String),
    #[error("no host in {0:?}")]
    NoHost(String),
}

/// Reads a request head: `CONNECT host:port` or an absolute `http://` URL.
fn parse_head(head: &[u8]) -> Result<Request, RequestError> {
    let text = std::str::from_utf8(head).map_err(|_| RequestError::NotText)?;
    let (first, rest) = text.split_once("\r\n").unwrap_or((text, ""));
    let mut parts = first.split(' ');
    let (Some(method), Some(target), Some(version)) = (parts.next(), parts.next(), parts.next())
    else {
        return Err(RequestError::RequestLine(first.to_string()));
    };
    if method.eq_ignore_ascii_case("CONNECT") {
        let (host, port) = split_host_port(target, 443)?;
        return Ok(Request {
            host,
            port,
            tunnel: true,
            head: Vec::new(),
        });
    }
    let Some(after) = target.strip_prefix("http://") else {
        return Err(RequestError::Target(target.to_string()));
    };
    let (authority, path) = match after.find('/') {
        Some(i) => (&after[..i], &after[i..]),
        None => (after, "/"),
    };
    let (host, port) = split_host_port(authority, 80)?;
    let head = format!("{method} {path} {version}\r\n{rest}").into_bytes();
    Ok(Request {
        host,
        port,
        tunnel: false,
        head,
    })
}

fn split_host_port(authority: &str, default: u16) -> Result<(String, u16), RequestError> {
    let authority = authority.rsplit_once('@').map_or(authority, |(_, a)| a);
    let (host, port) = if let Some(v6) = authority.strip_prefix('[') {
        let (host, rest) = v6
            .split_once(']')
            .ok_or_else(|| RequestError::Address(authority.to_string()))?;
        (host, rest.strip_prefix(':'))
    } else {
        match authority.rsplit_once(':') {
            Some((h, p)) => (h, Some(p)),
            None => (authority, None),
        }
    };
    let port = match port {
        Some(p) => p
            .parse()
            .map_err(|_| RequestError::Port(authority.to_string()))?,
        None => default,
    };
    if host.is_empty() {
        return Err(RequestError::NoHost(authority.to_string()));
    }
    Ok((host.to_string(), port))
}

async fn serve(mut client: UnixStream, allowed: DomainCheck) -> std::io::Result<()> {
    let mut buffer = Vec::with_capacity(1024);
    let end = loop {
        let mut chunk = [0u8; 2048];
        let n = client.read(&mut chunk).await?;
        if n == 0 {
            return Ok(());
        }
        buffer.extend_from_slice(&chunk[..n]);
        if let Some(i) = buffer.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
        if buffer.len() > MAX_HEAD {
            return reply(&mut client, "431 Request Header Fields Too Large", "").await;
        }
    };
    let request = match parse_head(&buffer[..end]) {
        Ok(r) => r,
        Err(e) => return reply(&mut client, "400 Bad Request", &e.to_string()).await,
    };
    if !allowed(&request.host) {
        tracing::info!("sandbox proxy: refused {}", request.host);
        let why = format!(
            "robota's sandbox: {} is not in sandbox.network.allowedDomains",
            request.host
        );
        return reply(&mut client, "403 Forbidden", &why).await;
    }
    let target = (request.host.as_str(), request.port);
    let mut upstream = match tokio::time::timeout(CONNECT_TIMEOUT, TcpStream::connect(target)).await
    {
        Ok(Ok(stream)) => stream,
        Ok(Err(e)) => return reply(&mut client, "502 Bad Gateway", &e.to_string()).await,
        Err(_) => return reply(&mut client, "504 Gateway Timeout", "").await,
    };
    if request.tunnel {
        client
            .write_all(b"HTTP/1.1 200 Connection Established\r\n\r\n")
            .await?;
    } else {
        upstream.write_all(&request.head).await?;
    }
    // What came after the head (a tunnel's first bytes, a request body) goes on too.
    upstream.write_all(&buffer[end..]).await?;
    tokio::io::copy_bidirectional(&mut client, &mut upstream).await?;
    Ok(())
}

async fn reply(client: &mut UnixStream, status: &str, body: &str) -> std::io::Result<()> {
    let body = if body.is_empty() {
        String::new()
    } else {
        format!("{body}\n")
    };
    let message = format!(
        "HTTP/1.1 {status}\r\nContent-Type: text/plain\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    client.write_all(message.as_bytes()).await?;
    client.shutdown().await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn domains_match_exactly_or_below_a_wildcard() {
        let patterns = vec!["github.com".to_string(), "*.npmjs.org".to_string()];
        assert!(domain_allowed(&patterns, "github.com"));
        assert!(domain_allowed(&patterns, "GitHub.com."));
        assert!(!domain_allowed(&patterns, "api.github.com"));
        assert!(!domain_allowed(&patterns, "evilgithub.com"));
        assert!(domain_allowed(&patterns, "registry.npmjs.org"));
        assert!(!domain_allowed(&patterns, "npmjs.org"));
        assert!(!domain_allowed(&patterns, "evil-npmjs.org"));
        assert!(!domain_allowed(&patterns, "npmjs.org.evil.com"));
    }

    #[test]
    fn request_heads_are_read_as_proxies_read_them() {
        let connect = parse_head(b"CONNECT example.com:8443 HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
        assert_eq!(
            (connect.host.as_str(), connect.port, connect.tunnel),
            ("example.com", 8443, true)
        );
        let get =
            parse_head(b"GET http://user@example.com/a?b HTTP/1.1\r\nHost: example.com\r\n\r\n")
                .unwrap();
        assert_eq!((get.host.as_str(), get.port), ("example.com", 80));
        assert_eq!(get.head, b"GET /a?b HTTP/1.1\r\nHost: example.com\r\n\r\n");
        let v6 = parse_head(b"CONNECT [::1]:443 HTTP/1.1\r\n\r\n").unwrap();
        assert_eq!((v6.host.as_str(), v6.port), ("::1", 443));
        assert!(parse_head(b"GET /relative HTTP/1.1\r\n\r\n").is_err());
        assert!(parse_head(b"CONNECT example.com:http HTTP/1.1\r\n\r\n").is_err());
    }
}
