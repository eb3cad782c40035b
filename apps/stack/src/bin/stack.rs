//! `just up` / `just down` (through `cargo xtask stack`): the local stack
//! with real PostgreSQL and NATS, each lattice service its own process.
//! `up` stays in the foreground, as `cargo up` does: Ctrl-C (or SIGTERM, or
//! `just down` from another terminal) stops everything it started.
//! Data under LATTICE_STACK_DIR (default `data/stack`), ports from
//! LATTICE_STACK_PORTS (default `8080,8081,8090,8091,8092,5433,4223`:
//! portal, apps, log, mcp, bridge, postgres, nats).

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use lattice_stack::{self as stack, Mode, Ports, Stack};

static STOP: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(_: libc::c_int) {
    STOP.store(true, Ordering::SeqCst);
}

fn main() -> ExitCode {
    let dir = PathBuf::from(std::env::var("LATTICE_STACK_DIR").unwrap_or_else(|_| "data/stack".into()));
    let ports = match std::env::var("LATTICE_STACK_PORTS") {
        Ok(text) => match Ports::parse(&text) {
            Ok(ports) => ports,
            Err(e) => return fail(&e),
        },
        Err(_) => Ports::STANDARD,
    };
    match std::env::args().nth(1).as_deref() {
        Some("up") => {
            for signal in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
                // SAFETY: the handler only stores to an atomic.
                unsafe { libc::signal(signal, on_signal as *const () as libc::sighandler_t) };
            }
            let mut stack = match Stack::start(&dir, ports, Mode::Local) {
                Ok(stack) => stack,
                Err(e) => return fail(&e),
            };
            // `just down` from another terminal asks this process to stop it all.
            let me = dir.join("run").join("stack.pid");
            if let Err(e) = std::fs::write(&me, std::process::id().to_string()) {
                return fail(&format!("writing {}: {e}", me.display()));
            }
            println!("lattice is up (PostgreSQL, NATS, and lattice serve log, bridge, mcp, edge):\n{}", stack.urls());
            println!("sign in at {}/ with the demo (tenant demo, user demo); Ctrl-C or `just down` stops it all", stack.portal);
            let ended = loop {
                if STOP.load(Ordering::SeqCst) {
                    break None;
                }
                if let Some(name) = stack.exited() {
                    break Some(name);
                }
                std::thread::sleep(Duration::from_millis(200));
            };
            // Dropping it stops whatever still runs, PostgreSQL last.
            drop(stack);
            let _ = std::fs::remove_file(&me);
            match ended {
                None => {
                    println!("lattice stopped");
                    ExitCode::SUCCESS
                }
                Some(name) => fail(&format!("{name} ended on its own (see {}/logs/{name}.log); the rest is stopped", dir.display())),
            }
        }
        Some("down") => {
            let running = stack::started(&dir);
            // A `just up` still in the foreground stops it all itself.
            let me = dir.join("run").join("stack.pid");
            if let Some(pid) = std::fs::read_to_string(&me).ok().and_then(|t| t.trim().parse::<i32>().ok()).filter(|p| stack::alive(*p)) {
                // SAFETY: a signal to a pid this stack recorded; alive just now.
                unsafe { libc::kill(pid, libc::SIGTERM) };
                let deadline = std::time::Instant::now() + Duration::from_secs(60);
                while stack::alive(pid) && std::time::Instant::now() < deadline {
                    std::thread::sleep(Duration::from_millis(50));
                }
                let _ = std::fs::remove_file(&me);
            }
            // Whatever is left (a `just up` that was killed outright).
            if let Err(e) = stack::stop(&dir) {
                return fail(&e);
            }
            let left = stack::taken(&ports);
            if running.is_empty() {
                println!("nothing of a stack was running under {}", dir.display());
            } else {
                println!("stopped {}", running.join(", "));
            }
            if left.is_empty() { ExitCode::SUCCESS } else { fail(&format!("still listening: {left:?}")) }
        }
        _ => fail("usage: stack up | stack down"),
    }
}

fn fail(why: &str) -> ExitCode {
    eprintln!("stack: {why}");
    ExitCode::FAILURE
}
