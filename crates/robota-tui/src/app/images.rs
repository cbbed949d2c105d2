//! Images into the prompt: a paste that is one path to an image file (what a terminal
//! pastes for a dropped file) becomes an `[Image #N]` placeholder in the composer, and
//! Ctrl+V takes an image from the system clipboard through the platform's clipboard tool
//! (`wl-paste`, `xclip`, `pngpaste`), run off the loop (`helpers.rs`) and killed when it
//! has not answered within [`TOOL_TIMEOUT`]; the image joins the composer when it comes.
//! What cannot be attached (not an image, over 5 MB, no tool, no image on the clipboard, a
//! tool that hung) is said in a notice; a path that was pasted stays in the composer as
//! text, so nothing is lost.

use std::time::Duration;

use tokio::process::Command;

use super::clipboard::ClipboardPlace;
use super::helpers::HelperDone;
use super::state::App;
use crate::transcript::NoticeKind;
use robota_core::helper_program::{HelperError, HelperIo, deadline, describe, run_helper};
use robota_core::image::{ImageError, MAX_IMAGE_BYTES, image_from_bytes};
use robota_core::message::ImageSource;
use robota_sdk::attachments::{load_image, pasted_image_path};

/// A clipboard tool gets this long to hand over the image.
const TOOL_TIMEOUT: Duration = Duration::from_secs(5);

/// Why Ctrl+V attached no image.
#[derive(Debug, thiserror::Error)]
pub enum ClipboardImageError {
    /// The clipboard here is the remote machine's.
    #[error("over SSH the clipboard is the local machine's; paste the image file's path instead")]
    OverSsh,
    #[error(
        "no clipboard tool here (wl-paste, xclip or pngpaste); paste the image file's path instead"
    )]
    NoTool,
    /// A tool hung and was stopped; the search ended there.
    #[error(
        "the clipboard program ({program}) did not finish in {}; it was stopped",
        describe(*limit)
    )]
    TimedOut {
        program: &'static str,
        limit: Duration,
    },
    /// Every tool was tried: each gave no image (`None`) or failed.
    #[error("{}", tried_text(tried))]
    NoImage {
        tried: Vec<(&'static str, Option<HelperError>)>,
    },
    /// The clipboard held something that cannot be sent as an image.
    #[error(transparent)]
    Image(#[from] ImageError),
}

/// `wl-paste: the clipboard holds no image; xclip: not installed`.
fn tried_text(tried: &[(&'static str, Option<HelperError>)]) -> String {
    tried
        .iter()
        .map(|(program, problem)| match problem {
            None => format!("{program}: the clipboard holds no image"),
            Some(problem) => format!("{program}: {problem}"),
        })
        .collect::<Vec<_>>()
        .join("; ")
}

impl App {
    /// A paste for the composer: an image path attaches the image, anything else is text.
    pub(super) fn paste_into_composer(&mut self, text: &str) {
        let Some(path) = pasted_image_path(text, &self.project_dir()) else {
            self.input.paste(text);
            return;
        };
        match load_image(&path) {
            Ok(image) => {
                self.input.composer_mut().attach_image(image);
                self.input.refresh_completion();
            }
            Err(problem) => {
                self.notice(
                    NoticeKind::Warning,
                    format!("Image not attached: {problem}"),
                );
                self.input.paste(text);
            }
        }
    }

    /// Ctrl+V: starts reading the clipboard's image (off the loop); with no tool to read
    /// it, a notice says why not at once.
    pub(super) fn paste_clipboard_image(&mut self) {
        let place = ClipboardPlace::from_env();
        if let Some(problem) = no_image_tool(place) {
            self.clipboard_image_read(Err(problem));
            return;
        }
        self.helpers.spawn(async move {
            let read = read_clipboard_image(place)
                .await
                .and_then(|bytes| Ok(image_from_bytes(&bytes)?));
            HelperDone::Image(read)
        });
    }

    /// The clipboard's image into the composer, or a notice saying why there is none.
    pub(super) fn clipboard_image_read(&mut self, read: Result<ImageSource, ClipboardImageError>) {
        match read {
            Ok(image) => {
                self.input.composer_mut().attach_image(image);
                self.input.refresh_completion();
            }
            Err(problem) => self.notice(NoticeKind::Warning, format!("No image pasted: {problem}")),
        }
    }
}

/// The tools that print the clipboard's image as PNG, for the platform `place` describes.
fn image_programs(place: ClipboardPlace) -> Vec<(&'static str, &'static [&'static str])> {
    let mut programs: Vec<(&'static str, &'static [&'static str])> = Vec::new();
    if place.ssh {
        // A tool here would read the remote machine's clipboard, not the user's.
        return programs;
    }
    if place.wayland {
        programs.push(("wl-paste", &["--no-newline", "--type", "image/png"]));
    }
    if place.x11 {
        programs.push((
            "xclip",
            &["-selection", "clipboard", "-t", "image/png", "-o"],
        ));
    }
    if place.macos {
        programs.push(("pngpaste", &["-"]));
    }
    programs
}

/// Why `place` has no tool to read an image with, if it has none.
fn no_image_tool(place: ClipboardPlace) -> Option<ClipboardImageError> {
    if !image_programs(place).is_empty() {
        return None;
    }
    Some(if place.ssh {
        ClipboardImageError::OverSsh
    } else {
        ClipboardImageError::NoTool
    })
}

/// The clipboard's image bytes from the first tool that gives some; a tool that hangs
/// ends the search.
async fn read_clipboard_image(place: ClipboardPlace) -> Result<Vec<u8>, ClipboardImageError> {
    if let Some(problem) = no_image_tool(place) {
        return Err(problem);
    }
    let mut tried = Vec::new();
    for (program, args) in image_programs(place) {
        match run_for_output(program, args, deadline(TOOL_TIMEOUT)).await {
            Ok(bytes) if !bytes.is_empty() => return Ok(bytes),
            Ok(_) => tried.push((program, None)),
            Err(HelperError::TimedOut(limit)) => {
                return Err(ClipboardImageError::TimedOut { program, limit });
            }
            Err(problem) => tried.push((program, Some(problem))),
        }
    }
    Err(ClipboardImageError::NoImage { tried })
}

/// `program args…`'s standard output, kept up to just over the image limit (empty when it
/// fails); the program is killed when it takes longer than `timeout`.
async fn run_for_output(
    program: &str,
    args: &[&str],
    timeout: Duration,
) -> Result<Vec<u8>, HelperError> {
    let mut command = Command::new(program);
    command.args(args);
    let io = HelperIo {
        input: None,
        output_limit: MAX_IMAGE_BYTES + 1,
        deadline: timeout,
    };
    let out = run_helper(command, io).await?;
    Ok(if out.success() {
        out.stdout
    } else {
        Vec::new()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tools_follow_the_platform_and_none_run_over_ssh() {
        let names = |place| {
            image_programs(place)
                .into_iter()
                .map(|(p, _)| p)
                .collect::<Vec<_>>()
        };
        let both = ClipboardPlace {
            wayland: true,
            x11: true,
            ..Default::default()
        };
        assert_eq!(names(both), ["wl-paste", "xclip"]);
        let mac = ClipboardPlace {
            macos: true,
            ..Default::default()
        };
        assert_eq!(names(mac), ["pngpaste"]);
        assert!(names(ClipboardPlace { ssh: true, ..both }).is_empty());
        let err = no_image_tool(ClipboardPlace::default())
            .unwrap()
            .to_string();
        assert!(err.contains("no clipboard tool"), "{err}");
    }

    #[tokio::test]
    async fn a_tool_that_fails_or_is_missing_is_reported_not_waited_for() {
        let limit = TOOL_TIMEOUT;
        let missing = run_for_output("robota-no-such-tool", &[], limit).await;
        assert_eq!(missing.unwrap_err().to_string(), "not installed");
        assert_eq!(
            run_for_output("false", &[], limit).await.unwrap(),
            Vec::<u8>::new()
        );
        assert_eq!(
            run_for_output("printf", &["ab"], limit).await.unwrap(),
            b"ab"
        );
        // A tool that never answers is killed at the limit, not waited for.
        let hung = run_for_output("sleep", &["30"], Duration::from_millis(200)).await;
        assert_eq!(hung.unwrap_err().to_string(), "did not finish in 200 ms");
    }
}
