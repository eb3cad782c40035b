//! A stdio server's process (R7): started with nothing of lattice's. Its
//! environment is empty but for what its configuration names and a few
//! variables of its own (`PATH`, `HOME`, `TMPDIR`, `LANG`); it runs in a
//! folder of its own, which is also its home; no descriptor of lattice's
//! reaches it; its limits are set before it runs; it leads a process group
//! of its own, so that everything it started ends with it; its stderr goes
//! to the service's log, bounded and rate-limited, under its name.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, ChildStdin, ChildStdout};

use crate::config::ProcessLimits;
use crate::error::CallError;

/// The `PATH` a server gets: the system's programs, nothing of lattice's.
const PATH: &str = "/usr/local/bin:/usr/bin:/bin";
/// A line of a server's stderr is cut to this many bytes.
const LINE_MAX: usize = 2048;
/// Lines of stderr logged per second, per process; the rest are counted.
const LINES_PER_SECOND: u32 = 20;
/// How often a server's folder and processes are counted.
const DISK_EVERY: Duration = Duration::from_secs(2);

/// A running server: its pipes, and the process (its group killed when
/// this is dropped).
pub struct Process {
    pub stdin: ChildStdin,
    pub stdout: ChildStdout,
    pub guard: ProcessGuard,
}

/// Kills the server's whole process group when the session holding it
/// ends, and stops watching it.
pub struct ProcessGuard {
    pid: Option<i32>,
    watch: tokio::task::JoinHandle<()>,
}

impl Drop for ProcessGuard {
    fn drop(&mut self) {
        self.watch.abort();
        if let Some(pid) = self.pid {
            // SAFETY: a signal to the group this process leads (setsid).
            unsafe {
                libc::kill(-pid, libc::SIGKILL);
            }
        }
    }
}

/// Where a server's folder is, for one session: `homes/<server>/<owner>`.
pub fn home_of(homes: &Path, server: &str, owner: &str) -> PathBuf {
    let safe: String = owner.chars().map(|c| if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') { c } else { '_' }).collect();
    homes.join(server).join(safe)
}

/// Starts `command` for `server`, with `env` (already read) and `limits`,
/// in `home` (made if missing, readable by its owner only).
pub fn spawn(server: &str, command: &[String], env: &BTreeMap<String, String>, limits: &ProcessLimits, home: &Path) -> Result<Process, CallError> {
    let (program, args) = command.split_first().ok_or_else(|| CallError::Unreachable("no command".into()))?;
    let program = resolve(program)?;
    let tmp = home.join("tmp");
    std::fs::create_dir_all(&tmp).map_err(|e| CallError::Unreachable(format!("cannot make the server's folder: {e}")))?;
    restrict(home);
    let mut cmd = tokio::process::Command::new(&program);
    cmd.args(args)
        .env_clear()
        .env("PATH", PATH)
        .env("HOME", home)
        .env("TMPDIR", &tmp)
        .env("LANG", "C.UTF-8")
        .envs(env)
        .current_dir(home)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true);
    let limits = limits.clone();
    // SAFETY: between fork and exec only async-signal-safe calls are made
    // (setsid, setrlimit, close_range), on values computed before the fork.
    unsafe {
        cmd.pre_exec(move || {
            libc::setsid();
            for (resource, value) in [
                // The memory it writes, not its address space: V8 and the JVM reserve
                // many GiB they never touch (Node's fetch dies under a 4 GiB
                // address-space limit), and only what is written costs the host.
                (libc::RLIMIT_DATA, limits.memory_mb.saturating_mul(1024 * 1024)),
                (libc::RLIMIT_NPROC, limits.processes),
                (libc::RLIMIT_NOFILE, limits.open_files),
                (libc::RLIMIT_CPU, limits.cpu_secs),
                (libc::RLIMIT_FSIZE, limits.disk_mb.saturating_mul(1024 * 1024)),
                (libc::RLIMIT_CORE, 0),
            ] {
                let limit = libc::rlimit { rlim_cur: value as libc::rlim_t, rlim_max: value as libc::rlim_t };
                if libc::setrlimit(resource, &limit) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
            }
            // Every descriptor but the three pipes: nothing of lattice's
            // (a database socket, a listener) is the server's to hold.
            libc::syscall(libc::SYS_close_range, 3u32, u32::MAX, 0u32);
            Ok(())
        });
    }
    let mut child = cmd.spawn().map_err(|e| CallError::Unreachable(format!("cannot start {}: {e}", program.display())))?;
    let (Some(stdin), Some(stdout), Some(stderr)) = (child.stdin.take(), child.stdout.take(), child.stderr.take()) else {
        return Err(CallError::Unreachable("the program's pipes were not made".into()));
    };
    let pid = child.id().map(|p| p as i32);
    let bounds = Bounds { disk: limits.disk_mb.saturating_mul(1024 * 1024), processes: limits.processes };
    let watch = tokio::spawn(watch(server.to_owned(), child, stderr, home.to_owned(), bounds));
    Ok(Process { stdin, stdout, guard: ProcessGuard { pid, watch } })
}

/// The program's path: as given when it has a slash, else found on the
/// server's `PATH` (lattice's own is not looked at).
fn resolve(program: &str) -> Result<PathBuf, CallError> {
    if program.contains('/') {
        return Ok(PathBuf::from(program));
    }
    PATH.split(':')
        .map(|dir| Path::new(dir).join(program))
        .find(|candidate| candidate.is_file())
        .ok_or_else(|| CallError::Unreachable(format!("{program} is not in {PATH}: give its full path")))
}

#[cfg(unix)]
fn restrict(home: &Path) {
    use std::os::unix::fs::PermissionsExt;
    let _ = std::fs::set_permissions(home, std::fs::Permissions::from_mode(0o700));
}

/// What the watch holds a server to, besides the limits the kernel keeps.
struct Bounds {
    disk: u64,
    processes: u64,
}

/// Relays the server's stderr to the log and keeps its folder and its
/// processes within their bounds, until the process ends; over either, its
/// whole group is killed. The processes are counted here too because
/// `RLIMIT_NPROC` does not bind a lattice that runs as root: a fork bomb is
/// then ended at the next count.
async fn watch(server: String, mut child: Child, stderr: tokio::process::ChildStderr, home: PathBuf, bounds: Bounds) {
    let leader = child.id().map(|p| p as i32);
    let mut lines = BufReader::new(stderr);
    let mut line = Vec::new();
    let (mut window, mut said, mut dropped) = (Instant::now(), 0u32, 0u64);
    let mut disk = tokio::time::interval(DISK_EVERY);
    loop {
        tokio::select! {
            read = read_line(&mut lines, &mut line) => {
                if !read {
                    break;
                }
                if window.elapsed() >= Duration::from_secs(1) {
                    if dropped > 0 {
                        tracing::info!(target: "lattice::mcp_server", server = %server, dropped, "stderr lines dropped (over {LINES_PER_SECOND} a second)");
                    }
                    (window, said, dropped) = (Instant::now(), 0, 0);
                }
                if said < LINES_PER_SECOND {
                    said += 1;
                    let text = String::from_utf8_lossy(&line);
                    tracing::info!(target: "lattice::mcp_server", server = %server, "{}", text.trim_end());
                } else {
                    dropped += 1;
                }
            }
            _ = disk.tick() => {
                let used = folder_size(&home).await;
                let running = match leader {
                    Some(leader) => group_size(leader).await,
                    None => 0,
                };
                let over = if used > bounds.disk {
                    tracing::warn!(server = %server, used, limit = bounds.disk, "a connected server filled its folder past its bound: it is stopped");
                    true
                } else if running > bounds.processes {
                    tracing::warn!(server = %server, running, limit = bounds.processes, "a connected server ran more processes than its bound: it is stopped");
                    true
                } else {
                    false
                };
                if over {
                    if let Some(leader) = leader {
                        // SAFETY: a signal to the group this process leads (setsid).
                        unsafe {
                            libc::kill(-leader, libc::SIGKILL);
                        }
                    }
                    let _ = child.start_kill();
                }
            }
        }
    }
    let _ = child.wait().await;
}

/// Reads one line of at most [`LINE_MAX`] bytes (the rest of a longer one
/// is read and dropped); false at the end.
async fn read_line(reader: &mut BufReader<tokio::process::ChildStderr>, line: &mut Vec<u8>) -> bool {
    line.clear();
    loop {
        let available = match reader.fill_buf().await {
            Ok([]) | Err(_) => return !line.is_empty(),
            Ok(bytes) => bytes,
        };
        let (taken, end) = match available.iter().position(|b| *b == b'\n') {
            Some(i) => (i + 1, true),
            None => (available.len(), false),
        };
        let room = LINE_MAX.saturating_sub(line.len());
        line.extend_from_slice(&available[..taken.min(room)]);
        reader.consume(taken);
        if end {
            return true;
        }
    }
}

/// The processes in the session `leader` began (setsid: its group and
/// session ids are its pid), from `/proc`.
async fn group_size(leader: i32) -> u64 {
    tokio::task::spawn_blocking(move || {
        let Ok(entries) = std::fs::read_dir("/proc") else { return 0 };
        let mut count = 0u64;
        for entry in entries.flatten() {
            let name = entry.file_name();
            if !name.to_str().is_some_and(|n| n.bytes().all(|b| b.is_ascii_digit())) {
                continue;
            }
            let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else { continue };
            // `pid (comm) state ppid pgrp session …`; comm may hold anything but
            // ends at the last parenthesis.
            let Some((_, rest)) = stat.rsplit_once(')') else { continue };
            let fields: Vec<&str> = rest.split_whitespace().take(4).collect();
            let ids = |i: usize| fields.get(i).and_then(|f| f.parse::<i32>().ok());
            if fields.first() != Some(&"Z") && (ids(2) == Some(leader) || ids(3) == Some(leader)) {
                count += 1;
            }
        }
        count
    })
    .await
    .unwrap_or(0)
}

/// The bytes under `dir`, counted without following links (at most a
/// bounded number of entries: past them, the count so far).
async fn folder_size(dir: &Path) -> u64 {
    let dir = dir.to_owned();
    tokio::task::spawn_blocking(move || {
        let (mut total, mut seen, mut stack) = (0u64, 0usize, vec![dir]);
        while let Some(dir) = stack.pop() {
            let Ok(entries) = std::fs::read_dir(&dir) else { continue };
            for entry in entries.flatten() {
                seen += 1;
                if seen > 100_000 {
                    return u64::MAX;
                }
                let Ok(meta) = entry.path().symlink_metadata() else { continue };
                if meta.is_dir() {
                    stack.push(entry.path());
                } else {
                    total = total.saturating_add(meta.len());
                }
            }
        }
        total
    })
    .await
    .unwrap_or(0)
}
