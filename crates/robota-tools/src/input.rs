//! Reading a tool's JSON input the model sent: typed getters for required and optional
//! fields that turn every wrong type, missing field, unknown enum value or unparseable
//! input into an [`InvalidInput`] naming the problem, plus [`ToolFailure`], the error type
//! every tool's inner `run` returns before it becomes an error result.

use serde_json::{Map, Value};

use robota_core::{INVALID_INPUT_KEY, PreviewError, ToolOutput};

/// The model sent input the tool cannot use.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("Invalid input for {tool}: {problem}")]
pub(crate) struct InvalidInput {
    pub(crate) tool: &'static str,
    pub(crate) problem: String,
}

/// Why a tool call failed; its text becomes the error result the model reads.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ToolFailure {
    #[error(transparent)]
    InvalidInput(#[from] InvalidInput),
    #[error("{0}")]
    Failed(String),
}

impl ToolFailure {
    pub(crate) fn failed(message: impl Into<String>) -> Self {
        ToolFailure::Failed(message.into())
    }
}

/// Turns a tool's planned change into the preview a permission question shows; a failure is
/// the error the call would end with.
pub fn into_preview(
    result: Result<robota_core::ToolDisplay, ToolFailure>,
) -> Result<Option<robota_core::ToolDisplay>, PreviewError> {
    result.map(Some).map_err(PreviewError::from)
}

impl From<ToolFailure> for PreviewError {
    fn from(failure: ToolFailure) -> Self {
        PreviewError::new(failure.to_string())
    }
}

/// Turns a tool's inner result into the output the engine gets.
pub fn into_output(result: Result<ToolOutput, ToolFailure>) -> ToolOutput {
    result.unwrap_or_else(|failure| ToolOutput::error(failure.to_string()))
}

/// The input object of one call, with the tool's name for error messages.
#[derive(Debug, Clone, Copy)]
pub struct ToolInput<'a> {
    tool: &'static str,
    fields: &'a Map<String, Value>,
}

impl<'a> ToolInput<'a> {
    /// Checks that `input` is a usable object: not the adapter's marker for unparseable
    /// JSON, not a string, array or number.
    pub fn parse(tool: &'static str, input: &'a Value) -> Result<Self, InvalidInput> {
        let Some(fields) = input.as_object() else {
            return Err(InvalidInput {
                tool,
                problem: format!("expected a JSON object, got {}", type_name(input)),
            });
        };
        if let Some(raw) = fields.get(INVALID_INPUT_KEY) {
            let raw = raw.as_str().unwrap_or_default();
            let preview: String = raw.chars().take(200).collect();
            return Err(InvalidInput {
                tool,
                problem: format!(
                    "the arguments were not valid JSON (possibly cut off by the output token limit): {preview}"
                ),
            });
        }
        Ok(ToolInput { tool, fields })
    }

    pub fn invalid(&self, problem: impl Into<String>) -> InvalidInput {
        InvalidInput {
            tool: self.tool,
            problem: problem.into(),
        }
    }

    /// The field, treating JSON `null` as absent.
    fn field(&self, key: &str) -> Option<&'a Value> {
        self.fields.get(key).filter(|v| !v.is_null())
    }

    pub fn required_str(&self, key: &str) -> Result<&'a str, InvalidInput> {
        match self.field(key) {
            None => Err(self.invalid(format!("missing required field \"{key}\""))),
            Some(value) => value
                .as_str()
                .ok_or_else(|| self.wrong_type(key, "a string", value)),
        }
    }

    pub fn optional_str(&self, key: &str) -> Result<Option<&'a str>, InvalidInput> {
        match self.field(key) {
            None => Ok(None),
            Some(value) => value
                .as_str()
                .map(Some)
                .ok_or_else(|| self.wrong_type(key, "a string", value)),
        }
    }

    /// A non-negative integer; also accepts `12.0` and `"12"`, which some models send.
    pub fn optional_u64(&self, key: &str) -> Result<Option<u64>, InvalidInput> {
        let Some(value) = self.field(key) else {
            return Ok(None);
        };
        let parsed = match value {
            Value::Number(n) => n.as_u64().or_else(|| {
                n.as_f64()
                    .filter(|f| f.fract() == 0.0 && *f >= 0.0 && *f <= u64::MAX as f64)
                    .map(|f| f as u64)
            }),
            Value::String(s) => s.trim().parse::<u64>().ok(),
            _ => None,
        };
        parsed
            .map(Some)
            .ok_or_else(|| self.wrong_type(key, "a non-negative integer", value))
    }

    /// A boolean; also accepts `"true"` / `"false"`.
    pub fn optional_bool(&self, key: &str) -> Result<Option<bool>, InvalidInput> {
        let Some(value) = self.field(key) else {
            return Ok(None);
        };
        let parsed = match value {
            Value::Bool(b) => Some(*b),
            Value::String(s) if s.eq_ignore_ascii_case("true") => Some(true),
            Value::String(s) if s.eq_ignore_ascii_case("false") => Some(false),
            _ => None,
        };
        parsed
            .map(Some)
            .ok_or_else(|| self.wrong_type(key, "a boolean", value))
    }

    /// One of `allowed`, or absent.
    pub fn optional_enum(
        &self,
        key: &str,
        allowed: &[&'static str],
    ) -> Result<Option<&'static str>, InvalidInput> {
        let Some(given) = self.optional_str(key)? else {
            return Ok(None);
        };
        allowed
            .iter()
            .find(|a| **a == given)
            .map(|a| Some(*a))
            .ok_or_else(|| {
                self.invalid(format!(
                    "\"{key}\" must be one of {}, got \"{given}\"",
                    quoted_list(allowed)
                ))
            })
    }

    /// A required array.
    pub fn required_array(&self, key: &str) -> Result<&'a Vec<Value>, InvalidInput> {
        match self.field(key) {
            None => Err(self.invalid(format!("missing required field \"{key}\""))),
            Some(value) => value
                .as_array()
                .ok_or_else(|| self.wrong_type(key, "an array", value)),
        }
    }

    fn wrong_type(&self, key: &str, expected: &str, got: &Value) -> InvalidInput {
        self.invalid(format!(
            "\"{key}\" must be {expected}, got {}",
            type_name(got)
        ))
    }
}

pub fn quoted_list(items: &[&str]) -> String {
    items
        .iter()
        .map(|s| format!("\"{s}\""))
        .collect::<Vec<_>>()
        .join(", ")
}

pub fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn missing_field_is_named() {
        let value = json!({});
        let input = ToolInput::parse("Read", &value).unwrap();
        let err = input.required_str("file_path").unwrap_err();
        assert_eq!(
            err.to_string(),
            "Invalid input for Read: missing required field \"file_path\""
        );
    }

    #[test]
    fn wrong_types_are_named() {
        let value = json!({"a": 5, "b": "x", "c": [1], "d": -3});
        let input = ToolInput::parse("T", &value).unwrap();
        assert!(
            input
                .required_str("a")
                .unwrap_err()
                .to_string()
                .contains("\"a\" must be a string, got a number")
        );
        assert!(
            input
                .optional_u64("b")
                .unwrap_err()
                .to_string()
                .contains("non-negative integer")
        );
        assert!(
            input
                .optional_bool("c")
                .unwrap_err()
                .to_string()
                .contains("a boolean, got an array")
        );
        assert!(input.optional_u64("d").is_err());
    }

    #[test]
    fn lenient_numbers_and_booleans() {
        let value = json!({"n": "12", "f": 3.0, "b": "true", "z": null});
        let input = ToolInput::parse("T", &value).unwrap();
        assert_eq!(input.optional_u64("n").unwrap(), Some(12));
        assert_eq!(input.optional_u64("f").unwrap(), Some(3));
        assert_eq!(input.optional_bool("b").unwrap(), Some(true));
        assert_eq!(input.optional_str("z").unwrap(), None);
    }

    #[test]
    fn unknown_enum_value_lists_the_allowed_ones() {
        let value = json!({"mode": "lines"});
        let input = ToolInput::parse("Grep", &value).unwrap();
        let err = input
            .optional_enum("mode", &["content", "count"])
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "Invalid input for Grep: \"mode\" must be one of \"content\", \"count\", got \"lines\""
        );
    }

    #[test]
    fn non_objects_and_unparseable_input_are_refused() {
        let err = ToolInput::parse("Bash", &json!("ls")).unwrap_err();
        assert!(
            err.to_string()
                .contains("expected a JSON object, got a string")
        );
        let cut = json!({INVALID_INPUT_KEY: "{\"command\": \"ec"});
        let err = ToolInput::parse("Bash", &cut).unwrap_err();
        assert!(err.to_string().contains("not valid JSON"));
        assert!(err.to_string().contains("{\"command\": \"ec"));
    }
}
