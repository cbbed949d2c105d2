//! The search engine behind Grep: a regex from `grep-regex`, `grep-searcher` per thread
//! (binary files skipped), a parallel gitignore-aware walk with ripgrep's file types and
//! glob overrides, and sinks that collect file names, counts or ripgrep-style content
//! lines (`path:line:text`, context `path-line-text`, `--` between groups).

use std::borrow::Cow;
use std::fmt::Write as _;
use std::io;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::SystemTime;

use grep_regex::{RegexMatcher, RegexMatcherBuilder};
use grep_searcher::{
    BinaryDetection, Searcher, SearcherBuilder, Sink, SinkContext, SinkContextKind, SinkMatch,
};
use ignore::overrides::OverrideBuilder;
use ignore::types::TypesBuilder;
use ignore::{DirEntry, WalkBuilder, WalkState};
use tokio_util::sync::CancellationToken;

use super::walk::{collect_parallel, filter_entries, is_file};
use robota_core::permission::PathDenial;

/// Content lines longer than this (in characters) are cut, like `rg --max-columns`.
pub const MAX_LINE_CHARS: usize = 500;
/// Content output collected before the search stops early (far above what the model is
/// shown after truncation; bounds memory on huge trees).
const CONTENT_BYTE_CAP: usize = 4 * 1024 * 1024;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutputMode {
    FilesWithMatches,
    Content,
    Count,
}

#[derive(Debug, Clone)]
pub struct SearchOptions {
    pub pattern: String,
    pub root: PathBuf,
    /// Glob filters (`!` negates), matched like `rg --glob`.
    pub globs: Vec<String>,
    /// A ripgrep file type name (`rust`, `py`, …).
    pub file_type: Option<String>,
    pub mode: OutputMode,
    pub case_insensitive: bool,
    pub line_numbers: bool,
    pub before_context: usize,
    pub after_context: usize,
    pub multiline: bool,
    /// What deny rules keep from the search.
    pub denial: Option<Arc<PathDenial>>,
}

/// What a search found, unsorted.
#[derive(Debug)]
pub enum SearchHits {
    Files(Vec<(SystemTime, PathBuf)>),
    /// Per file, its formatted lines; `capped` when collection stopped at the byte cap.
    Content {
        blocks: Vec<(PathBuf, String)>,
        capped: bool,
    },
    Counts(Vec<(PathBuf, u64)>),
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SearchError {
    #[error("Invalid regex pattern: {0}")]
    InvalidRegex(String),
    #[error("Unknown file type \"{0}\" (examples: rust, py, js, ts, go, java, c, cpp, md, json)")]
    UnknownFileType(String),
    #[error("Invalid glob \"{glob}\": {reason}")]
    InvalidGlob { glob: String, reason: String },
    #[error("Search interrupted by user")]
    Interrupted,
}

enum Hit {
    File(SystemTime, PathBuf),
    Block(PathBuf, String),
    Count(PathBuf, u64),
}

/// Runs the search on all cores. Blocking: call it from `spawn_blocking`.
pub fn search(
    options: &SearchOptions,
    cancel: &CancellationToken,
) -> Result<SearchHits, SearchError> {
    let matcher = build_matcher(options)?;
    let walker = build_walker(options)?.build_parallel();
    let collected = AtomicUsize::new(0);
    let capped = AtomicBool::new(false);
    let make_searcher = || {
        SearcherBuilder::new()
            .binary_detection(BinaryDetection::quit(0))
            .line_number(options.mode == OutputMode::Content && options.line_numbers)
            .multi_line(options.multiline)
            .before_context(if options.mode == OutputMode::Content {
                options.before_context
            } else {
                0
            })
            .after_context(if options.mode == OutputMode::Content {
                options.after_context
            } else {
                0
            })
            .build()
    };
    let hits = collect_parallel(walker, cancel, || {
        let mut searcher = make_searcher();
        let mut scratch = String::new();
        let matcher = &matcher;
        let collected = &collected;
        let capped = &capped;
        move |entry: DirEntry, found: &mut Vec<Hit>| {
            if !is_file(&entry) {
                return WalkState::Continue;
            }
            scratch.clear();
            let path = entry.path();
            let mut sink = HitSink {
                mode: options.mode,
                out: &mut scratch,
                path: path.to_string_lossy(),
                matches: 0,
                full: false,
            };
            if searcher.search_path(matcher, path, &mut sink).is_err() || sink.matches == 0 {
                return WalkState::Continue;
            }
            let (matches, full) = (sink.matches, sink.full);
            match options.mode {
                OutputMode::FilesWithMatches => {
                    let modified = entry
                        .metadata()
                        .ok()
                        .and_then(|m| m.modified().ok())
                        .unwrap_or(SystemTime::UNIX_EPOCH);
                    found.push(Hit::File(modified, entry.into_path()));
                }
                OutputMode::Count => found.push(Hit::Count(entry.into_path(), matches)),
                OutputMode::Content => {
                    let len = scratch.len();
                    let total = collected.fetch_add(len, Ordering::Relaxed) + len;
                    found.push(Hit::Block(entry.into_path(), std::mem::take(&mut scratch)));
                    if full || total > CONTENT_BYTE_CAP {
                        capped.store(true, Ordering::Relaxed);
                        return WalkState::Quit;
                    }
                }
            }
            WalkState::Continue
        }
    })
    .ok_or(SearchError::Interrupted)?;
    Ok(match options.mode {
        OutputMode::FilesWithMatches => SearchHits::Files(
            hits.into_iter()
                .filter_map(|h| match h {
                    Hit::File(t, p) => Some((t, p)),
                    _ => None,
                })
                .collect(),
        ),
        OutputMode::Count => SearchHits::Counts(
            hits.into_iter()
                .filter_map(|h| match h {
                    Hit::Count(p, n) => Some((p, n)),
                    _ => None,
                })
                .collect(),
        ),
        OutputMode::Content => SearchHits::Content {
            blocks: hits
                .into_iter()
                .filter_map(|h| match h {
                    Hit::Block(p, text) => Some((p, text)),
                    _ => None,
                })
                .collect(),
            capped: capped.load(Ordering::Relaxed),
        },
    })
}

fn build_matcher(options: &SearchOptions) -> Result<RegexMatcher, SearchError> {
    let mut builder = RegexMatcherBuilder::new();
    builder
        .case_insensitive(options.case_insensitive)
        .multi_line(true);
    if options.multiline {
        builder.dot_matches_new_line(true);
    } else {
        builder.line_terminator(Some(b'\n'));
    }
    builder
        .build(&options.pattern)
        .map_err(|err| SearchError::InvalidRegex(err.to_string()))
}

fn build_walker(options: &SearchOptions) -> Result<WalkBuilder, SearchError> {
    let mut walker = WalkBuilder::new(&options.root);
    filter_entries(&mut walker, &options.root, options.denial.clone(), false);
    if !options.globs.is_empty() {
        let mut overrides = OverrideBuilder::new(&options.root);
        for glob in &options.globs {
            overrides
                .add(glob)
                .map_err(|err| SearchError::InvalidGlob {
                    glob: glob.clone(),
                    reason: err.to_string(),
                })?;
        }
        let overrides = overrides.build().map_err(|err| SearchError::InvalidGlob {
            glob: options.globs.join(" "),
            reason: err.to_string(),
        })?;
        walker.overrides(overrides);
    }
    if let Some(name) = &options.file_type {
        let types = TypesBuilder::new()
            .add_defaults()
            .select(name)
            .build()
            .map_err(|_| SearchError::UnknownFileType(name.clone()))?;
        walker.types(types);
    }
    Ok(walker)
}

/// Collects what one file's search found, formatted for the output mode.
struct HitSink<'a> {
    mode: OutputMode,
    out: &'a mut String,
    path: Cow<'a, str>,
    matches: u64,
    /// Set when this file alone filled the content cap; its search stops there.
    full: bool,
}

impl HitSink<'_> {
    fn has_room(&mut self) -> bool {
        self.full = self.out.len() > CONTENT_BYTE_CAP;
        !self.full
    }

    fn push_line(&mut self, separator: char, line_number: Option<u64>, line: &[u8]) {
        let out = &mut *self.out;
        out.push_str(&self.path);
        out.push(separator);
        if let Some(n) = line_number {
            let _ = write!(out, "{n}{separator}");
        }
        let line = line.strip_suffix(b"\n").unwrap_or(line);
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        let text = String::from_utf8_lossy(line);
        match text.char_indices().nth(MAX_LINE_CHARS) {
            None => out.push_str(&text),
            Some((cut, _)) => {
                out.push_str(&text[..cut]);
                out.push_str(" [… line truncated]");
            }
        }
        out.push('\n');
    }
}

impl Sink for HitSink<'_> {
    type Error = io::Error;

    fn matched(&mut self, _searcher: &Searcher, mat: &SinkMatch<'_>) -> Result<bool, io::Error> {
        self.matches += 1;
        match self.mode {
            OutputMode::FilesWithMatches => Ok(false),
            OutputMode::Count => Ok(true),
            OutputMode::Content => {
                let mut line_number = mat.line_number();
                for line in mat.lines() {
                    self.push_line(':', line_number, line);
                    line_number = line_number.map(|n| n + 1);
                }
                Ok(self.has_room())
            }
        }
    }

    fn context(
        &mut self,
        _searcher: &Searcher,
        context: &SinkContext<'_>,
    ) -> Result<bool, io::Error> {
        if self.mode == OutputMode::Content && *context.kind() != SinkContextKind::Other {
            self.push_line('-', context.line_number(), context.bytes());
        }
        Ok(self.has_room())
    }

    fn context_break(&mut self, _searcher: &Searcher) -> Result<bool, io::Error> {
        if self.mode == OutputMode::Content {
            self.out.push_str("--\n");
        }
        Ok(true)
    }
}
