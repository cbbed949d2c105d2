//! What tests ask of processes the real binary started: whether one is gone.

/// Whether the process `pid` is gone (or a zombie nobody reaped yet).
pub fn process_gone(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat
            .rsplit_once(')')
            .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z')),
    }
}
