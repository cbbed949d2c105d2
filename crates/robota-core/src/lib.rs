//! The provider-neutral heart of robota: messages, the provider and tool contracts, the
//! execution loop, permission evaluation, context estimation and the model table. It knows
//! no provider, no terminal and no file format of ours; everything else builds on it.

#![deny(missing_docs)]

pub mod context;
pub mod credentials;
pub mod engine;
pub mod git_bash;
pub mod helper_program;
pub mod hooks;
pub mod http_client;
pub mod image;
pub mod message;
pub mod models;
pub use robota_permission as permission;
pub mod process_group;
pub mod provider;
pub mod provider_factory;
pub mod tool;
pub mod truncate;
pub mod wire;

pub use message::{Block, Message, MessageState, Role, Usage};
pub use provider::{
    AssistantTurn, INVALID_INPUT_KEY, Provider, ProviderError, ProviderErrorKind, ProviderRequest,
    ServerTool, StopReason, StreamEvent, StreamSink, ToolSchema,
};
pub use provider_factory::{Adapter, AdapterConfig, ProviderFactory};
pub use tool::{
    PreviewError, RiskClass, TodoItem, Tool, ToolContext, ToolDisplay, ToolOutput, ToolProgress,
    ToolRegistry, ToolSource,
};
