//! A form with a required file field, answered in Chromium with an image
//! and a PDF (docs/FILES.md), on `lattice up` (SQLite, its bridge in
//! process) and on the multi-process stack (PostgreSQL, its bridge a
//! process, the shipped NATS users): the submission's references, the
//! thumbnail, the download (an attachment, from the apps origin), the
//! bridged payload and the bytes a rule reads from the object store agree.

use std::time::Duration;

use async_nats::jetstream;
use futures_util::StreamExt;
use lattice_e2e::browser::Chrome;
use lattice_e2e::{Client, Deployment, On, UpProcess};
use playwright_rs::protocol::FilePayload;
use serde_json::{Value, json};
use sha2::Digest;

const PNG: &[u8] = include_bytes!("../../data/shot.png");
const PDF: &[u8] = b"%PDF-1.7\n1 0 obj <<>> endobj\ntrailer <<>>\n%%EOF\n";

fn sha256(bytes: &[u8]) -> String {
    sha2::Sha256::digest(bytes).iter().map(|b| format!("{b:02x}")).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_form_is_answered_with_an_image_and_a_pdf_and_every_copy_agrees() {
    let nats = lattice_testkit::nats::NatsServer::start();
    let up = UpProcess::start_with(&[("LATTICE_NATS_URL", &nats.url)]).await;
    let rules = async_nats::connect(&nats.url).await.unwrap();
    answered_with_files(Deployment::Up(up), rules).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_form_is_answered_with_an_image_and_a_pdf_and_every_copy_agrees_on_the_stack() {
    let deployment = Deployment::start(On::Stack).await;
    let Deployment::Stack(stack) = &deployment else { unreachable!() };
    let (user, password) = lattice_stack::NATS_USERS[1];
    let rules = async_nats::ConnectOptions::with_user_and_password(user.into(), password.into()).connect(&stack.nats_url).await.unwrap();
    answered_with_files(deployment, rules).await;
}

async fn answered_with_files(deployment: Deployment, rules: async_nats::Client) {
    let (base, apps) = (deployment.base().to_owned(), deployment.apps().to_owned());
    let ana = Client::sign_in(&base, "acme", "ana").await;
    let (_, th) = super::workspace_with_thread(&ana, "Incident").await;
    let form = ana
        .ok(
            "POST",
            &format!("/v1/threads/{th}/artifacts"),
            json!({"kind": "form", "data": {
                "title": "What did you see?",
                "schema": {"type": "object", "required": ["attachments"], "properties": {
                    "attachments": {"type": "array", "title": "Screenshot and signed report", "minItems": 2, "maxItems": 3,
                        "items": {"type": "string", "format": "file", "accept": ["image/*", "application/pdf"], "maxSize": 1048576}}
                }},
                "ui": {"submit_label": "Send the report"},
                "submissions": "once"
            }}),
        )
        .await;
    let form_id = form["id"].as_str().unwrap().to_owned();

    let chrome = Chrome::launch().await;
    let (w, console) = chrome.window_with_console(&base, &ana.token, &format!("/t/{th}")).await;
    let input = format!("form-{form_id}-attachments");
    w.until(&format!("() => document.getElementById('{input}')?.type === 'file'"), "the file input").await;
    assert_eq!(w.eval::<String>(&format!("() => document.getElementById('{input}').accept")).await, "image/*,application/pdf");
    // Sent with nothing attached: the required field says so, and nothing is sent.
    w.page.get_by_text("Send the report", true).click(None).await.unwrap();
    w.until(&format!("() => document.getElementById('{input}-error').textContent.length > 0"), "the required refusal").await;
    let files = [
        FilePayload::new("screen shot.png", "image/png", PNG.to_vec()),
        // The browser says text; the server decides from the bytes.
        FilePayload::new("signed.pdf", "text/plain", PDF.to_vec()),
    ];
    w.page.locator(format!("#{input}")).set_input_files_payload_multiple(&files, None).await.unwrap();
    w.until(
        "() => document.querySelectorAll('.attached-file a.download').length === 2 && document.querySelector('.attached-file img.thumbnail')?.naturalWidth > 0",
        "both files listed, with a thumbnail and their download links",
    )
    .await;
    let shown: Vec<Value> = w
        .eval(
            "() => [...document.querySelectorAll('.attached-file')].map(li => ({
                id: li.dataset.file,
                name: li.querySelector('.file-name').textContent,
                href: li.querySelector('a.download').href,
                thumbnail: li.querySelector('img.thumbnail')?.naturalWidth ?? 0,
                src: li.querySelector('img.thumbnail')?.getAttribute('src') ?? ''
            }))",
        )
        .await;
    assert_eq!(shown.len(), 2);
    assert_eq!((shown[0]["name"].clone(), shown[1]["name"].clone()), (json!("screen shot.png"), json!("signed.pdf")));
    assert!(shown[0]["thumbnail"].as_u64().unwrap() > 0, "the image has its thumbnail: {shown:?}");
    assert!(shown[0]["src"].as_str().unwrap().starts_with("blob:"), "the thumbnail is the server's, fetched: {shown:?}");
    assert_eq!(shown[1]["thumbnail"], 0, "a PDF has none");
    w.page.get_by_text("Send the report", true).click(None).await.unwrap();
    w.until(
        // A form answered once shows that it is, in place of its fields.
        &format!("() => document.querySelector('.answered')?.textContent === 'Already answered.' || document.querySelector('#form-{form_id} .form-errors')?.textContent"),
        "the answered note",
    )
    .await;
    let refused: String = w.eval(&format!("() => document.querySelector('#form-{form_id} .form-errors')?.textContent ?? ''")).await;
    assert_eq!(refused, "", "the form was refused");
    // The form's list names the files the answer attached.
    w.until("() => document.querySelector('.submissions li') !== null", "the submission listed").await;
    let listed: String = w.eval("() => document.querySelector('.submissions li').textContent").await;
    assert_eq!(listed, "ana: attachments: screen shot.png, signed.pdf");

    // The bridged payload, as a rule reads it.
    let js = jetstream::new(rules.clone());
    let message = next_on(&js, "lattice.*.*.ui.form_submitted").await;
    let submission_id = message["form"]["submission_id"].as_str().expect("a form's submission").to_owned();
    let submission = ana.ok("GET", &format!("/v1/artifacts/{submission_id}"), Value::Null).await;
    let references = submission["data"]["files"].clone();
    assert_eq!(message["files"], references, "the bridged references are the submission's");
    let ids: Vec<&str> = references.as_array().unwrap().iter().map(|r| r["id"].as_str().unwrap()).collect();
    assert_eq!(ids, [shown[0]["id"].as_str().unwrap(), shown[1]["id"].as_str().unwrap()]);
    assert_eq!(submission["data"]["values"]["attachments"], json!(ids));
    for (reference, (bytes, media_type)) in references.as_array().unwrap().iter().zip([(PNG, "image/png"), (PDF, "application/pdf")]) {
        assert_eq!((reference["type"].as_str(), reference["size"].as_u64()), (Some(media_type), Some(bytes.len() as u64)));
        assert_eq!(reference["sha256"], sha256(bytes));
    }

    // The downloads: from the apps origin, as attachments, the same bytes.
    for (shown, bytes) in shown.iter().zip([PNG, PDF]) {
        let href = shown["href"].as_str().unwrap();
        assert!(href.starts_with(&format!("{apps}/files/")), "{href} is not on the apps origin {apps}");
        let got = reqwest::get(href).await.unwrap();
        assert_eq!(got.status(), 200);
        let header = |name: &str| got.headers().get(name).and_then(|v| v.to_str().ok()).unwrap_or_default().to_owned();
        assert!(header("content-disposition").starts_with("attachment;"), "{}", header("content-disposition"));
        assert_eq!(header("content-type"), "application/octet-stream");
        assert_eq!(got.bytes().await.unwrap().as_ref(), bytes);
    }
    // The thumbnail is a PNG the server made, not the upload.
    let thumbnail = ana.http.get(format!("{base}/v1/files/{}/thumbnail", ids[0])).bearer_auth(&ana.token).send().await.unwrap();
    assert_eq!(thumbnail.headers()["content-type"], "image/png");
    let made = thumbnail.bytes().await.unwrap();
    assert!(made.starts_with(b"\x89PNG") && made.as_ref() != PNG);

    // The rule reads the same bytes from the tenant's bucket.
    let store = js.get_object_store("LATTICE_FILES_acme").await.expect("the tenant's bucket");
    for (reference, bytes) in references.as_array().unwrap().iter().zip([PNG, PDF]) {
        let mut object = store.get(reference["id"].as_str().unwrap()).await.expect("the file in the object store");
        let mut read = Vec::new();
        tokio::io::AsyncReadExt::read_to_end(&mut object, &mut read).await.unwrap();
        assert_eq!(sha256(&read), reference["sha256"].as_str().unwrap());
        assert_eq!(read, bytes);
    }
    assert!(console.errors().is_empty(), "the page logged errors: {:?}", console.errors());
}

/// The first message on `filter`, through a consumer of the rule's own.
async fn next_on(js: &jetstream::Context, filter: &str) -> Value {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    let stream = loop {
        match js.get_stream("LATTICE").await {
            Ok(stream) => break stream,
            Err(e) if tokio::time::Instant::now() >= deadline => panic!("no stream: {e}"),
            Err(_) => tokio::time::sleep(Duration::from_millis(200)).await,
        }
    };
    let consumer = stream.create_consumer(jetstream::consumer::pull::Config { filter_subject: filter.into(), ..Default::default() }).await.unwrap();
    let mut messages = consumer.messages().await.unwrap();
    let message = tokio::time::timeout_at(deadline, messages.next()).await.unwrap_or_else(|_| panic!("nothing on {filter}")).unwrap().unwrap();
    message.ack().await.unwrap();
    serde_json::from_slice(&message.payload).unwrap()
}

/// A file of 2 MiB goes up resumably, with a progress bar: its first part
/// is cut off on the way (the network fails it), and the chat takes the
/// upload up from where the server's bytes end.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_large_files_upload_cut_off_is_taken_up_again_with_a_progress_bar() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    let up = UpProcess::start().await;
    let ana = Client::sign_in(&up.base, "acme", "ana").await;
    let (_, th) = super::workspace_with_thread(&ana, "Big").await;
    let form = ana
        .ok(
            "POST",
            &format!("/v1/threads/{th}/artifacts"),
            json!({"kind": "form", "data": {"title": "The dump", "submissions": "once", "schema": {"type": "object", "required": ["dump"],
                "properties": {"dump": {"type": "string", "format": "file", "title": "Dump", "maxSize": 5242880}}}}}),
        )
        .await;
    let form_id = form["id"].as_str().unwrap().to_owned();
    let chrome = Chrome::launch().await;
    let (w, _) = chrome.window_with_console(&up.base, &ana.token, &format!("/t/{th}")).await;
    let input = format!("form-{form_id}-dump");
    w.until(&format!("() => document.getElementById('{input}')?.type === 'file'"), "the file input").await;
    // The first part of the upload fails on the network; the rest go.
    let parts = Arc::new(AtomicUsize::new(0));
    let seen = parts.clone();
    w.page
        .route("**/v1/uploads/**", move |route| {
            let seen = seen.clone();
            async move {
                if route.request().method() == "PUT" && seen.fetch_add(1, Ordering::SeqCst) == 0 {
                    route.abort(Some("connectionreset")).await
                } else {
                    route.continue_(None).await
                }
            }
        })
        .await
        .unwrap();
    let _: bool = w
        .eval(
            "() => { window.sawProgress = false;
                new MutationObserver(() => { if (document.querySelector('.upload-progress progress')) window.sawProgress = true; })
                    .observe(document.body, {childList: true, subtree: true}); return true; }",
        )
        .await;
    let big: Vec<u8> = [b"%PDF-1.7\n".as_slice(), &(0..2 * 1024 * 1024u32).map(|i| (i % 241) as u8).collect::<Vec<u8>>()].concat();
    w.page.locator(format!("#{input}")).set_input_files_payload(FilePayload::new("dump.pdf", "application/pdf", big.clone()), None).await.unwrap();
    w.until_within("() => document.querySelector('.attached-file a.download') !== null", "the file uploaded", Duration::from_secs(30)).await;
    assert!(w.eval::<bool>("() => window.sawProgress").await, "no progress bar was shown");
    assert!(parts.load(Ordering::SeqCst) >= 2, "the cut-off part was sent again");
    let id: String = w.eval("() => document.querySelector('.attached-file').dataset.file").await;
    let stored = ana.ok("GET", &format!("/v1/files/{id}"), Value::Null).await;
    assert_eq!((stored["size"].as_u64(), stored["sha256"].as_str()), (Some(big.len() as u64), Some(sha256(&big).as_str())));
    assert_eq!(stored["type"], "application/pdf");
}

/// An agent's ask_form with a file field, answered in the chat: the file
/// uploaded in the request's own form, the answer its id, and the model
/// told the file's name, type, size and (a text file) its first bytes,
/// fenced as untrusted.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agents_ask_form_with_a_file_field_is_answered_in_the_chat() {
    use lattice_e2e::model::{ModelService, Reply, text, tool_call};
    let model = ModelService::default();
    let base_url = model.clone().start().await;
    let up = UpProcess::start_with(&[("LATTICE_MODEL_BASE_URL", base_url.as_str()), ("LATTICE_MODEL_NAME", "files-test")]).await;
    let alice = Client::sign_in_as(&up.base, json!({"tenant": "t-files", "user": "alice"})).await;
    let (_, th) = super::workspace_with_thread(&alice, "Logs").await;
    let asked = json!({"title": "The failing job's log", "schema": {"type": "object", "required": ["log"], "properties": {
        "log": {"type": "string", "format": "file", "title": "Log", "accept": ["text/plain"]}}}});
    model.then(Reply::Stream { chunks: vec![tool_call("call_log", lattice_ui::asks::ASK_FORM, true, &asked.to_string())], pause: Duration::ZERO });
    model.then(Reply::Stream { chunks: vec![text("I read it.")], pause: Duration::ZERO });
    alice.ok("POST", &format!("/v1/threads/{th}/runs"), json!({"prompt": "Why did the job fail?"})).await;

    let chrome = Chrome::launch().await;
    let w = chrome.window(&up.base, &alice.token, "light", &format!("/t/{th}")).await;
    w.until("() => document.querySelector('.form-request input[type=file]') !== null", "the request's file input").await;
    let log = b"step 3: error: the disk is full\n".to_vec();
    w.page
        .locator(".form-request input[type=file]")
        .set_input_files_payload(FilePayload::new("job.log", "text/plain", log.clone()), None)
        .await
        .unwrap();
    w.until("() => document.querySelector('.form-request .attached-file a.download') !== null", "the log uploaded").await;
    w.page.locator(".form-request button[type=submit]").click(None).await.unwrap();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    while model.asked.lock().unwrap().len() < 2 {
        assert!(tokio::time::Instant::now() < deadline, "the run never went on");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let told = model.asked.lock().unwrap()[1].to_string();
    assert!(told.contains("attached files") && told.contains("job.log") && told.contains("text/plain"), "{told}");
    assert!(told.contains("step 3: error: the disk is full"), "the text file's bytes reach the model: {told}");
    w.until("() => [...document.querySelectorAll('.message.agent .text')].some(t => t.textContent === 'I read it.')", "the agent's reply").await;
}
