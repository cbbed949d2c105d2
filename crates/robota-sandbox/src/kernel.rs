//! The sandbox's system calls, run in the forked child between fork and exec: a new user,
//! mount and (when the network is off) network namespace, the mounts that hide denied
//! paths and make protected ones read-only, a loopback brought up, every capability
//! dropped, a Landlock domain that lets the command read everywhere but write only where
//! it was given, and the domain proxy's relay started (`relay_launch.rs`). Everything the
//! child needs is prepared by the parent ([`ChildPlan`]); the child only makes system
//! calls (no allocation, no locks), as code between fork and exec in a threaded program
//! must. The calls go through `rustix`'s typed wrappers; `unsafe` is left for what has
//! none: `unshare`, the Landlock system calls and the interface flags' `ioctl`.

use std::ffi::CString;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

use libc::{c_int, c_ulong, c_void};
use rustix::fs::{Mode, OFlags};
use rustix::mount::{MountFlags, MountPropagationFlags};
use rustix::thread::{CapabilitySet, CapabilitySets, UnshareFlags};

// Landlock file-system access rights (linux/landlock.h).
pub const FS_EXECUTE: u64 = 1 << 0;
pub const FS_WRITE_FILE: u64 = 1 << 1;
pub const FS_READ_FILE: u64 = 1 << 2;
pub const FS_READ_DIR: u64 = 1 << 3;
pub const FS_REMOVE_DIR: u64 = 1 << 4;
pub const FS_REMOVE_FILE: u64 = 1 << 5;
pub const FS_REFER: u64 = 1 << 13;
pub const FS_TRUNCATE: u64 = 1 << 14;
pub const FS_IOCTL_DEV: u64 = 1 << 15;
/// Rights that make sense on a file (not a directory) as a rule's target.
pub const FS_FILE_RIGHTS: u64 =
    FS_EXECUTE | FS_WRITE_FILE | FS_READ_FILE | FS_TRUNCATE | FS_IOCTL_DEV;
const SCOPE_ABSTRACT_UNIX_SOCKET: u64 = 1 << 0;
const SCOPE_SIGNAL: u64 = 1 << 1;
const CREATE_RULESET_VERSION: u32 = 1 << 0;
const RULE_PATH_BENEATH: c_int = 1;

/// Every file-system right the kernel's Landlock ABI `abi` knows.
pub fn fs_rights(abi: u32) -> u64 {
    let mut all = (1u64 << 13) - 1;
    if abi >= 2 {
        all |= FS_REFER;
    }
    if abi >= 3 {
        all |= FS_TRUNCATE;
    }
    if abi >= 5 {
        all |= FS_IOCTL_DEV;
    }
    all
}

/// The rights to read and run (and use devices) under a path.
pub fn read_rights(abi: u32) -> u64 {
    (FS_EXECUTE | FS_READ_FILE | FS_READ_DIR | FS_IOCTL_DEV) & fs_rights(abi)
}

/// The Landlock ABI version the kernel offers, 0 when none.
pub fn landlock_abi() -> u32 {
    // SAFETY: with a null attribute, size 0 and the version flag the call only returns
    // the ABI version (or an error); no memory is read or written.
    let version = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<c_void>(),
            0 as c_ulong,
            CREATE_RULESET_VERSION as c_ulong,
        )
    };
    u32::try_from(version).unwrap_or(0)
}

#[repr(C)]
struct RulesetAttr {
    handled_access_fs: u64,
    handled_access_net: u64,
    scoped: u64,
}

#[repr(C, packed)]
struct PathBeneathAttr {
    allowed_access: u64,
    parent_fd: i32,
}

/// A bind mount the child makes: `source` over `target`, then (when `read_only`)
/// remounted read-only keeping the flags the kernel locks (`keep`, from the source's
/// mount). A writable bind of a directory over itself only pins it: a mount point cannot
/// be renamed or removed.
#[derive(Debug)]
pub struct Bind {
    pub source: CString,
    pub target: CString,
    pub read_only: bool,
    pub keep: MountFlags,
}

/// Everything the child does, prepared in the parent.
#[derive(Debug)]
pub struct ChildPlan {
    /// `unshare(2)` flags.
    pub unshare: UnshareFlags,
    pub setgroups_path: CString,
    pub uid_map_path: CString,
    pub gid_map_path: CString,
    pub uid_map: Vec<u8>,
    pub gid_map: Vec<u8>,
    pub root: CString,
    /// The binds, shallowest target first.
    pub binds: Vec<Bind>,
    /// Bring `lo` up (in a new network namespace).
    pub loopback: bool,
    pub cwd: CString,
    pub landlock_abi: u32,
    /// Landlock rules: path and the rights under it.
    pub rules: Vec<(CString, u64)>,
    /// The domain proxy's relay to start in the new network namespace, if any.
    pub relay: Option<super::relay_launch::RelayLaunch>,
}

/// Writes `data` to the file at `path` (one write). Async-signal-safe.
fn write_file(path: &CString, data: &[u8]) -> io::Result<()> {
    let file = rustix::fs::open(
        path.as_c_str(),
        OFlags::WRONLY | OFlags::CLOEXEC,
        Mode::empty(),
    )?;
    rustix::io::write(&file, data)?;
    Ok(())
}

/// Enters the sandbox: call only in the child between fork and exec.
///
/// # Safety
/// Must run in a freshly forked, single-threaded child between fork and exec (a
/// `pre_exec` hook): it changes the process's namespaces, mounts, capabilities and
/// Landlock domain for good, and starting the relay may end the process (`_exit`) with
/// the command's stderr told why (see `relay_launch::start`).
pub unsafe fn enter(plan: &ChildPlan) -> io::Result<()> {
    // robota keeps other processes out of its memory and environment (it is not
    // dumpable); the child must be dumpable again to own its `/proc/self/uid_map`. Its
    // memory is a copy of robota's only until the exec replaces it.
    rustix::process::set_dumpable_behavior(rustix::process::DumpableBehavior::Dumpable)?;
    // SAFETY: the flags never include `CLONE_FILES`, the one that makes `unshare` unsafe
    // (a file table split from other threads'), and the caller runs us single-threaded.
    unsafe { rustix::thread::unshare_unsafe(plan.unshare)? };
    // Without setgroups denied an unprivileged process may not write its gid map;
    // root may, and may find the file refusing "deny" once written: ignore that.
    let _ = write_file(&plan.setgroups_path, b"deny");
    write_file(&plan.uid_map_path, &plan.uid_map)?;
    write_file(&plan.gid_map_path, &plan.gid_map)?;
    rustix::mount::mount_change(
        plan.root.as_c_str(),
        MountPropagationFlags::REC | MountPropagationFlags::PRIVATE,
    )?;
    for bind in &plan.binds {
        rustix::mount::mount_bind(bind.source.as_c_str(), bind.target.as_c_str())?;
        if bind.read_only {
            rustix::mount::mount_remount(
                bind.target.as_c_str(),
                MountFlags::BIND | MountFlags::RDONLY | bind.keep,
                c"",
            )?;
        }
    }
    if plan.loopback {
        loopback_up()?;
    }
    rustix::process::chdir(plan.cwd.as_c_str())?;
    rustix::thread::set_no_new_privs(true)?;
    restrict_self(plan)?;
    drop_capabilities()?;
    if let Some(relay) = &plan.relay {
        // SAFETY: our own caller's contract: this is the sandboxed child between fork and
        // exec, its network namespace set up just above.
        unsafe { super::relay_launch::start(relay)? };
    }
    Ok(())
}

/// Brings `lo` up in the new network namespace (local servers the command starts work).
fn loopback_up() -> io::Result<()> {
    use rustix::net::{AddressFamily, SocketFlags, SocketType};
    let socket = rustix::net::socket_with(
        AddressFamily::INET,
        SocketType::DGRAM,
        SocketFlags::CLOEXEC,
        None,
    )?;
    // SAFETY: an all-zero `ifreq` is a valid value (plain integers and byte arrays); the
    // name written fits its array; SIOCSIFFLAGS reads an `ifreq`, which lives on this
    // stack for the whole call, and the socket is open (owned above).
    let result = unsafe {
        let mut request: libc::ifreq = std::mem::zeroed();
        for (i, b) in b"lo".iter().enumerate() {
            request.ifr_name[i] = *b as libc::c_char;
        }
        request.ifr_ifru.ifru_flags = (libc::IFF_UP | libc::IFF_LOOPBACK | libc::IFF_RUNNING) as _;
        libc::ioctl(socket.as_raw_fd(), libc::SIOCSIFFLAGS as _, &request)
    };
    if result < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Drops every capability: the bounding set (so exec grants none, root included), then
/// the permitted, effective and inheritable sets.
fn drop_capabilities() -> io::Result<()> {
    // Every capability number the kernel may know, not only those rustix names: the
    // first the kernel refuses is past its last.
    for cap in 0..64 {
        let one = CapabilitySet::from_bits_retain(1 << cap);
        if rustix::thread::remove_capability_from_bounding_set(one).is_err() {
            break;
        }
    }
    rustix::thread::set_capabilities(
        None,
        CapabilitySets {
            effective: CapabilitySet::empty(),
            permitted: CapabilitySet::empty(),
            inheritable: CapabilitySet::empty(),
        },
    )?;
    Ok(())
}

/// Creates the Landlock ruleset — read everywhere, write where the rules say; signals
/// and abstract sockets scoped to the sandbox where the ABI has scopes — and enforces it.
fn restrict_self(plan: &ChildPlan) -> io::Result<()> {
    let abi = plan.landlock_abi;
    let handled = fs_rights(abi);
    let attr = RulesetAttr {
        handled_access_fs: handled,
        handled_access_net: 0,
        scoped: if abi >= 6 {
            SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL
        } else {
            0
        },
    };
    // The attribute's size in the ABI version: the kernel reads only that much.
    let size = match abi {
        0..=3 => 8usize,
        4 | 5 => 16,
        _ => std::mem::size_of::<RulesetAttr>(),
    };
    // SAFETY: `attr` is a live `#[repr(C)]` ruleset attribute at least `size` bytes long,
    // which the kernel only reads. A non-negative result is a new descriptor nothing else
    // owns, so the `OwnedFd` may close it.
    let ruleset = unsafe {
        let fd = libc::syscall(
            libc::SYS_landlock_create_ruleset,
            &attr as *const RulesetAttr,
            size as c_ulong,
            0 as c_ulong,
        ) as c_int;
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        OwnedFd::from_raw_fd(fd)
    };
    add_rules(&ruleset, plan, handled)?;
    // SAFETY: landlock_restrict_self takes a ruleset descriptor (open: owned above) and
    // flags; no memory is passed.
    let result = unsafe {
        libc::syscall(
            libc::SYS_landlock_restrict_self,
            ruleset.as_raw_fd() as c_ulong,
            0 as c_ulong,
        )
    };
    if result < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

fn add_rules(ruleset: &OwnedFd, plan: &ChildPlan, handled: u64) -> io::Result<()> {
    for (path, rights) in &plan.rules {
        // A path gone since the plan was made grants nothing.
        let Ok(beneath) = rustix::fs::open(
            path.as_c_str(),
            OFlags::PATH | OFlags::CLOEXEC,
            Mode::empty(),
        ) else {
            continue;
        };
        let attr = PathBeneathAttr {
            allowed_access: rights & handled,
            parent_fd: beneath.as_raw_fd(),
        };
        // SAFETY: both descriptors are open (owned here and by the caller); `attr` is a
        // live `#[repr(C, packed)]` path-beneath attribute the kernel only reads.
        let result = unsafe {
            libc::syscall(
                libc::SYS_landlock_add_rule,
                ruleset.as_raw_fd() as c_ulong,
                RULE_PATH_BENEATH as c_ulong,
                &attr as *const PathBeneathAttr,
                0 as c_ulong,
            )
        };
        if result < 0 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}
