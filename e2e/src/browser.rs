//! Real headless Chromium, driven through playwright-rs: Debian's Chromium
//! (`/usr/bin/chromium`, or `LATTICE_CHROMIUM`) and Playwright's driver from
//! npm (`e2e/node_modules`); `cargo xtask test` installs both. Nothing is
//! downloaded at test time.

use std::path::Path;
use std::time::{Duration, Instant};

use playwright_rs::protocol::{Browser, BrowserContextOptions, Page};
use playwright_rs::{LaunchOptions, Playwright};

/// Chromium keeps only the last of a repeated switch, and Playwright
/// passes `--disable-features` before ours: this list carries Playwright's
/// own (playwright-core's `chromiumSwitches`, at the version
/// `e2e/package.json` pins) and, last, the features this harness turns off.
pub const DISABLED_FEATURES: &[&str] = &[
    "AvoidUnnecessaryBeforeUnloadCheckSync",
    "DestroyProfileOnBrowserClose",
    "DialMediaRouteProvider",
    "GlobalMediaControls",
    "HttpsUpgrades",
    "LensOverlay",
    "MediaRouter",
    "PaintHolding",
    "ThirdPartyStoragePartitioning",
    "BlockOriginHeaderModificationOnRedirect",
    "Translate",
    "AutoDeElevate",
    "OptimizationHints",
    "NetworkTimeServiceQuerying",
    "AimEnabled",
    "msForceBrowserSignIn",
    "msEdgeUpdateLaunchServicesPreferredVersion",
    // Debian ships full Chromium, no headless shell, and full Chromium
    // builds the address bar's two popups for every window, so for every
    // browser context: WebUI pages in a renderer of their own, about half
    // a second of CPU on this machine that no page asked for, spent while
    // the page under test loads.
    "WebUIOmniboxPopup",
    "WebUIOmniboxAimPopup",
];

pub struct Chrome {
    _playwright: Playwright,
    pub browser: Browser,
}

/// What a page and its frames wrote to the console: each message's type
/// (`log`, `error`, …) and text. A frame's messages come in the order it
/// wrote them.
#[derive(Clone, Default)]
pub struct Console(std::sync::Arc<std::sync::Mutex<Vec<(String, String)>>>);

impl Console {
    /// The text of every error so far.
    pub fn errors(&self) -> Vec<String> {
        self.0.lock().unwrap().iter().filter(|(kind, _)| kind == "error").map(|(_, text)| text.clone()).collect()
    }

    /// Waits until `text` has been written (10 s at most).
    pub async fn until_written(&self, text: &str) {
        let deadline = Instant::now() + Duration::from_secs(10);
        while !self.0.lock().unwrap().iter().any(|(_, t)| t == text) {
            assert!(Instant::now() < deadline, "waited 10 s for {text:?} on the console");
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
    }
}

/// A person's browser window: its own storage, signed in.
pub struct Window {
    pub page: Page,
    pub base: String,
}

impl Chrome {
    pub async fn launch() -> Self {
        Self::launch_with(&[]).await
    }

    /// With more command-line switches (a host resolver of the test's).
    pub async fn launch_with(extra: &[String]) -> Self {
        let exe = std::env::var("LATTICE_CHROMIUM").unwrap_or_else(|_| "/usr/bin/chromium".into());
        assert!(
            Path::new(&exe).exists(),
            "Chromium is missing at {exe}: `cargo xtask test` installs it (apt-get install chromium), or set LATTICE_CHROMIUM"
        );
        let playwright =
            Playwright::launch().await.expect("Playwright's driver: `cargo xtask test` installs it (npm ci in e2e/); PLAYWRIGHT_CLI_JS points at it");
        let mut args: Vec<String> = [
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
        ]
        .iter()
        .map(|a| (*a).to_owned())
        .collect();
        args.push(format!("--disable-features={}", DISABLED_FEATURES.join(",")));
        args.extend(extra.iter().cloned());
        let browser = playwright
            .chromium()
            .launch_with_options(LaunchOptions::new().headless(true).executable_path(exe).args(args))
            .await
            .expect("launching Chromium");
        Self { _playwright: playwright, browser }
    }

    /// As [`Chrome::window`], with what the page and its frames write to
    /// the console kept in the [`Console`] returned beside it.
    pub async fn window_with_console(&self, base: &str, token: &str, path: &str) -> (Window, Console) {
        let console = Console::default();
        let context = self.browser.new_context().await.expect("a browser context");
        let kept = console.clone();
        context
            .on_console(move |m| {
                let kept = kept.clone();
                async move {
                    kept.0.lock().unwrap().push((m.type_().to_owned(), m.text().to_owned()));
                    Ok(())
                }
            })
            .await
            .expect("console events");
        let page = context.new_page().await.expect("a page");
        page.goto(&format!("{base}{path}#token={token}"), None).await.expect("opening the chat host");
        (Window { page, base: base.to_owned() }, console)
    }

    /// A new window (its own cookies and storage) nobody is signed in in,
    /// at `url`: where a person starts who signs in with their provider.
    pub async fn signed_out_window(&self, base: &str, url: &str) -> Window {
        let context = self.browser.new_context().await.expect("a browser context");
        let page = context.new_page().await.expect("a page");
        page.goto(url, None).await.expect("opening the page");
        Window { page, base: base.to_owned() }
    }

    /// A new window (its own localStorage) signed in with `token`, in the
    /// given scheme (`light` or `dark`), at `path`.
    pub async fn window(&self, base: &str, token: &str, scheme: &str, path: &str) -> Window {
        let options = BrowserContextOptions::builder().color_scheme(scheme.to_owned()).build();
        let context = self.browser.new_context_with_options(options).await.expect("a browser context");
        let page = context.new_page().await.expect("a page");
        if std::env::var_os("LATTICE_E2E_CONSOLE").is_some() {
            // Debugging a suite: the page's console, frames included.
            context
                .on_console(|m| async move {
                    eprintln!("[console] {}", m.text());
                    Ok(())
                })
                .await
                .expect("console events");
        }
        page.goto(&format!("{base}{path}#token={token}"), None).await.expect("opening the chat host");
        Window { page, base: base.to_owned() }
    }
}

impl Window {
    /// Waits until a script returns true, or panics with `what`.
    pub async fn until(&self, script: &str, what: &str) {
        self.until_within(script, what, Duration::from_secs(15)).await;
    }

    pub async fn until_within(&self, script: &str, what: &str, limit: Duration) {
        let deadline = Instant::now() + limit;
        loop {
            let ok: bool = self.page.evaluate::<(), bool>(script, None).await.unwrap_or(false);
            if ok {
                return;
            }
            assert!(Instant::now() < deadline, "waited {limit:?} for {what} ({script})");
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
    }

    pub async fn eval<T: serde::de::DeserializeOwned>(&self, script: &str) -> T {
        self.page.evaluate::<(), T>(script, None).await.unwrap_or_else(|e| panic!("evaluating {script}: {e}"))
    }

    pub async fn press(&self, key: &str) {
        self.page.keyboard().press(key, None).await.expect("a key press");
    }

    pub async fn type_text(&self, text: &str) {
        self.page.keyboard().type_text(text, None).await.expect("typing");
    }

    /// The id of the element that has the focus.
    pub async fn focused(&self) -> String {
        self.eval("() => document.activeElement ? document.activeElement.id : ''").await
    }

    /// Runs axe-core (from npm, injected) and returns its violations.
    pub async fn axe(&self) -> Vec<serde_json::Value> {
        let source = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("node_modules/axe-core/axe.min.js"))
            .expect("axe-core: `cargo xtask test` installs it (npm ci in e2e/)");
        // Evaluated by the driver, which the page's policy does not govern.
        let _: serde_json::Value = self.eval(&format!("(() => {{ {source}\n; return true; }})()")).await;
        let result: serde_json::Value = self
            .eval("async () => { const r = await axe.run(document, { resultTypes: ['violations'] }); return r.violations.map(v => ({id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.map(n => n.target.join(' ')).slice(0, 5)})); }")
            .await;
        result.as_array().cloned().unwrap_or_default()
    }
}
