//! `robota stats`: usage and cost across sessions, read from the session logs under
//! `$ROBOTA_HOME/projects/` — every assistant line's usage, priced by the model table —
//! totalled and broken down per day (the line's UTC date), per project (the session's
//! working directory) and per model. Lines before `since` are left out; a line that cannot
//! be read is skipped, never fatal.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use robota_core::Usage;
use robota_core::models;
use serde::Serialize;

use crate::line::LogLine;

/// Tokens and cost of a group of model calls.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct UsageTotals {
    /// Sessions with at least one call in the group.
    pub sessions: usize,
    /// Model calls (assistant lines with usage).
    pub calls: u64,
    /// Uncached prompt tokens.
    pub input_tokens: u64,
    /// Generated tokens.
    pub output_tokens: u64,
    /// Prompt tokens read from the cache.
    pub cache_read_tokens: u64,
    /// Prompt tokens written to the cache.
    pub cache_write_tokens: u64,
    /// US dollars, for the calls whose model has a known price.
    pub cost_usd: f64,
    /// Calls whose model's price is unknown (not in `cost_usd`).
    pub unpriced_calls: u64,
}

impl UsageTotals {
    fn add(&mut self, usage: &Usage, cost: Option<f64>) {
        self.calls += 1;
        self.input_tokens += usage.input_tokens;
        self.output_tokens += usage.output_tokens;
        self.cache_read_tokens += usage.cache_read_input_tokens;
        self.cache_write_tokens += usage.cache_creation_input_tokens;
        match cost {
            Some(cost) => self.cost_usd += cost,
            None => self.unpriced_calls += 1,
        }
    }
}

/// Usage across sessions: the total and the three breakdowns.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct UsageStats {
    /// Every call counted.
    pub total: UsageTotals,
    /// By UTC date (`2026-11-28`).
    pub by_day: BTreeMap<String, UsageTotals>,
    /// By the session's working directory.
    pub by_project: BTreeMap<String, UsageTotals>,
    /// By model.
    pub by_model: BTreeMap<String, UsageTotals>,
}

/// The cost of one call's usage by `model`, when its price is known.
pub fn call_cost(model: &str, usage: &Usage) -> Option<f64> {
    models::lookup(model).price.map(|price| price.cost(usage))
}

/// Reads every session log under `robota_home`, counting calls on or after `since` (a
/// date `YYYY-MM-DD` or an RFC 3339 time, compared as text with the line's timestamp).
pub fn collect(robota_home: &Path, since: Option<&str>) -> UsageStats {
    let mut stats = UsageStats::default();
    for log in session_logs(&robota_home.join("projects")) {
        let Ok(text) = std::fs::read(&log) else {
            continue;
        };
        add_session(&mut stats, &text, since);
    }
    stats
}

/// Counts one session log's calls.
fn add_session(stats: &mut UsageStats, text: &[u8], since: Option<&str>) {
    let mut groups: Vec<(u8, String)> = Vec::new();
    let mut counted = false;
    for line in text.split(|b| *b == b'\n').filter(|l| !l.is_empty()) {
        let Ok(LogLine::Assistant(message)) = LogLine::from_slice(line) else {
            continue;
        };
        let (Some(usage), Some(model)) = (&message.message.usage, &message.message.model) else {
            continue;
        };
        if since.is_some_and(|since| message.timestamp.as_str() < since) {
            continue;
        }
        let cost = call_cost(model, usage);
        let day = message.timestamp.get(..10).unwrap_or("unknown").to_string();
        let project = if message.cwd.is_empty() {
            "unknown".to_string()
        } else {
            message.cwd.clone()
        };
        stats.total.add(usage, cost);
        for (kind, map, key) in [
            (0, &mut stats.by_day, day),
            (1, &mut stats.by_project, project),
            (2, &mut stats.by_model, model.clone()),
        ] {
            let entry = map.entry(key.clone()).or_default();
            entry.add(usage, cost);
            if !groups.contains(&(kind, key.clone())) {
                entry.sessions += 1;
                groups.push((kind, key));
            }
        }
        counted = true;
    }
    if counted {
        stats.total.sessions += 1;
    }
}

/// The `.jsonl` logs of every project directory (subagents' logs are inside a session's
/// own directory and not counted twice).
fn session_logs(projects: &Path) -> Vec<PathBuf> {
    let mut logs = Vec::new();
    for project in std::fs::read_dir(projects).into_iter().flatten().flatten() {
        for file in std::fs::read_dir(project.path())
            .into_iter()
            .flatten()
            .flatten()
        {
            let path = file.path();
            if path.extension().is_some_and(|e| e == "jsonl") {
                logs.push(path);
            }
        }
    }
    logs.sort();
    logs
}

/// The stats as `robota stats` prints them: the total, then each breakdown.
pub fn describe(stats: &UsageStats) -> String {
    let mut out = String::new();
    let row = |name: &str, t: &UsageTotals| {
        let unpriced = if t.unpriced_calls > 0 {
            format!(" (+{} calls of unknown price)", t.unpriced_calls)
        } else {
            String::new()
        };
        format!(
            "  {name:<40} {:>4} sessions {:>6} calls {:>10} in {:>9} out {:>10} cache  ${:.4}{unpriced}\n",
            t.sessions,
            t.calls,
            t.input_tokens,
            t.output_tokens,
            t.cache_read_tokens + t.cache_write_tokens,
            t.cost_usd
        )
    };
    out.push_str("Total\n");
    out.push_str(&row("all sessions", &stats.total));
    for (title, map) in [
        ("By day", &stats.by_day),
        ("By project", &stats.by_project),
        ("By model", &stats.by_model),
    ] {
        out.push_str(&format!("\n{title}\n"));
        for (name, totals) in map {
            out.push_str(&row(name, totals));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_grouped_and_since_leaves_earlier_ones_out() {
        let line = |ts: &str, model: &str, input: u64| {
            format!(
                r#"{{"type":"assistant","uuid":"a","sessionId":"s","timestamp":"{ts}","cwd":"/p","message":{{"role":"assistant","content":[],"model":"{model}","usage":{{"input_tokens":{input},"output_tokens":10}}}}}}"#
            )
        };
        let log = [
            line("2026-11-01T10:00:00Z", "claude-sonnet-4-5", 1000),
            line("2026-11-02T10:00:00Z", "claude-sonnet-4-5", 2000),
            line("2026-11-02T11:00:00Z", "no-such-model", 5),
            "not json".to_string(),
        ]
        .join("\n");
        let mut stats = UsageStats::default();
        add_session(&mut stats, log.as_bytes(), None);
        assert_eq!(stats.total.calls, 3);
        assert_eq!(stats.total.sessions, 1);
        assert_eq!(stats.total.unpriced_calls, 1);
        assert_eq!(stats.by_day.len(), 2);
        assert_eq!(stats.by_model["claude-sonnet-4-5"].input_tokens, 3000);
        assert_eq!(stats.by_project["/p"].sessions, 1);
        let mut since = UsageStats::default();
        add_session(&mut since, log.as_bytes(), Some("2026-11-02"));
        assert_eq!(since.total.calls, 2);
    }
}
