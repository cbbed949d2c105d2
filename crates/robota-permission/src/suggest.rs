//! The narrowest rule that would allow a call again ("Yes, don't ask again"): Bash
//! commands by name and subcommand prefix (one rule per command that needs approval,
//! comma-separated), files by their exact path (`Edit(...)` for every file-changing tool,
//! relative to the working directory inside it, `//abs` outside), WebFetch by domain,
//! agents by type, other tools by name. Empty when no rule can allow the call (an opaque
//! command line).

use std::path::Path;

use super::rules::PathFamily;
use super::{CallFacts, bash, fold, host_of};

/// The rule text to offer, ready for [`super::PermissionRule::parse_list`].
pub fn suggested_rule(call: &CallFacts<'_>) -> String {
    match call.tool {
        "Bash" => {
            let command = call
                .argument
                .or_else(|| call.input_str("command"))
                .unwrap_or("");
            bash::suggested_rules(command).join(", ")
        }
        "WebFetch" => call
            .input_str("url")
            .or(call.argument)
            .and_then(host_of)
            .map_or_else(
                || "WebFetch".to_string(),
                |h| format!("WebFetch(domain:{h})"),
            ),
        "Agent" | "Task" => call
            .input_str("subagent_type")
            .or(call.argument)
            .map_or_else(|| "Agent".to_string(), |t| format!("Agent({t})")),
        tool => match PathFamily::of_tool(tool) {
            Some(family) => path_rule(call, family).unwrap_or_else(|| tool.to_string()),
            None => tool.to_string(),
        },
    }
}

fn path_rule(call: &CallFacts<'_>, family: PathFamily) -> Option<String> {
    let (path, directory) = match call.tool {
        "Glob" | "Grep" | "LS" => (call.input_str("path").unwrap_or("."), true),
        _ => (
            call.input_str("file_path")
                .or_else(|| call.input_str("notebook_path"))
                .or(call.argument)?,
            false,
        ),
    };
    let absolute = fold(&call.cwd.join(path));
    let mut spec = match absolute.strip_prefix(call.cwd) {
        Ok(rel) if !rel.as_os_str().is_empty() => format!("./{}", escape(rel)),
        Ok(_) => ".".to_string(),
        Err(_) => format!("/{}", escape(&absolute)),
    };
    if directory {
        spec = format!("{}/**", spec.trim_end_matches('/'));
    }
    let tool = match family {
        PathFamily::Read => "Read",
        PathFamily::Edit => "Edit",
    };
    Some(format!("{tool}({spec})"))
}

fn escape(path: &Path) -> String {
    globset::escape(&path.to_string_lossy())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::RiskClass;
    use serde_json::json;

    fn suggest(tool: &str, arg: &str) -> String {
        let input = json!({"command": arg, "file_path": arg, "url": arg, "subagent_type": arg});
        suggested_rule(&CallFacts {
            input: Some(&input),
            ..CallFacts::new(tool, RiskClass::Execute, Some(arg), Path::new("/repo"))
        })
    }

    #[test]
    fn narrow_rules() {
        assert_eq!(suggest("Bash", "git push origin main"), "Bash(git push *)");
        assert_eq!(
            suggest("Bash", "npm run build -- --prod"),
            "Bash(npm run build *)"
        );
        assert_eq!(suggest("Bash", "make"), "Bash(make)");
        assert_eq!(suggest("Bash", "touch one.txt"), "Bash(touch *)");
        assert_eq!(suggest("Bash", "python3 build.py"), "Bash(python3 *)");
        assert_eq!(suggest("Bash", "rm -rf target"), "Bash(rm *)");
        assert_eq!(
            suggest("Bash", "timeout 60 cargo test && ls && git commit -m x"),
            "Bash(cargo test *), Bash(git commit *)"
        );
        assert_eq!(suggest("Bash", "eval \"$x\""), "");
        assert_eq!(suggest("Edit", "/repo/src/a.rs"), "Edit(./src/a.rs)");
        assert_eq!(suggest("Write", "/etc/x[1]"), "Edit(//etc/x[[]1[]])");
        assert_eq!(suggest("Read", "../other/a"), "Read(//other/a)");
        assert_eq!(
            suggest("WebFetch", "https://Docs.rs/x"),
            "WebFetch(domain:docs.rs)"
        );
        assert_eq!(suggest("Agent", "Explore"), "Agent(Explore)");
        assert_eq!(suggest("mcp__gh__issue", "x"), "mcp__gh__issue");
    }
}
