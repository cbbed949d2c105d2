//! Why a plugin operation failed, typed: [`PluginError`] for the manager, marketplaces,
//! installs, the store and `git` (each variant carries the path, name or URL involved and
//! wraps the io, JSON, HTTP or settings error underneath); [`FormatError`] for what is
//! wrong inside a `plugin.json` or `marketplace.json` (the field it names); and
//! `PluginFileError` (crate-internal) for a plugin's JSON file that could not be read or parsed. The
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
    Field {
        /// The field's path.
        field: String,
        /// What is wrong with it.
        problem: String,
    },
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
    /// A scope word other than `user`, `project` or `local` (the word given).
    #[error("unknown scope {0:?}; choose user, project or local")]
    UnknownScope(String),
    /// A file or folder operation failed (`action` is what was tried: `read`, `create`,
    /// `move the clone to` …).
    #[error("cannot {action} {}: {source}", path.display())]
    Io {
        /// What was tried, as a verb phrase for the message.
        action: &'static str,
        /// The file or folder it was tried on.
        path: PathBuf,
        /// The io error.
        #[source]
        source: std::io::Error,
    },
    /// A settings or state file could not be read or changed (left as it was).
    #[error(transparent)]
    StateFile(#[from] SettingsWriteError),
    /// The settings could not be loaded.
    #[error(transparent)]
    Settings(#[from] SettingsError),
    /// The `git` program could not be started (not installed or not on `PATH`).
    #[error("cannot run git: {0}")]
    GitMissing(#[source] std::io::Error),
    /// Git ran and failed; its error output, whole.
    #[error("git {args} failed: {stderr}")]
    Git {
        /// The arguments git was run with, joined by spaces.
        args: String,
        /// What git wrote to standard error.
        stderr: String,
    },

    // Marketplaces.
    /// A `marketplace.json` (named by its file or URL) is malformed.
    #[error("{at}: {source}")]
    Marketplace {
        /// The file path or URL the marketplace was read from.
        at: String,
        /// What is wrong in it.
        #[source]
        source: FormatError,
    },
    /// A marketplace source (the text given) that is none of the kinds robota can add.
    #[error("{0}: not a folder, a marketplace.json file, a git URL or a GitHub owner/repo")]
    UnknownSource(String),
    /// A marketplace of this name is already added.
    #[error(
        "marketplace {0} is already added; `robota plugin marketplace update {0}` refreshes it, `remove` drops it"
    )]
    MarketplaceExists(String),
    /// A marketplace declared in `extraKnownMarketplaces` under one name calls itself
    /// another; robota added it under its own name.
    #[error(
        "extraKnownMarketplaces.{declared} names a marketplace called {actual}; added under that name"
    )]
    DeclaredUnderOtherName {
        /// The key in `extraKnownMarketplaces`.
        declared: String,
        /// The `name` in the marketplace's own `marketplace.json`.
        actual: String,
    },
    /// A marketplace (its name) the project's settings declare, held back because the
    /// project is not trusted.
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
        /// The name asked for.
        name: String,
        /// The names of the marketplaces that are added.
        known: Vec<String>,
        /// Whether the message says how to add a marketplace.
        suggest_add: bool,
    },
    /// An entry of `known_marketplaces.json` without its `installLocation` folder.
    #[error("{}: {name} has no installLocation", file.display())]
    NoInstallLocation {
        /// The `known_marketplaces.json` file.
        file: PathBuf,
        /// The marketplace's name.
        name: String,
    },
    /// A downloaded `marketplace.json` could not be saved.
    #[error("cannot save {url} in {}: {source}", dest.display())]
    SaveDownload {
        /// Where it was downloaded from.
        url: String,
        /// The file it was to be saved as.
        dest: PathBuf,
        /// The io error.
        #[source]
        source: std::io::Error,
    },

    // Downloads.
    /// The download's runtime or HTTP client could not be set up.
    #[error("{0}")]
    DownloadSetup(#[source] Box<dyn std::error::Error + Send + Sync>),
    /// The HTTP request failed (no connection, timeout, broken body).
    #[error("{url}: {source}")]
    Request {
        /// The URL requested.
        url: String,
        /// The HTTP client's error.
        #[source]
        source: reqwest::Error,
    },
    /// The server answered with a status other than success.
    #[error("{url}: HTTP {status}")]
    HttpStatus {
        /// The URL requested.
        url: String,
        /// The status it answered with.
        status: reqwest::StatusCode,
    },
    /// The download was larger than robota accepts.
    #[error("{url}: larger than {limit} bytes")]
    TooLarge {
        /// The URL requested.
        url: String,
        /// The size limit, in bytes.
        limit: usize,
    },
    /// The download (its URL) is not UTF-8 text.
    #[error("{0}: not UTF-8 text")]
    NotText(String),
    /// The download's task ended without an answer.
    #[error("the download stopped unexpectedly")]
    DownloadStopped,

    // Installing.
    /// A plugin id (the text given) not of the form `name@marketplace`.
    #[error("{0}: expected name@marketplace")]
    BadId(String),
    /// No added marketplace lists a plugin of this name.
    #[error("no marketplace has a plugin named {0}")]
    NoSuchPlugin(String),
    /// A bare plugin name that several marketplaces list.
    #[error("{id} is in several marketplaces; say which: {}", .candidates.join(", "))]
    Ambiguous {
        /// The name given.
        id: String,
        /// The `name@marketplace` ids it could mean.
        candidates: Vec<String>,
    },
    /// The named marketplace does not list the plugin.
    #[error(
        "marketplace {marketplace} has no plugin named {name}; it has: {}",
        listed(.names)
    )]
    NotInMarketplace {
        /// The marketplace's name.
        marketplace: String,
        /// The plugin name asked for.
        name: String,
        /// The plugin names the marketplace lists.
        names: Vec<String>,
    },
    /// Installing a plugin failed; nothing was installed.
    #[error("{name} was not installed: {source}")]
    InstallFailed {
        /// The plugin's `name@marketplace` id.
        name: String,
        /// Why.
        #[source]
        source: Box<PluginError>,
    },
    /// The plugin was installed, but turning it on in the settings failed.
    #[error("{id} was installed but not enabled: {source}")]
    NotEnabled {
        /// The plugin's `name@marketplace` id.
        id: String,
        /// Why it could not be enabled.
        #[source]
        source: Box<PluginError>,
    },
    /// The plugin's source is a path relative to a marketplace that has no local files.
    #[error(
        "its source is the relative path {path:?}, but marketplace {marketplace} was added from a URL and has no files; add its git repository instead"
    )]
    RelativeFromUrl {
        /// The relative path in the marketplace entry.
        path: String,
        /// The marketplace's name.
        marketplace: String,
    },
    /// The plugin's source path is not a folder.
    #[error("its source {} is not a folder", .0.display())]
    SourceNotFolder(PathBuf),
    /// The plugin's relative source path resolves outside the marketplace's folder.
    #[error("its source {} leads outside the marketplace {}", from.display(), root.display())]
    SourceOutside {
        /// The resolved source path.
        from: PathBuf,
        /// The marketplace's folder.
        root: PathBuf,
    },
    /// A cloned repository lacks the subfolder the plugin's source names.
    #[error("{url} has no folder {subdir}")]
    NoSubfolder {
        /// The repository's URL.
        url: String,
        /// The subfolder named.
        subdir: String,
    },
    /// The subfolder the plugin's source names resolves outside the cloned repository.
    #[error("{} leads outside {url}", from.display())]
    SubfolderOutside {
        /// The resolved subfolder path.
        from: PathBuf,
        /// The repository's URL.
        url: String,
    },
    /// The plugin's source is of a kind (the `source` word) robota cannot install.
    #[error("its source is of kind {0:?}, which robota cannot install yet")]
    UnsupportedSource(String),
    /// The plugin's own `plugin.json` is not a JSON object.
    #[error("{}: {source}", path.display())]
    Manifest {
        /// The `plugin.json` file.
        path: PathBuf,
        /// What is wrong in it.
        #[source]
        source: FormatError,
    },
    /// The installed plugin's `plugin.json` (its own, completed from the marketplace
    /// entry) could not be serialized.
    #[error("cannot write the manifest: {0}")]
    ManifestText(#[source] serde_json::Error),
    /// The staged copy does not load; the loader's warnings say why.
    #[error("{}", .0.join("; "))]
    DoesNotLoad(Vec<String>),

    // Installed plugins.
    /// The plugin is not installed.
    #[error("{id} is not installed; installed: {}", list_or_none(.installed))]
    NotInstalled {
        /// The id given.
        id: String,
        /// The ids of the installed plugins.
        installed: Vec<String>,
    },
    /// A plugin (its `name@marketplace` id) to enable, disable or update that is not
    /// installed.
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
