//! The program's `control_request`s and their `control_response`s: `initialize` (the
//! commands, models and account; the hooks and agents only on the first input line),
//! `interrupt`, `set_permission_mode` and `set_model`, and why any other is refused. Also
//! reading the first line's `initialize` before the session is put together.

use serde_json::{Value, json};

use crate::core::permission::PermissionMode;
use crate::sdk::InteractiveSession;
use crate::sdk::commands::{CommandScope, Submission};

use super::{Driver, Owed};

/// Control request subtypes this driver answers.
const HANDLED: &str = "initialize, interrupt, set_permission_mode, set_model";

/// Why a control request is refused; its `control_response` carries the message.
#[derive(Debug, thiserror::Error)]
enum ControlError {
    #[error("control_request without request.subtype")]
    NoSubtype,
    #[error("Unsupported control request subtype: {0} (robota handles {HANDLED})")]
    Unsupported(String),
    /// A later `initialize` carries what only the first line's can (`hooks`, `agents`).
    #[error("{what} can only be {done} by an initialize request on the first input line")]
    NotFirstInitialize {
        what: &'static str,
        done: &'static str,
    },
    #[error("set_model: not a model name: {0}")]
    NotAModel(Value),
    #[error(
        "set_permission_mode: unknown mode {0:?} (one of {modes})",
        modes = PermissionMode::ALL.map(|m| m.as_str()).join(", ")
    )]
    UnknownMode(String),
    /// A mode the managed policy forbids (the reason names the file).
    #[error("{0}")]
    ModeRefused(String),
}

impl Driver {
    /// The `control_response` for one `control_request`.
    pub(super) fn on_control(&mut self, message: &Value) -> Value {
        let request_id = message.get("request_id").cloned().unwrap_or(Value::Null);
        let request = message.get("request").unwrap_or(&Value::Null);
        let subtype = request.get("subtype").and_then(Value::as_str).unwrap_or("");
        let answer = match subtype {
            "initialize" => self.initialize(request),
            "interrupt" => {
                self.session.abort();
                Ok(json!({}))
            }
            "set_permission_mode" => set_mode(&self.session, request),
            "set_model" => self.set_model(request),
            "" => Err(ControlError::NoSubtype),
            other => Err(ControlError::Unsupported(other.to_string())),
        };
        match answer {
            Ok(response) => json!({
                "type": "control_response",
                "response": {"subtype": "success", "request_id": request_id, "response": response},
            }),
            Err(error) => json!({
                "type": "control_response",
                "response": {"subtype": "error", "request_id": request_id, "error": error.to_string()},
            }),
        }
    }

    /// `initialize`: the commands, output style, models and account, as Claude Code
    /// answers. The program's hooks and agents are taken from the first line (the session
    /// is built after it); a later `initialize` carrying them is refused, not ignored.
    fn initialize(&mut self, request: &Value) -> Result<Value, ControlError> {
        let has = |key: &str| match request.get(key) {
            None | Some(Value::Null) => false,
            Some(Value::Object(m)) => !m.is_empty(),
            Some(_) => true,
        };
        let registers = std::mem::take(&mut self.hooks_initialize_pending);
        if has("hooks") && !registers {
            return Err(ControlError::NotFirstInitialize {
                what: "hooks",
                done: "registered",
            });
        }
        if has("agents") && !registers {
            return Err(ControlError::NotFirstInitialize {
                what: "agents",
                done: "defined",
            });
        }
        let commands: Vec<Value> = self
            .session
            .command_entries()
            .into_iter()
            .filter(|c| c.scope == CommandScope::Session)
            .map(|c| {
                json!({
                    "name": c.name,
                    "description": c.description,
                    "argumentHint": c.argument_hint,
                })
            })
            .collect();
        let mut models = vec![self.initial_model.clone()];
        if self.model != self.initial_model {
            models.push(self.model.clone());
        }
        let models: Vec<Value> = models
            .iter()
            .map(|m| json!({"value": m, "displayName": m, "description": ""}))
            .collect();
        Ok(json!({
            "commands": commands,
            "output_style": "default",
            "available_output_styles": ["default"],
            "models": models,
            "account": {"apiKeySource": self.api_key_source},
            "pid": std::process::id(),
        }))
    }

    /// `set_model`: `/model X` goes into the session's queue (so it applies from the
    /// next turn on, in the order of the input) and prints no result of its own.
    fn set_model(&mut self, request: &Value) -> Result<Value, ControlError> {
        let model = match request.get("model") {
            None | Some(Value::Null) => self.initial_model.clone(),
            Some(Value::String(m)) if m == "default" => self.initial_model.clone(),
            Some(Value::String(m)) if !m.trim().is_empty() && !m.contains('\n') => {
                m.trim().to_string()
            }
            Some(other) => return Err(ControlError::NotAModel(other.clone())),
        };
        self.submit(Owed::Nothing, Submission::parse(&format!("/model {model}")));
        Ok(json!({}))
    }
}

/// The `request` of a line that is an `initialize` control request.
pub(super) fn initialize_request(line: &str) -> Option<Value> {
    let value: Value = serde_json::from_str(line).ok()?;
    if value.get("type")?.as_str()? != "control_request" {
        return None;
    }
    let request = value.get("request")?;
    (request.get("subtype")?.as_str()? == "initialize").then(|| request.clone())
}

pub(super) fn is_initialize(line: &str) -> bool {
    initialize_request(line).is_some()
}

/// The agents an `initialize` line defines (`{name: {description, prompt, …}}`).
pub(super) fn initialize_agents(line: &str) -> Option<serde_json::Map<String, Value>> {
    initialize_request(line)?
        .get("agents")?
        .as_object()
        .filter(|a| !a.is_empty())
        .cloned()
}

/// The `hooks` of a line that is an `initialize` control request, if it has any.
pub(super) fn initialize_hooks(line: &str) -> Option<Value> {
    initialize_request(line)?
        .get("hooks")
        .filter(|h| h.is_object())
        .cloned()
}

/// `set_permission_mode`: `{"mode": …}`, one of Claude Code's mode names.
fn set_mode(session: &InteractiveSession, request: &Value) -> Result<Value, ControlError> {
    let name = request.get("mode").and_then(Value::as_str).unwrap_or("");
    let mode =
        PermissionMode::parse(name).ok_or_else(|| ControlError::UnknownMode(name.to_string()))?;
    if let Some(refusal) = session.mode_refusal(mode) {
        return Err(ControlError::ModeRefused(refusal.to_string()));
    }
    session.set_mode(mode);
    // The mode now in effect, as Claude Code answers (Agent SDK ≥ 0.3.332 reads it).
    Ok(json!({"mode": mode.as_str()}))
}
