//! Why a plugin operation failed, typed: [`PluginError`] for the manager, marketplaces,
//! installs, the store and `git` (each variant carries the path, name or URL involved and
//! wraps the io, JSON, HTTP or settings error underneath); [`FormatError`] for what is
//! wrong inside a `plugin.json` or `marketplace.json` (the field it names); and
//! [`PluginFileError`] for a plugin's JSON file that could not be read or parsed. The
//! messages are what `robota plugin …` and `/plugin …` print.

use std::path::PathBuf;

use crate::commands::definition::TextFileError;
use crate::settings::SettingsError;
use crate::settings::local_rules::SettingsWriteError;

/// What is wrong with the text of a `plugin.json` or `marketplace.json`.
#[derive(Debug, thiserror::Error)]
pub enum FormatError {
    /// The text is not JSON.
    #[error("invalid JSON: {0}")]
    Json(#[from] serde_json::Error),
    /// A field is missing or has the wrong shape; `field` is its path (`plugins[3]
    /// (name).source.repo`, empty for the top level).
    #[error("{}", field_message(.field, .problem))]
    Field { field: String, problem: String },
}

impl FormatError {
    /// A problem with the field at `field` (empty: the document itself).
    pub fn field(field: impl Into<String>, problem: impl Into<String>) -> FormatError {
        FormatError::Field {
            field: field.into(),
            problem: problem.into(),
        }
    }

    /// A problem of the document as a whole.
    pub fn top(problem: impl Into<String>) -> FormatError {
        FormatError::field("", problem)
    }

    /// The same error, its field path put under `prefix` (`plugins[2]` + `.name`).
    pub fn within(self, prefix: &str) -> FormatError {
        match self {
            FormatError::Field { field, problem } => FormatError::Field {
                field: format!("{prefix}{field}"),
                problem,
            },
            other => other,
        }
    }
}

fn field_message(field: &str, problem: &str) -> String {
    if field.is_empty() {
        problem.to_string()
    } else {
        format!("{field}: {problem}")
    }
}

/// A plugin's JSON file (its manifest, `hooks.json`, `.mcp.json`) that cannot be used.
#[derive(Debug, thiserror::Error)]
pub(crate) enum PluginFileError {
    #[error(transparent)]
    Read(#[from] TextFileError),
    #[error(transparent)]
    Format(#[from] FormatError),
}

/// Why a plugin manager operation failed (nothing was changed where that is so).
#[derive(Debug, thiserror::Error)]
pub enum PluginError {
    /// The words after `/plugin` are not an operation.
    #[error("{}", super::manage::USAGE)]
    Usage,
    #[error("unknown scope {0:?}; choose user, project or local")]
    UnknownScope(String),
    /// A file or folder operation failed (`action` is what was tried: `read`, `create`,
    /// `move the clone to` …).
    #[error("cannot {action} {}: {source}", path.display())]
    Io {
        action: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// A settings or state file could not be read or changed (left as it was).
    #[error(transparent)]
    StateFile(#[from] SettingsWriteError),
    /// The settings could not be loaded.
    #[error(transparent)]
    Settings(#[from] SettingsError),
    #[error("cannot run git: {0}")]
    GitMissing(#[source] std::io::Error),
    /// Git ran and failed; its error output, whole.
    #[error("git {args} failed: {stderr}")]
    Git { args: String, stderr: String },

    // Marketplaces.
    /// A `marketplace.json` (named by its file or URL) is malformed.
    #[error("{at}: {source}")]
    Marketplace {
        at: String,
        #[source]
        source: FormatError,
    },
    #[error("{0}: not a folder, a marketplace.json file, a git URL or a GitHub owner/repo")]
    UnknownSource(String),
    #[error(
        "marketplace {0} is already added; `robota plugin marketplace update {0}` refreshes it, `remove` drops it"
    )]
    MarketplaceExists(String),
    #[error(
        "extraKnownMarketplaces.{declared} names a marketplace called {actual}; added under that name"
    )]
    DeclaredUnderOtherName { declared: String, actual: String },
    #[error(
        "marketplace {0} is declared by this project's settings, which are not trusted yet; run `robota trust` to use it"
    )]
    DeclaredButUntrusted(String),
    /// No marketplace of that name; `suggest_add` adds how to add one.
    #[error(
        "no marketplace named {name}; known: {}{}",
        list_or_none(.known),
        if *.suggest_add { " (add one with `robota plugin marketplace add <source>`)" } else { "" }
    )]
    NoMarketplace {
        name: String,
        known: Vec<String>,
        suggest_add: bool,
    },
    #[error("{}: {name} has no installLocation", file.display())]
    NoInstallLocation { file: PathBuf, name: String },
    #[error("cannot save {url} in {}: {source}", dest.display())]
    SaveDownload {
        url: String,
        dest: PathBuf,
        #[source]
        source: std::io::Error,
    },

    // Downloads.
    /// The download's runtime or HTTP client could not be set up.
    #[error("{0}")]
    DownloadSetup(#[source] Box<dyn std::error::Error + Send + Sync>),
    #[error("{url}: {source}")]
    Request {
        url: String,
        #[source]
        source: reqwest::Error,
    },
    #[error("{url}: HTTP {status}")]
    HttpStatus {
        url: String,
        status: reqwest::StatusCode,
    },
    #[error("{url}: larger than {limit} bytes")]
    TooLarge { url: String, limit: usize },
    #[error("{0}: not UTF-8 text")]
    NotText(String),
    #[error("the download stopped unexpectedly")]
    DownloadStopped,

    // Installing.
    #[error("{0}: expected name@marketplace")]
    BadId(String),
    #[error("no marketplace has a plugin named {0}")]
    NoSuchPlugin(String),
    #[error("{id} is in several marketplaces; say which: {}", .candidates.join(", "))]
    Ambiguous { id: String, candidates: Vec<String> },
    #[error(
        "marketplace {marketplace} has no plugin named {name}; it has: {}",
        listed(.names)
    )]
    NotInMarketplace {
        marketplace: String,
        name: String,
        names: Vec<String>,
    },
    #[error("{name} was not installed: {source}")]
    InstallFailed {
        name: String,
        #[source]
        source: Box<PluginError>,
    },
    #[error("{id} was installed but not enabled: {source}")]
    NotEnabled {
        id: String,
        #[source]
        source: Box<PluginError>,
    },
    #[error(
        "its source is the relative path {path:?}, but marketplace {marketplace} was added from a URL and has no files; add its git repository instead"
    )]
    RelativeFromUrl { path: String, marketplace: String },
    #[error("its source {} is not a folder", .0.display())]
    SourceNotFolder(PathBuf),
    #[error("its source {} leads outside the marketplace {}", from.display(), root.display())]
    SourceOutside { from: PathBuf, root: PathBuf },
    #[error("{url} has no folder {subdir}")]
    NoSubfolder { url: String, subdir: String },
    #[error("{} leads outside {url}", from.display())]
    SubfolderOutside { from: PathBuf, url: String },
    #[error("its source is of kind {0:?}, which robota cannot install yet")]
    UnsupportedSource(String),
    /// The plugin's own `plugin.json` is not a JSON object.
    #[error("{}: {source}", path.display())]
    Manifest {
        path: PathBuf,
        #[source]
        source: FormatError,
    },
    #[error("cannot write the manifest: {0}")]
    ManifestText(#[source] serde_json::Error),
    /// The staged copy does not load; the loader's warnings say why.
    #[error("{}", .0.join("; "))]
    DoesNotLoad(Vec<String>),

    // Installed plugins.
    #[error("{id} is not installed; installed: {}", list_or_none(.installed))]
    NotInstalled { id: String, installed: Vec<String> },
    #[error("{0} is not installed; install it with /plugin install {0}")]
    NotInstalledYet(String),
}

impl PluginError {
    /// An io error of `action` on `path`.
    pub fn io(action: &'static str, path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        PluginError::Io {
            action,
            path: path.into(),
            source,
        }
    }
}

/// At most this many names are listed when a plugin is not found.
const LISTED_NAMES: usize = 40;

fn list_or_none(names: &[String]) -> String {
    if names.is_empty() {
        "none".to_string()
    } else {
        names.join(", ")
    }
}

/// The first [`LISTED_NAMES`] names, and how many there are when that is not all.
fn listed(names: &[String]) -> String {
    let mut text = names
        .iter()
        .take(LISTED_NAMES)
        .cloned()
        .collect::<Vec<_>>()
        .join(", ");
    if names.len() > LISTED_NAMES {
        text.push_str(&format!(", … ({} in all)", names.len()));
    }
    if text.is_empty() {
        "none".to_string()
    } else {
        text
    }
}
