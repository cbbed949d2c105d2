//! An MCP server's tool as a robota tool: named `mcp__<server>__<tool>` (characters a
//! provider refuses in a tool name become `_`), its input schema passed through, always
//! asking in the default mode (risk "execute": robota cannot know what a server does), and
//! its result turned into text — text content as is, resources by their text or address,
//! images (PNG, JPEG, GIF, WebP up to 5 MB) as images the model sees beside a short note,
//! other images and audio as a short placeholder, `isError` results as errors.

use std::sync::Arc;

use async_trait::async_trait;
use rmcp::model::{CallToolResult, ContentBlock, ResourceContents, Tool as McpToolInfo};
use serde_json::Value;

use robota_core::image::checked_base64_image;
use robota_core::message::ImageSource;
use robota_core::{INVALID_INPUT_KEY, RiskClass, Tool, ToolContext, ToolOutput};

use super::connection::McpConnection;

/// `mcp__<server>__<tool>` with characters outside `[A-Za-z0-9_-]` replaced by `_`.
pub fn qualified_name(server: &str, tool: &str) -> String {
    format!("mcp__{}__{}", normalize(server), normalize(tool))
}

/// A name part as it appears in `mcp__` names.
pub fn normalize(part: &str) -> String {
    part.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// One tool of a connected server.
pub struct McpTool {
    name: String,
    tool: String,
    description: String,
    schema: Value,
    connection: Arc<McpConnection>,
}

impl McpTool {
    /// The tool `info` describes, of the server configured as `server`, called over
    /// `connection`; the model knows it as `mcp__<server>__<tool>` ([`qualified_name`]).
    pub fn new(server: &str, info: &McpToolInfo, connection: Arc<McpConnection>) -> Self {
        let description = info
            .description
            .as_deref()
            .or(info.title.as_deref())
            .unwrap_or("")
            .to_string();
        let mut schema = Value::Object((*info.input_schema).clone());
        if schema.get("type").is_none() {
            schema["type"] = Value::String("object".into());
        }
        McpTool {
            name: qualified_name(server, &info.name),
            tool: info.name.to_string(),
            description,
            schema,
            connection,
        }
    }
}

#[async_trait]
impl Tool for McpTool {
    fn name(&self) -> &str {
        &self.name
    }

    fn description(&self) -> &str {
        &self.description
    }

    fn input_schema(&self) -> Value {
        self.schema.clone()
    }

    fn risk(&self) -> RiskClass {
        RiskClass::Execute
    }

    fn primary_argument(&self, _input: &Value) -> Option<String> {
        None
    }

    async fn call(&self, input: Value, ctx: &ToolContext) -> ToolOutput {
        let arguments = match input {
            Value::Object(map) if map.contains_key(INVALID_INPUT_KEY) => {
                return ToolOutput::error(format!(
                    "Invalid input for {}: the arguments were not valid JSON (possibly cut off by the output token limit)",
                    self.name
                ));
            }
            Value::Object(map) => Some(map),
            Value::Null => None,
            other => {
                return ToolOutput::error(format!(
                    "Invalid input for {}: expected a JSON object, got {other}",
                    self.name
                ));
            }
        };
        let call = self.connection.call_tool(&self.tool, arguments);
        tokio::select! {
            result = call => match result {
                Ok(result) => output_of(&result),
                Err(e) => ToolOutput::error(format!("Error calling {}: {e}", self.name)),
            },
            _ = ctx.cancel.cancelled() => ToolOutput::error("Interrupted by user"),
        }
    }
}

/// The text (and images) the model reads for a tool's result.
pub fn output_of(result: &CallToolResult) -> ToolOutput {
    let mut images = Vec::new();
    let mut parts: Vec<String> = result
        .content
        .iter()
        .map(|c| match c {
            ContentBlock::Text(t) => t.text.clone(),
            ContentBlock::Image(i) => {
                match checked_base64_image(&ImageSource::base64(&i.mime_type, &i.data)) {
                    Ok(image) => {
                        let note = format!("[image: {}]", image.media_type);
                        images.push(image);
                        note
                    }
                    Err(why) => format!(
                        "[image: {}, {} bytes of base64 — not shown to the model: {why}]",
                        i.mime_type,
                        i.data.len()
                    ),
                }
            }
            ContentBlock::Audio(a) => format!(
                "[audio: {}, {} bytes of base64 — not shown to the model]",
                a.mime_type,
                a.data.len()
            ),
            ContentBlock::Resource(r) => match &r.resource {
                ResourceContents::TextResourceContents { text, .. } => text.clone(),
                ResourceContents::BlobResourceContents { uri, mime_type, .. } => format!(
                    "[resource {uri} ({})]",
                    mime_type.as_deref().unwrap_or("binary")
                ),
                _ => "[resource of a kind robota does not read]".to_string(),
            },
            ContentBlock::ResourceLink(link) => format!("[resource link: {}]", link.uri),
            // A kind of content newer than robota, named by its `type`.
            other => format!("[{} content, not shown to the model]", content_type(other)),
        })
        .collect();
    if parts.is_empty()
        && let Some(structured) = &result.structured_content
    {
        parts.push(structured.to_string());
    }
    let text = parts.join("\n");
    if result.is_error == Some(true) {
        ToolOutput::error(if text.is_empty() {
            "The tool reported an error".to_string()
        } else {
            text
        })
    } else {
        ToolOutput::with_images(text, images)
    }
}

/// A content block's `type` as it is on the wire.
fn content_type(content: &ContentBlock) -> String {
    serde_json::to_value(content)
        .ok()
        .and_then(|v| v.get("type")?.as_str().map(str::to_string))
        .unwrap_or_else(|| "unknown".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::ContentBlock as Content;
    use serde_json::json;

    #[test]
    fn names_are_qualified_and_normalized() {
        assert_eq!(
            qualified_name("everything", "echo"),
            "mcp__everything__echo"
        );
        assert_eq!(
            qualified_name("my server", "get.sum"),
            "mcp__my_server__get_sum"
        );
        assert_eq!(qualified_name("a-b", "c_d"), "mcp__a-b__c_d");
    }

    #[test]
    fn results_become_text_errors_and_placeholders() {
        let ok = CallToolResult::success(vec![Content::text("one"), Content::text("two")]);
        assert_eq!(output_of(&ok), ToolOutput::ok("one\ntwo"));
        let failed = CallToolResult::error(vec![Content::text("no such file")]);
        assert_eq!(output_of(&failed), ToolOutput::error("no such file"));
        let image = CallToolResult::success(vec![Content::image("aGVsbG8=", "image/png")]);
        let out = output_of(&image);
        assert!(!out.is_error);
        assert!(
            out.content.starts_with("[image: image/png, 8 bytes"),
            "{}",
            out.content
        );
        assert!(
            out.content.contains("not shown to the model"),
            "{}",
            out.content
        );
        assert!(out.images.is_empty());
        // A real PNG reaches the model as an image.
        let png = base64::Engine::encode(
            &base64::engine::general_purpose::STANDARD,
            robota_core::image::fixtures::PNG_1X1,
        );
        let shot = CallToolResult::success(vec![
            Content::text("the screenshot"),
            Content::image(png.clone(), "image/png"),
        ]);
        let out = output_of(&shot);
        assert_eq!(out.content, "the screenshot\n[image: image/png]");
        assert_eq!(out.images, vec![ImageSource::base64("image/png", png)]);
        let structured = CallToolResult::structured(json!({"sum": 3}));
        assert!(output_of(&structured).content.contains("\"sum\":3"));
    }
}
