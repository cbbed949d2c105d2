//! Giving freed heap back to the system after a compaction dropped most of a conversation:
//! glibc's allocator keeps freed pages of its arenas (those of worker threads above all)
//! until asked, so without this a process's resident size stays at its high-water mark.

/// Asks the allocator to return freed memory to the system (`malloc_trim(0)` with glibc on
/// Linux; nothing elsewhere).
pub fn return_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim takes no pointers; it walks the allocator's own free lists under
    // each arena's lock, so it is sound from any thread at any time.
    unsafe {
        libc::malloc_trim(0);
    }
}
