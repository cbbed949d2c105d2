//! A background session's event log as text for `robota logs`: each prompt, the
//! assistant's text, each tool call and the first line of its result, and each run's end.

use serde_json::Value;

/// The text of one event line (empty when it shows nothing).
pub fn event_text(line: &str) -> String {
    let Ok(value) = serde_json::from_str::<Value>(line) else {
        return String::new();
    };
    match value["type"].as_str() {
        Some("user") => user_text(&value["message"]["content"]),
        Some("assistant") => assistant_text(&value["message"]["content"]),
        Some("result") => format!(
            "— {} ({} turn{}, ${:.4})\n",
            value["result"].as_str().unwrap_or(""),
            value["num_turns"],
            if value["num_turns"] == 1 { "" } else { "s" },
            value["total_cost_usd"].as_f64().unwrap_or(0.0)
        ),
        _ => String::new(),
    }
}

/// A prompt (`> …`) or tool results (`  ⎿ …`).
fn user_text(content: &Value) -> String {
    if let Some(prompt) = content.as_str() {
        return format!("> {prompt}\n");
    }
    let mut text = String::new();
    for block in content.as_array().into_iter().flatten() {
        match block["type"].as_str() {
            Some("text") => text.push_str(&format!("> {}\n", block["text"].as_str().unwrap_or(""))),
            Some("tool_result") => {
                let first = result_text(&block["content"]);
                let first = first.lines().next().unwrap_or("");
                text.push_str(&format!("  ⎿ {}\n", clip(first, 160)));
            }
            _ => {}
        }
    }
    text
}

/// The assistant's text and tool calls (`● Name(argument)`).
fn assistant_text(content: &Value) -> String {
    let mut text = String::new();
    for block in content.as_array().into_iter().flatten() {
        match block["type"].as_str() {
            Some("text") => {
                text.push_str(block["text"].as_str().unwrap_or(""));
                text.push('\n');
            }
            Some("tool_use") => {
                let input = &block["input"];
                let argument = ["file_path", "command", "pattern", "url", "description"]
                    .iter()
                    .find_map(|k| input[*k].as_str())
                    .unwrap_or("");
                text.push_str(&format!(
                    "● {}({})\n",
                    block["name"].as_str().unwrap_or("?"),
                    clip(argument, 120)
                ));
            }
            _ => {}
        }
    }
    text
}

fn result_text(content: &Value) -> String {
    match content {
        Value::String(s) => s.clone(),
        Value::Array(blocks) => blocks
            .iter()
            .filter_map(|b| b["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

fn clip(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prompts_text_tool_calls_results_and_ends_read_as_a_transcript() {
        let lines = [
            r#"{"type":"user","message":{"role":"user","content":"write it"}}"#,
            r#"{"type":"assistant","message":{"content":[{"type":"text","text":"On it."},{"type":"tool_use","name":"Write","input":{"file_path":"/p/a.txt","content":"x"}}]}}"#,
            r#"{"type":"user","message":{"content":[{"type":"tool_result","content":"File created successfully at: /p/a.txt\nmore"}]}}"#,
            r#"{"type":"result","result":"Done.","num_turns":2,"total_cost_usd":0.0123}"#,
            r#"{"type":"system","subtype":"init"}"#,
            "not json",
        ];
        let text: String = lines.iter().map(|l| event_text(l)).collect();
        assert_eq!(
            text,
            "> write it\nOn it.\n● Write(/p/a.txt)\n  ⎿ File created successfully at: /p/a.txt\n— Done. (2 turns, $0.0123)\n"
        );
    }
}
