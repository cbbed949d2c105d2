//! mitmproxy, a real TLS-inspecting proxy, as a company network puts one in front of the
//! internet: `mitmdump` in regular (CONNECT) mode with a fresh CA of its own in a temp
//! directory, re-signing every server certificate with it. An addon maps one made-up host
//! name to a loopback port, so a test's HTTPS mock is reachable by a name that is not
//! loopback (robota reaches loopback servers directly, without a proxy). `.ci/run`
//! installs mitmproxy into `$HOME/.cache/robota-ci/mitmproxy`.
#![allow(dead_code)]

use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Where `mitmdump` is: `ROBOTA_TEST_MITMDUMP`, the CI cache's venv, or the PATH.
pub fn mitmdump() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("ROBOTA_TEST_MITMDUMP").map(PathBuf::from) {
        return path.is_file().then_some(path);
    }
    let cached = std::env::var_os("HOME")
        .map(|home| PathBuf::from(home).join(".cache/robota-ci/mitmproxy/bin/mitmdump"));
    if let Some(cached) = cached.filter(|p| p.is_file()) {
        return Some(cached);
    }
    super::process::have("mitmdump").then(|| PathBuf::from("mitmdump"))
}

/// A running mitmdump; dropping it ends the process.
pub struct Mitm {
    child: Child,
    port: u16,
    confdir: PathBuf,
}

impl Mitm {
    /// Starts `program` with its CA in `dir`, sending `host`'s connections to
    /// `127.0.0.1:target_port` (whose self-signed certificate it accepts, as a proxy told
    /// to), and waits until it accepts connections.
    pub fn start(program: &Path, dir: &Path, host: &str, target_port: u16) -> Mitm {
        Mitm::start_mapping(program, dir, &[(host, target_port)])
    }

    /// [`Mitm::start`] for several made-up hosts, each sent to its loopback port.
    pub fn start_mapping(program: &Path, dir: &Path, hosts: &[(&str, u16)]) -> Mitm {
        let confdir = dir.join("mitmproxy");
        std::fs::create_dir_all(&confdir).unwrap();
        let addon = dir.join("map_host.py");
        let ports: Vec<String> = hosts
            .iter()
            .map(|(host, port)| format!("{host:?}: {port}"))
            .collect();
        std::fs::write(
            &addon,
            format!(
                "PORTS = {{{}}}\n\
                 def server_connect(data):\n    \
                 if data.server.address and data.server.address[0] in PORTS:\n        \
                 data.server.address = (\"127.0.0.1\", PORTS[data.server.address[0]])\n",
                ports.join(", ")
            ),
        )
        .unwrap();
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map(|a| a.port())
            .unwrap();
        let child = Command::new(program)
            .args(["--listen-host", "127.0.0.1", "--listen-port"])
            .arg(port.to_string())
            .args(["--set", &format!("confdir={}", confdir.display())])
            .args(["--ssl-insecure", "-q", "-s"])
            .arg(&addon)
            .env("HOME", dir)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mitm = Mitm {
            child,
            port,
            confdir,
        };
        mitm.wait_ready();
        mitm
    }

    /// Polls until the proxy listens and its CA is written (a readiness check, 60 s cap).
    fn wait_ready(&self) {
        let deadline = Instant::now() + Duration::from_secs(60);
        while Instant::now() < deadline {
            if self.ca_pem().is_file() && TcpStream::connect(("127.0.0.1", self.port)).is_ok() {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        panic!("mitmdump did not start listening on port {}", self.port);
    }

    /// `http://127.0.0.1:PORT`, for `HTTPS_PROXY`.
    pub fn proxy_url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// The proxy's CA certificate (PEM), what a company hands its developers.
    pub fn ca_pem(&self) -> PathBuf {
        self.confdir.join("mitmproxy-ca-cert.pem")
    }
}

impl Drop for Mitm {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
