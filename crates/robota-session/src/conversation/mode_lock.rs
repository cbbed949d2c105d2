//! The modes a session may not switch to, and why: a managed policy's
//! `disableBypassPermissionsMode` forbids `bypassPermissions` for the whole session. The
//! session holds it; the clients that switch modes (the interactive driver, the handle
//! programs drive) hold a copy, so that each refusal says the same reason.

use robota_core::permission::PermissionMode;

/// Why `bypassPermissions` may not be switched to, if it may not.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ModeLock {
    bypass_refusal: Option<String>,
}

impl ModeLock {
    /// A lock forbidding `bypassPermissions`, for `reason`.
    pub fn forbidding_bypass(reason: String) -> Self {
        ModeLock {
            bypass_refusal: Some(reason),
        }
    }

    /// Why a switch to `mode` is refused, if it is.
    pub fn refusal(&self, mode: PermissionMode) -> Option<&str> {
        match mode {
            PermissionMode::BypassPermissions => self.bypass_refusal.as_deref(),
            _ => None,
        }
    }
}
