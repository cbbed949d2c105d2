//! The macOS confinement as text: a Seatbelt profile (SBPL, the Scheme-like language
//! `/usr/bin/sandbox-exec -p PROFILE` reads) generated from the same [`SandboxSpec`] the
//! Linux sandbox enforces. Platform-free, so that it is tested on any machine; `macos.rs`
//! runs it.
//!
//! The profile denies by default and allows only what the spec gives, each allow with its
//! exceptions inside it (`require-not`), so nothing depends on the order of rules:
//! - **read** everywhere but the hidden paths;
//! - **write** in the writable roots, except the read-only and hidden paths under them and
//!   the directories between a root and such a path ("pinned": the directory itself may
//!   not be renamed, removed or changed, what is inside it may — so a protected file cannot
//!   be moved out from under its rule, as the Linux sandbox's pinning binds ensure); plus
//!   the usual devices (`/dev/null`, terminals, …);
//! - **network**: none; or only `localhost:PORT`, the relay to the domain proxy, when
//!   `allowedDomains` names domains; or all of it when the network is allowed;
//! - **processes**: exec and fork (children inherit the profile), signals and process
//!   information only within the sandbox, and the few system services every program
//!   needs (user look-up, sysctl reads, pseudo-terminals).
//!
//! Paths are resolved as the kernel sees them (symbolic links followed: `/tmp` is
//! `/private/tmp` on macOS), and only paths that exist count, as on Linux: a rule cannot
//! stop `git init` from creating the `.git/hooks` of a new repository. Path strings are
//! SBPL string literals with `"` and `\` escaped; a path with another control character
//! than newline, tab or carriage return, or one that is not UTF-8, is refused
//! ([`ProfileError`]) rather than half-expressed.

use std::fmt::Write;
use std::path::{Path, PathBuf};

use crate::SandboxSpec;

/// Devices any command may write (and `ioctl`): the null devices, randomness, terminals.
pub const WRITABLE_DEVICES: [&str; 7] = [
    "/dev/null",
    "/dev/zero",
    "/dev/random",
    "/dev/urandom",
    "/dev/tty",
    "/dev/ptmx",
    "/dev/dtracehelper",
];
/// The pseudo-terminals' secondary ends, as an SBPL regular expression.
pub const TERMINALS_REGEX: &str = "^/dev/ttys[0-9]+$";

/// What the profile lets the command reach on the network.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NetworkAccess {
    /// Nothing.
    Off,
    /// Only `localhost:PORT`: the relay to the domain proxy.
    ProxyOnly(u16),
    /// Everything.
    Open,
}

/// One path in a rule: a directory and everything below it, or one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PathFilter {
    /// `(subpath "…")`: the path and everything below it.
    Subpath(PathBuf),
    /// `(literal "…")`: exactly this path.
    Literal(PathBuf),
}

impl PathFilter {
    /// The path the filter names.
    pub fn path(&self) -> &Path {
        match self {
            PathFilter::Subpath(p) | PathFilter::Literal(p) => p,
        }
    }

    /// Whether the filter matches `path`.
    pub fn matches(&self, path: &Path) -> bool {
        match self {
            PathFilter::Subpath(p) => path.starts_with(p),
            PathFilter::Literal(p) => path == p,
        }
    }
}

/// A spec's paths resolved for Seatbelt: what the profile is made from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProfileRules {
    /// Writable roots.
    pub writable: Vec<PathFilter>,
    /// Read-only paths inside the writable roots.
    pub read_only: Vec<PathFilter>,
    /// Directories between a writable root and a read-only or hidden path: the directory
    /// itself may not be written (renamed, removed), what is inside it may.
    pub pinned: Vec<PathBuf>,
    /// Hidden paths: neither read nor written.
    pub hidden: Vec<PathFilter>,
    /// The network.
    pub network: NetworkAccess,
}

/// Why a profile cannot be made.
#[derive(Debug, thiserror::Error)]
pub enum ProfileError {
    /// The path is not UTF-8; SBPL strings are text.
    #[error("{0} is not UTF-8, so a Seatbelt profile cannot name it")]
    NotUtf8(PathBuf),
    /// The path has a control character SBPL strings cannot carry as we write them.
    #[error("{0:?} has a control character, so a Seatbelt profile cannot name it")]
    ControlCharacter(PathBuf),
}

/// The existing paths of `paths`, resolved, as filters: a directory as a subpath, a file
/// as a literal.
fn resolved(paths: &[PathBuf]) -> Vec<PathFilter> {
    let mut found: Vec<PathFilter> = paths
        .iter()
        .filter_map(|p| p.canonicalize().ok())
        .map(|p| {
            if p.is_dir() {
                PathFilter::Subpath(p)
            } else {
                PathFilter::Literal(p)
            }
        })
        .collect();
    found.sort_by(|a, b| a.path().cmp(b.path()));
    found.dedup();
    found
}

impl ProfileRules {
    /// The rules for `spec`, with the relay to the domain proxy on `proxy_port` when the
    /// spec's network is off and it names the proxy.
    pub fn for_spec(spec: &SandboxSpec, proxy_port: Option<u16>) -> ProfileRules {
        let writable = resolved(&spec.writable);
        let hidden = resolved(&spec.hidden);
        let in_writable = |p: &Path| writable.iter().any(|w| w.matches(p));
        // Read-only matters only where writing would otherwise be allowed.
        let read_only: Vec<PathFilter> = resolved(&spec.read_only)
            .into_iter()
            .filter(|r| in_writable(r.path()))
            .filter(|r| !hidden.iter().any(|h| h.matches(r.path())))
            .collect();
        let mut pinned: Vec<PathBuf> = Vec::new();
        for path in hidden.iter().chain(&read_only).map(PathFilter::path) {
            let Some(root) = writable
                .iter()
                .map(PathFilter::path)
                .find(|w| path.starts_with(w))
            else {
                continue;
            };
            let mut dir = path.parent();
            while let Some(d) = dir.filter(|d| d.starts_with(root) && *d != root) {
                pinned.push(d.to_path_buf());
                dir = d.parent();
            }
        }
        pinned.sort();
        pinned.dedup();
        let network = match (spec.network, proxy_port) {
            (true, _) => NetworkAccess::Open,
            (false, Some(port)) if spec.proxy_socket.is_some() => NetworkAccess::ProxyOnly(port),
            (false, _) => NetworkAccess::Off,
        };
        ProfileRules {
            writable,
            read_only,
            pinned,
            hidden,
            network,
        }
    }
}

/// `path` as an SBPL string literal: quoted, with `"` and `\` escaped and newline, tab and
/// carriage return written as `\n`, `\t`, `\r`.
pub fn sbpl_string(path: &Path) -> Result<String, ProfileError> {
    let text = path
        .to_str()
        .ok_or_else(|| ProfileError::NotUtf8(path.to_path_buf()))?;
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if c.is_control() => return Err(ProfileError::ControlCharacter(path.to_path_buf())),
            c => out.push(c),
        }
    }
    out.push('"');
    Ok(out)
}

fn filter_text(filter: &PathFilter) -> Result<String, ProfileError> {
    Ok(match filter {
        PathFilter::Subpath(p) => format!("(subpath {})", sbpl_string(p)?),
        PathFilter::Literal(p) => format!("(literal {})", sbpl_string(p)?),
    })
}

/// `(require-not …)` for each exception, one per line.
fn exceptions(filters: &[PathFilter], pinned: &[PathBuf]) -> Result<String, ProfileError> {
    let mut out = String::new();
    for filter in filters {
        let _ = write!(out, "\n    (require-not {})", filter_text(filter)?);
    }
    for dir in pinned {
        let _ = write!(out, "\n    (require-not (literal {}))", sbpl_string(dir)?);
    }
    Ok(out)
}

/// What every sandboxed command may do whatever the spec: run and fork (children inherit
/// the profile), signal and inspect its own processes, read sysctls and preferences, look
/// up users, use pseudo-terminals and POSIX semaphores.
const BASE: &str = r#"(version 1)
(deny default)
(allow process-exec process-fork)
(allow signal (target same-sandbox))
(allow process-info* (target same-sandbox))
(allow sysctl-read)
(allow user-preference-read)
(allow ipc-posix-sem)
(allow pseudo-tty)
(allow mach-lookup
    (global-name "com.apple.system.opendirectoryd.libinfo")
    (global-name "com.apple.PowerManagement.control"))
"#;

/// The system services a program with the network needs: name resolution, TLS trust,
/// network configuration.
const NETWORK_SERVICES: &str = r#"(allow system-socket)
(allow mach-lookup
    (global-name "com.apple.bsd.dirhelper")
    (global-name "com.apple.system.opendirectoryd.membership")
    (global-name "com.apple.SecurityServer")
    (global-name "com.apple.networkd")
    (global-name "com.apple.ocspd")
    (global-name "com.apple.trustd.agent")
    (global-name "com.apple.SystemConfiguration.DNSConfiguration")
    (global-name "com.apple.SystemConfiguration.configd"))
"#;

/// The Seatbelt profile for `rules`.
pub fn profile(rules: &ProfileRules) -> Result<String, ProfileError> {
    let mut out = String::from(BASE);
    // Read: everywhere but the hidden paths.
    if rules.hidden.is_empty() {
        out.push_str("(allow file-read*)\n");
    } else {
        let _ = writeln!(
            out,
            "(allow file-read*\n  (require-all{}))",
            exceptions(&rules.hidden, &[])?
        );
    }
    // Write: the writable roots, but not what is read-only, hidden or pinned in them.
    if !rules.writable.is_empty() {
        let mut roots = String::new();
        for root in &rules.writable {
            let _ = write!(roots, "\n      {}", filter_text(root)?);
        }
        let mut denied = rules.read_only.clone();
        denied.extend(rules.hidden.iter().cloned());
        let _ = writeln!(
            out,
            "(allow file-write*\n  (require-all\n    (require-any{roots}){}))",
            exceptions(&denied, &rules.pinned)?
        );
    }
    out.push_str("(allow file-write-data file-ioctl");
    for device in WRITABLE_DEVICES {
        let _ = write!(out, "\n    (literal {})", sbpl_string(Path::new(device))?);
    }
    let _ = writeln!(out, "\n    (regex #\"{TERMINALS_REGEX}\"))");
    match rules.network {
        NetworkAccess::Off => {}
        NetworkAccess::ProxyOnly(port) => {
            let _ = writeln!(
                out,
                "(allow network-outbound (remote ip \"localhost:{port}\"))"
            );
        }
        NetworkAccess::Open => {
            out.push_str("(allow network-outbound network-inbound network-bind)\n");
            out.push_str(NETWORK_SERVICES);
        }
    }
    Ok(out)
}

#[cfg(test)]
#[path = "seatbelt_tests.rs"]
mod tests;
