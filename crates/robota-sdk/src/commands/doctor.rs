//! `/doctor`: checks what a session needs — a key, a provider that answers on the network,
//! settings and definitions without errors, MCP servers that connected, a session log,
//! git — and says for each problem what to do about it. The full-screen UI adds what it
//! knows of the terminal.

use std::fmt::Write;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use robota_core::helper_program::{HelperIo, deadline, run_helper};

use robota_core::permission::{Confinement, PermissionMode};
use robota_tools::sandbox::{Backend, Support};

use crate::errors::ProviderEndpoint;
use crate::mcp::{ServerReport, ServerStatus};

/// How long the reachability check waits for a connection.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// What `/doctor` looks at.
pub(crate) struct DoctorFacts<'a> {
    pub endpoint: &'a ProviderEndpoint,
    /// The provider the session talks to (when the endpoint does not say).
    pub provider: &'a str,
    pub model: &'a str,
    pub startup_warnings: &'a [String],
    pub mcp: Vec<ServerReport>,
    pub log: Option<PathBuf>,
    /// How the model can search the web in this session.
    pub web_search: WebSearchOffer,
    /// Whether and how this machine confines Bash commands.
    pub sandbox: &'a Support,
    /// The confinement an ordinary Bash call gets in each mode, in this session.
    pub confinement: Vec<(PermissionMode, Confinement)>,
    /// The shell the Bash tool runs.
    pub bash_shell: BashShell,
}

/// The shell the Bash tool and command hooks run: on Unix bash (or `/bin/sh`), not worth a
/// line; on Windows Git Bash, which may be missing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BashShell {
    /// Unix: bash or `/bin/sh`, always there.
    Posix,
    /// Windows: Git Bash, found here.
    GitBash(PathBuf),
    /// Windows: no Git Bash found.
    GitBashMissing,
}

impl BashShell {
    /// The shell on this machine.
    pub fn of_this_machine() -> BashShell {
        if !cfg!(windows) {
            return BashShell::Posix;
        }
        match robota_core::git_bash::git_bash() {
            Some(path) => BashShell::GitBash(path.to_path_buf()),
            None => BashShell::GitBashMissing,
        }
    }
}

/// How a session offers web search.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WebSearchOffer {
    /// The `WebSearch` tool, over the backend the `webSearch` settings configure.
    Backend,
    /// The provider's own server-side search (Anthropic's `web_search`).
    ServerSide,
    /// Neither: WebSearch is not offered.
    NotOffered,
}

/// The report being written: one marked line per check, and the counts for the summary.
#[derive(Default)]
struct Report {
    out: String,
    problems: usize,
    warnings: usize,
}

impl Report {
    /// A check that passed.
    fn ok(&mut self, text: &str) {
        let _ = writeln!(self.out, "✓ {text}");
    }

    /// A thing to look at.
    fn warn(&mut self, text: &str) {
        self.warnings += 1;
        let _ = writeln!(self.out, "! {text}");
    }

    /// A problem to fix.
    fn problem(&mut self, text: &str) {
        self.problems += 1;
        let _ = writeln!(self.out, "✗ {text}");
    }

    /// The last line: how many problems and things to look at.
    fn finish(mut self) -> String {
        let summary = match (self.problems, self.warnings) {
            (0, 0) => "Everything looks right.".to_string(),
            (0, w) => format!("No problems; {w} thing(s) to look at."),
            (p, w) => format!("{p} problem(s) to fix, {w} thing(s) to look at."),
        };
        self.out.push_str(&summary);
        self.out
    }
}

/// The `/doctor` report: provider and key, whether the provider answers, what went wrong
/// while loading, the MCP servers, the session log and git.
pub(crate) async fn doctor_report(facts: DoctorFacts<'_>) -> String {
    let mut report = Report {
        out: format!(
            "robota {} — checking this session\n",
            env!("CARGO_PKG_VERSION")
        ),
        ..Report::default()
    };
    provider_checks(&mut report, &facts).await;
    if facts.startup_warnings.is_empty() {
        report.ok("Settings, commands, skills and subagents loaded without problems");
    } else {
        report.warn(&format!(
            "{} problem(s) while loading settings and definitions:",
            facts.startup_warnings.len()
        ));
        for warning in facts.startup_warnings {
            let _ = writeln!(report.out, "    {}", warning.lines().next().unwrap_or(""));
        }
    }
    web_search_check(&mut report, facts.web_search);
    sandbox_check(&mut report, facts.sandbox);
    bash_shell_check(&mut report, &facts.bash_shell);
    confinement_check(&mut report, &facts.confinement);
    for server in &facts.mcp {
        server_check(&mut report, server);
    }
    match &facts.log {
        Some(path) => report.ok(&format!("Session log {}", path.display())),
        None => {
            report.warn("No session log: this session cannot be resumed (is ROBOTA_HOME writable?)")
        }
    }
    match git_version().await {
        Some(version) => report.ok(&version),
        None => {
            report.warn("git was not found: the prompt carries no branch or status; install git")
        }
    }
    report.finish()
}

/// Whether the model can search the web, and how to let it when it cannot.
fn web_search_check(report: &mut Report, offer: WebSearchOffer) {
    match offer {
        WebSearchOffer::Backend => report.ok("WebSearch through the webSearch backend of the settings"),
        WebSearchOffer::ServerSide => report.ok("WebSearch runs at the provider (server-side search)"),
        WebSearchOffer::NotOffered => report.warn(
            "WebSearch is not offered: this provider has no server-side search and no webSearch backend is configured (settings \"webSearch\": {\"provider\": \"brave\", \"apiKey\": \"$ENV:BRAVE_API_KEY\"} or {\"provider\": \"searxng\", \"baseURL\": …})",
        ),
    }
}

/// Which backend confines Bash commands here, or why none does.
fn sandbox_check(report: &mut Report, support: &Support) {
    match (&support.missing, support.backend) {
        (None, Backend::Landlock) => report.ok(&format!(
            "Bash sandbox: landlock (namespaces and Landlock ABI {})",
            support.landlock_abi
        )),
        (None, backend) => report.ok(&format!("Bash sandbox: {}", backend.name())),
        (Some(why), _) => report.warn(&format!(
            "Bash sandbox: none ({why}); commands are checked by the permission rules only"
        )),
    }
}

/// Which shell Bash commands run in, where it is not a given (Windows: Git Bash).
fn bash_shell_check(report: &mut Report, shell: &BashShell) {
    match shell {
        BashShell::Posix => {}
        BashShell::GitBash(path) => {
            report.ok(&format!("Bash tool shell: Git Bash ({})", path.display()))
        }
        BashShell::GitBashMissing => report.problem(&format!(
            "Bash tool shell: {}; Bash commands and command hooks cannot run",
            robota_core::git_bash::GIT_BASH_MISSING
        )),
    }
}

/// Which confinement Bash commands get in each mode: the full sandbox, the
/// filesystem-only guard (deny rules and protected files), or the rules alone.
fn confinement_check(report: &mut Report, by_mode: &[(PermissionMode, Confinement)]) {
    let line = by_mode
        .iter()
        .map(|(mode, c)| format!("{mode} {}", c.name()))
        .collect::<Vec<_>>()
        .join(", ");
    if by_mode.iter().any(|(_, c)| *c == Confinement::Unconfined) {
        report.warn(&format!(
            "Bash confinement by mode: {line} (rules-only: the deny rules and protected files are guarded by the command analyzer alone, which code it cannot read can get past)"
        ));
    } else {
        report.ok(&format!("Bash confinement by mode: {line}"));
    }
}

/// The provider, its key, and whether its address answers.
async fn provider_checks(report: &mut Report, facts: &DoctorFacts<'_>) {
    let endpoint = facts.endpoint;
    let provider = if endpoint.provider.is_empty() {
        facts.provider
    } else {
        endpoint.provider.as_str()
    };
    report.ok(&format!("Provider {provider}, model {}", facts.model));
    let local = is_loopback(&endpoint.base_url);
    match &endpoint.key_source {
        Some(source) => report.ok(&format!("API key from {source}")),
        None if local || provider == "openai-compatible" => {
            report.ok("No API key (none needed for a local server)")
        }
        None => report.problem(&format!(
            "No API key: set {} or choose a provider in robota's setup screen",
            key_variable(provider)
        )),
    }
    if endpoint.base_url.is_empty() {
        report.warn("Provider address unknown here: reachability not checked");
        return;
    }
    match reach(&endpoint.base_url).await {
        Ok(took) => report.ok(&format!(
            "{} answers (connected in {} ms)",
            endpoint.base_url,
            took.as_millis()
        )),
        Err(why) => {
            let source = endpoint
                .base_url_source
                .as_deref()
                .map(|s| format!(" (set by {s})"))
                .unwrap_or_default();
            report.problem(&format!(
                "{} cannot be reached: {why}. Check the network, a proxy (HTTPS_PROXY) or the base URL{source}",
                endpoint.base_url
            ));
        }
    }
}

/// One MCP server's state.
fn server_check(report: &mut Report, server: &ServerReport) {
    match server.status {
        ServerStatus::Connected => report.ok(&format!(
            "MCP server {} connected ({} tools)",
            server.name,
            server.tools.len()
        )),
        ServerStatus::Pending => {
            let _ = writeln!(
                report.out,
                "! MCP server {} is still connecting",
                server.name
            );
        }
        ServerStatus::Failed | ServerStatus::NeedsAuth => report.problem(&format!(
            "MCP server {} ({}): {} — fix its entry in {} and run /mcp reconnect {}",
            server.name,
            server.status.as_str(),
            server.error.as_deref().unwrap_or("no reason given"),
            server.source,
            server.name
        )),
    }
}

/// The variable that holds `provider`'s key.
fn key_variable(provider: &str) -> &'static str {
    match provider {
        "openai" => "OPENAI_API_KEY",
        "google" | "gemini" => "GEMINI_API_KEY",
        _ => "ANTHROPIC_API_KEY",
    }
}

fn is_loopback(base_url: &str) -> bool {
    url::Url::parse(base_url)
        .ok()
        .and_then(|u| u.host_str().map(str::to_string))
        .is_some_and(|h| h == "localhost" || h == "127.0.0.1" || h == "[::1]" || h == "::1")
}

/// Why the provider's address does not answer.
#[derive(Debug, thiserror::Error)]
enum Unreachable {
    #[error("not a URL ({0})")]
    NotUrl(#[from] url::ParseError),
    #[error("the URL names no host")]
    NoHost,
    #[error("the URL names no port")]
    NoPort,
    #[error("{0}")]
    Connect(#[from] std::io::Error),
    #[error("no answer within {} s", CONNECT_TIMEOUT.as_secs())]
    Timeout,
}

/// Opens a TCP connection to the host and port of `base_url` (nothing is sent).
async fn reach(base_url: &str) -> Result<Duration, Unreachable> {
    let url = url::Url::parse(base_url)?;
    let host = url.host_str().ok_or(Unreachable::NoHost)?.to_string();
    let port = url.port_or_known_default().ok_or(Unreachable::NoPort)?;
    let started = Instant::now();
    let host = host
        .trim_start_matches('[')
        .trim_end_matches(']')
        .to_string();
    match tokio::time::timeout(
        CONNECT_TIMEOUT,
        tokio::net::TcpStream::connect((host.as_str(), port)),
    )
    .await
    {
        Ok(Ok(_)) => Ok(started.elapsed()),
        Ok(Err(e)) => Err(Unreachable::Connect(e)),
        Err(_) => Err(Unreachable::Timeout),
    }
}

/// `git --version`, killed after a few seconds (a git that hangs is reported missing).
async fn git_version() -> Option<String> {
    let mut git = tokio::process::Command::new("git");
    git.arg("--version");
    let io = HelperIo {
        input: None,
        output_limit: 4096,
        deadline: deadline(Duration::from_secs(5)),
    };
    let output = run_helper(git, io).await.ok()?;
    output
        .success()
        .then(|| String::from_utf8_lossy(&output.stdout).trim().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts(endpoint: &ProviderEndpoint) -> DoctorFacts<'_> {
        DoctorFacts {
            endpoint,
            provider: "anthropic",
            model: "claude-sonnet-4-5",
            startup_warnings: &[],
            mcp: Vec::new(),
            log: Some(PathBuf::from("/tmp/s.jsonl")),
            web_search: WebSearchOffer::ServerSide,
            sandbox: &SANDBOX_ON,
            confinement: vec![
                (PermissionMode::Default, Confinement::Sandbox),
                (PermissionMode::BypassPermissions, Confinement::Files),
            ],
            bash_shell: BashShell::Posix,
        }
    }

    #[tokio::test]
    async fn git_bash_is_reported_where_it_is_the_shell() {
        let endpoint = ProviderEndpoint::default();
        let report = doctor_report(facts(&endpoint)).await;
        assert!(!report.contains("Bash tool shell"), "{report}");
        let report = doctor_report(DoctorFacts {
            bash_shell: BashShell::GitBash(PathBuf::from("C:\\Program Files\\Git\\bin\\bash.exe")),
            ..facts(&endpoint)
        })
        .await;
        assert!(
            report.contains("✓ Bash tool shell: Git Bash (C:\\Program Files\\Git\\bin\\bash.exe)"),
            "{report}"
        );
        let report = doctor_report(DoctorFacts {
            bash_shell: BashShell::GitBashMissing,
            ..facts(&endpoint)
        })
        .await;
        assert!(
            report.contains("✗ Bash tool shell: Git Bash was not found: install Git for Windows"),
            "{report}"
        );
        assert!(report.contains("CLAUDE_CODE_GIT_BASH_PATH"), "{report}");
    }

    const SANDBOX_ON: Support = Support {
        backend: Backend::Seatbelt,
        landlock_abi: 0,
        missing: None,
    };

    #[tokio::test]
    async fn the_sandbox_backend_or_its_absence_is_reported() {
        let endpoint = ProviderEndpoint::default();
        let report = doctor_report(facts(&endpoint)).await;
        assert!(report.contains("✓ Bash sandbox: seatbelt"), "{report}");
        assert!(
            report.contains(
                "✓ Bash confinement by mode: default sandbox, bypassPermissions filesystem"
            ),
            "{report}"
        );
        let none = Support {
            backend: Backend::None,
            landlock_abi: 0,
            missing: Some("robota has no sandbox backend for windows".into()),
        };
        let report = doctor_report(DoctorFacts {
            sandbox: &none,
            confinement: vec![(PermissionMode::BypassPermissions, Confinement::Unconfined)],
            ..facts(&endpoint)
        })
        .await;
        assert!(
            report.contains("! Bash confinement by mode: bypassPermissions rules-only"),
            "{report}"
        );
        assert!(
            report.contains("! Bash sandbox: none (robota has no sandbox backend for windows); commands are checked by the permission rules only"),
            "{report}"
        );
    }

    #[tokio::test]
    async fn web_search_is_reported_with_how_to_offer_it() {
        let endpoint = ProviderEndpoint::default();
        let report = doctor_report(DoctorFacts {
            web_search: WebSearchOffer::NotOffered,
            ..facts(&endpoint)
        })
        .await;
        assert!(report.contains("! WebSearch is not offered"), "{report}");
        assert!(report.contains("\"provider\": \"brave\""), "{report}");
        let report = doctor_report(DoctorFacts {
            web_search: WebSearchOffer::Backend,
            ..facts(&endpoint)
        })
        .await;
        assert!(
            report.contains("✓ WebSearch through the webSearch backend"),
            "{report}"
        );
    }

    #[tokio::test]
    async fn a_listening_provider_and_a_key_pass() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let accepted = tokio::spawn(async move { listener.accept().await.is_ok() });
        let endpoint = ProviderEndpoint {
            provider: "anthropic".into(),
            base_url: format!("http://127.0.0.1:{port}"),
            base_url_source: None,
            key_source: Some("ANTHROPIC_API_KEY".into()),
        };
        let report = doctor_report(facts(&endpoint)).await;
        assert!(
            report.contains("✓ API key from ANTHROPIC_API_KEY"),
            "{report}"
        );
        assert!(
            report.contains(&format!("✓ http://127.0.0.1:{port} answers")),
            "{report}"
        );
        assert!(!report.contains('✗'), "{report}");
        assert!(accepted.await.unwrap(), "the check really connected");
    }

    #[tokio::test]
    async fn a_missing_key_and_a_closed_port_are_problems_with_what_to_do() {
        // A port that was free a moment ago: nothing listens on it.
        let port = {
            let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            l.local_addr().unwrap().port()
        };
        let endpoint = ProviderEndpoint {
            provider: "openai".into(),
            base_url: format!("http://127.0.0.1:{port}/v1"),
            base_url_source: Some("OPENAI_BASE_URL".into()),
            key_source: None,
        };
        let warnings = vec!["settings.json: \"permissions.allow\" must be a list".to_string()];
        let report = doctor_report(DoctorFacts {
            startup_warnings: &warnings,
            log: None,
            ..facts(&endpoint)
        })
        .await;
        assert!(report.contains("cannot be reached"), "{report}");
        assert!(report.contains("(set by OPENAI_BASE_URL)"), "{report}");
        assert!(report.contains("must be a list"), "{report}");
        assert!(report.contains("cannot be resumed"), "{report}");
        // A loopback server needs no key: only the connection is a problem.
        assert!(
            report.ends_with("1 problem(s) to fix, 2 thing(s) to look at."),
            "{report}"
        );
        let remote = ProviderEndpoint {
            base_url: String::new(),
            ..endpoint
        };
        let report = doctor_report(facts(&remote)).await;
        assert!(
            report.contains("✗ No API key: set OPENAI_API_KEY"),
            "{report}"
        );
    }
}
