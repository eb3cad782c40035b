//! Benchmarks: `cargo xtask bench NAME`. Each runs a release build of the
//! `lattice-bench` binary, which prints its figures and `ratio` lines.

use crate::Result;
use crate::postgres;
use crate::shell;

const NAMES: &[&str] = &["write-path", "validator"];

pub fn run(args: &[String]) -> Result {
    let name = args.first().map(String::as_str).ok_or("usage: cargo xtask bench NAME (write-path, validator, all)")?;
    let names: Vec<&str> = match name {
        "all" => NAMES.to_vec(),
        n if NAMES.contains(&n) => vec![n],
        other => return Err(format!("unknown benchmark {other:?}; known: {}, all", NAMES.join(", "))),
    };
    let pg = postgres::Server::start()?;
    for name in names {
        println!("== bench {name}");
        shell::cargo(
            &["run", "--release", "--quiet", "--package", "lattice-bench", "--", name],
            &[("LATTICE_BENCH_POSTGRES_URL", pg.url.as_str())],
        )?;
    }
    Ok(())
}
