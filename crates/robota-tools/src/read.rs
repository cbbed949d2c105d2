//! The Read tool: a text file as `cat -n` style numbered lines, with offset/limit paging,
//! long lines cut; a PNG, JPEG, GIF or WebP (judged by its bytes) as an image the model
//! sees; other binary files, oversize images and directories refused with a clear message, and
//! every successful read recorded in the shared [`FileReadTracker`]. When the host offers
//! its files (`host`), the text is its buffer's; the path is still checked on disk.

use std::path::{Path, PathBuf};

use async_trait::async_trait;
use serde_json::{Value, json};

use super::file_tracker::{FileReadTracker, FileStamp};
use super::host::{HostFiles, ToolHost, host_stamp};
use super::input::{ToolFailure, ToolInput, into_output};
use super::paths::{resolve, similar_names};
use robota_core::image::{has_image_extension, image_from_bytes, sniff_media_type};
use robota_core::{RiskClass, Tool, ToolContext, ToolOutput};

pub const DEFAULT_LINE_LIMIT: u64 = 2000;
/// Lines longer than this (in characters) are cut.
pub const MAX_LINE_CHARS: usize = 2000;
/// Files larger than this are refused (use Bash `head`/`tail`/`grep` instead).
const MAX_FILE_BYTES: u64 = 64 * 1024 * 1024;
/// How far into a file binary detection looks for a NUL byte.
const BINARY_SNIFF_BYTES: usize = 8192;

const DESCRIPTION: &str = "Reads a text file. Relative paths resolve against the working directory. \
Returns up to 2000 lines, numbered like `cat -n` (from 1); use offset (1-based line) and limit to page through long files. \
Lines over 2000 characters are cut. PNG, JPEG, GIF and WebP images (up to 5 MB) are returned as images you can see; other binary files are refused; for a directory use Glob or Bash `ls`. \
A file must be read before Edit or Write may change it. Read several files in parallel when useful. \
Do not read again a file you just edited or wrote to check the change: Edit and Write fail when it does not apply.";

/// Reads a text file as numbered lines, or an image the model sees (Claude Code's `Read`),
/// recording what it read for Edit and Write.
pub struct ReadTool {
    tracker: FileReadTracker,
    host: ToolHost,
}

impl ReadTool {
    /// A Read that records what it reads in `tracker`, reading from the disk.
    pub fn new(tracker: FileReadTracker) -> Self {
        ReadTool {
            tracker,
            host: ToolHost::default(),
        }
    }

    /// Reads files through what `host` offers.
    pub fn on_host(mut self, host: ToolHost) -> Self {
        self.host = host;
        self
    }

    async fn run(&self, input: &Value, ctx: &ToolContext) -> Result<ToolOutput, ToolFailure> {
        let input = ToolInput::parse("Read", input)?;
        let file_path = input.required_str("file_path")?;
        let offset = input.optional_u64("offset")?.unwrap_or(1).max(1);
        let limit = input.optional_u64("limit")?.unwrap_or(DEFAULT_LINE_LIMIT);
        if limit == 0 {
            return Err(input.invalid("\"limit\" must be at least 1").into());
        }
        let path = resolve(&ctx.cwd, file_path);
        let (bytes, stamp) = match &self.host.reads {
            Some(files) => read_through_host(files.as_ref(), &path, &ctx.cwd).await?,
            None => {
                let (path, cwd) = (path.clone(), ctx.cwd.clone());
                tokio::task::spawn_blocking(move || read_from_disk(&path, &cwd))
                    .await
                    .map_err(|err| ToolFailure::failed(format!("Read failed: {err}")))??
            }
        };
        present(&path, &bytes, stamp, offset, limit, &self.tracker)
    }
}

/// The file's bytes and stamp from disk, after the checks on what the path is.
fn read_from_disk(path: &Path, cwd: &Path) -> Result<(Vec<u8>, FileStamp), ToolFailure> {
    let metadata = std::fs::metadata(path).map_err(|err| {
        if err.kind() == std::io::ErrorKind::NotFound {
            missing_file(path, cwd)
        } else {
            ToolFailure::failed(format!("Cannot read {}: {err}", path.display()))
        }
    })?;
    check_readable(path, &metadata)?;
    let bytes = std::fs::read(path)
        .map_err(|err| ToolFailure::failed(format!("Cannot read {}: {err}", path.display())))?;
    let stamp = FileStamp::of(&bytes, &metadata);
    Ok((bytes, stamp))
}

/// The file's text as the host has it (an unsaved buffer included). What the path is on
/// disk is checked first when it is there; a file only the host has is read too.
async fn read_through_host(
    files: &dyn HostFiles,
    path: &Path,
    cwd: &Path,
) -> Result<(Vec<u8>, FileStamp), ToolFailure> {
    let metadata = std::fs::metadata(path).ok();
    if let Some(metadata) = &metadata {
        check_readable(path, metadata)?;
    }
    match files.read_text(path).await {
        Ok(text) => {
            let bytes = text.into_bytes();
            let stamp = host_stamp(&bytes);
            Ok((bytes, stamp))
        }
        Err(_) if metadata.is_none() => Err(missing_file(path, cwd)),
        Err(err) => Err(ToolFailure::failed(format!(
            "Cannot read {} from the editor: {err}",
            path.display()
        ))),
    }
}

/// Refuses directories, devices and files too large to read.
fn check_readable(path: &Path, metadata: &std::fs::Metadata) -> Result<(), ToolFailure> {
    if metadata.is_dir() {
        return Err(ToolFailure::failed(format!(
            "{} is a directory, not a file. Use Glob or Bash `ls` to list its contents.",
            path.display()
        )));
    }
    if !metadata.is_file() {
        return Err(ToolFailure::failed(format!(
            "{} is not a regular file (a device, socket or FIFO); it cannot be read.",
            path.display()
        )));
    }
    if metadata.len() > MAX_FILE_BYTES {
        return Err(ToolFailure::failed(format!(
            "{} is too large to read ({} MB). Use Bash (`head`, `tail`, `grep`) or Grep to look at parts of it.",
            path.display(),
            metadata.len() / (1024 * 1024)
        )));
    }
    Ok(())
}

/// An image as an image; refuses other binary content; records the read and numbers the
/// lines asked for.
fn present(
    path: &Path,
    bytes: &[u8],
    stamp: FileStamp,
    offset: u64,
    limit: u64,
    tracker: &FileReadTracker,
) -> Result<ToolOutput, ToolFailure> {
    if let Some(media_type) = sniff_media_type(bytes) {
        let image = image_from_bytes(bytes).map_err(|err| {
            ToolFailure::failed(format!("Cannot read {}: {err}.", path.display()))
        })?;
        tracker.record(path, stamp);
        return Ok(ToolOutput::with_images(
            format!(
                "[Image: {} ({media_type}, {} bytes)]",
                path.display(),
                bytes.len()
            ),
            vec![image],
        ));
    }
    if has_image_extension(path) && !bytes.is_empty() && !bytes.is_ascii() {
        return Err(ToolFailure::failed(format!(
            "Cannot read {}: its name says image but its contents are not a PNG, JPEG, GIF or WebP image.",
            path.display()
        )));
    }
    if bytes[..bytes.len().min(BINARY_SNIFF_BYTES)].contains(&0) {
        return Err(ToolFailure::failed(format!(
            "Cannot read {}: it is a binary file. Use Bash (e.g. `file`, `xxd | head`, `strings`) to inspect it.",
            path.display()
        )));
    }
    tracker.record(path, stamp);
    if bytes.is_empty() {
        return Ok(ToolOutput::ok(
            "<system-reminder>Warning: the file exists but the contents are empty.</system-reminder>",
        ));
    }
    let text = String::from_utf8_lossy(bytes);
    let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
    Ok(ToolOutput::ok(format_lines(text, offset, limit)))
}

/// `cat -n` style lines `offset..offset+limit` of `text`, with a note when the file has
/// lines before or after the ones shown.
pub fn format_lines(text: &str, offset: u64, limit: u64) -> String {
    let mut out = String::new();
    let mut total: u64 = 0;
    let mut last_shown: u64 = 0;
    for line in text.split_inclusive('\n') {
        total += 1;
        if total >= offset && total - offset < limit {
            push_numbered_line(&mut out, total, line);
            last_shown = total;
        }
    }
    if offset > total {
        return format!(
            "<system-reminder>Warning: the file exists but is shorter than the provided offset ({offset}). The file has {total} lines.</system-reminder>"
        );
    }
    if offset > 1 || last_shown < total {
        out.push_str(&format!(
            "\n(Showing lines {offset}-{last_shown} of {total}. Use offset and limit to read more.)"
        ));
    } else if out.ends_with('\n') {
        out.pop();
    }
    out
}

/// Appends `{n:>6}\t{line}\n`, the line stripped of its ending and cut past
/// [`MAX_LINE_CHARS`].
pub fn push_numbered_line(out: &mut String, number: u64, line: &str) {
    let line = line.strip_suffix('\n').unwrap_or(line);
    let line = line.strip_suffix('\r').unwrap_or(line);
    out.push_str(&format!("{number:>6}\t"));
    match line.char_indices().nth(MAX_LINE_CHARS) {
        None => out.push_str(line),
        Some((cut, _)) => {
            out.push_str(&line[..cut]);
            out.push_str(&format!(
                "… [line truncated: {} chars]",
                line.chars().count()
            ));
        }
    }
    out.push('\n');
}

fn missing_file(path: &Path, cwd: &Path) -> ToolFailure {
    let mut message = format!("File does not exist: {}", path.display());
    let similar: Vec<PathBuf> = similar_names(path);
    if !similar.is_empty() {
        let names: Vec<String> = similar.iter().map(|p| p.display().to_string()).collect();
        message.push_str(&format!("\nDid you mean: {}?", names.join(", ")));
    }
    message.push_str(&format!("\nCurrent working directory: {}", cwd.display()));
    ToolFailure::failed(message)
}

#[async_trait]
impl Tool for ReadTool {
    fn name(&self) -> &str {
        "Read"
    }

    fn description(&self) -> &str {
        DESCRIPTION
    }

    fn input_schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "file_path": {"type": "string", "description": "Path of the file to read (absolute preferred)"},
                "offset": {"type": "integer", "description": "Line to start from (1-based)"},
                "limit": {"type": "integer", "description": "Number of lines to read (default 2000)"}
            },
            "required": ["file_path"]
        })
    }

    fn risk(&self) -> RiskClass {
        RiskClass::Read
    }

    fn primary_argument(&self, input: &Value) -> Option<String> {
        input.get("file_path")?.as_str().map(str::to_string)
    }

    async fn call(&self, input: Value, ctx: &ToolContext) -> ToolOutput {
        into_output(self.run(&input, ctx).await)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::{assert_error_contains, assert_ok, call};

    fn tool() -> (ReadTool, FileReadTracker) {
        let tracker = FileReadTracker::new();
        (ReadTool::new(tracker.clone()), tracker)
    }

    #[tokio::test]
    async fn numbers_lines_like_cat_n_and_records_the_read() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.txt"), "alpha\r\nbeta\n\ngamma").unwrap();
        let (read, tracker) = tool();
        let out = call(&read, dir.path(), json!({"file_path": "a.txt"})).await;
        assert_eq!(
            assert_ok(&out),
            "     1\talpha\n     2\tbeta\n     3\t\n     4\tgamma"
        );
        assert!(tracker.stamp(&dir.path().join("a.txt")).is_some());
    }

    #[tokio::test]
    async fn offset_and_limit_page_and_say_what_is_shown() {
        let dir = tempfile::tempdir().unwrap();
        let text: String = (1..=10).map(|i| format!("line {i}\n")).collect();
        std::fs::write(dir.path().join("f.txt"), text).unwrap();
        let (read, _) = tool();
        let out = call(
            &read,
            dir.path(),
            json!({"file_path": dir.path().join("f.txt"), "offset": 4, "limit": 2}),
        )
        .await;
        assert_eq!(
            assert_ok(&out),
            "     4\tline 4\n     5\tline 5\n\n(Showing lines 4-5 of 10. Use offset and limit to read more.)"
        );
        let beyond = call(
            &read,
            dir.path(),
            json!({"file_path": "f.txt", "offset": 50}),
        )
        .await;
        assert!(
            assert_ok(&beyond)
                .contains("shorter than the provided offset (50). The file has 10 lines")
        );
    }

    #[tokio::test]
    async fn default_limit_is_2000_lines_and_long_lines_are_cut() {
        let dir = tempfile::tempdir().unwrap();
        let mut text: String = "x".repeat(2500);
        text.push('\n');
        for i in 2..=2100 {
            text.push_str(&format!("{i}\n"));
        }
        std::fs::write(dir.path().join("big.txt"), text).unwrap();
        let (read, _) = tool();
        let out = call(&read, dir.path(), json!({"file_path": "big.txt"})).await;
        let content = assert_ok(&out);
        assert!(content.contains("  2000\t2000\n"));
        assert!(!content.contains("  2001\t"));
        assert!(
            content.ends_with("(Showing lines 1-2000 of 2100. Use offset and limit to read more.)")
        );
        let first = content.lines().next().unwrap();
        assert!(first.ends_with("… [line truncated: 2500 chars]"));
        assert_eq!(first.matches('x').count(), 2000);
    }

    #[tokio::test]
    async fn images_are_returned_as_images_judged_by_their_bytes() {
        use robota_core::image::fixtures::PNG_1X1;
        let dir = tempfile::tempdir().unwrap();
        // Named like text, but a PNG inside.
        std::fs::write(dir.path().join("shot.dat"), PNG_1X1).unwrap();
        let (read, tracker) = tool();
        let out = call(&read, dir.path(), json!({"file_path": "shot.dat"})).await;
        assert!(!out.is_error, "{}", out.content);
        assert!(
            out.content.contains("image/png, 70 bytes"),
            "{}",
            out.content
        );
        assert_eq!(out.images.len(), 1);
        assert_eq!(out.images[0].media_type, "image/png");
        assert_eq!(
            out.images[0].data,
            base64::Engine::encode(&base64::engine::general_purpose::STANDARD, PNG_1X1)
        );
        assert!(tracker.stamp(&dir.path().join("shot.dat")).is_some());
        // Over the 5 MB limit: refused with the size, nothing sent.
        let mut big = PNG_1X1.to_vec();
        big.resize(robota_core::image::MAX_IMAGE_BYTES + 10, 0);
        std::fs::write(dir.path().join("big.png"), &big).unwrap();
        let out = call(&read, dir.path(), json!({"file_path": "big.png"})).await;
        assert_error_contains(&out, "images over 5 MB are not sent");
        assert!(out.images.is_empty());
    }

    #[tokio::test]
    async fn binary_files_fake_images_and_directories_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("blob.bin"), b"abc\0def").unwrap();
        std::fs::write(dir.path().join("pic.PNG"), b"\x01\x02\xfe\xff garbage").unwrap();
        // A text file named like an image (a Git LFS pointer) still reads as text.
        std::fs::write(dir.path().join("lfs.png"), "version https://git-lfs").unwrap();
        let (read, tracker) = tool();
        let out = call(&read, dir.path(), json!({"file_path": "blob.bin"})).await;
        assert_error_contains(&out, "binary file");
        assert!(tracker.stamp(&dir.path().join("blob.bin")).is_none());
        let out = call(&read, dir.path(), json!({"file_path": "pic.PNG"})).await;
        assert_error_contains(&out, "its contents are not a PNG, JPEG, GIF or WebP image");
        let out = call(&read, dir.path(), json!({"file_path": "lfs.png"})).await;
        assert_eq!(assert_ok(&out), "     1\tversion https://git-lfs");
        let out = call(&read, dir.path(), json!({"file_path": "."})).await;
        assert_error_contains(&out, "is a directory");
        assert_error_contains(&out, "Glob or Bash `ls`");
        let out = call(&read, dir.path(), json!({"file_path": "/dev/null"})).await;
        assert_error_contains(&out, "is not a regular file");
    }

    #[tokio::test]
    async fn missing_files_name_the_absolute_path_and_close_matches() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("main.rs"), "fn main() {}").unwrap();
        let (read, _) = tool();
        let out = call(&read, dir.path(), json!({"file_path": "main.py"})).await;
        let expected = format!(
            "File does not exist: {}",
            dir.path().join("main.py").display()
        );
        assert_error_contains(&out, &expected);
        assert_error_contains(
            &out,
            &format!("Did you mean: {}", dir.path().join("main.rs").display()),
        );
    }

    #[tokio::test]
    async fn empty_files_get_a_note() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("empty"), "").unwrap();
        let (read, tracker) = tool();
        let out = call(&read, dir.path(), json!({"file_path": "empty"})).await;
        assert!(assert_ok(&out).contains("the contents are empty"));
        assert!(tracker.stamp(&dir.path().join("empty")).is_some());
    }

    #[tokio::test]
    async fn invalid_input_is_an_error_result() {
        let dir = tempfile::tempdir().unwrap();
        let (read, _) = tool();
        let out = call(&read, dir.path(), json!({})).await;
        assert_eq!(
            out.content,
            "Invalid input for Read: missing required field \"file_path\""
        );
        assert!(out.is_error);
        let out = call(&read, dir.path(), json!({"file_path": 3})).await;
        assert_error_contains(&out, "\"file_path\" must be a string, got a number");
        let out = call(&read, dir.path(), json!({"file_path": "a", "offset": "x"})).await;
        assert_error_contains(&out, "\"offset\" must be a non-negative integer");
        let out = call(&read, dir.path(), json!({"file_path": "a", "limit": 0})).await;
        assert_error_contains(&out, "\"limit\" must be at least 1");
        let cut = json!({robota_core::INVALID_INPUT_KEY: "{\"file_pa"});
        assert_error_contains(&call(&read, dir.path(), cut).await, "not valid JSON");
    }
}
