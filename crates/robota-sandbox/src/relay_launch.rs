//! Starting the domain proxy's relay (`relay.rs`) from the sandboxed child, between fork
//! and exec: once its network namespace is up, the child forks once more and the copy
//! execs this program again as `<program> __sandbox-relay PORT SOCKET` — a fresh process
//! that shares the namespaces, the Landlock domain and the dropped capabilities, dies
//! with the command (`PR_SET_PDEATHSIG`) or with its process group, and gets an empty
//! environment (no secret of robota's). The child waits (at most [`ANSWER_WAIT`]) for the
//! relay's `ready` line on a pipe before it runs the command, so the command never finds
//! the port closed. When the relay cannot start — the exec fails, or the program did not
//! dispatch to the relay (an embedding program that does not call
//! `relay::run_if_requested`) — the command is not run: its stderr says why and it exits
//! 126, as a shell does for a command it cannot run.
//!
//! Everything here runs between fork and exec of a threaded program: system calls on
//! memory prepared by the parent ([`RelayLaunch`]) or on the stack, no allocation, no
//! locks.

use std::ffi::CString;
use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use libc::c_char;
use rustix::event::{PollFd, PollFlags, Timespec};
use rustix::fs::{Mode, OFlags};
use rustix::io::Errno;
use rustix::process::{Pid, Signal, WaitOptions};

use super::relay::{READY, RELAY_ARG};

/// How long the child waits for the relay's answer, as poll slices.
const ANSWER_SLICES: u32 = 100;
const ANSWER_SLICE: Timespec = Timespec {
    tv_sec: 0,
    tv_nsec: 100_000_000,
};
/// How long the child waits for the relay's answer in all.
pub const ANSWER_WAIT: &str = "10 s";
/// The exit status of a command that was not run because its relay did not start.
const NOT_RUN: i32 = 126;
/// The exit status of a relay process whose exec failed.
const EXEC_FAILED: i32 = 127;
/// What the program runs when the spec names none: this very program, as the kernel
/// knows it (so a binary replaced or deleted since robota started still works, and the
/// relay always speaks this version's protocol).
const THIS_PROGRAM: &str = "/proc/self/exe";
/// Why a program would not answer, for the command's stderr.
const DISPATCH_HINT: &[u8] = b"a program that embeds robota's sandbox must call \
robota_sandbox::relay::run_if_requested() first thing in main";

/// The relay's exec, prepared by the parent: the program, its arguments, and the start of
/// the line the command's stderr gets when it fails.
#[derive(Debug)]
pub struct RelayLaunch {
    program: CString,
    /// `argv[0]`, [`RELAY_ARG`], the port, the proxy's socket.
    argv: [CString; 4],
    failure: Vec<u8>,
}

/// Why the relay cannot be prepared.
#[derive(Debug, thiserror::Error)]
pub enum LaunchError {
    /// The proxy's socket path does not fit a Unix socket address.
    #[error("{0} cannot be a Unix socket's address (too long?)")]
    SocketPath(String),
    /// A path has a NUL byte.
    #[error("{0} has a NUL byte")]
    Nul(String),
}

impl RelayLaunch {
    /// The relay that listens on `port` and carries connections to `socket`, run by
    /// `program` (`None`: this program).
    pub fn new(
        program: Option<&Path>,
        socket: &Path,
        port: u16,
    ) -> Result<RelayLaunch, LaunchError> {
        std::os::unix::net::SocketAddr::from_pathname(socket)
            .map_err(|_| LaunchError::SocketPath(socket.display().to_string()))?;
        let c = |bytes: &[u8], what: &dyn std::fmt::Display| {
            CString::new(bytes).map_err(|_| LaunchError::Nul(what.to_string()))
        };
        let shown = match program {
            Some(p) => p.to_path_buf(),
            None => std::env::current_exe().unwrap_or_else(|_| THIS_PROGRAM.into()),
        };
        let exec = program.unwrap_or(Path::new(THIS_PROGRAM));
        let failure = format!(
            "robota's sandbox: the relay to the domain proxy (`{} {RELAY_ARG}`) did not start, \
             so the command was not run: ",
            shown.display()
        );
        Ok(RelayLaunch {
            program: c(exec.as_os_str().as_bytes(), &exec.display())?,
            argv: [
                c(shown.as_os_str().as_bytes(), &shown.display())?,
                c(RELAY_ARG.as_bytes(), &RELAY_ARG)?,
                c(port.to_string().as_bytes(), &port)?,
                c(socket.as_os_str().as_bytes(), &socket.display())?,
            ],
            failure: failure.into_bytes(),
        })
    }
}

/// What came back from the relay on the answer pipe.
enum Answer {
    /// Bytes read (the first `n` of the buffer), then the pipe closed or a line ended.
    Said(usize),
    /// Nothing complete within [`ANSWER_WAIT`].
    Silent,
}

/// Forks and execs the relay, and returns once it listens.
///
/// # Safety
/// Call only in the sandboxed child between fork and exec (a single thread, where only
/// async-signal-safe calls may follow), after its network namespace is set up. When the
/// relay cannot start it does not return: it writes why to the command's stderr and ends
/// the process with `_exit`, which skips every destructor.
pub unsafe fn start(launch: &RelayLaunch) -> io::Result<()> {
    let (answer_read, answer_write) = rustix::pipe::pipe_with(rustix::pipe::PipeFlags::CLOEXEC)?;
    let parent = rustix::process::getpid();
    // SAFETY: the caller runs us single-threaded between fork and exec, so the copy has
    // every lock free; it makes only async-signal-safe system calls (`exec_relay`) and
    // leaves by exec or `_exit`.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Err(io::Error::last_os_error());
    }
    if pid == 0 {
        drop(answer_read);
        exec_relay(launch, parent, &answer_write);
    }
    drop(answer_write);
    let relay = Pid::from_raw(pid);
    let mut buffer = [0u8; 256];
    let answer = read_answer(&answer_read, &mut buffer);
    if let Answer::Said(n) = answer
        && &buffer[..n] == READY
    {
        return Ok(());
    }
    if let Some(relay) = relay {
        let _ = rustix::process::kill_process(relay, Signal::KILL);
        let _ = rustix::process::waitpid(Some(relay), WaitOptions::empty());
    }
    let detail: &[&[u8]] = match answer {
        Answer::Said(n) if buffer[..n].starts_with(b"error: ") => {
            let line = &buffer[b"error: ".len()..n];
            &[line.strip_suffix(b"\n").unwrap_or(line)]
        }
        Answer::Said(0) => &[b"the program exited without starting it: ", DISPATCH_HINT],
        Answer::Said(_) => &[b"the program did not answer as the relay: ", DISPATCH_HINT],
        Answer::Silent => &[
            b"it did not answer within ",
            ANSWER_WAIT.as_bytes(),
            b": ",
            DISPATCH_HINT,
        ],
    };
    // SAFETY: fd 2 is the command's stderr, open for the whole call (std set up the
    // child's stdio before this hook ran); it is only written to, not closed.
    let stderr = unsafe { BorrowedFd::borrow_raw(2) };
    write_all(stderr, &launch.failure);
    for part in detail {
        write_all(stderr, part);
    }
    write_all(stderr, b"\n");
    exit_now(NOT_RUN)
}

/// Reads the relay's answer into `buffer`: up to a line end, the pipe's end, or
/// [`ANSWER_WAIT`].
fn read_answer(pipe: &OwnedFd, buffer: &mut [u8; 256]) -> Answer {
    let mut filled = 0;
    for _ in 0..ANSWER_SLICES {
        let mut polled = [PollFd::new(pipe, PollFlags::IN)];
        match rustix::event::poll(&mut polled, Some(&ANSWER_SLICE)) {
            Ok(0) | Err(Errno::INTR) => continue,
            Ok(_) => {}
            Err(_) => return Answer::Said(filled),
        }
        match rustix::io::read(pipe, &mut buffer[filled..]) {
            Ok(0) => return Answer::Said(filled),
            Ok(n) => {
                filled += n;
                if buffer[..filled].contains(&b'\n') || filled == buffer.len() {
                    return Answer::Said(filled);
                }
            }
            Err(Errno::INTR | Errno::AGAIN) => {}
            Err(_) => return Answer::Said(filled),
        }
    }
    Answer::Silent
}

/// The forked copy: stdout becomes the answer pipe, stdin and stderr `/dev/null`, then
/// the relay program is exec'd. Never returns.
fn exec_relay(launch: &RelayLaunch, parent: Pid, answer: &OwnedFd) -> ! {
    // Die with the sandboxed command (the parent, once it has exec'd); if it is gone
    // already, so is the reason to run.
    let _ = rustix::process::set_parent_process_death_signal(Some(Signal::KILL));
    if rustix::process::getppid() != Some(parent) {
        exit_now(0);
    }
    let stdio = rustix::fs::open(c"/dev/null", OFlags::RDWR | OFlags::CLOEXEC, Mode::empty())
        .and_then(|null| {
            rustix::stdio::dup2_stdin(&null)?;
            rustix::stdio::dup2_stderr(&null)?;
            // dup2 leaves the new descriptor open across exec: the relay answers on it.
            rustix::stdio::dup2_stdout(answer)
        });
    if let Err(e) = stdio {
        fail(
            answer,
            b"cannot set up its standard streams",
            e.raw_os_error(),
        );
    }
    let [zero, one, two, three] = &launch.argv;
    let argv: [*const c_char; 5] = [
        zero.as_ptr(),
        one.as_ptr(),
        two.as_ptr(),
        three.as_ptr(),
        std::ptr::null(),
    ];
    let envp: [*const c_char; 1] = [std::ptr::null()];
    // SAFETY: the program and every argument are NUL-terminated strings in `launch`,
    // which outlives the call; both arrays end with a null pointer. On success the
    // process image is replaced; on failure nothing was changed.
    unsafe { libc::execve(launch.program.as_ptr(), argv.as_ptr(), envp.as_ptr()) };
    let errno = io::Error::last_os_error().raw_os_error().unwrap_or(0);
    fail(answer, b"cannot run it", errno)
}

/// Tells the child why over the answer pipe (`error: WHAT: os error N`), and exits.
fn fail(answer: &OwnedFd, what: &[u8], errno: i32) -> ! {
    let mut digits = [0u8; 12];
    write_all(answer.as_fd(), b"error: ");
    write_all(answer.as_fd(), what);
    write_all(answer.as_fd(), b": os error ");
    write_all(answer.as_fd(), decimal(errno.unsigned_abs(), &mut digits));
    write_all(answer.as_fd(), b"\n");
    exit_now(EXEC_FAILED)
}

/// `n` in decimal, in `digits` (no allocation).
fn decimal(mut n: u32, digits: &mut [u8; 12]) -> &[u8] {
    let mut start = digits.len();
    loop {
        start -= 1;
        digits[start] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            return &digits[start..];
        }
    }
}

/// Writes all of `bytes`, as far as the descriptor takes them.
fn write_all(fd: BorrowedFd<'_>, mut bytes: &[u8]) {
    while !bytes.is_empty() {
        match rustix::io::write(fd, bytes) {
            Ok(0) => return,
            Ok(n) => bytes = &bytes[n..],
            Err(Errno::INTR) => {}
            Err(_) => return,
        }
    }
}

/// Ends the process at once (`_exit`): no destructor, no `atexit` handler, no buffer
/// flushed — what a process forked from a threaded program may do.
fn exit_now(status: i32) -> ! {
    // SAFETY: `_exit` is async-signal-safe and takes no memory; skipping destructors is
    // sound (leaking is), and the forked process owns nothing that needs them.
    unsafe { libc::_exit(status) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_written_in_decimal_without_allocating() {
        let mut digits = [0u8; 12];
        assert_eq!(decimal(0, &mut digits), b"0");
        assert_eq!(decimal(13, &mut digits), b"13");
        assert_eq!(decimal(u32::MAX, &mut digits), b"4294967295");
    }

    #[test]
    fn the_launch_is_prepared_with_its_arguments_and_refuses_long_socket_paths() {
        let launch = RelayLaunch::new(
            Some(Path::new("/usr/bin/robota")),
            Path::new("/tmp/x/proxy.sock"),
            3128,
        )
        .unwrap();
        assert_eq!(launch.program.as_bytes(), b"/usr/bin/robota");
        let args: Vec<&[u8]> = launch.argv.iter().map(|a| a.as_bytes()).collect();
        assert_eq!(
            args,
            [
                &b"/usr/bin/robota"[..],
                RELAY_ARG.as_bytes(),
                b"3128",
                b"/tmp/x/proxy.sock"
            ]
        );
        let this = RelayLaunch::new(None, Path::new("/tmp/x/proxy.sock"), 3128).unwrap();
        assert_eq!(this.program.as_bytes(), THIS_PROGRAM.as_bytes());
        let long = Path::new("/tmp").join("x".repeat(200));
        assert!(matches!(
            RelayLaunch::new(None, &long, 3128),
            Err(LaunchError::SocketPath(_))
        ));
    }
}
