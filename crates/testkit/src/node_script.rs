//! A counterpart the tests run as a Node.js script of `e2e/` (the OpenID
//! provider, the OAuth-protected MCP server): started on a configuration
//! file, ready once it prints `ready <address>`, its output kept for
//! whoever reads a failure.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, AsyncRead, BufReader};

/// The repository's root, where `e2e/` is.
pub(crate) fn repository() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// A started script: the process, what it said, and the address it
/// printed when ready.
pub(crate) struct Started {
    pub child: tokio::process::Child,
    pub log: Arc<Mutex<String>>,
    pub address: String,
}

/// Starts `node <script> <config>` and waits up to 30 s for its `ready`
/// line; panics with its log, naming `what` and `hint`, if none comes.
/// Its stdin stays open while the child lives: the script exits when it
/// closes, so it never outlives a test process that died.
pub(crate) async fn start(script: &str, config: &Path, what: &str, hint: &str) -> Started {
    let root = repository();
    let mut child = tokio::process::Command::new("node")
        .arg(root.join(script))
        .arg(config)
        .current_dir(&root)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap_or_else(|e| panic!("starting node {script} (is Node.js 20 or newer installed?): {e}"));
    let log = Arc::new(Mutex::new(String::new()));
    keep_log(child.stderr.take().expect("piped stderr"), log.clone());
    let mut stdout = BufReader::new(child.stdout.take().expect("piped stdout")).lines();
    let ready = tokio::time::timeout(Duration::from_secs(30), async {
        while let Ok(Some(line)) = stdout.next_line().await {
            if let Some(address) = line.strip_prefix("ready ") {
                return Some(address.to_owned());
            }
            append(&log, &line);
        }
        None
    })
    .await;
    let Ok(Some(address)) = ready else {
        let _ = child.start_kill();
        tokio::time::sleep(Duration::from_millis(200)).await;
        let _ = std::fs::remove_file(config);
        panic!("{what} did not start ({hint}); its log:\n{}", lock(&log));
    };
    keep_log(stdout.into_inner().into_inner(), log.clone());
    Started { child, log, address }
}

fn keep_log(stream: impl AsyncRead + Unpin + Send + 'static, log: Arc<Mutex<String>>) {
    tokio::spawn(async move {
        let mut lines = BufReader::new(stream).lines();
        while let Ok(Some(line)) = lines.next_line().await {
            append(&log, &line);
        }
    });
}

fn append(log: &Mutex<String>, line: &str) {
    let mut log = lock(log);
    log.push_str(line);
    log.push('\n');
}

/// What the script has said so far.
pub(crate) fn lock(log: &Mutex<String>) -> std::sync::MutexGuard<'_, String> {
    log.lock().unwrap_or_else(PoisonError::into_inner)
}
