//! The escape suite (REQUIREMENTS.md E3): from inside an app, each way out fails, and
//! a listener on a loopback port the test opened (TCP and UDP) hears
//! nothing: no connection, no byte, no datagram. One test a path. The apps
//! build their addresses at run time, as a hostile app would, past the UI
//! model's filter of literal URLs: the sandbox and the policies are what
//! must hold. Names are probed too: Chromium resolves every name under
//! `escape.test` to the listener (a resolver the test controls), so a
//! prefetch, a preconnect or a STUN server by name that got anywhere is
//! heard. Every path is tried against `lattice up` and against the
//! multi-process stack (the edge in front of the log service).
//!
//! That nothing was heard is read only once something was: after the
//! attempt (its verdict logged, or the app's page gone), the test has the
//! same browser load a page from the listener by a name of its own
//! ([`MARKER_HOST`]), and waits for that page. The listener takes
//! connections in the order they were made, so what the app's attempt
//! opened before it has been taken by then.

use std::io::{Read, Write};
use std::net::{TcpListener, UdpSocket};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use lattice_e2e::browser::{Chrome, Window};

use super::{Apps, On, app_log, by_hand};

/// The name the test's own request to the listener is sent by (every name
/// under `escape.test` resolves to it): no app's attempt names it.
const MARKER_HOST: &str = "marker.escape.test";

/// One TCP connection's bytes, as they arrive.
type Bytes = Arc<Mutex<Vec<u8>>>;

/// Listens on one loopback port, TCP and UDP: keeps the bytes of each TCP
/// connection, in the order the connections were taken, and counts the
/// bytes of the datagrams. It answers only the test's own request (by
/// [`MARKER_HOST`]), with an empty page.
struct Listener {
    port: u16,
    connections: Arc<Mutex<Vec<Bytes>>>,
    datagram_bytes: Arc<AtomicUsize>,
}

impl Listener {
    fn open() -> Self {
        let tcp = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = tcp.local_addr().unwrap().port();
        let udp = UdpSocket::bind(("127.0.0.1", port)).unwrap();
        let connections: Arc<Mutex<Vec<Bytes>>> = Arc::default();
        let taken = connections.clone();
        let marker = format!("host: {MARKER_HOST}:{port}\r\n");
        std::thread::spawn(move || {
            for mut stream in tcp.incoming().flatten() {
                let bytes = Bytes::default();
                taken.lock().unwrap().push(bytes.clone());
                let marker = marker.clone();
                std::thread::spawn(move || {
                    let _ = stream.set_read_timeout(Some(Duration::from_secs(5)));
                    let mut buf = [0u8; 4096];
                    while let Ok(n) = stream.read(&mut buf) {
                        if n == 0 {
                            break;
                        }
                        let mut bytes = bytes.lock().unwrap();
                        bytes.extend_from_slice(&buf[..n]);
                        let request = String::from_utf8_lossy(&bytes).to_ascii_lowercase();
                        if request.contains(&marker) && request.contains("\r\n\r\n") {
                            let _ = stream.write_all(b"HTTP/1.1 200 OK\r\ncontent-type: text/html\r\ncontent-length: 0\r\nconnection: close\r\n\r\n");
                            break;
                        }
                    }
                });
            }
        });
        let datagram_bytes = Arc::new(AtomicUsize::new(0));
        let b = datagram_bytes.clone();
        std::thread::spawn(move || {
            let mut buf = [0u8; 2048];
            while let Ok((n, _)) = udp.recv_from(&mut buf) {
                b.fetch_add(n.max(1), Ordering::SeqCst);
            }
        });
        Self { port, connections, datagram_bytes }
    }

    /// Has `chrome` load a page from the listener by [`MARKER_HOST`] and
    /// waits for it: every connection the browser opened to the listener
    /// before has been taken by then.
    async fn hear_the_marker(&self, chrome: &Chrome) {
        let page = chrome.browser.new_page().await.expect("a page for the marker");
        let url = format!("http://{MARKER_HOST}:{}/marker", self.port);
        page.goto(&url, None).await.unwrap_or_else(|e| panic!("the listener's marker page did not load ({url}): {e}"));
        let _ = page.close().await;
    }

    /// The bytes of each connection taken before the test's marker, in the
    /// order they were taken (what the marker's page asks after it, its
    /// icon, is the test's own).
    fn before_the_marker(&self) -> Vec<Vec<u8>> {
        let marker = format!("host: {MARKER_HOST}:{}\r\n", self.port);
        let connections = self.connections.lock().unwrap();
        connections
            .iter()
            .map(|c| c.lock().unwrap().clone())
            .take_while(|bytes| !String::from_utf8_lossy(bytes).to_ascii_lowercase().contains(&marker))
            .collect()
    }
}

/// What the listener may see of an attempt.
#[derive(Clone, Copy, PartialEq)]
enum Heard {
    /// Nothing at all: no connection, no byte, no datagram.
    Nothing,
    /// A frame's navigation the sandbox refuses: Chromium opens one
    /// connection for a navigation before its policy check refuses it, and
    /// sends nothing on it (seen with every page-level control tried, and
    /// outside lattice; docs/WEB.md). Nothing else.
    ARefusedNavigation,
}

/// Runs `attempt` (JavaScript; `U` is the listener's http address, `HOST`
/// its host and port, `N` and `NAMED` the same by a name, `PORTAL` the
/// portal's origin) in an app, then checks the app's own verdict and that
/// the listener heard nothing.
async fn escape(on: On, attempt: &str) -> String {
    escape_with(on, attempt, true, Heard::Nothing).await
}

/// `verdict`: whether the app can still say how the attempt went (one that
/// navigates its own frame can't: its page is gone).
async fn escape_with(on: On, attempt: &str, verdict: bool, heard: Heard) -> String {
    let apps = Apps::start_on(on).await;
    let listener = Listener::open();
    let portal_port = apps.base.rsplit(':').next().unwrap().to_owned();
    // The attempt waits for the test's word (`go`), given once the test
    // has seen the app ready.
    let script = format!(
        "const HOST = '127.0.0.1:' + {port}; const U = 'ht' + 'tp:/' + '/' + HOST; \
         const NAMED = 'probe.escape' + '.test:' + {port}; const N = 'ht' + 'tp:/' + '/' + NAMED; \
         const PORTAL = 'ht' + 'tp:/' + '/127.0.0.1:' + {portal_port};\n\
         (async () => {{ await handshake(); await new Promise((go) => {{ window.go = go; log('ready'); }}); \
         try {{ {attempt} }} catch (e) {{ log('result blocked ' + e.name); }} }})();",
        port = listener.port,
    );
    apps.app("Escape", &by_hand(&script)).await;
    // Every name under escape.test resolves to the listener.
    let chrome = Chrome::launch_with(&["--host-resolver-rules=MAP *.escape.test 127.0.0.1".to_owned()]).await;
    let w = apps.window(&chrome).await;
    super::until_logged(&w, "ready").await;
    let app = w.page.frame_locator(".app-frame iframe").frame_locator("iframe").locator("body");
    app.evaluate::<bool, ()>("() => { window.go(); return true; }", None).await.expect("the app takes the word to go");
    let verdict = if verdict {
        super::until_logged(&w, "result").await
    } else {
        until_gone(&w).await;
        String::from("result not observable")
    };
    // Whatever the attempt opened to the listener has been taken once a
    // page the browser loads from it after the attempt is there.
    listener.hear_the_marker(&chrome).await;
    let taken = listener.before_the_marker();
    let shown = |taken: &[Vec<u8>]| taken.iter().map(|b| String::from_utf8_lossy(b).into_owned()).collect::<Vec<_>>();
    let allowed = if heard == Heard::ARefusedNavigation { 1 } else { 0 };
    assert!(taken.len() <= allowed, "{} connection(s) reached the listener ({:?}); the app's log: {}", taken.len(), shown(&taken), app_log(&w).await);
    assert!(taken.iter().all(Vec::is_empty), "bytes reached the listener ({:?}); the app's log: {}", shown(&taken), app_log(&w).await);
    assert_eq!(listener.datagram_bytes.load(Ordering::SeqCst), 0, "datagrams reached the listener; the app's log: {}", app_log(&w).await);
    assert!(!verdict.contains("reached"), "{verdict}");
    // The portal is where it was, and the page's token is not in the app.
    let url: String = w.eval("() => location.pathname").await;
    assert!(url.starts_with("/t/"), "the portal page was navigated away: {url}");
    let log = app_log(&w).await;
    assert!(!log.contains(&apps.ana.token), "the app read the portal's token");
    println!("escape verdict: {verdict}");
    verdict
}

/// Waits until the app's page has left its frame (its log, which said
/// `ready`, is gone): an attempt that navigates the app's own frame was
/// made, and refused or not, it has been acted on.
async fn until_gone(w: &Window) {
    for _ in 0..400 {
        if !app_log(w).await.contains("ready") {
            return;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("the app's page is still there after its attempt to navigate its frame; its log: {}", app_log(w).await);
}

async fn fetch(on: On) {
    escape(on, "fetch(U + '/fetch').then(() => log('result reached'), (e) => log('result blocked ' + e.name));").await;
}

async fn xhr(on: On) {
    escape(on, "const x = new XMLHttpRequest(); x.open('GET', U + '/xhr'); x.onload = () => log('result reached'); x.onerror = () => log('result blocked error'); x.send();").await;
}

async fn websocket(on: On) {
    escape(on, "const s = new WebSocket('w' + 's:/' + '/' + HOST + '/ws'); s.onopen = () => log('result reached'); s.onerror = () => log('result blocked error');").await;
}

async fn event_source(on: On) {
    escape(on, "const s = new EventSource(U + '/sse'); s.onopen = () => log('result reached'); s.onerror = () => log('result blocked error');").await;
}

async fn image_beacon(on: On) {
    escape(on, "const i = new Image(); i.onload = () => log('result reached'); i.onerror = () => log('result blocked error'); i.src = U + '/img'; document.body.append(i);").await;
}

async fn css_beacon(on: On) {
    escape(
        on,
        "const st = document.createElement('style'); st.textContent = '#b { background-image: url(' + U + '/css); } @import url(' + U + '/import);'; \
         document.head.append(st); const d = document.createElement('div'); d.id = 'b'; d.textContent = 'b'; document.body.append(d); \
         setTimeout(() => log('result blocked (nothing to observe in the page)'), 500);",
    )
    .await;
}

async fn anchor_ping(on: On) {
    escape_with(
        on,
        "const a = document.createElement('a'); a.href = U + '/nav'; a.ping = U + '/ping'; a.textContent = 'x'; document.body.append(a); a.click();",
        false,
        Heard::ARefusedNavigation,
    )
    .await;
}

async fn prefetch_and_preconnect(on: On) {
    escape(
        on,
        "for (const rel of ['prefetch', 'preconnect', 'dns-prefetch', 'preload']) { const l = document.createElement('link'); l.rel = rel; l.href = U + '/' + rel; if (rel === 'preload') l.as = 'fetch'; document.head.append(l); } \
         setTimeout(() => log('result blocked (no hint was followed)'), 800);",
    )
    .await;
}

async fn webrtc_data_channel(on: On) {
    let verdict = escape(
        on,
        "const pc = new RTCPeerConnection({iceServers: [{urls: 'st' + 'un:' + HOST}, {urls: 'tu' + 'rn:' + HOST, username: 'u', credential: 'p'}]}); \
         pc.createDataChannel('out'); pc.createOffer().then((o) => pc.setLocalDescription(o)); setTimeout(() => log('result reached (a peer connection was made)'), 800);",
    )
    .await;
    assert!(verdict.contains("TypeError"), "WebRTC is not there to use: {verdict}");
}

async fn form_submission(on: On) {
    escape(on, "const f = document.createElement('form'); f.action = U + '/form'; f.method = 'post'; document.body.append(f); f.submit(); setTimeout(() => log('result blocked (the form went nowhere)'), 500);").await;
}

async fn top_navigation(on: On) {
    escape(on, "top.location.href = U + '/top'; setTimeout(() => log('result reached (still here after navigating the top)'), 500);").await;
}

async fn own_navigation(on: On) {
    // The app's own frame may not leave for the network either (the proxy's
    // frame-src governs it); its log would vanish with it, so the verdict
    // is written first.
    escape_with(on, "location.href = U + '/self';", false, Heard::ARefusedNavigation).await;
}

async fn window_open(on: On) {
    escape(on, "const w = window.open(U + '/popup'); log(w ? 'result reached (a window opened)' : 'result blocked (no window)');").await;
}

async fn the_portals_cookies_and_storage(on: On) {
    escape(
        on,
        "const tries = [() => document.cookie, () => localStorage.getItem('lattice.token'), () => parent.localStorage.getItem('lattice.token'), \
         () => top.localStorage.getItem('lattice.token'), () => top.document.cookie, () => sessionStorage.length]; \
         const got = []; for (const t of tries) { try { const v = t(); got.push('value:' + v); } catch (e) { got.push(e.name); } } \
         log(got.some((g) => g.startsWith('value:ey')) ? 'result reached ' + got.join(',') : 'result blocked ' + got.join(','));",
    )
    .await;
}

async fn a_nested_frame_to_the_portal(on: On) {
    escape_with(
        on,
        "for (const src of [PORTAL + '/', U + '/frame']) { const f = document.createElement('iframe'); f.src = src; document.body.append(f); } \
         setTimeout(() => { let seen = ''; try { const d = document.querySelector('iframe').contentDocument; seen = d && d.body ? d.body.innerHTML : ''; } catch (e) { seen = ''; } \
         log(seen.length > 0 ? 'result reached ' + seen.slice(0, 40) : 'result blocked (nothing loaded)'); }, 800);",
        true,
        Heard::ARefusedNavigation,
    )
    .await;
}

async fn names_prefetched_and_preconnected(on: On) {
    escape(
        on,
        "for (const rel of ['dns-prefetch', 'preconnect', 'prefetch', 'prerender']) { const l = document.createElement('link'); l.rel = rel; l.href = N + '/' + rel; document.head.append(l); } \
         const a = document.createElement('a'); a.href = N + '/anchor'; a.textContent = 'a'; document.body.append(a); \
         const m = document.createElement('meta'); m.httpEquiv = 'x-dns-prefetch-control'; m.content = 'on'; document.head.prepend(m); \
         setTimeout(() => log('result blocked (no name was followed)'), 1200);",
    )
    .await;
}

async fn webrtc_by_name_from_a_child_frame(on: On) {
    // The prelude takes WebRTC from the app's own window; a fresh
    // about:blank child has a window of its own.
    let verdict = escape(
        on,
        "const f = document.createElement('iframe'); document.body.append(f); \
         let R; try { R = f.contentWindow.RTCPeerConnection || window[0].RTCPeerConnection; } catch (e) { log('result blocked ' + e.name); throw e; } \
         const pc = new R({iceServers: [{urls: 'st' + 'un:' + NAMED}]}); pc.createDataChannel('out'); pc.createOffer().then((o) => pc.setLocalDescription(o)); \
         setTimeout(() => log('result reached (a peer connection was made)'), 1200);",
    )
    .await;
    assert!(verdict.contains("SecurityError") || verdict.contains("TypeError"), "no WebRTC from a child frame: {verdict}");
}

/// Each path as a test against `lattice up` and one against the stack.
macro_rules! on_both {
    ($($name:ident),* $(,)?) => {
        mod on_lattice_up {
            $(#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn $name() {
                super::$name(super::On::Up).await;
            })*
        }
        mod on_the_stack {
            $(#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn $name() {
                super::$name(super::On::Stack).await;
            })*
        }
    };
}

on_both!(
    fetch,
    xhr,
    websocket,
    event_source,
    image_beacon,
    css_beacon,
    anchor_ping,
    prefetch_and_preconnect,
    names_prefetched_and_preconnected,
    webrtc_data_channel,
    webrtc_by_name_from_a_child_frame,
    form_submission,
    top_navigation,
    own_navigation,
    window_open,
    the_portals_cookies_and_storage,
    a_nested_frame_to_the_portal
);

/// An app that does not yield (`while (…) {}`, three seconds of it) leaves
/// the chat answering: the apps origin is another site, so the browser runs
/// the app in another process than the chat. Nothing leaves a spinning app
/// (even a message to another window waits for its thread), so the times
/// say it afterwards: the app's spin, by its own clock, holds the chat's
/// answers, by the chat's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_busy_app_leaves_the_chat_answering() {
    let apps = Apps::start_on(On::Up).await;
    // Told to go, the app spins, then says from when to when.
    let busy = "(async () => { await handshake(); \
                await new Promise((go) => { addEventListener('message', (e) => { if (e.data && e.data.go) go(); }); log('ready'); }); \
                const from = Date.now(); while (Date.now() < from + 3000) {} log('spun ' + from + ' ' + Date.now()); })();";
    apps.app("Busy", &by_hand(busy)).await;
    let chrome = Chrome::launch().await;
    let w = apps.window(&chrome).await;
    super::until_logged(&w, "ready").await;
    // The word to go comes from the chat page: nothing of the test's waits
    // on the app's frame while it spins.
    w.eval::<bool>("() => { document.querySelector('.app-frame iframe').contentWindow.frames[0].postMessage({go: true}, '*'); return true; }").await;
    // The chat takes a click and a keystroke at once, round after round:
    // the first may start as the app is being told; the last is well into
    // its spin.
    let mut rounds = Vec::new();
    for (i, scheme) in ["dark", "light", "dark", "light", "dark"].into_iter().enumerate() {
        let at: f64 = w.eval("() => Date.now()").await;
        let started = std::time::Instant::now();
        w.page.locator("#scheme").select_option(scheme, None).await.unwrap();
        let changed = format!("() => document.documentElement.dataset.scheme === '{scheme}'");
        w.until_within(&changed, "the scheme changed", Duration::from_secs(2)).await;
        let text = format!("still here {i}");
        w.page.locator("#composer-text").fill(&text, None).await.unwrap();
        assert_eq!(w.eval::<String>("() => document.getElementById('composer-text').value").await, text);
        let took = started.elapsed();
        assert!(took < Duration::from_secs(2), "the chat waited on the app: {took:?}");
        let done: f64 = w.eval("() => Date.now()").await;
        rounds.push((at, done));
    }
    // Once it is done spinning the app says when it spun.
    let spun = super::until_logged(&w, "spun").await;
    let times: Vec<f64> = spun.split(' ').skip(1).map(|t| t.parse().expect("a time")).collect();
    let (from, to) = (times[0], times[1]);
    let (at, done) = rounds[rounds.len() - 1];
    assert!(from <= at && done <= to, "the chat's last answer ({at}..{done}) was not within the app's spin ({from}..{to}); every round: {rounds:?}");
    let during = rounds.iter().filter(|(at, done)| from <= *at && *done <= to).count();
    println!("a spinning app: the chat answered {during} of {} rounds of a click and typing while it spun, each within 2 s", rounds.len());
}
