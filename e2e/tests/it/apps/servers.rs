//! Apps from MCP servers nobody here wrote: the official MCP Apps example
//! servers from npm (`@modelcontextprotocol/server-basic-vanillajs` over
//! stdio, `server-budget-allocator` over Streamable HTTP, both 2.0.3) run
//! as real processes, connected in lattice.toml. The agent calls their
//! tools; their apps render in the two frames in Chromium and call their
//! tools back through lattice, each call an audit row; the server's key
//! off takes its tools from the next model call and its frames away
//! within a second.

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use lattice_e2e::browser::{Chrome, Window};
use lattice_e2e::{Client, Deployment, UpProcess};
use serde_json::{Value, json};

use super::Apps;

pub(super) fn package(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("node_modules/@modelcontextprotocol").join(name).join("dist/index.js")
}

/// The budget allocator over Streamable HTTP on its own port.
struct Budget {
    child: Child,
    url: String,
}

impl Budget {
    async fn start() -> Self {
        let port = lattice_e2e::free_port();
        let child = Command::new("node")
            .arg(package("server-budget-allocator"))
            .env("PORT", port.to_string())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("node runs the budget allocator");
        // Held from here: dropped (a panic below), the process is killed.
        let budget = Self { child, url: format!("http://127.0.0.1:{port}/mcp") };
        for _ in 0..200 {
            if tokio::net::TcpStream::connect(("127.0.0.1", port)).await.is_ok() {
                return budget;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        panic!("the budget allocator never listened on {port}");
    }
}

impl Drop for Budget {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `lattice up` with both servers connected, every call of theirs allowed.
async fn connected(budget: &Budget) -> Apps {
    let config = format!(
        r#"
[mcp_servers.basic]
command = ["node", {basic:?}, "--stdio"]
policy = {{ default = "allow" }}

[mcp_servers.budget]
url = {url:?}
allow_internal = true
policy = {{ default = "allow" }}
"#,
        basic = package("server-basic-vanillajs").display().to_string(),
        url = budget.url,
    );
    Apps::set_up(Deployment::Up(UpProcess::start_configured(&config, &[]).await)).await
}

/// Starts a run of `scripted:call` that calls `tool`; waits for its end.
pub(super) async fn call(apps: &Apps, tool: &str) -> Value {
    let started =
        apps.ana.ok("POST", &format!("/v1/threads/{}/runs", apps.th), json!({"prompt": format!("tool={tool}"), "model": "scripted:call"})).await;
    let run = started["run_id"].as_str().unwrap().to_owned();
    for _ in 0..400 {
        let view = apps.ana.ok("GET", &format!("/v1/runs/{run}"), Value::Null).await;
        if view["status"] == "finished" || view["status"] == "failed" {
            return view;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("the run calling {tool} never ended");
}

/// The `mcp_tool_call` and `app_tool_call` rows of the workspace.
pub(super) async fn rows(apps: &Apps, name: &str) -> Vec<Value> {
    let page = apps.ana.ok("GET", &format!("/v1/workspaces/{}/events?format=json", apps.ws), Value::Null).await;
    page["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["type"] == "audit_recorded" && e["payload"]["name"] == name)
        .map(|e| e["payload"]["data"].clone())
        .collect()
}

/// The inner frame of the `n`th app on the page.
pub(super) fn app_frame(w: &Window, n: usize) -> playwright_rs::protocol::FrameLocator {
    w.page.frame_locator(".app-frame iframe").nth(n as i32).frame_locator("iframe")
}

pub(super) async fn text_in(w: &Window, n: usize, selector: &str) -> String {
    let found = app_frame(w, n).locator(selector);
    let read = async {
        if found.count().await.unwrap_or(0) == 0 { String::new() } else { found.first().text_content().await.ok().flatten().unwrap_or_default() }
    };
    tokio::time::timeout(Duration::from_secs(10), read).await.unwrap_or_default()
}

pub(super) async fn until_text(w: &Window, n: usize, selector: &str, what: &str, ok: impl Fn(&str) -> bool) -> String {
    for _ in 0..400 {
        let text = text_in(w, n, selector).await;
        if ok(&text) {
            return text;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("{what}: {selector} reads {:?}", text_in(w, n, selector).await);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_official_example_servers_apps_render_call_their_tools_and_go_with_their_key() {
    let budget = Budget::start().await;
    let apps = connected(&budget).await;

    // The agent calls the basic server's tool (stdio): its answer and its app.
    let run = call(&apps, "basic__get-time").await;
    assert_eq!(run["status"], "finished", "{run}");
    let agent_rows = rows(&apps, "mcp_tool_call").await;
    assert_eq!(agent_rows.len(), 1, "{agent_rows:?}");
    assert_eq!(
        (agent_rows[0]["server"].clone(), agent_rows[0]["tool"].clone(), agent_rows[0]["decision"].clone()),
        (json!("basic"), json!("get-time"), json!("allow"))
    );
    let app_id = agent_rows[0]["app"].as_str().unwrap_or_else(|| panic!("the result's app was put in the thread: {}", agent_rows[0])).to_owned();
    let app = apps.artifact(&app_id).await;
    assert_eq!(app["data"]["server"]["uri"], "ui://get-time/mcp-app.html");

    // Over lattice's own MCP exporter the app is a resource like any app.
    let read = crate::mcp::steps(&apps.base, &apps.ana.token, json!({"steps": [{"read": format!("ui://lattice/apps/{app_id}")}]})).await;
    let document = read["steps"][0]["contents"][0]["text"].as_str().unwrap_or_default().to_owned();
    assert!(document.contains("Get Server Time"), "{read}");

    // In Chromium: the app renders the time its tool result carried.
    let chrome = Chrome::launch().await;
    let w = apps.window(&chrome).await;
    let first = until_text(&w, 0, "#server-time", "the basic app shows the time", |t| t.contains('T') && t.len() > 10).await;
    // Its button calls get-time on the server, through lattice.
    app_frame(&w, 0).locator("#get-time-btn").click(None).await.expect("the app's button");
    until_text(&w, 0, "#server-time", "the app shows a newer time", |t| !t.is_empty() && t != first).await;
    let app_rows = rows(&apps, "app_tool_call").await;
    let called: Vec<(Value, Value, Value)> = app_rows.iter().map(|r| (r["server"].clone(), r["tool"].clone(), r["decision"].clone())).collect();
    assert_eq!(called, vec![(json!("basic"), json!("get-time"), json!("allow"))], "{app_rows:?}");
    assert!(app_rows[0]["result_bytes"].as_u64().unwrap() > 0);

    // The budget allocator (Streamable HTTP): its app renders its sliders.
    let run = call(&apps, "budget__get-budget-data").await;
    assert_eq!(run["status"], "finished", "{run}");
    w.until("() => document.querySelectorAll('.app-frame iframe').length === 2", "the second app's frame").await;
    for _ in 0..400 {
        if app_frame(&w, 1).locator("input[type=range]").count().await.unwrap_or(0) == 5 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(app_frame(&w, 1).locator("input[type=range]").count().await.unwrap_or(0), 5, "one slider per budget category");

    // The console lists both servers, how each is reached, and their calls.
    let console = chrome.window(&apps.base, &apps.ana.token, "light", "/admin").await;
    console.until("() => document.querySelectorAll('details.server-calls').length === 2", "the servers in the console").await;
    let listed: Vec<String> = console.eval("() => [...document.querySelectorAll('details.server-calls')].map(d => d.textContent)").await;
    assert!(listed[0].starts_with("basic (stdio node, answers, 1 tools): 2 recent calls"), "{listed:?}");
    assert!(listed[1].starts_with("budget (http 127.0.0.1, answers, 1 tools): 1 recent calls"), "{listed:?}");
    assert!(listed[0].contains("get-time") && listed[0].contains("app") && listed[0].contains("agent"), "{listed:?}");
    let keys: String = console.eval("() => document.body.textContent").await;
    assert!(keys.contains("mcp:basic") && keys.contains("mcp:budget"), "the servers' keys are lines of the levels");

    // The basic server's key off in the workspace: its frame goes within a
    // second, and its tools are not in the next model call.
    let flipped = Instant::now();
    apps.ana
        .ok("PUT", &format!("/v1/integrations/workspace:{}/mcp:basic", apps.ws), json!({"state": "off", "reason": "the server misbehaves"}))
        .await;
    w.until_within("() => document.querySelectorAll('.app-frame iframe').length === 1", "the basic app's frame removed", Duration::from_secs(1))
        .await;
    println!("mcp:basic off to its frame gone: {} ms", flipped.elapsed().as_millis());
    let card: String = w.eval("() => document.querySelector('.app-card').textContent").await;
    assert!(card.contains("This app's server is turned off here: mcp:basic is off for the workspace"), "{card}");
    let run = call(&apps, "basic__get-time").await;
    let said =
        apps.ana.all_events(&apps.th).await.iter().rev().find(|e| e["type"] == "message_posted").map(|e| e["payload"]["text"].clone()).unwrap();
    assert_eq!(said, json!("basic__get-time is not offered here."), "{run}");
    assert_eq!(rows(&apps, "mcp_tool_call").await.len(), 2, "no call reached the basic server again");
    let read = crate::mcp::steps(&apps.base, &apps.ana.token, json!({"steps": [{"read": format!("ui://lattice/apps/{app_id}")}]})).await;
    assert!(read.to_string().contains("mcp:basic is off here"), "the exporter refuses it too: {read}");
    let _: &Client = &apps.bot;
}

/// Takes connections on a loopback port and keeps, in order, the first
/// bytes each sent.
struct Listener {
    port: u16,
    heard: std::sync::Arc<std::sync::Mutex<Vec<String>>>,
}

impl Listener {
    fn open() -> Self {
        use std::io::Read;
        let tcp = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = tcp.local_addr().unwrap().port();
        let heard: std::sync::Arc<std::sync::Mutex<Vec<String>>> = Default::default();
        let kept = heard.clone();
        std::thread::spawn(move || {
            for mut stream in tcp.incoming().flatten() {
                let _ = stream.set_read_timeout(Some(Duration::from_secs(2)));
                let mut first = [0u8; 64];
                let n = stream.read(&mut first).unwrap_or(0);
                kept.lock().unwrap().push(String::from_utf8_lossy(&first[..n]).into_owned());
            }
        });
        Self { port, heard }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_servers_app_that_tries_every_way_out_reaches_nothing() {
    let listener = Listener::open();
    let target = format!("http://127.0.0.1:{}", listener.port);
    let fixture = lattice_testkit::mcp_server::start_aiming(Some(target)).await;
    let config = format!("[mcp_servers.fixture]\nurl = {:?}\nallow_internal = true\npolicy = {{ default = \"allow\" }}\n", fixture.url);
    let apps = Apps::set_up(Deployment::Up(UpProcess::start_configured(&config, &[]).await)).await;
    let run = call(&apps, "fixture__escape").await;
    assert_eq!(run["status"], "finished", "{run}");
    let chrome = Chrome::launch().await;
    let w = apps.window(&chrome).await;
    let log = until_text(&w, 0, "#log", "the app tried every way", |t| t.contains("done")).await;
    for way in ["fetch", "websocket", "image", "window.open", "top navigation"] {
        assert!(log.contains(&format!("{way}: blocked")), "{way}: {log}");
    }
    // Heard last: the test's own connection, made after every attempt.
    {
        use std::io::Write;
        let mut marker = std::net::TcpStream::connect(("127.0.0.1", listener.port)).unwrap();
        marker.write_all(b"MARKER").unwrap();
    }
    for _ in 0..100 {
        if listener.heard.lock().unwrap().iter().any(|h| h == "MARKER") {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(*listener.heard.lock().unwrap(), vec!["MARKER".to_owned()], "the app's attempts reached the listener");
    // The page is still the thread: no navigation took it.
    let here: String = w.eval("() => location.pathname").await;
    assert_eq!(here, format!("/t/{}", apps.th));
}

/// The server's policy asks: the run waits, the chat shows the call with
/// its exact arguments and Allow / Decline, and the person's Allow makes
/// the call (and shows its app).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_the_policy_asks_about_is_allowed_in_the_chat() {
    let config = format!(
        "[mcp_servers.basic]\ncommand = [\"node\", {:?}, \"--stdio\"]\npolicy = {{ default = \"ask\" }}\n",
        package("server-basic-vanillajs").display().to_string()
    );
    let apps = Apps::set_up(Deployment::Up(UpProcess::start_configured(&config, &[]).await)).await;
    let started =
        apps.ana.ok("POST", &format!("/v1/threads/{}/runs", apps.th), json!({"prompt": "tool=basic__get-time", "model": "scripted:call"})).await;
    let run = started["run_id"].as_str().unwrap().to_owned();
    let chrome = Chrome::launch().await;
    let w = apps.window(&chrome).await;
    w.until("() => !!document.querySelector('section.server-call button')", "the call put to the person").await;
    let shown: String = w.eval("() => document.querySelector('section.server-call').textContent").await;
    assert!(shown.contains("The agent wants to call get-time on the basic server") && shown.contains("{}"), "{shown}");
    assert!(rows(&apps, "app_tool_call").await.is_empty() && rows(&apps, "mcp_tool_call").await.len() == 1, "asked, nothing called yet");
    w.page.locator("section.server-call button:has-text('Allow')").click(None).await.expect("Allow");
    for _ in 0..400 {
        if apps.ana.ok("GET", &format!("/v1/runs/{run}"), Value::Null).await["status"] == "finished" {
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    let decided: Vec<Value> = rows(&apps, "mcp_tool_call").await.iter().map(|r| r["decision"].clone()).collect();
    assert_eq!(decided, vec![json!("ask"), json!("confirmed")]);
    w.until("() => document.querySelectorAll('.app-frame iframe').length === 1", "the app the allowed call showed").await;
    let answered: String = w.eval("() => document.querySelector('section.server-call').textContent").await;
    assert!(answered.contains("Answered by ana"), "{answered}");
}
