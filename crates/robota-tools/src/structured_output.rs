//! The `StructuredOutput` tool of `--json-schema` runs: its input schema is the schema the
//! caller gave, the model calls it once with its final answer, the input is validated
//! against the schema (a mismatch is an error result listing what is wrong, so the model
//! can correct it) and the valid value is kept for the run's `result.structured_output`.

use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use serde_json::Value;

use robota_core::{RiskClass, Tool, ToolContext, ToolOutput};

/// The tool's name.
pub const STRUCTURED_OUTPUT_TOOL: &str = "StructuredOutput";

const DESCRIPTION: &str = "Use this tool to return your final response in the requested structured format. \
You MUST call this tool exactly once at the end of your response, with input that matches the schema.";

/// What the system prompt adds in a `--json-schema` run.
pub const STRUCTURED_OUTPUT_INSTRUCTION: &str = "When you have the final answer, call the StructuredOutput tool exactly once with that answer as its input; its input schema is the required output format. Do not answer only in prose.";

/// The last valid value the model handed over; cloning shares it.
#[derive(Debug, Clone, Default)]
pub struct StructuredSlot(Arc<Mutex<Option<Value>>>);

impl StructuredSlot {
    /// Takes the value (the next turn starts empty).
    pub fn take(&self) -> Option<Value> {
        self.0.lock().ok().and_then(|mut v| v.take())
    }

    fn set(&self, value: Value) {
        if let Ok(mut slot) = self.0.lock() {
            *slot = Some(value);
        }
    }
}

/// Why the `--json-schema` a run was given cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum SchemaError {
    /// The schema is not JSON.
    #[error("--json-schema is not valid JSON: {0}")]
    NotJson(#[source] serde_json::Error),
    /// The schema is JSON but not an object.
    #[error("--json-schema must be a JSON Schema object")]
    NotAnObject,
    /// The schema is not a valid JSON Schema.
    #[error("--json-schema is not a valid JSON Schema: {0}")]
    Invalid(#[source] Box<jsonschema::ValidationError<'static>>),
}

/// Takes the run's final answer as input matching the caller's schema (`--json-schema`),
/// validates it and keeps it in a [`StructuredSlot`].
pub struct StructuredOutputTool {
    schema: Value,
    validator: jsonschema::Validator,
    slot: StructuredSlot,
}

impl StructuredOutputTool {
    /// The tool for this schema (a JSON text); `Err` says why the schema is unusable.
    pub fn new(schema_text: &str, slot: StructuredSlot) -> Result<Self, SchemaError> {
        let schema: Value = serde_json::from_str(schema_text).map_err(SchemaError::NotJson)?;
        if !schema.is_object() {
            return Err(SchemaError::NotAnObject);
        }
        let validator = jsonschema::validator_for(&schema)
            .map_err(|e| SchemaError::Invalid(Box::new(e.to_owned())))?;
        Ok(StructuredOutputTool {
            schema,
            validator,
            slot,
        })
    }
}

#[async_trait]
impl Tool for StructuredOutputTool {
    fn name(&self) -> &str {
        STRUCTURED_OUTPUT_TOOL
    }

    fn description(&self) -> &str {
        DESCRIPTION
    }

    fn input_schema(&self) -> Value {
        self.schema.clone()
    }

    fn risk(&self) -> RiskClass {
        RiskClass::Read
    }

    fn primary_argument(&self, _input: &Value) -> Option<String> {
        None
    }

    async fn call(&self, input: Value, _ctx: &ToolContext) -> ToolOutput {
        let problems: Vec<String> = self
            .validator
            .iter_errors(&input)
            .map(|e| {
                let at = e.instance_path().to_string();
                if at.is_empty() {
                    e.to_string()
                } else {
                    format!("{at}: {e}")
                }
            })
            .collect();
        if !problems.is_empty() {
            return ToolOutput::error(format!(
                "The output does not match the required schema:\n- {}\nCall StructuredOutput again with corrected input.",
                problems.join("\n- ")
            ));
        }
        self.slot.set(input);
        ToolOutput::ok("Structured output provided successfully")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn ctx() -> ToolContext {
        ToolContext {
            cwd: std::env::temp_dir(),
            cancel: Default::default(),
            tool_use_id: "t".into(),
            env: Vec::new(),
            read_denial: None,
            progress: Default::default(),
        }
    }

    const SCHEMA: &str =
        r#"{"type":"object","properties":{"answer":{"type":"integer"}},"required":["answer"]}"#;

    #[tokio::test]
    async fn a_valid_value_is_kept_and_an_invalid_one_is_explained() {
        let slot = StructuredSlot::default();
        let tool = StructuredOutputTool::new(SCHEMA, slot.clone()).unwrap();
        let bad = tool.call(json!({"answer": "four"}), &ctx()).await;
        assert!(bad.is_error);
        assert!(bad.content.contains("/answer"), "{}", bad.content);
        assert_eq!(slot.take(), None);
        let good = tool.call(json!({"answer": 4}), &ctx()).await;
        assert!(!good.is_error);
        assert_eq!(slot.take(), Some(json!({"answer": 4})));
        assert_eq!(slot.take(), None, "taking empties the slot");
    }

    #[test]
    fn an_unusable_schema_is_refused_with_the_reason() {
        let slot = StructuredSlot::default();
        let err = StructuredOutputTool::new("{not json", slot.clone())
            .err()
            .unwrap()
            .to_string();
        assert!(err.contains("not valid JSON"), "{err}");
        let err = StructuredOutputTool::new(r#"{"type": 12}"#, slot)
            .err()
            .unwrap()
            .to_string();
        assert!(err.contains("not a valid JSON Schema"), "{err}");
    }
}
