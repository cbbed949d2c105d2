//! The wire tap: a provider-neutral hook through which an adapter reports what it put on
//! the wire (the request envelope it was given and the exact body bytes it sent) and what
//! came back (status, each raw stream event or the body, how the attempt ended). It is
//! `None` unless diagnostics are on, so an untapped call serialises nothing extra.

use std::fmt;
use std::sync::Arc;

use super::provider::{ProviderError, ProviderRequest};

/// One HTTP attempt as it went out.
pub struct WireRequest<'a> {
    /// The adapter's name (`anthropic`, `openai`, …).
    pub provider: &'a str,
    /// The provider-neutral request the adapter encoded.
    pub envelope: &'a ProviderRequest,
    /// The URL it went to.
    pub url: &'a str,
    /// Header names and values as sent (the observer redacts credentials).
    pub headers: Vec<(String, String)>,
    /// The exact body bytes.
    pub body: &'a [u8],
    /// 1 for the first attempt, 2 for the first retry, …
    pub attempt: u32,
}

/// Receives what an adapter sends and receives. Every method must be cheap and must not
/// fail the call: an observer that cannot record drops the record.
pub trait WireObserver: Send + Sync {
    /// A request is about to be sent; returns the number the response calls refer to.
    fn request(&self, request: &WireRequest<'_>) -> u64;
    /// The response head arrived with this status.
    fn response_status(&self, exchange: u64, status: u16);
    /// One raw server-sent event of the response stream.
    fn response_event(&self, exchange: u64, event: Option<&str>, data: &str);
    /// A response body that was not a stream (an error body).
    fn response_body(&self, exchange: u64, body: &[u8]);
    /// The attempt ended: `None` when the answer completed, else why it failed.
    fn response_end(&self, exchange: u64, error: Option<&ProviderError>);
}

/// A shared observer, carried by a [`ProviderRequest`] when diagnostics are on.
#[derive(Clone)]
pub struct WireTap(pub Arc<dyn WireObserver>);

impl fmt::Debug for WireTap {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("WireTap")
    }
}
