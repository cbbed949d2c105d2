//! Turning a Markdown command or skill into the prompt its turn sends: the arguments put
//! in (`$ARGUMENTS`, `$ARGUMENTS[N]` and `$N` 0-based as Claude Code ≥ 2.1.19, quoted
//! arguments kept together, `\$` escapes, `ARGUMENTS: …` appended when the body names
//! none), `${CLAUDE_SESSION_ID}`, `${CLAUDE_SKILL_DIR}` and `${CLAUDE_PROJECT_DIR}`, and
//! the output of its `` !`command` `` lines and ```` ```! ```` blocks. Those commands go
//! through the permission rules like a Bash call, with the command's `allowed-tools`
//! added: only what the rules allow runs (nobody is asked). A line the rules refuse does
//! not run; the others do, as in Claude Code, and the prompt says where and why the
//! refused one did not (the user is told too, with the rule that would allow it). A
//! command that exits non-zero stops the command (exit 1 of `grep`, `diff` and the like
//! means "nothing found" and is kept). Before the rules, `PreSkillShellCommand` hooks may
//! stop a line and with it the command (`shell_hook.rs`).

use std::path::Path;

use tokio_util::sync::CancellationToken;

use crate::shell_command::run_shell_command;
use robota_core::RiskClass;
use robota_core::permission::{
    CallFacts, PermissionPolicy, PermissionRule, Verdict, suggested_rule,
};
use robota_session::hooks::HookHandle;

use super::definition::PromptCommand;

/// What a command's expansion needs of its session.
pub(crate) struct ExpandContext<'a> {
    pub cwd: &'a Path,
    pub env: &'a [(String, String)],
    pub session_id: &'a str,
    /// The session's rules as they stand (the command's `allowed-tools` are added here).
    pub policy: PermissionPolicy,
    pub cancel: &'a CancellationToken,
    /// The session's hooks: `PreSkillShellCommand` is asked before each shell line.
    pub hooks: Option<&'a HookHandle>,
}

/// Why a command's prompt could not be worked out: a hook stopped one of its shell lines,
/// or one failed (the whole command is refused).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum ExpandError {
    #[error("/{command}: `{script}` was stopped by a PreSkillShellCommand hook: {reason}")]
    StoppedByHook {
        command: String,
        script: String,
        reason: String,
    },
    #[error("/{command}: interrupted")]
    Interrupted { command: String },
    #[error(
        "/{command}: `{script}` failed ({}){}",
        .exit_code.map_or("it did not exit normally".to_string(), |c| format!("exit code {c}")),
        if .output.is_empty() { String::new() } else { format!(": {}", .output) }
    )]
    Failed {
        command: String,
        script: String,
        exit_code: Option<i32>,
        output: String,
    },
}

/// A command's prompt, and the shell lines the rules did not let run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Expanded {
    /// The text the turn sends.
    pub prompt: String,
    /// The refused lines, in order; the prompt names each where its output would be.
    pub refused: Vec<RefusedLine>,
}

/// A shell line of a command that the permission rules refused: it did not run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RefusedLine {
    /// The line as written.
    pub script: String,
    /// Why the rules refused it.
    pub reason: String,
    /// The narrowest rule that would allow it, if one can (none for a line that builds
    /// what it runs at run time).
    pub rule: Option<String>,
}

impl RefusedLine {
    /// What the prompt holds in the line's place.
    fn note(&self) -> String {
        format!("[`{}` was not run: {}]", self.script, self.reason)
    }

    /// What the user is told, for the command `/command`.
    pub fn message(&self, command: &str) -> String {
        let allow = match &self.rule {
            Some(rule) => format!(
                "; allow it in the command's allowed-tools or a permissions.allow rule ({rule})"
            ),
            None => "; no rule can allow it, since it cannot be checked before it runs".into(),
        };
        format!(
            "/{command}: `{}` was not run: the shell command permission check failed ({}){allow}",
            self.script, self.reason
        )
    }
}

/// Programs whose exit status 1 means "no match" or "differs", not failure.
const EXIT_ONE_IS_AN_ANSWER: &[&str] = &["grep", "egrep", "fgrep", "rg", "diff", "cmp", "git"];

/// The prompt `command` sends for `args`.
pub async fn expand(
    command: &PromptCommand,
    args: &str,
    ctx: ExpandContext<'_>,
) -> Result<Expanded, ExpandError> {
    let mut text = String::new();
    if let Some(dir) = command.skill_dir() {
        text.push_str(&format!(
            "Base directory for this skill: {}\n\n",
            dir.display()
        ));
    }
    let body = substitute(&command.body, args, ctx.session_id, command, ctx.cwd);
    let mut policy = ctx.policy;
    policy.allow.extend(
        command
            .allowed_tools
            .iter()
            .flat_map(|rule| PermissionRule::parse_list(rule)),
    );
    let mut runner = InlineRunner {
        command,
        policy: &policy,
        cwd: ctx.cwd,
        env: ctx.env,
        cancel: ctx.cancel,
        hooks: ctx.hooks,
        refused: Vec::new(),
    };
    text.push_str(&runner.run_all(&body).await?);
    Ok(Expanded {
        prompt: text,
        refused: runner.refused,
    })
}

/// Puts the arguments and the session's variables into `body`.
pub(crate) fn substitute(
    body: &str,
    args: &str,
    session_id: &str,
    command: &PromptCommand,
    project_dir: &Path,
) -> String {
    let words = split_arguments(args);
    let mut out = String::with_capacity(body.len() + args.len());
    let mut named_any = false;
    let mut rest = body;
    while let Some(at) = rest.find(['$', '\\']) {
        out.push_str(&rest[..at]);
        let tail = &rest[at..];
        if let Some(escaped) = tail.strip_prefix("\\$") {
            out.push('$');
            rest = escaped;
            continue;
        }
        if let Some(after) = tail.strip_prefix('\\') {
            out.push('\\');
            rest = after;
            continue;
        }
        if let Some(after) = tail.strip_prefix("$ARGUMENTS") {
            named_any = true;
            if let Some((index, after_index)) = bracketed_index(after) {
                out.push_str(words.get(index).map(String::as_str).unwrap_or(""));
                rest = after_index;
            } else {
                out.push_str(args);
                rest = after;
            }
            continue;
        }
        let digits: String = tail[1..].chars().take_while(char::is_ascii_digit).collect();
        if !digits.is_empty() {
            named_any = true;
            match digits.parse::<usize>().ok().and_then(|i| words.get(i)) {
                Some(word) => out.push_str(word),
                None => out.push_str(&tail[..=digits.len()]),
            }
            rest = &tail[1 + digits.len()..];
            continue;
        }
        let variables = [
            ("${CLAUDE_SESSION_ID}", session_id.to_string()),
            (
                "${CLAUDE_SKILL_DIR}",
                command
                    .skill_dir()
                    .map(|d| d.display().to_string())
                    .unwrap_or_default(),
            ),
            ("${CLAUDE_PROJECT_DIR}", project_dir.display().to_string()),
        ];
        match variables.iter().find(|(name, _)| tail.starts_with(name)) {
            Some((name, value)) => {
                out.push_str(value);
                rest = &tail[name.len()..];
            }
            None => {
                out.push('$');
                rest = &tail[1..];
            }
        }
    }
    out.push_str(rest);
    if !named_any && !args.trim().is_empty() {
        out = format!("{}\n\nARGUMENTS: {}", out.trim_end(), args.trim());
    }
    out
}

/// `[N]` right after `$ARGUMENTS`: the index and the text after it.
fn bracketed_index(text: &str) -> Option<(usize, &str)> {
    let inner = text.strip_prefix('[')?;
    let close = inner.find(']')?;
    let index = inner[..close].trim().parse().ok()?;
    Some((index, &inner[close + 1..]))
}

/// Arguments split at whitespace, quoted ones (`"hello world"`, `'a b'`) kept whole.
pub(crate) fn split_arguments(args: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut current = String::new();
    let mut quote: Option<char> = None;
    let mut started = false;
    for c in args.chars() {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => current.push(c),
            None if c == '"' || c == '\'' => {
                quote = Some(c);
                started = true;
            }
            None if c.is_whitespace() => {
                if started {
                    words.push(std::mem::take(&mut current));
                    started = false;
                }
            }
            None => {
                current.push(c);
                started = true;
            }
        }
    }
    if started {
        words.push(current);
    }
    words
}

/// What running a command's shell lines needs.
struct InlineRunner<'a> {
    command: &'a PromptCommand,
    policy: &'a PermissionPolicy,
    cwd: &'a Path,
    env: &'a [(String, String)],
    cancel: &'a CancellationToken,
    hooks: Option<&'a HookHandle>,
    /// The lines the rules refused so far.
    refused: Vec<RefusedLine>,
}

impl InlineRunner<'_> {
    /// Runs the `` !`command` `` lines and ```` ```! ```` blocks of `body`, each replaced
    /// by its output.
    async fn run_all(&mut self, body: &str) -> Result<String, ExpandError> {
        let mut out = String::with_capacity(body.len());
        let mut lines = body.split_inclusive('\n');
        while let Some(line) = lines.next() {
            if line.trim_end() == "```!" {
                let mut script = String::new();
                for inner in lines.by_ref() {
                    if inner.trim_end() == "```" {
                        break;
                    }
                    script.push_str(inner);
                }
                out.push_str(&self.run_one(script.trim_end()).await?);
                out.push('\n');
                continue;
            }
            let mut rest = line;
            while let Some(start) = inline_start(rest) {
                let after = &rest[start + 2..];
                let Some(end) = after.find('`') else {
                    break;
                };
                out.push_str(&rest[..start]);
                out.push_str(&self.run_one(&after[..end]).await?);
                rest = &after[end + 1..];
            }
            out.push_str(rest);
        }
        Ok(out)
    }
}

/// Where the next `` !` `` begins: at the start of the text or after whitespace.
fn inline_start(text: &str) -> Option<usize> {
    let mut from = 0;
    while let Some(found) = text[from..].find("!`") {
        let at = from + found;
        let before = text[..at].chars().next_back();
        if before.is_none_or(char::is_whitespace) {
            return Some(at);
        }
        from = at + 2;
    }
    None
}

impl InlineRunner<'_> {
    /// One shell line: its output when the rules allow it, else a note saying why it did
    /// not run.
    async fn run_one(&mut self, script: &str) -> Result<String, ExpandError> {
        let (command, policy, cwd, env, cancel) =
            (self.command, self.policy, self.cwd, self.env, self.cancel);
        super::shell_hook::check(self.hooks, command, script, cancel).await?;
        let facts = CallFacts::new("Bash", RiskClass::Execute, Some(script), cwd);
        match policy.evaluate(&facts) {
            Verdict::Allow => {}
            Verdict::Ask { reason } | Verdict::Deny { reason } => {
                let rule = suggested_rule(&facts);
                let refused = RefusedLine {
                    script: script.to_string(),
                    reason,
                    rule: (!rule.is_empty()).then_some(rule),
                };
                let note = refused.note();
                self.refused.push(refused);
                return Ok(note);
            }
        }
        let run = run_shell_command(script, cwd, env, cancel, &|_| {}).await;
        if cancel.is_cancelled() {
            return Err(ExpandError::Interrupted {
                command: command.name.clone(),
            });
        }
        let program = script
            .split_whitespace()
            .next()
            .map(|p| p.rsplit('/').next().unwrap_or(p))
            .unwrap_or("");
        match run.exit_code {
            Some(0) => Ok(run.output),
            Some(1) if EXIT_ONE_IS_AN_ANSWER.contains(&program) => Ok(run.output),
            exit_code => Err(ExpandError::Failed {
                command: command.name.clone(),
                script: script.to_string(),
                exit_code,
                output: run.output,
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::commands::{DefinitionKind, Origin};
    use robota_core::permission::PermissionMode;
    use std::path::PathBuf;

    fn command(body: &str, allowed: &[&str]) -> PromptCommand {
        PromptCommand {
            name: "c".into(),
            description: String::new(),
            argument_hint: String::new(),
            kind: DefinitionKind::Command,
            origin: Origin::Project,
            path: PathBuf::from("/p/.claude/commands/c.md"),
            body: body.into(),
            allowed_tools: allowed.iter().map(|s| s.to_string()).collect(),
            model: None,
            disable_model_invocation: false,
            user_invocable: true,
            fork_agent: None,
        }
    }

    fn sub(body: &str, args: &str) -> String {
        substitute(body, args, "sid", &command(body, &[]), Path::new("/p"))
    }

    #[test]
    fn arguments_whole_indexed_quoted_and_escaped() {
        assert_eq!(sub("Fix $ARGUMENTS now", "bug 12"), "Fix bug 12 now");
        assert_eq!(
            sub("A=$0 B=$ARGUMENTS[1] C=$7 D=\\$1", r#""hello world" two"#),
            "A=hello world B=two C=$7 D=$1"
        );
        assert_eq!(
            sub("No placeholders.\n", "x y"),
            "No placeholders.\n\nARGUMENTS: x y"
        );
        assert_eq!(sub("Plain", ""), "Plain");
        assert_eq!(
            sub("cost $5 of $ and ${CLAUDE_SESSION_ID}", "a"),
            "cost $5 of $ and sid"
        );
        assert_eq!(split_arguments(" a  'b c' \"\" d"), ["a", "b c", "", "d"]);
    }

    #[tokio::test]
    async fn inline_commands_run_only_when_allowed() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("f.txt"), "content\n").unwrap();
        let cancel = CancellationToken::new();
        let ctx = |mode| ExpandContext {
            cwd: dir.path(),
            env: &[],
            session_id: "s",
            policy: PermissionPolicy::new(mode),
            cancel: &cancel,
            hooks: None,
        };
        let c = command(
            "File: !`cat f.txt`\n```!\necho one\necho two\n```\nend !`x` a!`y`",
            &["Bash(cat:*)", "Bash(echo:*)"],
        );
        let expanded = expand(&c, "", ctx(PermissionMode::Default)).await.unwrap();
        let scripts: Vec<&str> = expanded.refused.iter().map(|r| r.script.as_str()).collect();
        assert_eq!(scripts, ["x"], "only the refused line is left out");
        assert!(
            expanded
                .prompt
                .starts_with("File: content\none\ntwo\nend [`x` was not run: "),
            "{}",
            expanded.prompt
        );
        assert!(expanded.prompt.ends_with(" a!`y`"), "{}", expanded.prompt);
        let c = command(
            "File: !`cat f.txt`\n```!\necho one\necho two\n```\nend",
            &["Bash(cat:*)", "Bash(echo:*)"],
        );
        let text = expand(&c, "", ctx(PermissionMode::Default)).await.unwrap();
        assert_eq!(text.prompt, "File: content\none\ntwo\nend");
        assert!(text.refused.is_empty());
        let unallowed = command("!`touch made`", &[]);
        let expanded = expand(&unallowed, "", ctx(PermissionMode::Default))
            .await
            .unwrap();
        let message = expanded.refused[0].message("c");
        assert!(message.contains("permission check failed"), "{message}");
        assert!(message.contains("(Bash(touch *))"), "{message}");
        assert!(!dir.path().join("made").exists());
        let opaque = command("!`sh -c \"$X\"`", &[]);
        let expanded = expand(&opaque, "", ctx(PermissionMode::Default))
            .await
            .unwrap();
        assert_eq!(
            expanded.refused[0].rule, None,
            "no rule allows an opaque line"
        );
        let failing = command("!`cat missing.txt`", &["Bash(cat:*)"]);
        let err = expand(&failing, "", ctx(PermissionMode::Default))
            .await
            .unwrap_err();
        assert!(
            matches!(
                &err,
                ExpandError::Failed {
                    exit_code: Some(1),
                    ..
                }
            ),
            "{err}"
        );
        assert!(err.to_string().contains("exit code 1"), "{err}");
        let grep = command("!`grep nothing f.txt`", &["Bash(grep:*)"]);
        assert_eq!(
            expand(&grep, "", ctx(PermissionMode::Default))
                .await
                .unwrap()
                .prompt,
            ""
        );
    }
}
