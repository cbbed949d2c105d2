//! Images into the prompt: a paste that is one path to an image file (what a terminal
//! pastes for a dropped file) becomes an `[Image #N]` placeholder in the composer, and
//! Ctrl+V takes an image from the system clipboard through the platform's clipboard tool
//! (`wl-paste`, `xclip`, `pngpaste`), waiting at most [`TOOL_TIMEOUT`]. What cannot be
//! attached (not an image, over 5 MB, no tool, no image on the clipboard) is said in a
//! notice; a path that was pasted stays in the composer as text, so nothing is lost.

use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use super::clipboard::ClipboardPlace;
use super::state::App;
use crate::transcript::NoticeKind;
use robota_core::image::{MAX_IMAGE_BYTES, image_from_bytes};
use robota_sdk::attachments::{load_image, pasted_image_path};

/// A clipboard tool gets this long to hand over the image.
const TOOL_TIMEOUT: Duration = Duration::from_secs(3);

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

    /// Ctrl+V: the clipboard's image into the composer, or a notice saying why not.
    pub(super) fn paste_clipboard_image(&mut self) {
        let read = read_clipboard_image(ClipboardPlace::from_env())
            .and_then(|bytes| image_from_bytes(&bytes).map_err(|e| e.to_string()));
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

/// The clipboard's image bytes from the first tool that gives some.
fn read_clipboard_image(place: ClipboardPlace) -> Result<Vec<u8>, String> {
    let programs = image_programs(place);
    if programs.is_empty() {
        return Err(if place.ssh {
            "over SSH the clipboard is the local machine's; paste the image file's path instead"
                .to_string()
        } else {
            "no clipboard tool here (wl-paste, xclip or pngpaste); paste the image file's path instead"
                .to_string()
        });
    }
    let mut tried = Vec::new();
    for (program, args) in programs {
        match run_for_output(program, args, TOOL_TIMEOUT) {
            Ok(bytes) if !bytes.is_empty() => return Ok(bytes),
            Ok(_) => tried.push(format!("{program}: the clipboard holds no image")),
            Err(problem) => tried.push(format!("{program}: {problem}")),
        }
    }
    Err(tried.join("; "))
}

/// `program args…`'s standard output, read up to just over the image limit; the program
/// is killed when it takes longer than `timeout`.
fn run_for_output(program: &str, args: &[&str], timeout: Duration) -> Result<Vec<u8>, String> {
    let mut child = Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => "not installed".to_string(),
            _ => format!("cannot run it: {e}"),
        })?;
    let Some(stdout) = child.stdout.take() else {
        return Err("no output".to_string());
    };
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        let read = stdout
            .take(MAX_IMAGE_BYTES as u64 + 1)
            .read_to_end(&mut bytes);
        let _ = tx.send(read.map(|_| bytes));
    });
    let started = Instant::now();
    let bytes = rx.recv_timeout(timeout);
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) if bytes.is_ok() && started.elapsed() < timeout => {
                std::thread::sleep(Duration::from_millis(5));
            }
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
        }
    };
    match (bytes, status) {
        (Ok(Ok(bytes)), Some(status)) if status.success() => Ok(bytes),
        (Ok(Ok(_)), Some(_)) => Ok(Vec::new()),
        (Ok(Err(e)), _) => Err(format!("reading its output failed: {e}")),
        _ => Err(format!("no answer within {} ms", timeout.as_millis())),
    }
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
        let err = read_clipboard_image(ClipboardPlace::default()).unwrap_err();
        assert!(err.contains("no clipboard tool"), "{err}");
    }

    #[test]
    fn a_tool_that_fails_or_is_missing_is_reported_not_waited_for() {
        let limit = TOOL_TIMEOUT;
        assert_eq!(
            run_for_output("robota-no-such-tool", &[], limit).unwrap_err(),
            "not installed"
        );
        assert_eq!(
            run_for_output("false", &[], limit).unwrap(),
            Vec::<u8>::new()
        );
        assert_eq!(run_for_output("printf", &["ab"], limit).unwrap(), b"ab");
        // A tool that never answers is killed at the limit, not waited for.
        let hung = run_for_output("sleep", &["30"], Duration::from_millis(200));
        assert_eq!(hung.unwrap_err(), "no answer within 200 ms");
    }
}
