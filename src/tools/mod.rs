//! Built-in tools with Claude Code's schemas: Bash, Read, Write, Edit, Glob, Grep,
//! TodoWrite. Each implements `core::Tool` and turns every failure into an error result.
