//! The docs name only what is there (`cargo xtask docs`, and a test of
//! xtask's own): a rename or a removal that forgets a doc fails here, as
//! rust-analyzer's `tidy` fails for its docs.
//!
//! Read: `docs/*.md`, `README.md` and every `README.md` under the crates,
//! apps, `e2e/`, `infra/`, `schemas/` and `xtask/`. Fenced blocks are
//! commands and examples, not names, and are skipped. Checked:
//!
//! - a path in backticks (it starts with one of [`ROOTS`], or holds a `/`
//!   and ends in one of [`EXTENSIONS`], or is a bare `name.rs`, `name.md`
//!   or `name.sql`): a rooted path exists (a `*` matches within one
//!   folder's name); an unrooted one is relative to the doc's folder or
//!   ends some path of the tree. `path:12` is a line of it; `path::name`
//!   also names a definition in that file; `doc.md#heading` a heading of it;
//! - a rooted path in the prose, and a link's relative target (and anchor);
//! - a Rust name in backticks: `a::b::c`, `name()`, `name!` or a CamelCase
//!   word. Each segment is defined in the workspace's Rust (an item, a
//!   file or folder as a module, a `pub use`), within the crate when the
//!   path starts with `lattice_<crate>`; and the last is defined in the one
//!   before it: a type's or trait's member (an impl's item, a variant, a
//!   field), a module's item, or what an item-level macro call defines
//!   (`Event::MessagePosted`, made by `events!`). A CamelCase word may also
//!   be a file's name (`Dockerfile`), a path a string literal of the Rust
//!   (a tracing target), a function a script's.
//!
//! Not checked: a path that starts with a dependency (any package of
//! Cargo.lock) or `std`, and the prelude's names ([`STD`]); a span holding
//! a placeholder (`<…>`, `{…}`, `…`, `NNNN`); the Rust names of a doc
//! generated from the code (docs/ERRORS.md, pinned by its own test).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The top folders of the tree; a backticked path starting with one is a
/// path of it.
const ROOTS: [&str; 9] = ["crates/", "apps/", "e2e/", "xtask/", "infra/", "schemas/", "docs/", ".ci/", ".cargo/"];

/// What a file of the tree ends with.
const EXTENSIONS: [&str; 17] =
    [".rs", ".md", ".toml", ".yaml", ".yml", ".json", ".sql", ".ts", ".js", ".mjs", ".py", ".sh", ".html", ".css", ".conf", ".png", ".txt"];

/// Not looked into: build output, installed packages, version control.
const SKIPPED_DIRS: [&str; 3] = ["target", "node_modules", ".git"];

/// Names of Rust's standard library and prelude, which a doc may give
/// without their crate.
const STD: [&str; 40] = [
    "std",
    "core",
    "alloc",
    "Option",
    "Some",
    "None",
    "Result",
    "Ok",
    "Err",
    "String",
    "Vec",
    "Box",
    "Arc",
    "Rc",
    "HashMap",
    "HashSet",
    "BTreeMap",
    "BTreeSet",
    "Mutex",
    "RwLock",
    "Duration",
    "Instant",
    "SystemTime",
    "Default",
    "Debug",
    "Display",
    "Clone",
    "Copy",
    "Send",
    "Sync",
    "Drop",
    "Iterator",
    "Future",
    "From",
    "Into",
    "PartialEq",
    "Eq",
    "Hash",
    "Cow",
    "Path",
];

/// `cargo xtask docs`.
pub fn run() -> Result<(), String> {
    let problems = check(&crate::shell::workspace_root())?;
    if problems.is_empty() {
        println!("docs: every file, type and function they name is there");
        return Ok(());
    }
    for p in &problems {
        eprintln!("{p}");
    }
    Err(format!("{} name(s) in the docs are not in the tree", problems.len()))
}

/// Every name the docs under `root` give that is not there, one line each
/// (`doc:line: `name`: why`).
pub fn check(root: &Path) -> Result<Vec<String>, String> {
    let tree = Tree::read(root)?;
    let mut problems = Vec::new();
    for doc in docs(root) {
        let text = std::fs::read_to_string(&doc).map_err(|e| format!("{}: {e}", doc.display()))?;
        let name = doc.strip_prefix(root).unwrap_or(&doc).display().to_string();
        let dir = doc.parent().unwrap_or(root).strip_prefix(root).unwrap_or(Path::new("")).to_path_buf();
        // A doc generated from the code (docs/ERRORS.md from `Code`'s table)
        // holds the code's own words, pinned by the test that generates it;
        // its paths are still checked.
        let generated = text.contains("<!-- Generated from");
        for (line, span, kind) in names(&text) {
            let verdict = match kind {
                Found::Code if generated && !looks_like_path(&span) => None,
                Found::Code => tree.code(&dir, &span),
                Found::Prose => tree.path(&dir, &span).err(),
                Found::Link => tree.link(&dir, &span),
            };
            if let Some(why) = verdict {
                problems.push(format!("{name}:{line}: `{span}`: {why}"));
            }
        }
    }
    Ok(problems)
}

/// The docs read: `docs/*.md`, the root README and the READMEs below.
fn docs(root: &Path) -> Vec<PathBuf> {
    let mut found = vec![root.join("README.md")];
    if let Ok(entries) = std::fs::read_dir(root.join("docs")) {
        found.extend(entries.flatten().map(|e| e.path()).filter(|p| p.extension().is_some_and(|e| e == "md")));
    }
    for top in ["crates", "apps", "e2e", "infra", "schemas", "xtask"] {
        walk(&root.join(top), &mut |p| {
            if p.file_name().is_some_and(|n| n == "README.md") {
                found.push(p.to_path_buf());
            }
        });
    }
    found.retain(|p| p.is_file());
    found.sort();
    found
}

fn walk(dir: &Path, each: &mut dyn FnMut(&Path)) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            if !path.file_name().and_then(|n| n.to_str()).is_some_and(|n| SKIPPED_DIRS.contains(&n)) {
                walk(&path, each);
            }
        } else {
            each(&path);
        }
    }
}

#[derive(Clone, Copy, PartialEq, Debug)]
enum Found {
    Code,
    Prose,
    Link,
}

/// The names a doc gives, with their lines: backticked spans, rooted paths
/// in the prose, links' targets. Fenced blocks are left out.
fn names(text: &str) -> Vec<(usize, String, Found)> {
    // Fenced lines blanked (newlines kept, so lines still count).
    let mut prose = String::with_capacity(text.len());
    let mut fenced = false;
    for line in text.split_inclusive('\n') {
        let fence = line.trim_start().starts_with("```") || line.trim_start().starts_with("~~~");
        if fence || fenced {
            prose.push_str(if line.ends_with('\n') { "\n" } else { "" });
        } else {
            prose.push_str(line);
        }
        if fence {
            fenced = !fenced;
        }
    }
    let line_of = |at: usize| prose[..at].matches('\n').count() + 1;
    let mut found = Vec::new();
    let bytes = prose.as_bytes();
    let mut outside = String::with_capacity(prose.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] != b'`' {
            let next = prose[i..].find('`').map_or(prose.len(), |n| i + n);
            outside.push_str(&prose[i..next]);
            i = next;
            continue;
        }
        let run = prose[i..].bytes().take_while(|b| *b == b'`').count();
        let ticks = &prose[i..i + run];
        // The closing run is the same number of backticks, and no more.
        let mut from = i + run;
        let close = loop {
            match prose[from..].find(ticks) {
                Some(n) => {
                    let at = from + n;
                    let len = prose[at..].bytes().take_while(|b| *b == b'`').count();
                    if len == run {
                        break Some(at);
                    }
                    from = at + len;
                }
                None => break None,
            }
        };
        let Some(close) = close else {
            outside.push_str(ticks);
            i += run;
            continue;
        };
        let span = prose[i + run..close].replace('\n', " ");
        found.push((line_of(i), span.trim().to_owned(), Found::Code));
        outside.extend(std::iter::repeat_n(' ', close + run - i - prose[i..close + run].matches('\n').count()));
        outside.extend(std::iter::repeat_n('\n', prose[i..close + run].matches('\n').count()));
        i = close + run;
    }
    // Links' targets: `](target)`.
    let mut rest = outside.as_str();
    let mut offset = 0;
    while let Some(n) = rest.find("](") {
        let start = n + 2;
        if let Some(end) = rest[start..].find(')') {
            let target = &rest[start..start + end];
            found.push((outside[..offset + n].matches('\n').count() + 1, target.to_owned(), Found::Link));
        }
        offset += start;
        rest = &rest[start..];
    }
    // Rooted paths in the prose.
    for (n, line) in outside.lines().enumerate() {
        for word in line.split(|c: char| c.is_whitespace() || "()[]\"',;".contains(c)) {
            let word = word.trim_end_matches(['.', ':', '!', '?']);
            let word = word.strip_suffix("'s").unwrap_or(word);
            if ROOTS.iter().any(|r| word.starts_with(r)) && !word.contains("://") {
                found.push((n + 1, word.to_owned(), Found::Prose));
            }
        }
    }
    found.sort_by_key(|(line, ..)| *line);
    found
}

/// What the tree holds: its files and folders, and the names its Rust
/// defines, in all and per crate.
struct Tree {
    root: PathBuf,
    paths: BTreeSet<String>,
    defined: BTreeSet<String>,
    by_crate: BTreeMap<String, BTreeSet<String>>,
    by_file: BTreeMap<String, BTreeSet<String>>,
    /// What each file stem or folder holds, as a module (`limits::check_command`).
    by_module: BTreeMap<String, BTreeSet<String>>,
    /// Each type's, trait's and inline module's members (`Committer::commit`).
    members: BTreeMap<String, BTreeSet<String>>,
    /// Macro calls' and re-exports' words: a member of no known owner.
    loose: BTreeSet<String>,
    external: BTreeSet<String>,
    /// The Rust's string literals that read as paths (`lattice::mcp_server`,
    /// a tracing target): a doc may name one as the code writes it.
    literals: BTreeSet<String>,
}

impl Tree {
    fn read(root: &Path) -> Result<Self, String> {
        let mut tree = Tree {
            root: root.to_path_buf(),
            paths: BTreeSet::new(),
            defined: BTreeSet::new(),
            by_crate: BTreeMap::new(),
            by_file: BTreeMap::new(),
            by_module: BTreeMap::new(),
            members: BTreeMap::new(),
            loose: BTreeSet::new(),
            external: STD.iter().map(|s| (*s).to_owned()).collect(),
            literals: BTreeSet::new(),
        };
        let mut files = Vec::new();
        walk(root, &mut |p| files.push(p.to_path_buf()));
        for file in files {
            let Ok(rel) = file.strip_prefix(root) else { continue };
            let rel = rel.to_string_lossy().replace('\\', "/");
            // The local stack's state (`just up`), not the tree.
            if rel.starts_with("data/") {
                continue;
            }
            // Every folder above the file is there too.
            let mut dir = rel.as_str();
            while let Some(cut) = dir.rfind('/') {
                dir = &dir[..cut];
                tree.paths.insert(dir.to_owned());
            }
            if rel.ends_with("Cargo.toml") {
                let text = std::fs::read_to_string(&file).unwrap_or_default();
                tree.external.extend(dependencies(&text));
            }
            // What the dependencies depend on is not ours either (`chrono::Utc`).
            if rel == "Cargo.lock" {
                let text = std::fs::read_to_string(&file).unwrap_or_default();
                tree.external.extend(text.lines().filter_map(|l| l.strip_prefix("name = \"")).map(|n| n.trim_end_matches('"').replace('-', "_")));
            }
            if [".js", ".ts", ".mjs"].iter().any(|e| rel.ends_with(e)) {
                let text = std::fs::read_to_string(&file).unwrap_or_default();
                tree.defined.extend(script_definitions(&text));
            }
            if rel.ends_with(".rs") {
                let text = std::fs::read_to_string(&file).unwrap_or_default();
                tree.literals.extend(text.split('"').skip(1).step_by(2).filter(|l| l.contains("::") && !l.contains(' ')).map(str::to_owned));
                let found = definitions(&text);
                let mut names: BTreeSet<String> = found.names.union(&found.loose).cloned().collect();
                // A file and its folders are modules.
                let modules: Vec<String> = rel.trim_end_matches(".rs").split('/').map(str::to_owned).collect();
                for module in &modules {
                    tree.by_module.entry(module.clone()).or_default().extend(names.iter().cloned());
                }
                names.extend(modules);
                for (owner, members) in found.members {
                    tree.members.entry(owner).or_default().extend(members);
                }
                tree.loose.extend(found.loose);
                let crate_name = crate_of(&rel);
                tree.defined.extend(names.iter().cloned());
                tree.by_crate.entry(crate_name).or_default().extend(names.iter().cloned());
                tree.by_file.insert(rel.clone(), names);
            }
            tree.paths.insert(rel);
        }
        // The workspace's own crates are not external, whatever depends on them.
        tree.external.retain(|e| !e.starts_with("lattice") && e != "xtask");
        Ok(tree)
    }

    /// A backticked span: a path, a Rust name, or neither.
    fn code(&self, dir: &Path, span: &str) -> Option<String> {
        if span.is_empty()
            || span.contains("://")
            || span.starts_with('/')
            || span.starts_with('#')
            || span.starts_with('.') && !span.starts_with(".ci/") && !span.starts_with(".cargo/")
        {
            return None;
        }
        if placeholder(span) {
            return None;
        }
        if looks_like_path(span) {
            return self.path(dir, span).err();
        }
        self.rust(span)
    }

    /// A path of the tree (rooted), or one relative to the doc's folder, or
    /// the end of one (unrooted); `:line`, `::name` and `#heading` after it
    /// are read too.
    fn path(&self, dir: &Path, span: &str) -> Result<(), String> {
        if placeholder(span) {
            return Ok(());
        }
        let (span, heading) = match span.split_once('#') {
            Some((p, h)) => (p, Some(h)),
            None => (span, None),
        };
        let (path, item) = match span.split_once("::") {
            Some((p, item)) => (p, Some(item)),
            None => (span, None),
        };
        let path = match path.rsplit_once(':') {
            Some((p, line)) if !line.is_empty() && line.bytes().all(|b| b.is_ascii_digit() || b == b'-') => p,
            _ => path,
        };
        let path = path.trim_end_matches('/');
        let matches: Vec<&String> = if path.contains('*') {
            self.paths.iter().filter(|p| glob(path, p)).collect()
        } else if ROOTS.iter().any(|r| path.starts_with(r)) || self.paths.contains(path) {
            self.paths.get(path).into_iter().collect()
        } else if let Some(near) = self.paths.get(&format!("{}/{path}", dir.display())) {
            vec![near]
        } else {
            self.paths.iter().filter(|p| p.as_str() == path || p.ends_with(&format!("/{path}"))).collect()
        };
        if matches.is_empty() {
            return Err("no such file or folder".into());
        }
        if let Some(heading) = heading {
            let has = |m: &&&String| std::fs::read_to_string(self.root.join(m.as_str())).is_ok_and(|t| headings(&t).contains(heading));
            if !matches.iter().any(|m| has(&m)) {
                return Err(format!("no heading `#{heading}` there"));
            }
        }
        if let Some(item) = item {
            let last = item.rsplit("::").next().unwrap_or(item).trim_end_matches("()");
            let in_file = matches.iter().any(|m| self.by_file.get(m.as_str()).is_some_and(|names| names.contains(last)));
            if !in_file {
                return Err(format!("`{last}` is not defined in that file"));
            }
        }
        Ok(())
    }

    /// A link's target, relative to the doc's folder.
    fn link(&self, dir: &Path, target: &str) -> Option<String> {
        let target = target.split_whitespace().next().unwrap_or("");
        if target.is_empty() || target.starts_with('#') || target.contains(':') || placeholder(target) {
            return None;
        }
        let (file, heading) = match target.split_once('#') {
            Some((f, h)) => (f, Some(h)),
            None => (target, None),
        };
        // `..` and `.` are walked, so the target is a path of the tree.
        let mut parts: Vec<String> = dir.iter().map(|p| p.to_string_lossy().into_owned()).collect();
        for part in file.split('/') {
            match part {
                "." | "" => {}
                ".." => {
                    parts.pop()?;
                }
                p => parts.push(p.to_owned()),
            }
        }
        let resolved = parts.join("/");
        let resolved = heading.map_or(resolved.clone(), |h| format!("{resolved}#{h}"));
        self.path(Path::new(""), &resolved).err().map(|why| format!("the link's target: {why}"))
    }

    /// A Rust name: each segment defined (within its crate for
    /// `lattice_<crate>::…`), unless it is a dependency's or std's.
    fn rust(&self, span: &str) -> Option<String> {
        let mut s = span.trim_end_matches(';').to_owned();
        let mut called = false;
        // `name(args)`: the arguments are not names.
        if let Some(open) = s.find('(')
            && s.ends_with(')')
        {
            s.truncate(open);
            called = true;
        }
        let macro_call = s.ends_with('!');
        let s = s.trim_end_matches('!');
        // Generic arguments are left out: `Body<T>` is `Body`.
        let s = match s.find('<') {
            Some(open) if s.ends_with('>') => &s[..open],
            _ => s,
        };
        let s = s.trim_start_matches("::");
        if self.literals.contains(s) {
            return None;
        }
        // `a::{b, c}` is `a::b` and `a::c`.
        if let Some((prefix, group)) = s.split_once("::{") {
            let group = group.strip_suffix('}')?;
            return group.split(',').map(str::trim).filter(|g| !g.is_empty()).find_map(|g| self.rust(&format!("{prefix}::{g}")));
        }
        let is_ident = |seg: &str| {
            seg.chars().next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_') && seg.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        };
        let segments: Vec<&str> = s.split("::").collect();
        if segments.iter().any(|seg| !is_ident(seg)) {
            return None;
        }
        let first = segments[0];
        if segments.len() == 1 {
            let camel =
                first.chars().next().is_some_and(|c| c.is_ascii_uppercase()) && first.chars().any(|c| c.is_ascii_lowercase()) && !first.contains('_');
            if !(called || macro_call || camel) || self.external.contains(first) || first.len() < 3 {
                return None;
            }
            // A CamelCase word may be a file's name (`Dockerfile`).
            let a_file = camel && self.paths.iter().any(|p| p.rsplit('/').next() == Some(first));
            return (!self.defined.contains(first) && !a_file).then(|| "no such name in the workspace's Rust".into());
        }
        if self.external.contains(first) || self.external.contains(&first.replace('_', "-")) {
            return None;
        }
        if let Some(short) = first.strip_prefix("lattice_").or((first == "lattice").then_some("lattice")) {
            let Some(names) = self.by_crate.get(&crate_key(short)) else {
                return Some(format!("no crate `{first}` in the workspace"));
            };
            if let Some(seg) = segments[1..].iter().find(|seg| !names.contains(**seg)) {
                return Some(format!("`{seg}` is not defined in `{first}`"));
            }
            return (segments.len() > 2).then(|| self.member(&segments)).flatten();
        }
        let skip_first = matches!(first, "crate" | "self" | "super" | "Self");
        if let Some(seg) = segments.iter().skip(usize::from(skip_first)).find(|seg| !self.defined.contains(**seg)) {
            return Some(format!("`{seg}` is not defined in the workspace's Rust"));
        }
        if skip_first && segments.len() == 2 { None } else { self.member(&segments) }
    }

    /// The last segment is defined in the one before it: a type's or
    /// trait's member, or a module's (a file's, a folder's, an inline
    /// `mod`'s) item. A word of a macro call passes (`Event::MessagePosted`
    /// is made by `events!`).
    fn member(&self, segments: &[&str]) -> Option<String> {
        let [.., owner, last] = segments else { return None };
        let within = |map: &BTreeMap<String, BTreeSet<String>>| map.get(*owner).is_some_and(|m| m.contains(*last));
        let module = owner.starts_with(|c: char| c.is_ascii_lowercase()) && within(&self.by_module);
        (!(self.loose.contains(*last) || within(&self.members) || module)).then(|| format!("`{last}` is not defined in `{owner}`"))
    }
}

/// A span that stands for something (`<tenant>`, `{id}`, `…`, `NNNN`), not
/// a name.
fn placeholder(span: &str) -> bool {
    (span.contains('<') && !span.contains("::") && !span.ends_with('>'))
        || span.contains('{') && !span.contains("::{")
        || span.contains('…')
        || span.contains("...")
        || span.contains("NNNN")
        || span.contains("<name>")
        || span.contains("<tenant>")
}

fn looks_like_path(span: &str) -> bool {
    if span.contains(char::is_whitespace) {
        return false;
    }
    let head = span.split("::").next().unwrap_or(span);
    let head = head.split(':').next().unwrap_or(head);
    if ROOTS.iter().any(|r| head.starts_with(r)) {
        return true;
    }
    let ext = EXTENSIONS.iter().any(|e| head.ends_with(e));
    // A bare name is checked only for the tree's own source files.
    ext && (head.contains('/') || [".rs", ".md", ".sql"].iter().any(|e| head.ends_with(e)))
}

/// `crates/log/src/x.rs` is the crate `log`; `apps/web/…` is `web`;
/// `e2e/…` and `xtask/…` are their own.
fn crate_of(rel: &str) -> String {
    let mut parts = rel.split('/');
    match (parts.next(), parts.next()) {
        (Some("crates" | "apps"), Some(name)) => crate_key(name),
        (Some(top), _) => crate_key(top),
        _ => String::new(),
    }
}

/// `lattice_app_calls` and `crates/app-calls` meet as `app_calls`; the
/// binary `lattice` is `apps/lattice`.
fn crate_key(name: &str) -> String {
    name.replace('-', "_")
}

/// A `*` matches within one folder's name.
fn glob(pattern: &str, path: &str) -> bool {
    let (pattern, path): (Vec<&str>, Vec<&str>) = (pattern.split('/').collect(), path.split('/').collect());
    pattern.len() == path.len() && pattern.iter().zip(&path).all(|(p, s)| glob_part(p.as_bytes(), s.as_bytes()))
}

fn glob_part(p: &[u8], s: &[u8]) -> bool {
    match p.split_first() {
        None => s.is_empty(),
        Some((b'*', rest)) => (0..=s.len()).any(|i| glob_part(rest, &s[i..])),
        Some((c, rest)) => s.first() == Some(c) && glob_part(rest, &s[1..]),
    }
}

/// The dependencies a Cargo.toml names (as Rust names, `-` read as `_`).
fn dependencies(toml: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut in_deps = false;
    for line in toml.lines().map(str::trim) {
        if line.starts_with('[') {
            in_deps = line.contains("dependencies");
            // `[dependencies.name]` and `[target.….dependencies.name]`.
            if let Some(name) = line.trim_matches(['[', ']']).rsplit_once("dependencies.").map(|(_, n)| n) {
                found.push(name.replace('-', "_"));
            }
            continue;
        }
        if in_deps && let Some((key, _)) = line.split_once('=') {
            let key = key.trim().split('.').next().unwrap_or("").trim_matches('"');
            if !key.is_empty() && !key.starts_with('#') {
                found.push(key.replace('-', "_"));
            }
        }
    }
    found
}

/// The functions and classes a script defines (the chat's boot script,
/// the views', the suites' TypeScript), for a doc that names one.
fn script_definitions(text: &str) -> Vec<String> {
    let words: Vec<&str> = text.split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '$')).filter(|w| !w.is_empty()).collect();
    words.windows(2).filter(|w| matches!(w[0], "function" | "class")).map(|w| w[1].to_owned()).collect()
}

/// The anchors of a Markdown file's headings, as GitHub makes them.
fn headings(text: &str) -> BTreeSet<String> {
    text.lines()
        .filter(|l| l.starts_with('#'))
        .map(|l| {
            l.trim_start_matches('#')
                .trim()
                .to_lowercase()
                .chars()
                .filter_map(|c| match c {
                    ' ' => Some('-'),
                    c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
                    _ => None,
                })
                .collect()
        })
        .collect()
}

/// The names a Rust file defines, read with syn; a file syn cannot read
/// gives the words after `fn`, `struct`, `enum` and the like.
fn definitions(text: &str) -> Definitions {
    let mut names = Definitions::default();
    match syn::parse_file(text) {
        Ok(file) => syn::visit::Visit::visit_file(&mut names, &file),
        Err(_) => {
            let words: Vec<&str> = text.split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '!')).filter(|w| !w.is_empty()).collect();
            for pair in words.windows(2) {
                if matches!(pair[0], "fn" | "struct" | "enum" | "trait" | "type" | "const" | "static" | "mod" | "union" | "macro_rules!") {
                    names.loose.insert(pair[1].to_owned());
                }
            }
        }
    }
    names
}

/// What a file defines: its items, each type's (or inline module's)
/// members, and the looser words of its macro calls and re-exports.
#[derive(Default)]
struct Definitions {
    names: BTreeSet<String>,
    members: BTreeMap<String, BTreeSet<String>>,
    /// The words of item-level macro calls (what `events!` or
    /// `both_backends!` defines is among them) and of `pub use`.
    loose: BTreeSet<String>,
    /// The type, trait or inline module whose members are being read.
    owner: Option<String>,
}

impl Definitions {
    fn add(&mut self, ident: &syn::Ident) {
        let name = ident.to_string().trim_start_matches("r#").to_owned();
        if let Some(owner) = &self.owner {
            self.members.entry(owner.clone()).or_default().insert(name.clone());
        }
        self.names.insert(name);
    }

    /// What a macro's tokens define: the word after `fn`, `struct`,
    /// `enum`, `const` and the like, and a word before `=>` or `=` (a line
    /// of `events!` or `switch_keys!`). Not every word: a test module's
    /// `both_backends!` calls half the crate.
    fn words(&mut self, tokens: &str) {
        let words: Vec<&str> = tokens.split_whitespace().collect();
        for pair in words.windows(2) {
            let defines = matches!(pair[0], "fn" | "struct" | "enum" | "trait" | "type" | "const" | "static" | "mod");
            let (before, word) = if defines { (pair[0], pair[1]) } else { (pair[1], pair[0]) };
            let is_word = word.chars().all(|c| c.is_alphanumeric() || c == '_') && word.starts_with(|c: char| c.is_alphabetic() || c == '_');
            if is_word && (defines || before == "=>" || before == "=") {
                self.loose.insert(word.to_owned());
            }
        }
    }

    /// Reads `item` with `owner` as the owner of what it defines.
    fn within(&mut self, owner: Option<String>, item: &syn::Item) {
        let outer = std::mem::replace(&mut self.owner, owner);
        syn::visit::visit_item(self, item);
        self.owner = outer;
    }
}

impl<'a> syn::visit::Visit<'a> for Definitions {
    fn visit_item(&mut self, item: &'a syn::Item) {
        use syn::Item;
        let owned = |ident: &syn::Ident| Some(ident.to_string());
        match item {
            Item::Const(i) => self.add(&i.ident),
            Item::Enum(i) => {
                self.add(&i.ident);
                return self.within(owned(&i.ident), item);
            }
            Item::Fn(i) => self.add(&i.sig.ident),
            Item::Impl(i) => {
                let owner = match &*i.self_ty {
                    syn::Type::Path(p) => p.path.segments.last().map(|s| s.ident.to_string()),
                    _ => None,
                };
                return self.within(owner, item);
            }
            Item::Macro(i) => {
                if let Some(ident) = &i.ident {
                    self.add(ident);
                }
                self.words(&i.mac.tokens.to_string());
            }
            Item::Mod(i) => {
                self.add(&i.ident);
                return self.within(owned(&i.ident), item);
            }
            Item::Static(i) => self.add(&i.ident),
            Item::Struct(i) => {
                self.add(&i.ident);
                return self.within(owned(&i.ident), item);
            }
            Item::Trait(i) => {
                self.add(&i.ident);
                return self.within(owned(&i.ident), item);
            }
            Item::TraitAlias(i) => self.add(&i.ident),
            Item::Type(i) => self.add(&i.ident),
            Item::Union(i) => self.add(&i.ident),
            Item::Use(i) if matches!(i.vis, syn::Visibility::Public(_) | syn::Visibility::Restricted(_)) => {
                self.names.extend(quote_use(&i.tree).split_whitespace().map(str::to_owned));
            }
            _ => {}
        }
        // What a function's body defines is no member of what holds it.
        self.within(None, item);
    }

    fn visit_impl_item(&mut self, item: &'a syn::ImplItem) {
        match item {
            syn::ImplItem::Fn(i) => self.add(&i.sig.ident),
            syn::ImplItem::Const(i) => self.add(&i.ident),
            syn::ImplItem::Type(i) => self.add(&i.ident),
            _ => {}
        }
        let outer = self.owner.take();
        syn::visit::visit_impl_item(self, item);
        self.owner = outer;
    }

    fn visit_trait_item(&mut self, item: &'a syn::TraitItem) {
        match item {
            syn::TraitItem::Fn(i) => self.add(&i.sig.ident),
            syn::TraitItem::Const(i) => self.add(&i.ident),
            syn::TraitItem::Type(i) => self.add(&i.ident),
            _ => {}
        }
        let outer = self.owner.take();
        syn::visit::visit_trait_item(self, item);
        self.owner = outer;
    }

    fn visit_variant(&mut self, v: &'a syn::Variant) {
        self.add(&v.ident);
        let outer = self.owner.take();
        syn::visit::visit_variant(self, v);
        self.owner = outer;
    }

    fn visit_field(&mut self, f: &'a syn::Field) {
        if let Some(ident) = &f.ident {
            self.add(ident);
        }
        syn::visit::visit_field(self, f);
    }
}

/// The last names of a `use` tree, as text.
fn quote_use(tree: &syn::UseTree) -> String {
    match tree {
        syn::UseTree::Path(p) => quote_use(&p.tree),
        syn::UseTree::Name(n) => n.ident.to_string(),
        syn::UseTree::Rename(r) => r.rename.to_string(),
        syn::UseTree::Glob(_) => String::new(),
        syn::UseTree::Group(g) => g.items.iter().map(quote_use).collect::<Vec<_>>().join(" "),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree(files: &[(&str, &str)]) -> PathBuf {
        crate::scratch::tree("docs", files)
    }

    const DOC: &str = "# A map\n\n`crates/log/src/commit.rs` holds `Committer::commit`, tested by \
        `crates/log/src/commit.rs::one_transaction`; `lattice_log::commit::Committer` is the door, \
        `tokio::spawn` and `Option` are not ours. See crates/log/README.md and [the log](../crates/log/README.md).\n\n\
        ```\ncrates/not/here.rs `Nowhere`\n```\n";

    fn repo() -> PathBuf {
        tree(&[
            ("Cargo.toml", "[workspace.dependencies]\ntokio = \"1\"\n"),
            ("README.md", "The map is docs/A.md.\n"),
            ("docs/A.md", DOC),
            ("crates/log/README.md", "The log: `lib.rs`.\n"),
            ("crates/log/src/lib.rs", "pub mod commit;\n"),
            ("crates/log/src/commit.rs", "pub struct Committer;\nimpl Committer { pub fn commit(&self) {} }\n#[test]\nfn one_transaction() {}\n"),
        ])
    }

    #[test]
    fn a_tree_with_everything_named_passes() {
        assert_eq!(check(&repo()).unwrap(), Vec::<String>::new());
    }

    #[test]
    fn removing_a_named_file_fails_naming_the_doc_and_the_line() {
        let root = repo();
        std::fs::remove_file(root.join("crates/log/src/commit.rs")).unwrap();
        let problems = check(&root).unwrap();
        assert!(problems.contains(&"docs/A.md:3: `crates/log/src/commit.rs`: no such file or folder".to_owned()), "{problems:#?}");
        assert!(problems.iter().any(|p| p.contains("`Committer::commit`")), "{problems:#?}");
        assert!(problems.iter().any(|p| p.contains("`lattice_log::commit::Committer`")), "{problems:#?}");
    }

    #[test]
    fn a_renamed_function_or_a_prose_path_or_a_link_fails() {
        let root = repo();
        std::fs::write(root.join("crates/log/src/commit.rs"), "pub struct Committer;\nimpl Committer { pub fn write(&self) {} }\n").unwrap();
        std::fs::remove_file(root.join("crates/log/README.md")).unwrap();
        let problems = check(&root).unwrap().join("\n");
        for name in ["`Committer::commit`", "`crates/log/src/commit.rs::one_transaction`", "`crates/log/README.md`", "`../crates/log/README.md`"] {
            assert!(problems.contains(name), "{name} not in:\n{problems}");
        }
    }

    #[test]
    fn every_name_the_docs_give_is_there() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("xtask sits in the workspace");
        let problems = check(root).unwrap();
        assert!(problems.is_empty(), "the docs name what is not there (`cargo xtask docs`):\n{}", problems.join("\n"));
    }
}
