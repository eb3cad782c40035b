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

use std::net::{TcpListener, UdpSocket};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use lattice_e2e::browser::Chrome;

use super::{Apps, On, app_log, by_hand};

/// Listens on one loopback port, TCP and UDP: counts the bytes that reach
/// it (a request, a datagram) and, apart, the TCP connections made.
struct Listener {
    port: u16,
    bytes: Arc<AtomicUsize>,
    connections: Arc<AtomicUsize>,
}

impl Listener {
    fn open() -> Self {
        let tcp = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = tcp.local_addr().unwrap().port();
        let udp = UdpSocket::bind(("127.0.0.1", port)).unwrap();
        let (bytes, connections) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
        let (b, c) = (bytes.clone(), connections.clone());
        std::thread::spawn(move || {
            for mut stream in tcp.incoming().flatten() {
                c.fetch_add(1, Ordering::SeqCst);
                let b = b.clone();
                std::thread::spawn(move || {
                    let _ = stream.set_read_timeout(Some(Duration::from_secs(5)));
                    let mut buf = [0u8; 4096];
                    while let Ok(n) = std::io::Read::read(&mut stream, &mut buf) {
                        if n == 0 {
                            break;
                        }
                        b.fetch_add(n, Ordering::SeqCst);
                    }
                });
            }
        });
        let b = bytes.clone();
        std::thread::spawn(move || {
            let mut buf = [0u8; 2048];
            while let Ok((n, _)) = udp.recv_from(&mut buf) {
                b.fetch_add(n.max(1), Ordering::SeqCst);
            }
        });
        Self { port, bytes, connections }
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
    let script = format!(
        "const HOST = '127.0.0.1:' + {port}; const U = 'ht' + 'tp:/' + '/' + HOST; \
         const NAMED = 'probe.escape' + '.test:' + {port}; const N = 'ht' + 'tp:/' + '/' + NAMED; \
         const PORTAL = 'ht' + 'tp:/' + '/127.0.0.1:' + {portal_port};\n\
         (async () => {{ await handshake(); log('ready'); await new Promise((r) => setTimeout(r, {pause})); \
         try {{ {attempt} }} catch (e) {{ log('result blocked ' + e.name); }} }})();",
        port = listener.port,
        // An attempt that takes the app's page away waits longer, so its
        // "ready" is seen first.
        pause = if verdict { 300 } else { 2000 },
    );
    apps.app("Escape", &by_hand(&script)).await;
    // Every name under escape.test resolves to the listener.
    let chrome = Chrome::launch_with(&["--host-resolver-rules=MAP *.escape.test 127.0.0.1".to_owned()]).await;
    let w = apps.window(&chrome).await;
    super::until_logged(&w, "ready").await;
    let verdict = if verdict {
        super::until_logged(&w, "result").await
    } else {
        tokio::time::sleep(Duration::from_millis(2000)).await;
        String::from("result not observable")
    };
    // Give anything that slipped out time to arrive.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let connections = listener.connections.load(Ordering::SeqCst);
    let allowed = if heard == Heard::ARefusedNavigation { 1 } else { 0 };
    assert!(connections <= allowed, "{connections} connection(s) reached the listener; the app's log: {}", app_log(&w).await);
    assert_eq!(listener.bytes.load(Ordering::SeqCst), 0, "bytes reached the listener; the app's log: {}", app_log(&w).await);
    assert!(!verdict.contains("reached"), "{verdict}");
    // The portal is where it was, and the page's token is not in the app.
    let url: String = w.eval("() => location.pathname").await;
    assert!(url.starts_with("/t/"), "the portal page was navigated away: {url}");
    let log = app_log(&w).await;
    assert!(!log.contains(&apps.ana.token), "the app read the portal's token");
    println!("escape verdict: {verdict}");
    verdict
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

/// An app that never yields (`while (true) {}`) leaves the chat answering:
/// the apps origin is another site, so the browser runs the app in another
/// process than the chat.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_busy_app_leaves_the_chat_answering() {
    let apps = Apps::start_on(On::Up).await;
    apps.app("Busy", &by_hand("(async () => { await handshake(); log('spinning'); setTimeout(() => { while (true) {} }, 1500); })();")).await;
    let chrome = Chrome::launch().await;
    let w = apps.window(&chrome).await;
    // Read before it spins: a spinning frame answers no read.
    super::until_logged(&w, "spinning").await;
    tokio::time::sleep(Duration::from_millis(2000)).await;
    // The chat takes a click and a keystroke at once.
    let started = std::time::Instant::now();
    w.page.locator("#scheme").select_option("dark", None).await.unwrap();
    w.until_within("() => document.documentElement.dataset.scheme === 'dark'", "the scheme changed", Duration::from_secs(2)).await;
    w.page.locator("#composer-text").fill("still here", None).await.unwrap();
    assert_eq!(w.eval::<String>("() => document.getElementById('composer-text').value").await, "still here");
    let took = started.elapsed();
    assert!(took < Duration::from_secs(2), "the chat waited on the app: {took:?}");
    println!("a spinning app: the chat answered a click and typing in {} ms", took.as_millis());
}
