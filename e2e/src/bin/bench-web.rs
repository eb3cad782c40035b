//! `cargo xtask bench web`: what the chat host costs a person.
//!
//! - The bytes of everything the first load fetches (the page, its
//!   style, its scripts, its WebAssembly), read from the running server as
//!   a browser asks for them: brotli (what Chromium takes) and gzip. The
//!   chunks fetched when a page first shows the console, a form, a
//!   dashboard or an app are listed apart.
//! - The time from navigation to an interactive form (the demo's paused
//!   ask_form, focused and ready for keys) in headless Chromium, each time
//!   in a fresh browser context (a cold cache).
//! - Beside that time, the CPU time it took (renderers' main threads, and
//!   every Chromium process) and the share of the machine's CPU its host
//!   took for itself meanwhile: on two cores a navigation's wall time is
//!   what Chromium's processes, the server and the host leave of them.

use std::time::Duration;

use lattice_e2e::browser::Chrome;
use lattice_e2e::{Client, UpProcess};
use playwright_rs::protocol::BrowserContextOptions;
use serde_json::{Value, json};

const RUNS: usize = 30;
const FIELD: &str = "req-call_ask_form_1-date";

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let up = UpProcess::start().await;
    let (gzip_kib, files) = first_load_kib(&up.base).await;
    let mut br_bytes = 0;
    for (path, bytes) in &files {
        let br = brotli_size(&up.base, path).await;
        br_bytes += br;
        println!("web first-load {path} {bytes} bytes gzip, {br} bytes brotli");
    }
    let kib = br_bytes as f64 / 1024.0;
    let chunks = on_demand(&up.base, &files).await;
    for (path, bytes) in &chunks {
        println!("web on-demand {path} {bytes} bytes brotli");
    }
    // A thread's page asks for the forms' chunk (and what chunks share) as
    // it boots, beside the first load.
    let at_boot: usize = chunks.iter().filter(|(p, _)| p.starts_with("/assets/form_view-") || p.starts_with("/assets/shared-")).map(|(_, b)| b).sum();

    let demo = Client::sign_in_as(&up.base, json!({"tenant": "demo", "user": "demo", "role": "tenant_admin"})).await;
    let ws = demo.ok("GET", "/v1/workspaces", Value::Null).await[0]["id"].as_str().unwrap().to_owned();
    let th = demo.ok("GET", &format!("/v1/workspaces/{ws}/threads"), Value::Null).await[0]["id"].as_str().unwrap().to_owned();
    // The demo's run pauses on its form a moment after start.
    for _ in 0..200 {
        if demo.all_events(&th).await.iter().any(|e| e["type"] == "run_paused") {
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }

    let chrome = Chrome::launch().await;
    // When the form's first field has the focus, the form takes keys. The
    // page notes the moment and settles a promise the harness waits on:
    // asking the page again and again would spend the very main thread
    // being measured.
    let watch = format!(
        "window.__ready = new Promise((settle) => {{ const seen = () => {{ const f = document.getElementById('{FIELD}'); \
         if (f && document.activeElement === f) settle(performance.now()); }}; \
         new MutationObserver(seen).observe(document, {{ subtree: true, childList: true, attributes: true }}); \
         document.addEventListener('focusin', seen, true); }});"
    );
    let mut times = Vec::new();
    let mut steadiness = Vec::new();
    let (mut page_cpu, mut chromium_cpu) = (Vec::new(), Vec::new());
    let machine_before = cpu::Machine::read();
    for _ in 0..RUNS {
        let context = chrome.browser.new_context_with_options(BrowserContextOptions::builder().color_scheme("light".into()).build()).await.unwrap();
        context.add_init_script(&watch).await.unwrap();
        let page = context.new_page().await.unwrap();
        let before = cpu::Threads::read();
        page.goto(&format!("{}/t/{th}#token={}", up.base, demo.token), None).await.unwrap();
        let ready = tokio::time::timeout(Duration::from_secs(5), page.evaluate::<(), f64>("() => window.__ready", None)).await;
        times.push(ready.expect("the form became interactive within 5 s").unwrap());
        if let (Some(before), Some(after)) = (&before, cpu::Threads::read()) {
            let (page, all) = after.used_since(before);
            page_cpu.push(page);
            chromium_cpu.push(all);
        }
        context.close().await.unwrap();
        steadiness.push(fixed_work_ms());
    }
    let steal = machine_before.zip(cpu::Machine::read()).map(|(before, after)| after.stolen_since(&before));
    times.sort_by(f64::total_cmp);
    steadiness.sort_by(f64::total_cmp);
    let at = |q: f64| times[((times.len() as f64 - 1.0) * q).round() as usize];
    println!(
        "web navigation-to-interactive-form runs={RUNS} min {:.0} ms, p50 {:.0} ms, p90 {:.0} ms, max {:.0} ms",
        times[0],
        at(0.5),
        at(0.9),
        times[times.len() - 1]
    );
    println!(
        "web machine: the same fixed work after each navigation took min {:.1} ms, p50 {:.1} ms, max {:.1} ms (how steady the machine was)",
        steadiness[0],
        steadiness[steadiness.len() / 2],
        steadiness[steadiness.len() - 1]
    );
    if !page_cpu.is_empty() {
        page_cpu.sort_by(f64::total_cmp);
        chromium_cpu.sort_by(f64::total_cmp);
        let (page, all) = (page_cpu[page_cpu.len() / 2], chromium_cpu[chromium_cpu.len() / 2]);
        println!(
            "web cpu: a navigation took p50 {page:.0} ms of CPU on renderers' main threads (the page's, its app's) and {all:.0} ms in all of Chromium's processes ({} cores here)",
            cpu::cores()
        );
    }
    if let Some(steal) = steal {
        println!("web machine: the host took {:.1}% of this machine's CPU time while the navigations ran (steal)", steal * 100.0);
    }
    println!("size_kib_gzip {gzip_kib:.1} first load of the chat host, gzip (a browser without brotli)");
    println!("size_kib {kib:.1} first load of the chat host, brotli as Chromium takes it (goal <= 250)");
    println!(
        "web thread-page boot {:.1} KiB brotli: the first load and the forms' chunk a thread's page fetches beside it",
        (br_bytes + at_boot) as f64 / 1024.0
    );
    println!("p50_ms {:.0} navigation to an interactive form, cold cache (goal < 500)", at(0.5));
    println!("p99_ms {:.0} navigation to an interactive form, cold cache (goal < 500)", at(0.99));
}

/// The time one thread takes for the same arithmetic (about 35 ms on a
/// quiet core here, as this harness is built): beside the navigations, it
/// tells a slow page from a slow machine.
fn fixed_work_ms() -> f64 {
    let start = std::time::Instant::now();
    let mut x: u32 = 0;
    for i in 0..std::hint::black_box(3_000_000u32) {
        x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(i));
    }
    std::hint::black_box(x);
    start.elapsed().as_secs_f64() * 1000.0
}

/// Fetches `/` and what it loads, as a browser would (gzip accepted), and
/// adds up the bytes sent.
async fn first_load_kib(base: &str) -> (f64, Vec<(String, usize)>) {
    let http = lattice_e2e::http();
    let get = |path: String| {
        let http = http.clone();
        let url = format!("{base}{path}");
        async move {
            let r = http.get(&url).header("accept-encoding", "gzip").send().await.unwrap();
            assert!(r.status().is_success(), "{url}: {}", r.status());
            assert_eq!(
                r.headers().get("content-encoding").map(|v| v.to_str().unwrap().to_owned()).as_deref(),
                Some("gzip"),
                "{url} is sent compressed"
            );
            r.bytes().await.unwrap().to_vec()
        }
    };
    let index = get("/".into()).await;
    let html = gunzip(&index);
    let mut files = vec![("/".to_owned(), index.len())];
    let mut queue: Vec<String> = assets_named(&html);
    while let Some(path) = queue.pop() {
        if files.iter().any(|(p, _)| *p == path) {
            continue;
        }
        let body = get(path.clone()).await;
        if path.ends_with(".js") {
            queue.extend(assets_named(&gunzip(&body)));
        }
        files.push((path, body.len()));
    }
    let total: usize = files.iter().map(|(_, b)| b).sum();
    (total as f64 / 1024.0, files)
}

/// The chunks the split loader fetches when first needed, with their
/// brotli sizes.
async fn on_demand(base: &str, first_load: &[(String, usize)]) -> Vec<(String, usize)> {
    let mut out = Vec::new();
    for (path, _) in first_load.iter().filter(|(p, _)| p.starts_with("/assets/split-")) {
        let loader = lattice_e2e::http().get(format!("{base}{path}")).send().await.unwrap().text().await.unwrap();
        for piece in loader.split('"') {
            if let Some(name) = piece.strip_prefix("./").filter(|n| (n.ends_with(".wasm") || n.ends_with(".bin")) && !n.contains('/')) {
                let chunk = format!("/assets/{name}");
                let size = brotli_size(base, &chunk).await;
                out.push((chunk, size));
            }
        }
    }
    out
}

/// The bytes of `path` sent to a browser that takes brotli.
async fn brotli_size(base: &str, path: &str) -> usize {
    let r = lattice_e2e::http().get(format!("{base}{path}")).header("accept-encoding", "br, gzip").send().await.unwrap();
    assert_eq!(r.headers().get("content-encoding").map(|v| v.to_str().unwrap().to_owned()).as_deref(), Some("br"), "{path} is sent as brotli");
    r.bytes().await.unwrap().len()
}

fn gunzip(bytes: &[u8]) -> String {
    use std::io::Read;
    let mut out = String::new();
    flate2::read::GzDecoder::new(bytes).read_to_string(&mut out).expect("gzip text");
    out
}

/// `/assets/…` names (and `./…` imports of the boot script) in a text.
fn assets_named(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for piece in text.split(['"', '\'']) {
        let name = piece.trim_start_matches("/assets/").trim_start_matches("./");
        // `split-…` is the loader of the chunks, which wasm-bindgen's module
        // imports; the chunks it fetches on demand are not the first load's.
        let hashed = ["web-", "style-", "boot-", "split-"].iter().any(|p| name.starts_with(p));
        if hashed && (name.ends_with(".js") || name.ends_with(".css") || name.ends_with(".wasm")) && !name.contains('/') {
            out.push(format!("/assets/{name}"));
        }
    }
    out
}

/// CPU time from `/proc` (Linux; elsewhere the lines that need it are left
/// out).
mod cpu {
    use std::collections::HashMap;

    /// Clock ticks a second, as `/proc` counts them (`USER_HZ`, 100 on
    /// every Linux architecture the benchmark runs on).
    const TICKS_PER_SECOND: f64 = 100.0;

    pub fn cores() -> usize {
        std::thread::available_parallelism().map_or(1, usize::from)
    }

    /// The machine's CPU time: all of it, and what the host took (steal).
    pub struct Machine {
        total: u64,
        steal: u64,
    }

    impl Machine {
        pub fn read() -> Option<Self> {
            let stat = std::fs::read_to_string("/proc/stat").ok()?;
            let fields: Vec<u64> = stat.lines().next()?.split_whitespace().skip(1).map(|f| f.parse().unwrap_or(0)).collect();
            // user nice system idle iowait irq softirq steal (guest time is
            // counted in user already).
            Some(Self { total: fields.iter().take(8).sum(), steal: *fields.get(7)? })
        }

        pub fn stolen_since(&self, before: &Self) -> f64 {
            self.steal.saturating_sub(before.steal) as f64 / self.total.saturating_sub(before.total).max(1) as f64
        }
    }

    /// The CPU time used so far by each thread of Chromium's processes.
    pub struct Threads(HashMap<(u32, u32), (bool, u64)>);

    impl Threads {
        pub fn read() -> Option<Self> {
            let mut threads = HashMap::new();
            for process in std::fs::read_dir("/proc").ok()?.flatten() {
                let Some(pid) = process.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else { continue };
                let Ok(command) = std::fs::read(process.path().join("cmdline")) else { continue };
                // Chromium's children rewrite their command line into one
                // string: its words are separated by spaces, not NULs.
                let command = String::from_utf8_lossy(&command).replace('\0', " ");
                let Some(program) = command.split(' ').next() else { continue };
                if !program.ends_with("chromium") && !program.ends_with("chrome") && !program.ends_with("headless_shell") {
                    continue;
                }
                let renderer = command.contains("--type=renderer");
                let Ok(tasks) = std::fs::read_dir(process.path().join("task")) else { continue };
                for task in tasks.flatten() {
                    let Some(tid) = task.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else { continue };
                    if let Some(ticks) = std::fs::read_to_string(task.path().join("stat")).ok().as_deref().and_then(used) {
                        // A renderer's main thread is the one its process is named by.
                        threads.insert((pid, tid), (renderer && tid == pid, ticks));
                    }
                }
            }
            Some(Self(threads))
        }

        /// Milliseconds of CPU since `before`: on renderers' main threads,
        /// and in all. A thread that ended between the two reads is not
        /// counted.
        pub fn used_since(&self, before: &Self) -> (f64, f64) {
            let (mut main, mut all) = (0, 0);
            for (id, (is_main, ticks)) in &self.0 {
                let used = ticks - before.0.get(id).map_or(0, |(_, t)| *t).min(*ticks);
                all += used;
                if *is_main {
                    main += used;
                }
            }
            let ms = |ticks: u64| ticks as f64 * 1000.0 / TICKS_PER_SECOND;
            (ms(main), ms(all))
        }
    }

    /// utime + stime of a `/proc/<pid>/task/<tid>/stat` line.
    fn used(stat: &str) -> Option<u64> {
        // The command name, in parentheses, may hold spaces.
        let rest = &stat[stat.rfind(')')? + 2..];
        let fields: Vec<&str> = rest.split(' ').collect();
        Some(fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?)
    }
}
