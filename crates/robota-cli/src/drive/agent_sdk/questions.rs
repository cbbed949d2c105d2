//! What the driver asks of the program as `control_request`s — `can_use_tool` for a tool
//! call that needs approval, `hook_callback` for a hook it registered, `mcp_message` for
//! its in-process MCP servers — and the `control_response`s that answer them. Once stdin
//! closes nobody can answer: waiting and later questions are denied or fail.

use serde_json::{Value, json};

use crate::core::hooks::HookCallbackError;
use crate::sdk::PermissionRequest;
use crate::session::PermissionAnswer;
use crate::tools::mcp::SdkMcpError;

use super::Driver;
use super::bridges::{CallbackAsk, McpAsk, mcp_answer, mcp_message};

impl Driver {
    /// A hook callback the session fires: asked of the program as `hook_callback`.
    pub(super) fn call_back(&mut self, call: CallbackAsk) {
        if !self.input_open {
            let _ = call.answer.send(Err(HookCallbackError::Unanswered(
                "stdin is closed: the hook callback cannot be asked".to_string(),
            )));
            return;
        }
        let request_id = self.request_ids.next("hook");
        let message = json!({
            "type": "control_request",
            "request_id": request_id,
            "request": {
                "subtype": "hook_callback",
                "callback_id": call.callback_id,
                "input": call.input,
                "tool_use_id": call.input.get("tool_use_id"),
            },
        });
        self.printer.print(&message.to_string());
        self.hook_calls.insert(request_id, call.answer);
    }

    /// A message for one of the program's MCP servers, sent as `mcp_message`.
    pub(super) fn ask_mcp(&mut self, ask: McpAsk) {
        if !self.input_open {
            let _ = ask.answer.send(Err(SdkMcpError::Unanswered(
                "stdin is closed: the SDK MCP server cannot be reached".to_string(),
            )));
            return;
        }
        let request_id = self.request_ids.next("mcp");
        self.printer
            .print(&mcp_message(&request_id, &ask).to_string());
        self.mcp_calls.insert(request_id, ask.answer);
    }

    /// Nobody can answer a question any more: the waiting ones and later ones are denied.
    pub(super) fn input_closed(&mut self) {
        self.input_open = false;
        for (_, waiting) in self.mcp_calls.drain() {
            let _ = waiting.send(Err(SdkMcpError::Unanswered(
                "stdin closed before the SDK MCP server answered".to_string(),
            )));
        }
        for (_, waiting) in self.hook_calls.drain() {
            let _ = waiting.send(Err(HookCallbackError::Unanswered(
                "stdin closed before the hook callback was answered".to_string(),
            )));
        }
        for (_, mut request) in self.questions.drain() {
            request.respond(PermissionAnswer::Deny(Some(
                "stdin closed before the permission question was answered".to_string(),
            )));
        }
    }

    /// Asks the program about a tool call (`can_use_tool`), or denies it when nobody can
    /// be asked.
    pub(super) fn ask(&mut self, mut request: PermissionRequest) {
        if !self.input_open {
            request.respond(PermissionAnswer::Deny(Some(
                "stdin is closed: nobody can answer the permission question".to_string(),
            )));
            return;
        }
        let request_id = self.request_ids.next("perm");
        let message = json!({
            "type": "control_request",
            "request_id": request_id,
            "request": {
                "subtype": "can_use_tool",
                "tool_name": request.tool_name,
                "input": request.input,
                "tool_use_id": request.tool_use_id,
                "decision_reason": request.reason,
                "permission_suggestions": [],
            },
        });
        self.printer.print(&message.to_string());
        self.questions.insert(request_id, request);
    }

    /// A `control_response` to a `can_use_tool` question: allow, or deny with the
    /// program's message (`interrupt: true` also ends the turn). An allow that changes the
    /// tool's input is denied: robota cannot run a call with different input yet.
    pub(super) fn on_answer(&mut self, message: &Value) {
        let response = message.get("response").unwrap_or(&Value::Null);
        let Some(id) = response.get("request_id").and_then(Value::as_str) else {
            return;
        };
        let succeeded = response.get("subtype").and_then(Value::as_str) == Some("success");
        if let Some(waiting) = self.mcp_calls.remove(id) {
            let _ = waiting.send(mcp_answer(response));
            return;
        }
        if let Some(waiting) = self.hook_calls.remove(id) {
            let answer = if succeeded {
                Ok(response.get("response").cloned().unwrap_or(json!({})))
            } else {
                let error = response.get("error").and_then(Value::as_str).unwrap_or("");
                Err(HookCallbackError::Failed(error.to_string()))
            };
            let _ = waiting.send(answer);
            return;
        }
        let Some(mut request) = self.questions.remove(id) else {
            return;
        };
        let deny = |text: String| PermissionAnswer::Deny(Some(text));
        let answer = if succeeded {
            let body = response.get("response").unwrap_or(&Value::Null);
            match body.get("behavior").and_then(Value::as_str) {
                Some("allow") => match body.get("updatedInput") {
                    Some(updated) if updated.is_object() && *updated != request.input => {
                        PermissionAnswer::AllowWithInput(updated.clone())
                    }
                    _ => PermissionAnswer::Allow,
                },
                Some("deny") => {
                    if body.get("interrupt").and_then(Value::as_bool) == Some(true) {
                        self.session.abort();
                    }
                    let text = body.get("message").and_then(Value::as_str).unwrap_or("");
                    PermissionAnswer::Deny((!text.is_empty()).then(|| text.to_string()))
                }
                _ => deny(format!("the permission answer has no behavior: {body}")),
            }
        } else {
            let error = response.get("error").and_then(Value::as_str).unwrap_or("");
            deny(format!("the permission question failed: {error}"))
        };
        request.respond(answer);
    }
}
