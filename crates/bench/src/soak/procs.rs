//! Each process's memory and open descriptors, from /proc. PostgreSQL is
//! its postmaster and the backends under it, together: their private
//! memory (`RssAnon`) summed and the shared buffers once (the largest
//! `RssShmem`), since every backend maps the same buffers; descriptors
//! summed.

use std::path::Path;

#[derive(Debug, Clone, Copy, Default)]
pub struct Sample {
    pub rss_kib: u64,
    pub fds: u64,
}

pub fn sample(name: &str, pid: u32) -> Option<Sample> {
    if name != "postgres" {
        return Some(Sample { rss_kib: status_kib(pid, "VmRSS")?, fds: fds(pid)? });
    }
    let mut pids = vec![pid];
    pids.extend(children(pid));
    let (mut anon, mut shmem, mut fds_total) = (0, 0, 0);
    for pid in pids {
        anon += status_kib(pid, "RssAnon").unwrap_or(0);
        shmem = shmem.max(status_kib(pid, "RssShmem").unwrap_or(0));
        fds_total += fds(pid).unwrap_or(0);
    }
    (anon > 0).then_some(Sample { rss_kib: anon + shmem, fds: fds_total })
}

/// A `Name:   1234 kB` line of /proc/PID/status.
fn status_kib(pid: u32, field: &str) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status.lines().find_map(|l| l.strip_prefix(field)?.strip_prefix(':')?.trim().strip_suffix("kB")?.trim().parse().ok())
}

fn fds(pid: u32) -> Option<u64> {
    Some(std::fs::read_dir(format!("/proc/{pid}/fd")).ok()?.count() as u64)
}

/// The processes whose parent is `pid`.
fn children(pid: u32) -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir("/proc") else { return Vec::new() };
    entries
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|child| parent(Path::new(&format!("/proc/{child}/stat"))) == Some(pid))
        .collect()
}

/// The fourth field of /proc/PID/stat, after the command's parentheses.
fn parent(stat: &Path) -> Option<u32> {
    let text = std::fs::read_to_string(stat).ok()?;
    text.rsplit_once(')')?.1.split_whitespace().nth(1)?.parse().ok()
}
