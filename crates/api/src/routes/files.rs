//! Files attached to answers (docs/FILES.md): an upload is the request's
//! body, streamed into the log's database a chunk at a time and refused
//! the moment it passes the file's limit or the tenant's room, never held
//! whole; its type is decided from its content.

use axum::Json;
use axum::body::Body;
use axum::extract::{Path, State};
use futures_util::StreamExt;
use lattice_core::FileRef;
use lattice_core::{Error, ThreadId};
use serde::Deserialize;

use super::path_id;
use crate::error::ApiResult;
use crate::extract::{Caller, Query};
use crate::state::AppState;
use lattice_wire::{ErrorBody, FileView, Posted, UploadView};

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UploadQuery {
    /// The file's name, as the person's device calls it (kept as its last
    /// path segment, without control characters).
    name: String,
}

/// Uploads a file's bytes (the body, any type: the type kept is the one
/// its content says) to a thread, by someone who may answer its forms
/// while forms are on there. Answers the reference a form's file field
/// takes: `{id, name, type, size, sha256}`.
#[utoipa::path(post, path = "/v1/threads/{th}/files", request_body(content = Vec<u8>, content_type = "application/octet-stream"),
    responses((status = 200, body = FileView), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody),
        (status = 413, body = ErrorBody), (status = 423, body = ErrorBody)),
    params(("th" = String, Path), ("name" = String, Query)), security(("bearer" = [])))]
pub async fn upload(
    State(state): State<AppState>,
    Caller(who): Caller,
    Path(th): Path<String>,
    Query(q): Query<UploadQuery>,
    body: Body,
) -> ApiResult<Json<FileView>> {
    let thread = path_id(ThreadId::parse, &th)?;
    let mut upload = state.log.files().upload(&who, &thread, &q.name).await?;
    let mut stream = body.into_data_stream();
    while let Some(frame) = stream.next().await {
        match frame {
            Ok(bytes) => upload.push(&bytes).await?,
            Err(e) => {
                upload.abandon().await;
                return Err(Error::malformed(lattice_core::Code::MalformedBody, format!("the upload was cut off: {e}")).into());
            }
        }
    }
    Ok(Json(view(upload.finish().await?, None)))
}

/// Starts a resumable upload (docs/FILES.md, "Resumable uploads"): for
/// whoever may upload to the thread, its `size` within the file's limit
/// and reserved of the tenant's room now. Its bytes then come with `PUT
/// /v1/uploads/{id}?offset=N`, in one part or several.
#[utoipa::path(post, path = "/v1/threads/{th}/uploads", request_body = lattice_wire::BeginUpload,
    responses((status = 200, body = UploadView), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody),
        (status = 413, body = ErrorBody), (status = 423, body = ErrorBody)),
    params(("th" = String, Path)), security(("bearer" = [])))]
pub async fn begin_upload(
    State(state): State<AppState>,
    Caller(who): Caller,
    Path(th): Path<String>,
    crate::extract::Body(req): crate::extract::Body<lattice_wire::BeginUpload>,
) -> ApiResult<Json<UploadView>> {
    let thread = path_id(ThreadId::parse, &th)?;
    let row = state.log.files().begin_resumable(&who, &thread, &req.name, req.size).await?;
    Ok(Json(UploadView { id: row.id, offset: 0, size: row.size, file: None }))
}

/// Where a resumable upload's stored bytes end: the offset its next part
/// is sent from (for its uploader).
#[utoipa::path(get, path = "/v1/uploads/{id}", responses((status = 200, body = UploadView), (status = 404, body = ErrorBody)),
    params(("id" = String, Path)), security(("bearer" = [])))]
pub async fn upload_state(State(state): State<AppState>, Caller(who): Caller, Path(id): Path<String>) -> ApiResult<Json<UploadView>> {
    let (row, offset) = state.log.files().resumable(&who, &id).await?;
    Ok(Json(UploadView { id: row.id, offset, size: row.size, file: None }))
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PartQuery {
    /// Where this part starts: where the stored bytes end.
    offset: u64,
}

/// A part of a resumable upload, from `offset` (where the stored bytes
/// end; 409 names where, else). The part may end anywhere: what it
/// brought is stored, and a part cut off keeps what arrived. Once all the
/// bytes are there the file is made, typed by its content, and answered.
#[utoipa::path(put, path = "/v1/uploads/{id}", request_body(content = Vec<u8>, content_type = "application/octet-stream"),
    responses((status = 200, body = UploadView), (status = 404, body = ErrorBody), (status = 409, body = ErrorBody), (status = 413, body = ErrorBody)),
    params(("id" = String, Path), ("offset" = u64, Query)), security(("bearer" = [])))]
pub async fn upload_part(
    State(state): State<AppState>,
    Caller(who): Caller,
    Path(id): Path<String>,
    Query(q): Query<PartQuery>,
    body: Body,
) -> ApiResult<Json<UploadView>> {
    let mut upload = state.log.files().resume(&who, &id, q.offset).await?;
    let mut stream = body.into_data_stream();
    while let Some(frame) = stream.next().await {
        match frame {
            Ok(bytes) => upload.push(&bytes).await?,
            Err(e) => {
                // Cut off: what arrived is kept, for the next part.
                upload.pause().await?;
                return Err(Error::malformed(lattice_core::Code::MalformedBody, format!("the part was cut off: {e}")).into());
            }
        }
    }
    if upload.is_whole() {
        let reference = upload.finish().await?;
        let (offset, size) = (reference.size, reference.size);
        return Ok(Json(UploadView { id, offset, size, file: Some(view(reference, None)) }));
    }
    let size = upload.declared();
    let offset = upload.pause().await?;
    Ok(Json(UploadView { id, offset, size, file: None }))
}

/// A file's reference, and whether its bytes were erased (by whom, when),
/// for whoever may read its thread.
#[utoipa::path(get, path = "/v1/files/{id}", responses((status = 200, body = FileView), (status = 404, body = ErrorBody)),
    params(("id" = String, Path)), security(("bearer" = [])))]
pub async fn get(State(state): State<AppState>, Caller(who): Caller, Path(id): Path<String>) -> ApiResult<Json<FileView>> {
    let row = state.log.files().head(&who, &id).await?;
    let erased = row.erased_at.map(|at| (lattice_log::rfc3339(at), row.erased_by.clone().unwrap_or_default()));
    let reference = FileRef { id: row.id, name: row.name, media_type: row.media_type, size: row.size, sha256: row.sha256 };
    Ok(Json(view(reference, erased)))
}

/// Erases a file's bytes (a workspace admin, with a reason kept in the
/// audit): its reference stays in the log, and every reader is told.
#[utoipa::path(post, path = "/v1/files/{id}/erase", request_body = lattice_wire::EraseFile,
    responses((status = 200, body = Posted), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody), (status = 409, body = ErrorBody)),
    params(("id" = String, Path)), security(("bearer" = [])))]
pub async fn erase(
    State(state): State<AppState>,
    Caller(who): Caller,
    Path(id): Path<String>,
    crate::extract::Body(req): crate::extract::Body<lattice_wire::EraseFile>,
) -> ApiResult<Json<Posted>> {
    if req.reason.trim().is_empty() || req.reason.len() > lattice_log::limits::REASON_MAX {
        return Err(Error::field("reason", "maxLength", format!("a reason has 1 to {} bytes", lattice_log::limits::REASON_MAX)).into());
    }
    let seq = state.log.erase_file(&who, &id, &req.reason).await?;
    Ok(Json(Posted { seq }))
}

fn view(reference: FileRef, erased: Option<(String, String)>) -> FileView {
    let (erased_at, erased_by) = erased.unzip();
    FileView { file: reference, erased_at, erased_by }
}

/// A link to the file's bytes, on the apps origin (never the chat's), for
/// whoever may read its thread: `{path, expires_in_secs}`, the path to
/// open on the apps origin. It works for a few minutes, and only while its
/// holder may still read the file.
#[utoipa::path(post, path = "/v1/files/{id}/link", responses((status = 200, body = lattice_wire::FileLink), (status = 404, body = ErrorBody),
    (status = 409, body = ErrorBody)), params(("id" = String, Path)), security(("bearer" = [])))]
pub async fn link(State(state): State<AppState>, Caller(who): Caller, Path(id): Path<String>) -> ApiResult<Json<lattice_wire::FileLink>> {
    let link = state.log.file_link(&who, &id).await?;
    Ok(Json(lattice_wire::FileLink { path: format!("/files/{id}?link={link}"), expires_in_secs: lattice_log::FILE_LINK_TTL.as_secs() }))
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DownloadQuery {
    link: String,
}

/// The apps origin's `/files/{id}?link=…`: a file's bytes, streamed a
/// chunk at a time, as an attachment that nothing renders: no sniffing, a
/// sandboxing policy, the stored type withheld (`application/octet-stream`),
/// never cached.
pub async fn download(State(state): State<AppState>, Path(id): Path<String>, Query(q): Query<DownloadQuery>) -> axum::response::Response {
    use axum::http::{HeaderValue, header};
    use axum::response::IntoResponse;
    let (_, row) = match state.log.file_by_link(&q.link, &id).await {
        Ok(found) => found,
        Err(e) => return crate::error::ApiError(e).into_response(),
    };
    let files = state.log.files().clone();
    let chunks = futures_util::stream::unfold((files, row.clone(), 0i64, false), |(files, row, n, done)| async move {
        if done {
            return None;
        }
        match files.chunks(&row, n, 1).await {
            Ok(mut got) if !got.is_empty() => Some((Ok::<_, std::io::Error>(got.remove(0)), (files, row, n + 1, false))),
            Ok(_) => None,
            Err(e) => Some((Err(std::io::Error::other(e.to_string())), (files, row, n, true))),
        }
    });
    let mut response = Body::from_stream(chunks).into_response();
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("application/octet-stream"));
    headers.insert(header::CONTENT_LENGTH, HeaderValue::from(row.size));
    headers.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    headers.insert(header::CONTENT_SECURITY_POLICY, HeaderValue::from_static("sandbox; default-src 'none'"));
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("private, no-store"));
    headers.insert(header::REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
    if let Ok(disposition) = HeaderValue::from_str(&attachment(&row.name)) {
        headers.insert(header::CONTENT_DISPOSITION, disposition);
    }
    response
}

/// `attachment` with the name as RFC 6266 and RFC 8187 write it: an ASCII
/// fallback, and the UTF-8 name percent-encoded.
fn attachment(name: &str) -> String {
    // Cleaned again: a name kept before the rule held may still lie.
    let name = &lattice_log::file_name(name);
    let ascii: String = name.chars().map(|c| if c.is_ascii_alphanumeric() || "._- ".contains(c) { c } else { '_' }).collect();
    let encoded: String =
        name.bytes().map(|b| if b.is_ascii_alphanumeric() || b"._-".contains(&b) { (b as char).to_string() } else { format!("%{b:02X}") }).collect();
    format!("attachment; filename=\"{ascii}\"; filename*=UTF-8''{encoded}")
}

/// A preview of an attached image: a PNG of at most 256 pixels a side,
/// decoded within limits and encoded again here (`crate::thumbnails`), for
/// whoever may read its thread. Only raster images are previewed (PNG,
/// JPEG, GIF, WebP); anything else is 422.
#[utoipa::path(get, path = "/v1/files/{id}/thumbnail", responses((status = 200, description = "image/png"), (status = 404, body = ErrorBody),
    (status = 409, body = ErrorBody), (status = 422, body = ErrorBody)), params(("id" = String, Path)), security(("bearer" = [])))]
pub async fn thumbnail(State(state): State<AppState>, Caller(who): Caller, Path(id): Path<String>) -> ApiResult<axum::response::Response> {
    use axum::http::{HeaderValue, header};
    use axum::response::IntoResponse;
    let row = state.log.files().head(&who, &id).await?;
    if row.erased_at.is_some() {
        return Err(Error::invalid_state(lattice_core::Code::FileErased, "the file's bytes were erased: there is nothing to preview").into());
    }
    let Some(format) = crate::thumbnails::previewed(&row.media_type) else {
        return Err(
            Error::field("file", "image", format!("a {} file is not previewed: only PNG, JPEG, GIF and WebP images are", row.media_type)).into()
        );
    };
    let bytes = state.log.files().chunks(&row, 0, i64::MAX).await?.concat();
    let png = crate::thumbnails::thumbnail(bytes, format).await?;
    let mut response = png.into_response();
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("image/png"));
    headers.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    headers.insert(header::CONTENT_SECURITY_POLICY, HeaderValue::from_static("default-src 'none'"));
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("private, max-age=300"));
    Ok(response)
}
