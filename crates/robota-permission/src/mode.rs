//! The permission modes: how much the user lets robota do without asking, as Claude Code
//! names them, and the Shift+Tab cycle through them.

use std::fmt;

use serde::{Deserialize, Serialize};

/// How much the user lets robota do without asking.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum PermissionMode {
    /// Reads run; edits, commands and network ask.
    #[default]
    #[serde(rename = "default")]
    Default,
    /// Edits inside the working directories run without asking.
    #[serde(rename = "acceptEdits")]
    AcceptEdits,
    /// Read-only: edits and commands are refused.
    #[serde(rename = "plan")]
    Plan,
    /// Everything runs except what a deny or ask rule catches.
    #[serde(rename = "bypassPermissions")]
    BypassPermissions,
}

impl PermissionMode {
    /// Every mode.
    pub const ALL: [PermissionMode; 4] = [
        PermissionMode::Default,
        PermissionMode::AcceptEdits,
        PermissionMode::Plan,
        PermissionMode::BypassPermissions,
    ];

    /// The mode's name as Claude Code spells it (`acceptEdits`); [`parse`](Self::parse)
    /// reads it back.
    pub fn as_str(self) -> &'static str {
        match self {
            PermissionMode::Default => "default",
            PermissionMode::AcceptEdits => "acceptEdits",
            PermissionMode::Plan => "plan",
            PermissionMode::BypassPermissions => "bypassPermissions",
        }
    }

    /// Parses a mode name as Claude Code spells it (`manual` is an alias of `default`).
    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "default" | "manual" => Some(PermissionMode::Default),
            "acceptEdits" => Some(PermissionMode::AcceptEdits),
            "plan" => Some(PermissionMode::Plan),
            "bypassPermissions" => Some(PermissionMode::BypassPermissions),
            _ => None,
        }
    }

    /// The next mode in the Shift+Tab cycle; `bypassPermissions` is in it only when
    /// `with_bypass` (the session started in it), as in Claude Code.
    pub fn next_in_cycle(self, with_bypass: bool) -> Self {
        match self.next() {
            PermissionMode::BypassPermissions if !with_bypass => PermissionMode::Default,
            next => next,
        }
    }

    /// The next mode of all four, in order.
    pub fn next(self) -> Self {
        match self {
            PermissionMode::Default => PermissionMode::AcceptEdits,
            PermissionMode::AcceptEdits => PermissionMode::Plan,
            PermissionMode::Plan => PermissionMode::BypassPermissions,
            PermissionMode::BypassPermissions => PermissionMode::Default,
        }
    }
}

impl fmt::Display for PermissionMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}
