//! Import circles between the files of one crate: `cargo xtask circles
//! [DIR…]` lists them (every workspace member's `src/` when no folder is
//! named), and the tests below keep every member free of them.
//!
//! A file is a module; it names another when a path in it (`crate::a::b`,
//! `super::x`, `self::x`, a child's name, each tree of a `use`) resolves to
//! that module's file, following `use` declarations (a re-export names
//! where the item lives, not the module re-exporting it). The crate root
//! (lib.rs, main.rs) is the crate's index and counts as no one; `#[cfg(test)]`
//! items are left out, since a test may read anything. A `mod.rs` that
//! re-exports its child while the child reads `super::Item` from it is a
//! circle: the item belongs in a file of its own.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use syn::visit::Visit;

/// A module's path from the crate root (`["pages", "thread"]`); the root is empty.
type ModPath = Vec<String>;

/// What one file says: the paths it names (absolute) and the names its `use`
/// declarations bring in (name → absolute path).
#[derive(Default)]
struct Names {
    paths: Vec<ModPath>,
    imports: BTreeMap<String, ModPath>,
    globs: Vec<ModPath>,
}

/// Every circle among the files under `src`: each a sorted list of files
/// (relative to `src`), the circles sorted.
pub fn circles(src: &Path) -> Result<Vec<Vec<String>>, String> {
    let files = rust_files(src)?;
    let mut modules: BTreeMap<ModPath, PathBuf> = BTreeMap::new();
    for file in &files {
        modules.insert(module_of(src, file), file.clone());
    }
    let mut names: BTreeMap<ModPath, Names> = BTreeMap::new();
    for (module, file) in &modules {
        let text = std::fs::read_to_string(file).map_err(|e| format!("{}: {e}", file.display()))?;
        let ast = syn::parse_file(&text).map_err(|e| format!("{}: {e}", file.display()))?;
        let mut found = Finder { here: module.clone(), children: children(&modules, module), names: Names::default() };
        found.visit_file(&ast);
        names.insert(module.clone(), found.names);
    }
    let mut edges: BTreeMap<ModPath, BTreeSet<ModPath>> = BTreeMap::new();
    for (module, said) in &names {
        let to = edges.entry(module.clone()).or_default();
        for path in said.paths.iter().chain(&said.globs) {
            if let Some(target) = resolve(path, &modules, &names, 0)
                && &target != module
                && !target.is_empty()
            {
                to.insert(target);
            }
        }
    }
    let show = |m: &ModPath| modules[m].strip_prefix(src).unwrap_or(&modules[m]).display().to_string();
    let mut found: Vec<Vec<String>> = strongly_connected(&edges)
        .into_iter()
        .filter(|c| c.len() > 1)
        .map(|c| {
            let mut files: Vec<String> = c.iter().map(show).collect();
            files.sort();
            files
        })
        .collect();
    found.sort();
    Ok(found)
}

fn rust_files(dir: &Path) -> Result<Vec<PathBuf>, String> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).map_err(|e| format!("{}: {e}", dir.display()))? {
            let path = entry.map_err(|e| e.to_string())?.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }
    out.sort();
    Ok(out)
}

fn module_of(src: &Path, file: &Path) -> ModPath {
    let relative = file.strip_prefix(src).unwrap_or(file).with_extension("");
    let mut parts: ModPath = relative.iter().map(|p| p.to_string_lossy().into_owned()).collect();
    if matches!(parts.last().map(String::as_str), Some("mod")) || (parts.len() == 1 && matches!(parts[0].as_str(), "lib" | "main")) {
        parts.pop();
    }
    parts
}

fn children(modules: &BTreeMap<ModPath, PathBuf>, module: &ModPath) -> BTreeSet<String> {
    modules.keys().filter(|m| m.len() == module.len() + 1 && m.starts_with(module)).map(|m| m[module.len()].clone()).collect()
}

/// The module a path ends in: the longest prefix that is a file, or, where
/// the next name was brought into that file by a `use`, wherever that leads.
fn resolve(path: &ModPath, modules: &BTreeMap<ModPath, PathBuf>, names: &BTreeMap<ModPath, Names>, depth: u32) -> Option<ModPath> {
    let longest = (0..=path.len()).rev().find(|n| modules.contains_key(&path[..*n]))?;
    // A name `use`d into the module: follow it (a re-export is not where
    // the item lives). Depth bounds a `use` that names itself.
    if longest < path.len()
        && depth < 16
        && let Some(target) = names.get(&path[..longest]).and_then(|n| n.imports.get(&path[longest]))
    {
        let mut onward = target.clone();
        onward.extend_from_slice(&path[longest + 1..]);
        return resolve(&onward, modules, names, depth + 1);
    }
    Some(path[..longest].to_vec())
}

struct Finder {
    here: ModPath,
    children: BTreeSet<String>,
    names: Names,
}

impl Finder {
    /// A path as written in this file, made absolute; `None` for what is
    /// outside the crate (`std::…`, another crate) or a bare local name.
    fn absolute(&self, segments: &[String]) -> Option<ModPath> {
        let first = segments.first()?;
        let mut out: ModPath;
        let rest: &[String];
        match first.as_str() {
            "crate" => {
                out = Vec::new();
                rest = &segments[1..];
            }
            "self" => {
                out = self.here.clone();
                rest = &segments[1..];
            }
            "super" => {
                out = self.here.clone();
                let mut i = 0;
                while segments.get(i).is_some_and(|s| s == "super") {
                    out.pop();
                    i += 1;
                }
                rest = &segments[i..];
            }
            name if self.children.contains(name) => {
                out = self.here.clone();
                rest = segments;
            }
            _ => return None,
        }
        out.extend(rest.iter().cloned());
        Some(out)
    }

    fn use_tree(&mut self, prefix: &mut Vec<String>, tree: &syn::UseTree) {
        match tree {
            syn::UseTree::Path(p) => {
                prefix.push(p.ident.to_string());
                self.use_tree(prefix, &p.tree);
                prefix.pop();
            }
            syn::UseTree::Name(n) => self.imported(prefix, &n.ident.to_string(), &n.ident.to_string()),
            syn::UseTree::Rename(r) => self.imported(prefix, &r.ident.to_string(), &r.rename.to_string()),
            syn::UseTree::Glob(_) => {
                if let Some(path) = self.absolute(prefix) {
                    self.names.globs.push(path);
                }
            }
            syn::UseTree::Group(g) => {
                for tree in &g.items {
                    self.use_tree(prefix, tree);
                }
            }
        }
    }

    fn imported(&mut self, prefix: &[String], name: &str, alias: &str) {
        let mut written = prefix.to_vec();
        // `use crate::a::{self}` names the module `a` itself.
        if name != "self" {
            written.push(name.to_owned());
        }
        if let Some(path) = self.absolute(&written) {
            let alias = if name == "self" { written.last().cloned().unwrap_or_default() } else { alias.to_owned() };
            self.names.imports.insert(alias, path.clone());
            self.names.paths.push(path);
        }
    }
}

fn cfg_test(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| a.path().is_ident("cfg") && a.meta.require_list().is_ok_and(|l| l.tokens.to_string() == "test"))
}

impl<'ast> Visit<'ast> for Finder {
    fn visit_item_mod(&mut self, item: &'ast syn::ItemMod) {
        if !cfg_test(&item.attrs) {
            syn::visit::visit_item_mod(self, item);
        }
    }

    fn visit_item_fn(&mut self, item: &'ast syn::ItemFn) {
        if !cfg_test(&item.attrs) {
            syn::visit::visit_item_fn(self, item);
        }
    }

    fn visit_item_impl(&mut self, item: &'ast syn::ItemImpl) {
        if !cfg_test(&item.attrs) {
            syn::visit::visit_item_impl(self, item);
        }
    }

    fn visit_item_use(&mut self, item: &'ast syn::ItemUse) {
        if !cfg_test(&item.attrs) {
            self.use_tree(&mut Vec::new(), &item.tree);
        }
    }

    fn visit_path(&mut self, path: &'ast syn::Path) {
        let segments: Vec<String> = path.segments.iter().map(|s| s.ident.to_string()).collect();
        if segments.len() > 1
            && let Some(absolute) = self.absolute(&segments)
        {
            self.names.paths.push(absolute);
        }
        syn::visit::visit_path(self, path);
    }

    fn visit_macro(&mut self, mac: &'ast syn::Macro) {
        // A macro's body is tokens, not paths: `crate::a::b` in it is read
        // as written (view! and format! name modules this way too).
        let tokens: Vec<String> = mac.tokens.clone().into_iter().map(|t| t.to_string()).collect();
        for (i, token) in tokens.iter().enumerate() {
            if matches!(token.as_str(), "crate" | "super") && tokens.get(i + 1).is_some_and(|t| t == ":") {
                let mut segments = vec![token.clone()];
                let mut j = i + 1;
                while tokens.get(j).is_some_and(|t| t == ":") && tokens.get(j + 1).is_some_and(|t| t == ":") {
                    let Some(name) = tokens.get(j + 2) else { break };
                    segments.push(name.clone());
                    j += 3;
                }
                if let Some(absolute) = self.absolute(&segments) {
                    self.names.paths.push(absolute);
                }
            }
        }
        syn::visit::visit_macro(self, mac);
    }
}

/// Tarjan's strongly connected components.
fn strongly_connected(edges: &BTreeMap<ModPath, BTreeSet<ModPath>>) -> Vec<Vec<ModPath>> {
    struct State<'a> {
        edges: &'a BTreeMap<ModPath, BTreeSet<ModPath>>,
        index: BTreeMap<&'a ModPath, usize>,
        low: BTreeMap<&'a ModPath, usize>,
        stack: Vec<&'a ModPath>,
        on_stack: BTreeSet<&'a ModPath>,
        out: Vec<Vec<ModPath>>,
    }
    fn connect<'a>(s: &mut State<'a>, v: &'a ModPath) {
        let n = s.index.len();
        s.index.insert(v, n);
        s.low.insert(v, n);
        s.stack.push(v);
        s.on_stack.insert(v);
        for w in s.edges.get(v).into_iter().flatten() {
            if !s.index.contains_key(w) {
                connect(s, w);
                let low = s.low[v].min(s.low[w]);
                s.low.insert(v, low);
            } else if s.on_stack.contains(w) {
                let low = s.low[v].min(s.index[w]);
                s.low.insert(v, low);
            }
        }
        if s.low[v] == s.index[v] {
            let mut component = Vec::new();
            while let Some(w) = s.stack.pop() {
                s.on_stack.remove(w);
                component.push(w.clone());
                if w == v {
                    break;
                }
            }
            s.out.push(component);
        }
    }
    let mut s = State { edges, index: BTreeMap::new(), low: BTreeMap::new(), stack: Vec::new(), on_stack: BTreeSet::new(), out: Vec::new() };
    for v in edges.keys() {
        if !s.index.contains_key(v) {
            connect(&mut s, v);
        }
    }
    s.out
}

/// `cargo xtask circles [DIR…]`: the circles of each crate's source folder;
/// with no folder named, of every workspace member's.
pub fn run(dirs: &[String]) -> Result<(), String> {
    let root = workspace_root();
    let dirs: Vec<PathBuf> = if dirs.is_empty() { sources(&root)? } else { dirs.iter().map(PathBuf::from).collect() };
    let mut any = false;
    for dir in &dirs {
        let found = circles(dir)?;
        println!("{}: {} circle(s)", dir.strip_prefix(&root).unwrap_or(dir).display(), found.len());
        for circle in &found {
            println!("  {}", circle.join(" ⇄ "));
        }
        any |= !found.is_empty();
    }
    if any { Err("import circles found".into()) } else { Ok(()) }
}

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().map_or_else(|| PathBuf::from("."), Path::to_path_buf)
}

/// The `src/` folder of every member the workspace's manifest lists, in its
/// order: a crate added to the workspace is checked without being named here.
pub fn sources(root: &Path) -> Result<Vec<PathBuf>, String> {
    let manifest = root.join("Cargo.toml");
    let text = std::fs::read_to_string(&manifest).map_err(|e| format!("{}: {e}", manifest.display()))?;
    let members = members(&text).ok_or_else(|| format!("{}: no `members = [...]` in [workspace]", manifest.display()))?;
    let mut out = Vec::new();
    for member in members {
        let src = root.join(&member).join("src");
        if !src.is_dir() {
            return Err(format!("the workspace member {member} has no src/ folder"));
        }
        out.push(src);
    }
    Ok(out)
}

/// The paths of `members = [...]` (the first such array: the
/// `[workspace]` table's; `default-members` is another key).
fn members(manifest: &str) -> Option<Vec<String>> {
    let rest = manifest.lines().skip_while(|l| !l.trim_start().starts_with("members")).collect::<Vec<_>>().join("\n");
    let list = &rest[rest.find('[')? + 1..];
    let list = &list[..list.find(']')?];
    Some(list.split(',').map(|m| m.trim().trim_matches('"').to_owned()).filter(|m| !m.is_empty()).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree(files: &[(&str, &str)]) -> PathBuf {
        crate::scratch::tree("circles", files)
    }

    #[test]
    fn a_circle_through_use_paths_and_macros_is_found() {
        let dir = tree(&[
            ("lib.rs", "mod a; mod b; mod c; mod d; pub use a::A;"),
            ("a.rs", "use crate::b::B; pub struct A;"),
            ("b.rs", "pub struct B; fn f() { let _ = crate::c::C; }"),
            ("c.rs", "pub struct C; fn g() { view! { <crate::a::A/> } }"),
            ("d.rs", "use crate::A; #[cfg(test)] mod tests { use crate::d; }"),
        ]);
        assert_eq!(circles(&dir).unwrap(), vec![vec!["a.rs", "b.rs", "c.rs"]]);
    }

    #[test]
    fn a_child_reading_its_parents_item_is_a_circle_and_a_re_export_leads_to_the_source() {
        let dir = tree(&[
            ("lib.rs", "mod store; mod page;"),
            ("store/mod.rs", "mod rows; pub use rows::Row; pub fn db_error() {}"),
            ("store/rows.rs", "use super::db_error; pub struct Row;"),
            // Reads Row through the re-export: names store/rows.rs, not store/mod.rs.
            ("page.rs", "use crate::store::Row;"),
        ]);
        assert_eq!(circles(&dir).unwrap(), vec![vec!["store/mod.rs", "store/rows.rs"]]);
    }

    #[test]
    fn layers_that_only_point_down_have_no_circle() {
        let dir = tree(&[
            ("lib.rs", "mod data; mod view;"),
            ("data.rs", "pub struct D;"),
            ("view.rs", "use crate::data::D; use super::data; fn f(_: data::D) {}"),
        ]);
        assert!(circles(&dir).unwrap().is_empty());
    }

    #[test]
    fn the_members_are_read_from_the_manifest() {
        let manifest = "[workspace]\nresolver = \"3\"\nmembers = [\"apps/a\",\n  \"crates/b\", \"xtask\"]\ndefault-members = [\"apps/a\"]\n";
        assert_eq!(members(manifest).unwrap(), vec!["apps/a", "crates/b", "xtask"]);
        assert_eq!(members("[package]\nname = \"x\"\n"), None);
    }

    #[test]
    fn no_crate_or_app_has_an_import_circle() {
        let root = workspace_root();
        let sources = sources(&root).unwrap();
        // Every folder under crates/ and apps/, xtask and e2e: all members,
        // none left out.
        for dir in ["crates", "apps"] {
            for entry in std::fs::read_dir(root.join(dir)).unwrap() {
                let path = entry.unwrap().path();
                assert!(sources.contains(&path.join("src")), "{} is not checked (not a workspace member?)", path.display());
            }
        }
        for member in ["xtask", "e2e"] {
            assert!(sources.contains(&root.join(member).join("src")), "{member} is not checked");
        }
        let mut problems = Vec::new();
        for dir in &sources {
            for circle in circles(dir).unwrap() {
                problems.push(format!("{}: {}", dir.strip_prefix(&root).unwrap_or(dir).display(), circle.join(" ⇄ ")));
            }
        }
        assert!(
            problems.is_empty(),
            "import circles (files that name each other, directly or round a loop; the module doc says how to break one):\n  {}",
            problems.join("\n  ")
        );
    }
}
