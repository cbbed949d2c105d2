//! The sandbox's system calls, run in the forked child between fork and exec: a new user,
//! mount and (when the network is off) network namespace, the mounts that hide denied
//! paths and make protected ones read-only, a loopback brought up, every capability
//! dropped, the domain proxy's relay started (`relay.rs`), and a Landlock domain that lets the command read everywhere but write only
//! where it was given. Everything the child needs is prepared by the parent
//! ([`ChildPlan`]); the child only makes system calls (no allocation, no locks), as code
//! between fork and exec in a threaded program must.

use std::ffi::CString;
use std::io;

use libc::{c_int, c_ulong, c_void};

// Landlock file-system access rights (linux/landlock.h).
pub const FS_EXECUTE: u64 = 1 << 0;
pub const FS_WRITE_FILE: u64 = 1 << 1;
pub const FS_READ_FILE: u64 = 1 << 2;
pub const FS_READ_DIR: u64 = 1 << 3;
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
    // the ABI version (or an error); no memory is touched.
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
    pub keep: c_ulong,
}

/// Everything the child does, prepared in the parent.
#[derive(Debug)]
pub struct ChildPlan {
    /// `unshare(2)` flags.
    pub unshare: c_int,
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
    pub relay: Option<super::relay::RelayPlan>,
}

fn check(result: c_int) -> io::Result<()> {
    if result < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// Writes `data` to the file at `path` (one write). Async-signal-safe.
unsafe fn write_file(path: &CString, data: &[u8]) -> io::Result<()> {
    // SAFETY: `path` is a valid C string and `data` a valid buffer.
    unsafe {
        let fd = libc::open(path.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        let written = libc::write(fd, data.as_ptr().cast(), data.len());
        let error = io::Error::last_os_error();
        libc::close(fd);
        if written < 0 {
            return Err(error);
        }
    }
    Ok(())
}

/// Enters the sandbox: call only in the child between fork and exec.
///
/// # Safety
/// Must run in a freshly forked single-threaded child; it changes the process's
/// namespaces, mounts, capabilities and Landlock domain for good.
pub unsafe fn enter(plan: &ChildPlan) -> io::Result<()> {
    // SAFETY: every pointer handed to the kernel below comes from a live CString or a
    // stack value of the right type; the calls are plain system calls.
    unsafe {
        check(libc::unshare(plan.unshare))?;
        // Without setgroups denied an unprivileged process may not write its gid map;
        // root may, and may find the file refusing "deny" once written: ignore that.
        let _ = write_file(&plan.setgroups_path, b"deny");
        write_file(&plan.uid_map_path, &plan.uid_map)?;
        write_file(&plan.gid_map_path, &plan.gid_map)?;
        check(libc::mount(
            std::ptr::null(),
            plan.root.as_ptr(),
            std::ptr::null(),
            libc::MS_REC | libc::MS_PRIVATE,
            std::ptr::null(),
        ))?;
        for bind in &plan.binds {
            check(libc::mount(
                bind.source.as_ptr(),
                bind.target.as_ptr(),
                std::ptr::null(),
                libc::MS_BIND,
                std::ptr::null(),
            ))?;
            if !bind.read_only {
                continue;
            }
            check(libc::mount(
                std::ptr::null(),
                bind.target.as_ptr(),
                std::ptr::null(),
                libc::MS_BIND | libc::MS_REMOUNT | libc::MS_RDONLY | bind.keep,
                std::ptr::null(),
            ))?;
        }
        if plan.loopback {
            loopback_up()?;
        }
        check(libc::chdir(plan.cwd.as_ptr()))?;
        check(libc::prctl(
            libc::PR_SET_NO_NEW_PRIVS,
            1 as c_ulong,
            0 as c_ulong,
            0 as c_ulong,
            0 as c_ulong,
        ))?;
        restrict_self(plan)?;
        drop_capabilities()?;
        if let Some(relay) = &plan.relay {
            super::relay::start(relay)?;
        }
        Ok(())
    }
}

/// Brings `lo` up in the new network namespace (local servers the command starts work).
unsafe fn loopback_up() -> io::Result<()> {
    // SAFETY: a zeroed ifreq is valid; the name fits; the socket is closed on every path.
    unsafe {
        let fd = libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0);
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        let mut request: libc::ifreq = std::mem::zeroed();
        for (i, b) in b"lo".iter().enumerate() {
            request.ifr_name[i] = *b as libc::c_char;
        }
        request.ifr_ifru.ifru_flags = (libc::IFF_UP | libc::IFF_LOOPBACK | libc::IFF_RUNNING) as _;
        let result = libc::ioctl(fd, libc::SIOCSIFFLAGS as _, &request);
        let error = io::Error::last_os_error();
        libc::close(fd);
        if result < 0 {
            return Err(error);
        }
    }
    Ok(())
}

/// Drops every capability: the bounding set (so exec grants none, root included), then
/// the permitted, effective and inheritable sets.
unsafe fn drop_capabilities() -> io::Result<()> {
    #[repr(C)]
    struct Header {
        version: u32,
        pid: c_int,
    }
    #[repr(C)]
    struct Data {
        effective: u32,
        permitted: u32,
        inheritable: u32,
    }
    // SAFETY: prctl and capget/capset with a valid header and two data structs (version 3).
    unsafe {
        for cap in 0..(64 as c_ulong) {
            if libc::prctl(
                libc::PR_CAPBSET_DROP,
                cap,
                0 as c_ulong,
                0 as c_ulong,
                0 as c_ulong,
            ) < 0
            {
                break;
            }
        }
        let header = Header {
            version: 0x2008_0522,
            pid: 0,
        };
        let data = [
            Data {
                effective: 0,
                permitted: 0,
                inheritable: 0,
            },
            Data {
                effective: 0,
                permitted: 0,
                inheritable: 0,
            },
        ];
        check(libc::syscall(libc::SYS_capset, &header as *const Header, data.as_ptr()) as c_int)
    }
}

/// Creates the Landlock ruleset — read everywhere, write where the rules say; signals
/// and abstract sockets scoped to the sandbox where the ABI has scopes — and enforces it.
unsafe fn restrict_self(plan: &ChildPlan) -> io::Result<()> {
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
    let size = match abi {
        0..=3 => 8usize,
        4 | 5 => 16,
        _ => std::mem::size_of::<RulesetAttr>(),
    };
    // SAFETY: `attr` is valid for `size` bytes; fds are closed on every path.
    unsafe {
        let ruleset = libc::syscall(
            libc::SYS_landlock_create_ruleset,
            &attr as *const RulesetAttr,
            size as c_ulong,
            0 as c_ulong,
        ) as c_int;
        if ruleset < 0 {
            return Err(io::Error::last_os_error());
        }
        let result = add_rules(ruleset, plan, handled).and_then(|()| {
            check(libc::syscall(
                libc::SYS_landlock_restrict_self,
                ruleset as c_ulong,
                0 as c_ulong,
            ) as c_int)
        });
        libc::close(ruleset);
        result
    }
}

unsafe fn add_rules(ruleset: c_int, plan: &ChildPlan, handled: u64) -> io::Result<()> {
    for (path, rights) in &plan.rules {
        // SAFETY: valid C string; the O_PATH fd is closed right after use.
        unsafe {
            let fd = libc::open(path.as_ptr(), libc::O_PATH | libc::O_CLOEXEC);
            if fd < 0 {
                // A path gone since the plan was made grants nothing.
                continue;
            }
            let attr = PathBeneathAttr {
                allowed_access: rights & handled,
                parent_fd: fd,
            };
            let result = libc::syscall(
                libc::SYS_landlock_add_rule,
                ruleset as c_ulong,
                RULE_PATH_BENEATH as c_ulong,
                &attr as *const PathBeneathAttr,
                0 as c_ulong,
            ) as c_int;
            let error = io::Error::last_os_error();
            libc::close(fd);
            if result < 0 {
                return Err(error);
            }
        }
    }
    Ok(())
}
