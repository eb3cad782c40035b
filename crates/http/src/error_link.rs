//! Where a refusal's `link` points: the page of error codes the deployment
//! serves itself, so the link works offline and matches the running
//! version. Apart from the page's writer (`error_docs.rs`), so that the
//! body's writer (`error.rs`) and the page's can each name it.

use lattice_core::Code;

/// Where the deployment serves the page of error codes; a body's `link`
/// is this path with its code as the fragment.
pub const ERRORS_PATH: &str = "/docs/errors";

/// The `link` of a refusal of `code`: a path on the serving origin.
pub fn link_of(code: Code) -> String {
    format!("{ERRORS_PATH}#{}", code.as_str())
}
