//! The Anthropic Messages request body (wire.md §1.2, §1.5, §7.4): model, limits, system
//! prompt, tools and messages converted from `core` types, with prompt-caching breakpoints
//! on the last tool, the system block and the latest user message, tool results placed
//! first in their message, blocks the API would reject left out, and tool-use ids made
//! unique (a repeated or malformed id is rewritten together with its results). Server-side
//! tools (the `web_search_20250305` search) are listed after the function tools.

use std::collections::{HashMap, HashSet};

use serde_json::{Map, Value, json};

use robota_core::provider::ServerTool;
use robota_core::{Block, Message, ProviderRequest, Role, ToolSchema};

/// The Messages API's declaration of a server tool.
fn server_tool_json(tool: &ServerTool) -> Value {
    match tool {
        ServerTool::WebSearch {
            max_uses,
            allowed_domains,
            blocked_domains,
        } => {
            let mut tool =
                json!({"type":"web_search_20250305","name":"web_search","max_uses":max_uses});
            // The API refuses both lists at once; an allow-list is the stricter choice.
            if !allowed_domains.is_empty() {
                tool["allowed_domains"] = json!(allowed_domains);
            } else if !blocked_domains.is_empty() {
                tool["blocked_domains"] = json!(blocked_domains);
            }
            tool
        }
    }
}

/// The JSON body for one streaming call.
pub(crate) fn build_body(request: &ProviderRequest) -> Value {
    let server_tools = &request.server_tools;
    let mut body = Map::new();
    body.insert("model".into(), json!(request.model));
    body.insert("max_tokens".into(), json!(request.max_tokens));
    body.insert("stream".into(), json!(true));
    if !request.system.trim().is_empty() {
        body.insert(
            "system".into(),
            json!([{"type":"text","text":request.system,"cache_control":ephemeral()}]),
        );
    }
    if !request.tools.is_empty() || !server_tools.is_empty() {
        body.insert(
            "tools".into(),
            Value::Array(tools(&request.tools, server_tools)),
        );
        if request.tools_disabled {
            body.insert("tool_choice".into(), json!({"type": "none"}));
        }
    }
    if let Some(budget) = request.thinking_budget {
        body.insert(
            "thinking".into(),
            json!({"type":"enabled","budget_tokens":budget}),
        );
    }
    body.insert("messages".into(), Value::Array(messages(&request.messages)));
    Value::Object(body)
}

fn ephemeral() -> Value {
    json!({"type":"ephemeral"})
}

/// Function tools, then server tools; the cache breakpoint on the last entry.
fn tools(tools: &[ToolSchema], server_tools: &[ServerTool]) -> Vec<Value> {
    let mut out: Vec<Value> = tools
        .iter()
        .map(|t| json!({"name":t.name,"description":t.description,"input_schema":t.input_schema}))
        .chain(server_tools.iter().map(server_tool_json))
        .collect();
    if let Some(Value::Object(last)) = out.last_mut() {
        last.insert("cache_control".into(), ephemeral());
    }
    out
}

/// API messages from the conversation, with the cache breakpoint on the latest user turn.
fn messages(history: &[Message]) -> Vec<Value> {
    let mut ids = ToolIdRewriter::default();
    let mut out: Vec<Value> = Vec::with_capacity(history.len());
    for message in history {
        let mut content: Vec<Value> = message
            .content
            .iter()
            .filter(|b| is_sendable(b))
            .filter_map(|b| serde_json::to_value(b).ok())
            .map(|mut v| {
                ids.rewrite(&mut v);
                v
            })
            .collect();
        if content.is_empty() {
            continue;
        }
        if message.role == Role::User {
            // Tool results must lead the user message (stable: other blocks keep order).
            content.sort_by_key(|b| !is_tool_result(b));
        }
        let role = match message.role {
            Role::User => "user",
            Role::Assistant => "assistant",
        };
        out.push(json!({"role":role,"content":content}));
    }
    if let Some(last_block) = out
        .iter_mut()
        .rev()
        .find(|m| m["role"] == "user")
        .and_then(|m| m["content"].as_array_mut())
        .and_then(|c| c.last_mut())
        .and_then(Value::as_object_mut)
    {
        last_block.insert("cache_control".into(), ephemeral());
    }
    out
}

/// Blocks the API rejects are left out: empty text, and thinking without a signature (an
/// interrupted or foreign thinking block cannot be verified).
fn is_sendable(block: &Block) -> bool {
    match block {
        Block::Text { text, .. } => !text.is_empty(),
        Block::Thinking { signature, .. } => !signature.is_empty(),
        Block::RedactedThinking { data } => !data.is_empty(),
        Block::Opaque(value) => is_anthropic_block(value),
        _ => true,
    }
}

/// Whether an opaque block is one of the Messages API's own kinds (server tools and their
/// results), as opposed to another provider's data that must not be sent here.
fn is_anthropic_block(value: &Value) -> bool {
    let kind = value.get("type").and_then(Value::as_str).unwrap_or("");
    kind.ends_with("_tool_result")
        || matches!(
            kind,
            "server_tool_use" | "mcp_tool_use" | "container_upload" | "compaction"
        )
}

fn is_tool_result(block: &Value) -> bool {
    block.get("type").and_then(Value::as_str) == Some("tool_result")
}

/// Makes tool-use ids unique and well-formed across the request, keeping results in step.
#[derive(Debug, Default)]
struct ToolIdRewriter {
    /// Ids already used by a tool_use in this request.
    used: HashSet<String>,
    /// Original id → the id its most recent tool_use went out with.
    latest: HashMap<String, String>,
    minted: u32,
}

impl ToolIdRewriter {
    fn rewrite(&mut self, block: &mut Value) {
        let Some(obj) = block.as_object_mut() else {
            return;
        };
        let (key, is_use) = match obj.get("type").and_then(Value::as_str) {
            Some("tool_use") => ("id", true),
            Some("tool_result") => ("tool_use_id", false),
            _ => return,
        };
        let Some(original) = obj.get(key).and_then(Value::as_str).map(str::to_string) else {
            return;
        };
        let outgoing = if is_use {
            let id = if is_well_formed(&original) && !self.used.contains(&original) {
                original.clone()
            } else {
                self.mint(&original)
            };
            self.used.insert(id.clone());
            self.latest.insert(original.clone(), id.clone());
            id
        } else {
            match self.latest.get(&original) {
                Some(id) => id.clone(),
                None if is_well_formed(&original) => original.clone(),
                None => {
                    let id = self.mint(&original);
                    self.latest.insert(original.clone(), id.clone());
                    id
                }
            }
        };
        if outgoing != original {
            tracing::debug!(from = %original, to = %outgoing, "rewrote tool id");
            obj.insert(key.to_string(), Value::String(outgoing));
        }
    }

    fn mint(&mut self, original: &str) -> String {
        let stem: String = original
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                    c
                } else {
                    '_'
                }
            })
            .take(40)
            .collect();
        loop {
            self.minted += 1;
            let id = format!("toolu_r{}_{stem}", self.minted);
            if !self.used.contains(&id) {
                return id;
            }
        }
    }
}

/// Anthropic accepts tool ids matching `^[a-zA-Z0-9_-]+$`.
fn is_well_formed(id: &str) -> bool {
    !id.is_empty()
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn tool_use(id: &str) -> Block {
        Block::ToolUse {
            id: id.into(),
            name: "Read".into(),
            input: json!({"file_path":"/a"}),
        }
    }

    fn tool_result(id: &str) -> Block {
        Block::ToolResult {
            tool_use_id: id.into(),
            content: "ok".into(),
            is_error: false,
        }
    }

    fn request(messages: Vec<Message>) -> ProviderRequest {
        ProviderRequest {
            model: "claude-test".into(),
            system: "be brief".into(),
            messages,
            tools: vec![
                ToolSchema {
                    name: "Read".into(),
                    description: "read".into(),
                    input_schema: json!({"type":"object"}),
                },
                ToolSchema {
                    name: "Bash".into(),
                    description: "run".into(),
                    input_schema: json!({"type":"object"}),
                },
            ],
            max_tokens: 1024,
            thinking_budget: None,
            tools_disabled: false,
            server_tools: Vec::new(),
            wire: None,
        }
    }

    #[test]
    fn cache_breakpoints_sit_on_last_tool_system_and_latest_user_block() {
        let req = request(vec![
            Message::user_text("first"),
            Message::new(Role::Assistant, vec![Block::text("answer")]),
            Message::new(Role::User, vec![Block::text("a"), Block::text("b")]),
        ]);
        let body = build_body(&req);
        assert_eq!(body["stream"], true);
        assert_eq!(
            body["system"][0]["cache_control"],
            json!({"type":"ephemeral"})
        );
        assert!(body["tools"][0].get("cache_control").is_none());
        assert_eq!(
            body["tools"][1]["cache_control"],
            json!({"type":"ephemeral"})
        );
        let msgs = body["messages"].as_array().unwrap();
        assert!(msgs[0]["content"][0].get("cache_control").is_none());
        assert!(msgs[2]["content"][0].get("cache_control").is_none());
        assert_eq!(
            msgs[2]["content"][1]["cache_control"],
            json!({"type":"ephemeral"})
        );
        assert!(body.get("thinking").is_none());
        assert!(body.get("tool_choice").is_none());
        let mut summary = req.clone();
        summary.tools_disabled = true;
        assert_eq!(build_body(&summary)["tool_choice"], json!({"type": "none"}));
    }

    #[test]
    fn empty_system_tools_and_messages_are_omitted() {
        let mut req = request(vec![
            Message::user_text("hi"),
            Message::new(Role::Assistant, vec![Block::text("")]),
        ]);
        req.system.clear();
        req.tools.clear();
        req.thinking_budget = Some(2048);
        let body = build_body(&req);
        assert!(body.get("system").is_none());
        assert!(body.get("tools").is_none());
        assert_eq!(body["messages"].as_array().unwrap().len(), 1);
        assert_eq!(
            body["thinking"],
            json!({"type":"enabled","budget_tokens":2048})
        );
    }

    #[test]
    fn tool_results_lead_the_user_message_and_opaque_blocks_go_verbatim() {
        let server = json!({"type":"server_tool_use","id":"srvtoolu_1","name":"web_search","input":{"q":"x"}});
        let body = build_body(&request(vec![
            Message::user_text("go"),
            Message::new(
                Role::Assistant,
                vec![Block::Opaque(server.clone()), tool_use("toolu_1")],
            ),
            Message::new(
                Role::User,
                vec![Block::text("note"), tool_result("toolu_1")],
            ),
        ]));
        let msgs = body["messages"].as_array().unwrap();
        assert_eq!(msgs[1]["content"][0], server);
        assert_eq!(msgs[2]["content"][0]["type"], "tool_result");
        assert_eq!(msgs[2]["content"][1]["type"], "text");
    }

    #[test]
    fn other_providers_opaque_blocks_are_not_sent() {
        let body = build_body(&request(vec![
            Message::user_text("q"),
            Message::new(
                Role::Assistant,
                vec![
                    Block::Opaque(json!({"type":"openai_reasoning","item":{}})),
                    Block::Opaque(
                        json!({"type":"server_tool_use","id":"srvtoolu_1","name":"web_search","input":{}}),
                    ),
                    Block::Opaque(
                        json!({"type":"web_search_tool_result","tool_use_id":"srvtoolu_1","content":[]}),
                    ),
                    Block::text("answer"),
                ],
            ),
            Message::user_text("next"),
        ]));
        let kinds: Vec<&str> = body["messages"][1]["content"]
            .as_array()
            .unwrap()
            .iter()
            .map(|b| b["type"].as_str().unwrap())
            .collect();
        assert_eq!(kinds, ["server_tool_use", "web_search_tool_result", "text"]);
    }

    #[test]
    fn server_web_search_follows_the_function_tools_with_the_cache_breakpoint() {
        let req = request(vec![Message::user_text("news?")]);
        let mut with_search = req.clone();
        with_search.server_tools = vec![ServerTool::web_search()];
        let body = build_body(&with_search);
        let tools = body["tools"].as_array().unwrap();
        assert_eq!(tools.len(), 3);
        assert!(tools[1].get("cache_control").is_none());
        assert_eq!(
            tools[2],
            json!({"type":"web_search_20250305","name":"web_search","max_uses":5,
                   "cache_control":{"type":"ephemeral"}})
        );
        let mut only_search = req.clone();
        only_search.tools.clear();
        only_search.server_tools = vec![ServerTool::WebSearch {
            max_uses: 2,
            allowed_domains: vec!["docs.rs".into()],
            blocked_domains: vec!["spam.test".into()],
        }];
        let body = build_body(&only_search);
        assert_eq!(body["tools"][0]["allowed_domains"], json!(["docs.rs"]));
        assert!(body["tools"][0].get("blocked_domains").is_none());
        assert_eq!(body["tools"][0]["max_uses"], 2);
        assert_eq!(build_body(&req)["tools"].as_array().unwrap().len(), 2);
    }

    #[test]
    fn unsigned_thinking_is_dropped_signed_thinking_kept() {
        let body = build_body(&request(vec![
            Message::user_text("q"),
            Message::new(
                Role::Assistant,
                vec![
                    Block::Thinking {
                        thinking: "hmm".into(),
                        signature: String::new(),
                    },
                    Block::Thinking {
                        thinking: "ok".into(),
                        signature: "sig".into(),
                    },
                    Block::text("a"),
                ],
            ),
        ]));
        let content = body["messages"][1]["content"].as_array().unwrap();
        assert_eq!(content.len(), 2);
        assert_eq!(content[0]["signature"], "sig");
    }

    #[test]
    fn repeated_and_malformed_ids_are_rewritten_with_their_results() {
        let body = build_body(&request(vec![
            Message::user_text("go"),
            Message::new(Role::Assistant, vec![tool_use("call_0")]),
            Message::new(Role::User, vec![tool_result("call_0")]),
            Message::new(
                Role::Assistant,
                vec![tool_use("call_0"), tool_use("functions.read:1")],
            ),
            Message::new(
                Role::User,
                vec![tool_result("call_0"), tool_result("functions.read:1")],
            ),
        ]));
        let m = body["messages"].as_array().unwrap();
        assert_eq!(m[1]["content"][0]["id"], "call_0");
        assert_eq!(m[2]["content"][0]["tool_use_id"], "call_0");
        let second = m[3]["content"][0]["id"].as_str().unwrap();
        let third = m[3]["content"][1]["id"].as_str().unwrap();
        assert_ne!(second, "call_0");
        assert!(is_well_formed(third) && third != second);
        assert_eq!(m[4]["content"][0]["tool_use_id"], second);
        assert_eq!(m[4]["content"][1]["tool_use_id"], third);
    }
}
