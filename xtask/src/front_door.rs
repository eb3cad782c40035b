//! One front door to the log (docs/ARCHITECTURE.md): `LogService` is the
//! one `impl LogService`, in `crates/log/src/service.rs`, and it hands the
//! database to nobody outside `crates/log`. Everything else reaches the
//! database through its methods, as a caller (`&Authenticated`), or its
//! `ping` and `close`. Read from the source with `syn`, as `circles.rs`
//! reads it.

use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("xtask sits in the workspace").to_path_buf()
}

/// Every `.rs` file under `dir`, as (path from the root, text); `target`
/// directories left out.
fn sources(dir: &Path, found: &mut Vec<(String, String)>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            if path.file_name().is_some_and(|n| n != "target" && n != "node_modules") {
                sources(&path, found);
            }
        } else if path.extension().is_some_and(|e| e == "rs") {
            let rel = path.strip_prefix(root()).unwrap_or(&path).display().to_string();
            found.push((rel, std::fs::read_to_string(&path).unwrap_or_default()));
        }
    }
}

/// The `impl LogService` blocks of one file, at any depth of modules.
fn impls_of_log_service(file: &syn::File) -> Vec<&syn::ItemImpl> {
    fn walk<'a>(items: &'a [syn::Item], found: &mut Vec<&'a syn::ItemImpl>) {
        for item in items {
            match item {
                syn::Item::Impl(i) if i.trait_.is_none() && matches!(&*i.self_ty, syn::Type::Path(p) if p.path.is_ident("LogService")) => {
                    found.push(i)
                }
                syn::Item::Mod(m) => walk(m.content.as_ref().map_or(&[][..], |(_, items)| items), found),
                _ => {}
            }
        }
    }
    let mut found = Vec::new();
    walk(&file.items, &mut found);
    found
}

/// What breaks the rule in the files given (path, text), each a line.
fn violations(files: &[(String, String)]) -> Vec<String> {
    const SERVICE: &str = "crates/log/src/service.rs";
    let handed_out = ".db()";
    let mut found = Vec::new();
    for (path, text) in files {
        // This file's own examples below call it, as text.
        if !path.starts_with("crates/log/") && path != "xtask/src/front_door.rs" && text.contains(handed_out) {
            found.push(format!("{path} calls `{handed_out}`: outside crates/log the log is reached through LogService's methods"));
        }
        if !path.starts_with("crates/log/src/") || !text.contains("LogService") {
            continue;
        }
        let file = match syn::parse_file(text) {
            Ok(file) => file,
            Err(e) => {
                found.push(format!("{path} does not parse: {e}"));
                continue;
            }
        };
        for block in impls_of_log_service(&file) {
            if path != SERVICE {
                found.push(format!("{path} has an `impl LogService`: it lives in {SERVICE} alone"));
            }
            for item in &block.items {
                let syn::ImplItem::Fn(f) = item else { continue };
                let public = matches!(f.vis, syn::Visibility::Public(_));
                let returns_db = match &f.sig.output {
                    syn::ReturnType::Type(_, ty) => names_db(ty),
                    syn::ReturnType::Default => false,
                };
                if public && (f.sig.ident == "db" || returns_db) {
                    found.push(format!("{path}: `pub fn {}` hands the database out of crates/log", f.sig.ident));
                }
            }
        }
    }
    found
}

/// Whether a type names `Db` (`Db`, `&Db`, `crate::Db`, `Option<&Db>`, …).
fn names_db(ty: &syn::Type) -> bool {
    match ty {
        syn::Type::Reference(r) => names_db(&r.elem),
        syn::Type::Paren(p) => names_db(&p.elem),
        syn::Type::Tuple(t) => t.elems.iter().any(names_db),
        syn::Type::Path(p) => p.path.segments.iter().any(|s| {
            s.ident == "Db"
                || matches!(&s.arguments, syn::PathArguments::AngleBracketed(a)
                    if a.args.iter().any(|g| matches!(g, syn::GenericArgument::Type(t) if names_db(t))))
        }),
        _ => false,
    }
}

#[test]
fn the_log_service_is_the_one_front_door_to_the_database() {
    let mut files = Vec::new();
    for dir in ["crates", "apps", "e2e", "xtask"] {
        sources(&root().join(dir), &mut files);
    }
    assert!(files.iter().any(|(p, _)| p == "crates/log/src/service.rs"), "crates/log/src/service.rs is where LogService lives");
    let found = violations(&files);
    assert!(found.is_empty(), "{}", found.join("\n"));
}

#[test]
fn a_public_db_a_second_impl_and_a_call_from_outside_are_each_found() {
    let file = |path: &str, text: &str| (path.to_owned(), text.to_owned());
    let files = [
        file("crates/log/src/service.rs", "impl LogService { pub fn db(&self) -> &Db { todo!() } pub(crate) fn pool(&self) -> &Db { todo!() } }"),
        file("crates/log/src/reads.rs", "mod inner { impl LogService { pub fn store(&self) -> Option<crate::Db> { None } } }"),
        file("crates/api/src/routes/seal.rs", "fn f(log: &LogService) { log.db(); }"),
        file("crates/log/src/seal.rs", "fn f(reader: &LogReader) { reader.db(); }"),
    ];
    assert_eq!(
        violations(&files),
        [
            "crates/log/src/service.rs: `pub fn db` hands the database out of crates/log",
            "crates/log/src/reads.rs has an `impl LogService`: it lives in crates/log/src/service.rs alone",
            "crates/log/src/reads.rs: `pub fn store` hands the database out of crates/log",
            "crates/api/src/routes/seal.rs calls `.db()`: outside crates/log the log is reached through LogService's methods",
        ]
    );
}
