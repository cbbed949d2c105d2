//! The Bash sandbox: the boundary the operating system keeps, behind the permission rules
//! (which read commands, and cannot win against every program that runs its argument).
//!
//! # A policy, and a backend per platform
//! What a command may read, write and reach is a [`SandboxSpec`], made from the
//! platform-free policy (`robota_permission`'s sandbox settings, deny rules and protected
//! paths) by [`SandboxSpec::for_policy`]. A backend turns it into enforcement
//! ([`Backend`]):
//! - **Linux** (`linux.rs`): user, mount and network namespaces, read-only and hiding
//!   binds, and a Landlock domain, entered in the forked child before exec;
//! - **macOS** (`macos.rs`): a Seatbelt profile generated from the spec (`seatbelt.rs`,
//!   platform-free and tested on every machine), the command run through
//!   `/usr/bin/sandbox-exec -p PROFILE`;
//! - **none** (any other platform, or a machine where the backend does not work): robota
//!   says so once (`system/init`'s `sandbox`, `/doctor`), and the permission rules are the
//!   only guard.
//!
//! # Two confinements
//! Inside the sandbox ([`SandboxSpec::for_policy`]) a command writes only where it is
//! given and reaches no network. Outside it — bypass mode, `excludedCommands`, a command
//! allowed to leave it — Bash calls still run under the kernel on Linux, in the
//! **filesystem-only** confinement ([`SandboxSpec::files_only`]): the same namespaces,
//! binds and Landlock domain, but writable everywhere and with the network, so that only
//! the user's word holds: what Read deny rules name is hidden, the protected files and
//! what Edit deny rules name are read-only. Deny rules and protected files are the
//! user's; bypass means "do not ask me", not "ignore my rules".
//!
//! With `sandbox.network.allowedDomains`, both backends send the command's traffic
//! through the same domain proxy ([`proxy`]) over a relay ([`relay`]): inside the Linux
//! network namespace at `127.0.0.1:3128`, on macOS at a loopback port of its own that the
//! profile lets the command reach and nothing else.
//!
//! # Programs that embed the sandbox
//! A program that runs sandboxed commands with `sandbox.network.allowedDomains` set
//! (through robota's SDK or this crate) must call [`relay::run_if_requested`] first thing
//! in `main`, as the `robota` binary does: on Linux the relay is that program started
//! again with a hidden argument. Without the call its sandboxed commands are not run, and
//! their stderr says so; or [`SandboxSpec::relay_program`] names another program that
//! dispatches (such as the `robota` binary).

#![deny(missing_docs)]

#[cfg(target_os = "linux")]
mod kernel;
#[cfg(target_os = "linux")]
mod linux;
#[cfg(target_os = "macos")]
mod macos;
#[cfg(unix)]
pub mod proxy;
#[cfg(unix)]
pub mod relay;
#[cfg(target_os = "linux")]
mod relay_launch;
pub mod seatbelt;

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use robota_permission::{KernelTerms, PathFamily, PermissionPolicy};

/// Protected paths in each working directory: read-only inside the sandbox (and in the
/// filesystem-only confinement).
const PROTECTED_IN_WORKING_DIRS: [&str; 6] = [
    ".git/hooks",
    ".git/config",
    ".git/commondir",
    ".claude",
    ".robota",
    ".mcp.json",
];

/// Whether `path` is one of git's config files the protected set names.
fn is_git_config(path: &Path) -> bool {
    path.ends_with(".git/config") || path.ends_with(".gitconfig") || path.ends_with(".config/git")
}

/// The environment variable that makes a debug build behave as if this machine could not
/// run the sandbox (its value is the reason given): how tests see the fallback on a
/// machine that has Landlock. Release builds ignore it.
pub const SIMULATE_MISSING_ENV: &str = "ROBOTA_TEST_SANDBOX_MISSING";

/// How this build confines sandboxed commands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    /// Linux: namespaces, binds and Landlock.
    Landlock,
    /// macOS: a Seatbelt profile run through `sandbox-exec`.
    Seatbelt,
    /// No confinement on this platform: the permission rules are the only guard.
    None,
}

impl Backend {
    /// This platform's backend.
    pub const fn of_this_platform() -> Backend {
        if cfg!(target_os = "linux") {
            Backend::Landlock
        } else if cfg!(target_os = "macos") {
            Backend::Seatbelt
        } else {
            Backend::None
        }
    }

    /// The name `system/init` and `/doctor` show.
    pub const fn name(self) -> &'static str {
        match self {
            Backend::Landlock => "landlock",
            Backend::Seatbelt => "seatbelt",
            Backend::None => "none",
        }
    }
}

/// Whether this machine can run the sandbox, checked once per process.
#[derive(Debug, Clone)]
pub struct Support {
    /// The backend that confines commands here ([`Backend::None`] when it cannot run).
    pub backend: Backend,
    /// The Landlock ABI version (0 when none, and on other platforms).
    pub landlock_abi: u32,
    /// Why the sandbox cannot run here, when it cannot.
    pub missing: Option<String>,
}

impl Support {
    /// Whether the sandbox can run here.
    pub fn available(&self) -> bool {
        self.missing.is_none()
    }
}

/// Checks once (on Linux Landlock's ABI, then a sandboxed `true` started for real; on
/// macOS a `true` started under a generated profile) whether the sandbox works on this
/// machine.
pub fn support() -> &'static Support {
    static SUPPORT: OnceLock<Support> = OnceLock::new();
    SUPPORT.get_or_init(|| {
        #[cfg(debug_assertions)]
        if let Ok(why) = std::env::var(SIMULATE_MISSING_ENV) {
            return Support {
                backend: Backend::None,
                landlock_abi: 0,
                missing: Some(why),
            };
        }
        #[cfg(target_os = "linux")]
        let (landlock_abi, checked) = {
            let abi = linux::landlock_abi();
            (abi, linux::check(abi))
        };
        #[cfg(target_os = "macos")]
        let (landlock_abi, checked) = (0, macos::check());
        #[cfg(not(any(target_os = "linux", target_os = "macos")))]
        let (landlock_abi, checked): (u32, Result<(), String>) = (
            0,
            Err(format!(
                "robota has no sandbox backend for {}",
                std::env::consts::OS
            )),
        );
        let backend = match checked {
            Ok(()) => Backend::of_this_platform(),
            Err(_) => Backend::None,
        };
        Support {
            backend,
            landlock_abi,
            missing: checked.err(),
        }
    })
}

/// The sandbox's private directory: the temp directory commands get (`TMPDIR`) and the
/// empty placeholders bound over hidden paths. Removed when dropped.
#[derive(Debug)]
pub struct SandboxDirs {
    root: PathBuf,
    tmp: PathBuf,
    empty_dir: PathBuf,
    /// The placeholder bound over hidden files (Linux binds it; Seatbelt needs none).
    #[cfg_attr(not(target_os = "linux"), allow(dead_code))]
    empty_file: PathBuf,
}

impl SandboxDirs {
    /// Creates the sandbox's private directories under the system's temporary directory.
    pub fn create() -> std::io::Result<SandboxDirs> {
        let root = std::env::temp_dir()
            .canonicalize()?
            .join(format!("robota-sandbox-{}", uuid::Uuid::new_v4().simple()));
        let mut builder = std::fs::DirBuilder::new();
        builder.recursive(true);
        #[cfg(unix)]
        std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
        builder.create(&root)?;
        let tmp = root.join("tmp");
        builder.create(&tmp)?;
        let empty_dir = root.join("hidden-dir");
        builder.create(&empty_dir)?;
        set_mode(&empty_dir, 0o000)?;
        let empty_file = root.join("hidden-file");
        std::fs::write(&empty_file, "")?;
        set_mode(&empty_file, 0o000)?;
        Ok(SandboxDirs {
            root,
            tmp,
            empty_dir,
            empty_file,
        })
    }

    /// The temp directory sandboxed commands get.
    pub fn tmp(&self) -> &Path {
        &self.tmp
    }

    /// Where the domain proxy listens: beside the temp directory, where sandboxed
    /// commands cannot write.
    pub fn proxy_socket(&self) -> PathBuf {
        self.root.join("proxy.sock")
    }
}

impl Drop for SandboxDirs {
    fn drop(&mut self) {
        let _ = set_mode(&self.empty_dir, 0o700);
        let _ = std::fs::remove_dir_all(&self.root);
    }
}

/// Sets `path`'s permission bits (where the platform has them).
fn set_mode(path: &Path, mode: u32) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
    }
    #[cfg(not(unix))]
    {
        let _ = (path, mode);
        Ok(())
    }
}

/// What one sandboxed command may do, in paths.
#[derive(Debug, Clone, Default)]
pub struct SandboxSpec {
    /// Where the command starts.
    pub cwd: PathBuf,
    /// Writable directories (and files).
    pub writable: Vec<PathBuf>,
    /// Hidden: unreadable and unwritable.
    pub hidden: Vec<PathBuf>,
    /// Read-only even where writable.
    pub read_only: Vec<PathBuf>,
    /// Whether the network is reachable.
    pub network: bool,
    /// With the network off: the domain proxy's socket, reached through a relay at
    /// `127.0.0.1:3128` that the proxy variables name.
    pub proxy_socket: Option<PathBuf>,
    /// The program the relay runs as (`PROGRAM __sandbox-relay PORT SOCKET`); `None`:
    /// this program, which must then call [`relay::run_if_requested`] first thing in
    /// `main`.
    pub relay_program: Option<PathBuf>,
    /// Writable everywhere but what `hidden` and `read_only` name (the filesystem-only
    /// confinement); `writable` then only says where renames are guarded by pinning.
    pub write_everywhere: bool,
    /// No file or directory may be removed or renamed away anywhere but the sandbox's
    /// private temp directory (a `Bash(rm:*)`-style deny rule standing in for opaque
    /// code, see `robota_permission::REMOVING_PROGRAMS`).
    pub no_removal: bool,
}

impl SandboxSpec {
    /// The spec a Bash call gets from the policy: the working directories, the sandbox's
    /// temp directory, `allowWrite` and `extra_writable` writable; what the deny rules
    /// and the sandbox settings name hidden or read-only, with the protected paths and
    /// `protected` (settings files).
    pub fn for_policy(
        policy: &PermissionPolicy,
        session_dir: &Path,
        run_dir: &Path,
        dirs: &SandboxDirs,
        extra_writable: &[PathBuf],
    ) -> SandboxSpec {
        let mut spec = SandboxSpec::guarding(policy, session_dir, run_dir, dirs, extra_writable);
        let settings = &policy.sandbox.settings;
        spec.writable.extend(settings.allow_write.iter().cloned());
        spec.network = settings.network_allowed();
        spec
    }

    /// The filesystem-only confinement a Bash call gets outside the full sandbox (bypass
    /// mode, excluded commands, commands allowed to leave it): what Read deny rules and
    /// `filesystem.denyRead` name hidden, the protected paths and what Edit deny rules and
    /// `filesystem.denyWrite` name read-only; writable everywhere else, network on.
    pub fn files_only(
        policy: &PermissionPolicy,
        session_dir: &Path,
        run_dir: &Path,
        dirs: &SandboxDirs,
        extra_writable: &[PathBuf],
    ) -> SandboxSpec {
        let mut spec = SandboxSpec::guarding(policy, session_dir, run_dir, dirs, extra_writable);
        spec.write_everywhere = true;
        spec.network = true;
        spec
    }

    /// Applies what the policy's reading of the command grants or withholds: no removal
    /// anywhere, or git's config files left writable (the repository's `.git/config`, the
    /// user's `~/.gitconfig` and `~/.config/git`).
    pub fn apply(&mut self, terms: KernelTerms) {
        self.no_removal = terms.no_removal;
        if terms.git_config_writable {
            self.read_only.retain(|path| !is_git_config(path));
        }
    }

    /// What both confinements share: the working and temp directories writable, the
    /// denied and protected paths hidden or read-only. A protected path holding a working
    /// directory (a project inside `$ROBOTA_HOME`) is left out: it would make the project
    /// read-only.
    fn guarding(
        policy: &PermissionPolicy,
        session_dir: &Path,
        run_dir: &Path,
        dirs: &SandboxDirs,
        extra_writable: &[PathBuf],
    ) -> SandboxSpec {
        let settings = &policy.sandbox.settings;
        let working: Vec<PathBuf> = policy
            .working_dirs(session_dir)
            .into_iter()
            .map(|d| d.real)
            .collect();
        let mut writable = working.clone();
        writable.push(dirs.tmp.clone());
        writable.extend(extra_writable.iter().cloned());
        let mut hidden = policy.denied_paths(session_dir, PathFamily::Read);
        hidden.extend(settings.deny_read.iter().cloned());
        let mut read_only = policy.denied_paths(session_dir, PathFamily::Edit);
        read_only.extend(settings.deny_write.iter().cloned());
        for dir in &working {
            read_only.extend(PROTECTED_IN_WORKING_DIRS.iter().map(|p| dir.join(p)));
        }
        read_only.extend(
            policy
                .sandbox
                .protected
                .iter()
                .filter(|p| !working.iter().any(|w| w.starts_with(p)))
                .cloned(),
        );
        SandboxSpec {
            cwd: run_dir.to_path_buf(),
            writable,
            hidden,
            read_only,
            ..SandboxSpec::default()
        }
    }
}

/// A sandbox ready to apply to commands: what wraps them, the environment it adds, and
/// the backend's own state.
#[derive(Debug)]
pub struct PreparedSandbox {
    /// The program the command runs under and its first arguments (macOS:
    /// `sandbox-exec -p PROFILE --`); empty when the command runs as itself.
    wrapper: Vec<OsString>,
    env: Vec<(String, String)>,
    /// What the forked child does before exec.
    #[cfg(target_os = "linux")]
    child: kernel::ChildPlan,
    /// The relay to the domain proxy, stopped when the sandbox is dropped.
    #[cfg(target_os = "macos")]
    _relay: Option<macos::RelayTask>,
}

impl PreparedSandbox {
    /// A command that runs `program` in the sandbox (with the sandbox's `TMPDIR`); its
    /// arguments, directory and the rest are the caller's to add.
    pub fn command(self: &Arc<Self>, program: impl AsRef<OsStr>) -> tokio::process::Command {
        let mut command = match self.wrapper.split_first() {
            Some((wrapper, first_args)) => {
                let mut command = tokio::process::Command::new(wrapper);
                command.args(first_args).arg(program);
                command
            }
            None => tokio::process::Command::new(program),
        };
        command.envs(self.env.iter().map(|(k, v)| (k, v)));
        #[cfg(target_os = "linux")]
        linux::enter_before_exec(self, &mut command);
        command
    }
}

/// The environment a sandboxed command gets: the sandbox's `TMPDIR`, `ROBOTA_SANDBOX=1`,
/// and with a relay to the domain proxy on `proxy_port`, the proxy variables naming it.
#[cfg(any(target_os = "linux", target_os = "macos"))]
fn command_env(dirs: &SandboxDirs, proxy_port: Option<u16>) -> Vec<(String, String)> {
    let mut env = vec![
        ("TMPDIR".to_string(), dirs.tmp.display().to_string()),
        ("ROBOTA_SANDBOX".to_string(), "1".to_string()),
    ];
    if let Some(port) = proxy_port {
        let url = format!("http://127.0.0.1:{port}");
        for key in ["HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"] {
            env.push((key.to_string(), url.clone()));
            env.push((key.to_ascii_lowercase(), url.clone()));
        }
        // Servers the command starts itself are reached directly.
        for key in ["NO_PROXY", "no_proxy"] {
            env.push((key.to_string(), "localhost,127.0.0.1,::1".to_string()));
        }
    }
    env
}

/// Why a sandbox could not be prepared.
#[derive(Debug, thiserror::Error)]
pub enum PrepareError {
    /// A path could not be read or a system call failed while preparing.
    #[error("{0}")]
    Io(#[from] std::io::Error),
    /// The Seatbelt profile cannot name a path.
    #[error(transparent)]
    Profile(#[from] seatbelt::ProfileError),
    /// This platform has no sandbox backend.
    #[error("robota has no sandbox backend for {0}")]
    Unsupported(&'static str),
}

/// Prepares `spec` for this platform's backend (on Linux: paths resolved, mount flags
/// read, C strings made for the child; on macOS: the profile written, the relay started).
pub fn prepare(spec: &SandboxSpec, dirs: &SandboxDirs) -> Result<PreparedSandbox, PrepareError> {
    #[cfg(target_os = "linux")]
    return Ok(linux::prepare_with(spec, dirs, support().landlock_abi)?);
    #[cfg(target_os = "macos")]
    return macos::prepare(spec, dirs);
    #[cfg(not(any(target_os = "linux", target_os = "macos")))]
    {
        let _ = (spec, dirs);
        Err(PrepareError::Unsupported(std::env::consts::OS))
    }
}

/// Error text that suggests the sandbox stopped a command.
const SANDBOX_SYMPTOMS: [&str; 9] = [
    "Permission denied",
    "Read-only file system",
    "Operation not permitted",
    "Network is unreachable",
    "Could not resolve host",
    "Temporary failure in name resolution",
    "Invalid cross-device link",
    // The domain proxy refused a host (curl's words for a refused tunnel, and the
    // proxy's own).
    "CONNECT tunnel failed",
    "sandbox.network.allowedDomains",
];

/// What set-uid programs say when the confinement's `no_new_privs` stops them (sudo's
/// words, and the "effective uid" of the other launchers).
const SET_UID_SYMPTOMS: [&str; 2] = ["no new privileges", "effective uid is not 0"];

/// The note a failed command's result gets under the filesystem-only confinement when
/// its output looks like the confinement stopped it.
pub fn files_guard_hint(output: &str) -> Option<&'static str> {
    if SET_UID_SYMPTOMS.iter().any(|s| output.contains(s)) {
        return Some(
            "(This command ran under robota's file guard, where set-uid programs such as sudo gain no privileges. Tell the user: they can run it themselves, or set \"sandbox\": {\"fileGuard\": false} in their own settings (~/.robota/settings.json) to run Bash outside the sandbox without the guard.)",
        );
    }
    SANDBOX_SYMPTOMS[..3].iter().any(|s| output.contains(s)).then_some(
        "(This command ran under robota's file guard: files the Read deny rules name are hidden, and the protected files (settings, .claude/, .git/hooks, .git/config, .mcp.json, robota's home) and those the Edit deny rules name are read-only — `git config`, `git remote add` and `git branch -u` run alone on their line may still write git's config; with a Bash(rm)-style deny rule, code robota cannot read in advance may not remove files. These are the user's rules; do not try to work around them.)",
    )
}

/// The note a failed sandboxed command's result gets when its output looks like the
/// sandbox stopped it.
pub fn failure_hint(output: &str) -> Option<&'static str> {
    SANDBOX_SYMPTOMS.iter().any(|s| output.contains(s)).then_some(
        "(This command ran in robota's sandbox: it can write only in the working directories and $TMPDIR, cannot read denied files and reaches no network (or, when sandbox.network.allowedDomains names domains, only those, through the proxy in $HTTP_PROXY). If the sandbox caused this failure, you may run it again with \"dangerouslyDisableSandbox\": true — the user will be asked to approve running it outside the sandbox.)",
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failures_that_look_like_the_sandbox_get_the_hint() {
        for output in [
            "rm: cannot remove '/etc/x': Read-only file system",
            "curl: (56) CONNECT tunnel failed, response 403",
            "robota's sandbox: example.com is not in sandbox.network.allowedDomains",
        ] {
            assert!(failure_hint(output).is_some(), "{output}");
        }
        assert!(failure_hint("error: test failed, to rerun pass `--lib`").is_none());
    }

    #[test]
    fn the_file_guard_names_its_way_out_for_set_uid_programs() {
        let sudo = "sudo: The \"no new privileges\" flag is set, which prevents sudo from running as root.";
        let hint = files_guard_hint(sudo).unwrap_or_default();
        assert!(hint.contains("\"fileGuard\": false"), "{hint}");
        let hint =
            files_guard_hint("bash: .git/hooks/x: Read-only file system").unwrap_or_default();
        assert!(hint.contains("do not try to work around them"), "{hint}");
        assert!(files_guard_hint("error: test failed").is_none());
    }
}
