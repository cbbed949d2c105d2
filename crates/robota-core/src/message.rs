//! Provider-neutral conversation messages: roles, content blocks, completion state and
//! token usage. Blocks serialise in the Anthropic / Claude Code transcript shape so a
//! session log line is readable by hooks written for Claude Code; adapters convert to and
//! from every other wire format.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Who wrote a message. Tool results ride in `User` messages, as in Claude Code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// The user, or tool results sent back on the user's side.
    User,
    /// The model.
    Assistant,
}

/// Whether a message was finished or cut short (abort, exhausted retries).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum MessageState {
    /// Finished as the model or user meant it.
    #[default]
    Complete,
    /// Cut short; kept in the history as far as it got.
    Interrupted,
}

/// An image carried inline.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ImageSource {
    /// How the data is carried: `base64`.
    #[serde(rename = "type")]
    pub kind: String,
    /// The image's media type (`image/png`, `image/jpeg`…).
    pub media_type: String,
    /// The encoded image data.
    pub data: String,
}

impl ImageSource {
    /// Inline base64 image data of `media_type` (`image/png`…).
    pub fn base64(media_type: impl Into<String>, data: impl Into<String>) -> Self {
        ImageSource {
            kind: "base64".into(),
            media_type: media_type.into(),
            data: data.into(),
        }
    }

    /// The image as a `data:` URL, the way OpenAI's APIs take inline images.
    pub fn data_url(&self) -> String {
        format!("data:{};base64,{}", self.media_type, self.data)
    }
}

/// What a tool result says: its text and any images it returns (Read of a picture). It
/// reads as its text (`Deref<Target = str>`), and serialises as Claude Code writes it: a
/// plain string, or — with images — an array of `text` and `image` blocks.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ToolResultContent {
    /// The text the model reads.
    pub text: String,
    /// Images the model sees with the text.
    pub images: Vec<ImageSource>,
}

impl ToolResultContent {
    /// A result of `text` and `images`.
    pub fn with_images(text: impl Into<String>, images: Vec<ImageSource>) -> Self {
        ToolResultContent {
            text: text.into(),
            images,
        }
    }
}

impl std::ops::Deref for ToolResultContent {
    type Target = str;
    fn deref(&self) -> &str {
        &self.text
    }
}

impl std::fmt::Display for ToolResultContent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.text)
    }
}

impl From<String> for ToolResultContent {
    fn from(text: String) -> Self {
        ToolResultContent {
            text,
            images: Vec::new(),
        }
    }
}

impl From<&str> for ToolResultContent {
    fn from(text: &str) -> Self {
        text.to_string().into()
    }
}

impl PartialEq<str> for ToolResultContent {
    fn eq(&self, other: &str) -> bool {
        self.images.is_empty() && self.text == other
    }
}

impl PartialEq<&str> for ToolResultContent {
    fn eq(&self, other: &&str) -> bool {
        self == *other
    }
}

/// One block of an array-shaped tool result, as Claude Code and Anthropic write it.
#[derive(Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum ResultPart {
    Text {
        text: String,
    },
    Image {
        source: ImageSource,
    },
    #[serde(other)]
    Other,
}

impl Serialize for ToolResultContent {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        if self.images.is_empty() {
            return serializer.serialize_str(&self.text);
        }
        let mut parts = Vec::with_capacity(self.images.len() + 1);
        if !self.text.is_empty() {
            parts.push(ResultPart::Text {
                text: self.text.clone(),
            });
        }
        parts.extend(self.images.iter().map(|source| ResultPart::Image {
            source: source.clone(),
        }));
        parts.serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for ToolResultContent {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Shape {
            Text(String),
            Parts(Vec<ResultPart>),
            Missing(()),
        }
        Ok(match Shape::deserialize(deserializer)? {
            Shape::Text(text) => text.into(),
            Shape::Missing(()) => ToolResultContent::default(),
            Shape::Parts(parts) => {
                let mut content = ToolResultContent::default();
                for part in parts {
                    match part {
                        ResultPart::Text { text } => {
                            if !content.text.is_empty() {
                                content.text.push('\n');
                            }
                            content.text.push_str(&text);
                        }
                        ResultPart::Image { source } => content.images.push(source),
                        ResultPart::Other => {}
                    }
                }
                content
            }
        })
    }
}

/// One piece of message content.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Block {
    /// Text, the model's or the user's.
    Text {
        /// The text.
        text: String,
        /// Sources the text cites (Anthropic web search), kept as the API gave them.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        citations: Option<Value>,
    },
    /// The model's visible reasoning (extended thinking).
    Thinking {
        /// The reasoning text.
        thinking: String,
        /// The provider's signature over it, sent back with it on later calls.
        #[serde(default)]
        signature: String,
    },
    /// Reasoning the provider keeps encrypted; carried back as it came.
    RedactedThinking {
        /// The encrypted reasoning.
        data: String,
    },
    /// A tool call the model made.
    ToolUse {
        /// The provider's id for the call; its result refers to it.
        id: String,
        /// The tool's name.
        name: String,
        /// The input object.
        input: Value,
    },
    /// The result of a tool call, in a `User` message.
    ToolResult {
        /// The id of the call it answers.
        tool_use_id: String,
        /// What the call produced.
        #[serde(default)]
        content: ToolResultContent,
        /// Whether the call failed.
        #[serde(default, skip_serializing_if = "is_false")]
        is_error: bool,
    },
    /// An image, in a user message.
    Image {
        /// The image data.
        source: ImageSource,
    },
    /// A block of a provider's own kind (server tool use and results, citations…) that
    /// must be carried back verbatim to the provider that produced it.
    #[serde(untagged)]
    Opaque(Value),
}

fn is_false(b: &bool) -> bool {
    !*b
}

impl Block {
    /// A text block without citations.
    pub fn text(text: impl Into<String>) -> Self {
        Block::Text {
            text: text.into(),
            citations: None,
        }
    }

    /// Characters this block contributes to a context estimate.
    pub fn char_len(&self) -> usize {
        match self {
            Block::Text { text, .. } => text.len(),
            Block::Thinking {
                thinking,
                signature,
            } => thinking.len() + signature.len(),
            Block::RedactedThinking { data } => data.len(),
            Block::ToolUse { id, name, input } => id.len() + name.len() + input.to_string().len(),
            Block::ToolResult {
                tool_use_id,
                content,
                ..
            } => {
                tool_use_id.len()
                    + content.len()
                    + content.images.len() * super::image::IMAGE_CHARS_ESTIMATE
            }
            Block::Image { .. } => super::image::IMAGE_CHARS_ESTIMATE,
            Block::Opaque(v) => v.to_string().len(),
        }
    }
}

/// Token counts of one provider call. `input_tokens` counts uncached prompt tokens only;
/// the whole prompt is `input_tokens + cache_read_input_tokens + cache_creation_input_tokens`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    /// Prompt tokens neither read from nor written to the cache.
    #[serde(default)]
    pub input_tokens: u64,
    /// Tokens the model generated.
    #[serde(default)]
    pub output_tokens: u64,
    /// Prompt tokens read from the cache.
    #[serde(default)]
    pub cache_read_input_tokens: u64,
    /// Prompt tokens written to the cache.
    #[serde(default)]
    pub cache_creation_input_tokens: u64,
}

impl Usage {
    /// Every prompt token of the call, cached or not.
    pub fn prompt_tokens(&self) -> u64 {
        self.input_tokens + self.cache_read_input_tokens + self.cache_creation_input_tokens
    }

    /// Adds `other`'s counts to these.
    pub fn add(&mut self, other: &Usage) {
        self.input_tokens += other.input_tokens;
        self.output_tokens += other.output_tokens;
        self.cache_read_input_tokens += other.cache_read_input_tokens;
        self.cache_creation_input_tokens += other.cache_creation_input_tokens;
    }
}

/// One conversation message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Message {
    /// A unique id (the provider's message id for an assistant message, when it gave one).
    pub id: String,
    /// Who wrote it.
    pub role: Role,
    /// Its blocks, in order.
    pub content: Vec<Block>,
    /// Whether it was finished or cut short.
    #[serde(default)]
    pub state: MessageState,
    /// The token usage of the provider call that produced it (assistant messages only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
}

impl Message {
    /// A complete message with a fresh id.
    pub fn new(role: Role, content: Vec<Block>) -> Self {
        Message {
            id: uuid::Uuid::new_v4().to_string(),
            role,
            content,
            state: MessageState::Complete,
            usage: None,
        }
    }

    /// A user message of one text block.
    pub fn user_text(text: impl Into<String>) -> Self {
        Message::new(Role::User, vec![Block::text(text)])
    }

    /// All text blocks joined, the way a reader sees the answer.
    pub fn text(&self) -> String {
        let mut out = String::new();
        for block in &self.content {
            if let Block::Text { text, .. } = block {
                out.push_str(text);
            }
        }
        out
    }

    /// The tool calls this message asks for, in order.
    pub fn tool_uses(&self) -> impl Iterator<Item = (&str, &str, &Value)> {
        self.content.iter().filter_map(|b| match b {
            Block::ToolUse { id, name, input } => Some((id.as_str(), name.as_str(), input)),
            _ => None,
        })
    }

    /// Characters this message contributes to a context estimate, a small overhead for the
    /// message itself included.
    pub(crate) fn char_len(&self) -> usize {
        self.content.iter().map(Block::char_len).sum::<usize>() + 16
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn blocks_serialise_in_claude_code_shape() {
        let m = Message::new(
            Role::Assistant,
            vec![
                Block::text("hi"),
                Block::ToolUse {
                    id: "toolu_1".into(),
                    name: "Read".into(),
                    input: json!({"file_path": "/a"}),
                },
            ],
        );
        let v = serde_json::to_value(&m.content).unwrap();
        assert_eq!(
            v,
            json!([{"type":"text","text":"hi"},{"type":"tool_use","id":"toolu_1","name":"Read","input":{"file_path":"/a"}}])
        );
        let r = Block::ToolResult {
            tool_use_id: "t".into(),
            content: "x".into(),
            is_error: false,
        };
        assert_eq!(
            serde_json::to_value(&r).unwrap(),
            json!({"type":"tool_result","tool_use_id":"t","content":"x"})
        );
    }

    #[test]
    fn tool_results_with_images_serialise_as_claude_code_block_arrays_and_read_back() {
        let image = ImageSource::base64("image/png", "iVBOR");
        let r = Block::ToolResult {
            tool_use_id: "t".into(),
            content: ToolResultContent::with_images("a picture", vec![image.clone()]),
            is_error: false,
        };
        let v = serde_json::to_value(&r).unwrap();
        assert_eq!(
            v,
            json!({"type":"tool_result","tool_use_id":"t","content":[
                {"type":"text","text":"a picture"},
                {"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBOR"}}]})
        );
        assert_eq!(serde_json::from_value::<Block>(v).unwrap(), r);
        // Claude Code's own shapes: several text parts, unknown parts, no content at all.
        let cc = json!({"type":"tool_result","tool_use_id":"t","content":[
            {"type":"text","text":"one"},{"type":"tool_reference","tool_name":"X"},{"type":"text","text":"two"}]});
        let Block::ToolResult { content, .. } = serde_json::from_value::<Block>(cc).unwrap() else {
            panic!("not a tool result");
        };
        assert_eq!(&*content, "one\ntwo");
        let bare = json!({"type":"tool_result","tool_use_id":"t"});
        assert!(matches!(
            serde_json::from_value::<Block>(bare).unwrap(),
            Block::ToolResult { content, .. } if content.is_empty()
        ));
    }

    #[test]
    fn an_image_counts_the_same_in_the_estimate_whatever_its_size() {
        use crate::image::IMAGE_CHARS_ESTIMATE;
        let small = Block::Image {
            source: ImageSource::base64("image/png", "iVBOR"),
        };
        let big = Block::Image {
            source: ImageSource::base64("image/png", "A".repeat(4_000_000)),
        };
        assert_eq!(small.char_len(), IMAGE_CHARS_ESTIMATE);
        assert_eq!(big.char_len(), IMAGE_CHARS_ESTIMATE);
        let result = Block::ToolResult {
            tool_use_id: "t".into(),
            content: ToolResultContent::with_images(
                "ab",
                vec![ImageSource::base64("image/png", "x")],
            ),
            is_error: false,
        };
        assert_eq!(result.char_len(), 1 + 2 + IMAGE_CHARS_ESTIMATE);
    }

    #[test]
    fn unknown_block_kinds_round_trip_verbatim() {
        let raw = json!({"type":"server_tool_use","id":"srvtoolu_1","name":"web_search","input":{"query":"q"}});
        let b: Block = serde_json::from_value(raw.clone()).unwrap();
        assert!(matches!(b, Block::Opaque(_)));
        assert_eq!(serde_json::to_value(&b).unwrap(), raw);
    }
}
