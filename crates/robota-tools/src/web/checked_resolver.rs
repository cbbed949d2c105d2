//! Host resolution under the address policy: every address a name resolves to is checked
//! (a name mixing public and private answers is refused), and [`CheckedResolver`] plugs
//! that check into the HTTP client, so the addresses checked are the ones connected to —
//! on every redirect hop, with no window for DNS rebinding.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use reqwest::dns::{Addrs, Name, Resolve, Resolving};

use super::address::{AddressPolicy, HostResolver};
use super::fetch::FetchError;

/// All addresses of `host`, or the refusal naming the first one the policy forbids. Every
/// address must pass: a name that mixes public and private answers is refused.
pub async fn checked_addresses(
    policy: &AddressPolicy,
    resolver: &dyn HostResolver,
    host: &str,
) -> Result<Vec<SocketAddr>, FetchError> {
    let dns = |reason: String| FetchError::Dns {
        host: host.to_string(),
        reason,
    };
    let addresses = resolver
        .resolve(host, 0)
        .await
        .map_err(|e| dns(e.to_string()))?;
    if addresses.is_empty() {
        return Err(dns("no addresses".to_string()));
    }
    if let Some(bad) = addresses.iter().find(|a| !policy.permits(host, a.ip())) {
        return Err(FetchError::NonPublicAddress {
            host: host.to_string(),
            ip: bad.ip(),
        });
    }
    Ok(addresses)
}

/// The client's resolver: resolves, checks every address, and leaves the reason for a
/// refusal where the fetch can read it (reqwest would only say "error sending request").
pub struct CheckedResolver {
    pub policy: AddressPolicy,
    pub resolver: Arc<dyn HostResolver>,
    pub refusal: Arc<Mutex<Option<FetchError>>>,
}

impl Resolve for CheckedResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let host = name.as_str().to_string();
        let policy = self.policy.clone();
        let resolver = self.resolver.clone();
        let refusal = self.refusal.clone();
        Box::pin(async move {
            match checked_addresses(&policy, resolver.as_ref(), &host).await {
                Ok(addresses) => Ok(Box::new(addresses.into_iter()) as Addrs),
                Err(error) => {
                    let message = error.to_string();
                    *refusal.lock().unwrap_or_else(|p| p.into_inner()) = Some(error);
                    Err(message.into())
                }
            }
        })
    }
}
