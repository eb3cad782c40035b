//! The people's HTTP client: every request through the edge, timed and
//! counted by kind. A cut connection or the edge's 502/503/504 (a replica
//! gone mid-request) is tried again, up to four more times with a growing
//! pause, as a client retries; what a retry recovered counts as
//! recovered, not as an error. What still fails, any other 5xx and every
//! 4xx (none is expected of this traffic) is an error a person saw.

use std::sync::Arc;
use std::time::{Duration, Instant};

use reqwest::header::HeaderMap;
use reqwest::{Method, Response};
use serde_json::Value;

use super::stats::{Outcome, Stats};

const ATTEMPTS: u32 = 5;
/// A JSON request's own bound; streams have none.
const TIMEOUT: Duration = Duration::from_secs(30);

#[derive(Clone)]
pub struct Api {
    http: reqwest::Client,
    pub base: String,
    pub stats: Arc<Stats>,
}

/// A request that may be sent again.
pub struct Request<'a> {
    pub method: Method,
    pub path: &'a str,
    /// Empty for none.
    pub token: &'a str,
    pub body: Option<&'a Value>,
    pub headers: Vec<(&'static str, String)>,
    /// `Accept: text/event-stream`, and no time bound.
    pub stream: bool,
}

impl<'a> Request<'a> {
    pub fn new(method: Method, path: &'a str, token: &'a str, body: Option<&'a Value>) -> Self {
        Self { method, path, token, body, headers: Vec::new(), stream: false }
    }

    pub fn get(path: &'a str, token: &'a str) -> Self {
        Self::new(Method::GET, path, token, None)
    }

    pub fn post(path: &'a str, token: &'a str, body: &'a Value) -> Self {
        Self::new(Method::POST, path, token, Some(body))
    }

    pub fn streamed(mut self) -> Self {
        self.stream = true;
        self
    }

    pub fn header(mut self, name: &'static str, value: impl Into<String>) -> Self {
        self.headers.push((name, value.into()));
        self
    }
}

/// How a request ended, retries done.
pub enum Exchange {
    /// 2xx: its headers and body, and whether it took a retry.
    Answered { headers: HeaderMap, body: String, retried: bool },
    /// A 4xx, or a 5xx that is not the edge's word on a replica: why.
    Refused(String),
    /// Still cut or unavailable after every attempt: why.
    Failed(String),
}

fn retryable(status: u16) -> bool {
    matches!(status, 502..=504)
}

/// `422 ValidationFailed …`, short.
fn refusal(status: u16, body: &str) -> String {
    let parsed: Value = serde_json::from_str(body).unwrap_or(Value::Null);
    let kind = parsed["error"]["type"].as_str().unwrap_or("");
    let message: String = parsed["error"]["message"].as_str().unwrap_or(body).chars().take(120).collect();
    format!("{status} {kind} {message}").trim_end().to_owned()
}

async fn pause(attempt: u32) {
    if attempt > 0 {
        tokio::time::sleep(Duration::from_millis(200 << (attempt - 1))).await;
    }
}

impl Api {
    pub fn new(base: &str, stats: Arc<Stats>) -> Self {
        let http = crate::setup::http().build().expect("an HTTP client");
        Self { http, base: base.to_owned(), stats }
    }

    /// A JSON request: its body when it answered 2xx, else `None`; counted
    /// under `kind` either way.
    pub async fn call(&self, kind: &'static str, request: Request<'_>) -> Option<Value> {
        let start = Instant::now();
        match self.exchange(&request).await {
            Exchange::Answered { body, retried, .. } => {
                self.stats.record(kind, start.elapsed(), if retried { Outcome::Recovered } else { Outcome::Ok });
                Some(serde_json::from_str(&body).unwrap_or(Value::Null))
            }
            Exchange::Refused(why) | Exchange::Failed(why) => {
                self.stats.record(kind, start.elapsed(), Outcome::Failed(why));
                None
            }
        }
    }

    /// The request, retried as the module says; nothing counted.
    pub async fn exchange(&self, request: &Request<'_>) -> Exchange {
        let mut why = String::new();
        for attempt in 0..ATTEMPTS {
            pause(attempt).await;
            let answer = match self.send(request).await {
                Ok(r) => r,
                Err(e) => {
                    why = e;
                    continue;
                }
            };
            let status = answer.status().as_u16();
            let headers = answer.headers().clone();
            let body = match answer.text().await {
                Ok(body) => body,
                Err(e) => {
                    why = format!("the answer was cut: {}", without_url(e));
                    continue;
                }
            };
            if retryable(status) {
                why = refusal(status, &body);
                continue;
            }
            if !(200..300).contains(&status) {
                return Exchange::Refused(refusal(status, &body));
            }
            return Exchange::Answered { headers, body, retried: attempt > 0 };
        }
        Exchange::Failed(format!("{why} ({ATTEMPTS} attempts)"))
    }

    /// A stream's response once it answered 2xx, retried like a call, and
    /// whether it took a retry; a refusal is counted under `kind`, and
    /// the caller counts what it then reads.
    pub async fn open(&self, kind: &'static str, request: Request<'_>) -> Option<(Response, bool)> {
        let start = Instant::now();
        let mut why = String::new();
        for attempt in 0..ATTEMPTS {
            pause(attempt).await;
            match self.send(&request).await {
                Ok(r) if r.status().is_success() => return Some((r, attempt > 0)),
                Ok(r) => {
                    let status = r.status().as_u16();
                    why = refusal(status, &r.text().await.unwrap_or_default());
                    if !retryable(status) {
                        self.stats.record(kind, start.elapsed(), Outcome::Failed(why));
                        return None;
                    }
                }
                Err(e) => why = e,
            }
        }
        self.stats.record(kind, start.elapsed(), Outcome::Failed(format!("{why} ({ATTEMPTS} attempts)")));
        None
    }

    async fn send(&self, request: &Request<'_>) -> Result<Response, String> {
        let mut builder = self.http.request(request.method.clone(), format!("{}{}", self.base, request.path));
        if !request.token.is_empty() {
            builder = builder.bearer_auth(request.token);
        }
        if let Some(body) = request.body {
            builder = builder.json(body);
        }
        for (name, value) in &request.headers {
            builder = builder.header(*name, value);
        }
        builder = if request.stream { builder.header("accept", "text/event-stream") } else { builder.timeout(TIMEOUT) };
        builder.send().await.map_err(|e| format!("connection: {}", without_url(e)))
    }
}

/// A reqwest error's text, its causes included, without the URL (ids
/// differ each time; failures are grouped by their text).
pub fn without_url(e: reqwest::Error) -> String {
    let e = e.without_url();
    let mut text = e.to_string();
    let mut source = std::error::Error::source(&e);
    while let Some(s) = source {
        text = format!("{text}: {s}");
        source = s.source();
    }
    text.chars().take(160).collect()
}
