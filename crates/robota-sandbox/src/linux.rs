//! The Linux backend: each sandboxed command's shell is set up in the forked child before
//! exec (`Command::pre_exec`, `kernel`), not by re-executing a launcher: it costs no extra
//! exec (the budget is ≤ 5 ms a call), and it works from any program that embeds the
//! library, which need not be the robota binary. The child makes only system calls on
//! data the parent prepared here (no allocation, no locks), as code between fork and exec
//! in a threaded program must. The one helper process — the relay to the domain proxy,
//! which has real work to do — is not code run after fork: the child starts it by exec
//! (`relay_launch`), as the program itself with [`crate::relay::RELAY_ARG`].
//!
//! # What the child does
//! 1. enters a new **user + mount namespace** (mapping only the caller's uid and gid, so
//!    root and non-root work alike) — and a new **network namespace** with only its own
//!    loopback when the network is off, where a relay ([`crate::relay`], started by exec
//!    once the rest is in place, so confined alike) carries `127.0.0.1:3128` to the domain
//!    proxy ([`crate::proxy`]) when domains are allowed;
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
//! The filesystem-only confinement (`SandboxSpec::write_everywhere`) is the same with
//! the network namespace left out and Landlock granting every right under `/`; with
//! `no_removal` the remove rights are withheld everywhere but the private temp directory
//! and the working directories' `.git` (git's lock files).
//!
//! Namespaces alone cannot confine writes everywhere but a few places; Landlock alone
//! cannot take back part of a tree it granted (a denied file inside the working
//! directory). Both are needed, so the sandbox is "available" only when both work —
//! checked once per process by starting a sandboxed `true` ([`probe`]).
//!
//! A hidden path is a mount point: a hard link to it fails (`EXDEV`), a rename fails
//! (`EBUSY`), a copy copies an empty, unreadable placeholder; every directory between
//! the writable root and a hidden or read-only path is pinned (bound over itself) so it
//! cannot be renamed to a name no rule matches and read by the next command. Glob deny rules are
//! resolved to the files that exist when the command starts (`denied_paths`, a bounded
//! walk); a file created later under a denied name is not hidden from later commands
//! of the same shell call.

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustix::fs::StatVfsMountFlags;
use rustix::mount::MountFlags;
use rustix::thread::UnshareFlags;

use crate::{PreparedSandbox, SandboxDirs, SandboxSpec, kernel, proxy, relay_launch};

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

/// Whether this kernel runs the sandbox: `Err` says why not.
pub(crate) fn check(landlock_abi: u32) -> Result<(), String> {
    if landlock_abi == 0 {
        Err("the kernel has no Landlock".to_string())
    } else {
        probe(landlock_abi).map_err(|e| e.to_string())
    }
}

/// The Landlock ABI version the kernel offers, 0 when none.
pub(crate) fn landlock_abi() -> u32 {
    kernel::landlock_abi()
}

/// Makes `command` enter the sandbox before it runs.
pub(crate) fn enter_before_exec(
    sandbox: &Arc<PreparedSandbox>,
    command: &mut tokio::process::Command,
) {
    let plan = Arc::clone(sandbox);
    // SAFETY: the hook runs in the forked child between fork and exec, as `enter`
    // requires; it only makes system calls on the plan prepared in the parent (no
    // allocation, no locks).
    unsafe {
        command.pre_exec(move || kernel::enter(&plan.child));
    }
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
        ..SandboxSpec::default()
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

pub(crate) fn prepare_with(
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
    let mut hidden = existing(&spec.hidden);
    // A path inside a hidden directory is hidden with it (and cannot be bound over once
    // its directory is: the placeholder has no such entry).
    let nested: Vec<PathBuf> = hidden
        .iter()
        .filter(|p| hidden.iter().any(|h| h != *p && p.starts_with(h)))
        .cloned()
        .collect();
    hidden.retain(|p| !nested.contains(p));
    // Read-only binds matter only where writing would otherwise be allowed.
    let read_only: Vec<PathBuf> = existing(&spec.read_only)
        .into_iter()
        .filter(|p| spec.write_everywhere || writable.iter().any(|w| p.starts_with(w)))
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
    let rules = landlock_rules(spec, &writable, dirs, abi)?;
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
    let env = crate::command_env(dirs, relay.is_some().then_some(proxy::PROXY_PORT));
    Ok(PreparedSandbox {
        wrapper: Vec::new(),
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

/// The Landlock rules: read (or, writing everywhere, every right) under `/`, every right
/// in the writable places, the writable devices. With `no_removal` the remove rights
/// (and renaming away, which needs them) are granted only in the sandbox's temp directory.
fn landlock_rules(
    spec: &SandboxSpec,
    writable: &[PathBuf],
    dirs: &SandboxDirs,
    abi: u32,
) -> std::io::Result<Vec<(CString, u64)>> {
    let read = kernel::read_rights(abi);
    let every = kernel::fs_rights(abi);
    let all = if spec.no_removal {
        every & !(kernel::FS_REMOVE_DIR | kernel::FS_REMOVE_FILE)
    } else {
        every
    };
    let root = if spec.write_everywhere { all } else { read };
    let mut rules = vec![(c_path(Path::new("/"))?, root)];
    for path in writable {
        let rights = if path.is_dir() {
            all
        } else {
            all & kernel::FS_FILE_RIGHTS
        };
        rules.push((c_path(path)?, rights));
    }
    if spec.no_removal {
        // The private temp directory, and git's own directory: git writes through lock
        // files it renames into place or removes, and a lock left behind would stop
        // every later git command (its protected parts stay read-only binds).
        let git_dirs = writable
            .iter()
            .map(|w| w.join(".git"))
            .filter(|g| g.is_dir());
        for dir in dirs.tmp.canonicalize().into_iter().chain(git_dirs) {
            rules.push((c_path(&dir)?, every));
        }
    }
    for device in WRITABLE_DEVICES {
        rules.push((
            c_path(Path::new(device))?,
            (kernel::FS_READ_FILE
                | kernel::FS_WRITE_FILE
                | kernel::FS_TRUNCATE
                | kernel::FS_IOCTL_DEV)
                & every,
        ));
    }
    rules.push((
        c_path(Path::new("/dev/pts"))?,
        (read | kernel::FS_WRITE_FILE) & every,
    ));
    Ok(rules)
}
