//! The limits of REQUIREMENTS.md U2 that concern forms.

/// Properties a form may have.
pub const PROPERTIES: usize = 50;
/// Choices (`enum` entries) a property may have.
pub const CHOICES: usize = 64;
/// Bytes of schema JSON.
pub const SCHEMA_BYTES: usize = 32 * 1024;
/// Bytes of submitted values JSON.
pub const VALUES_BYTES: usize = 64 * 1024;
/// Characters of a title, a description or another annotation string.
pub const TEXT_CHARS: usize = 2000;
