//! The documentation of the error codes, written from the one table of
//! them (`lattice_core::Code`): the page each body's `link` points at
//! ([`ERRORS_PATH`](crate::ERRORS_PATH), served by the deployment itself, so the link works
//! offline and matches the running version) and `docs/ERRORS.md`.

use lattice_core::Code;

use crate::status_of;

/// One row per code: its wire string, type, HTTP status and meaning.
fn rows() -> impl Iterator<Item = (Code, u16)> {
    Code::ALL.iter().map(|&code| (code, status_of(&code.example()).as_u16()))
}

/// `docs/ERRORS.md`: a test fails when the committed file differs.
pub fn errors_markdown() -> String {
    let mut out = String::from(
        "# Error codes\n\n\
         <!-- Generated from `lattice_core::Code` (crates/core/src/code.rs); do not edit.\n     \
         Rewrite with `LATTICE_UPDATE_DOCS=1 cargo test -p lattice-http --test error_docs`. -->\n\n\
         Every refusal's body is `{\"error\": {\"type\": …, \"code\": …, \"link\": …, …}}`. The\n\
         `type` is one of fifteen coarse kinds and fixes the HTTP status; the `code` says\n\
         which refusal it is, in snake_case, and never changes once published: branch on\n\
         it, not on the English `reason`. A code this list lacks (from a newer server) is\n\
         read as its type's generic code. The `link` is `/docs/errors#<code>` on the\n\
         serving origin, where the deployment serves this table.\n\n\
         | Code | Type | Status | Meaning |\n\
         |---|---|---|---|\n",
    );
    for (code, status) in rows() {
        out.push_str(&format!("| `{}` | {} | {status} | {} |\n", code.as_str(), code.type_name(), code.doc()));
    }
    out
}

/// The page served at [`ERRORS_PATH`](crate::ERRORS_PATH): each code a row whose `id` is the
/// code, so a body's `link` lands on it.
pub fn errors_page() -> String {
    let mut rows_html = String::new();
    for (code, status) in rows() {
        rows_html.push_str(&format!(
            "<tr id=\"{c}\"><td><a href=\"#{c}\"><code>{c}</code></a></td><td>{t}</td><td>{status}</td><td>{d}</td></tr>\n",
            c = code.as_str(),
            t = code.type_name(),
            d = code_spans(&escape(code.doc())),
        ));
    }
    format!(
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>lattice: error codes</title>\n\
         <style>body{{font:15px/1.5 system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem}}\
         table{{border-collapse:collapse}}td,th{{border-bottom:1px solid #ddd;padding:.3rem .5rem;text-align:left;vertical-align:top}}\
         tr:target{{background:#fff6d5}}code{{font-size:90%}}</style></head><body>\n\
         <h1>Error codes</h1>\n<p>Every refusal's body is <code>{{\"error\": {{\"type\": …, \"code\": …, \"link\": …, …}}}}</code>. \
         Branch on the <code>code</code>: it is stable across versions. The <code>type</code> fixes the HTTP status.</p>\n\
         <table><thead><tr><th>Code</th><th>Type</th><th>Status</th><th>Meaning</th></tr></thead><tbody>\n{rows_html}</tbody></table>\n</body></html>\n"
    )
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

/// Markdown's `` `x` `` as `<code>x</code>`.
fn code_spans(s: &str) -> String {
    let mut out = String::new();
    for (i, part) in s.split('`').enumerate() {
        if i % 2 == 1 {
            out.push_str("<code>");
            out.push_str(part);
            out.push_str("</code>");
        } else {
            out.push_str(part);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::link_of;

    #[test]
    fn the_page_has_a_row_for_every_code_with_its_status() {
        let page = errors_page();
        for &code in Code::ALL {
            assert!(page.contains(&format!("<tr id=\"{}\">", code.as_str())), "{code}");
        }
        assert!(
            page.contains("<tr id=\"form_closed\"><td><a href=\"#form_closed\"><code>form_closed</code></a></td><td>InvalidState</td><td>409</td>")
        );
        assert!(page.contains("Bearer &lt;token&gt;"), "the docs are escaped");
        assert_eq!(link_of(Code::QuotaExceeded), "/docs/errors#quota_exceeded");
    }
}
