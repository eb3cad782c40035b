//! A file attached to an answer, as the log refers to it (docs/FILES.md):
//! the log holds references, never bytes, so a file's bytes can be erased
//! and every envelope that names it stays whole.

use serde::{Deserialize, Serialize};

use crate::ThreadId;

// Also the HTTP API's file (`lattice_wire::FileView` holds it, with its
// erasure). Its doc comment is the committed wire schemas' description.
/// A file as a submission (and `ui.form_submitted`) carries it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct FileRef {
    /// `fil_…`
    pub id: String,
    /// As kept: its last path segment, no control characters.
    pub name: String,
    /// Decided from its content, never from what the client said.
    #[serde(rename = "type")]
    pub media_type: String,
    /// In bytes.
    pub size: u64,
    /// Of its bytes, in lower-case hex.
    pub sha256: String,
}

/// A file as a check reads it: its reference, where it was uploaded and
/// by whom, and whether its bytes were erased.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileView {
    pub reference: FileRef,
    pub thread: ThreadId,
    pub uploader: String,
    pub erased: bool,
}

/// The types a thumbnail is made of (on the server, re-encoded): the
/// images a browser shows; nothing active (an SVG is kept as text).
pub const PREVIEWABLE: [&str; 4] = ["image/png", "image/jpeg", "image/gif", "image/webp"];

/// Whether a file of this type has a thumbnail.
pub fn previewable(media_type: &str) -> bool {
    PREVIEWABLE.contains(&media_type)
}
