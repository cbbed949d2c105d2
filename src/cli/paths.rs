//! Where user state lives: `$ROBOTA_HOME` (default `~/.robota`) and the user's home, as
//! the SDK's assembly finds them.

pub use crate::sdk::assembly::{home_dir, robota_home};
