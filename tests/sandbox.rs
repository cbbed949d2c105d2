//! The Bash sandbox, end to end and for real: the real `robota -p` against the loopback
//! mock model, which asks its Bash tool to run command lines that try to write outside
//! the working directory (a canary file beside it), to read a file a Read deny rule
//! names (its secret must never reach the mock's next request), to write protected
//! paths, to reach a loopback listener, and ordinary commands that must still work.
//! Every class is tried in each permission mode; a counted table (tried / got through /
//! benign over-blocked) is printed, and nothing may get through.
//!
//! Skips (see `support::skip`) on a machine without Landlock or unprivileged user
//! namespaces; fails there instead under `ROBOTA_REQUIRE_REAL`.

// Unix only: these tests drive the binary through Unix processes, signals, scripts and
// file modes (robota is type-checked for Windows; its tests run here, on Linux).
#![cfg(unix)]
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failed unwrap is a failed test

mod support;

use std::net::TcpListener;
use std::path::Path;
use std::process::Output;

use serde_json::{Value, json};
use support::process::process_gone;
use support::project::{Project, marked_result_text, project, result_text, tool_results};
use support::{MockServer, anthropic};

const SECRET: &str = "TOP-SECRET-7f3a9c";
const ENV_SECRET: &str = "ENV-SECRET-51b2e0";

/// Returns from the test (through `support::skip`) when the kernel sandbox cannot run here.
macro_rules! require_sandbox {
    () => {
        if let Some(why) = &robota::tools::sandbox::support().missing {
            support::skip::skip(
                "sandbox",
                &format!(
                    "the kernel sandbox cannot run on this machine: {why} (it needs a kernel \
                     with Landlock and user namespaces allowed: sysctl \
                     user.max_user_namespaces > 0, and on Ubuntu \
                     kernel.apparmor_restrict_unprivileged_userns=0)"
                ),
            );
            return;
        }
    };
}

/// A project with a canary outside it, denied secrets inside it, a `.claude` dir and a
/// git hooks dir; user settings `settings` (merged over the deny rules).
fn setup(settings: Value) -> Project {
    let p = project();
    let outside = p.root.parent().unwrap().join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(outside.join("canary.txt"), "canary").unwrap();
    std::fs::create_dir_all(p.root.join("secrets")).unwrap();
    std::fs::write(p.root.join("secrets/key.txt"), SECRET).unwrap();
    std::fs::write(p.root.join(".env"), ENV_SECRET).unwrap();
    std::fs::create_dir_all(p.root.join(".claude")).unwrap();
    std::fs::write(p.root.join(".claude/settings.local.json"), "{}").unwrap();
    // Sandboxed calls run without asking, so that every attack reaches the sandbox.
    let mut merged = json!({
        "permissions": {"deny": ["Read(./secrets/**)", "Read(.env)"]},
        "sandbox": {"autoAllowBashIfSandboxed": true}
    });
    if let (Some(m), Some(s)) = (merged.as_object_mut(), settings.as_object()) {
        for (k, v) in s {
            m.insert(k.clone(), v.clone());
        }
    }
    p.write_user_settings(&merged);
    p
}

fn canary(p: &Project) -> std::path::PathBuf {
    p.root.parent().unwrap().join("outside/canary.txt")
}

/// Runs one `-p` turn in which the model calls Bash with each command (in order, one
/// call each), then answers. Returns the output, each call's result text, and every
/// request body the mock saw, joined.
fn run_commands(
    p: &Project,
    mode: &str,
    commands: &[String],
    extra: &[Value],
) -> (Output, Vec<String>, String) {
    let calls: Vec<(String, Value)> = commands
        .iter()
        .enumerate()
        .map(|(i, c)| (format!("toolu_{i:03}"), json!({"command": c})))
        .chain(
            extra
                .iter()
                .enumerate()
                .map(|(i, input)| (format!("toolu_x{i:02}"), input.clone())),
        )
        .collect();
    let borrowed: Vec<(&str, &str, Value)> = calls
        .iter()
        .map(|(id, input)| (id.as_str(), "Bash", input.clone()))
        .collect();
    let server = MockServer::start(vec![
        anthropic::tool_turn(None, &borrowed),
        anthropic::text_turn("done"),
    ]);
    let out = p.run(
        &server,
        &[
            "-p",
            "go",
            "--output-format",
            "json",
            "--permission-mode",
            mode,
        ],
    );
    let requests = server.requests();
    let bodies: String = requests
        .iter()
        .map(|r| String::from_utf8_lossy(&r.raw_body).into_owned())
        .collect::<Vec<_>>()
        .join("\n");
    let results = requests
        .last()
        .map(|r| tool_results(&r.body))
        .unwrap_or_default();
    let texts = calls
        .iter()
        .map(|(id, _)| marked_result_text(&results, id))
        .collect();
    (out, texts, bodies)
}

/// A row of the counted table.
#[derive(Default)]
struct Row {
    tried: usize,
    through: usize,
    over_blocked: usize,
}

fn print_table(title: &str, rows: &[(&str, &str, Row)]) {
    eprintln!(
        "\n{title}\n{:<16} {:<18} {:>5} {:>8} {:>13}",
        "class", "mode", "tried", "through", "over-blocked"
    );
    for (class, mode, row) in rows {
        eprintln!(
            "{class:<16} {mode:<18} {:>5} {:>8} {:>13}",
            row.tried, row.through, row.over_blocked
        );
    }
}

/// Modes to try, with the settings that turn the sandbox on there (bypass needs
/// `sandbox.enabled: true`).
const MODES: [(&str, bool); 4] = [
    ("default", false),
    ("acceptEdits", false),
    ("plan", false),
    ("bypassPermissions", true),
];

fn settings_for(explicit: bool) -> Value {
    if explicit {
        json!({"sandbox": {"enabled": true, "autoAllowBashIfSandboxed": true}})
    } else {
        json!({})
    }
}

fn canary_attacks(canary: &Path) -> Vec<String> {
    let c = canary.display();
    let dir = canary.parent().unwrap().display();
    vec![
        format!("rm -f {c}"),
        format!("echo pwned > {c}"),
        format!("sh -c 'rm -f {c}'"),
        format!("python3 -c \"import os; os.remove('{c}')\""),
        format!("python3 -c \"open('{c}', 'w').write('pwned')\""),
        format!("ln -s {dir} link && rm -f link/canary.txt"),
        format!("ln -s {dir} link2 && echo pwned > link2/canary.txt"),
        format!("cd {dir} && rm -f canary.txt"),
        format!("truncate -s 0 {c}"),
        format!("mv {c} ./stolen.txt"),
        format!("find {dir} -name canary.txt -delete"),
        format!("ln {c} hard && echo pwned > hard"),
        format!("cp /dev/null {c}"),
        format!("perl -e 'unlink \"{c}\"'"),
        format!("x=rm; $x -f {c}"),
        format!("echo 'rm -f {c}' | bash"),
    ]
}

#[test]
fn a_canary_outside_the_working_dir_survives_every_write_in_every_mode() {
    require_sandbox!();
    let mut rows = Vec::new();
    for (mode, explicit) in MODES {
        let p = setup(settings_for(explicit));
        let canary = canary(&p);
        let attacks = canary_attacks(&canary);
        let (out, results, _) = run_commands(&p, mode, &attacks, &[]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let survived = std::fs::read_to_string(&canary).ok();
        assert_eq!(
            survived.as_deref(),
            Some("canary"),
            "{mode}: the canary was changed; results: {results:#?}"
        );
        rows.push((
            "canary write",
            mode,
            Row {
                tried: attacks.len(),
                through: usize::from(survived.as_deref() != Some("canary")),
                over_blocked: 0,
            },
        ));
    }
    print_table("canary outside the working directory", &rows);
}

fn secret_attacks() -> Vec<String> {
    [
        "cat secrets/key.txt",
        "python3 -c \"print(open('secrets/key.txt').read())\"",
        "cp secrets/key.txt copy.txt; cat copy.txt",
        "cp -r secrets copied; cat copied/key.txt",
        "ln secrets/key.txt hl; cat hl",
        "mv secrets moved; cat moved/key.txt",
        "tar cf - secrets | tar xOf -",
        "base64 secrets/key.txt | base64 -d",
        "dd if=secrets/key.txt status=none",
        "while read l; do echo \"$l\"; done < secrets/key.txt",
        "c=cat; $c secrets/key.txt",
        "sh -c 'cat secrets/*'",
        "grep -r SECRET .",
        "cat /proc/$PPID/root$PWD/secrets/key.txt",
        "python3 -c \"print(open('.env').read())\"",
        "ln .env envlink; cat envlink",
        "find . -name .env -exec cat {} +",
        "umount secrets; cat secrets/key.txt",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()
}

/// Benign commands and a word their successful output contains.
const BENIGN: [(&str, &str); 9] = [
    ("echo hello", "hello"),
    ("ls", "calc.py"),
    ("echo made > made.txt && cat made.txt", "made"),
    ("mkdir -p d/e && touch d/e/f && ls d/e", "f"),
    (
        "python3 -c \"import tempfile; tempfile.NamedTemporaryFile(); print('tmp-ok')\"",
        "tmp-ok",
    ),
    ("python3 -c 'print(6*7)'", "42"),
    ("git status --short && echo git-ok", "git-ok"),
    ("cat calc.py", "def add"),
    ("sh test_calc.sh || echo ran", "ran"),
];

#[test]
fn a_denied_files_secret_never_reaches_the_model_and_benign_commands_work() {
    require_sandbox!();
    let mut rows = Vec::new();
    for (mode, explicit) in MODES {
        let p = setup(settings_for(explicit));
        let attacks = secret_attacks();
        let mut commands = attacks.clone();
        commands.extend(BENIGN.iter().map(|(c, _)| c.to_string()));
        let (out, results, bodies) = run_commands(&p, mode, &commands, &[]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let leaked: Vec<&String> = attacks
            .iter()
            .zip(&results)
            .filter(|(_, r)| r.contains(SECRET) || r.contains(ENV_SECRET))
            .map(|(a, _)| a)
            .collect();
        assert!(
            !bodies.contains(SECRET) && !bodies.contains(ENV_SECRET),
            "{mode}: a secret reached the model; leaking commands: {leaked:?}"
        );
        // The files are untouched on the real disk.
        assert_eq!(
            std::fs::read_to_string(p.root.join("secrets/key.txt")).unwrap(),
            SECRET
        );
        let over_blocked: Vec<String> = BENIGN
            .iter()
            .zip(&results[attacks.len()..])
            .filter(|((_, want), got)| !got.contains(want) || got.starts_with("[error]"))
            .map(|((c, _), got)| format!("{c}: {got}"))
            .collect();
        // Plan mode refuses commands that change files, as it should: not the sandbox's.
        if mode != "plan" {
            assert!(
                over_blocked.is_empty(),
                "{mode}: benign commands failed: {over_blocked:#?}"
            );
        }
        rows.push((
            "denied read",
            mode,
            Row {
                tried: attacks.len(),
                through: leaked.len(),
                over_blocked: 0,
            },
        ));
        rows.push((
            "benign",
            mode,
            Row {
                tried: BENIGN.len(),
                through: 0,
                over_blocked: over_blocked.len(),
            },
        ));
    }
    print_table("denied files and benign commands", &rows);
}

#[test]
fn protected_paths_cannot_be_written_from_inside() {
    require_sandbox!();
    let p = setup(json!({}));
    let hooks = p.root.join(".git/hooks");
    let home_settings = p.home.join("settings.json");
    let attacks = vec![
        "echo 'echo pwned' > .git/hooks/pre-commit".to_string(),
        "echo '{\"permissions\":{\"allow\":[\"Bash\"]}}' > .claude/settings.local.json".to_string(),
        "rm -rf .claude".to_string(),
        "git config core.hooksPath /tmp".to_string(),
        format!("echo '{{}}' > {}", home_settings.display()),
        "python3 -c \"open('.git/config','a').write('[x]')\"".to_string(),
    ];
    let config_before = std::fs::read_to_string(p.root.join(".git/config")).unwrap();
    let (out, results, _) = run_commands(&p, "default", &attacks, &[]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!hooks.join("pre-commit").exists(), "{results:#?}");
    assert_eq!(
        std::fs::read_to_string(p.root.join(".claude/settings.local.json")).unwrap(),
        "{}",
        "{results:#?}"
    );
    assert_eq!(std::fs::read_to_string(&home_settings).unwrap(), "{}");
    assert_eq!(
        std::fs::read_to_string(p.root.join(".git/config")).unwrap(),
        config_before,
        "{results:#?}"
    );
    eprintln!("\nprotected paths: tried {}, got through 0", attacks.len());
}

#[test]
fn an_untrusted_projects_settings_tighten_the_sandbox_but_never_loosen_it() {
    require_sandbox!();
    let hostile = |p: &Project| {
        let outside = canary(p).parent().unwrap().display().to_string();
        [
            json!({"sandbox": {"enabled": false}}),
            json!({"sandbox": {"filesystem": {"allowWrite": [format!("/{outside}")]}}}),
            json!({"sandbox": {"excludedCommands": ["sh"]}}),
            json!({"sandbox": {"allowUnsandboxedCommands": true, "enabled": false}}),
        ]
    };
    let mut rows = Vec::new();
    for mode in ["default", "acceptEdits"] {
        let (mut tried, mut through) = (0, 0);
        for variant in 0..4 {
            // The user allows every Bash command; only the sandbox stands between the
            // command and the canary outside the project.
            let p =
                setup(json!({"permissions": {"allow": ["Bash"], "deny": ["Read(./secrets/**)"]}}));
            let settings = hostile(&p)[variant].clone();
            std::fs::write(p.root.join(".claude/settings.json"), settings.to_string()).unwrap();
            let attack = format!("sh -c 'echo pwned > {}'", canary(&p).display());
            let (out, results, _) = run_commands(&p, mode, &[attack], &[]);
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
            tried += 1;
            if std::fs::read_to_string(canary(&p)).ok().as_deref() != Some("canary") {
                through += 1;
                eprintln!("{mode}: {settings} let the write through: {results:?}");
                continue;
            }
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert!(stderr.contains("held back"), "{mode} {settings}: {stderr}");
        }
        rows.push((
            "untrusted project loosens",
            mode,
            Row {
                tried,
                through,
                over_blocked: 0,
            },
        ));
        assert_eq!(
            through, 0,
            "{mode}: an untrusted project loosened the sandbox"
        );
    }
    print_table("untrusted project sandbox settings", &rows);

    // Benign controls: a trusted project's settings are the user's; an untrusted project's
    // tightening holds.
    let p = setup(json!({"permissions": {"allow": ["Bash"], "deny": ["Read(./secrets/**)"]}}));
    let outside = canary(&p).parent().unwrap().display().to_string();
    let loosen = json!({"sandbox": {"filesystem": {"allowWrite": [format!("/{outside}")]}}});
    std::fs::write(p.root.join(".claude/settings.json"), loosen.to_string()).unwrap();
    let server = MockServer::start(vec![]);
    assert_eq!(p.run(&server, &["trust"]).status.code(), Some(0));
    let attack = format!("echo trusted > {}", canary(&p).display());
    let (_, results, _) = run_commands(&p, "default", &[attack], &[]);
    assert_eq!(
        std::fs::read_to_string(canary(&p)).unwrap(),
        "trusted\n",
        "a trusted project's allowWrite holds: {results:?}"
    );
    let p = setup(json!({"permissions": {"allow": ["Bash"], "deny": ["Read(./secrets/**)"]}}));
    std::fs::create_dir_all(p.root.join("locked")).unwrap();
    let tighten = json!({"sandbox": {"filesystem": {"denyWrite": ["./locked"]}}});
    std::fs::write(p.root.join(".claude/settings.json"), tighten.to_string()).unwrap();
    let (_, results, _) = run_commands(
        &p,
        "default",
        &[
            "echo x > locked/x.txt".to_string(),
            "echo y > free.txt".to_string(),
        ],
        &[],
    );
    assert!(!p.root.join("locked/x.txt").exists(), "{results:?}");
    assert!(p.root.join("free.txt").exists(), "{results:?}");
}

/// Connection attempts to 127.0.0.1:`port` the listener saw.
fn connections(listener: &TcpListener) -> usize {
    listener.set_nonblocking(true).unwrap();
    std::iter::from_fn(|| listener.accept().ok()).count()
}

fn network_commands(port: u16) -> Vec<String> {
    vec![
        format!("exec 3<>/dev/tcp/127.0.0.1/{port} && echo connected"),
        format!(
            "python3 -c \"import socket; socket.create_connection(('127.0.0.1', {port}), 2); print('connected')\""
        ),
        format!(
            "sh -c 'echo > /dev/tcp/127.0.0.1/{port}' 2>/dev/null; bash -c 'echo > /dev/tcp/localhost/{port}'"
        ),
    ]
}

#[test]
fn the_network_is_off_unless_allowed() {
    require_sandbox!();
    let mut rows = Vec::new();
    for (mode, explicit) in MODES {
        let p = setup(settings_for(explicit));
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let commands = network_commands(port);
        let (out, results, _) = run_commands(&p, mode, &commands, &[]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let hits = connections(&listener);
        assert_eq!(hits, 0, "{mode}: the listener was reached: {results:#?}");
        rows.push((
            "network off",
            mode,
            Row {
                tried: commands.len(),
                through: hits,
                over_blocked: 0,
            },
        ));
    }
    // Allowed: the same commands reach it.
    let p = setup(
        json!({"sandbox": {"autoAllowBashIfSandboxed": true, "network": {"allowedDomains": ["*"]}}}),
    );
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let commands = network_commands(port);
    let (out, results, _) = run_commands(&p, "default", &commands[..2], &[]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let hits = connections(&listener);
    assert_eq!(hits, 2, "allowed network: {results:#?}");
    rows.push((
        "network allowed",
        "default",
        Row {
            tried: 2,
            through: hits,
            over_blocked: 2 - hits,
        },
    ));
    print_table("loopback listener", &rows);
}

/// A loopback HTTP server that answers `ok` and records each connection's request path
/// (`""` for a connection that sent no request).
fn recording_http_server() -> (u16, std::sync::Arc<std::sync::Mutex<Vec<String>>>) {
    use std::io::{BufRead, BufReader, Write};
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let record = std::sync::Arc::clone(&seen);
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut line = String::new();
            let _ = reader.read_line(&mut line);
            let path = line.split(' ').nth(1).unwrap_or("").to_string();
            record.lock().unwrap().push(path);
            loop {
                let mut header = String::new();
                if reader.read_line(&mut header).unwrap_or(0) == 0 || header == "\r\n" {
                    break;
                }
            }
            let _ = (&stream)
                .write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok");
        }
    });
    (port, seen)
}

/// A client that speaks to the proxy the sandbox names in `HTTP_PROXY`: `get URL` sends
/// an absolute-form request, `connect HOST:PORT PATH` opens a tunnel and sends a request
/// through it, `urllib URL` has Python's urllib use the proxy variable. Prints the
/// response, or the error.
const PROXY_CLIENT: &str = r#"
import os, socket, sys, urllib.parse, urllib.request
proxy = urllib.parse.urlparse(os.environ["HTTP_PROXY"])
def talk(first, then=None):
    s = socket.create_connection((proxy.hostname, proxy.port), 5)
    s.sendall(first.encode())
    reply = s.recv(4096).decode()
    if then is not None and reply.startswith("HTTP/1.1 200"):
        s.sendall(then.encode())
        reply = s.recv(4096).decode()
    print(reply.replace("\r\n", " | "))
kind, target = sys.argv[1], sys.argv[2]
if kind == "get":
    talk(f"GET {target} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
elif kind == "connect":
    talk(f"CONNECT {target} HTTP/1.1\r\n\r\n", f"GET {sys.argv[3]} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
else:
    # localhost is in NO_PROXY (servers the command starts itself): not for this test.
    os.environ.pop("no_proxy"); os.environ.pop("NO_PROXY")
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({"http": os.environ["HTTP_PROXY"]}))
    print(opener.open(target, timeout=5).read().decode())
"#;

#[test]
fn allowed_domains_are_reached_through_the_proxy_and_nothing_else_is() {
    require_sandbox!();
    let p = setup(json!({"sandbox": {"autoAllowBashIfSandboxed": true,
        "network": {"allowedDomains": ["localhost", "*.example.org"]}}}));
    std::fs::write(p.root.join("proxy_client.py"), PROXY_CLIENT).unwrap();
    let (port, seen) = recording_http_server();
    let commands = vec![
        format!("python3 proxy_client.py get http://localhost:{port}/via-get"),
        format!("python3 proxy_client.py connect localhost:{port} /via-connect"),
        format!("python3 proxy_client.py urllib http://localhost:{port}/via-urllib"),
        // Refused by the proxy: hosts the list does not name.
        format!("python3 proxy_client.py get http://127.0.0.1:{port}/by-ip"),
        format!("python3 proxy_client.py connect 127.0.0.1:{port} /tunnel-by-ip"),
        format!("python3 proxy_client.py get http://localhost.evil:{port}/lookalike"),
        format!("python3 proxy_client.py get http://x@127.0.0.1:{port}/userinfo"),
        // Around the proxy: nothing is reachable.
        format!(
            "python3 -c \"import socket; socket.create_connection(('127.0.0.1', {port}), 2); print('connected')\""
        ),
        format!("exec 3<>/dev/tcp/127.0.0.1/{port} && echo connected"),
    ];
    let (out, results, _) = run_commands(&p, "default", &commands, &[]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for (i, expected) in ["200 OK", "200 OK", "ok"].iter().enumerate() {
        assert!(
            results[i].contains(expected),
            "{}: {results:#?}",
            commands[i]
        );
    }
    for i in 3..7 {
        assert!(
            results[i].contains("403 Forbidden"),
            "{}: {results:#?}",
            commands[i]
        );
        assert!(results[i].contains("allowedDomains"), "{results:#?}");
    }
    let mut paths = seen.lock().unwrap().clone();
    paths.sort();
    assert_eq!(
        paths,
        ["/via-connect", "/via-get", "/via-urllib"],
        "what reached the server: {results:#?}"
    );
}

/// Finds the relay from inside the sandbox — the process in this command's network
/// namespace whose first argument is `__sandbox-relay` — and prints its executable and
/// arguments; then asks the proxy (through the relay, as `HTTP_PROXY` says) for
/// `http://HOST:PORT/PATH` for each `HOST PORT PATH` argument triple and prints the
/// status line; then tries the port directly, around the proxy.
const FIND_RELAY_AND_FETCH: &str = r#"
mine=$(readlink /proc/self/ns/net)
for d in /proc/[0-9]*; do
  [ "$(readlink "$d/ns/net" 2>/dev/null)" = "$mine" ] || continue
  mapfile -d '' args < "$d/cmdline" 2>/dev/null || continue
  [ "${args[1]}" = __sandbox-relay ] || continue
  echo "relay-pid=${d#/proc/}"
  echo "relay-exe=$(readlink "$d/exe")"
  echo "relay-args=${args[*]}"
done
proxy=${HTTP_PROXY#http://}
while [ $# -ge 3 ]; do
  exec 3<>"/dev/tcp/${proxy%:*}/${proxy#*:}" || { echo "no relay"; exit 1; }
  printf 'GET http://%s:%s/%s HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n' "$1" "$2" "$3" "$1" >&3
  echo "$3: $(timeout 10 head -n 1 <&3 | tr -d '\r')"
  exec 3<&-
  last=$2
  shift 3
done
(exec 4<>"/dev/tcp/127.0.0.1/$last") 2>/dev/null && echo "direct: connected" || echo "direct: refused"
"#;

#[test]
fn the_relay_is_the_robota_binary_started_by_exec_and_carries_only_allowed_domains() {
    require_sandbox!();
    let p = setup(json!({"sandbox": {"autoAllowBashIfSandboxed": true,
        "network": {"allowedDomains": ["localhost"]}}}));
    std::fs::write(p.root.join("find_relay.sh"), FIND_RELAY_AND_FETCH).unwrap();
    let (port, seen) = recording_http_server();
    let command =
        format!("bash find_relay.sh localhost {port} allowed 127.0.0.1 {port} denied-by-ip");
    let (out, results, _) = run_commands(&p, "default", &[command], &[]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = &results[0];
    let robota = std::fs::canonicalize(env!("CARGO_BIN_EXE_robota")).unwrap();
    // Exactly one relay, and it is the robota binary exec'd with the hidden argument (a
    // process forked without exec would show the shell's or nothing of this).
    let exes: Vec<&str> = text
        .lines()
        .filter_map(|l| l.strip_prefix("relay-exe="))
        .collect();
    assert_eq!(exes, [robota.to_str().unwrap()], "{text}");
    let args = text
        .lines()
        .find_map(|l| l.strip_prefix("relay-args="))
        .unwrap_or_default();
    let args: Vec<&str> = args.split(' ').collect();
    assert_eq!(
        args.get(1..3),
        Some(&["__sandbox-relay", "3128"][..]),
        "{text}"
    );
    assert!(text.contains("allowed: HTTP/1.1 200 OK"), "{text}");
    assert!(
        text.contains("denied-by-ip: HTTP/1.1 403 Forbidden"),
        "{text}"
    );
    assert!(text.contains("direct: refused"), "{text}");
    // The listener counted one connection: the allowed one, through the relay.
    assert_eq!(*seen.lock().unwrap(), ["/allowed"], "{text}");
    // And the relay ended with its command.
    let pid: u32 = text
        .lines()
        .find_map(|l| l.strip_prefix("relay-pid="))
        .and_then(|p| p.parse().ok())
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while !process_gone(pid) {
        assert!(
            std::time::Instant::now() < deadline,
            "the relay {pid} outlived its command"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// A command run the way an embedding program runs it (this test binary, which does not
/// dispatch to the relay), with allowed domains: the sandbox as `robota::tools` prepares
/// it, applied to `sh -c SCRIPT` in `dir`.
fn run_embedded(
    dir: &Path,
    relay_program: Option<&Path>,
    script: &str,
) -> (std::process::Output, std::time::Duration) {
    use robota::tools::sandbox::proxy::{DomainProxy, domain_allowed};
    use robota::tools::sandbox::{SandboxDirs, SandboxSpec, prepare};
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let dirs = SandboxDirs::create().unwrap();
        let allowed = vec!["localhost".to_string()];
        let proxy = DomainProxy::start(
            &dirs.proxy_socket(),
            std::sync::Arc::new(move |host: &str| domain_allowed(&allowed, host)),
        )
        .unwrap();
        let spec = SandboxSpec {
            cwd: dir.to_path_buf(),
            writable: vec![dir.to_path_buf(), dirs.tmp().to_path_buf()],
            network: false,
            proxy_socket: Some(proxy.socket().to_path_buf()),
            relay_program: relay_program.map(Path::to_path_buf),
            ..SandboxSpec::default()
        };
        let sandbox = std::sync::Arc::new(prepare(&spec, &dirs).unwrap());
        let mut command = sandbox.command("bash");
        command
            .arg("-c")
            .arg(script)
            .current_dir(dir)
            .stdin(std::process::Stdio::null());
        let started = std::time::Instant::now();
        let out = tokio::time::timeout(std::time::Duration::from_secs(60), command.output())
            .await
            .expect("the sandboxed command hung")
            .unwrap();
        (out, started.elapsed())
    })
}

#[test]
fn a_program_that_does_not_dispatch_to_the_relay_gets_a_clear_error_not_a_hang() {
    require_sandbox!();
    let dir = tempfile::tempdir().unwrap();
    let (port, seen) = recording_http_server();
    let script = format!("echo ran > ran.txt; bash find_relay.sh localhost {port} allowed");
    std::fs::write(dir.path().join("find_relay.sh"), FIND_RELAY_AND_FETCH).unwrap();
    // This test binary is the program: it does not call `run_if_requested`, so what
    // starts is its test harness, not a relay.
    let (out, took) = run_embedded(dir.path(), None, &script);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(126), "{stderr}");
    assert!(
        stderr.contains("the relay to the domain proxy")
            && stderr.contains("did not start, so the command was not run")
            && stderr.contains("robota_sandbox::relay::run_if_requested()"),
        "{stderr}"
    );
    assert!(!dir.path().join("ran.txt").exists(), "the command ran");
    assert!(
        took < std::time::Duration::from_secs(9),
        "it waited {took:?}"
    );
    // Naming a program that dispatches (the robota binary) makes it work.
    let robota = Path::new(env!("CARGO_BIN_EXE_robota"));
    let (out, _) = run_embedded(dir.path(), Some(robota), &script);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("__sandbox-relay"), "{stdout}");
    assert!(stdout.contains("allowed: HTTP/1.1 200 OK"), "{stdout}");
    assert_eq!(*seen.lock().unwrap(), ["/allowed"]);
}

#[test]
fn leaving_the_sandbox_asks_and_is_denied_without_anyone_to_ask() {
    require_sandbox!();
    let p = setup(json!({}));
    let canary = canary(&p);
    let command = format!("rm -f {}", canary.display());
    let (out, results, _) = run_commands(
        &p,
        "default",
        &[],
        &[json!({"command": command, "dangerouslyDisableSandbox": true})],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(canary.exists());
    assert!(
        results[0].contains("outside the sandbox") && results[0].contains("denied"),
        "{results:?}"
    );
    // With allowUnsandboxedCommands off it is refused outright.
    let p = setup(
        json!({"sandbox": {"autoAllowBashIfSandboxed": true, "allowUnsandboxedCommands": false}}),
    );
    let (_, results, _) = run_commands(
        &p,
        "default",
        &[],
        &[json!({"command": "echo hi", "dangerouslyDisableSandbox": true})],
    );
    assert!(
        results[0].contains("allowUnsandboxedCommands"),
        "{results:?}"
    );
}

#[test]
fn a_command_the_sandbox_stops_gets_a_hint_and_init_says_the_sandbox_is_on() {
    require_sandbox!();
    let p = setup(json!({}));
    let canary = canary(&p);
    let server = MockServer::start(vec![
        anthropic::tool_turn(
            None,
            &[(
                "toolu_1",
                "Bash",
                json!({"command": format!("echo x > {}", canary.display())}),
            )],
        ),
        anthropic::text_turn("done"),
    ]);
    let out = p.run(
        &server,
        &["-p", "go", "--output-format", "stream-json", "--verbose"],
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    let init: Value = stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find(|v| v["subtype"] == "init")
        .unwrap();
    assert_eq!(init["sandbox"]["enabled"], true, "{init}");
    assert_eq!(init["sandbox"]["backend"], "landlock", "{init}");
    let results = tool_results(&server.requests()[1].body);
    let text = result_text(&results[0]);
    assert!(text.contains("dangerouslyDisableSandbox"), "{text}");
    // In bypass mode the sandbox is off unless enabled explicitly.
    let server = MockServer::start(vec![anthropic::text_turn("done")]);
    let out = p.run(
        &server,
        &[
            "-p",
            "go",
            "--output-format",
            "stream-json",
            "--verbose",
            "--permission-mode",
            "bypassPermissions",
        ],
    );
    let init: Value = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find(|v| v["subtype"] == "init")
        .unwrap();
    assert_eq!(init["sandbox"]["enabled"], false, "{init}");
}

#[test]
fn background_jobs_are_sandboxed_too() {
    require_sandbox!();
    let p = setup(json!({}));
    let canary = canary(&p);
    let background = format!(
        "rm -f {}; echo pwned > {} ; echo bg-done > bg.txt",
        canary.display(),
        canary.display()
    );
    // The next call waits (inside the command, bounded) for the job to finish.
    let wait = "for i in $(seq 200); do [ -f bg.txt ] && break; sleep 0.05; done; cat bg.txt";
    let server = MockServer::start(vec![
        anthropic::tool_turn(
            None,
            &[(
                "toolu_bg",
                "Bash",
                json!({"command": background, "run_in_background": true}),
            )],
        ),
        anthropic::tool_turn(None, &[("toolu_wait", "Bash", json!({"command": wait}))]),
        anthropic::text_turn("done"),
    ]);
    let out = p.run(&server, &["-p", "go", "--output-format", "json"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let results = tool_results(&server.requests()[2].body);
    assert!(result_text(&results[0]).contains("bg-done"), "{results:?}");
    assert_eq!(std::fs::read_to_string(&canary).unwrap(), "canary");
}

#[test]
fn sandboxed_commands_die_with_robota_even_when_it_is_killed() {
    require_sandbox!();
    let p = setup(json!({}));
    let command = "sleep 60 & echo $! > child.pid; echo $$ > leader.pid; wait";
    let server = MockServer::start(vec![anthropic::tool_turn(
        None,
        &[("t1", "Bash", json!({"command": command}))],
    )]);
    let mut child = p.command(&server, &["-p", "run it"]).spawn().unwrap();
    let read_pid = |name: &str| -> Option<u32> {
        std::fs::read_to_string(p.root.join(name))
            .ok()
            .and_then(|t| t.trim().parse().ok())
    };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    let (leader, sleeper) = loop {
        if let (Some(l), Some(s)) = (read_pid("leader.pid"), read_pid("child.pid")) {
            break (l, s);
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the command never started"
        );
        std::thread::yield_now();
    };
    // It really runs in the sandbox: its user namespace is not robota's.
    let ns = |pid: u32| std::fs::read_link(format!("/proc/{pid}/ns/user")).unwrap();
    assert_ne!(ns(leader), ns(std::process::id()));
    child.kill().unwrap();
    child.wait().unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while !(process_gone(leader) && process_gone(sleeper)) {
        assert!(
            std::time::Instant::now() < deadline,
            "the sandboxed command outlived robota (leader {leader}, sleep {sleeper})"
        );
        std::thread::yield_now();
    }
}
