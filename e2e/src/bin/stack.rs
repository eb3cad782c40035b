//! `just up` / `just down` (through `cargo xtask stack`): the local stack
//! with real PostgreSQL and NATS, each lattice service its own process.
//! Data under LATTICE_STACK_DIR (default `data/stack`), ports from
//! LATTICE_STACK_PORTS (default `8080,8081,8090,8091,8092,5433,4223`:
//! portal, apps, log, mcp, bridge, postgres, nats).

use std::path::PathBuf;
use std::process::ExitCode;

use lattice_e2e::stack::{self, Ports, Stack};

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
        Some("up") => match Stack::start(&dir, ports, true) {
            Ok(stack) => {
                println!("lattice is up (PostgreSQL, NATS, and lattice serve log, bridge, mcp, edge):\n{}", stack.urls());
                println!("sign in at {}/ with the demo (tenant demo, user demo); `just down` stops it all", stack.portal);
                ExitCode::SUCCESS
            }
            Err(e) => fail(&e),
        },
        Some("down") => match stack::stop(&dir) {
            Ok(stopped) => {
                let left = stack::taken(&ports);
                if stopped.is_empty() {
                    println!("nothing of a stack was running under {}", dir.display());
                } else {
                    println!("stopped {}", stopped.join(", "));
                }
                if left.is_empty() {
                    ExitCode::SUCCESS
                } else {
                    fail(&format!("still listening: {left:?}"))
                }
            }
            Err(e) => fail(&e),
        },
        _ => fail("usage: stack up | stack down"),
    }
}

fn fail(why: &str) -> ExitCode {
    eprintln!("stack: {why}");
    ExitCode::FAILURE
}
