//! `lattice serve edge` in front of `lattice serve log` (REQUIREMENTS.md E1, E2): the
//! chat host and `/v1` (the live stream too) on the portal, the sandbox
//! proxy alone on the apps origin, no cookie either way, and the policies.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use futures_util::StreamExt;
use lattice_e2e::{Client, LogProcess, binary, free_port};
use serde_json::json;

struct Edge {
    child: std::process::Child,
}

impl Drop for Edge {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_edge_serves_two_origins_and_passes_v1_through() {
    let db = std::env::temp_dir().join(format!("lattice-edge-{}.db", free_port()));
    let log = LogProcess::start(&format!("sqlite://{}?mode=rwc", db.display())).await;
    let (port, apps_port) = (free_port(), free_port());
    let portal = format!("http://127.0.0.1:{port}");
    let apps = format!("http://127.0.0.1:{apps_port}");
    let _edge = Edge {
        child: Command::new(binary())
            .args(["serve", "edge"])
            // The edge signs nothing and stores nothing: it starts in the
            // production profile without the signing secret or a database.
            .env("LATTICE_PROFILE", "production")
            .env_remove("LATTICE_AUTH_SECRET")
            .env_remove("LATTICE_DATABASE_URL")
            .env("LATTICE_LOG_URL", &log.base)
            .env("LATTICE_HTTP_ADDR", format!("127.0.0.1:{port}"))
            .env("LATTICE_APPS_ADDR", format!("127.0.0.1:{apps_port}"))
            .env("LATTICE_APPS_ORIGIN", &apps)
            .env("LATTICE_PORTAL_ORIGIN", &portal)
            .env("LATTICE_LOG", "warn")
            .stdout(Stdio::null())
            .spawn()
            .expect("starting lattice serve edge"),
    };
    let http = lattice_e2e::http();
    let deadline = Instant::now() + Duration::from_secs(20);
    while !http.get(format!("{portal}/readyz")).send().await.is_ok_and(|r| r.status().is_success()) {
        assert!(Instant::now() < deadline, "the edge did not pass /readyz through");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }

    // The portal: the page with its policy, and /v1 through to the log.
    let page = http.get(format!("{portal}/t/anything")).send().await.unwrap();
    let csp = page.headers()["content-security-policy"].to_str().unwrap().to_owned();
    assert!(csp.contains(&format!("frame-src {apps}")) && csp.contains("frame-ancestors 'none'"), "{csp}");
    let ana = Client::sign_in(&portal, "acme", "ana").await;
    let ws = ana.ok("POST", "/v1/workspaces", json!({"name": "Edge"})).await["id"].as_str().unwrap().to_owned();
    let th = ana.ok("POST", &format!("/v1/workspaces/{ws}/threads"), json!({"title": "t"})).await["id"].as_str().unwrap().to_owned();
    let (status, body) = Client { token: "not-a-token".into(), ..ana.clone() }.get("/v1/workspaces").await.unwrap();
    assert_eq!((status, body["error"]["type"].as_str()), (401, Some("Unauthorized")), "{body}");

    // The live stream flows through the edge as it is written.
    let stream = http
        .get(format!("{portal}/v1/threads/{th}/events?after=0"))
        .bearer_auth(&ana.token)
        .header("accept", "text/event-stream")
        .send()
        .await
        .unwrap();
    let mut events = lattice_e2e::sse::events(stream);
    ana.ok("POST", &format!("/v1/threads/{th}/messages"), json!({"text": "through the edge"})).await;
    let came = tokio::time::timeout(Duration::from_secs(5), async {
        while let Some(Ok(event)) = events.next().await {
            if lattice_e2e::sse::says(&event, "through the edge") {
                return true;
            }
        }
        false
    });
    assert_eq!(came.await, Ok(true), "the message came through the stream within 5 s");

    // The apps origin: the proxy document and nothing else; no cookies.
    let proxy = http.get(format!("{apps}/sandbox")).header("cookie", "session=stolen").send().await.unwrap();
    assert_eq!(proxy.status(), 200);
    assert!(proxy.headers().get("set-cookie").is_none());
    let policy = proxy.headers()["content-security-policy"].to_str().unwrap().to_owned();
    assert!(policy.starts_with("default-src 'none'") && policy.contains(&format!("frame-ancestors {portal}")), "{policy}");
    let text = proxy.text().await.unwrap();
    assert!(text.contains(&format!("const HOST = \"{portal}\"")), "the proxy talks to the portal only");
    for path in ["/", "/v1/workspaces", "/assets/x.js", "/sandbox/../v1/me"] {
        let r = http.get(format!("{apps}{path}")).bearer_auth(&ana.token).send().await.unwrap();
        assert_eq!(r.status(), 404, "{path} on the apps origin");
        assert!(r.headers().get("set-cookie").is_none());
    }
    drop(log);
    let _ = std::fs::remove_file(db);
}

/// The chat host's files go compressed as the browser takes them: brotli
/// where it is accepted, gzip where only that is, as they are otherwise;
/// the same bytes whichever way.
#[tokio::test]
async fn the_chat_host_is_sent_as_brotli_or_gzip_as_accepted() {
    let up = lattice_e2e::UpProcess::start().await;
    let http = lattice_e2e::http();
    let page = http.get(format!("{}/", up.base)).send().await.unwrap().text().await.unwrap();
    let script =
        page.split(['"', '\'']).find(|p| p.starts_with("/assets/") && p.ends_with(".js")).map(|js| js.to_owned()).expect("the page names its script");
    for path in ["/".to_owned(), script] {
        let fetch = |accept: &'static str| {
            let (http, url) = (http.clone(), format!("{}{path}", up.base));
            async move {
                let r = http.get(url).header("accept-encoding", accept).send().await.unwrap();
                let encoding = r.headers().get("content-encoding").map(|v| v.to_str().unwrap().to_owned());
                (encoding, r.bytes().await.unwrap().to_vec())
            }
        };
        let (plain_encoding, plain) = fetch("identity").await;
        let (br_encoding, br) = fetch("br, gzip").await;
        let (gz_encoding, gz) = fetch("gzip").await;
        assert_eq!((plain_encoding, br_encoding.as_deref(), gz_encoding.as_deref()), (None, Some("br"), Some("gzip")), "{path}");
        let mut unbrotlied = Vec::new();
        brotli::BrotliDecompress(&mut &br[..], &mut unbrotlied).unwrap();
        let mut ungzipped = Vec::new();
        std::io::Read::read_to_end(&mut flate2::read::GzDecoder::new(&gz[..]), &mut ungzipped).unwrap();
        assert_eq!(unbrotlied, plain, "{path}: brotli");
        assert_eq!(ungzipped, plain, "{path}: gzip");
        assert!(br.len() < gz.len(), "{path}: brotli {} bytes, gzip {}", br.len(), gz.len());
    }
}
