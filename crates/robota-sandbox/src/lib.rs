//! The Bash sandbox on Linux: the boundary the kernel keeps, behind the permission rules
//! (which read commands, and cannot win against every program that runs its argument).
//!
//! # The choice, and why
//! Each sandboxed command's shell is set up in the forked child before exec
//! (`Command::pre_exec`, `kernel`), not by re-executing a launcher: it costs no extra
//! exec (the budget is ≤ 5 ms a call), and it works from any program that embeds the
//! library, which need not be the robota binary. The child makes only system calls on
//! data the parent prepared (no allocation, no locks), as code between fork and exec in
//! a threaded program must. The one helper process — the relay to the domain proxy,
//! which has real work to do — is not code run after fork: the child starts it by exec
//! (`relay_launch`), as the program itself with [`relay::RELAY_ARG`].
//!
//! # Programs that embed the sandbox
//! A program that runs sandboxed commands with `sandbox.network.allowedDomains` set
//! (through robota's SDK or this crate) must call [`relay::run_if_requested`] first thing
//! in `main`, as the `robota` binary does: the relay is that program started again with
//! a hidden argument. Without the call its sandboxed commands are not run, and their
//! stderr says so; or [`SandboxSpec::relay_program`] names another program that
//! dispatches (such as the `robota` binary).
//!
//! # What the child does
//! 1. enters a new **user + mount namespace** (mapping only the caller's uid and gid, so
//!    root and non-root work alike) — and a new **network namespace** with only its own
//!    loopback when the network is off, where a relay ([`relay`], started by exec once
//!    the rest is in place, so confined alike) carries `127.0.0.1:3128` to the domain
//!    proxy ([`proxy`]) when domains are allowed;
//! 2. **hides** what Read deny rules and `sandbox.filesystem.denyRead` name — an empty
//!    directory or file, mode 000, bound read-only over each — and **binds read-only**
//!    what Edit deny rules, `filesystem.denyWrite` and the protected paths name
//!    (`.git/hooks`, `.git/config`, `.claude/`, `.robota/` in each working directory,
//!    the settings files robota and Claude Code read);
//! 3. drops **every capability** (bounding set included) and sets no-new-privs;
//! 4. enforces a **Landlock** domain (ABI as available): read and execute everywhere,
//!    write only in the working directories, the sandbox's private temp directory
//!    (`TMPDIR`), `filesystem.allowWrite` and a few devices. Landlock also forbids
//!    mount and umount (so the hiding binds cannot be lifted) and, from ABI 1, ptrace
//!    and `/proc/PID/root` of processes outside the sandbox (so robota's view of the
//!    files cannot be borrowed); from ABI 6 signals and abstract sockets are scoped.
//!
//! Namespaces alone cannot confine writes everywhere but a few places; Landlock alone
//! cannot take back part of a tree it granted (a denied file inside the working
//! directory). Both are needed, so the sandbox is "available" only when both work —
//! checked once per process by starting a sandboxed `true` ([`support`]). Without
//! them, robota says so once and the permission rules still decide.
//!
//! A hidden path is a mount point: a hard link to it fails (`EXDEV`), a rename fails
//! (`EBUSY`), a copy copies an empty, unreadable placeholder; every directory between
//! the writable root and a hidden or read-only path is pinned (bound over itself) so it
//! cannot be renamed to a name no rule matches and read by the next command. Glob deny rules are
//! resolved to the files that exist when the command starts (`denied_paths`, a bounded
//! walk); a file created later under a denied name is not hidden from later commands
//! of the same shell call.

#![deny(missing_docs)]

mod kernel;
pub mod proxy;
pub mod relay;
mod relay_launch;

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use robota_permission::{PathFamily, PermissionPolicy};
use rustix::fs::StatVfsMountFlags;
use rustix::mount::MountFlags;
use rustix::thread::UnshareFlags;

/// Files writable inside the sandbox besides the writable directories.
const WRITABLE_DEVICES: [&str; 7] = [
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/tty",
    "/dev/ptmx",
    "/dev/random",
    "/dev/urandom",
];
/// Protected paths in each working directory: read-only inside the sandbox.
const PROTECTED_IN_WORKING_DIRS: [&str; 4] = [".git/hooks", ".git/config", ".claude", ".robota"];

/// Whether this machine can run the sandbox, checked once per process.
#[derive(Debug, Clone)]
pub struct Support {
    /// The Landlock ABI version (0 when none).
    pub landlock_abi: u32,
    /// Why the sandbox cannot run here, when it cannot.
    pub missing: Option<String>,
}

impl Support {
    /// Whether the kernel sandbox can run here.
    pub fn available(&self) -> bool {
        self.missing.is_none()
    }
}

/// Checks once (Landlock's ABI, then a sandboxed `true` started for real) whether the
/// sandbox works on this machine.
pub fn support() -> &'static Support {
    static SUPPORT: OnceLock<Support> = OnceLock::new();
    SUPPORT.get_or_init(|| {
        let landlock_abi = kernel::landlock_abi();
        let missing = if landlock_abi == 0 {
            Some("the kernel has no Landlock".to_string())
        } else {
            probe(landlock_abi).err().map(|e| e.to_string())
        };
        Support {
            landlock_abi,
            missing,
        }
    })
}

/// Why the sandboxed test command of [`support`] could not run.
#[derive(Debug, thiserror::Error)]
enum ProbeError {
    #[error("cannot make its directory: {0}")]
    Dirs(#[source] std::io::Error),
    #[error("{0}")]
    Prepare(#[source] std::io::Error),
    #[error("user, mount and network namespaces with Landlock failed: {0}")]
    Start(#[source] std::io::Error),
    #[error("a sandboxed test command failed ({0})")]
    Failed(std::process::ExitStatus),
}

fn probe(abi: u32) -> Result<(), ProbeError> {
    use std::os::unix::process::CommandExt;
    let dirs = SandboxDirs::create().map_err(ProbeError::Dirs)?;
    let spec = SandboxSpec {
        cwd: dirs.tmp.clone(),
        writable: vec![dirs.tmp.clone()],
        hidden: vec![dirs.tmp.join("probe-hidden")],
        read_only: Vec::new(),
        network: false,
        proxy_socket: None,
        relay_program: None,
    };
    let _ = std::fs::write(dirs.tmp.join("probe-hidden"), "");
    let plan = Arc::new(prepare_with(&spec, &dirs, abi).map_err(ProbeError::Prepare)?);
    let mut command = std::process::Command::new("/bin/sh");
    command.arg("-c").arg("exit 0").current_dir(&dirs.tmp);
    let child_plan = Arc::clone(&plan);
    // SAFETY: the hook runs in the forked child between fork and exec, as `enter`
    // requires; it only makes system calls on the plan prepared above (no allocation, no
    // locks), and this plan starts no relay.
    unsafe {
        command.pre_exec(move || kernel::enter(&child_plan.child));
    }
    let status = command
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .map_err(ProbeError::Start)?;
    if status.success() {
        Ok(())
    } else {
        Err(ProbeError::Failed(status))
    }
}

/// The sandbox's private directory: the temp directory commands get (`TMPDIR`) and the
/// empty placeholders bound over hidden paths. Removed when dropped.
#[derive(Debug)]
pub struct SandboxDirs {
    root: PathBuf,
    tmp: PathBuf,
    empty_dir: PathBuf,
    empty_file: PathBuf,
}

impl SandboxDirs {
    /// Creates the sandbox's private directories under the system's temporary directory.
    pub fn create() -> std::io::Result<SandboxDirs> {
        let root = std::env::temp_dir()
            .canonicalize()?
            .join(format!("robota-sandbox-{}", uuid::Uuid::new_v4().simple()));
        let mut builder = std::fs::DirBuilder::new();
        builder.mode(0o700).recursive(true);
        builder.create(&root)?;
        let tmp = root.join("tmp");
        builder.create(&tmp)?;
        let empty_dir = root.join("hidden-dir");
        builder.create(&empty_dir)?;
        std::fs::set_permissions(&empty_dir, std::fs::Permissions::from_mode(0o000))?;
        let empty_file = root.join("hidden-file");
        std::fs::write(&empty_file, "")?;
        std::fs::set_permissions(&empty_file, std::fs::Permissions::from_mode(0o000))?;
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
        let _ = std::fs::set_permissions(&self.empty_dir, std::fs::Permissions::from_mode(0o700));
        let _ = std::fs::remove_dir_all(&self.root);
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
        let settings = &policy.sandbox.settings;
        let working: Vec<PathBuf> = policy
            .working_dirs(session_dir)
            .into_iter()
            .map(|d| d.real)
            .collect();
        let mut writable = working.clone();
        writable.push(dirs.tmp.clone());
        writable.extend(settings.allow_write.iter().cloned());
        writable.extend(extra_writable.iter().cloned());
        let mut hidden = policy.denied_paths(session_dir, PathFamily::Read);
        hidden.extend(settings.deny_read.iter().cloned());
        let mut read_only = policy.denied_paths(session_dir, PathFamily::Edit);
        read_only.extend(settings.deny_write.iter().cloned());
        for dir in &working {
            read_only.extend(PROTECTED_IN_WORKING_DIRS.iter().map(|p| dir.join(p)));
        }
        read_only.extend(policy.sandbox.protected.iter().cloned());
        SandboxSpec {
            cwd: run_dir.to_path_buf(),
            writable,
            hidden,
            read_only,
            network: settings.network_allowed(),
            proxy_socket: None,
            relay_program: None,
        }
    }
}

/// A sandbox ready to apply to commands: the child's plan and the environment it adds.
#[derive(Debug)]
pub struct PreparedSandbox {
    child: kernel::ChildPlan,
    env: Vec<(String, String)>,
}

impl PreparedSandbox {
    /// Makes `command` enter the sandbox before it runs (and gives it the sandbox's
    /// `TMPDIR`).
    pub fn apply(self: &Arc<Self>, command: &mut tokio::process::Command) {
        command.envs(self.env.iter().map(|(k, v)| (k, v)));
        let plan = Arc::clone(self);
        // SAFETY: the hook runs in the forked child between fork and exec, as `enter`
        // requires; it only makes system calls on the plan prepared in the parent (no
        // allocation, no locks).
        unsafe {
            command.pre_exec(move || kernel::enter(&plan.child));
        }
    }
}

/// Prepares `spec` (paths resolved, mount flags read, C strings made) for the child.
pub fn prepare(spec: &SandboxSpec, dirs: &SandboxDirs) -> std::io::Result<PreparedSandbox> {
    prepare_with(spec, dirs, support().landlock_abi)
}

fn c_path(path: &Path) -> std::io::Result<CString> {
    CString::new(path.as_os_str().as_bytes())
        .map_err(|_| std::io::Error::other(format!("{} has a NUL byte", path.display())))
}

/// The mount flags the kernel will not let a user namespace clear on a bind of `path`.
fn locked_flags(path: &Path) -> std::io::Result<MountFlags> {
    let flags = rustix::fs::statvfs(path)?.f_flag;
    let mut keep = MountFlags::empty();
    for (st, ms) in [
        (StatVfsMountFlags::NOSUID, MountFlags::NOSUID),
        (StatVfsMountFlags::NODEV, MountFlags::NODEV),
        (StatVfsMountFlags::NOEXEC, MountFlags::NOEXEC),
    ] {
        if flags.contains(st) {
            keep |= ms;
        }
    }
    Ok(keep)
}

fn prepare_with(
    spec: &SandboxSpec,
    dirs: &SandboxDirs,
    abi: u32,
) -> std::io::Result<PreparedSandbox> {
    let uid = rustix::process::getuid().as_raw();
    let gid = rustix::process::getgid().as_raw();
    let mut unshare = UnshareFlags::NEWUSER | UnshareFlags::NEWNS;
    if !spec.network {
        unshare |= UnshareFlags::NEWNET;
    }
    let existing = |paths: &[PathBuf]| -> Vec<PathBuf> {
        let mut found: Vec<PathBuf> = paths.iter().filter_map(|p| p.canonicalize().ok()).collect();
        found.sort();
        found.dedup();
        found
    };
    let writable = existing(&spec.writable);
    let hidden = existing(&spec.hidden);
    // Read-only binds matter only where writing would otherwise be allowed.
    let read_only: Vec<PathBuf> = existing(&spec.read_only)
        .into_iter()
        .filter(|p| writable.iter().any(|w| p.starts_with(w)))
        .filter(|p| !hidden.iter().any(|h| p.starts_with(h)))
        .collect();
    // Every directory between a writable root and a hidden or read-only path is pinned
    // (bound over itself), so that it cannot be renamed away from the rule's name with
    // the protected file inside.
    let mut pinned: Vec<PathBuf> = Vec::new();
    for path in hidden.iter().chain(&read_only) {
        let Some(root) = writable.iter().find(|w| path.starts_with(w)) else {
            continue;
        };
        let mut dir = path.parent();
        while let Some(d) = dir.filter(|d| d.starts_with(root) && *d != root.as_path()) {
            pinned.push(d.to_path_buf());
            dir = d.parent();
        }
    }
    pinned.sort();
    pinned.dedup();
    pinned.retain(|p| !hidden.contains(p) && !read_only.contains(p));
    let mut planned: Vec<(&Path, &Path, bool)> = Vec::new();
    planned.extend(pinned.iter().map(|p| (p.as_path(), p.as_path(), false)));
    planned.extend(read_only.iter().map(|p| (p.as_path(), p.as_path(), true)));
    for path in &hidden {
        let source = if path.is_dir() {
            &dirs.empty_dir
        } else {
            &dirs.empty_file
        };
        planned.push((source.as_path(), path.as_path(), true));
    }
    // Parents before children, so that no bind hides one made before it.
    planned.sort_by_key(|(_, target, _)| target.components().count());
    let mut binds = Vec::new();
    for (source, target, read_only) in planned {
        binds.push(kernel::Bind {
            source: c_path(source)?,
            target: c_path(target)?,
            read_only,
            keep: if read_only {
                locked_flags(source)?
            } else {
                MountFlags::empty()
            },
        });
    }
    let read = kernel::read_rights(abi);
    let all = kernel::fs_rights(abi);
    let mut rules = vec![(c_path(Path::new("/"))?, read)];
    for path in &writable {
        let rights = if path.is_dir() {
            all
        } else {
            all & kernel::FS_FILE_RIGHTS
        };
        rules.push((c_path(path)?, rights));
    }
    for device in WRITABLE_DEVICES {
        rules.push((
            c_path(Path::new(device))?,
            (kernel::FS_READ_FILE
                | kernel::FS_WRITE_FILE
                | kernel::FS_TRUNCATE
                | kernel::FS_IOCTL_DEV)
                & all,
        ));
    }
    rules.push((
        c_path(Path::new("/dev/pts"))?,
        (read | kernel::FS_WRITE_FILE) & all,
    ));
    let cwd = spec.cwd.canonicalize().unwrap_or_else(|_| spec.cwd.clone());
    let relay = match &spec.proxy_socket {
        Some(socket) if !spec.network => Some(
            relay_launch::RelayLaunch::new(
                spec.relay_program.as_deref(),
                socket,
                proxy::PROXY_PORT,
            )
            .map_err(std::io::Error::other)?,
        ),
        _ => None,
    };
    let mut env = vec![
        ("TMPDIR".to_string(), dirs.tmp.display().to_string()),
        ("ROBOTA_SANDBOX".to_string(), "1".to_string()),
    ];
    if relay.is_some() {
        let url = format!("http://127.0.0.1:{}", proxy::PROXY_PORT);
        for key in ["HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"] {
            env.push((key.to_string(), url.clone()));
            env.push((key.to_ascii_lowercase(), url.clone()));
        }
        // Servers the command starts itself are reached directly.
        for key in ["NO_PROXY", "no_proxy"] {
            env.push((key.to_string(), "localhost,127.0.0.1,::1".to_string()));
        }
    }
    Ok(PreparedSandbox {
        child: kernel::ChildPlan {
            unshare,
            setgroups_path: c_path(Path::new("/proc/self/setgroups"))?,
            uid_map_path: c_path(Path::new("/proc/self/uid_map"))?,
            gid_map_path: c_path(Path::new("/proc/self/gid_map"))?,
            uid_map: format!("{uid} {uid} 1\n").into_bytes(),
            gid_map: format!("{gid} {gid} 1\n").into_bytes(),
            root: c_path(Path::new("/"))?,
            binds,
            loopback: !spec.network,
            cwd: c_path(&cwd)?,
            landlock_abi: abi,
            rules,
            relay,
        },
        env,
    })
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
}
