//! A tool's refusal as MCP answers it: a result marked as an error, whose
//! text says why.

use rmcp::model::{CallToolResult, ContentBlock};

use crate::listing;

pub(crate) fn tool_error(why: impl Into<String>) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(why.into())])
}

/// A refusal of lattice's own as a tool's error: its words with its stable
/// code in the text (a model reads that), and in `structuredContent` the
/// body the HTTP API answers with (`{"error": {"type", "code", "link", …}}`),
/// which a client branches on by its `code`.
pub(crate) fn refused(e: &lattice_core::Error) -> CallToolResult {
    let e = e.clone().bounded();
    let code = e.code();
    let link = lattice_http::link_of(code);
    let mut result = tool_error(format!("{e} (code {code})"));
    result.structured_content = Some(serde_json::json!({ "error": lattice_core::error::Linked { error: &e, link: &link } }));
    result
}

/// Why `name` is not offered where `enabled` holds.
pub(crate) fn not_offered(name: &str) -> String {
    match listing::switch_of(name) {
        Some(key) => format!("{name} is not available: {key} is switched off here"),
        None => format!("there is no tool named {name}"),
    }
}
