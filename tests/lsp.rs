//! End to end: code intelligence from real language servers (issue 30), with the real
//! `robota -p` against the loopback mock provider and real servers (pyright and
//! typescript-language-server from npm; `.ci/run` installs them into a cache and names it
//! in `ROBOTA_TEST_LSP_DIR`):
//! - an Edit that introduces a type error gets the error in its tool result (seen in the
//!   next request to the mock), and the Edit that fixes it gets none;
//! - a Bash command that breaks a file the server has open gets the error too, and one
//!   that changes nothing gets nothing;
//! - the `LSP` tool's goToDefinition and findReferences on a small TypeScript project,
//!   with a file under a `Read(...)` deny rule left out of the references;
//! - a server that never answers `initialize` (a script) does not hold the turn, and its
//!   process group is gone when the session ends;
//! - a server that crashes at start is started again at most `maxRestarts` times (counted
//!   by the starts it logs), and then the LSP tool says it stopped;
//! - a configured server whose language no file of the session has is never started.

// Unix only: these tests drive the binary through Unix processes, signals, scripts and
// file modes (robota is type-checked for Windows; its tests run here, on Linux).
#![cfg(unix)]
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failed unwrap is a failed test

mod support;

use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::Duration;

use serde_json::{Value, json};
use support::project::{Project, json_result, project, result_text, tool_results};
use support::skip::skip;
use support::{MockServer, anthropic};

/// The npm prefix holding the real servers, or `None` (after a skip) when absent.
fn servers_dir() -> Option<PathBuf> {
    let dir = std::env::var_os("ROBOTA_TEST_LSP_DIR").map(PathBuf::from);
    match dir {
        Some(dir) if dir.join("node_modules/.bin/pyright-langserver").is_file() => Some(dir),
        _ => {
            skip(
                "lsp-servers",
                "ROBOTA_TEST_LSP_DIR does not name an npm prefix with pyright and typescript-language-server \
                 (npm install --prefix DIR pyright typescript-language-server typescript)",
            );
            None
        }
    }
}

fn write_settings(p: &Project, settings: Value) {
    std::fs::create_dir_all(&p.home).unwrap();
    std::fs::write(p.home.join("settings.json"), settings.to_string()).unwrap();
}

/// Runs `robota -p` to its end; a run still going after two minutes failed (it waited
/// on a server it should have left behind).
fn run_to_end(p: &Project, server: &MockServer) -> Output {
    let mut child = p
        .command(
            server,
            &[
                "-p",
                "go",
                "--output-format",
                "json",
                "--permission-mode",
                "acceptEdits",
            ],
        )
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    for _ in 0..1200 {
        if child.try_wait().unwrap().is_some() {
            return child.wait_with_output().unwrap();
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    child.kill().unwrap();
    panic!("the run did not end: a language server held the turn");
}

/// The text of tool result `id` in the request after it.
fn result_of(server: &MockServer, id: &str) -> String {
    server
        .requests()
        .iter()
        .flat_map(|r| tool_results(&r.body))
        .find(|b| b["tool_use_id"] == id)
        .map(|b| result_text(&b))
        .unwrap_or_else(|| panic!("no result for {id}"))
}

/// A project with a well-typed `shapes.py`, pyright from `dir` as its server (waiting up
/// to a minute for diagnostics) and `allow` as its allow rules; the project and the file.
fn python_project(dir: &Path, allow: Value) -> (Project, PathBuf) {
    let p = project();
    let file = p.root.join("shapes.py");
    std::fs::write(
        &file,
        "def area(w: int, h: int) -> int:\n    return w * h\n\n\nsize: int = area(2, 3)\n",
    )
    .unwrap();
    let pyright = dir.join("node_modules/.bin/pyright-langserver");
    write_settings(
        &p,
        json!({
            "lspServers": {"pyright": {"command": pyright, "args": ["--stdio"],
                "extensionToLanguage": {".py": "python"}}},
            "lsp": {"diagnosticsTimeoutMs": 60000},
            "permissions": {"allow": allow},
        }),
    );
    (p, file)
}

#[test]
fn an_edit_that_breaks_the_types_is_told_and_the_fix_is_clean() {
    let Some(dir) = servers_dir() else { return };
    let (p, file) = python_project(&dir, json!([]));
    let path = file.display().to_string();
    let server = MockServer::start(vec![
        anthropic::tool_turn(None, &[("r1", "Read", json!({"file_path": path}))]),
        anthropic::tool_turn(
            None,
            &[(
                "e1",
                "Edit",
                json!({"file_path": path,
                "old_string": "size: int = area(2, 3)", "new_string": "size: int = \"large\""}),
            )],
        ),
        anthropic::tool_turn(
            None,
            &[(
                "e2",
                "Edit",
                json!({"file_path": path,
                "old_string": "size: int = \"large\"", "new_string": "size: int = area(4, 5)"}),
            )],
        ),
        anthropic::text_turn("done"),
    ]);
    let out = run_to_end(&p, &server);
    let result = json_result(&out);
    assert_eq!(result["is_error"], false, "{result}");
    let broken = result_of(&server, "e1");
    assert!(broken.contains("has been updated"), "{broken}");
    let expected = format!("{path}:5:13 error");
    assert!(broken.contains(&expected), "no type error in: {broken}");
    assert!(
        broken.contains("<diagnostics server=\"pyright\">"),
        "{broken}"
    );
    let fixed = result_of(&server, "e2");
    assert!(fixed.contains("has been updated"), "{fixed}");
    assert!(
        !fixed.contains("<diagnostics"),
        "the fix still reports: {fixed}"
    );
}

#[test]
fn a_command_that_breaks_an_open_file_is_told_and_one_that_changes_nothing_is_not() {
    let Some(dir) = servers_dir() else { return };
    let (p, file) = python_project(&dir, json!(["Bash"]));
    let path = file.display().to_string();
    let bash = |id: &'static str, command: &str| {
        anthropic::tool_turn(None, &[(id, "Bash", json!({"command": command}))])
    };
    let server = MockServer::start(vec![
        anthropic::tool_turn(None, &[("r1", "Read", json!({"file_path": path}))]),
        bash("b1", "sed -i 's/area(2, 3)/\"large\"/' shapes.py"),
        bash("b2", "echo unchanged"),
        anthropic::text_turn("done"),
    ]);
    let out = run_to_end(&p, &server);
    let result = json_result(&out);
    assert_eq!(result["is_error"], false, "{result}");
    assert!(
        std::fs::read_to_string(&file)
            .unwrap()
            .contains("\"large\"")
    );
    let broken = result_of(&server, "b1");
    let expected = format!("{path}:5:13 error");
    assert!(broken.contains(&expected), "no type error in: {broken}");
    let unchanged = result_of(&server, "b2");
    assert!(unchanged.contains("unchanged"), "{unchanged}");
    assert!(
        !unchanged.contains("<diagnostics"),
        "a command that changed nothing still reports: {unchanged}"
    );
}

/// A small TypeScript project: `lib.ts` defines `helper`, `main.ts` and `secret/use.ts`
/// call it.
fn typescript_project(p: &Project) {
    let write = |name: &str, text: &str| {
        let path = p.root.join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    };
    write(
        "tsconfig.json",
        "{\"compilerOptions\": {\"strict\": true, \"module\": \"esnext\"}}\n",
    );
    write(
        "tsconfig.json",
        r#"{"compilerOptions": {"strict": true, "target": "es2020", "module": "commonjs"}, "include": ["**/*.ts"]}"#,
    );
    write(
        "lib.ts",
        "export function helper(n: number): number {\n  return n * 2;\n}\n",
    );
    write(
        "main.ts",
        "import { helper } from \"./lib\";\nexport const a = helper(1);\n",
    );
    write(
        "secret/use.ts",
        "import { helper } from \"../lib\";\nexport const b = helper(2);\n",
    );
}

/// Runs goToDefinition and findReferences on the TypeScript project; returns their texts.
fn definition_and_references(dir: &Path, deny: &[&str]) -> (String, String) {
    let p = project();
    typescript_project(&p);
    let tsls = dir.join("node_modules/.bin/typescript-language-server");
    write_settings(
        &p,
        json!({
            "lspServers": {"typescript": {"command": tsls, "args": ["--stdio"],
                "extensionToLanguage": {".ts": "typescript"}}},
            "lsp": {"requestTimeoutMs": 90000},
            "permissions": {"deny": deny},
        }),
    );
    let main = p.root.join("main.ts").display().to_string();
    let lib = p.root.join("lib.ts").display().to_string();
    let server = MockServer::start(vec![
        anthropic::tool_turn(
            None,
            &[(
                "d1",
                "LSP",
                json!({"operation": "goToDefinition", "filePath": main,
                "line": 2, "character": 18}),
            )],
        ),
        anthropic::tool_turn(
            None,
            &[(
                "f1",
                "LSP",
                json!({"operation": "findReferences", "filePath": lib,
                "line": 1, "character": 17}),
            )],
        ),
        anthropic::text_turn("done"),
    ]);
    let out = run_to_end(&p, &server);
    let result = json_result(&out);
    assert_eq!(result["is_error"], false, "{result}");
    let tools = server.requests()[0].body["tools"].to_string();
    assert!(tools.contains("\"LSP\""), "the LSP tool is offered");
    (result_of(&server, "d1"), result_of(&server, "f1"))
}

#[test]
fn definition_and_references_come_from_the_server_and_denied_files_stay_out() {
    let Some(dir) = servers_dir() else { return };
    let (definition, references) = definition_and_references(&dir, &[]);
    assert!(
        definition.contains("/lib.ts:1:17"),
        "definition: {definition}"
    );
    assert!(
        references.contains("/main.ts:2:18"),
        "references: {references}"
    );
    assert!(
        references.contains("/secret/use.ts:2:18"),
        "references: {references}"
    );
    assert!(
        references.contains("/lib.ts:1:17"),
        "references: {references}"
    );

    let (_, references) = definition_and_references(&dir, &["Read(./secret/**)"]);
    assert!(
        references.contains("/main.ts:2:18"),
        "references: {references}"
    );
    assert!(
        !references.contains("secret"),
        "a denied file was listed: {references}"
    );
}

/// A "server" that writes its pid to `pid` and then never answers anything.
fn silent_server(p: &Project) -> (PathBuf, PathBuf) {
    let script = p.root.join("silent-server.sh");
    let pid = p.root.join("server.pid");
    std::fs::write(
        &script,
        format!("#!/bin/sh\necho $$ > '{}'\nexec sleep 600\n", pid.display()),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    (script, pid)
}

/// Whether process `pid` still runs (a zombie does not).
fn runs(pid: &str) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        !stat
            .rsplit(')')
            .next()
            .unwrap_or("")
            .trim_start()
            .starts_with('Z')
    })
}

#[test]
fn a_server_that_never_answers_does_not_hold_the_turn_and_stops_with_the_session() {
    let p = project();
    let (script, pid_file) = silent_server(&p);
    std::fs::write(p.root.join("notes.hang"), "first\n").unwrap();
    write_settings(
        &p,
        json!({
            "lspServers": {"silent": {"command": script,
                "extensionToLanguage": {".hang": "hang"}, "startupTimeout": 3_600_000}},
            "lsp": {"diagnosticsTimeoutMs": 200, "requestTimeoutMs": 300},
        }),
    );
    let path = p.root.join("notes.hang").display().to_string();
    let server = MockServer::start(vec![
        anthropic::tool_turn(None, &[("r1", "Read", json!({"file_path": path}))]),
        anthropic::tool_turn(
            None,
            &[(
                "e1",
                "Edit",
                json!({"file_path": path, "old_string": "first", "new_string": "second"}),
            )],
        ),
        anthropic::tool_turn(
            None,
            &[("l1", "LSP", json!({"operation": "hover", "filePath": path}))],
        ),
        anthropic::text_turn("done"),
    ]);
    let out = run_to_end(&p, &server);
    let result = json_result(&out);
    assert_eq!(result["is_error"], false, "{result}");
    let edited = result_of(&server, "e1");
    assert!(edited.contains("has been updated"), "{edited}");
    assert!(!edited.contains("<diagnostics"), "{edited}");
    assert_eq!(
        std::fs::read_to_string(p.root.join("notes.hang")).unwrap(),
        "second\n"
    );
    let hover = result_of(&server, "l1");
    assert!(hover.contains("still starting"), "{hover}");
    let pid = std::fs::read_to_string(&pid_file).expect("the server was started");
    assert!(!runs(pid.trim()), "the server outlived the session");
}

#[test]
fn a_server_that_crashes_is_started_again_at_most_max_restarts_times() {
    let p = project();
    let starts = p.root.join("starts.log");
    let script = p.root.join("crashing-server.sh");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh
echo start >> '{}'
exit 3
",
            starts.display()
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    write_settings(
        &p,
        json!({
            "lspServers": {"crashing": {"command": script, "maxRestarts": 2,
                "extensionToLanguage": {".crash": "crash"}}},
            "lsp": {"diagnosticsTimeoutMs": 2000, "requestTimeoutMs": 2000},
        }),
    );
    let mut turns = Vec::new();
    for n in 0..6 {
        let path = p.root.join(format!("f{n}.crash"));
        std::fs::write(&path, "text\n").unwrap();
        let id = format!("h{n}");
        turns.push(anthropic::tool_turn(
            None,
            &[(
                id.as_str(),
                "LSP",
                json!({"operation": "hover", "filePath": path.display().to_string(),
                    "line": 1, "character": 1}),
            )],
        ));
    }
    turns.push(anthropic::text_turn("done"));
    let server = MockServer::start(turns);
    let out = run_to_end(&p, &server);
    assert_eq!(json_result(&out)["is_error"], false);
    let started = std::fs::read_to_string(&starts).unwrap().lines().count();
    assert_eq!(started, 3, "one start and two restarts, then no more");
    let last = result_of(&server, "h5");
    assert!(last.contains("stopped after 2 restarts"), "{last}");
}

#[test]
fn a_server_of_a_language_the_session_never_touches_never_starts() {
    let p = project();
    let (script, pid_file) = silent_server(&p);
    write_settings(
        &p,
        json!({"lspServers": {"silent": {"command": script,
            "extensionToLanguage": {".hang": "hang"}}}}),
    );
    let calc = p.root.join("calc.py").display().to_string();
    let server = MockServer::start(vec![
        anthropic::tool_turn(None, &[("r1", "Read", json!({"file_path": calc}))]),
        anthropic::tool_turn(
            None,
            &[(
                "e1",
                "Edit",
                json!({"file_path": calc, "old_string": "a - b", "new_string": "a + b"}),
            )],
        ),
        anthropic::text_turn("done"),
    ]);
    let out = run_to_end(&p, &server);
    assert_eq!(json_result(&out)["is_error"], false);
    assert!(result_of(&server, "e1").contains("has been updated"));
    assert!(
        !pid_file.exists(),
        "a server started for a file of another language"
    );
}
