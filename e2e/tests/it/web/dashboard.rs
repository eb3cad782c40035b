//! A dashboard with every panel type: the figures behind "Show the
//! figures", colour-blind mode changing the chart palette, and an action
//! button that submits to its form; a chart drawn at the width it has, its
//! figures named on hover and by keyboard.

use lattice_e2e::browser::{Chrome, Window};
use lattice_e2e::{Client, Deployment, On};
use playwright_rs::protocol::{BrowserContextOptions, Viewport};
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_panel_renders_with_its_figures() {
    every_panel_renders_with_its_figures_on(On::Up).await;
}

/// The same against the multi-process stack (REQUIREMENTS.md X2), through the edge.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_panel_renders_with_its_figures_on_the_stack() {
    every_panel_renders_with_its_figures_on(On::Stack).await;
}

async fn every_panel_renders_with_its_figures_on(on: On) {
    let up = Deployment::start(on).await;
    let ana = Client::sign_in(up.base(), "acme", "ana").await;
    let (_, th) = super::workspace_with_thread(&ana, "Ops").await;
    let ack = ana
        .ok(
            "POST",
            &format!("/v1/threads/{th}/artifacts"),
            json!({"kind": "form", "data": {"title": "Acknowledge", "schema": {"type": "object", "properties": {}}, "submissions": "per_person"}}),
        )
        .await["id"]
        .as_str()
        .unwrap()
        .to_owned();
    ana.ok("POST", &format!("/v1/threads/{th}/artifacts"), json!({"kind": "dashboard", "data": super::every_panel(&ack)})).await;

    let chrome = Chrome::launch().await;
    let w = chrome.window(up.base(), &ana.token, "light", &format!("/t/{th}")).await;
    w.until("() => !!document.querySelector('.dashboard .panels')", "the dashboard").await;

    assert_eq!(w.eval::<String>("() => document.querySelector('.metric-value').textContent").await, "1.5 %");
    assert_eq!(w.eval::<String>("() => document.querySelector('.metric-delta').textContent").await, "Change: -0.25");
    assert_eq!(w.eval::<String>("() => document.querySelector('.as-of time').getAttribute('datetime')").await, "2026-11-29T12:00:00Z");
    assert_eq!(w.eval::<usize>("() => document.querySelectorAll('figure.chart[data-kind=line] polyline').length").await, 2);
    assert_eq!(w.eval::<usize>("() => document.querySelectorAll('figure.chart[data-kind=bar] rect.bar').length").await, 3);
    // Figures as the person's language writes them, with their units,
    // lined up by their last digit; a column of headings as it came.
    let table: Vec<Vec<String>> = w.eval(super::TABLE_CELLS).await;
    assert_eq!(table, [["/v1/search", "840 ms", "1.2%", "€1,234.50"], ["/v1/export", "1,200 ms", "7%", "€99.00"]]);
    let aligned: Vec<String> =
        w.eval("() => [...document.querySelector('.table-panel tbody tr').cells].map(c => getComputedStyle(c).textAlign)").await;
    assert_eq!(aligned, ["left", "right", "right", "right"]);
    assert_eq!(w.eval::<String>("() => document.querySelector('.panel.text strong').textContent").await, "Note:");
    assert_eq!(w.eval::<usize>("() => document.querySelectorAll('.panel.text li').length").await, 2);

    // "Show the figures", by keyboard, for each chart: a real table.
    for kind in ["line", "bar"] {
        let shown: bool = w.eval(&format!("() => document.querySelector('figure.chart[data-kind={kind}] details table').checkVisibility()")).await;
        assert!(!shown, "the {kind} chart's figures start folded");
        w.page.locator(format!("figure.chart[data-kind={kind}] summary")).focus().await.unwrap();
        w.press("Enter").await;
        w.until(&format!("() => document.querySelector('figure.chart[data-kind={kind}] details table').checkVisibility()"), "the figures shown")
            .await;
    }
    let line_rows: Vec<String> = w.eval("() => [...document.querySelectorAll('figure.chart[data-kind=line] details tbody tr')].map(r => [...r.children].map(c => c.textContent).join(' '))").await;
    assert_eq!(line_rows, vec!["10:00 120 80", "10:05 180 95", "10:10 150 70"]);
    let bar_rows: Vec<String> = w.eval("() => [...document.querySelectorAll('figure.chart[data-kind=bar] details tbody tr')].map(r => [...r.children].map(c => c.textContent).join(' '))").await;
    assert_eq!(bar_rows, vec!["api 7", "web 3", "db 11"]);

    // Colour-blind mode: the charts' palette changes, from tokens alone.
    let stroke = "() => getComputedStyle(document.querySelector('.series-1 .line')).stroke";
    let before: String = w.eval(stroke).await;
    w.page.locator("#cvd").check(None).await.unwrap();
    w.until("() => document.documentElement.hasAttribute('data-cvd')", "data-cvd on the page").await;
    let after: String = w.eval(stroke).await;
    assert_ne!(before, after, "the palette changes");
    assert_eq!(after, "rgb(0, 114, 178)", "the colour-blind palette's first colour");
    let bar_after: String = w.eval("() => getComputedStyle(document.querySelector('.series-1 .bar')).fill").await;
    assert_eq!(bar_after, after);

    // The action button is a submission to its form.
    w.page.locator(".panel.action button").click(None).await.unwrap();
    let mut found = false;
    for _ in 0..100 {
        let (_, subs) = ana.get(&format!("/v1/threads/{th}/artifacts?kind=submission&form_id={ack}")).await.unwrap();
        if subs.as_array().is_some_and(|a| a.len() == 1) {
            assert_eq!(subs[0]["author"], "ana");
            assert_eq!(subs[0]["data"]["values"], json!({}));
            found = true;
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert!(found, "pressing the action submitted to its form");
}

/// Markdown nested thousands of levels deep is drawn flat past a depth,
/// and the page goes on answering: the renderer's stack is bounded.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deeply_nested_markdown_is_drawn_within_a_depth() {
    let up = Deployment::start(On::Up).await;
    let ana = Client::sign_in(up.base(), "acme", "ana").await;
    let (_, th) = super::workspace_with_thread(&ana, "Ops").await;
    let quotes = format!("{}deep inside", "> ".repeat(20_000));
    let lists = format!("{}item", (0..250).map(|i| format!("{}- ", "  ".repeat(i))).collect::<Vec<_>>().join("\n"));
    let data = json!({"title": "Nested", "as_of": "2026-11-29T12:00:00Z", "panels": [
        {"type": "text", "markdown": quotes}, {"type": "text", "markdown": lists}]});
    ana.ok("POST", &format!("/v1/threads/{th}/artifacts"), json!({"kind": "dashboard", "data": data})).await;

    let chrome = Chrome::launch().await;
    let w = chrome.window(up.base(), &ana.token, "light", &format!("/t/{th}")).await;
    w.until("() => document.querySelectorAll('.panel.text').length === 2", "both text panels").await;
    let depth: usize = w
        .eval("() => { let max = 0; for (const el of document.querySelectorAll('.markdown *')) { let d = 0; for (let n = el; n && !n.classList?.contains('markdown'); n = n.parentElement) d++; max = Math.max(max, d); } return max; }")
        .await;
    assert!(depth <= 17, "markdown nested {depth} elements deep");
    let text: String = w.eval("() => document.querySelector('.panel.text').textContent").await;
    assert!(text.contains("deep inside"), "{:.100}", text);
    // The page still answers.
    assert!(w.eval::<bool>("() => !!document.querySelector('textarea, [contenteditable], input')").await);
}

/// A chart is drawn at the width of its place, one unit a pixel, so its
/// labels are read at their size on a phone as on a wide screen and the
/// labels along the bottom never run into each other; each figure is
/// named on hover and by the arrow keys.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_chart_fits_its_place_and_names_its_figures_on_hover_and_by_keyboard() {
    let up = Deployment::start(On::Up).await;
    let ana = Client::sign_in(up.base(), "acme", "ana").await;
    let (_, th) = super::workspace_with_thread(&ana, "Ops").await;
    let mut dashboard = super::every_panel("art_none");
    // Many labels along the bottom: more than fit side by side on a phone.
    dashboard["panels"][1]["x"] = json!((0..24).map(|h| format!("{h:02}:00")).collect::<Vec<_>>());
    dashboard["panels"][1]["series"] = json!([{"name": "api", "values": (0..24).map(|h| 1000 + h * 250).collect::<Vec<_>>()}]);
    ana.ok("POST", &format!("/v1/threads/{th}/artifacts"), json!({"kind": "dashboard", "data": dashboard})).await;
    let chrome = Chrome::launch().await;
    for width in [390, 1280] {
        let options = BrowserContextOptions::builder().color_scheme("light".to_owned()).viewport(Viewport { width, height: 844 }).build();
        let page = chrome.browser.new_context_with_options(options).await.unwrap().new_page().await.unwrap();
        page.goto(&format!("{}/t/{th}#token={}", up.base(), ana.token), None).await.unwrap();
        let w = Window { page, base: up.base().to_owned() };
        w.until(
            "() => [...document.querySelectorAll('figure.chart svg')].length === 2 && [...document.querySelectorAll('figure.chart svg')].every(s => \
             Math.abs(s.viewBox.baseVal.width - s.getBoundingClientRect().width) < 1)",
            "each chart drawn at its own width",
        )
        .await;
        let smallest: f64 =
            w.eval("() => Math.min(...[...document.querySelectorAll('.chart .axis-label')].map(t => t.getBoundingClientRect().height))").await;
        assert!(smallest >= 12.0, "an axis label {smallest} px high at {width} px wide");
        let overlapping: bool = w
            .eval(
                "() => [...document.querySelectorAll('figure.chart')].some(f => { const r = [...f.querySelectorAll('text.axis-label[text-anchor=middle]')] \
                 .map(t => t.getBoundingClientRect()); return r.some((b, i) => i > 0 && b.left < r[i - 1].right) })",
            )
            .await;
        assert!(!overlapping, "labels along the bottom run into each other at {width} px wide");
        // The figures in numbers as the person writes them: grouped in English.
        let first: String = w.eval("() => document.querySelector('figure.chart[data-kind=line] details tbody td').textContent").await;
        assert_eq!(first, "1,000");

        // On hover: the bar's figure, under the chart and in its tooltip.
        w.page.locator("figure.chart[data-kind=bar] rect.bar").nth(2).hover(None).await.unwrap();
        w.until("() => document.querySelector('figure.chart[data-kind=bar] .readout').textContent === 'errors, db: 11'", "the hovered figure").await;
        let tip: String =
            w.eval("() => document.querySelectorAll('figure.chart[data-kind=bar] rect.bar')[2].querySelector('title').textContent").await;
        assert_eq!(tip, "errors, db: 11");

        // By keyboard: the chart takes the focus, the arrow keys go from figure to figure.
        w.page.locator("figure.chart[data-kind=line] svg").focus().await.unwrap();
        let readout = "() => document.querySelector('figure.chart[data-kind=line] .readout').textContent";
        w.press("ArrowRight").await;
        w.until(&format!("() => ({readout})() === 'api, 00:00: 1,000'"), "the first figure").await;
        w.press("ArrowRight").await;
        w.until(&format!("() => ({readout})() === 'api, 01:00: 1,250'"), "the next figure").await;
        w.press("End").await;
        w.until(&format!("() => ({readout})() === 'api, 23:00: 6,750'"), "the last figure").await;
        assert!(w.eval::<bool>("() => !!document.querySelector('figure.chart[data-kind=line] .ring')").await, "the figure read is ringed");
        let live: String = w.eval("() => document.querySelector('figure.chart[data-kind=line] .readout').getAttribute('aria-live')").await;
        assert_eq!(live, "polite");
    }
}
