//! A tree of files written for one test, under the system's temporary
//! folder: the checks that read the workspace (circles, docs) are tested
//! on small trees made to hold what they look for.

use std::path::PathBuf;
use std::sync::atomic::{AtomicU32, Ordering};

/// A fresh folder named for `check` holding `files`, each `(path, text)`.
pub fn tree(check: &str, files: &[(&str, &str)]) -> PathBuf {
    static NEXT: AtomicU32 = AtomicU32::new(0);
    let n = NEXT.fetch_add(1, Ordering::SeqCst);
    let dir = std::env::temp_dir().join(format!("lattice-{check}-{}-{n}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    for (path, text) in files {
        let path = dir.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    dir
}
