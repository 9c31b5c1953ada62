//! Bit layouts: pure compose and decompose, no clock, no state. `word.rs` (the id's
//! integer type), `spec.rs` (fields, widths, tick and epoch; the `Layout` trait and custom
//! layouts), `presets.rs` (the six presets), `codec.rs` (text, bytes, decoding, composing).

mod codec;
mod presets;
mod spec;
mod word;

pub use codec::SnowflakeCodec;
pub use presets::{Boundary, Discord, Instagram, Mastodon, Sonyflake, Twitter, preset, presets};
pub use spec::{
    Custom, FieldKind, FieldNames, FieldSpec, Layout, LayoutBuilder, LayoutSpec, MAX_NAME, MAX_TEXT,
};
pub use word::Word;

/// Most fields a layout may have besides its time field.
pub const MAX_FIELDS: usize = 4;
