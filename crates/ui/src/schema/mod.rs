//! FormSchema (REQUIREMENTS.md U1–U4): a JSON Schema 2020-12 object of an allowed
//! subset, compiled once into a validator.
//!
//! The table of keywords is an allow-list: a keyword not in it is refused,
//! naming the keyword and where it stands (`properties.zip.pattern: keyword
//! not allowed`), never ignored.

mod compile;
mod compiled;
mod equal;
mod file;
pub mod format;
pub mod limits;
mod lowering;
mod rules;
mod types;
mod validate;

pub use compile::{compile, property_keywords, root_keywords};
pub use compiled::{CompiledForm, Property};
pub use equal::json_equal;
pub use file::{ACCEPT_MAX, FileRule, is_media_range};
pub use format::Format;
pub use types::Types;
pub(crate) use types::is_integer;
