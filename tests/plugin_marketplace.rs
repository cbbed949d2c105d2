//! End to end: plugin marketplaces with the real `robota` binary, `ROBOTA_HOME` in a temp
//! dir and local git repositories (`git init --bare`, `file://` URLs) as the remotes — never
//! the network. A marketplace is added (from a git URL, a folder, a GitHub `owner/repo`
//! rewritten to a local repository by git's own `url.insteadOf`, or `extraKnownMarketplaces`),
//! its plugins installed from a relative path, a git URL and a folder of a repository,
//! used in a session (the command's prompt reaches the mock provider, a hook writes into
//! `${CLAUDE_PLUGIN_DATA}`), listed, disabled, updated and uninstalled; the same through
//! `/plugin …` in a session; and every failure says what went wrong and leaves nothing.

// Unix only: these tests drive the binary through Unix processes, signals, scripts and
// file modes (robota is type-checked for Windows; its tests run here, on Linux).
#![cfg(unix)]
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failed unwrap is a failed test

mod support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::{Value, json};
use support::project::{Project, project};
use support::{MockServer, anthropic};

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).to_string()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).to_string()
}

fn git(dir: &Path, args: &[&str]) {
    let out = Command::new("git")
        .args(["-c", "user.email=t@t", "-c", "user.name=t"])
        .args(args)
        .current_dir(dir)
        .env("HOME", dir)
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {}", stderr(&out));
}

/// Commits everything in `work` and pushes it to a bare repository at `bare` (created
/// the first time); returns its `file://` URL.
fn publish(work: &Path, bare: &Path) -> String {
    if !work.join(".git").exists() {
        git(work, &["init", "-q", "-b", "main"]);
    }
    git(work, &["add", "-A"]);
    git(work, &["commit", "-qm", "publish"]);
    if !bare.exists() {
        std::fs::create_dir_all(bare).unwrap();
        git(bare, &["init", "-q", "--bare", "-b", "main"]);
        git(work, &["remote", "add", "origin", bare.to_str().unwrap()]);
    }
    git(work, &["push", "-q", "origin", "main"]);
    format!("file://{}", bare.display())
}

fn plugin_json(name: &str, version: &str) -> String {
    format!(r#"{{"name": "{name}", "version": "{version}", "description": "{name} plugin"}}"#)
}

/// The places of one test: the project, and a folder for repositories.
struct World {
    p: Project,
    repos: PathBuf,
}

fn world() -> World {
    let p = project();
    let repos = p.root.parent().unwrap().join("repos");
    std::fs::create_dir_all(&repos).unwrap();
    World { p, repos }
}

impl World {
    fn robota(&self, args: &[&str]) -> Output {
        let server = MockServer::start(vec![]);
        self.p.run(&server, args)
    }

    /// A plugin `remote` in its own repository; returns the URL.
    fn remote_plugin(&self, version: &str) -> String {
        let work = self.repos.join("remote-work");
        write(
            &work.join(".claude-plugin/plugin.json"),
            &plugin_json("remote", version),
        );
        write(
            &work.join("commands/hello.md"),
            &format!("Hello from remote {version}."),
        );
        publish(&work, &self.repos.join("remote.git"))
    }

    /// A repository holding several plugins; `sub` is in `plugins/sub`.
    fn mono_repo(&self) -> String {
        let work = self.repos.join("mono-work");
        write(
            &work.join("plugins/sub/.claude-plugin/plugin.json"),
            &plugin_json("sub", "0.3.0"),
        );
        write(&work.join("plugins/sub/commands/hi.md"), "Hi from sub.");
        write(&work.join("plugins/other/commands/no.md"), "Not this one.");
        publish(&work, &self.repos.join("mono.git"))
    }

    /// The marketplace `team`: `deploy` (relative path, with a hook that writes into its
    /// data folder), `remote` (a git URL), `sub` (a folder of a repository), `gone` (a
    /// repository that does not exist) and `npm-one` (a kind robota cannot fetch).
    fn marketplace_work(&self) -> PathBuf {
        let remote = self.remote_plugin("1.0.0");
        let mono = self.mono_repo();
        let work = self.repos.join("team-work");
        let missing = format!("file://{}", self.repos.join("missing.git").display());
        write(
            &work.join(".claude-plugin/marketplace.json"),
            &json!({
                "name": "team",
                "owner": {"name": "Team"},
                "plugins": [
                    {"name": "deploy", "source": "./plugins/deploy", "category": "x", "version": "9.9.9", "agents": "./crew"},
                    {"name": "remote", "source": {"source": "url", "url": remote}},
                    {"name": "sub", "source": {"source": "git-subdir", "url": mono, "path": "plugins/sub"}},
                    {"name": "gone", "source": {"source": "url", "url": missing}},
                    {"name": "npm-one", "source": {"source": "npm", "package": "@x/y"}}
                ]
            })
            .to_string(),
        );
        write(
            &work.join("plugins/deploy/.claude-plugin/plugin.json"),
            &plugin_json("deploy", "1.2.0"),
        );
        write(
            &work.join("plugins/deploy/crew/helper.md"),
            "---\nname: helper\ndescription: Helps\n---\nHelp.",
        );
        write(
            &work.join("plugins/deploy/commands/ship.md"),
            "---\ndescription: Ships\n---\nShip version $ARGUMENTS now.",
        );
        write(
            &work.join("plugins/deploy/hooks/hooks.json"),
            r#"{"hooks": {"UserPromptSubmit": [{"hooks": [{"type": "command", "command": "printf '%s' \"$CLAUDE_PLUGIN_DATA\" > \"${CLAUDE_PLUGIN_DATA}/seen\""}]}]}}"#,
        );
        work
    }

    fn home(&self) -> &Path {
        &self.p.home
    }

    fn installed(&self) -> Value {
        let text = std::fs::read_to_string(self.home().join("plugins/installed_plugins.json"))
            .unwrap_or_else(|_| "{}".into());
        serde_json::from_str(&text).unwrap()
    }

    fn user_settings(&self) -> Value {
        serde_json::from_str(&std::fs::read_to_string(self.home().join("settings.json")).unwrap())
            .unwrap()
    }
}

fn ok(out: &Output) -> String {
    assert_eq!(
        out.status.code(),
        Some(0),
        "stdout: {}\nstderr: {}",
        stdout(out),
        stderr(out)
    );
    stdout(out)
}

fn failed(out: &Output) -> String {
    assert_eq!(
        out.status.code(),
        Some(1),
        "stdout: {}\nstderr: {}",
        stdout(out),
        stderr(out)
    );
    stderr(out)
}

#[test]
fn a_git_marketplace_installs_a_plugin_that_a_session_then_uses() {
    let w = world();
    let url = publish(&w.marketplace_work(), &w.repos.join("team.git"));
    let added = ok(&w.robota(&["plugin", "marketplace", "add", &url]));
    assert!(
        added.contains("Added marketplace team (git file://"),
        "{added}"
    );
    assert!(
        added.contains("5 plugins: deploy, remote, sub, gone, npm-one"),
        "{added}"
    );
    assert!(
        w.home()
            .join("plugins/marketplaces/team/.claude-plugin/marketplace.json")
            .is_file()
    );
    let known: Value = serde_json::from_str(
        &std::fs::read_to_string(w.home().join("plugins/known_marketplaces.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(
        known["team"]["source"],
        json!({"source": "git", "url": url})
    );

    let out = ok(&w.robota(&["plugin", "install", "deploy@team"]));
    let dest = w.home().join("plugins/cache/team/deploy/1.2.0");
    assert!(
        out.contains(&format!(
            "Installed deploy@team 1.2.0 into {}",
            dest.display()
        )),
        "{out}"
    );
    // Strict: the plugin's own version wins; the entry's `agents` path is added.
    assert!(out.contains("It adds: 1 command, 1 agent, 1 hook"), "{out}");
    assert!(
        out.contains("Its hooks run commands on: UserPromptSubmit"),
        "{out}"
    );
    assert!(dest.join("commands/ship.md").is_file());
    assert_eq!(
        w.installed()["plugins"]["deploy@team"][0]["installPath"],
        json!(dest)
    );
    assert_eq!(
        w.user_settings()["enabledPlugins"]["deploy@team"],
        json!(true)
    );

    // A session loads it: the command's prompt reaches the model, the hook runs with
    // ${CLAUDE_PLUGIN_DATA} expanded and exported.
    let server = MockServer::start(vec![anthropic::text_turn("Shipped.")]);
    let run = w.p.run(&server, &["-p", "/deploy:ship 3.0"]);
    assert_eq!(run.status.code(), Some(0), "{}", stderr(&run));
    let sent = server.requests()[0].body["messages"].to_string();
    assert!(sent.contains("Ship version 3.0 now."), "{sent}");
    let data = w.home().join("plugins/data/deploy-team");
    assert_eq!(
        std::fs::read_to_string(data.join("seen")).unwrap(),
        data.to_string_lossy()
    );

    let listing = ok(&w.robota(&["plugin", "list"]));
    assert!(listing.contains("deploy 1.2.0  (deploy@team)"), "{listing}");
    assert!(listing.contains("deploy@team 1.2.0  enabled"), "{listing}");

    // Disabled: still installed, no longer loaded.
    ok(&w.robota(&["plugin", "disable", "deploy@team"]));
    assert_eq!(
        w.user_settings()["enabledPlugins"]["deploy@team"],
        json!(false)
    );
    let listing = ok(&w.robota(&["plugin", "list"]));
    assert!(listing.contains("deploy@team 1.2.0  disabled"), "{listing}");
    assert!(!listing.contains("(deploy@team)"), "{listing}");
    // Enabled for the project only.
    ok(&w.robota(&["plugin", "enable", "deploy", "--scope", "project"]));
    let project: Value = serde_json::from_str(
        &std::fs::read_to_string(w.p.root.join(".robota/settings.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(project["enabledPlugins"]["deploy@team"], json!(true));

    let out = ok(&w.robota(&["plugin", "uninstall", "deploy@team"]));
    assert!(out.contains("Its data was kept in"), "{out}");
    assert!(!w.home().join("plugins/cache/team/deploy").exists());
    assert!(w.installed()["plugins"].get("deploy@team").is_none());
    assert!(
        w.user_settings()["enabledPlugins"]
            .get("deploy@team")
            .is_none()
    );
    assert!(
        data.join("seen").is_file(),
        "data is never deleted by uninstall"
    );
}

#[test]
fn git_and_git_subdir_sources_install_and_update_to_a_new_version() {
    let w = world();
    let work = w.marketplace_work();
    ok(&w.robota(&["plugin", "marketplace", "add", work.to_str().unwrap()]));

    let out = ok(&w.robota(&["plugin", "install", "remote@team"]));
    assert!(out.contains("Installed remote@team 1.0.0"), "{out}");
    let v1 = w.home().join("plugins/cache/team/remote/1.0.0");
    assert!(v1.join("commands/hello.md").is_file());
    assert!(!v1.join(".git").exists());
    let record = &w.installed()["plugins"]["remote@team"][0];
    assert_eq!(record["gitCommitSha"].as_str().unwrap().len(), 40);

    let out = ok(&w.robota(&["plugin", "install", "sub@team"]));
    assert!(out.contains("Installed sub@team 0.3.0"), "{out}");
    let sub = w.home().join("plugins/cache/team/sub/0.3.0");
    assert!(sub.join("commands/hi.md").is_file());
    assert!(!sub.join("plugins").exists() && !sub.join("commands/no.md").exists());

    // A new release of the plugin's repository: update moves to it.
    w.remote_plugin("2.0.0");
    let out = ok(&w.robota(&["plugin", "update", "remote@team"]));
    assert!(out.contains("Updated remote@team: 1.0.0 → 2.0.0"), "{out}");
    let v2 = w.home().join("plugins/cache/team/remote/2.0.0");
    assert_eq!(
        std::fs::read_to_string(v2.join("commands/hello.md")).unwrap(),
        "Hello from remote 2.0.0."
    );
    assert!(!v1.exists(), "the old version's copy is gone");

    let server = MockServer::start(vec![anthropic::text_turn("ok")]);
    let run = w.p.run(&server, &["-p", "/remote:hello"]);
    assert_eq!(run.status.code(), Some(0), "{}", stderr(&run));
    assert!(
        server.requests()[0].body["messages"]
            .to_string()
            .contains("Hello from remote 2.0.0.")
    );
}

#[test]
fn failures_say_what_went_wrong_and_leave_nothing_behind() {
    let w = world();
    let work = w.marketplace_work();
    ok(&w.robota(&["plugin", "marketplace", "add", work.to_str().unwrap()]));
    let installed_before = w.installed();

    let err = failed(&w.robota(&["plugin", "install", "nope@team"]));
    assert!(
        err.contains(
            "marketplace team has no plugin named nope; it has: deploy, remote, sub, gone, npm-one"
        ),
        "{err}"
    );

    let err = failed(&w.robota(&["plugin", "install", "gone@team"]));
    assert!(
        err.contains("gone@team was not installed: git clone"),
        "{err}"
    );
    assert!(
        !w.home().join("plugins/cache/team/gone").exists(),
        "no half-installed plugin"
    );
    let err = failed(&w.robota(&["plugin", "install", "npm-one@team"]));
    assert!(
        err.contains("kind \"npm\", which robota cannot install yet"),
        "{err}"
    );
    assert_eq!(w.installed(), installed_before);
    assert!(
        !w.home().join("settings.json").exists(),
        "nothing was enabled"
    );

    // A relative source that is a symlink out of the marketplace copies nothing.
    let secret = w.repos.join("secret");
    write(&secret.join("commands/key.md"), "private");
    std::os::unix::fs::symlink(&secret, work.join("plugins/escape")).unwrap();
    let mut file: Value = serde_json::from_str(
        &std::fs::read_to_string(work.join(".claude-plugin/marketplace.json")).unwrap(),
    )
    .unwrap();
    file["plugins"]
        .as_array_mut()
        .unwrap()
        .push(json!({"name": "escape", "source": "./plugins/escape"}));
    write(
        &work.join(".claude-plugin/marketplace.json"),
        &file.to_string(),
    );
    let err = failed(&w.robota(&["plugin", "install", "escape@team"]));
    assert!(err.contains("leads outside the marketplace"), "{err}");
    assert!(!w.home().join("plugins/cache/team/escape").exists());

    let err = failed(&w.robota(&["plugin", "install", "deploy@elsewhere"]));
    assert!(
        err.contains("no marketplace named elsewhere; known: team"),
        "{err}"
    );

    // A malformed marketplace names the file and the field; nothing is recorded.
    let bad = w.repos.join("bad");
    write(
        &bad.join(".claude-plugin/marketplace.json"),
        r#"{"name": "bad", "plugins": [{"name": "x", "source": {"source": "github"}}]}"#,
    );
    let err = failed(&w.robota(&["plugin", "marketplace", "add", bad.to_str().unwrap()]));
    let file = bad.join(".claude-plugin/marketplace.json");
    assert!(
        err.contains(&format!(
            "{}: plugins[0] (x).source.repo: missing",
            file.display()
        )),
        "{err}"
    );
    // The same file in a git repository: the clone is not kept.
    let url = publish(&bad, &w.repos.join("bad.git"));
    failed(&w.robota(&["plugin", "marketplace", "add", &url]));
    let left: Vec<_> = std::fs::read_dir(w.home().join("plugins/marketplaces"))
        .unwrap()
        .collect();
    assert!(left.is_empty(), "{left:?}");
    let err = failed(&w.robota(&[
        "plugin",
        "marketplace",
        "add",
        &format!("file://{}/none.git", w.repos.display()),
    ]));
    assert!(err.contains("git clone"), "{err}");
    let listing = ok(&w.robota(&["plugin", "marketplace", "list"]));
    assert!(listing.starts_with("team  (directory "), "{listing}");
    assert!(!listing.contains("bad"), "{listing}");

    let err = failed(&w.robota(&["plugin", "marketplace", "add", work.to_str().unwrap()]));
    assert!(err.contains("marketplace team is already added"), "{err}");
    let err = failed(&w.robota(&["plugin", "uninstall", "deploy@team"]));
    assert!(err.contains("deploy@team is not installed"), "{err}");
}

#[test]
fn github_shorthand_settings_marketplaces_and_removal() {
    let w = world();
    // `owner/repo` means github.com; git's own URL rewriting points it at a local repo.
    let url = publish(&w.marketplace_work(), &w.repos.join("gh/acme/tools.git"));
    assert!(url.ends_with("gh/acme/tools.git"));
    write(
        &w.p.user_home.join(".gitconfig"),
        &format!(
            "[url \"file://{}/gh/\"]\n\tinsteadOf = https://github.com/\n",
            w.repos.display()
        ),
    );
    let out = ok(&w.robota(&["plugin", "marketplace", "add", "acme/tools"]));
    assert!(
        out.contains("Added marketplace team (github acme/tools)"),
        "{out}"
    );
    ok(&w.robota(&["plugin", "install", "deploy@team"]));
    let out = ok(&w.robota(&["plugin", "marketplace", "update", "team"]));
    assert!(out.contains("team: 5 plugins"), "{out}");
    let out = ok(&w.robota(&["plugin", "marketplace", "remove", "team"]));
    assert!(
        out.contains("Still installed from it (uninstall them to remove them): deploy@team"),
        "{out}"
    );
    assert!(!w.home().join("plugins/marketplaces/team").exists());

    // A marketplace declared in settings is listed and added on first install.
    let other = w.repos.join("declared");
    write(
        &other.join(".claude-plugin/marketplace.json"),
        r#"{"name": "declared", "owner": {"name": "D"}, "plugins": [{"name": "solo", "source": "./", "strict": false, "commands": ["./cmds"]}]}"#,
    );
    write(&other.join("cmds/solo-go.md"), "Solo goes.");
    write(
        &w.p.root.join(".robota/settings.json"),
        &json!({"extraKnownMarketplaces": {"declared": {"source": {"source": "directory", "path": other}}}}).to_string(),
    );
    // Not before the directory is trusted: a repository cannot bring its own marketplace.
    let listing = ok(&w.robota(&["plugin", "marketplace", "list"]));
    assert!(
        listing.contains("declared  declared by this project's settings, held back"),
        "{listing}"
    );
    let err = failed(&w.robota(&["plugin", "install", "solo@declared"]));
    assert!(err.contains("not trusted yet; run `robota trust`"), "{err}");
    assert!(!w.home().join("plugins/cache/declared").exists());
    ok(&w.robota(&["trust"]));
    let listing = ok(&w.robota(&["plugin", "marketplace", "list"]));
    assert!(listing.contains("declared  ("), "{listing}");
    assert!(listing.contains("added on first install"), "{listing}");
    let out = ok(&w.robota(&["plugin", "install", "solo@declared"]));
    // strict: false — the entry is the definition, so its command path is used.
    assert!(out.contains("It adds: 1 command"), "{out}");
    let manifest: Value = serde_json::from_str(
        &std::fs::read_to_string(
            w.home()
                .join("plugins/cache/declared/solo/unknown/.claude-plugin/plugin.json"),
        )
        .unwrap(),
    )
    .unwrap();
    assert_eq!(manifest, json!({"name": "solo", "commands": ["./cmds"]}));
}

#[test]
fn slash_plugin_runs_the_same_manager_in_a_session() {
    let w = world();
    let work = w.marketplace_work();
    let run = |prompt: &str| {
        let server = MockServer::start(vec![]);
        let out = w.p.run(&server, &["-p", prompt]);
        assert!(
            server.requests().is_empty(),
            "a /plugin command asks no model"
        );
        out
    };
    let out = run(&format!("/plugin marketplace add {}", work.display()));
    assert!(
        ok(&out).contains("Added marketplace team"),
        "{}",
        stdout(&out)
    );
    let out = run("/plugin install deploy@team");
    assert!(
        ok(&out).contains("Installed deploy@team 1.2.0"),
        "{}",
        stdout(&out)
    );
    let out = run("/plugin list");
    assert!(
        ok(&out).contains("deploy@team 1.2.0  enabled"),
        "{}",
        stdout(&out)
    );
    let out = run("/plugin marketplace list");
    assert!(ok(&out).contains("team  (directory "), "{}", stdout(&out));
    let out = run("/plugin install nope@team");
    assert!(
        stderr(&out).contains("it has: deploy, remote")
            || stdout(&out).contains("it has: deploy, remote"),
        "{}{}",
        stdout(&out),
        stderr(&out)
    );
    let out = run("/plugin frobnicate");
    assert!(format!("{}{}", stdout(&out), stderr(&out)).contains("Usage: /plugin"));
}

/// Serves `body` to `requests` HTTP GETs on loopback; returns the URL.
fn serve(body: String, requests: usize) -> String {
    use std::io::{Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/marketplace.json", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for stream in listener.incoming().take(requests) {
            let mut stream = stream.unwrap();
            let mut buf = [0u8; 4096];
            let _ = stream.read(&mut buf);
            let head = format!(
                "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
                body.len()
            );
            stream.write_all(head.as_bytes()).unwrap();
            stream.write_all(body.as_bytes()).unwrap();
        }
    });
    url
}

#[test]
fn a_marketplace_json_url_is_downloaded_and_its_git_plugins_install() {
    let w = world();
    let remote = w.remote_plugin("1.0.0");
    let body = json!({
        "name": "web",
        "owner": {"name": "W"},
        "plugins": [
            {"name": "remote", "source": {"source": "url", "url": remote}},
            {"name": "local", "source": "./plugins/local"}
        ]
    })
    .to_string();
    let url = serve(body, 2);
    let out = ok(&w.robota(&["plugin", "marketplace", "add", &url]));
    assert!(out.contains("Added marketplace web (url "), "{out}");
    assert!(
        w.home()
            .join("plugins/marketplaces/web/.claude-plugin/marketplace.json")
            .is_file()
    );
    let out = ok(&w.robota(&["plugin", "install", "remote@web"]));
    assert!(out.contains("Installed remote@web 1.0.0"), "{out}");
    let err = failed(&w.robota(&["plugin", "install", "local@web"]));
    assert!(
        err.contains("was added from a URL and has no files"),
        "{err}"
    );
    let out = ok(&w.robota(&["plugin", "marketplace", "update", "web"]));
    assert!(out.contains("web: 2 plugins"), "{out}");
}

/// The real marketplaces of the corpus parse, with every plugin's source understood.
#[cfg(feature = "corpus")]
#[test]
fn corpus_marketplaces_parse() {
    use robota::sdk::plugins::marketplace::{Marketplace, PluginSource};
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/fixtures/claude/anthropics");
    let official = Marketplace::parse(
        &std::fs::read_to_string(
            root.join("claude-plugins-official/.claude-plugin/marketplace.json"),
        )
        .unwrap(),
    )
    .unwrap();
    assert_eq!(official.name, "claude-plugins-official");
    assert!(official.plugins.len() > 200, "{}", official.plugins.len());
    let subdirs = official
        .plugins
        .iter()
        .filter(|p| {
            matches!(
                &p.source,
                PluginSource::Git {
                    subdir: Some(_),
                    ..
                }
            )
        })
        .count();
    assert!(subdirs > 0);
    assert!(
        official
            .plugins
            .iter()
            .all(|p| !matches!(p.source, PluginSource::Unsupported(_)))
    );
    let skills = Marketplace::parse(
        &std::fs::read_to_string(root.join("skills/.claude-plugin/marketplace.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(skills.name, "anthropic-agent-skills");
    let docs = skills.find("document-skills").unwrap();
    assert!(!docs.strict);
    assert_eq!(docs.source, PluginSource::Relative("./".into()));
}
