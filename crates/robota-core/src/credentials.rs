//! The credentials robota itself uses, known process-wide, and the two rules that follow
//! from knowing them:
//! - **Child environments** ([`ChildEnv`]): every process robota starts for someone else —
//!   Bash commands, hooks, MCP stdio servers, language servers, the status-line command —
//!   gets robota's environment less the variables that carry a credential (a variable
//!   robota reads a key from, or one whose value holds a credential robota uses), and the
//!   session's extra variables less the same, unless the user's own settings pass a name
//!   on ([`set_pass_through`]). A user's own tokens (`GITHUB_TOKEN` for `gh`) are not
//!   robota's and stay.
//!   A `${NAME}` of such a variable in a configuration expands to nothing
//!   ([`shared_variable`]).
//! - **Redaction** ([`redact_known`]): every file robota writes replaces each known
//!   credential value with `[REDACTED]`, whatever its shape.
//! - **robota's own environment**: not readable by its commands through `/proc`
//!   ([`protect_process_memory`], [`hide_from_process_environ`]).
//!
//! Core knows no provider: the provider set-up names the variables ([`withhold_variables`])
//! and hands over the values ([`remember_value`]) — the key in use, a gateway token, a base
//! URL's password, what `apiKeyHelper` printed. The table is process-wide because the
//! environment it guards is: one process, one environment, one set of credentials.

use std::borrow::Cow;
use std::ffi::{OsStr, OsString};
use std::sync::RwLock;

/// Values shorter than this are not credentials worth hiding (and replacing them would
/// garble ordinary text).
pub const MIN_CREDENTIAL_LEN: usize = 8;

/// What replaces a known credential in a file robota writes.
const REDACTED: &str = "[REDACTED]";

#[derive(Default)]
struct Known {
    /// Variables that carry a credential robota reads (`ANTHROPIC_API_KEY` …).
    names: Vec<String>,
    /// The credential values in use.
    values: Vec<String>,
    /// Names the user's settings pass on to child processes all the same.
    pass_through: Vec<String>,
}

static KNOWN: RwLock<Known> = RwLock::new(Known {
    names: Vec::new(),
    values: Vec::new(),
    pass_through: Vec::new(),
});

fn read() -> std::sync::RwLockReadGuard<'static, Known> {
    KNOWN
        .read()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn write() -> std::sync::RwLockWriteGuard<'static, Known> {
    KNOWN
        .write()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Names variables that carry credentials robota reads: they are kept out of child
/// environments (added to those named before).
pub fn withhold_variables<I, S>(names: I)
where
    I: IntoIterator<Item = S>,
    S: Into<String>,
{
    let mut known = write();
    for name in names {
        let name = name.into();
        if !known.names.contains(&name) {
            known.names.push(name);
        }
    }
}

/// Remembers a credential value robota uses: it is redacted in what robota writes, and a
/// variable holding it is kept out of child environments. Blank and short values are
/// ignored (see [`MIN_CREDENTIAL_LEN`]).
pub fn remember_value(value: &str) {
    let value = value.trim();
    if value.len() < MIN_CREDENTIAL_LEN {
        return;
    }
    let mut known = write();
    if !known.values.iter().any(|v| v == value) {
        known.values.push(value.to_string());
        // Longest first, so a value that contains another is replaced whole.
        known.values.sort_by_key(|v| std::cmp::Reverse(v.len()));
    }
}

/// The password of a URL's userinfo (`scheme://user:password@host`), remembered as a
/// credential; a URL without one changes nothing.
pub fn remember_url_password(url: &str) {
    if let Some(password) = url_password(url) {
        remember_value(password);
    }
}

/// The password in `url`'s userinfo, if it has one.
fn url_password(url: &str) -> Option<&str> {
    let (_, rest) = url.split_once("://")?;
    let authority = rest.split(['/', '?', '#']).next()?;
    let (userinfo, _) = authority.rsplit_once('@')?;
    let (_, password) = userinfo.split_once(':')?;
    (!password.is_empty()).then_some(password)
}

/// Sets the names the user's settings pass on to child processes even though they carry a
/// credential (replacing the earlier list).
pub fn set_pass_through(names: Vec<String>) {
    write().pass_through = names;
}

/// `text` with every known credential value replaced by `[REDACTED]`; borrowed when none
/// occurs in it.
pub fn redact_known(text: &str) -> Cow<'_, str> {
    let known = read();
    if !known.values.iter().any(|v| text.contains(v.as_str())) {
        return Cow::Borrowed(text);
    }
    let mut out = text.to_string();
    for value in &known.values {
        if out.contains(value.as_str()) {
            out = out.replace(value.as_str(), REDACTED);
        }
    }
    Cow::Owned(out)
}

/// Whether the variable `name=value` carries a credential robota uses and no setting passes
/// it on: such a variable is neither in a child's environment nor expanded into a
/// configuration (`${NAME}` in an MCP server's headers, an HTTP hook's).
pub fn is_withheld(name: &str, value: &str) -> bool {
    read().withholds(OsStr::new(name), OsStr::new(value))
}

/// The value of the variable `name` in robota's environment, unless it is withheld
/// ([`is_withheld`]): what a `${NAME}` in a configuration expands to.
pub fn shared_variable(name: &str) -> Option<String> {
    std::env::var(name)
        .ok()
        .filter(|value| !is_withheld(name, value))
}

impl Known {
    /// Whether a variable `name=value` carries a credential and is not passed on.
    fn withholds(&self, name: &OsStr, value: &OsStr) -> bool {
        let name = name.to_string_lossy();
        if self.pass_through.iter().any(|p| *p == name) {
            return false;
        }
        if self.names.iter().any(|n| *n == name) {
            return true;
        }
        let value = value.to_string_lossy();
        self.values.iter().any(|v| value.contains(v.as_str()))
    }
}

/// The environment changes of one child process: robota's inherited variables that carry
/// a credential are removed, then the extra variables are set (those carrying a credential
/// left out). Build it with [`ChildEnv::new`] just before the spawn and [`ChildEnv::apply`]
/// it to the command.
#[derive(Debug, Clone, Default)]
pub struct ChildEnv {
    remove: Vec<OsString>,
    set: Vec<(OsString, OsString)>,
}

impl ChildEnv {
    /// The changes for a child started from this process with `extra` variables on top.
    pub fn new<I, K, V>(extra: I) -> ChildEnv
    where
        I: IntoIterator<Item = (K, V)>,
        K: AsRef<OsStr>,
        V: AsRef<OsStr>,
    {
        let known = read();
        let remove = std::env::vars_os()
            .filter(|(name, value)| known.withholds(name, value))
            .map(|(name, _)| name)
            .collect();
        let set = extra
            .into_iter()
            .filter(|(name, value)| !known.withholds(name.as_ref(), value.as_ref()))
            .map(|(name, value)| (name.as_ref().to_owned(), value.as_ref().to_owned()))
            .collect();
        ChildEnv { remove, set }
    }

    /// The changes for a child that gets robota's environment and nothing more.
    pub fn inherited() -> ChildEnv {
        ChildEnv::new(std::iter::empty::<(&OsStr, &OsStr)>())
    }

    /// Applies the changes to `command`.
    pub fn apply<C: EnvTarget + ?Sized>(&self, command: &mut C) {
        for name in &self.remove {
            command.remove_var(name);
        }
        for (name, value) in &self.set {
            command.set_var(name, value);
        }
    }
}

/// A command whose environment can be changed: std's and tokio's.
pub trait EnvTarget {
    /// Removes `name` from the inherited environment.
    fn remove_var(&mut self, name: &OsStr);
    /// Sets `name` to `value`.
    fn set_var(&mut self, name: &OsStr, value: &OsStr);
}

impl EnvTarget for std::process::Command {
    fn remove_var(&mut self, name: &OsStr) {
        self.env_remove(name);
    }
    fn set_var(&mut self, name: &OsStr, value: &OsStr) {
        self.env(name, value);
    }
}

impl EnvTarget for tokio::process::Command {
    fn remove_var(&mut self, name: &OsStr) {
        self.env_remove(name);
    }
    fn set_var(&mut self, name: &OsStr, value: &OsStr) {
        self.env(name, value);
    }
}

/// Keeps other processes of the same user from reading this process's memory and initial
/// environment (`/proc/PID/environ`, `/proc/PID/mem`, ptrace): a command robota runs could
/// otherwise read the keys robota holds through its parent's `/proc` entry. Children are
/// not affected (exec resets it). Linux only; elsewhere a no-op.
pub fn protect_process_memory() {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: prctl(PR_SET_DUMPABLE, 0) only changes this process's dumpable flag; it
        // takes no pointers.
        let rc = unsafe { libc::prctl(libc::PR_SET_DUMPABLE, 0, 0, 0, 0) };
        if rc != 0 {
            tracing::warn!(
                "cannot hide robota's environment from its commands: {}",
                std::io::Error::last_os_error()
            );
        }
    }
}

/// Moves the values of the variables `names` out of the environment block the process
/// started with — what `/proc/PID/environ` shows, to root even when the process is not
/// dumpable — into memory of its own: each is set again (the C library copies it) and its
/// original bytes are zeroed. The values read the same through `std::env` afterwards.
/// Linux only; elsewhere a no-op.
///
/// # Safety
/// Call only while the process has a single thread and before anything has changed the
/// environment (first thing in `main`): it changes the environment and writes to the
/// strings the original `environ` entries point to.
pub unsafe fn hide_from_process_environ(names: &[&str]) {
    #[cfg(not(target_os = "linux"))]
    let _ = names;
    #[cfg(target_os = "linux")]
    for name in names {
        let Some(value) = std::env::var_os(name) else {
            continue;
        };
        // SAFETY: single-threaded and nothing has set a variable yet (the caller's
        // contract), so `environ` is the block the process started with.
        let original = unsafe { original_entry(name) };
        // SAFETY: single-threaded (the caller's contract).
        unsafe { std::env::set_var(name, &value) };
        if let Some(entry) = original {
            // SAFETY: `entry` is a NUL-terminated `NAME=value` string of the original
            // block, which no `environ` entry points to any more; the bytes after `NAME=`
            // up to the NUL are its own.
            unsafe {
                let len = libc::strlen(entry);
                let value_start = entry.add(name.len() + 1);
                std::ptr::write_bytes(value_start, 0, len - name.len() - 1);
            }
        }
    }
}

#[cfg(target_os = "linux")]
unsafe extern "C" {
    /// The process's environment (POSIX: declared by the program).
    static mut environ: *mut *mut std::ffi::c_char;
}

/// The `environ` entry `NAME=…` of `name`, if any.
///
/// # Safety
/// Single-threaded: nothing may change the environment meanwhile.
#[cfg(target_os = "linux")]
unsafe fn original_entry(name: &str) -> Option<*mut std::ffi::c_char> {
    let prefix = format!("{name}=");
    // SAFETY: `environ` is a NULL-terminated array of NUL-terminated strings, read while
    // nothing changes it (the caller's contract).
    unsafe {
        let mut entry = environ;
        while !entry.is_null() && !(*entry).is_null() {
            let text = std::ffi::CStr::from_ptr(*entry);
            if text.to_bytes().starts_with(prefix.as_bytes()) {
                return Some(*entry);
            }
            entry = entry.add(1);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_url_password_is_found_only_in_the_userinfo() {
        assert_eq!(
            url_password("http://user:secretpass@127.0.0.1:80/v1"),
            Some("secretpass")
        );
        assert_eq!(url_password("https://token@host/x"), None);
        assert_eq!(url_password("https://host/a:b@c"), None);
        assert_eq!(url_password("no url"), None);
    }

    #[test]
    fn known_values_are_redacted_and_variables_carrying_them_withheld() {
        let known = Known {
            names: vec!["PROVIDER_KEY_VAR".into()],
            values: vec!["unit-canary-value-1234".into()],
            pass_through: vec!["PASSED_ON".into()],
        };
        let withholds = |n: &str, v: &str| known.withholds(OsStr::new(n), OsStr::new(v));
        assert!(withholds("PROVIDER_KEY_VAR", "anything"));
        assert!(withholds("ALIAS", "x unit-canary-value-1234 y"));
        assert!(!withholds("PASSED_ON", "unit-canary-value-1234"));
        assert!(!withholds("GITHUB_TOKEN", "ghp-user"));
        assert!(!withholds("MY_SETTING", "1"));

        remember_value("short");
        remember_value("unit-redaction-canary-42");
        assert_eq!(
            redact_known("say unit-redaction-canary-42 twice: unit-redaction-canary-42"),
            "say [REDACTED] twice: [REDACTED]"
        );
        assert!(matches!(redact_known("short and plain"), Cow::Borrowed(_)));
    }
}
