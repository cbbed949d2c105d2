//! Hooks end to end: real shell and Python hook scripts in temp projects, the real
//! `robota` binary headless against the loopback mock Anthropic server — what hooks read on
//! stdin, how their exit codes and JSON steer tool calls, prompts and turns, what reaches
//! the model, the log and the output — and the Claude Code hook files of the compatibility
//! corpus parsed and evaluated as Claude Code documents them (with `--features corpus`).

// Unix only: these tests drive the binary through Unix processes, signals, scripts and
// file modes (robota is type-checked for Windows; its tests run here, on Linux).
#![cfg(unix)]
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failed unwrap is a failed test

#[path = "../support/mod.rs"]
mod support;

mod bad_hooks;
#[cfg(feature = "corpus")]
mod corpus;
mod project;
mod skill_hooks;
mod tool_hooks;
mod turn_hooks;
