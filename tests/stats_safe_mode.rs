//! End to end: `robota stats` totals the usage and cost the session logs record (per day,
//! project and model; `--since`; `--json`), and `--safe-mode` starts with the
//! customisations off — a project hook does not run, a `--mcp-config` server does not
//! start.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failed unwrap is a failed test

mod support;

use robota::core::Usage;
use serde_json::{Value, json};
use support::project::{log_lines, output_text, project};
use support::{MockServer, anthropic};

#[test]
fn stats_totals_equal_the_sum_of_the_logs_costs() {
    let p = project();
    let server = MockServer::start(vec![
        anthropic::text_turn_with_input_tokens("one", 1200),
        anthropic::text_turn_with_input_tokens("two", 34_000),
        anthropic::text_turn_with_input_tokens("three", 560),
    ]);
    for prompt in ["a", "b", "c"] {
        let out = p.run(&server, &["-p", prompt]);
        assert_eq!(out.status.code(), Some(0), "{}", output_text(&out));
    }
    let mut expected_cost = 0.0;
    let mut expected_calls = 0;
    let mut expected_input = 0;
    for log in p.session_logs() {
        for line in log_lines(&log) {
            if line["type"] != "assistant" || line["message"]["usage"].is_null() {
                continue;
            }
            let usage: Usage = serde_json::from_value(line["message"]["usage"].clone()).unwrap();
            let model = line["message"]["model"].as_str().unwrap();
            let price = robota::core::models::lookup(model)
                .price
                .expect("a priced model");
            expected_cost += price.cost(&usage);
            expected_calls += 1;
            expected_input += usage.input_tokens;
        }
    }
    assert_eq!(expected_calls, 3);
    let out = p.run(&server, &["stats", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", output_text(&out));
    let stats: Value = serde_json::from_slice(&out.stdout).unwrap();
    let total = &stats["total"];
    assert_eq!(total["calls"], expected_calls);
    assert_eq!(total["sessions"], 3);
    assert_eq!(total["inputTokens"], expected_input);
    let cost = total["costUsd"].as_f64().unwrap();
    assert!(cost > 0.0);
    assert!(
        (cost - expected_cost).abs() < 1e-9,
        "{cost} vs {expected_cost}"
    );
    let by_day: f64 = stats["byDay"]
        .as_object()
        .unwrap()
        .values()
        .map(|d| d["costUsd"].as_f64().unwrap())
        .sum();
    assert!((by_day - expected_cost).abs() < 1e-9);
    let project_key = p.root.display().to_string();
    assert_eq!(stats["byProject"][&project_key]["calls"], 3, "{stats}");

    let later = p.run(&server, &["stats", "--json", "--since", "2999-01-01"]);
    let later: Value = serde_json::from_slice(&later.stdout).unwrap();
    assert_eq!(later["total"]["calls"], 0);
    let table = p.run(&server, &["stats"]);
    assert!(
        output_text(&table).contains("By model"),
        "{}",
        output_text(&table)
    );
    let bad = p.run(&server, &["stats", "--since", "last week"]);
    assert_ne!(bad.status.code(), Some(0));
    assert!(
        output_text(&bad).contains("is not a date"),
        "{}",
        output_text(&bad)
    );
}

#[test]
fn safe_mode_starts_without_the_project_s_hooks_or_mcp_servers() {
    let p = project();
    std::fs::create_dir_all(p.root.join(".claude")).unwrap();
    let hook = json!([{"hooks": [{"type": "command", "command": "touch hook-ran"}]}]);
    std::fs::write(
        p.root.join(".claude/settings.json"),
        json!({"hooks": {"UserPromptSubmit": hook}}).to_string(),
    )
    .unwrap();
    let mcp =
        json!({"mcpServers": {"probe": {"command": "sh", "args": ["-c", "touch mcp-started"]}}})
            .to_string();
    let server = MockServer::start(vec![
        anthropic::text_turn("safe"),
        anthropic::text_turn("normal"),
    ]);

    let safe = p.run(&server, &["-p", "hi", "--safe-mode", "--mcp-config", &mcp]);
    assert_eq!(safe.status.code(), Some(0), "{}", output_text(&safe));
    assert!(
        !p.root.join("hook-ran").exists(),
        "the project hook did not run"
    );
    assert!(
        !p.root.join("mcp-started").exists(),
        "no MCP server started"
    );

    // The same start without --safe-mode runs both: the check above could fail.
    let normal = p.run(&server, &["-p", "hi", "--mcp-config", &mcp]);
    assert_eq!(normal.status.code(), Some(0), "{}", output_text(&normal));
    assert!(p.root.join("hook-ran").exists());
    assert!(p.root.join("mcp-started").exists());
}
