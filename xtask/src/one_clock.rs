//! One clock (issue 64): nothing outside `crates/core/src/clock.rs` reads
//! the wall clock. Whatever stamps or compares a time asks the service's
//! `SharedClock` (`LogService::clock`), so a test moves time with a
//! `ManualClock` instead of sleeping. Measuring a duration with the
//! monotonic `Instant` is not reading the wall, and stays free.
//!
//! The scan reads every `.rs` file under crates/, apps/, xtask/ and e2e/ as
//! text, comment lines left out, and names each line that reads the wall.

use std::path::{Path, PathBuf};

/// Where the wall clock may be read: the clock module itself.
const THE_CLOCK: &str = "crates/core/src/clock.rs";

/// Folders whose files run somewhere the service's clock is not, each with
/// why it may read the clock it runs by.
const ELSEWHERE: &[(&str, &str)] =
    &[("apps/web/src/", "the front end runs in the browser, whose clock is the only one it has (it renders times the server stamped)")];

/// The reads of the wall clock, spelt in two halves so this file names
/// none itself.
fn reads() -> Vec<String> {
    [
        ("SystemTime", "::now"),
        ("Utc", "::now"),
        ("OffsetDateTime", "::now_utc"),
        ("OffsetDateTime", "::now_local"),
        ("Local", "::now"),
        ("UNIX", "_EPOCH"),
        ("Date", "::now"),
    ]
    .iter()
    .map(|(a, b)| format!("{a}{b}"))
    .collect()
}

/// Every line under `root`'s crates/, apps/, xtask/ and e2e/ that reads the
/// wall clock outside [`THE_CLOCK`]: `file:line: text`.
pub fn wall_clock_reads(root: &Path) -> Vec<String> {
    let mut files = Vec::new();
    for top in ["crates", "apps", "xtask", "e2e"] {
        rust_files(&root.join(top), &mut files);
    }
    files.sort();
    let reads = reads();
    let mut found = Vec::new();
    for file in files {
        let rel = file.strip_prefix(root).unwrap_or(&file).to_string_lossy().replace('\\', "/");
        if rel == THE_CLOCK || ELSEWHERE.iter().any(|(dir, _)| rel.starts_with(dir)) {
            continue;
        }
        let Ok(text) = std::fs::read_to_string(&file) else { continue };
        for (n, line) in text.lines().enumerate() {
            let code = line.trim_start();
            if code.starts_with("//") {
                continue;
            }
            if reads.iter().any(|r| code.contains(r.as_str())) {
                found.push(format!("{rel}:{}: {}", n + 1, code.trim_end()));
            }
        }
    }
    found
}

fn rust_files(dir: &Path, found: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name();
        if path.is_dir() {
            if name != "target" && name != "node_modules" && !name.to_string_lossy().starts_with('.') {
                rust_files(&path, found);
            }
        } else if path.extension().is_some_and(|e| e == "rs") {
            found.push(path);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn root() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("xtask sits in the workspace").to_path_buf()
    }

    #[test]
    fn nothing_outside_the_clock_module_reads_the_wall_clock() {
        let found = wall_clock_reads(&root());
        assert!(
            found.is_empty(),
            "the wall clock read outside {THE_CLOCK} (ask the service's clock, `LogService::clock()`, or take a `SharedClock`):\n{}",
            found.join("\n")
        );
    }

    #[test]
    fn a_planted_read_is_caught_and_the_clock_module_is_not() {
        let tree = std::env::temp_dir().join(format!("lattice-one-clock-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&tree);
        let write = |path: &str, text: String| {
            let path = tree.join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        };
        let wall = format!("{}{}", "SystemTime", "::now()");
        write("crates/core/src/clock.rs", format!("fn now() {{ {wall}; }}\n"));
        write("crates/agent/src/act.rs", format!("fn stamp() {{\n    let at = {wall};\n}}\n"));
        write("crates/agent/src/said.rs", format!("// {wall} would be wrong here\nfn f() {{}}\n"));
        write("crates/agent/target/debug/build.rs", format!("fn f() {{ {wall}; }}\n"));
        write("e2e/node_modules/x/y.rs", format!("fn f() {{ {wall}; }}\n"));
        write("apps/stack/src/lib.rs", format!("fn f() {{ {}{}; }}\n", "chrono::Utc", "::now()"));
        let found = wall_clock_reads(&tree);
        std::fs::remove_dir_all(&tree).ok();
        assert_eq!(
            found,
            [format!("apps/stack/src/lib.rs:1: fn f() {{ chrono::Utc{}(); }}", "::now"), format!("crates/agent/src/act.rs:2: let at = {wall};")]
        );
    }
}
