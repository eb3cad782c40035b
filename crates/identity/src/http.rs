//! The one HTTP client every call to a provider goes through (discovery,
//! keys, the token endpoint): redirects are never followed (a provider's
//! endpoints are where its discovery says, nowhere else), every response
//! body is bounded while it is read, and every call has a deadline. It is
//! `openidconnect`'s async client too.

use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use lattice_core::Error;
use openidconnect::{AsyncHttpClient, HttpRequest, HttpResponse};

/// The most a provider's answer may hold: discovery documents and key sets
/// are a few KiB, token responses less.
pub(crate) const BODY_MAX: usize = 256 * 1024;

#[derive(Clone, Debug)]
pub(crate) struct Http {
    client: reqwest::Client,
    timeout: Duration,
}

/// Why a call to a provider failed. Its text names the URL and the cause,
/// never a request's body or headers (which hold the code, the PKCE
/// verifier and the client secret).
#[derive(Debug, thiserror::Error)]
pub(crate) enum HttpError {
    #[error("{0}")]
    Unreachable(String),
    #[error("the answer is over {limit} bytes")]
    TooLarge { limit: usize },
}

impl Http {
    pub(crate) fn new(timeout: Duration) -> Result<Self, Error> {
        // reqwest is built without a TLS provider: install the process's
        // (ring) unless something installed one first.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let client = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .connect_timeout(timeout)
            .timeout(timeout)
            .build()
            .map_err(|e| Error::unavailable(format!("the HTTP client for OpenID Connect providers cannot be made: {e}")))?;
        Ok(Self { client, timeout })
    }

    /// Sends `request`, reading at most `limit` bytes of the answer, all
    /// within `timeout` (the client's when `None`).
    pub(crate) async fn send(&self, request: HttpRequest, limit: usize, timeout: Option<Duration>) -> Result<HttpResponse, HttpError> {
        let mut request = reqwest::Request::try_from(request).map_err(|e| HttpError::Unreachable(chain(&e)))?;
        *request.timeout_mut() = Some(timeout.unwrap_or(self.timeout));
        let mut response = self.client.execute(request).await.map_err(|e| HttpError::Unreachable(chain(&e)))?;
        if response.content_length().is_some_and(|n| n > limit as u64) {
            return Err(HttpError::TooLarge { limit });
        }
        let mut body = Vec::new();
        while let Some(chunk) = response.chunk().await.map_err(|e| HttpError::Unreachable(chain(&e)))? {
            if body.len() + chunk.len() > limit {
                return Err(HttpError::TooLarge { limit });
            }
            body.extend_from_slice(&chunk);
        }
        let mut answer = HttpResponse::new(body);
        *answer.status_mut() = response.status();
        *answer.headers_mut() = std::mem::take(response.headers_mut());
        Ok(answer)
    }

    /// GETs `url` as JSON: its status and body, bounded by `limit`.
    pub(crate) async fn get_json(&self, url: &str, limit: usize, timeout: Option<Duration>) -> Result<HttpResponse, HttpError> {
        let request = openidconnect::http::Request::builder()
            .method(openidconnect::http::Method::GET)
            .uri(url)
            .header(openidconnect::http::header::ACCEPT, "application/json")
            .body(Vec::new())
            .map_err(|e| HttpError::Unreachable(format!("{url} is not a URL to call: {e}")))?;
        self.send(request, limit, timeout).await
    }
}

impl<'c> AsyncHttpClient<'c> for Http {
    type Error = HttpError;
    type Future = Pin<Box<dyn Future<Output = Result<HttpResponse, HttpError>> + Send + 'c>>;

    fn call(&'c self, request: HttpRequest) -> Self::Future {
        Box::pin(self.send(request, BODY_MAX, None))
    }
}

/// An error with its causes, on one line: reqwest's own text stops at
/// "error sending request", the cause (refused, timed out) is below it.
fn chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        if !text.contains(&cause_text) {
            text.push_str(": ");
            text.push_str(&cause_text);
        }
        source = cause.source();
    }
    text
}

/// Whether a response says its body is JSON (`application/json`, any
/// parameters; the JWK set's own type too).
pub(crate) fn is_json(response: &HttpResponse) -> bool {
    response
        .headers()
        .get(openidconnect::http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .map(|v| v.trim().to_ascii_lowercase())
        .is_some_and(|v| v == "application/json" || v == "application/jwk-set+json")
}
