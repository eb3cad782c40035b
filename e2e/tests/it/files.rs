//! Files (docs/FILES.md), on `lattice up` and on the multi-process stack:
//! uploaded to the chat's origin, downloaded only from the apps origin, by
//! a link, as an attachment.

use lattice_e2e::{Client, Deployment, On, UpProcess};
use serde_json::{Value, json};

async fn up_and_down(on: On) {
    let deployment = Deployment::start(on).await;
    let (base, apps) = (deployment.base().to_owned(), deployment.apps().to_owned());
    let ana = Client::sign_in(&base, "acme", "ana").await;
    let ws = ana.ok("POST", "/v1/workspaces", json!({"name": "Files"})).await["id"].as_str().unwrap().to_owned();
    let th = ana.ok("POST", &format!("/v1/workspaces/{ws}/threads"), json!({"title": "Files"})).await["id"].as_str().unwrap().to_owned();
    let pdf = b"%PDF-1.7\n1 0 obj <<>> endobj\ntrailer <<>>\n%%EOF\n".to_vec();
    let uploaded: Value = ana
        .http
        .post(format!("{base}/v1/threads/{th}/files?name=report.pdf"))
        .bearer_auth(&ana.token)
        .header("content-type", "image/png")
        .body(pdf.clone())
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(
        (uploaded["name"].clone(), uploaded["type"].clone(), uploaded["size"].clone()),
        (json!("report.pdf"), json!("application/pdf"), json!(pdf.len()))
    );
    let id = uploaded["id"].as_str().unwrap();
    let link = ana.ok("POST", &format!("/v1/files/{id}/link"), json!({})).await;
    let path = link["path"].as_str().unwrap();
    let got = ana.http.get(format!("{apps}{path}")).send().await.unwrap();
    assert_eq!(got.status(), 200);
    let header = |name: &str| got.headers().get(name).and_then(|v| v.to_str().ok()).unwrap_or_default().to_owned();
    assert!(header("content-disposition").starts_with("attachment;"), "{}", header("content-disposition"));
    assert_eq!((header("content-type"), header("x-content-type-options")), ("application/octet-stream".to_owned(), "nosniff".to_owned()));
    assert!(header("set-cookie").is_empty(), "the apps origin sets no cookie");
    assert_eq!(got.bytes().await.unwrap().to_vec(), pdf);
    // The chat's origin serves no file: the path is one of its pages' (the
    // chat host answers every such path with itself).
    let portal = ana.http.get(format!("{base}{path}")).send().await.unwrap();
    assert!(portal.headers().get("content-disposition").is_none());
    assert_ne!(portal.bytes().await.unwrap().to_vec(), pdf, "the chat's origin answered with the file");

    // Past what the edge holds of a request (4 MiB): an upload streams
    // through it, and comes down whole.
    let big: Vec<u8> = (0..6 * 1024 * 1024).map(|i: u32| (i % 251) as u8).collect();
    let chunks: Vec<Result<Vec<u8>, std::io::Error>> = big.chunks(256 * 1024).map(|c| Ok(c.to_vec())).collect();
    let body = reqwest::Body::wrap_stream(futures_util::stream::iter(chunks));
    let sent = ana.http.post(format!("{base}/v1/threads/{th}/files?name=big.bin")).bearer_auth(&ana.token).body(body).send().await.unwrap();
    assert_eq!(sent.status(), 200, "{}", sent.text().await.unwrap_or_default());
    let stored: Value = sent.json().await.unwrap();
    assert_eq!(stored["size"], big.len());
    let link = ana.ok("POST", &format!("/v1/files/{}/link", stored["id"].as_str().unwrap()), json!({})).await;
    let got = ana.http.get(format!("{apps}{}", link["path"].as_str().unwrap())).send().await.unwrap().bytes().await.unwrap();
    assert!(got.as_ref() == big.as_slice(), "6 MiB came down as it went up ({} bytes)", got.len());
    // And past the file's limit (10 MiB) it is refused, through the edge too.
    let over: Vec<Result<Vec<u8>, std::io::Error>> = (0..41).map(|_| Ok(vec![b'z'; 256 * 1024])).collect();
    let body = reqwest::Body::wrap_stream(futures_util::stream::iter(over));
    let refused = ana.http.post(format!("{base}/v1/threads/{th}/files?name=over.bin")).bearer_auth(&ana.token).body(body).send().await.unwrap();
    assert_eq!(refused.status(), 413);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_file_goes_up_to_the_chat_and_comes_down_from_the_apps_origin_only() {
    up_and_down(On::Up).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_file_goes_up_to_the_chat_and_comes_down_from_the_apps_origin_only_on_the_stack() {
    up_and_down(On::Stack).await;
}

/// The process's resident memory and its peak so far, in KiB.
fn memory(pid: u32) -> (u64, u64) {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let field = |name: &str| status.lines().find_map(|l| l.strip_prefix(name)).and_then(|v| v.split_whitespace().next()?.parse().ok()).unwrap();
    (field("VmRSS:"), field("VmHWM:"))
}

/// A 10 MiB upload is never held whole: the service's peak resident
/// memory during it stays under 30 MB above what it was at rest.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_ten_mib_upload_is_never_held_whole() {
    let up = UpProcess::start().await;
    let ana = Client::sign_in(&up.base, "acme", "ana").await;
    let ws = ana.ok("POST", "/v1/workspaces", json!({"name": "Files"})).await["id"].as_str().unwrap().to_owned();
    let th = ana.ok("POST", &format!("/v1/workspaces/{ws}/threads"), json!({"title": "Files"})).await["id"].as_str().unwrap().to_owned();
    // Warm: one small upload first, so what a first request allocates once
    // (pools, caches) is in the memory at rest.
    let warm = ana.http.post(format!("{}/v1/threads/{th}/files?name=warm.txt", up.base)).bearer_auth(&ana.token).body("warm").send().await.unwrap();
    assert_eq!(warm.status(), 200);
    // Memory at rest is read after the process settles: a measure, not a wait for an event.
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    let (rest, peak_before) = memory(up.pid());
    // The peak so far may be above rest (the start): only growth past both counts.
    let chunks: Vec<Result<Vec<u8>, std::io::Error>> = (0..160).map(|i| Ok(vec![(i % 251) as u8; 64 * 1024])).collect();
    let body = reqwest::Body::wrap_stream(futures_util::stream::iter(chunks));
    let sent = ana.http.post(format!("{}/v1/threads/{th}/files?name=big.bin", up.base)).bearer_auth(&ana.token).body(body).send().await.unwrap();
    assert_eq!(sent.status(), 200);
    let stored: Value = sent.json().await.unwrap();
    assert_eq!(stored["size"], 10 * 1024 * 1024);
    let (_, peak) = memory(up.pid());
    println!("a 10 MiB upload: resident memory at rest {rest} KiB, the peak {peak_before} KiB before it and {peak} KiB after it");
    // The upload's own peak is at most `peak`; had it passed rest + 30 MB,
    // the peak would now be above both that and the peak before it.
    let bound = rest + 30 * 1024;
    assert!(peak <= bound.max(peak_before), "the peak rose to {peak} KiB, {} KiB above rest", peak - rest);
    assert!(peak_before < bound, "the start's own peak ({peak_before} KiB) hides what the upload took");
}
