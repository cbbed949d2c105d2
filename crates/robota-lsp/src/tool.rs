//! The `LSP` tool: Claude Code's code-intelligence operations (goToDefinition,
//! findReferences, hover, documentSymbol, workspaceSymbol, goToImplementation,
//! prepareCallHierarchy, incomingCalls, outgoingCalls) answered by the file's language
//! server, as `path:line:col` lines the Read tool can follow. A path the Read deny rules
//! cover never appears in a result.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use async_trait::async_trait;
use lsp_types::{
    CallHierarchyIncomingCall, CallHierarchyItem, CallHierarchyOutgoingCall,
    DocumentSymbolResponse, GotoDefinitionResponse, Hover, HoverContents, Location, MarkedString,
    Range, SymbolInformation, Url, WorkspaceSymbolResponse,
};
use robota_core::permission::PathDenial;
use robota_core::{RiskClass, Tool, ToolContext, ToolOutput};
use serde_json::{Value, json};
use tokio::time::Instant;

use crate::LspError;
use crate::manager::LspManager;
use crate::server::Sync;

const OPERATIONS: [&str; 9] = [
    "goToDefinition",
    "findReferences",
    "hover",
    "documentSymbol",
    "workspaceSymbol",
    "goToImplementation",
    "prepareCallHierarchy",
    "incomingCalls",
    "outgoingCalls",
];

const DESCRIPTION: &str = "Code intelligence from the project's language servers. Operations: \
goToDefinition, findReferences, hover, documentSymbol, workspaceSymbol (query), goToImplementation, \
prepareCallHierarchy, incomingCalls, outgoingCalls. filePath names a file of the language; line and \
character (both from 1, as Read numbers lines) name the symbol. Results are path:line:col locations.";

/// Results listed at most.
const MAX_RESULTS: usize = 200;

/// The `LSP` tool.
pub struct LspTool {
    lsp: Arc<LspManager>,
}

impl LspTool {
    /// The tool over the session's servers.
    pub fn new(lsp: Arc<LspManager>) -> Self {
        LspTool { lsp }
    }
}

/// A parsed call.
struct Query {
    operation: String,
    path: PathBuf,
    line: u32,
    character: u32,
    query: String,
}

fn parse(input: &Value, cwd: &Path) -> Result<Query, String> {
    let operation = input["operation"]
        .as_str()
        .filter(|o| OPERATIONS.contains(o))
        .ok_or_else(|| format!("operation must be one of {}", OPERATIONS.join(", ")))?;
    let file = input["filePath"]
        .as_str()
        .ok_or("filePath is required (a file of the language to ask about)")?;
    let position = |key: &str| -> Result<u32, String> {
        match input.get(key) {
            None | Some(Value::Null) => Ok(1),
            Some(value) => value
                .as_u64()
                .filter(|n| *n >= 1)
                .and_then(|n| u32::try_from(n).ok())
                .ok_or(format!("{key} must be a whole number from 1")),
        }
    };
    Ok(Query {
        operation: operation.to_string(),
        path: resolve_path(cwd, file),
        line: position("line")? - 1,
        character: position("character")? - 1,
        query: input["query"].as_str().unwrap_or("").to_string(),
    })
}

fn resolve_path(cwd: &Path, file: &str) -> PathBuf {
    let path = Path::new(file);
    if path.is_absolute() {
        path.to_path_buf()
    } else {
        cwd.join(path)
    }
}

#[async_trait]
impl Tool for LspTool {
    fn name(&self) -> &str {
        "LSP"
    }
    fn description(&self) -> &str {
        DESCRIPTION
    }
    fn input_schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "operation": {"type": "string", "enum": OPERATIONS},
                "filePath": {"type": "string", "description": "The file to ask about"},
                "line": {"type": "integer", "minimum": 1, "description": "Line, from 1"},
                "character": {"type": "integer", "minimum": 1, "description": "Column, from 1"},
                "query": {"type": "string", "description": "workspaceSymbol: the name to look for"}
            },
            "required": ["operation", "filePath"],
            "additionalProperties": false
        })
    }
    fn risk(&self) -> RiskClass {
        RiskClass::Read
    }
    fn primary_argument(&self, input: &Value) -> Option<String> {
        input["filePath"].as_str().map(str::to_string)
    }

    async fn call(&self, input: Value, ctx: &ToolContext) -> ToolOutput {
        let query = match parse(&input, &ctx.cwd) {
            Ok(query) => query,
            Err(message) => return ToolOutput::error(format!("Invalid input for LSP: {message}")),
        };
        let tokio_cancel = ctx.cancel.clone();
        let answer = tokio::select! {
            answer = self.answer(&query, ctx.read_denial.as_deref()) => answer,
            _ = tokio_cancel.cancelled() => Err(LspError::Cancelled),
        };
        match answer {
            Ok(text) => ToolOutput::ok(text),
            Err(error) => ToolOutput::error(format!("LSP {}: {error}", query.operation)),
        }
    }
}

impl LspTool {
    async fn answer(&self, query: &Query, denial: Option<&PathDenial>) -> Result<String, LspError> {
        let timeout = self.lsp.section().request_timeout();
        let deadline = Instant::now() + timeout;
        let (server, _, language) = self
            .lsp
            .server(&query.path, deadline)
            .await?
            .ok_or_else(|| LspError::NoServer(query.path.clone()))?;
        let text = tokio::fs::read_to_string(&query.path)
            .await
            .map_err(|source| LspError::Read {
                path: query.path.clone(),
                source,
            })?;
        server
            .sync_document(&query.path, &language, &text, Sync::Edited)
            .await?;
        let uri = crate::server::file_uri(&query.path)?;
        let position = json!({"textDocument": {"uri": uri},
            "position": {"line": query.line, "character": query.character}});
        let remaining = || deadline.saturating_duration_since(Instant::now());
        let request = |method: &'static str, params: Value| {
            let server = server.clone();
            async move { server.request(method, params, remaining()).await }
        };
        let lines = match query.operation.as_str() {
            "goToDefinition" | "goToImplementation" => {
                let method = if query.operation == "goToDefinition" {
                    "textDocument/definition"
                } else {
                    "textDocument/implementation"
                };
                let found: Option<GotoDefinitionResponse> =
                    typed(request(method, position).await?)?;
                locations(found).iter().map(location_line).collect()
            }
            "findReferences" => {
                let mut params = position;
                params["context"] = json!({"includeDeclaration": true});
                let found: Option<Vec<Location>> =
                    typed(request("textDocument/references", params).await?)?;
                found
                    .unwrap_or_default()
                    .iter()
                    .map(location_line)
                    .collect()
            }
            "hover" => {
                let found: Option<Hover> = typed(request("textDocument/hover", position).await?)?;
                return Ok(found.map_or("No hover information here.".into(), hover_text));
            }
            "documentSymbol" => {
                let params = json!({"textDocument": {"uri": uri}});
                let found: Option<DocumentSymbolResponse> =
                    typed(request("textDocument/documentSymbol", params).await?)?;
                document_symbols(&query.path, found)
            }
            "workspaceSymbol" => {
                let params = json!({"query": query.query});
                let found: Option<WorkspaceSymbolResponse> =
                    typed(request("workspace/symbol", params).await?)?;
                workspace_symbols(found)
            }
            _ => {
                let items: Option<Vec<CallHierarchyItem>> =
                    typed(request("textDocument/prepareCallHierarchy", position).await?)?;
                let items = items.unwrap_or_default();
                match (query.operation.as_str(), items.first()) {
                    ("incomingCalls", Some(item)) => {
                        let params = json!({"item": item});
                        let calls: Option<Vec<CallHierarchyIncomingCall>> =
                            typed(request("callHierarchy/incomingCalls", params).await?)?;
                        calls
                            .unwrap_or_default()
                            .iter()
                            .map(|c| item_line(&c.from))
                            .collect()
                    }
                    ("outgoingCalls", Some(item)) => {
                        let params = json!({"item": item});
                        let calls: Option<Vec<CallHierarchyOutgoingCall>> =
                            typed(request("callHierarchy/outgoingCalls", params).await?)?;
                        calls
                            .unwrap_or_default()
                            .iter()
                            .map(|c| item_line(&c.to))
                            .collect()
                    }
                    _ => items.iter().map(item_line).collect(),
                }
            }
        };
        Ok(render(lines, denial))
    }
}

/// One result: where it is and its line.
type Found = (Option<PathBuf>, String);

fn typed<T: serde::de::DeserializeOwned>(value: Value) -> Result<T, LspError> {
    serde_json::from_value(value).map_err(|e| LspError::Protocol(format!("unexpected answer: {e}")))
}

/// The results a reader may see, one a line, or a sentence when there are none.
fn render(found: Vec<Found>, denial: Option<&PathDenial>) -> String {
    let visible: Vec<String> = found
        .into_iter()
        .filter(|(path, _)| match (path, denial) {
            (Some(path), Some(denial)) => !denial.denies(path),
            _ => true,
        })
        .map(|(_, line)| line)
        .collect();
    if visible.is_empty() {
        return "No results.".to_string();
    }
    let total = visible.len();
    let mut text: Vec<String> = visible.into_iter().take(MAX_RESULTS).collect();
    if total > MAX_RESULTS {
        text.push(format!("({} more not shown)", total - MAX_RESULTS));
    }
    text.join("\n")
}

fn locations(found: Option<GotoDefinitionResponse>) -> Vec<Location> {
    match found {
        None => Vec::new(),
        Some(GotoDefinitionResponse::Scalar(location)) => vec![location],
        Some(GotoDefinitionResponse::Array(all)) => all,
        Some(GotoDefinitionResponse::Link(links)) => links
            .into_iter()
            .map(|l| Location::new(l.target_uri, l.target_selection_range))
            .collect(),
    }
}

fn path_of(uri: &Url) -> Option<PathBuf> {
    uri.to_file_path().ok()
}

fn place(uri: &Url, range: &Range) -> (Option<PathBuf>, String) {
    let path = path_of(uri);
    let shown = path
        .as_ref()
        .map_or(uri.to_string(), |p| p.display().to_string());
    let text = if range.end.line > range.start.line {
        format!(
            "{shown}:{}:{}-{}",
            range.start.line + 1,
            range.start.character + 1,
            range.end.line + 1
        )
    } else {
        format!(
            "{shown}:{}:{}",
            range.start.line + 1,
            range.start.character + 1
        )
    };
    (path, text)
}

fn location_line(location: &Location) -> Found {
    place(&location.uri, &location.range)
}

fn item_line(item: &CallHierarchyItem) -> Found {
    let (path, at) = place(&item.uri, &item.selection_range);
    (path, format!("{at} {:?} {}", item.kind, item.name))
}

fn symbol_line(symbol: &SymbolInformation) -> Found {
    let (path, at) = place(&symbol.location.uri, &symbol.location.range);
    (path, format!("{at} {:?} {}", symbol.kind, symbol.name))
}

fn document_symbols(path: &Path, found: Option<DocumentSymbolResponse>) -> Vec<Found> {
    let mut lines = Vec::new();
    match found {
        None => {}
        Some(DocumentSymbolResponse::Flat(all)) => lines.extend(all.iter().map(symbol_line)),
        Some(DocumentSymbolResponse::Nested(all)) => {
            let mut stack: Vec<(usize, lsp_types::DocumentSymbol)> =
                all.into_iter().rev().map(|s| (0, s)).collect();
            while let Some((depth, symbol)) = stack.pop() {
                let r = symbol.selection_range;
                lines.push((
                    Some(path.to_path_buf()),
                    format!(
                        "{}{}:{}:{} {:?} {}",
                        "  ".repeat(depth),
                        path.display(),
                        r.start.line + 1,
                        r.start.character + 1,
                        symbol.kind,
                        symbol.name
                    ),
                ));
                for child in symbol.children.unwrap_or_default().into_iter().rev() {
                    stack.push((depth + 1, child));
                }
            }
        }
    }
    lines
}

fn workspace_symbols(found: Option<WorkspaceSymbolResponse>) -> Vec<Found> {
    match found {
        None => Vec::new(),
        Some(WorkspaceSymbolResponse::Flat(all)) => all.iter().map(symbol_line).collect(),
        Some(WorkspaceSymbolResponse::Nested(all)) => all
            .iter()
            .filter_map(|s| match &s.location {
                lsp_types::OneOf::Left(location) => {
                    let (path, at) = location_line(location);
                    Some((path, format!("{at} {:?} {}", s.kind, s.name)))
                }
                lsp_types::OneOf::Right(_) => None,
            })
            .collect(),
    }
}

fn hover_text(hover: Hover) -> String {
    let marked = |m: MarkedString| match m {
        MarkedString::String(s) => s,
        MarkedString::LanguageString(l) => format!("```{}\n{}\n```", l.language, l.value),
    };
    match hover.contents {
        HoverContents::Scalar(m) => marked(m),
        HoverContents::Array(all) => all.into_iter().map(marked).collect::<Vec<_>>().join("\n"),
        HoverContents::Markup(m) => m.value,
    }
}
