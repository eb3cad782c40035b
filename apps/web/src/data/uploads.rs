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

use crate::data::request::{self, Failure, JSON, Result, js};
use crate::data::{api_client, page_config, token};

/// Uploads `file` to `thread`; `progress` is told the share sent (0 to 1)
/// as the bytes go. The answer is the file as the server typed it.
pub async fn upload(thread: &str, file: &File, progress: Rc<dyn Fn(f64)>) -> Result<FileRef> {
    let xhr = XmlHttpRequest::new().map_err(js)?;
    let path = format!("/v1/threads/{thread}/files?name={}", api_client::query(&file.name()));
    xhr.open_with_async("POST", &path, true).map_err(js)?;
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
    xhr.send_with_opt_blob(Some(file)).map_err(js)?;
    JsFuture::from(finished).await.map_err(js)?;
    drop(on_progress);
    let status = xhr.status().map_err(js)?;
    let text = xhr.response_text().map_err(js)?.unwrap_or_default();
    match status {
        0 => Err(Failure::Unreachable("the upload was cut off".into())),
        200..=299 => lattice_core::json::from_str(&text).map_err(|e| Failure::Unreachable(format!("an unexpected answer: {e}"))),
        _ => Err(request::refusal(status, &text)),
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
