//! A `Session` as the SDK tests build it: the real Anthropic adapter pointed at a loopback
//! mock (no retries), the default tools in a temp directory, a permission mode, and an
//! optional session log.

use std::path::Path;
use std::sync::Arc;

use robota::core::ToolRegistry;
use robota::core::permission::{PermissionMode, PermissionPolicy};
use robota::providers::{AnthropicConfig, AnthropicProvider, RetryPolicy};
use robota::session::log::SessionLog;
use robota::session::{Session, SessionConfig};

/// Session `s1` with model `claude-sonnet-4-5`, interactive (permission questions reach
/// the client).
pub fn anthropic_session(
    base_url: String,
    cwd: &Path,
    mode: PermissionMode,
    log: Option<SessionLog>,
) -> Session {
    let mut config = AnthropicConfig::new("sk-test");
    config.base_url = base_url;
    config.retry = RetryPolicy::none();
    let provider = Arc::new(AnthropicProvider::new(config).unwrap());
    let tools = ToolRegistry::new(robota::tools::default_tools(cwd));
    Session::new(
        SessionConfig {
            session_id: "s1".into(),
            cwd: cwd.to_path_buf(),
            model: "claude-sonnet-4-5".into(),
            system_prompt: "test".into(),
            max_tokens: 1000,
            thinking_budget: None,
            max_rounds: None,
            context_window: 200_000,
            env: vec![],
            interactive: true,
            server_tools: Vec::new(),
        },
        provider,
        tools,
        PermissionPolicy {
            mode,
            ..PermissionPolicy::default()
        },
        log,
    )
}
