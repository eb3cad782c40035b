//! Files attached to answers (docs/FILES.md): an upload over
//! `XMLHttpRequest`, which alone reports the bytes sent as they go (a
//! progress bar), a thumbnail made by the server, and a download link on
//! the apps origin.

use std::rc::Rc;

use lattice_core::FileRef;
use serde::Deserialize;
use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::Closure;
use wasm_bindgen_futures::JsFuture;
use web_sys::{Blob, File, ProgressEvent, Url, XmlHttpRequest};

use lattice_wire::UploadView;

use crate::data::request::{self, Failure, JSON, Result, js};
use crate::data::{api_client, page_config, token};

/// Files from this size up go up resumably: a part cut off (a network
/// that drops) is taken up from where the server's bytes end.
const RESUMABLE_FROM: u64 = 1024 * 1024;
/// Times a resumable upload is taken up again before it gives up.
const RETRIES: u32 = 5;

/// Uploads `file` to `thread`; `progress` is told the share sent (0 to 1)
/// as the bytes go. The answer is the file as the server typed it.
pub async fn upload(thread: &str, file: &File, progress: Rc<dyn Fn(f64)>) -> Result<FileRef> {
    let size = file.size() as u64;
    if size < RESUMABLE_FROM {
        let path = format!("/v1/threads/{thread}/files?name={}", api_client::query(&file.name()));
        let (status, text) = send("POST", &path, file, progress).await?;
        return answer(status, &text);
    }
    let begun: UploadView =
        api_client::post(&format!("/v1/threads/{thread}/uploads"), &serde_json::json!({"name": file.name(), "size": size})).await?;
    let mut offset = begun.offset;
    let mut tries = 0;
    loop {
        let part = file.slice_with_f64_and_f64(offset as f64, size as f64).map_err(js)?;
        let told = progress.clone();
        let from = offset as f64;
        let shared = Rc::new(move |share: f64| told((from + share * (size as f64 - from)) / size as f64));
        let (status, text) = send("PUT", &format!("/v1/uploads/{}?offset={offset}", begun.id), &part, shared).await?;
        if (200..300).contains(&status) {
            let view: UploadView = lattice_core::json::from_str(&text).map_err(|e| Failure::Unreachable(format!("an unexpected answer: {e}")))?;
            match view.file {
                Some(view) => return Ok(view.file),
                None => offset = view.offset,
            }
            continue;
        }
        // Cut off (no answer, or the part broke): ask where the stored
        // bytes end, and go on from there.
        let cut = status == 0 || status == 400 || status >= 500;
        tries += 1;
        if !cut || tries > RETRIES {
            return Err(if status == 0 { Failure::Unreachable("the upload was cut off".into()) } else { request::refusal(status, &text) });
        }
        wait(500 * tries).await;
        let view: UploadView = api_client::get(&format!("/v1/uploads/{}", begun.id)).await?;
        offset = view.offset;
    }
}

/// Waits `ms` milliseconds.
async fn wait(ms: u32) {
    let promise = js_sys::Promise::new(&mut |resolve, _| {
        if let Some(window) = web_sys::window() {
            let _ = window.set_timeout_with_callback_and_timeout_and_arguments_0(&resolve, ms as i32);
        }
    });
    let _ = JsFuture::from(promise).await;
}

/// Sends `body` over `XMLHttpRequest` (which alone reports the bytes sent
/// as they go) with the session's token: the status (0 when cut off) and
/// the answer's text.
async fn send(method: &str, path: &str, body: &Blob, progress: Rc<dyn Fn(f64)>) -> Result<(u16, String)> {
    let xhr = XmlHttpRequest::new().map_err(js)?;
    xhr.open_with_async(method, path, true).map_err(js)?;
    xhr.set_request_header("accept", JSON).map_err(js)?;
    if let Some(token) = token::token() {
        xhr.set_request_header("authorization", &format!("Bearer {token}")).map_err(js)?;
    }
    let on_progress = Closure::<dyn FnMut(ProgressEvent)>::new(move |e: ProgressEvent| {
        if e.length_computable() && e.total() > 0.0 {
            progress(e.loaded() / e.total());
        }
    });
    xhr.upload().map_err(js)?.set_onprogress(Some(on_progress.as_ref().unchecked_ref()));
    let finished = js_sys::Promise::new(&mut |resolve, _| {
        let done = Closure::once_into_js(move || {
            let _ = resolve.call0(&wasm_bindgen::JsValue::NULL);
        });
        xhr.set_onloadend(Some(done.unchecked_ref()));
    });
    xhr.send_with_opt_blob(Some(body)).map_err(js)?;
    JsFuture::from(finished).await.map_err(js)?;
    drop(on_progress);
    let status = xhr.status().map_err(js)?;
    let text = xhr.response_text().map_err(js)?.unwrap_or_default();
    Ok((status, text))
}

fn answer(status: u16, text: &str) -> Result<FileRef> {
    match status {
        0 => Err(Failure::Unreachable("the upload was cut off".into())),
        200..=299 => lattice_core::json::from_str(text).map_err(|e| Failure::Unreachable(format!("an unexpected answer: {e}"))),
        _ => Err(request::refusal(status, text)),
    }
}

/// The server's thumbnail of an image, as an address this page may show
/// (a `blob:` URL; what was uploaded never reaches the page as it came).
pub async fn thumbnail(id: &str) -> Result<String> {
    let response = api_client::open(&format!("/v1/files/{id}/thumbnail"), "image/png", None).await?;
    if !response.ok() {
        return Err(Failure::Unreachable(format!("status {}", response.status())));
    }
    let blob: Blob = JsFuture::from(response.blob().map_err(js)?).await.map_err(js)?.unchecked_into();
    Url::create_object_url_with_blob(&blob).map_err(js)
}

#[derive(Deserialize)]
struct Link {
    path: String,
}

/// An address on the apps origin that downloads the file for a few
/// minutes (never one on this page's origin).
pub async fn download_link(id: &str) -> Result<String> {
    let link: Link = api_client::post(&format!("/v1/files/{id}/link"), &serde_json::json!({})).await?;
    Ok(format!("{}{}", page_config::apps_origin(), link.path))
}

/// A size for a person: bytes, KB or MB.
pub fn size(bytes: u64) -> String {
    match bytes {
        0..1024 => format!("{bytes} bytes"),
        1024..1_048_576 => format!("{:.0} KB", bytes as f64 / 1024.0),
        _ => format!("{:.1} MB", bytes as f64 / 1_048_576.0),
    }
}
