//! The reaper where none is needed (Windows): every group robota starts is a job object
//! that kills its processes when its last handle closes, and the kernel closes robota's
//! handles however it ends — so no process beside robota has to watch. `install` and `run`
//! do nothing.

use std::process::ExitCode;

/// The hidden first argument that would run the reaper instead of robota.
pub const REAP_ARG: &str = "__reap";

/// Nothing to install: the job objects stop the groups when robota ends.
pub fn install() {}

/// Nothing to reap.
pub fn run() -> ExitCode {
    ExitCode::SUCCESS
}
