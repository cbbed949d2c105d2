//! What a checkpoint reads from and writes to a file's metadata, per platform: the
//! executable bit, the stat key that says a file changed (mtime, inode, mode), and
//! symbolic links. On Unix these are the permission bits and `stat`'s fields; Windows has
//! no execute bit and no inode in `std`, so its key is the size and modification time with
//! the read-only flag, and a restored link is a file symlink.

use std::fs;
use std::io;
use std::path::Path;

/// Whether the file's permission bits let someone run it (never, on Windows).
pub(super) fn is_executable(meta: &fs::Metadata) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        meta.permissions().mode() & 0o111 != 0
    }
    #[cfg(not(unix))]
    {
        let _ = meta;
        false
    }
}

/// Gives the file at `path` the mode a restored file gets: 0755 when `executable`, else
/// 0644 (nothing on Windows).
pub(super) fn set_executable(path: &Path, executable: bool) -> io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = if executable { 0o755 } else { 0o644 };
        fs::set_permissions(path, fs::Permissions::from_mode(mode))
    }
    #[cfg(not(unix))]
    {
        let _ = (path, executable);
        Ok(())
    }
}

/// Makes `path` a symbolic link to `target`.
pub(super) fn symlink(target: &str, path: &Path) -> io::Result<()> {
    #[cfg(unix)]
    return std::os::unix::fs::symlink(target, path);
    #[cfg(windows)]
    return std::os::windows::fs::symlink_file(target, path);
}

/// The modification time (nanoseconds since the epoch), inode and mode of a file.
pub(super) fn change_key(meta: &fs::Metadata) -> (i64, u64, u32) {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        (
            meta.mtime().saturating_mul(1_000_000_000) + meta.mtime_nsec(),
            meta.ino(),
            meta.mode(),
        )
    }
    #[cfg(not(unix))]
    {
        let mtime_ns = meta
            .modified()
            .ok()
            .and_then(|t| t.duration_since(std::time::SystemTime::UNIX_EPOCH).ok())
            .map_or(0, |d| d.as_nanos() as i64);
        (mtime_ns, 0, u32::from(meta.permissions().readonly()))
    }
}
