//! Files attached to answers: uploaded as a stream, refused while the
//! bytes arrive once past the file's limit or the tenant's room, typed by
//! their content, read by whoever reads their thread, erased by an admin
//! with the log left whole.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use axum::body::Body;
use axum::http::{Request, StatusCode};
use http_body_util::BodyExt;
use lattice_core::TenantRole;
use lattice_log::FileLimits;
use serde_json::{Value, json};
use tower::ServiceExt;

use crate::App;

const PNG: [u8; 16] = [0x89, b'P', b'N', b'G', 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0x0d, b'I', b'H', b'D', b'R'];

async fn app(backend: lattice_log::Backend, limits: FileLimits) -> App {
    let log = lattice_testkit::builder_on(lattice_testkit::fresh_db(backend).await).file_limits(limits).start();
    App::over(log, lattice_agent::Models::scripted())
}

/// Uploads `body` as `name`, the body streamed in frames of `frame` bytes;
/// answers the reply and how many bytes the server pulled.
async fn upload(app: &App, token: &str, th: &str, name: &str, body: Vec<u8>, frame: usize) -> (StatusCode, Value, usize) {
    let pulled = Arc::new(AtomicUsize::new(0));
    let counted = pulled.clone();
    let frames: Vec<Result<Vec<u8>, std::io::Error>> = body.chunks(frame.max(1)).map(|c| Ok(c.to_vec())).collect();
    let stream = futures_util::stream::iter(frames).inspect(move |f| {
        if let Ok(f) = f {
            counted.fetch_add(f.len(), Ordering::SeqCst);
        }
    });
    let path = format!("/v1/threads/{th}/files?name={}", urlencoding(name));
    let req = Request::builder()
        .method("POST")
        .uri(path)
        .header("authorization", format!("Bearer {token}"))
        .header("content-type", "text/plain")
        .body(Body::from_stream(stream))
        .unwrap();
    let res = app.router.clone().oneshot(req).await.unwrap();
    let status = res.status();
    let bytes = res.into_body().collect().await.unwrap().to_bytes();
    (status, serde_json::from_slice(&bytes).unwrap_or(Value::Null), pulled.load(Ordering::SeqCst))
}

fn urlencoding(s: &str) -> String {
    s.bytes().map(|b| if b.is_ascii_alphanumeric() || b"-._~".contains(&b) { (b as char).to_string() } else { format!("%{b:02X}") }).collect()
}

fn sha256(bytes: &[u8]) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(bytes).iter().map(|b| format!("{b:02x}")).collect()
}

use futures_util::StreamExt;

lattice_testkit::both_backends! {
    async fn a_file_is_typed_by_its_content_and_read_by_its_threads_readers(backend: Backend) {
        let app = app(backend, FileLimits::default()).await;
        let ana = app.token("t1", "ana", TenantRole::Member, false).await;
        let (_, th) = app.workspace_with_thread(&ana).await;
        // The client says text; the content says PNG.
        let (status, png, _) = upload(&app, &ana, &th, "../../shot.png", PNG.to_vec(), 4).await;
        assert_eq!(status, StatusCode::OK, "{png}");
        assert_eq!((png["name"].clone(), png["type"].clone(), png["size"].clone()), (json!("shot.png"), json!("image/png"), json!(16)));
        assert_eq!(png["sha256"], sha256(&PNG));
        assert!(png["id"].as_str().unwrap().starts_with("fil_"));
        let (_, text, _) = upload(&app, &ana, &th, "notes\u{7}.txt", b"two lines\nof text\n".to_vec(), 5).await;
        assert_eq!((text["name"].clone(), text["type"].clone()), (json!("notes.txt"), json!("text/plain")));
        let read = app.get(&format!("/v1/files/{}", png["id"].as_str().unwrap()), &ana).await;
        assert_eq!(read.status, StatusCode::OK);
        assert_eq!(read.body, png);
        // Another tenant learns nothing of it.
        let eve = app.token("t2", "eve", TenantRole::TenantAdmin, false).await;
        assert_eq!(app.get(&format!("/v1/files/{}", png["id"].as_str().unwrap()), &eve).await.status, StatusCode::NOT_FOUND);
        // Bytes in chunks: a file of three and a half chunks reads back whole.
        let big: Vec<u8> = (0..(lattice_log::CHUNK_BYTES * 7 / 2)).map(|i| (i % 251) as u8).collect();
        let (status, stored, _) = upload(&app, &ana, &th, "big.bin", big.clone(), 10_000).await;
        assert_eq!(status, StatusCode::OK, "{stored}");
        let who = lattice_testkit::who("t1", "ana", TenantRole::Member);
        let row = app.log.files().head(&who, stored["id"].as_str().unwrap()).await.unwrap();
        let back: Vec<u8> = app.log.files().chunks(&row, 0, 10).await.unwrap().concat();
        assert_eq!(back.len(), big.len());
        assert!(back == big, "the bytes read back are the bytes sent");
    }
}

lattice_testkit::both_backends! {
    async fn a_files_name_keeps_no_character_that_makes_it_read_as_another(backend: Backend) {
        let app = app(backend, FileLimits::default()).await;
        let ana = app.token("t1", "ana", TenantRole::Member, false).await;
        let (_, th) = app.workspace_with_thread(&ana).await;
        // `invoice`, RIGHT-TO-LEFT OVERRIDE, `fdp.exe`: shown as invoiceexe.pdf.
        let (status, file, _) = upload(&app, &ana, &th, "invoice\u{202E}fdp.exe", b"MZ".to_vec(), 2).await;
        assert_eq!(status, StatusCode::OK, "{file}");
        assert_eq!(file["name"], "invoicefdp.exe");
        let (_, file2, _) = upload(&app, &ana, &th, "\u{FEFF}re\u{200B}port\u{2066}.pdf\u{2069}", b"%PDF".to_vec(), 2).await;
        assert_eq!(file2["name"], "report.pdf");
        // The download carries the cleaned name.
        let id = file["id"].as_str().unwrap();
        let link = app.post(&format!("/v1/files/{id}/link"), &ana, json!({})).await;
        let (status, headers, _) = download(&app, link.body["path"].as_str().unwrap()).await;
        assert_eq!(status, StatusCode::OK);
        let disposition = headers.get("content-disposition").unwrap().to_str().unwrap();
        assert_eq!(disposition, "attachment; filename=\"invoicefdp.exe\"; filename*=UTF-8''invoicefdp.exe");
    }
}

lattice_testkit::both_backends! {
    async fn an_upload_is_refused_while_it_arrives_at_the_files_limit_and_the_tenants_room(backend: Backend) {
        let limits = FileLimits { max_bytes: 10 * 1024, quota_bytes: 25 * 1024, quota_files: 4 };
        let app = app(backend, limits).await;
        let ana = app.token("t1", "ana", TenantRole::Member, false).await;
        let (ws, th) = app.workspace_with_thread(&ana).await;
        // At the limit it passes; one byte over is refused.
        let (status, _, _) = upload(&app, &ana, &th, "a", vec![b'a'; 10 * 1024], 1024).await;
        assert_eq!(status, StatusCode::OK);
        let (status, body, _) = upload(&app, &ana, &th, "b", vec![b'b'; 10 * 1024 + 1], 1024).await;
        assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE, "{body}");
        assert_eq!(body["error"]["limit"], 10 * 1024);
        // 50 KiB to a 10 KiB limit: refused within the first 10 KiB read
        // (and the frame that passed it).
        let (status, _, pulled) = upload(&app, &ana, &th, "c", vec![b'c'; 50 * 1024], 1024).await;
        assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE);
        assert!(pulled <= 11 * 1024, "{pulled} bytes were read of 50 KiB");
        // The tenant's room: 10 KiB held, 25 KiB allowed.
        let (status, _, _) = upload(&app, &ana, &th, "d", vec![b'd'; 10 * 1024], 1024).await;
        assert_eq!(status, StatusCode::OK);
        let (status, body, _) = upload(&app, &ana, &th, "e", vec![b'e'; 6 * 1024], 1024).await;
        assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE, "{body}");
        assert_eq!(body["error"]["limit"], 5 * 1024, "the room left: {body}");
        let (status, _, _) = upload(&app, &ana, &th, "f", vec![b'f'; 5 * 1024], 1024).await;
        assert_eq!(status, StatusCode::OK, "what the refused uploads wrote was forgotten");
        // The count of files: four held, a fifth refused.
        let (status, _, _) = upload(&app, &ana, &th, "g", vec![], 1).await;
        assert_eq!(status, StatusCode::OK, "an empty file is a file");
        let (status, _, _) = upload(&app, &ana, &th, "g2", vec![], 1).await;
        assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE);
        // The forms switch governs uploads.
        let off = app.send_put(&format!("/v1/integrations/workspace:{ws}/ui:forms"), &ana, json!({"state": "off", "reason": "incident"})).await;
        assert_eq!(off.status, StatusCode::OK);
        let (status, body, _) = upload(&app, &ana, &th, "h", b"x".to_vec(), 1).await;
        assert_eq!(status, StatusCode::LOCKED, "{body}");
    }
}

lattice_testkit::both_backends! {
    async fn erasing_a_file_leaves_the_log_whole_and_its_readers_told(backend: Backend) {
        let app = app(backend, FileLimits::default()).await;
        let ana = app.token("t1", "ana", TenantRole::Member, false).await;
        let (ws, th) = app.workspace_with_thread(&ana).await;
        let added = app.post(&format!("/v1/workspaces/{ws}/members"), &ana, json!({"user": "rob", "role": "editor"})).await;
        assert_eq!(added.status, StatusCode::OK);
        let rob = app.token("t1", "rob", TenantRole::Member, false).await;
        let (_, file, _) = upload(&app, &rob, &th, "secret.txt", b"a secret".to_vec(), 8).await;
        let id = file["id"].as_str().unwrap().to_owned();
        let before = app.event_count(&ana, &ws).await;
        // An editor may not erase; the workspace's admin may, with a reason.
        let refused = app.post(&format!("/v1/files/{id}/erase"), &rob, json!({"reason": "mine"})).await;
        assert_eq!(refused.status, StatusCode::FORBIDDEN, "{:?}", refused.body);
        let erased = app.post(&format!("/v1/files/{id}/erase"), &ana, json!({"reason": "a person asked"})).await;
        assert_eq!(erased.status, StatusCode::OK, "{:?}", erased.body);
        let again = app.post(&format!("/v1/files/{id}/erase"), &ana, json!({"reason": "twice"})).await;
        assert_eq!(again.status, StatusCode::CONFLICT, "{:?}", again.body);
        // The reference stays, saying so; the bytes are gone.
        let read = app.get(&format!("/v1/files/{id}"), &rob).await;
        assert_eq!(read.body["sha256"], file["sha256"]);
        assert_eq!(read.body["erased_by"], "ana");
        assert!(read.body["erased_at"].as_str().is_some());
        let who = lattice_testkit::who("t1", "rob", TenantRole::Member);
        let row = app.log.files().head(&who, &id).await.unwrap();
        assert!(app.log.files().chunks(&row, 0, 10).await.unwrap().is_empty());
        // The log grew by the audit row, and lost nothing.
        assert_eq!(app.event_count(&ana, &ws).await, before + 1);
        let page = app.get(&format!("/v1/workspaces/{ws}/events?format=json"), &ana).await;
        let row = page.body["events"].as_array().unwrap().iter().find(|e| e["payload"]["name"] == "file_erased").cloned().unwrap();
        assert_eq!((row["payload"]["data"]["file"].clone(), row["payload"]["data"]["reason"].clone()), (json!(id), json!("a person asked")));

        // An erase whose row was written but whose bytes were not deleted
        // (the service stopped between the two) is finished by the next,
        // under that row.
        let (_, cut, _) = upload(&app, &rob, &th, "cut.txt", b"cut short".to_vec(), 9).await;
        let cut = cut["id"].as_str().unwrap().to_owned();
        let admin = lattice_testkit::who("t1", "ana", TenantRole::Member);
        let audit = lattice_core::Audit { name: "file_erased".into(), data: json!({"file": cut, "reason": "first try"}), once: Some(format!("erase:{cut}")) };
        let first = app.log.execute(&admin, lattice_core::Command::RecordAudit { thread: lattice_core::ThreadId::parse("th", &th).unwrap(), audit }).await.unwrap();
        let finished = app.post(&format!("/v1/files/{cut}/erase"), &ana, json!({"reason": "again"})).await;
        assert_eq!(finished.status, StatusCode::OK, "{:?}", finished.body);
        assert_eq!(finished.body["seq"], first.seq, "under the first row");
        let row = app.log.files().head(&who, &cut).await.unwrap();
        assert!(row.erased_at.is_some() && app.log.files().chunks(&row, 0, 10).await.unwrap().is_empty());
    }
}

/// Opens `path` on the apps origin's downloads: status, headers, bytes.
async fn download(app: &App, path: &str) -> (StatusCode, axum::http::HeaderMap, Vec<u8>) {
    let req = Request::builder().method("GET").uri(path).body(Body::empty()).unwrap();
    let res = app.downloads.clone().oneshot(req).await.unwrap();
    let (status, headers) = (res.status(), res.headers().clone());
    (status, headers, res.into_body().collect().await.unwrap().to_bytes().to_vec())
}

lattice_testkit::both_backends! {
    async fn a_file_is_downloaded_from_the_apps_origin_as_an_attachment_while_its_reader_may(backend: Backend) {
        let app = app(backend, FileLimits::default()).await;
        let ana = app.token("t1", "ana", TenantRole::Member, false).await;
        let (ws, th) = app.workspace_with_thread(&ana).await;
        app.post(&format!("/v1/workspaces/{ws}/members"), &ana, json!({"user": "vic", "role": "viewer"})).await;
        let vic = app.token("t1", "vic", TenantRole::Member, false).await;
        // An HTML file that would run if it were rendered.
        let html = b"<html><script>alert(document.cookie)</script></html>".to_vec();
        let (_, file, _) = upload(&app, &ana, &th, "r\u{e9}sum\u{e9} \"1\".html", html.clone(), 7).await;
        let id = file["id"].as_str().unwrap().to_owned();
        let link = app.post(&format!("/v1/files/{id}/link"), &vic, json!({})).await;
        assert_eq!(link.status, StatusCode::OK, "{:?}", link.body);
        assert_eq!(link.body["expires_in_secs"], 300);
        let path = link.body["path"].as_str().unwrap().to_owned();
        let (status, headers, bytes) = download(&app, &path).await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(bytes, html, "the bytes uploaded");
        let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok()).unwrap_or_default().to_owned();
        assert_eq!(header("content-type"), "application/octet-stream");
        assert_eq!(header("x-content-type-options"), "nosniff");
        assert_eq!(header("content-security-policy"), "sandbox; default-src 'none'");
        assert_eq!(header("cache-control"), "private, no-store");
        assert_eq!(header("content-length"), html.len().to_string());
        let disposition = header("content-disposition");
        assert!(disposition.starts_with("attachment; filename=\"r_sum_ _1_.html\"; filename*=UTF-8''r%C3%A9sum%C3%A9%20%221%22.html"), "{disposition}");
        // A forged link, or one for another file, opens nothing.
        let (status, _, _) = download(&app, &format!("/files/{id}?link=forged")).await;
        assert_eq!(status, StatusCode::FORBIDDEN);
        let (_, other, _) = upload(&app, &ana, &th, "other.txt", b"x".to_vec(), 1).await;
        let (status, _, _) = download(&app, &path.replace(&id, other["id"].as_str().unwrap())).await;
        assert_eq!(status, StatusCode::FORBIDDEN);
        // Taken off the workspace, vic's link opens nothing more.
        let removed = app.send("DELETE", &format!("/v1/workspaces/{ws}/members/vic"), Some(&ana), None).await;
        assert_eq!(removed.status, StatusCode::OK, "{:?}", removed.body);
        let (status, _, _) = download(&app, &path).await;
        assert_eq!(status, StatusCode::NOT_FOUND, "the link outlives no access");
        // Erased: the link says so.
        let ana_link = app.post(&format!("/v1/files/{id}/link"), &ana, json!({})).await.body["path"].as_str().unwrap().to_owned();
        app.post(&format!("/v1/files/{id}/erase"), &ana, json!({"reason": "asked"})).await;
        let (status, _, body) = download(&app, &ana_link).await;
        assert_eq!(status, StatusCode::CONFLICT);
        assert!(String::from_utf8_lossy(&body).contains("erased by ana"), "{}", String::from_utf8_lossy(&body));
    }
}

lattice_testkit::both_backends! {
    async fn an_image_is_previewed_only_as_a_thumbnail_made_again_here(backend: Backend) {
        let app = app(backend, FileLimits::default()).await;
        let ana = app.token("t1", "ana", TenantRole::Member, false).await;
        let (_, th) = app.workspace_with_thread(&ana).await;
        let picture = image::RgbImage::from_fn(600, 300, |x, y| image::Rgb([(x % 256) as u8, (y % 256) as u8, 7]));
        let mut png = std::io::Cursor::new(Vec::new());
        picture.write_to(&mut png, image::ImageFormat::Png).unwrap();
        let (_, file, _) = upload(&app, &ana, &th, "shot.png", png.into_inner(), 4096).await;
        let req = Request::builder()
            .uri(format!("/v1/files/{}/thumbnail", file["id"].as_str().unwrap()))
            .header("authorization", format!("Bearer {ana}"))
            .body(Body::empty())
            .unwrap();
        let res = app.router.clone().oneshot(req).await.unwrap();
        assert_eq!(res.status(), StatusCode::OK);
        assert_eq!(res.headers()["content-type"], "image/png");
        assert_eq!(res.headers()["x-content-type-options"], "nosniff");
        let bytes = res.into_body().collect().await.unwrap().to_bytes();
        let thumb = image::load_from_memory_with_format(&bytes, image::ImageFormat::Png).unwrap();
        assert_eq!((thumb.width(), thumb.height()), (256, 128));
        // A PDF, or an SVG (kept as text), is never previewed.
        let (_, pdf, _) = upload(&app, &ana, &th, "a.pdf", b"%PDF-1.7\n".to_vec(), 9).await;
        let refused = app.get(&format!("/v1/files/{}/thumbnail", pdf["id"].as_str().unwrap()), &ana).await;
        assert_eq!(refused.status, StatusCode::UNPROCESSABLE_ENTITY, "{:?}", refused.body);
        let (_, svg, _) = upload(&app, &ana, &th, "x.svg", b"<svg xmlns='http://www.w3.org/2000/svg'><script>1</script></svg>".to_vec(), 9).await;
        assert_eq!(svg["type"], "text/plain");
        let refused = app.get(&format!("/v1/files/{}/thumbnail", svg["id"].as_str().unwrap()), &ana).await;
        assert_eq!(refused.status, StatusCode::UNPROCESSABLE_ENTITY);
    }
}

const PDF: &[u8] = b"%PDF-1.4\n1 0 obj<<>>endobj\ntrailer<<>>\n%%EOF\n";

lattice_testkit::both_backends! {
    async fn a_forms_file_field_takes_a_whole_file_of_its_thread_uploaded_by_whoever_submits(backend: Backend) {
        let app = app(backend, FileLimits::default()).await;
        let ana = app.token("t1", "ana", TenantRole::Member, false).await;
        let (ws, th) = app.workspace_with_thread(&ana).await;
        app.post(&format!("/v1/workspaces/{ws}/members"), &ana, json!({"user": "rob", "role": "respondent"})).await;
        let rob = app.token("t1", "rob", TenantRole::Member, false).await;
        let schema = json!({"type": "object", "required": ["shot"], "properties": {
            "shot": {"type": "string", "format": "file", "accept": ["image/*", "application/pdf"], "maxSize": 1000},
            "logs": {"type": "array", "items": {"type": "string", "format": "file", "accept": ["text/plain"]}, "maxItems": 2}
        }});
        let form = app.post(&format!("/v1/threads/{th}/artifacts"), &ana,
            json!({"kind": "form", "data": {"title": "Report", "schema": schema, "submissions": "many"}})).await;
        assert_eq!(form.status, StatusCode::OK, "{:?}", form.body);
        let form_id = form.body["id"].as_str().unwrap().to_owned();
        let mut n = 0;
        let mut submit = |values: Value, files: Option<Value>| {
            n += 1;
            let mut data = json!({"form_id": form_id, "form_version": 1, "values": values, "nonce": format!("nonce-{n:04}")});
            if let Some(files) = files {
                data["files"] = files;
            }
            let (app, rob, th) = (&app, rob.clone(), th.clone());
            async move { app.post(&format!("/v1/threads/{th}/artifacts"), &rob, json!({"kind": "submission", "data": data})).await }
        };
        let (_, png, _) = upload(&app, &rob, &th, "shot.png", PNG.to_vec(), 16).await;
        let (_, pdf, _) = upload(&app, &rob, &th, "signed.pdf", PDF.to_vec(), 16).await;
        let (_, log, _) = upload(&app, &rob, &th, "run.log", b"line one\nline two\n".to_vec(), 16).await;
        let id = |v: &Value| v["id"].as_str().unwrap().to_owned();

        // An image and a text file: the submission carries their references.
        let done = submit(json!({"shot": id(&png), "logs": [id(&log)]}), None).await;
        assert_eq!(done.status, StatusCode::OK, "{:?}", done.body);
        let sub = app.get(&format!("/v1/artifacts/{}", done.body["id"].as_str().unwrap()), &ana).await;
        assert_eq!(sub.body["data"]["files"], json!([png, log]), "{:?}", sub.body);
        assert_eq!(sub.body["data"]["values"]["shot"], png["id"], "the value stays the id");
        // A PDF is accepted too, and references sent that agree are kept.
        let done = submit(json!({"shot": id(&pdf)}), Some(json!([pdf]))).await;
        assert_eq!(done.status, StatusCode::OK, "{:?}", done.body);

        // What is refused, each at its field.
        let refusal = |reply: &crate::Reply| (reply.status, reply.body["error"]["errors"][0]["path"].clone(), reply.body["error"]["errors"][0]["keyword"].clone());
        let r = submit(json!({"shot": id(&log)}), None).await;
        assert_eq!(refusal(&r), (StatusCode::UNPROCESSABLE_ENTITY, json!("values.shot"), json!("accept")), "{:?}", r.body);
        let (_, big, _) = upload(&app, &rob, &th, "big.png", [PNG.as_slice(), &[0u8; 1000]].concat(), 256).await;
        let r = submit(json!({"shot": id(&big)}), None).await;
        assert_eq!(refusal(&r), (StatusCode::UNPROCESSABLE_ENTITY, json!("values.shot"), json!("maxSize")), "{:?}", r.body);
        let r = submit(json!({"shot": "not-an-id"}), None).await;
        assert_eq!(refusal(&r), (StatusCode::UNPROCESSABLE_ENTITY, json!("values.shot"), json!("format")), "{:?}", r.body);
        let r = submit(json!({"shot": "fil_01nosuchfile0000000000000"}), None).await;
        assert_eq!(refusal(&r), (StatusCode::UNPROCESSABLE_ENTITY, json!("values.shot"), json!("file")), "{:?}", r.body);
        let r = submit(json!({"shot": id(&png), "logs": [id(&log), id(&log), id(&log)]}), None).await;
        assert_eq!(refusal(&r), (StatusCode::UNPROCESSABLE_ENTITY, json!("values.logs"), json!("maxItems")), "{:?}", r.body);
        // Someone else's upload, even in the same thread.
        let (_, anas, _) = upload(&app, &ana, &th, "mine.png", PNG.to_vec(), 16).await;
        let r = submit(json!({"shot": id(&anas)}), None).await;
        assert_eq!(refusal(&r), (StatusCode::UNPROCESSABLE_ENTITY, json!("values.shot"), json!("file")), "{:?}", r.body);
        assert!(r.body["error"]["errors"][0]["message"].as_str().unwrap().contains("whoever uploaded it"));
        // A file of another thread.
        let other = app.post(&format!("/v1/workspaces/{ws}/threads"), &ana, json!({"title": "other"})).await;
        let other = other.body["id"].as_str().unwrap().to_owned();
        let (_, elsewhere, _) = upload(&app, &rob, &other, "there.png", PNG.to_vec(), 16).await;
        let r = submit(json!({"shot": id(&elsewhere)}), None).await;
        assert!(r.body["error"]["errors"][0]["message"].as_str().unwrap().contains("another thread"), "{:?}", r.body);
        // References that do not agree with the store.
        let mut lying = png.clone();
        lying["size"] = json!(1);
        let r = submit(json!({"shot": id(&png)}), Some(json!([lying]))).await;
        assert_eq!(refusal(&r), (StatusCode::UNPROCESSABLE_ENTITY, json!("files"), json!("files")), "{:?}", r.body);
        // An erased file.
        app.post(&format!("/v1/files/{}/erase", id(&pdf)), &ana, json!({"reason": "asked"})).await;
        let r = submit(json!({"shot": id(&pdf)}), None).await;
        assert!(r.body["error"]["errors"][0]["message"].as_str().unwrap().contains("erased"), "{:?}", r.body);
        // The required field wants a file.
        let r = submit(json!({"logs": [id(&log)]}), None).await;
        assert_eq!(refusal(&r), (StatusCode::UNPROCESSABLE_ENTITY, json!("values.shot"), json!("required")), "{:?}", r.body);
    }
}

lattice_testkit::both_backends! {
    async fn an_upload_that_never_ends_is_cut_off_by_the_requests_bound_and_forgotten(backend: Backend) {
        let limits = FileLimits { max_bytes: 10 * 1024, quota_bytes: 12 * 1024, quota_files: 10 };
        let log = lattice_testkit::builder_on(lattice_testkit::fresh_db(backend).await).file_limits(limits).start();
        let guard = lattice_api::guard::Guard::new(lattice_api::guard::Limits { request_timeout: std::time::Duration::from_secs(1), ..Default::default() });
        let app = App::with_servers(log, true, guard, lattice_agent::Models::scripted(), lattice_connect::Connections::default(), None);
        let ana = app.token("t1", "ana", TenantRole::Member, false).await;
        let (_, th) = app.workspace_with_thread(&ana).await;
        // 8 KiB, then nothing more, ever.
        let first: Vec<Result<Vec<u8>, std::io::Error>> = vec![Ok(vec![b'x'; 8 * 1024])];
        let stream = futures_util::stream::iter(first).chain(futures_util::stream::pending());
        let req = Request::builder()
            .method("POST")
            .uri(format!("/v1/threads/{th}/files?name=endless.bin"))
            .header("authorization", format!("Bearer {ana}"))
            .body(Body::from_stream(stream))
            .unwrap();
        let started = std::time::Instant::now();
        let res = tokio::time::timeout(std::time::Duration::from_secs(10), app.router.clone().oneshot(req)).await.expect("the upload was ended").unwrap();
        assert_eq!(res.status(), StatusCode::SERVICE_UNAVAILABLE);
        assert!(started.elapsed() < std::time::Duration::from_secs(5), "{:?}", started.elapsed());
        // What it wrote is forgotten: a file that needs the whole room fits.
        let fitted = lattice_testkit::eventually("the cut-off upload's bytes to be forgotten", async || {
            let (status, body, _) = upload(&app, &ana, &th, "full.bin", vec![b'y'; 10 * 1024], 1024).await;
            (status == StatusCode::OK).then_some(body)
        })
        .await;
        assert_eq!(fitted["size"], 10 * 1024);
    }
}

/// Sends a part of a resumable upload from `offset`: `body` in frames,
/// cut off (the body fails) after `cut` bytes when given.
async fn part(app: &App, token: &str, id: &str, offset: u64, body: Vec<u8>, cut: Option<usize>) -> (StatusCode, Value) {
    let frames: Vec<Result<Vec<u8>, std::io::Error>> = match cut {
        Some(at) => vec![Ok(body[..at].to_vec()), Err(std::io::Error::other("the network went away"))],
        None => body.chunks(100_000).map(|c| Ok(c.to_vec())).collect(),
    };
    let req = Request::builder()
        .method("PUT")
        .uri(format!("/v1/uploads/{id}?offset={offset}"))
        .header("authorization", format!("Bearer {token}"))
        .body(Body::from_stream(futures_util::stream::iter(frames)))
        .unwrap();
    let res = app.router.clone().oneshot(req).await.unwrap();
    let status = res.status();
    let bytes = res.into_body().collect().await.unwrap().to_bytes();
    (status, serde_json::from_slice(&bytes).unwrap_or(Value::Null))
}

lattice_testkit::both_backends! {
    async fn a_resumable_upload_cut_off_goes_on_from_where_its_stored_bytes_end(backend: Backend) {
        let limits = FileLimits { max_bytes: 1024 * 1024, quota_bytes: 1536 * 1024, quota_files: 10 };
        let app = app(backend, limits).await;
        let ana = app.token("t1", "ana", TenantRole::Member, false).await;
        let (_, th) = app.workspace_with_thread(&ana).await;
        let whole: Vec<u8> = [PNG.as_slice(), &(0..700_000u32).map(|i| (i % 253) as u8).collect::<Vec<u8>>()].concat();
        let size = whole.len() as u64;
        // Limits at their edge: the file's, then the room (reserved at once).
        let over = app.post(&format!("/v1/threads/{th}/uploads"), &ana, json!({"name": "x", "size": 1024 * 1024 + 1})).await;
        assert_eq!(over.status, StatusCode::PAYLOAD_TOO_LARGE, "{:?}", over.body);
        let begun = app.post(&format!("/v1/threads/{th}/uploads"), &ana, json!({"name": "shot.png", "size": size})).await;
        assert_eq!(begun.status, StatusCode::OK, "{:?}", begun.body);
        assert_eq!((begun.body["offset"].clone(), begun.body["size"].clone()), (json!(0), json!(size)));
        let id = begun.body["id"].as_str().unwrap().to_owned();
        let room_left = app.post(&format!("/v1/threads/{th}/uploads"), &ana, json!({"name": "y", "size": 1536 * 1024 - size + 1})).await;
        assert_eq!(room_left.status, StatusCode::PAYLOAD_TOO_LARGE, "the room is reserved: {:?}", room_left.body);

        // Cut off 300,000 bytes in: what arrived is kept.
        let (status, _) = part(&app, &ana, &id, 0, whole.clone(), Some(300_000)).await;
        assert_eq!(status, StatusCode::BAD_REQUEST);
        let state = app.get(&format!("/v1/uploads/{id}"), &ana).await;
        assert_eq!(state.body["offset"], 300_000, "{:?}", state.body);
        // Nobody reads it before it is whole; nobody else sees it at all.
        assert_eq!(app.get(&format!("/v1/files/{id}"), &ana).await.status, StatusCode::NOT_FOUND);
        let bob = app.token("t1", "bob", TenantRole::Member, false).await;
        assert_eq!(app.get(&format!("/v1/uploads/{id}"), &bob).await.status, StatusCode::NOT_FOUND);
        // A part from the wrong place is refused, saying where to start.
        let (status, body) = part(&app, &ana, &id, 0, whole.clone(), None).await;
        assert_eq!(status, StatusCode::CONFLICT, "{body}");
        assert_eq!(body["error"]["actual"], 300_000);
        // A second part, then the last, from where each left off.
        let (status, body) = part(&app, &ana, &id, 300_000, whole[300_000..500_000].to_vec(), None).await;
        assert_eq!((status, body["offset"].clone(), body.get("file").cloned()), (StatusCode::OK, json!(500_000), None), "{body}");
        // More than it declared is refused, and what was stored stays.
        let (status, _) = part(&app, &ana, &id, 500_000, [&whole[500_000..], b"extra"].concat(), None).await;
        assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE);
        let offset = app.get(&format!("/v1/uploads/{id}"), &ana).await.body["offset"].as_u64().unwrap();
        let (status, body) = part(&app, &ana, &id, offset, whole[offset as usize..].to_vec(), None).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        let file = body["file"].clone();
        assert_eq!((file["id"].clone(), file["type"].clone(), file["size"].clone()), (json!(id), json!("image/png"), json!(size)));
        assert_eq!(file["sha256"], sha256(&whole), "the digest is of the whole, across its parts");
        // Whole, it reads back whole; its upload is over.
        let who = lattice_testkit::who("t1", "ana", TenantRole::Member);
        let row = app.log.files().head(&who, &id).await.unwrap();
        assert!(app.log.files().chunks(&row, 0, 100).await.unwrap().concat() == whole);
        assert_eq!(app.get(&format!("/v1/uploads/{id}"), &ana).await.status, StatusCode::NOT_FOUND);
    }
}

lattice_testkit::both_backends! {
    async fn a_polyglot_is_typed_by_its_first_bytes_and_never_rendered(backend: Backend) {
        let app = app(backend, FileLimits::default()).await;
        let ana = app.token("t1", "ana", TenantRole::Member, false).await;
        let (_, th) = app.workspace_with_thread(&ana).await;
        // A GIF's signature, then a page that would run if rendered.
        let polyglot = b"GIF89a/*\x01\x00\x01\x00*/=1;<html><script>alert(document.domain)</script></html>".to_vec();
        let (status, file, _) = upload(&app, &ana, &th, "cat.gif.html", polyglot.clone(), 16).await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(file["type"], "image/gif", "typed by its first bytes");
        let id = file["id"].as_str().unwrap();
        // Not an image a decoder takes: no thumbnail, nothing of it shown.
        let thumbnail = app.get(&format!("/v1/files/{id}/thumbnail"), &ana).await;
        assert_eq!(thumbnail.status, StatusCode::UNPROCESSABLE_ENTITY, "{:?}", thumbnail.body);
        // Downloaded, it is bytes to keep, never a page.
        let link = app.post(&format!("/v1/files/{id}/link"), &ana, json!({})).await.body["path"].as_str().unwrap().to_owned();
        let (status, headers, bytes) = download(&app, &link).await;
        assert_eq!((status, bytes), (StatusCode::OK, polyglot));
        let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok()).unwrap_or_default().to_owned();
        assert_eq!((header("content-type"), header("x-content-type-options")), ("application/octet-stream".into(), "nosniff".into()));
        assert!(header("content-disposition").starts_with("attachment;"));
        assert_eq!(header("content-security-policy"), "sandbox; default-src 'none'");
    }
}

lattice_testkit::both_backends! {
    /// The bound, at the default limit: 50 MiB sent to a 10 MiB
    /// limit is refused within the first 10 MiB read (and the frame that
    /// passed it), and nothing of it is kept.
    async fn fifty_mib_to_a_ten_mib_limit_is_refused_within_the_first_ten(backend: Backend) {
        let app = app(backend, FileLimits::default()).await;
        let ana = app.token("t1", "ana", TenantRole::Member, false).await;
        let (_, th) = app.workspace_with_thread(&ana).await;
        const FRAME: usize = 64 * 1024;
        let pulled = Arc::new(AtomicUsize::new(0));
        let counted = pulled.clone();
        // Made as it is read: 800 frames of 64 KiB, never 50 MiB at once.
        let frames = futures_util::stream::iter(0..800).map(move |_| {
            counted.fetch_add(FRAME, Ordering::SeqCst);
            Ok::<_, std::io::Error>(vec![b'x'; FRAME])
        });
        let req = Request::builder()
            .method("POST")
            .uri(format!("/v1/threads/{th}/files?name=huge.bin"))
            .header("authorization", format!("Bearer {ana}"))
            .body(Body::from_stream(frames))
            .unwrap();
        let res = app.router.clone().oneshot(req).await.unwrap();
        assert_eq!(res.status(), StatusCode::PAYLOAD_TOO_LARGE);
        let read = pulled.load(Ordering::SeqCst);
        assert!(read <= 10 * 1024 * 1024 + FRAME, "{read} bytes were read of 50 MiB");
        let body: Value = serde_json::from_slice(&res.into_body().collect().await.unwrap().to_bytes()).unwrap();
        assert_eq!(body["error"]["limit"], 10 * 1024 * 1024);
        // Nothing kept: the whole room is there for a file at the limit.
        let (status, _, _) = upload(&app, &ana, &th, "at-the-limit.bin", vec![b'y'; 10 * 1024 * 1024], 1024 * 1024).await;
        assert_eq!(status, StatusCode::OK);
    }
}

lattice_testkit::both_backends! {
    /// Ten thousand small files: each upload is a write, so a caller's
    /// write rate holds them back (429 past the burst) before the tenant's
    /// count of files would.
    async fn many_small_uploads_meet_the_callers_write_rate(backend: Backend) {
        let log = lattice_testkit::builder_on(lattice_testkit::fresh_db(backend).await).start();
        let limits = lattice_api::guard::Limits { writes_per_sec: 1, write_burst: 5, ..Default::default() };
        let app = App::with_servers(log, true, lattice_api::guard::Guard::new(limits), lattice_agent::Models::scripted(), lattice_connect::Connections::default(), None);
        let ana = app.token("t1", "ana", TenantRole::Member, false).await;
        let (_, th) = app.workspace_with_thread(&ana).await;
        let mut statuses = Vec::new();
        for n in 0..12 {
            statuses.push(upload(&app, &ana, &th, &format!("n{n}.txt"), b"x".to_vec(), 1).await.0);
        }
        let refused = statuses.iter().filter(|s| **s == StatusCode::TOO_MANY_REQUESTS).count();
        assert!(refused >= 4, "{statuses:?}");
        assert!(statuses.iter().all(|s| *s == StatusCode::OK || *s == StatusCode::TOO_MANY_REQUESTS), "{statuses:?}");
    }
}

/// A streamed upload of `frames` of `CHUNK_BYTES` each whose frames after
/// the first wait until `begun` of them have all begun (their first frame
/// read: each one's quota check was made), so they overlap for certain.
fn overlapping(frames: usize, begun: tokio::sync::watch::Sender<usize>, all: usize) -> Body {
    let stream = futures_util::stream::unfold(0, move |sent| {
        let begun = begun.clone();
        async move {
            if sent == frames {
                return None;
            }
            if sent == 0 {
                begun.send_modify(|n| *n += 1);
            } else {
                let mut seen = begun.subscribe();
                let _ = tokio::time::timeout(std::time::Duration::from_secs(10), seen.wait_for(|n| *n >= all)).await;
            }
            Some((Ok::<_, std::io::Error>(vec![b'x'; lattice_log::CHUNK_BYTES]), sent + 1))
        }
    });
    Body::from_stream(stream)
}

lattice_testkit::both_backends! {
    async fn uploads_begun_at_once_never_pass_the_tenants_quota_together(backend: Backend) {
        const CHUNK: u64 = lattice_log::CHUNK_BYTES as u64;
        let limits = FileLimits { max_bytes: 4 * CHUNK, quota_bytes: 3 * CHUNK, quota_files: 8 };
        let app = app(backend, limits).await;
        let ana = app.token("t1", "ana", TenantRole::Member, false).await;
        let (_, th) = app.workspace_with_thread(&ana).await;

        // Six streamed uploads of two chunks each against a room of three:
        // each saw the whole room as it began; together they may not use
        // more than it.
        let (begun, _) = tokio::sync::watch::channel(0usize);
        let sends = (0..6).map(|i| {
            let req = Request::builder()
                .method("POST")
                .uri(format!("/v1/threads/{th}/files?name=f{i}"))
                .header("authorization", format!("Bearer {ana}"))
                .header("content-type", "application/octet-stream")
                .body(overlapping(2, begun.clone(), 6))
                .unwrap();
            app.router.clone().oneshot(req)
        });
        let answers = futures_util::future::join_all(sends).await;
        let mut stored = 0;
        for res in answers {
            let res = res.unwrap();
            match res.status() {
                StatusCode::OK => stored += 2 * CHUNK,
                StatusCode::PAYLOAD_TOO_LARGE => {}
                other => panic!("an upload answered {other}"),
            }
        }
        assert!(stored <= 3 * CHUNK, "{stored} bytes stored against a quota of {}", 3 * CHUNK);
        // What the refused ones wrote was given back: the room is whole
        // but for what was kept.
        let left = 3 * CHUNK - stored;
        let fits = app.post(&format!("/v1/threads/{th}/uploads"), &ana, json!({"name": "rest", "size": left.max(1)})).await;
        assert_eq!(fits.status, if left > 0 { StatusCode::OK } else { StatusCode::PAYLOAD_TOO_LARGE }, "{:?}", fits.body);

        // The count of files, at its edge (another tenant's, untouched by
        // the above): room for exactly one more of eight begun at once.
        let bo = app.token("t2", "bo", TenantRole::Member, false).await;
        let (_, th) = app.workspace_with_thread(&bo).await;
        for i in 0..7 {
            let r = app.post(&format!("/v1/threads/{th}/uploads"), &bo, json!({"name": format!("g{i}"), "size": 1})).await;
            assert_eq!(r.status, StatusCode::OK, "{:?}", r.body);
        }
        let path = format!("/v1/threads/{th}/uploads");
        let begins = (0..8).map(|i| app.post(&path, &bo, json!({"name": format!("h{i}"), "size": 1})));
        let answers = futures_util::future::join_all(begins).await;
        let taken = answers.iter().filter(|r| r.status == StatusCode::OK).count();
        assert_eq!(taken, 1, "{:?}", answers.iter().map(|r| r.status).collect::<Vec<_>>());
        assert!(answers.iter().all(|r| r.status == StatusCode::OK || r.status == StatusCode::PAYLOAD_TOO_LARGE));
    }
}

lattice_testkit::both_backends! {
    async fn two_parts_sent_at_once_are_a_conflict_that_says_where_to_go_on(backend: Backend) {
        const CHUNK: usize = lattice_log::CHUNK_BYTES;
        let app = app(backend, FileLimits::default()).await;
        let ana = app.token("t1", "ana", TenantRole::Member, false).await;
        let (_, th) = app.workspace_with_thread(&ana).await;
        let whole = vec![7u8; 3 * CHUNK];
        let begun = app.post(&format!("/v1/threads/{th}/uploads"), &ana, json!({"name": "two.bin", "size": whole.len()})).await;
        let id = begun.body["id"].as_str().unwrap().to_owned();
        // Both from 0: one writes, the other is told 409 with where the
        // upload stands, never 503.
        let (a, b) = tokio::join!(part(&app, &ana, &id, 0, whole[..2 * CHUNK].to_vec(), None), part(&app, &ana, &id, 0, whole[..2 * CHUNK].to_vec(), None));
        let statuses = [a.0, b.0];
        assert!(statuses.contains(&StatusCode::OK), "{a:?} {b:?}");
        for (status, body) in [&a, &b] {
            assert!(*status == StatusCode::OK || *status == StatusCode::CONFLICT, "{status}: {body}");
            if *status == StatusCode::CONFLICT {
                assert_eq!(body["error"]["type"], "Conflict", "{body}");
                assert!(body["error"]["actual"].is_u64(), "{body}");
            }
        }
        // The part that won stored exactly its bytes from 0: never more
        // (a part that read the upload while the other wrote once stored
        // its bytes after the other's).
        let offset = app.get(&format!("/v1/uploads/{id}"), &ana).await.body["offset"].as_u64().unwrap();
        assert_eq!(offset, 2 * CHUNK as u64, "{a:?} {b:?}");
        let (status, body) = part(&app, &ana, &id, offset, whole[offset as usize..].to_vec(), None).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        assert_eq!(body["file"]["sha256"], sha256(&whole));
    }
}
