//! The domains a server's app declares (docs/MCP.md, "The domains an app
//! declares"), with the official `@modelcontextprotocol/server-map` (2.0.3,
//! from npm, over stdio): its app declares `https://cesium.com` and loads
//! CesiumJS from there. Here that origin is this machine: the real CesiumJS
//! release of npm's `cesium` package (1.123.0, the version the app asks
//! for) served over https, Chromium told that cesium.com is that port. The
//! same server connected twice: as `map`, whose apps the operator allows
//! cesium.com, and as `closed`, allowed nothing.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use axum::extract::{Path, State};
use axum::http::{StatusCode, header};
use lattice_e2e::browser::Chrome;
use lattice_e2e::{Deployment, UpProcess};
use lattice_testkit::tls::Certs;
use serde_json::json;

use super::Apps;
use super::servers::{app_frame, call, package, until_text};

/// Where the app loads CesiumJS from (`dist/mcp-app.html`).
const RELEASE: &str = "/downloads/cesiumjs/releases/1.123/Build/Cesium";

/// The folder of the CesiumJS build npm's package carries.
fn cesium_build() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("node_modules/cesium/Build/Cesium")
}

/// Serves the CesiumJS build over https; counts the requests for it.
async fn cesium_origin(hits: Arc<AtomicUsize>) -> u16 {
    async fn file(State(hits): State<Arc<AtomicUsize>>, Path(path): Path<String>) -> axum::response::Response {
        use axum::response::IntoResponse;
        hits.fetch_add(1, Ordering::SeqCst);
        if path.split('/').any(|part| part == ".." || part.is_empty()) {
            return StatusCode::NOT_FOUND.into_response();
        }
        let Ok(bytes) = tokio::fs::read(cesium_build().join(&path)).await else { return StatusCode::NOT_FOUND.into_response() };
        let kind = match path.rsplit('.').next() {
            Some("js") => "text/javascript",
            Some("css") => "text/css",
            Some("json") => "application/json",
            Some("png") => "image/png",
            Some("svg") => "image/svg+xml",
            Some("wasm") => "application/wasm",
            _ => "application/octet-stream",
        };
        ([(header::CONTENT_TYPE, kind), (header::ACCESS_CONTROL_ALLOW_ORIGIN, "*")], bytes).into_response()
    }
    let app = axum::Router::new().route(&format!("{RELEASE}/{{*path}}"), axum::routing::get(file)).with_state(hits);
    lattice_e2e::https::serve_tls(&Certs::make(), app).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_app_reaches_the_declared_origin_its_server_is_allowed_and_no_other() {
    assert!(cesium_build().join("Cesium.js").exists(), "npm's cesium package is installed (e2e/package.json)");
    let hits = Arc::new(AtomicUsize::new(0));
    let port = cesium_origin(hits.clone()).await;
    let map = package("server-map").display().to_string();
    let config = format!(
        r#"
[mcp_servers.map]
command = ["node", {map:?}, "--stdio"]
policy = {{ default = "allow" }}
app_domains = {{ resource = ["https://cesium.com"], connect = ["https://cesium.com"] }}

[mcp_servers.closed]
command = ["node", {map:?}, "--stdio"]
policy = {{ default = "allow" }}
"#
    );
    let apps = Apps::set_up(Deployment::Up(UpProcess::start_configured(&config, &[]).await)).await;
    // cesium.com is this machine's origin, its certificate the test's own.
    let chrome = Chrome::launch_with(&[format!("--host-resolver-rules=MAP cesium.com 127.0.0.1:{port}"), "--ignore-certificate-errors".into()]).await;

    // Allowed: the app loads the library and builds its globe.
    let run = call(&apps, "map__show-map").await;
    assert_eq!(run["status"], "finished", "{run}");
    let w = apps.window(&chrome).await;
    for _ in 0..400 {
        if app_frame(&w, 0).locator(".cesium-widget").count().await.unwrap_or(0) > 0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let loading = super::servers::text_in(&w, 0, "#loading").await;
    assert!(
        app_frame(&w, 0).locator(".cesium-widget").count().await.unwrap_or(0) > 0,
        "the map app built its globe with CesiumJS from its allowed origin; it says {loading:?}"
    );
    assert!(!loading.contains("Failed to load CesiumJS"), "{loading}");
    let loaded = hits.load(Ordering::SeqCst);
    assert!(loaded >= 2, "the library and its style sheet were fetched from cesium.com: {loaded} requests");

    // Not allowed: the same app of the other server reaches nothing.
    let run = call(&apps, "closed__show-map").await;
    assert_eq!(run["status"], "finished", "{run}");
    w.until("() => document.querySelectorAll('.app-frame iframe').length === 2", "the second map's frame").await;
    let said =
        until_text(&w, 1, "#loading", "the closed server's map could not load its library", |t| t.contains("Failed to load CesiumJS from CDN")).await;
    assert!(said.contains("Error"), "{said}");
    assert_eq!(hits.load(Ordering::SeqCst), loaded, "no request of the closed server's app reached cesium.com");

    // The console says what each server's apps may reach.
    let console = chrome.window(&apps.base, &apps.ana.token, "light", "/admin").await;
    console.until("() => document.querySelectorAll('details.server-calls').length === 2", "the servers in the console").await;
    let listed: Vec<String> = console.eval("() => [...document.querySelectorAll('details.server-calls summary')].map(d => d.textContent)").await;
    assert!(listed[0].starts_with("closed ") && listed[0].contains("Its apps reach no network."), "{listed:?}");
    assert!(
        listed[1].starts_with("map ")
            && listed[1].contains("Its apps may reach what they declare of: connect https://cesium.com; resource https://cesium.com."),
        "{listed:?}"
    );

    // The allowed server's key off: its frame goes, as any server's does.
    let flipped = Instant::now();
    apps.ana.ok("PUT", &format!("/v1/integrations/workspace:{}/mcp:map", apps.ws), json!({"state": "off", "reason": "the map misbehaves"})).await;
    w.until_within("() => document.querySelectorAll('.app-frame iframe').length === 1", "the map's frame removed", Duration::from_secs(1)).await;
    println!("mcp:map off to its frame gone: {} ms", flipped.elapsed().as_millis());
}
