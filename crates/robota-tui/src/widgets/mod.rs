//! Widgets the overlays share: the one-line text field (`line_input::LineInput`: the
//! picker's filter, the setup screen's fields), the layout kit the full-screen prompts
//! draw with (`screen_kit`: rows pinned top and bottom, the palette, wrapped prose,
//! numbered choices, a field row with its cursor cell), and the bordered, titled box a
//! floating popup is drawn in (`framed_box`).

pub(crate) mod framed_box;
pub(crate) mod line_input;
pub(crate) mod screen_kit;
