//! The in-namespace end of the domain proxy (`proxy.rs`): started by the sandboxed child
//! just before exec, a process that listens on `127.0.0.1:3128` inside the command's own
//! network namespace and carries every connection to the proxy's Unix socket outside it,
//! byte for byte, both ways. It is forked from the child (so it shares the namespaces,
//! the Landlock domain and the dropped capabilities), holds no file but its sockets, and
//! dies with the command (`PR_SET_PDEATHSIG`) or with its process group. Like the rest of
//! the child's work it only makes system calls on stack memory: no allocation, no locks.

use std::io;

use libc::{c_int, c_void};

/// Connections carried at once; more wait in the listen queue.
const MAX_PAIRS: usize = 32;
/// Bytes moved per read.
const CHUNK: usize = 16 * 1024;

/// What the relay needs, prepared by the parent.
#[derive(Debug)]
pub struct RelayPlan {
    /// The proxy's socket path (no NUL, shorter than `sun_path`).
    pub socket_path: Vec<u8>,
    pub port: u16,
}

impl RelayPlan {
    /// `None` when the path does not fit a Unix socket address.
    pub fn new(socket_path: &std::path::Path, port: u16) -> Option<RelayPlan> {
        use std::os::unix::ffi::OsStrExt;
        let bytes = socket_path.as_os_str().as_bytes();
        // SAFETY: a zeroed sockaddr_un is valid; only its size is read.
        let room = unsafe { std::mem::zeroed::<libc::sockaddr_un>() }
            .sun_path
            .len();
        (bytes.len() < room && !bytes.contains(&0)).then(|| RelayPlan {
            socket_path: bytes.to_vec(),
            port,
        })
    }
}

fn check(result: c_int) -> io::Result<c_int> {
    if result < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(result)
    }
}

/// Opens the listener and forks the relay; the caller goes on to exec.
///
/// # Safety
/// Call only in the sandboxed child between fork and exec, after its network namespace
/// is set up.
pub unsafe fn start(plan: &RelayPlan) -> io::Result<()> {
    // SAFETY: plain system calls on stack values and the plan's bytes.
    unsafe {
        let listener = check(libc::socket(
            libc::AF_INET,
            libc::SOCK_STREAM | libc::SOCK_CLOEXEC,
            0,
        ))?;
        let one: c_int = 1;
        libc::setsockopt(
            listener,
            libc::SOL_SOCKET,
            libc::SO_REUSEADDR,
            (&one as *const c_int).cast(),
            size_of::<c_int>() as libc::socklen_t,
        );
        let mut address: libc::sockaddr_in = std::mem::zeroed();
        address.sin_family = libc::AF_INET as libc::sa_family_t;
        address.sin_port = plan.port.to_be();
        address.sin_addr.s_addr = u32::from_be_bytes([127, 0, 0, 1]).to_be();
        check(libc::bind(
            listener,
            (&address as *const libc::sockaddr_in).cast(),
            size_of::<libc::sockaddr_in>() as libc::socklen_t,
        ))?;
        check(libc::listen(listener, 64))?;
        let parent = libc::getpid();
        let pid = check(libc::fork())?;
        if pid > 0 {
            libc::close(listener);
            return Ok(());
        }
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
        if libc::getppid() != parent {
            libc::_exit(0);
        }
        // Nothing but the listener stays open: the command's pipes must close when it ends.
        for fd in 0..listener {
            libc::close(fd);
        }
        libc::syscall(libc::SYS_close_range, listener as u32 + 1, u32::MAX, 0);
        serve(listener, plan);
        libc::_exit(0);
    }
}

/// One carried connection: the client's end, the proxy's end, and which way is still
/// open for reading.
#[derive(Clone, Copy)]
struct Pair {
    client: c_int,
    proxy: c_int,
    client_open: bool,
    proxy_open: bool,
}

const NO_PAIR: Pair = Pair {
    client: -1,
    proxy: -1,
    client_open: false,
    proxy_open: false,
};

/// The relay's loop: accept, connect to the proxy, move bytes. Never returns.
unsafe fn serve(listener: c_int, plan: &RelayPlan) {
    // SAFETY: every buffer below lives on this stack; the address is built from the
    // plan's bytes, which fit (checked in `RelayPlan::new`).
    unsafe {
        let mut proxy_address: libc::sockaddr_un = std::mem::zeroed();
        proxy_address.sun_family = libc::AF_UNIX as libc::sa_family_t;
        for (i, b) in plan.socket_path.iter().enumerate() {
            proxy_address.sun_path[i] = *b as libc::c_char;
        }
        let mut pairs = [NO_PAIR; MAX_PAIRS];
        let mut polled = [libc::pollfd {
            fd: -1,
            events: 0,
            revents: 0,
        }; 1 + 2 * MAX_PAIRS];
        // For each polled fd after the listener: its pair and whether it is the client.
        let mut owner = [(0usize, false); 1 + 2 * MAX_PAIRS];
        let mut buffer = [0u8; CHUNK];
        loop {
            polled[0] = libc::pollfd {
                fd: listener,
                events: libc::POLLIN,
                revents: 0,
            };
            let mut count = 1;
            for (i, pair) in pairs.iter().enumerate() {
                for (fd, open, is_client) in [
                    (pair.client, pair.client_open, true),
                    (pair.proxy, pair.proxy_open, false),
                ] {
                    if fd >= 0 && open {
                        polled[count] = libc::pollfd {
                            fd,
                            events: libc::POLLIN,
                            revents: 0,
                        };
                        owner[count] = (i, is_client);
                        count += 1;
                    }
                }
            }
            if libc::poll(polled.as_mut_ptr(), count as libc::nfds_t, -1) < 0 {
                continue;
            }
            if polled[0].revents & libc::POLLIN != 0 {
                accept(listener, &proxy_address, &mut pairs);
            }
            for k in 1..count {
                if polled[k].revents == 0 {
                    continue;
                }
                let (i, from_client) = owner[k];
                let pair = &mut pairs[i];
                let (from, to) = if from_client {
                    (pair.client, pair.proxy)
                } else {
                    (pair.proxy, pair.client)
                };
                let read = libc::recv(from, buffer.as_mut_ptr().cast::<c_void>(), CHUNK, 0);
                let sent = read > 0 && send_all(to, &buffer[..read as usize]);
                if sent {
                    continue;
                }
                if read > 0 {
                    // The other end is gone: so is the connection.
                    pair.client_open = false;
                    pair.proxy_open = false;
                } else {
                    // End of this direction: pass it on, keep the other way going.
                    libc::shutdown(to, libc::SHUT_WR);
                    if from_client {
                        pair.client_open = false;
                    } else {
                        pair.proxy_open = false;
                    }
                }
                if !pair.client_open && !pair.proxy_open {
                    libc::close(pair.client);
                    libc::close(pair.proxy);
                    *pair = NO_PAIR;
                }
            }
        }
    }
}

/// Takes one waiting connection and pairs it with a new one to the proxy.
unsafe fn accept(listener: c_int, proxy: &libc::sockaddr_un, pairs: &mut [Pair; MAX_PAIRS]) {
    // SAFETY: plain system calls; `proxy` is a complete address.
    unsafe {
        let client = libc::accept4(
            listener,
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            libc::SOCK_CLOEXEC,
        );
        if client < 0 {
            return;
        }
        let Some(slot) = pairs.iter_mut().find(|p| p.client < 0) else {
            libc::close(client);
            return;
        };
        let upstream = libc::socket(libc::AF_UNIX, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0);
        if upstream < 0
            || libc::connect(
                upstream,
                (proxy as *const libc::sockaddr_un).cast(),
                size_of::<libc::sockaddr_un>() as libc::socklen_t,
            ) < 0
        {
            libc::close(upstream);
            libc::close(client);
            return;
        }
        *slot = Pair {
            client,
            proxy: upstream,
            client_open: true,
            proxy_open: true,
        };
    }
}

/// Sends all of `bytes` (without SIGPIPE on a closed peer); false when it cannot.
unsafe fn send_all(fd: c_int, mut bytes: &[u8]) -> bool {
    while !bytes.is_empty() {
        // SAFETY: `bytes` is a valid buffer.
        let sent = unsafe {
            libc::send(
                fd,
                bytes.as_ptr().cast::<c_void>(),
                bytes.len(),
                libc::MSG_NOSIGNAL,
            )
        };
        if sent <= 0 {
            return false;
        }
        bytes = &bytes[sent as usize..];
    }
    true
}
