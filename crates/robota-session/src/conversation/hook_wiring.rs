//! The session's own hooks: setting them up (configured ones, a driving program's
//! `callback` hooks, a parent's shared with a subagent), firing SessionStart, SessionEnd and
//! the SDK's subagent events, a handle to fire them from outside a turn, and the hook
//! context a turn fires them with (`hook_firing`).

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use serde_json::json;
use tokio_util::sync::CancellationToken;

use robota_core::hooks::{HookCallbacks, HookConfig, HookEvent, HookRequest};
use robota_core::permission::PermissionPolicy;

use crate::hooks::{HookFiring, SessionHooks};
use crate::log::SessionLog;
use crate::update::{SessionUpdate, UpdateSink};

use super::{Session, SessionConfig};

impl Session {
    /// Runs these hooks for the project at `project_dir`; `prompt` and `agent` hooks ask
    /// this session's provider.
    pub fn with_hooks(mut self, config: HookConfig, project_dir: PathBuf) -> Self {
        self.hooks = (!config.is_empty()).then(|| {
            Arc::new(SessionHooks::new(
                config,
                project_dir,
                self.provider.clone(),
                self.config.model.clone(),
                self.wire_tap(),
            ))
        });
        self
    }

    /// Adds the hooks a driving program registered (`callback` handlers answered by
    /// `callbacks`) after the configured ones; they run for the project at `project_dir`.
    pub fn with_callback_hooks(
        mut self,
        config: HookConfig,
        callbacks: Arc<dyn HookCallbacks>,
        project_dir: PathBuf,
    ) -> Self {
        if config.is_empty() {
            return self;
        }
        let mut all = self
            .hooks
            .as_ref()
            .map(|h| h.config().clone())
            .unwrap_or_default();
        all.merge(config);
        let hooks = SessionHooks::new(
            all,
            project_dir,
            self.provider.clone(),
            self.config.model.clone(),
            self.wire_tap(),
        )
        .with_callbacks(callbacks);
        self.hooks = Some(Arc::new(hooks));
        self
    }

    /// The session's hooks, when it has any.
    pub fn hooks(&self) -> Option<&SessionHooks> {
        self.hooks.as_deref()
    }

    /// Fires SessionStart; what the hooks print as context reaches the next prompt.
    pub async fn fire_session_start(&mut self, source: &str, sink: UpdateSink<'_>) {
        let Some(hooks) = self.hooks.clone() else {
            return;
        };
        let firing = hook_firing(hooks, &self.config, &self.policy, &self.log, sink);
        let fields = json!({"source": source, "model": self.config.model});
        let request = HookRequest::new(HookEvent::SessionStart, Some(source), fields);
        let outcome = firing.fire(request, &CancellationToken::new()).await;
        self.pending_context.extend(outcome.contexts);
    }

    /// Fires `event` with `fields` (SubagentStart and SubagentStop, which the SDK's
    /// subagents report); returns the context the hooks added.
    pub async fn fire_hook(
        &self,
        event: HookEvent,
        query: Option<&str>,
        fields: serde_json::Value,
        sink: UpdateSink<'_>,
    ) -> Vec<String> {
        let Some(hooks) = self.hooks.clone() else {
            return Vec::new();
        };
        let firing = hook_firing(hooks, &self.config, &self.policy, &self.log, sink);
        let request = HookRequest::new(event, query, fields);
        firing
            .fire(request, &CancellationToken::new())
            .await
            .contexts
    }

    /// The session's hooks as they stand, to fire from outside a turn (`None`: it has
    /// none); runs are reported to `sink`.
    pub fn hook_handle(
        &self,
        sink: Arc<dyn Fn(SessionUpdate) + Send + Sync>,
    ) -> Option<crate::hooks::HookHandle> {
        Some(crate::hooks::HookHandle {
            hooks: self.hooks.clone()?,
            session_id: self.config.session_id.clone(),
            transcript_path: self.log.as_ref().map(|l| l.path().to_path_buf()),
            cwd: self.config.cwd.clone(),
            env: self.config.env.clone(),
            policy: self.policy.clone(),
            log: self.log.clone(),
            sink,
        })
    }

    /// The session's hooks, to share with a child session (a subagent runs its parent's).
    pub fn shared_hooks(&self) -> Option<Arc<SessionHooks>> {
        self.hooks.clone()
    }

    /// Runs `hooks` (a parent session's) in this session.
    pub fn with_shared_hooks(mut self, hooks: Option<Arc<SessionHooks>>) -> Self {
        self.hooks = hooks;
        self
    }

    /// Fires SessionEnd (`clear`, `resume`, `logout`, `prompt_input_exit`, `other`).
    pub async fn fire_session_end(&mut self, reason: &str, sink: UpdateSink<'_>) {
        let Some(hooks) = self.hooks.clone() else {
            return;
        };
        let firing = hook_firing(hooks, &self.config, &self.policy, &self.log, sink);
        let request = HookRequest::new(
            HookEvent::SessionEnd,
            Some(reason),
            json!({ "reason": reason }),
        );
        firing.fire(request, &CancellationToken::new()).await;
    }
}

/// The hook context of a session, built from its fields (so a turn can borrow the rest).
pub(crate) fn hook_firing<'a>(
    hooks: Arc<SessionHooks>,
    config: &'a SessionConfig,
    policy: &'a Arc<Mutex<PermissionPolicy>>,
    log: &Option<Arc<SessionLog>>,
    sink: UpdateSink<'a>,
) -> HookFiring<'a> {
    HookFiring {
        hooks,
        session_id: &config.session_id,
        transcript_path: log.as_ref().map(|l| l.path().to_path_buf()),
        cwd: &config.cwd,
        env: &config.env,
        policy,
        sink,
        log: log.clone(),
        barrier: None,
    }
}
