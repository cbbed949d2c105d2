//! The Bash sandbox as the permission policy sees it: the `sandbox` settings (Claude Code's
//! keys), in which modes it is on, whether a given Bash call runs inside it, what a
//! sandboxed call no longer needs to ask, what asking to leave it (`dangerouslyDisableSandbox`)
//! costs, and the concrete files the Read and Edit deny rules name (what the sandbox hides
//! or makes read-only). The sandbox itself — the kernel side — is `tools::sandbox`.

use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::Value;

use super::rules::{Compiled, PathFamily};
use super::{CallFacts, PermissionMode, PermissionPolicy, Verdict};

/// The Bash input field that asks to run a command outside the sandbox.
pub const DISABLE_SANDBOX_FIELD: &str = "dangerouslyDisableSandbox";

/// How many entries the walk for deny-rule files looks at, per walk root.
pub const DENIED_PATH_WALK_LIMIT: usize = 20_000;

/// The `sandbox` object of a settings file as written (Claude Code's keys), read by the
/// settings model; [`SandboxSettings::from_section`] turns it into the policy's terms.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct SandboxSection {
    /// `enabled`.
    pub enabled: Option<bool>,
    /// `autoAllowBashIfSandboxed`.
    pub auto_allow_bash_if_sandboxed: Option<bool>,
    /// `allowUnsandboxedCommands`.
    pub allow_unsandboxed_commands: Option<bool>,
    /// `excludedCommands`.
    pub excluded_commands: Vec<String>,
    /// `filesystem`.
    pub filesystem: SandboxFilesystemSection,
    /// `network`.
    pub network: SandboxNetworkSection,
    /// `fileGuard` (robota's): `false` runs Bash calls outside the sandbox (bypass mode,
    /// excluded commands) without the kernel's file guard, so set-uid programs (`sudo`)
    /// work there and the deny rules rest on the command analyzer alone.
    pub file_guard: Option<bool>,
}

/// `sandbox.filesystem`: paths as written (`~/`, `//` for absolute, else relative).
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct SandboxFilesystemSection {
    /// `allowWrite`.
    pub allow_write: Vec<String>,
    /// `denyWrite`.
    pub deny_write: Vec<String>,
    /// `denyRead`.
    pub deny_read: Vec<String>,
    /// `allowRead` (Claude Code's; reading is allowed everywhere but `denyRead` here).
    pub allow_read: Vec<String>,
}

/// `sandbox.network`. The keys robota does not support are kept to be reported.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct SandboxNetworkSection {
    /// `allowedDomains`.
    pub allowed_domains: Vec<String>,
    /// `deniedDomains` (everything not allowed is denied here already).
    pub denied_domains: Vec<String>,
    /// `allowUnixSockets` (not supported).
    pub allow_unix_sockets: Option<Value>,
    /// `allowLocalBinding`.
    pub allow_local_binding: Option<bool>,
    /// `httpProxyPort` (not supported).
    pub http_proxy_port: Option<u16>,
    /// `socksProxyPort` (not supported).
    pub socks_proxy_port: Option<u16>,
}

/// The `sandbox` settings in the policy's terms.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SandboxSettings {
    /// `enabled`: `None` = on in default, acceptEdits and plan modes; `Some(true)` = on
    /// in every mode; `Some(false)` = off.
    pub enabled: Option<bool>,
    /// `autoAllowBashIfSandboxed`: a sandboxed Bash call that would only ask for the
    /// mode's sake runs without asking. Unset, it follows an explicit `enabled: true` (as
    /// in Claude Code, where turning the sandbox on is the user's choice); the sandbox robota
    /// turns on by default is a boundary under the usual questions, not instead of them.
    pub auto_allow: Option<bool>,
    /// `allowUnsandboxedCommands` (default true): whether `dangerouslyDisableSandbox` may
    /// be asked for at all.
    pub allow_unsandboxed: bool,
    /// `excludedCommands`: commands (first word, or a prefix of the command line) that
    /// always run outside the sandbox, asking as any command outside it does.
    pub excluded_commands: Vec<String>,
    /// `filesystem.allowWrite`: writable besides the working and temp directories.
    pub allow_write: Vec<PathBuf>,
    /// `filesystem.denyWrite`: read-only even inside writable places.
    pub deny_write: Vec<PathBuf>,
    /// `filesystem.denyRead`: hidden.
    pub deny_read: Vec<PathBuf>,
    /// `network.allowedDomains`: `"*"` turns the network on; other names are reached
    /// through robota's domain proxy, and nothing else is.
    pub allowed_domains: Vec<String>,
}

impl Default for SandboxSettings {
    fn default() -> Self {
        SandboxSettings {
            enabled: None,
            auto_allow: None,
            allow_unsandboxed: true,
            excluded_commands: Vec::new(),
            allow_write: Vec::new(),
            deny_write: Vec::new(),
            deny_read: Vec::new(),
            allowed_domains: Vec::new(),
        }
    }
}

impl SandboxSettings {
    /// The policy's view of the `sandbox` settings section (`~/` expanded with `home`,
    /// relative paths taken from `cwd`), with a note for each value robota cannot honour.
    pub fn from_section(
        section: &SandboxSection,
        cwd: &Path,
        home: Option<&Path>,
    ) -> (Self, Vec<String>) {
        let path = |text: &String| -> PathBuf {
            match (text.strip_prefix("~/"), home) {
                (Some(rest), Some(home)) => home.join(rest),
                _ => cwd.join(
                    text.strip_prefix("//")
                        .map(|r| format!("/{r}"))
                        .unwrap_or_else(|| text.clone()),
                ),
            }
        };
        let paths = |list: &[String]| list.iter().map(path).collect();
        let fs = &section.filesystem;
        let network = &section.network;
        let settings = SandboxSettings {
            enabled: section.enabled,
            auto_allow: section.auto_allow_bash_if_sandboxed,
            allow_unsandboxed: section.allow_unsandboxed_commands.unwrap_or(true),
            excluded_commands: section.excluded_commands.clone(),
            allow_write: paths(&fs.allow_write),
            deny_write: paths(&fs.deny_write),
            deny_read: paths(&fs.deny_read),
            allowed_domains: network.allowed_domains.clone(),
        };
        let unsupported = [
            ("allowUnixSockets", network.allow_unix_sockets.is_some()),
            ("httpProxyPort", network.http_proxy_port.is_some()),
            ("socksProxyPort", network.socks_proxy_port.is_some()),
        ];
        let notes = unsupported
            .into_iter()
            .filter(|(_, set)| *set)
            .map(|(key, _)| {
                format!("sandbox.network.{key} is not supported by robota's sandbox and is ignored")
            })
            .collect();
        (settings, notes)
    }

    /// Whether the sandboxed command may reach the network (`allowedDomains` has `"*"`).
    pub fn network_allowed(&self) -> bool {
        self.allowed_domains.iter().any(|d| d == "*")
    }

    /// The domains sandboxed commands may reach through the domain proxy: `allowedDomains`
    /// when it names some and not `"*"`.
    pub fn proxied_domains(&self) -> Option<&[String]> {
        (!self.allowed_domains.is_empty() && !self.network_allowed())
            .then_some(self.allowed_domains.as_slice())
    }

    /// Whether sandboxed calls skip the mode's question (see `auto_allow`).
    pub fn auto_allows(&self) -> bool {
        self.auto_allow.unwrap_or(self.enabled == Some(true))
    }

    /// Whether the sandbox is on in `mode` (support aside).
    pub fn on_in(&self, mode: PermissionMode) -> bool {
        match self.enabled {
            Some(on) => on,
            None => mode != PermissionMode::BypassPermissions,
        }
    }

    /// Whether `command` is one of `excludedCommands` (its first word, or the line starting
    /// with the entry followed by a space or the end).
    pub fn excludes(&self, command: &str) -> bool {
        let command = command.trim_start();
        let first = command.split_whitespace().next().unwrap_or("");
        self.excluded_commands.iter().any(|entry| {
            let entry = entry.trim().trim_end_matches(":*").trim_end_matches(" *");
            !entry.is_empty()
                && (first == entry
                    || command == entry
                    || command
                        .strip_prefix(entry)
                        .is_some_and(|r| r.starts_with(' ')))
        })
    }
}

/// The sandbox's state in a policy: its settings and whether this machine can run it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SandboxPolicy {
    /// The `sandbox` settings in force.
    pub settings: SandboxSettings,
    /// Whether the kernel supports the sandbox (checked once by the tools layer).
    pub available: bool,
    /// Files read-only inside the sandbox wherever they are (the settings files robota
    /// and Claude Code read), besides the protected paths of each working directory.
    pub protected: Vec<PathBuf>,
    /// Whether this machine runs the filesystem-only confinement ([`Confinement::Files`]):
    /// checked whatever the `sandbox` settings say, since it guards the deny rules and
    /// the protected files, not the sandbox's own limits.
    pub files_guard: bool,
}

/// What the kernel's confinement of one Bash call grants or withholds beyond the policy's
/// paths.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct KernelTerms {
    /// No file may be removed: a deny rule names a removing program (`Bash(rm:*)`) and the
    /// line is code the analyzer cannot read, or copies a denied program.
    pub no_removal: bool,
    /// `.git/config` and the user's git config stay writable: the line only runs git
    /// commands that write git's config and run no hook (`git config user.email …`,
    /// `git remote add …`), so the protected-files guard has already judged what it writes.
    pub git_config_writable: bool,
}

/// How the kernel confines one Bash call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Confinement {
    /// The full sandbox: writes only in the working directories, `$TMPDIR` and
    /// `allowWrite`, no network unless allowed, denied files hidden, protected files and
    /// Edit-denied ones read-only.
    Sandbox,
    /// Filesystem only (bypass mode, and commands run outside the sandbox): what Read
    /// rules deny is hidden and the protected files and what Edit rules deny are
    /// read-only; nothing else is limited.
    Files,
    /// None: the kernel cannot confine commands here; the permission rules (the
    /// command analyzer) are the only guard.
    Unconfined,
}

impl Confinement {
    /// The name `system/init` and `/doctor` show.
    pub const fn name(self) -> &'static str {
        match self {
            Confinement::Sandbox => "sandbox",
            Confinement::Files => "filesystem",
            Confinement::Unconfined => "rules-only",
        }
    }
}

impl SandboxPolicy {
    /// Whether the sandbox is on for Bash in `mode` on this machine.
    pub fn active_in(&self, mode: PermissionMode) -> bool {
        self.available && self.settings.on_in(mode)
    }
}

/// Whether a Bash input asks to leave the sandbox.
pub fn asks_to_leave(input: Option<&Value>) -> bool {
    input
        .and_then(|i| i.get(DISABLE_SANDBOX_FIELD))
        .and_then(Value::as_bool)
        == Some(true)
}

impl PermissionPolicy {
    /// How the kernel confines the Bash call with this command and input: the full
    /// sandbox when the policy puts it there, else the filesystem-only confinement where
    /// the machine runs it, else nothing.
    pub fn confinement(&self, command: &str, input: Option<&Value>) -> Confinement {
        if self.sandboxes(command, input) {
            Confinement::Sandbox
        } else if self.sandbox.files_guard {
            Confinement::Files
        } else {
            Confinement::Unconfined
        }
    }

    /// How an ordinary Bash call (one that does not ask to leave the sandbox) is confined
    /// in the policy's mode.
    pub fn mode_confinement(&self) -> Confinement {
        self.confinement("", None)
    }

    /// Which confinement an ordinary Bash call gets in each mode, under these settings
    /// on this machine.
    pub fn confinement_by_mode(&self) -> Vec<(PermissionMode, Confinement)> {
        PermissionMode::ALL
            .iter()
            .map(|mode| {
                let mut probe = self.clone();
                probe.mode = *mode;
                (*mode, probe.mode_confinement())
            })
            .collect()
    }

    /// What the kernel's confinement of this Bash call grants or withholds beyond the
    /// policy's paths.
    pub fn bash_kernel_terms(&self, call: &CallFacts<'_>) -> KernelTerms {
        super::bash::kernel_terms(self, call)
    }

    /// Whether the Bash call with this input and command runs inside the sandbox.
    pub fn sandboxes(&self, command: &str, input: Option<&Value>) -> bool {
        self.sandbox.active_in(self.mode)
            && !asks_to_leave(input)
            && !self.sandbox.settings.excludes(command)
    }

    /// The sandbox's say on a Bash call's verdict: leaving the sandbox always asks (or is
    /// refused when `allowUnsandboxedCommands` is false); a sandboxed call that asks only
    /// because of the mode runs when `autoAllowBashIfSandboxed` is on. Deny verdicts and
    /// what deny and ask rules catch stand.
    pub(super) fn sandbox_verdict(&self, call: &CallFacts<'_>, verdict: Verdict) -> Verdict {
        if !self.sandbox.active_in(self.mode) || matches!(verdict, Verdict::Deny { .. }) {
            return verdict;
        }
        if asks_to_leave(call.input) {
            if !self.sandbox.settings.allow_unsandboxed {
                return Verdict::Deny {
                    reason: "running outside the sandbox is turned off (sandbox.allowUnsandboxedCommands is false)".to_string(),
                };
            }
            return Verdict::Ask {
                reason: "the command asks to run outside the sandbox (dangerouslyDisableSandbox)"
                    .to_string(),
            };
        }
        let command = call
            .argument
            .or_else(|| call.input_str("command"))
            .unwrap_or("");
        if let Verdict::Ask { .. } = verdict
            && self.sandbox.settings.auto_allows()
            && self.sandboxes(command, call.input)
        {
            let mut probe = self.clone();
            probe.mode = PermissionMode::BypassPermissions;
            if super::bash::evaluate(&probe, call) == Verdict::Allow {
                return Verdict::Allow;
            }
        }
        verdict
    }

    /// The existing files and directories the `family` deny rules (Read or Edit) name,
    /// found by walking the working directories and each absolute rule's literal base
    /// (at most 20,000 entries each, `DENIED_PATH_WALK_LIMIT`; a denied directory is not
    /// entered). Symlinks are not followed; their targets are matched by the rules as
    /// the file tools would see them.
    pub fn denied_paths(&self, cwd: &Path, family: PathFamily) -> Vec<PathBuf> {
        let Some(denial) = self.path_denial(cwd, family) else {
            return Vec::new();
        };
        let rules: Vec<_> = self
            .deny
            .iter()
            .filter(|r| matches!(r.compiled(), Compiled::Path(f, _) if *f == family))
            .collect();
        let mut roots: Vec<PathBuf> = self.working_dirs(cwd).into_iter().map(|d| d.real).collect();
        for rule in &rules {
            if let Some(base) = self.rule_base(rule, cwd)
                && !roots.iter().any(|r| base.starts_with(r))
            {
                roots.push(base);
            }
        }
        let key = format!(
            "{family:?}\n{}\n{}",
            roots
                .iter()
                .map(|r| r.display().to_string())
                .collect::<Vec<_>>()
                .join("\n"),
            rules
                .iter()
                .map(|r| r.to_string())
                .collect::<Vec<_>>()
                .join("\n"),
        );
        let mut found = Vec::new();
        let mut walked = Vec::new();
        for root in roots {
            if denial.hides(&root, true) {
                found.push(root);
                continue;
            }
            // Below a real directory (the working directories' real forms are) a path
            // found by the walk is its own real form; a rule's base named through a
            // symlink is walked by the names the rule uses, each resolved.
            let real = std::fs::canonicalize(&root).is_ok_and(|r| r == root);
            walked.push((root, real));
        }
        found.extend(self.denied_walks.walk(key, &walked, &denial));
        found.sort();
        found.dedup();
        found
    }

    /// Where an absolute or home-anchored rule's literal part ends (its parent when the
    /// literal part is not a directory).
    fn rule_base(&self, rule: &super::PermissionRule, cwd: &Path) -> Option<PathBuf> {
        let spec = rule.specifier.as_deref()?;
        let (anchor, rest) = if let Some(rest) = spec.strip_prefix("//") {
            (PathBuf::from("/"), rest)
        } else if let Some(rest) = spec.strip_prefix("~/") {
            (self.home.clone()?, rest)
        } else if let Some(rest) = spec.strip_prefix('/') {
            (rule.base.clone().unwrap_or_else(|| cwd.to_path_buf()), rest)
        } else {
            return None;
        };
        let literal: String = rest
            .chars()
            .take_while(|c| !matches!(c, '*' | '?' | '[' | '{' | '\\'))
            .collect();
        let mut base = anchor.join(literal.trim_end_matches('/'));
        while !base.is_dir() {
            base = base.parent()?.to_path_buf();
        }
        (base != Path::new("/")).then_some(base)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::PermissionRule;
    use crate::RiskClass;
    use serde_json::json;

    #[test]
    fn settings_read_claude_code_keys() {
        let cwd = Path::new("/proj");
        let section: SandboxSection =
            serde_json::from_value(json!({"enabled": true, "autoAllowBashIfSandboxed": false,
                "excludedCommands": ["docker"],
                "filesystem": {"allowWrite": ["~/.cache", "out"], "denyRead": ["//etc/x"]},
                "network": {"allowedDomains": ["example.com"], "httpProxyPort": null}}))
            .unwrap();
        let (s, notes) = SandboxSettings::from_section(&section, cwd, Some(Path::new("/home/u")));
        assert_eq!(s.enabled, Some(true));
        assert!(!s.auto_allows());
        assert_eq!(
            s.allow_write,
            [PathBuf::from("/home/u/.cache"), PathBuf::from("/proj/out")]
        );
        assert_eq!(s.deny_read, [PathBuf::from("/etc/x")]);
        assert!(!s.network_allowed());
        assert_eq!(s.proxied_domains(), Some(&["example.com".to_string()][..]));
        assert!(notes.is_empty(), "{notes:?}");
        assert!(s.excludes("docker ps") && !s.excludes("dockerd"));
        assert!(s.on_in(PermissionMode::BypassPermissions));
        let default = SandboxSettings::default();
        assert!(default.on_in(PermissionMode::Plan));
        assert!(!default.on_in(PermissionMode::BypassPermissions));
        let section: SandboxSection =
            serde_json::from_value(json!({"network": {"httpProxyPort": 8080}})).unwrap();
        let (_, notes) = SandboxSettings::from_section(&section, cwd, None);
        assert_eq!(
            notes,
            ["sandbox.network.httpProxyPort is not supported by robota's sandbox and is ignored"]
        );
    }

    #[test]
    fn sandboxed_calls_skip_the_mode_question_but_not_rules() {
        let dir = tempfile::tempdir().unwrap();
        let mut policy = PermissionPolicy::new(PermissionMode::Default);
        policy.sandbox.available = true;
        assert!(
            !policy.sandbox.settings.auto_allows(),
            "only when asked for"
        );
        policy.sandbox.settings.auto_allow = Some(true);
        policy.ask = PermissionRule::parse_list("Bash(git push *)");
        let verdict = |policy: &PermissionPolicy, input: Value| {
            let command = input["command"].as_str().unwrap().to_string();
            let facts = CallFacts {
                input: Some(&input),
                ..CallFacts::new("Bash", RiskClass::Execute, Some(&command), dir.path())
            };
            policy.evaluate(&facts)
        };
        assert_eq!(verdict(&policy, json!({"command": "make"})), Verdict::Allow);
        assert!(matches!(
            verdict(&policy, json!({"command": "git push origin"})),
            Verdict::Ask { .. }
        ));
        assert!(matches!(
            verdict(
                &policy,
                json!({"command": "ls", DISABLE_SANDBOX_FIELD: true})
            ),
            Verdict::Ask { .. }
        ));
        policy.sandbox.settings.allow_unsandboxed = false;
        assert!(matches!(
            verdict(
                &policy,
                json!({"command": "ls", DISABLE_SANDBOX_FIELD: true})
            ),
            Verdict::Deny { .. }
        ));
        policy.sandbox.available = false;
        assert!(matches!(
            verdict(&policy, json!({"command": "make"})),
            Verdict::Ask { .. }
        ));
    }

    #[test]
    fn denied_paths_are_found_in_the_working_dir() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join("a/secrets")).unwrap();
        std::fs::write(root.join("a/secrets/k"), "x").unwrap();
        std::fs::write(root.join("a/.env"), "x").unwrap();
        std::fs::write(root.join("ok"), "x").unwrap();
        let mut policy = PermissionPolicy::new(PermissionMode::Default);
        policy.deny = PermissionRule::parse_list("Read(secrets/**), Read(.env), Edit(ok)");
        let found = policy.denied_paths(&root, PathFamily::Read);
        assert_eq!(found, [root.join("a/.env"), root.join("a/secrets")]);
        assert_eq!(
            policy.denied_paths(&root, PathFamily::Edit),
            [root.join("ok")]
        );
    }

    #[cfg(unix)]
    #[test]
    fn denied_paths_see_through_symlinks_either_way() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let work = root.join("work");
        std::fs::create_dir_all(work.join("a")).unwrap();
        std::fs::write(work.join("a/.env"), "x").unwrap();
        // A link in the working directory to a denied file is hidden too.
        std::os::unix::fs::symlink(work.join("a/.env"), work.join("env-link")).unwrap();
        // A rule naming files outside through a symlinked directory.
        std::fs::create_dir_all(root.join("keys-real")).unwrap();
        std::fs::write(root.join("keys-real/id"), "x").unwrap();
        std::os::unix::fs::symlink(root.join("keys-real"), root.join("keys")).unwrap();
        let mut policy = PermissionPolicy::new(PermissionMode::Default);
        policy.deny =
            PermissionRule::parse_list(&format!("Read(.env), Read(/{}/keys/id)", root.display()));
        let found = policy.denied_paths(&work, PathFamily::Read);
        assert_eq!(
            found,
            [
                root.join("keys/id"),
                work.join("a/.env"),
                work.join("env-link")
            ]
        );
    }
}
