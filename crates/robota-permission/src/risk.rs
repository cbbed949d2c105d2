//! The risk class of a tool: what it can do to the world, which the permission mode
//! decides by. Defined here, below the tool contract, so the rules can name it.

use serde::{Deserialize, Serialize};

/// What a tool can do to the world; permission modes decide by it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RiskClass {
    /// Reads files or state; never asks in the default mode.
    Read,
    /// Changes files.
    Edit,
    /// Runs programs.
    Execute,
    /// Reaches the network.
    Network,
}
