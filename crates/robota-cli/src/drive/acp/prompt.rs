//! `session/prompt`: the prompt's blocks as robota's one text (resource links as `@path`,
//! embedded resources as context) and its checked images, submitted to the session's
//! queue; the answer waits for the submission to end (`events`).

use agent_client_protocol::v1::Responder;
use agent_client_protocol::v1::schema::{ContentBlock, EmbeddedResourceResource};

use crate::core::message::ImageSource;
use crate::sdk::commands::Submission;

use super::super::super::headless::{InputError, checked_image};
use super::{Driver, INVALID_PARAMS, failure};

impl Driver {
    /// `session/prompt`: the prompt goes into the session's queue; the answer waits for
    /// its submission to end.
    pub(super) fn prompt(&mut self, session: &str, prompt: &[ContentBlock], responder: Responder) {
        let Some(live) = self.sessions.get_mut(session) else {
            let _ = responder.respond_with_error(failure(
                INVALID_PARAMS,
                format!("no open session {session}"),
            ));
            return;
        };
        let text = prompt_text(prompt);
        let images = match prompt_images(prompt) {
            Ok(images) => images,
            Err(problem) => {
                let _ = responder.respond_with_error(failure(INVALID_PARAMS, problem.to_string()));
                return;
            }
        };
        if text.trim().is_empty() && images.is_empty() {
            let _ = responder.respond_with_error(failure(INVALID_PARAMS, "the prompt has no text"));
            return;
        }
        let submission = if images.is_empty() {
            Submission::parse(&text)
        } else {
            Submission::with_images(text, images)
        };
        let id = live.session.submit(submission);
        live.prompts.insert(id, responder);
    }
}

/// A prompt's blocks as robota's one text: text as is, resource links as `@path`, embedded
/// text resources as context blocks (what the editor has open, unsaved edits included).
fn prompt_text(prompt: &[ContentBlock]) -> String {
    let mut text = String::new();
    for block in prompt {
        match block {
            ContentBlock::Text(t) => text.push_str(&t.text),
            ContentBlock::ResourceLink(link) => {
                let path = link.uri.strip_prefix("file://").unwrap_or(&link.uri);
                text.push_str(&format!("@{path}"));
            }
            ContentBlock::Resource(resource) => {
                if let EmbeddedResourceResource::TextResourceContents(contents) = &resource.resource
                {
                    let uri = contents
                        .uri
                        .strip_prefix("file://")
                        .unwrap_or(&contents.uri);
                    text.push_str(&format!(
                        "\n<context ref=\"{uri}\">\n{}\n</context>\n",
                        contents.text
                    ));
                }
            }
            _ => {}
        }
    }
    text
}

/// A prompt's image blocks, checked (PNG, JPEG, GIF or WebP up to 5 MB); `Err` names the
/// first that is not one.
fn prompt_images(prompt: &[ContentBlock]) -> Result<Vec<ImageSource>, InputError> {
    let mut images = Vec::new();
    for block in prompt {
        if let ContentBlock::Image(image) = block {
            let source = ImageSource::base64(&image.mime_type, &image.data);
            images.push(checked_image(images.len() + 1, &source)?);
        }
    }
    Ok(images)
}

#[cfg(test)]
mod tests {
    use super::*;
    use agent_client_protocol::v1::schema::{ImageContent, ResourceLink, TextContent};

    #[test]
    fn prompt_images_are_checked() {
        let png = base64::Engine::encode(
            &base64::engine::general_purpose::STANDARD,
            crate::core::image::fixtures::PNG_1X1,
        );
        let blocks = vec![
            ContentBlock::Text(TextContent::new("what is it?")),
            ContentBlock::Image(ImageContent::new(png.clone(), "image/png")),
        ];
        assert_eq!(
            prompt_images(&blocks).unwrap(),
            vec![ImageSource::base64("image/png", png)]
        );
        let bad = vec![ContentBlock::Image(ImageContent::new(
            "aGVsbG8=",
            "image/png",
        ))];
        let err = prompt_images(&bad).unwrap_err();
        assert!(matches!(err, InputError::Image { n: 1, .. }), "{err}");
        assert!(err.to_string().starts_with("image 1: "), "{err}");
    }

    #[test]
    fn prompt_blocks_become_one_text() {
        let blocks = vec![
            ContentBlock::Text(TextContent::new("look at ")),
            ContentBlock::ResourceLink(ResourceLink::new("a.rs", "file:///p/a.rs")),
        ];
        assert_eq!(prompt_text(&blocks), "look at @/p/a.rs");
    }
}
