//! The rest of the official MCP Apps example servers, from npm (2.0.3 each,
//! over stdio, as lattice.toml connects them): `server-system-monitor`,
//! `server-cohort-heatmap`, `server-scenario-modeler` and
//! `server-basic-react`. The agent calls each one's tool; each app renders
//! in the two frames in Chromium, and those that call their server do so
//! through lattice, each call an audit row. None declares an origin: all
//! run with no network.

use std::time::Duration;

use lattice_e2e::browser::{Chrome, Window};
use lattice_e2e::{Deployment, UpProcess};

use super::Apps;
use super::servers::{app_frame, call, package, rows, until_text};

/// Waits until the `n`th app's frame holds `count` elements matching `selector`.
async fn until_count(w: &Window, n: usize, selector: &str, count: usize, what: &str) {
    for _ in 0..400 {
        if app_frame(w, n).locator(selector).count().await.unwrap_or(0) == count {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("{what}: {} of {selector}, not {count}", app_frame(w, n).locator(selector).count().await.unwrap_or(0));
}

/// The app tool calls recorded for `server`, as tool names.
async fn app_calls(apps: &Apps, server: &str) -> Vec<String> {
    rows(apps, "app_tool_call").await.iter().filter(|r| r["server"] == server).map(|r| r["tool"].as_str().unwrap_or_default().to_owned()).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_other_example_servers_apps_render_and_call_their_servers_through_lattice() {
    let server = |name: &str, package_name: &str| {
        format!(
            "[mcp_servers.{name}]\ncommand = [\"node\", {:?}, \"--stdio\"]\npolicy = {{ default = \"allow\" }}\n",
            package(package_name).display().to_string()
        )
    };
    let config = [
        server("monitor", "server-system-monitor"),
        server("cohort", "server-cohort-heatmap"),
        server("scenario", "server-scenario-modeler"),
        server("react", "server-basic-react"),
    ]
    .join("\n");
    let apps = Apps::set_up(Deployment::Up(UpProcess::start_configured(&config, &[]).await)).await;
    let chrome = Chrome::launch().await;

    // The system monitor: the host's facts from its tool result, then its
    // app-only tool polled through lattice.
    let run = call(&apps, "monitor__get-system-info").await;
    assert_eq!(run["status"], "finished", "{run}");
    let w = apps.window(&chrome).await;
    until_text(&w, 0, "#info-hostname", "the monitor shows the host's name", |t| !t.is_empty() && t != "--").await;
    until_text(&w, 0, "#memory-percent", "the monitor's poll came back", |t| t.ends_with('%') && t != "--%").await;
    app_frame(&w, 0).locator("#poll-toggle-btn").click(None).await.expect("the monitor's Stop");
    until_text(&w, 0, "#status-text", "the monitor stopped polling", |t| t == "Stopped").await;
    let polled = app_calls(&apps, "monitor").await;
    assert!(!polled.is_empty() && polled.iter().all(|t| t == "poll-system-stats"), "{polled:?}");

    // The cohort heatmap asks its server for its data itself.
    let run = call(&apps, "cohort__get-cohort-data").await;
    assert_eq!(run["status"], "finished", "{run}");
    w.until("() => document.querySelectorAll('.app-frame iframe').length === 2", "the heatmap's frame").await;
    until_count(&w, 1, "[class*='_cell_']", 78, "the heatmap's cells, a triangle of 12 cohorts").await;
    assert!(app_calls(&apps, "cohort").await.contains(&"get-cohort-data".to_owned()), "the heatmap's own call, through lattice");

    // The scenario modeler: its templates from the tool result, its
    // projections worked out in the frame.
    let run = call(&apps, "scenario__get-scenario-data").await;
    assert_eq!(run["status"], "finished", "{run}");
    w.until("() => document.querySelectorAll('.app-frame iframe').length === 3", "the modeler's frame").await;
    until_count(&w, 2, "select.template-select option", 6, "the modeler's templates").await;
    app_frame(&w, 2).locator("input.slider-input").nth(1).fill("10", None).await.expect("the growth slider");
    until_text(&w, 2, ".metric-card .metric-value", "the modeler's projection at 10% growth", |t| t == "$113K").await;

    // The React example: the time its result carried, then its button
    // asks its server again.
    let run = call(&apps, "react__get-time").await;
    assert_eq!(run["status"], "finished", "{run}");
    w.until("() => document.querySelectorAll('.app-frame iframe').length === 4", "the React app's frame").await;
    let first = until_text(&w, 3, "code", "the React app shows the time", |t| t.len() > 10 && t.contains('T')).await;
    app_frame(&w, 3).get_by_text("Get Server Time", true).click(None).await.expect("the React app's button");
    until_text(&w, 3, "code", "the React app shows a newer time", |t| t.contains('T') && t != first).await;
    assert_eq!(app_calls(&apps, "react").await, ["get-time"]);
}
