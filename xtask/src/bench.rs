//! Benchmarks: `cargo xtask bench NAME`. Each runs a release build of the
//! `lattice-bench` binary, which prints its figures and `ratio` lines.

use crate::Result;
use crate::postgres;
use crate::shell;

const NAMES: &[&str] = &["write-path", "validator", "bridge", "web", "edge", "fanout"];

pub fn run(args: &[String]) -> Result {
    let name = args.first().map(String::as_str).ok_or("usage: cargo xtask bench NAME (write-path, validator, bridge, web, edge, fanout, all)")?;
    let names: Vec<&str> = match name {
        "all" => NAMES.to_vec(),
        n if NAMES.contains(&n) => vec![n],
        other => return Err(format!("unknown benchmark {other:?}; known: {}, all", NAMES.join(", "))),
    };
    let pg = postgres::Server::start()?;
    if !std::path::Path::new("/usr/sbin/nats-server").exists() && std::env::var_os("LATTICE_NATS_SERVER").is_none() {
        shell::apt_install(&["nats-server"])?;
    }
    for name in names {
        println!("== bench {name}");
        if name == "web" {
            // The chat host in Chromium: the release's wasm, the test build
            // of the server and the harness.
            crate::web::build()?;
            crate::web::browser_tools()?;
            shell::cargo(&["build", "--package", "lattice"], &[])?;
            shell::cargo(&["run", "--quiet", "--package", "lattice-e2e", "--bin", "bench-web"], &[])?;
            continue;
        }
        shell::cargo(
            &["run", "--release", "--quiet", "--package", "lattice-bench", "--", name],
            &[("LATTICE_BENCH_POSTGRES_URL", pg.url.as_str())],
        )?;
    }
    Ok(())
}
