//! `docs/ERRORS.md` is what the table of codes generates. Rewrite it with
//! `LATTICE_UPDATE_DOCS=1 cargo test -p lattice-http --test error_docs`
//! and commit the result.

use std::path::Path;

#[test]
fn docs_errors_md_is_what_the_codes_generate() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/ERRORS.md");
    let generated = lattice_http::error_docs::errors_markdown();
    if std::env::var_os("LATTICE_UPDATE_DOCS").is_some() {
        std::fs::write(&path, &generated).unwrap();
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == generated,
        "docs/ERRORS.md differs from what lattice_core::Code generates: run `LATTICE_UPDATE_DOCS=1 cargo test -p lattice-http --test error_docs` and commit the result"
    );
}
