//! One WebFetch download: URL checks (http/https only, at most 2,000 characters, plain
//! http upgraded to https except for hosts on the private allow-list), every hop's host
//! resolved and its addresses checked against the [`AddressPolicy`] at connect time (the
//! client's own resolver, so a check and the connection it guards see the same addresses),
//! redirects followed by hand within one host (Claude Code's rule; a redirect to another
//! host is handed back for the model to fetch, since permission rules are per host), a
//! total time cap over all hops and the body, a byte cap, and binary content refused
//! before its body is read. Behind an environment proxy (`HTTPS_PROXY`, `HTTP_PROXY`,
//! `ALL_PROXY`) the request goes through the proxy, which resolves the host itself: each
//! hop's host is then checked just before its request instead of at connect time, and a
//! host this machine cannot resolve (a company network that resolves outside names only
//! at its proxy) is left to the proxy.

use std::net::IpAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use reqwest::Url;
use reqwest::header::{ACCEPT, CONTENT_LENGTH, CONTENT_TYPE, LOCATION};
use tokio_util::sync::CancellationToken;

use super::address::{AddressPolicy, HostResolver};
use super::checked_resolver::{CheckedResolver, checked_addresses};
use super::content::{BodyKind, classify, parse_content_type};

/// Longest URL accepted (Claude Code's limit).
pub const MAX_URL_CHARS: usize = 2000;

/// Caps on one fetch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FetchLimits {
    /// Total time for all hops and the body.
    pub timeout: Duration,
    /// Bytes of body kept; the rest is not downloaded.
    pub max_bytes: usize,
    /// Redirects followed within one host.
    pub max_redirects: usize,
}

/// A downloaded body, not yet decoded.
#[derive(Debug, Clone, PartialEq)]
pub struct FetchedPage {
    /// The URL after same-host redirects.
    pub final_url: Url,
    /// Lower-case media type without parameters (empty when the server sent none).
    pub media_type: String,
    pub charset: Option<String>,
    pub kind: BodyKind,
    pub body: Vec<u8>,
    /// Whether the body was cut at `max_bytes`.
    pub truncated: bool,
    /// The server's `Content-Length`, when it sent one.
    pub declared_len: Option<u64>,
}

/// What a fetch produced.
#[derive(Debug, Clone, PartialEq)]
pub enum FetchOutcome {
    Page(FetchedPage),
    /// The server redirected to another host (or scheme or port); not followed.
    OtherHostRedirect {
        from: Url,
        to: Url,
        status: u16,
    },
}

/// Why a fetch failed; the text is what the model reads.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum FetchError {
    #[error("Invalid URL \"{url}\": {reason}. Give a full http:// or https:// URL.")]
    InvalidUrl { url: String, reason: String },
    #[error(
        "Refused to fetch {host}: it resolves to {ip}, a private, loopback, link-local or otherwise non-public address. \
WebFetch reaches only public addresses unless the user lists the host in the settings key webFetch.allowPrivateHosts."
    )]
    NonPublicAddress { host: String, ip: IpAddr },
    #[error("Could not resolve host \"{host}\": {reason}. Check the URL for typos.")]
    Dns { host: String, reason: String },
    #[error("Fetching {url} timed out after {}.", seconds(*.after))]
    TimedOut { url: String, after: Duration },
    #[error("WebFetch interrupted by user")]
    Cancelled,
    #[error("Too many redirects (more than {max}) starting at {url}.")]
    TooManyRedirects { url: String, max: usize },
    #[error("{url} answered HTTP {status} with a redirect to an unusable address: {reason}")]
    BadRedirect {
        url: String,
        status: u16,
        reason: String,
    },
    #[error("{url} answered HTTP {status}{}.", reason_suffix(.reason))]
    Status {
        url: String,
        status: u16,
        reason: String,
    },
    #[error(
        "{url} returned binary content ({media_type}); WebFetch reads only HTML and text. Use Bash (e.g. curl -o) to download files."
    )]
    Binary { url: String, media_type: String },
    #[error("Could not fetch {url}: {reason}")]
    Network { url: String, reason: String },
}

fn seconds(d: Duration) -> String {
    if d.as_millis() < 1000 || d.subsec_millis() != 0 {
        format!("{:.1} s", d.as_secs_f64())
    } else {
        format!("{} s", d.as_secs())
    }
}

fn reason_suffix(reason: &str) -> String {
    if reason.is_empty() {
        String::new()
    } else {
        format!(" {reason}")
    }
}

/// Fetches pages under one address policy, resolver and set of limits.
#[derive(Clone)]
pub struct Fetcher {
    pub policy: AddressPolicy,
    pub resolver: Arc<dyn HostResolver>,
    pub limits: FetchLimits,
    /// Turn `http://` into `https://` for hosts not on the private allow-list.
    pub upgrade_to_https: bool,
}

impl Fetcher {
    /// Fetches `raw_url` within the time cap, or until `cancel` fires.
    pub async fn fetch(
        &self,
        raw_url: &str,
        cancel: &CancellationToken,
    ) -> Result<FetchOutcome, FetchError> {
        let url = self.prepare_url(raw_url)?;
        let shown = url.to_string();
        tokio::select! {
            _ = cancel.cancelled() => Err(FetchError::Cancelled),
            result = tokio::time::timeout(self.limits.timeout, self.follow(url)) => {
                result.unwrap_or(Err(FetchError::TimedOut { url: shown, after: self.limits.timeout }))
            }
        }
    }

    /// Parses and checks the URL, upgrading plain http where due.
    pub fn prepare_url(&self, raw_url: &str) -> Result<Url, FetchError> {
        let raw = raw_url.trim();
        let invalid = |reason: &str| FetchError::InvalidUrl {
            url: raw.chars().take(200).collect(),
            reason: reason.to_string(),
        };
        if raw.chars().count() > MAX_URL_CHARS {
            return Err(invalid(&format!("longer than {MAX_URL_CHARS} characters")));
        }
        let mut url = Url::parse(raw).map_err(|e| invalid(&e.to_string()))?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err(invalid(&format!(
                "the scheme \"{}\" is not supported",
                url.scheme()
            )));
        }
        let Some(host) = url.host_str().filter(|h| !h.is_empty()) else {
            return Err(invalid("no host"));
        };
        let upgrade = self.upgrade_to_https
            && url.scheme() == "http"
            && url.port().is_none()
            && !self.policy.host_is_listed(host);
        if upgrade && url.set_scheme("https").is_err() {
            return Err(invalid("cannot switch it to https"));
        }
        Ok(url)
    }

    /// Sends the GET requests, following same-host redirects.
    async fn follow(&self, start: Url) -> Result<FetchOutcome, FetchError> {
        let refusal = Arc::new(Mutex::new(None));
        let client = self.client(refusal.clone(), &start)?;
        let mut url = start.clone();
        let mut redirects = 0;
        let proxied = proxy_configured(&start);
        loop {
            if proxied {
                self.check_host_behind_proxy(&url).await?;
            } else {
                self.check_literal_host(&url)?;
            }
            let response = client
                .get(url.clone())
                .header(ACCEPT, "text/markdown, text/html;q=0.9, */*;q=0.8")
                .send()
                .await
                .map_err(|e| send_error(&url, &e, &refusal))?;
            let status = response.status();
            if status.is_redirection()
                && let Some(location) = response.headers().get(LOCATION)
            {
                let bad = |reason: String| FetchError::BadRedirect {
                    url: url.to_string(),
                    status: status.as_u16(),
                    reason,
                };
                let location = location
                    .to_str()
                    .map_err(|_| bad("the Location header is not text".into()))?;
                let target = url
                    .join(location)
                    .map_err(|e| bad(format!("\"{location}\": {e}")))?;
                if !matches!(target.scheme(), "http" | "https") {
                    return Err(bad(format!("the scheme \"{}\"", target.scheme())));
                }
                if !same_site(&url, &target) {
                    // Not followed, but a private target is refused rather than offered.
                    if proxied {
                        self.check_host_behind_proxy(&target).await?;
                    } else {
                        self.check_host(&target).await?;
                    }
                    return Ok(FetchOutcome::OtherHostRedirect {
                        from: url,
                        to: target,
                        status: status.as_u16(),
                    });
                }
                redirects += 1;
                if redirects > self.limits.max_redirects {
                    return Err(FetchError::TooManyRedirects {
                        url: start.to_string(),
                        max: self.limits.max_redirects,
                    });
                }
                url = target;
                continue;
            }
            if !status.is_success() {
                return Err(FetchError::Status {
                    url: url.to_string(),
                    status: status.as_u16(),
                    reason: status.canonical_reason().unwrap_or("").to_string(),
                });
            }
            return self.read_body(url, response).await.map(FetchOutcome::Page);
        }
    }

    fn client(
        &self,
        refusal: Arc<Mutex<Option<FetchError>>>,
        url: &Url,
    ) -> Result<reqwest::Client, FetchError> {
        let resolver = CheckedResolver {
            policy: self.policy.clone(),
            resolver: self.resolver.clone(),
            refusal,
        };
        let builder = robota_core::http_client::client_builder()
            .redirect(reqwest::redirect::Policy::none())
            .connect_timeout(self.limits.timeout.min(Duration::from_secs(10)))
            .user_agent(concat!(
                "robota/",
                env!("CARGO_PKG_VERSION"),
                " (WebFetch; +https://github.com/robota)"
            ));
        // Through a proxy the resolver would check the proxy's address, not the page's.
        let builder = if proxy_configured(url) {
            builder
        } else {
            builder.no_proxy().dns_resolver(Arc::new(resolver))
        };
        builder.build().map_err(|e| FetchError::Network {
            url: url.to_string(),
            reason: format!("cannot build the HTTP client: {e}"),
        })
    }

    /// IP-literal hosts never reach the resolver, so they are checked here.
    fn check_literal_host(&self, url: &Url) -> Result<(), FetchError> {
        let host = url.host_str().unwrap_or_default();
        let Some(ip) = literal_ip(host) else {
            return Ok(());
        };
        if self.policy.permits(host, ip) {
            Ok(())
        } else {
            Err(FetchError::NonPublicAddress {
                host: host.to_string(),
                ip,
            })
        }
    }

    /// Resolves and checks a URL's host without connecting.
    async fn check_host(&self, url: &Url) -> Result<(), FetchError> {
        self.check_literal_host(url)?;
        let host = url.host_str().unwrap_or_default();
        if literal_ip(host).is_none() {
            checked_addresses(&self.policy, self.resolver.as_ref(), host).await?;
        }
        Ok(())
    }

    /// [`Fetcher::check_host`] for a request the proxy will make: a name this machine
    /// cannot resolve is the proxy's to resolve (its addresses are the proxy's network's,
    /// not this machine's); a name it can resolve must still resolve to permitted addresses.
    async fn check_host_behind_proxy(&self, url: &Url) -> Result<(), FetchError> {
        match self.check_host(url).await {
            Err(FetchError::Dns { .. }) => Ok(()),
            checked => checked,
        }
    }

    async fn read_body(
        &self,
        url: Url,
        mut response: reqwest::Response,
    ) -> Result<FetchedPage, FetchError> {
        let header = |name| {
            response
                .headers()
                .get(name)
                .and_then(|v: &reqwest::header::HeaderValue| v.to_str().ok())
                .map(str::to_string)
        };
        let (media_type, charset) = parse_content_type(&header(CONTENT_TYPE).unwrap_or_default());
        let declared_len = header(CONTENT_LENGTH).and_then(|v| v.trim().parse::<u64>().ok());
        let binary = |media_type: &str| FetchError::Binary {
            url: url.to_string(),
            media_type: if media_type.is_empty() {
                "no content type, binary bytes".to_string()
            } else {
                media_type.to_string()
            },
        };
        if classify(&media_type, b"") == BodyKind::Binary {
            return Err(binary(&media_type));
        }
        let read_error = |e: reqwest::Error| FetchError::Network {
            url: url.to_string(),
            reason: format!(
                "the connection failed while reading the body: {}",
                chain(&e)
            ),
        };
        let mut body = Vec::new();
        let mut truncated = false;
        while let Some(chunk) = response.chunk().await.map_err(read_error)? {
            let room = self.limits.max_bytes - body.len();
            if chunk.len() > room {
                body.extend_from_slice(&chunk[..room]);
                truncated = true;
                break;
            }
            body.extend_from_slice(&chunk);
            if body.len() == self.limits.max_bytes {
                truncated = response.chunk().await.ok().flatten().is_some();
                break;
            }
        }
        let kind = classify(&media_type, &body);
        if kind == BodyKind::Binary {
            return Err(binary(&media_type));
        }
        Ok(FetchedPage {
            final_url: url,
            media_type,
            charset,
            kind,
            body,
            truncated,
            declared_len,
        })
    }
}

/// The address a URL host spells out (`127.0.0.1`, `[::1]`), if it is one.
fn literal_ip(host: &str) -> Option<IpAddr> {
    host.trim_start_matches('[')
        .trim_end_matches(']')
        .parse()
        .ok()
}

/// Claude Code's rule for following a redirect: same scheme and port, no credentials, and
/// the same host up to a leading `www.`.
pub fn same_site(from: &Url, to: &Url) -> bool {
    let strip = |u: &Url| {
        let host = u.host_str().unwrap_or_default().to_ascii_lowercase();
        host.strip_prefix("www.")
            .map(str::to_string)
            .unwrap_or(host)
    };
    from.scheme() == to.scheme()
        && from.port_or_known_default() == to.port_or_known_default()
        && to.username().is_empty()
        && to.password().is_none()
        && strip(from) == strip(to)
}

/// The refusal the resolver recorded, else the request error in words.
fn send_error(
    url: &Url,
    error: &reqwest::Error,
    refusal: &Mutex<Option<FetchError>>,
) -> FetchError {
    if let Some(refused) = refusal.lock().unwrap_or_else(|p| p.into_inner()).take() {
        return refused;
    }
    let reason = if error.is_connect() {
        format!("could not connect ({})", chain(error))
    } else {
        chain(error)
    };
    FetchError::Network {
        url: url.to_string(),
        reason,
    }
}

/// Whether an environment proxy variable for `url`'s scheme is set (`NO_PROXY` is left to
/// the client: a host it exempts is reached directly, and still checked before).
fn proxy_configured(url: &Url) -> bool {
    let names: &[&str] = if url.scheme() == "https" {
        &["HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy"]
    } else {
        &["HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy"]
    };
    names
        .iter()
        .any(|name| std::env::var(name).is_ok_and(|v| !v.trim().is_empty()))
}

/// An error and its sources, joined (`a: b: c`); an untrusted certificate says which
/// variable to set, and proxy credentials are hidden.
pub(crate) fn chain(error: &(dyn std::error::Error + 'static)) -> String {
    robota_core::http_client::describe_error(error)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::web::address::system_resolver;

    fn fetcher(allowed: &[&str]) -> Fetcher {
        Fetcher {
            policy: AddressPolicy::new(allowed),
            resolver: system_resolver(),
            limits: FetchLimits {
                timeout: Duration::from_secs(5),
                max_bytes: 1024,
                max_redirects: 10,
            },
            upgrade_to_https: true,
        }
    }

    #[test]
    fn plain_http_is_upgraded_except_for_listed_hosts_and_explicit_ports() {
        let f = fetcher(&["localhost"]);
        let url = |s: &str| f.prepare_url(s).map(|u| u.to_string());
        assert_eq!(
            url("http://example.com/a?b=1").unwrap(),
            "https://example.com/a?b=1"
        );
        assert_eq!(url("http://localhost/x").unwrap(), "http://localhost/x");
        assert_eq!(
            url("http://example.com:8080/").unwrap(),
            "http://example.com:8080/"
        );
        assert_eq!(
            url(" https://example.com ").unwrap(),
            "https://example.com/"
        );
    }

    #[test]
    fn bad_urls_are_refused_with_the_reason() {
        let f = fetcher(&[]);
        let err = |s: &str| f.prepare_url(s).unwrap_err().to_string();
        assert!(err("not a url").contains("relative URL without a base"));
        assert!(err("ftp://example.com/f").contains("scheme \"ftp\""));
        assert!(err("file:///etc/passwd").contains("scheme \"file\""));
        let long = format!("https://example.com/{}", "a".repeat(MAX_URL_CHARS));
        assert!(err(&long).contains("longer than 2000"));
    }

    #[test]
    fn redirects_stay_within_one_site() {
        let u = |s: &str| Url::parse(s).unwrap();
        assert!(same_site(&u("https://a.com/x"), &u("https://a.com/y")));
        assert!(same_site(&u("https://a.com/"), &u("https://www.a.com/")));
        assert!(same_site(&u("https://www.a.com/"), &u("https://A.com/")));
        assert!(!same_site(&u("https://a.com/"), &u("https://b.com/")));
        assert!(!same_site(&u("https://a.com/"), &u("http://a.com/")));
        assert!(!same_site(&u("https://a.com/"), &u("https://a.com:8443/")));
        assert!(!same_site(&u("https://a.com/"), &u("https://u:p@a.com/")));
        assert!(!same_site(&u("https://a.com/"), &u("https://evil.a.com/")));
    }

    #[test]
    fn durations_read_naturally() {
        assert_eq!(seconds(Duration::from_secs(30)), "30 s");
        assert_eq!(seconds(Duration::from_millis(300)), "0.3 s");
    }
}
