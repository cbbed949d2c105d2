//! The in-namespace end of the domain proxy (`proxy.rs`), a program of its own: the
//! sandboxed child starts it by exec (`relay_launch.rs`) as
//! `<program> __sandbox-relay PORT SOCKET`, inside the command's network namespace, where
//! it listens on `127.0.0.1:PORT` and carries every connection to the proxy's Unix socket
//! outside it, byte for byte, both ways, each connection on its own task (a slow one
//! holds up no other). It runs as an ordinary process — plain Rust, a small tokio
//! runtime — confined like the command (same namespaces, Landlock domain, no
//! capabilities), and dies with it.
//!
//! The program is the one that runs the sandbox, so it must dispatch: the `robota` binary
//! calls [`run_if_requested`] first thing in `main`, and so must any program that embeds
//! robota's sandbox and lets sandboxed commands reach allowed domains. One that does not
//! gets no relay: its sandboxed commands are not run, and say why.

use std::convert::Infallible;
use std::ffi::OsString;
use std::io::Write;
use std::net::Ipv4Addr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use tokio::net::{TcpListener, TcpStream, UnixStream};

/// The hidden first argument that makes a program the relay instead of itself.
pub const RELAY_ARG: &str = "__sandbox-relay";
/// What the relay writes on its stdout once it listens; anything else is why it cannot.
pub(crate) const READY: &[u8] = b"ready\n";
/// How long the relay waits after a failed accept (out of descriptors) before the next.
const ACCEPT_BACKOFF: Duration = Duration::from_millis(50);

/// Why the relay cannot run.
#[derive(Debug, thiserror::Error)]
pub enum RelayError {
    /// The arguments are not `PORT SOCKET`.
    #[error("usage: {RELAY_ARG} PORT SOCKET")]
    Usage,
    /// The port cannot be listened on.
    #[error("cannot listen on 127.0.0.1:{port}: {source}")]
    Listen {
        /// The port asked for.
        port: u16,
        /// What the system said.
        source: std::io::Error,
    },
    /// The relay's runtime or thread could not be started, or its stdout written.
    #[error("cannot start: {0}")]
    Start(#[from] std::io::Error),
    /// The relay's thread panicked.
    #[error("it panicked")]
    Panicked,
}

/// Runs the relay, and exits, when this process was started as one (its first argument
/// is [`RELAY_ARG`]); returns at once otherwise. A program that embeds robota's sandbox
/// calls it first thing in `main`, before it reads its arguments or does anything else
/// (an async `main` may call it too: the relay runs its own runtime on a thread of its
/// own).
pub fn run_if_requested() {
    let mut args = std::env::args_os().skip(1);
    if args.next().is_none_or(|first| first != RELAY_ARG) {
        return;
    }
    let Err(error) = run(args.collect());
    // The sandboxed child reads this line and hands it to the command's stderr.
    let _ = writeln!(std::io::stdout(), "error: {error}");
    std::process::exit(1);
}

/// The relay program: listens, says [`READY`] on stdout, then serves until killed.
fn run(args: Vec<OsString>) -> Result<Infallible, RelayError> {
    let [port, socket] = <[OsString; 2]>::try_from(args).map_err(|_| RelayError::Usage)?;
    let port: u16 = port
        .to_str()
        .and_then(|p| p.parse().ok())
        .ok_or(RelayError::Usage)?;
    let listener = std::net::TcpListener::bind((Ipv4Addr::LOCALHOST, port))
        .and_then(|l| l.set_nonblocking(true).map(|()| l))
        .map_err(|source| RelayError::Listen { port, source })?;
    let socket = PathBuf::from(socket);
    // A thread of its own, so that a `main` already inside a tokio runtime (an async
    // `main`) may dispatch too: a runtime cannot block inside another on one thread.
    std::thread::Builder::new()
        .name("sandbox-relay".to_string())
        .spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()?;
            let listener = {
                let _entered = runtime.enter();
                TcpListener::from_std(listener)?
            };
            let mut stdout = std::io::stdout();
            stdout.write_all(READY)?;
            stdout.flush()?;
            runtime.block_on(serve(listener, socket))
        })?
        .join()
        .unwrap_or(Err(RelayError::Panicked))
}

/// Accepts connections for ever, each carried to the proxy's socket on its own task.
pub(crate) async fn serve(
    listener: TcpListener,
    socket: PathBuf,
) -> Result<Infallible, RelayError> {
    loop {
        match listener.accept().await {
            Ok((client, _)) => {
                let socket = socket.clone();
                tokio::spawn(async move {
                    let _ = carry(client, &socket).await;
                });
            }
            // Out of descriptors, or a connection reset before it was taken: the next
            // accept may succeed.
            Err(_) => tokio::time::sleep(ACCEPT_BACKOFF).await,
        }
    }
}

/// Carries one connection both ways until both ends are done; the end of one direction
/// is passed on (a half close), the other keeps going.
async fn carry(mut client: TcpStream, socket: &Path) -> std::io::Result<()> {
    let mut proxy = UnixStream::connect(socket).await?;
    tokio::io::copy_bidirectional(&mut client, &mut proxy).await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    /// A Unix-socket server that answers each connection with what it read, upper-cased,
    /// once the client has finished writing.
    async fn shouting_server(socket: &Path) -> tokio::task::JoinHandle<()> {
        let listener = tokio::net::UnixListener::bind(socket).unwrap();
        tokio::spawn(async move {
            while let Ok((mut stream, _)) = listener.accept().await {
                tokio::spawn(async move {
                    let mut got = Vec::new();
                    stream.read_to_end(&mut got).await.unwrap();
                    stream.write_all(&got.to_ascii_uppercase()).await.unwrap();
                });
            }
        })
    }

    #[tokio::test]
    async fn connections_are_carried_both_ways_and_a_stalled_one_blocks_no_other() {
        let dir = tempfile::tempdir().unwrap();
        let socket = dir.path().join("proxy.sock");
        let _server = shouting_server(&socket).await;
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let relay = tokio::spawn(serve(listener, socket));
        // One client connects, sends half a message and stalls.
        let mut stalled = TcpStream::connect((Ipv4Addr::LOCALHOST, port))
            .await
            .unwrap();
        stalled.write_all(b"half").await.unwrap();
        // Others still get through, each with its own answer after a half close.
        for word in ["first", "second"] {
            let mut client = TcpStream::connect((Ipv4Addr::LOCALHOST, port))
                .await
                .unwrap();
            client.write_all(word.as_bytes()).await.unwrap();
            client.shutdown().await.unwrap();
            let mut answer = String::new();
            tokio::time::timeout(Duration::from_secs(10), client.read_to_string(&mut answer))
                .await
                .unwrap()
                .unwrap();
            assert_eq!(answer, word.to_ascii_uppercase());
        }
        stalled.write_all(b" done").await.unwrap();
        stalled.shutdown().await.unwrap();
        let mut answer = String::new();
        stalled.read_to_string(&mut answer).await.unwrap();
        assert_eq!(answer, "HALF DONE");
        relay.abort();
    }

    #[tokio::test]
    async fn a_connection_the_proxy_refuses_is_closed_and_the_relay_goes_on() {
        let dir = tempfile::tempdir().unwrap();
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let socket = dir.path().join("proxy.sock");
        let relay = tokio::spawn(serve(listener, socket.clone()));
        // No proxy yet: the connection is closed without a byte.
        let mut client = TcpStream::connect((Ipv4Addr::LOCALHOST, port))
            .await
            .unwrap();
        let mut got = Vec::new();
        client.read_to_end(&mut got).await.unwrap();
        assert!(got.is_empty());
        let _server = shouting_server(&socket).await;
        let mut client = TcpStream::connect((Ipv4Addr::LOCALHOST, port))
            .await
            .unwrap();
        client.write_all(b"again").await.unwrap();
        client.shutdown().await.unwrap();
        let mut answer = String::new();
        client.read_to_string(&mut answer).await.unwrap();
        assert_eq!(answer, "AGAIN");
        relay.abort();
    }

    #[test]
    fn wrong_arguments_are_a_usage_error() {
        assert!(matches!(run(vec![]), Err(RelayError::Usage)));
        assert!(matches!(
            run(vec!["http".into(), "/tmp/s".into()]),
            Err(RelayError::Usage)
        ));
    }
}
