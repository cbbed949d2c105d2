//! The macOS backend: each sandboxed command runs under `/usr/bin/sandbox-exec -p PROFILE
//! --`, the profile generated from its spec (`seatbelt.rs`). With `allowedDomains`, a
//! relay ([`crate::relay::serve`], on robota's own runtime) listens on a loopback port of
//! its own and carries each connection to the domain proxy's Unix socket; the profile lets
//! the command reach that port and nothing else, and the proxy variables name it.
//!
//! The sandbox is "available" when a `true` started under a generated profile exits 0
//! (checked once per process, [`check`]).

use std::ffi::OsString;
use std::net::Ipv4Addr;
use std::path::Path;

use crate::seatbelt::{ProfileRules, profile};
use crate::{PrepareError, PreparedSandbox, SandboxDirs, SandboxSpec, command_env, relay};

/// The program that runs a command under a Seatbelt profile.
const SANDBOX_EXEC: &str = "/usr/bin/sandbox-exec";

/// The relay to the domain proxy, on the runtime that prepared the sandbox; stopped when
/// dropped.
#[derive(Debug)]
pub(crate) struct RelayTask(tokio::task::AbortHandle);

impl Drop for RelayTask {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Whether Seatbelt confines commands here: `Err` says why not.
pub(crate) fn check() -> Result<(), String> {
    if !Path::new(SANDBOX_EXEC).is_file() {
        return Err(format!("{SANDBOX_EXEC} is missing"));
    }
    let dirs = SandboxDirs::create().map_err(|e| format!("cannot make its directory: {e}"))?;
    let spec = SandboxSpec {
        cwd: dirs.tmp.clone(),
        writable: vec![dirs.tmp.clone()],
        ..SandboxSpec::default()
    };
    let text = profile(&ProfileRules::for_spec(&spec, None)).map_err(|e| e.to_string())?;
    let status = std::process::Command::new(SANDBOX_EXEC)
        .arg("-p")
        .arg(text)
        .args(["--", "/bin/sh", "-c", "exit 0"])
        .current_dir(&dirs.tmp)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .map_err(|e| format!("{SANDBOX_EXEC} could not start: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!(
            "a command under a Seatbelt profile failed ({status})"
        ))
    }
}

/// Starts the relay to the proxy's socket on a free loopback port, on the current tokio
/// runtime.
fn start_relay(socket: &Path) -> Result<(RelayTask, u16), PrepareError> {
    let listener = std::net::TcpListener::bind((Ipv4Addr::LOCALHOST, 0))?;
    listener.set_nonblocking(true)?;
    let port = listener.local_addr()?.port();
    let runtime = tokio::runtime::Handle::try_current().map_err(|e| {
        std::io::Error::other(format!(
            "the relay to the domain proxy needs a tokio runtime: {e}"
        ))
    })?;
    let listener = {
        let _entered = runtime.enter();
        tokio::net::TcpListener::from_std(listener)?
    };
    let socket = socket.to_path_buf();
    let task = runtime.spawn(async move {
        let _ = relay::serve(listener, socket).await;
    });
    Ok((RelayTask(task.abort_handle()), port))
}

/// The sandbox for `spec`: its profile, and the relay when domains are allowed.
pub(crate) fn prepare(
    spec: &SandboxSpec,
    dirs: &SandboxDirs,
) -> Result<PreparedSandbox, PrepareError> {
    let (relay, port) = match &spec.proxy_socket {
        Some(socket) if !spec.network => {
            let (task, port) = start_relay(socket)?;
            (Some(task), Some(port))
        }
        _ => (None, None),
    };
    let text = profile(&ProfileRules::for_spec(spec, port))?;
    let wrapper: Vec<OsString> = vec![SANDBOX_EXEC.into(), "-p".into(), text.into(), "--".into()];
    Ok(PreparedSandbox {
        wrapper,
        env: command_env(dirs, port),
        _relay: relay,
    })
}
