//! The external-URL filter (U7) and the app limits.

use lattice_ui::app::{App, HTML_MAX_BYTES, STATE_MAX_BYTES, external_reference};
use serde_json::json;

#[test]
fn external_addresses_are_found_however_written() {
    let refused = [
        r#"<img src="https://evil.example/x.png">"#,
        r#"<img src='http://evil.example/x.png'>"#,
        r#"<img src=//evil.example/x.png>"#,
        r#"<a href="//evil.example">x</a>"#,
        r#"<style>body{background:url(//evil.example/b.png)}</style>"#,
        r#"<style>body{background:url( "https://evil.example/b.png" )}</style>"#,
        r#"<style>@import "//evil.example/s.css";</style>"#,
        r#"<style>@import url(https://evil.example/s.css);</style>"#,
        r#"<img srcset="a.png 1x, //evil.example/b.png 2x">"#,
        r#"<form action="https://evil.example/collect"></form>"#,
        r##"<a ping="https://evil.example/p" href="#">x</a>"##,
        r#"<meta http-equiv="refresh" content="0;url=data:text/html,hi">"#,
        r#"<meta http-equiv=Refresh content="0">"#,
        r#"<img src="h&#116;tps://evil.example/x">"#,
        r#"<img src="&#x68;ttps://evil.example/x">"#,
        r#"<img src="https&colon;//evil.example/x">"#,
        r#"<style>b{background:url(\68 ttps://evil.example/x)}</style>"#,
        r#"<script>new WebSocket("wss://evil.example")</script>"#,
        r#"<script>fetch('//evil.example/x')</script>"#,
        r#"<SCRIPT>fetch("HTTPS://EVIL.EXAMPLE")</SCRIPT>"#,
        r#"<img src="ht	tps://evil.example/x">"#,
    ];
    for html in refused {
        assert!(external_reference(html).is_some(), "not caught: {html}");
    }
    let allowed = [
        r#"<img src="data:image/png;base64,iVBORw0KGgo=">"#,
        r#"<script>// a comment, then code
            let x = 1; // another
            document.body.textContent = 'two slashes // in text';</script>"#,
        r##"<a href="#top">top</a>"##,
        r#"<style>.a{background:url(data:image/svg+xml;utf8,<svg/>)}</style>"#,
        r#"<p>Counts to 10 / 2</p>"#,
    ];
    for html in allowed {
        assert_eq!(external_reference(html), None, "refused: {html}");
    }
}

fn app(html: String, state: Option<serde_json::Value>) -> App {
    App { title: "Counter".into(), summary: "Counts clicks.".into(), html, state, server: None }
}

#[test]
fn html_and_state_limits_hold_at_their_edge() {
    assert!(app("x".repeat(HTML_MAX_BYTES), None).check().is_ok());
    assert!(matches!(
        app("x".repeat(HTML_MAX_BYTES + 1), None).check(),
        Err(lattice_core::Error::TooLarge { limit, size, .. }) if limit == HTML_MAX_BYTES as u64 && size == HTML_MAX_BYTES as u64 + 1
    ));
    let state = |bytes: usize| json!({"s": "x".repeat(bytes - r#"{"s":""}"#.len())});
    assert!(app("<p>hi</p>".into(), Some(state(STATE_MAX_BYTES))).check().is_ok());
    assert!(matches!(
        app("<p>hi</p>".into(), Some(state(STATE_MAX_BYTES + 1))).check(),
        Err(lattice_core::Error::TooLarge { limit, .. }) if limit == STATE_MAX_BYTES as u64
    ));
    let no_summary = App { summary: " ".into(), ..app("<p>x</p>".into(), None) };
    assert!(no_summary.check().is_err());
}
