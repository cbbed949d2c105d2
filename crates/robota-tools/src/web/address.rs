//! Which network addresses WebFetch may reach: the classification of non-public IPv4 and
//! IPv6 addresses (private, loopback, link-local, shared, documentation, multicast,
//! reserved, and IPv4 embedded in IPv6 by mapping, compatibility, NAT64 or 6to4), the
//! user's allow-list of hosts that may resolve to such addresses
//! (`webFetch.allowPrivateHosts`), and host-name resolution behind a [`HostResolver`]
//! trait so tests can stand in for DNS.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::Arc;

use async_trait::async_trait;

/// Turns a host name into addresses. The system resolver in production; tests map names
/// to loopback addresses or fail on purpose.
#[async_trait]
pub trait HostResolver: Send + Sync {
    /// All addresses of `host` (a name, never an IP literal). `port` is carried through.
    async fn resolve(&self, host: &str, port: u16) -> std::io::Result<Vec<SocketAddr>>;
}

/// The operating system's resolver (`getaddrinfo`, off the runtime's worker threads).
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemResolver;

#[async_trait]
impl HostResolver for SystemResolver {
    async fn resolve(&self, host: &str, port: u16) -> std::io::Result<Vec<SocketAddr>> {
        Ok(tokio::net::lookup_host((host, port)).await?.collect())
    }
}

/// The shared default resolver.
pub fn system_resolver() -> Arc<dyn HostResolver> {
    Arc::new(SystemResolver)
}

/// Hosts the user allowed to resolve to non-public addresses.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AddressPolicy {
    /// Lower-case host names and IP literals; `*` allows every host.
    allowed_hosts: Vec<String>,
}

impl AddressPolicy {
    /// A policy from the configured entries (host names or IP literals, `*` for any).
    pub fn new<S: AsRef<str>>(allowed_hosts: &[S]) -> Self {
        AddressPolicy {
            allowed_hosts: allowed_hosts
                .iter()
                .map(|h| normalize_host(h.as_ref()))
                .filter(|h| !h.is_empty())
                .collect(),
        }
    }

    /// Whether the user listed this host (by the name or literal in the URL).
    pub fn host_is_listed(&self, host: &str) -> bool {
        let host = normalize_host(host);
        self.allowed_hosts.iter().any(|h| h == "*" || *h == host)
    }

    /// Whether `host` may be reached at `ip`: public addresses always; others only when
    /// the host name or the address itself is on the allow-list.
    pub fn permits(&self, host: &str, ip: IpAddr) -> bool {
        if is_public(ip) || self.host_is_listed(host) {
            return true;
        }
        self.allowed_hosts
            .iter()
            .filter_map(|h| h.parse::<IpAddr>().ok())
            .any(|listed| canonical(listed) == canonical(ip))
    }
}

/// A URL host as written in allow-lists: lower case, no brackets, no trailing dot.
pub fn normalize_host(host: &str) -> String {
    host.trim()
        .trim_start_matches('[')
        .trim_end_matches(']')
        .trim_end_matches('.')
        .to_ascii_lowercase()
}

/// IPv4-mapped IPv6 addresses as the IPv4 address they carry.
fn canonical(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => v6
            .to_ipv4_mapped()
            .map(IpAddr::V4)
            .unwrap_or(IpAddr::V6(v6)),
        v4 => v4,
    }
}

/// Whether an address is on the public internet (not private, loopback, link-local,
/// shared, documentation, benchmarking, multicast, reserved or unspecified).
pub fn is_public(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => is_public_v4(v4),
        IpAddr::V6(v6) => is_public_v6(v6),
    }
}

fn is_public_v4(ip: Ipv4Addr) -> bool {
    let [a, b, c, _] = ip.octets();
    let non_public = a == 0                              // "this network" 0.0.0.0/8
        || a == 10                                       // private
        || a == 127                                      // loopback
        || (a == 100 && (64..128).contains(&b))          // shared (CGNAT) 100.64.0.0/10
        || (a == 169 && b == 254)                        // link-local
        || (a == 172 && (16..32).contains(&b))           // private
        || (a == 192 && b == 0 && c == 0)                // IETF protocol assignments
        || (a == 192 && b == 0 && c == 2)                // documentation TEST-NET-1
        || (a == 192 && b == 88 && c == 99)              // 6to4 relay anycast
        || (a == 192 && b == 168)                        // private
        || (a == 198 && (18..20).contains(&b))           // benchmarking 198.18.0.0/15
        || (a == 198 && b == 51 && c == 100)             // documentation TEST-NET-2
        || (a == 203 && b == 0 && c == 113)              // documentation TEST-NET-3
        || a >= 224; // multicast 224/4, reserved 240/4, broadcast
    !non_public
}

fn is_public_v6(ip: Ipv6Addr) -> bool {
    if let Some(v4) = embedded_v4(ip) {
        return is_public_v4(v4);
    }
    let segments = ip.segments();
    let first = segments[0];
    let non_public = ip.is_unspecified()
        || ip.is_loopback()
        || (first & 0xfe00) == 0xfc00                    // unique local fc00::/7
        || (first & 0xffc0) == 0xfe80                    // link-local fe80::/10
        || (first & 0xffc0) == 0xfec0                    // site-local fec0::/10 (deprecated)
        || (first & 0xff00) == 0xff00                    // multicast
        || (first == 0x2001 && segments[1] == 0x0db8)    // documentation 2001:db8::/32
        || (first == 0x2001 && segments[1] == 0)         // Teredo 2001::/32
        || (first == 0x2001 && (segments[1] & 0xfff0) == 0x0010) // ORCHID 2001:10::/28
        || (first == 0x0100 && segments[1..4] == [0, 0, 0]) // discard 100::/64
        || first == 0; // the rest of ::/16 (reserved; the v4 forms are handled above)
    !non_public
}

/// The IPv4 address an IPv6 address carries: mapped `::ffff:a.b.c.d`, compatible
/// `::a.b.c.d`, NAT64 `64:ff9b::a.b.c.d`, or 6to4 `2002:aabb:ccdd::`.
fn embedded_v4(ip: Ipv6Addr) -> Option<Ipv4Addr> {
    if let Some(v4) = ip.to_ipv4_mapped() {
        return Some(v4);
    }
    let s = ip.segments();
    let low = || Ipv4Addr::new((s[6] >> 8) as u8, s[6] as u8, (s[7] >> 8) as u8, s[7] as u8);
    if s[..6] == [0, 0, 0, 0, 0, 0] && !ip.is_loopback() && !ip.is_unspecified() {
        return Some(low());
    }
    if s[0] == 0x0064 && s[1] == 0xff9b && s[2..6] == [0, 0, 0, 0] {
        return Some(low());
    }
    if s[0] == 0x2002 {
        return Some(Ipv4Addr::new(
            (s[1] >> 8) as u8,
            s[1] as u8,
            (s[2] >> 8) as u8,
            s[2] as u8,
        ));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn public(s: &str) -> bool {
        is_public(s.parse().unwrap())
    }

    #[test]
    fn non_public_ipv4_ranges_are_refused() {
        for ip in [
            "0.0.0.0",
            "10.1.2.3",
            "127.0.0.1",
            "127.255.0.9",
            "100.64.0.1",
            "169.254.169.254",
            "172.16.0.1",
            "172.31.255.255",
            "192.0.0.8",
            "192.0.2.1",
            "192.168.1.1",
            "198.18.0.1",
            "198.51.100.7",
            "203.0.113.9",
            "224.0.0.1",
            "240.0.0.1",
            "255.255.255.255",
        ] {
            assert!(!public(ip), "{ip} counted as public");
        }
        for ip in [
            "1.1.1.1",
            "8.8.8.8",
            "172.32.0.1",
            "100.128.0.1",
            "93.184.216.34",
        ] {
            assert!(public(ip), "{ip} counted as non-public");
        }
    }

    #[test]
    fn non_public_ipv6_ranges_and_embedded_ipv4_are_refused() {
        for ip in [
            "::",
            "::1",
            "::ffff:127.0.0.1",
            "::ffff:10.0.0.1",
            "::127.0.0.1",
            "64:ff9b::a9fe:a9fe",
            "2002:7f00:1::",
            "fc00::1",
            "fd12:3456::1",
            "fe80::1",
            "fec0::1",
            "ff02::1",
            "2001:db8::1",
            "2001::1",
            "100::1",
        ] {
            assert!(!public(ip), "{ip} counted as public");
        }
        for ip in [
            "2606:4700:4700::1111",
            "::ffff:8.8.8.8",
            "2a00:1450:4001::200e",
        ] {
            assert!(public(ip), "{ip} counted as non-public");
        }
    }

    #[test]
    fn allow_list_matches_names_literals_and_mapped_forms() {
        let policy = AddressPolicy::new(&["LocalHost.", "127.0.0.1", "[::1]"]);
        let loopback: IpAddr = "127.0.0.1".parse().unwrap();
        assert!(policy.permits("localhost", "10.0.0.1".parse().unwrap()));
        assert!(policy.permits("dev.test", loopback));
        assert!(policy.permits("dev.test", "::ffff:127.0.0.1".parse().unwrap()));
        assert!(policy.permits("x", "::1".parse().unwrap()));
        assert!(!policy.permits("dev.test", "10.0.0.1".parse().unwrap()));
        assert!(policy.permits("example.com", "8.8.8.8".parse().unwrap()));
        assert!(!AddressPolicy::default().permits("localhost", loopback));
        assert!(AddressPolicy::new(&["*"]).permits("anything", loopback));
        assert!(policy.host_is_listed("[::1]"));
    }
}
