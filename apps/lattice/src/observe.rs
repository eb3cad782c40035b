//! What every service records of each HTTP request, by the OpenTelemetry
//! HTTP conventions: a server span named `{method} {route}` (the route's
//! template, never the raw path), a child of the caller's `traceparent`,
//! with the status; the `http.server.request.duration` histogram; and an
//! `X-Request-Id`, kept when the caller sent a sane one, minted otherwise,
//! returned, and on the span with the trace id so that every log line
//! written while the request runs names both.

use std::time::Instant;

use axum::extract::{MatchedPath, Request};
use axum::http::{HeaderName, HeaderValue};
use axum::middleware::Next;
use axum::response::Response;
use lattice_telemetry::KeyValue;
use tracing::Instrument;
use tracing::field::Empty;

pub const REQUEST_ID: HeaderName = HeaderName::from_static("x-request-id");
/// The longest request id kept from a caller.
const REQUEST_ID_CHARS: usize = 128;

static DURATION: lattice_telemetry::Histogram = lattice_telemetry::Histogram::new("http.server.request.duration", "s");
static REQUESTS: lattice_telemetry::Counter = lattice_telemetry::Counter::new("lattice.http.requests");

/// The middleware: runs the request inside its span and records it.
pub async fn observe(mut req: Request, next: Next) -> Response {
    let request_id = request_id(&req);
    req.headers_mut().insert(REQUEST_ID, request_id.clone());
    let method = req.method().to_string();
    let route = req.extensions().get::<MatchedPath>().map(|m| m.as_str().to_owned());
    let name = match &route {
        Some(route) => format!("{method} {route}"),
        None => method.clone(),
    };
    let span = tracing::info_span!(
        "http.request",
        otel.name = %name,
        otel.kind = "server",
        otel.status_code = Empty,
        http.request.method = %method,
        http.route = route.as_deref().unwrap_or_default(),
        http.response.status_code = Empty,
        url.path = %req.uri().path(),
        request_id = request_id.to_str().unwrap_or_default(),
        trace_id = Empty,
    );
    let traceparent = req.headers().get("traceparent").and_then(|v| v.to_str().ok());
    if let Some(parent) = traceparent {
        lattice_telemetry::set_parent(&span, parent);
    }
    if let Some(trace) = lattice_telemetry::trace_id(&span, traceparent) {
        span.record("trace_id", trace);
    }
    let started = Instant::now();
    let mut response = next.run(req).instrument(span.clone()).await;
    let status = response.status().as_u16();
    span.record("http.response.status_code", status);
    if status >= 500 {
        span.record("otel.status_code", "ERROR");
    }
    let mut attributes = vec![KeyValue::new("http.request.method", method), KeyValue::new("http.response.status_code", i64::from(status))];
    if let Some(route) = route {
        attributes.push(KeyValue::new("http.route", route));
    }
    DURATION.record(started.elapsed().as_secs_f64(), &attributes);
    REQUESTS.add(&attributes);
    response.headers_mut().insert(REQUEST_ID, request_id);
    response
}

/// The caller's request id when it is short and plain (it goes into every
/// log line), a new one otherwise.
fn request_id(req: &Request) -> HeaderValue {
    let sane = |v: &&HeaderValue| {
        let bytes = v.as_bytes();
        !bytes.is_empty() && bytes.len() <= REQUEST_ID_CHARS && bytes.iter().all(|b| b.is_ascii_alphanumeric() || b"-_.:".contains(b))
    };
    match req.headers().get(REQUEST_ID).filter(sane) {
        Some(kept) => kept.clone(),
        None => HeaderValue::from_str(&ulid::Ulid::generate().to_string().to_lowercase()).expect("a ULID is a header value"),
    }
}

#[cfg(test)]
mod tests {
    use axum::body::Body;
    use axum::routing::get;
    use tower::ServiceExt;

    async fn answer(request_id: Option<&str>) -> (u16, String) {
        let app = axum::Router::new().route("/v1/things/{id}", get(|| async { "ok" })).layer(axum::middleware::from_fn(super::observe));
        let mut req = axum::http::Request::get("/v1/things/7");
        if let Some(id) = request_id {
            req = req.header("x-request-id", id);
        }
        let res = app.oneshot(req.body(Body::empty()).unwrap()).await.unwrap();
        (res.status().as_u16(), res.headers().get("x-request-id").unwrap().to_str().unwrap().to_owned())
    }

    /// What a JSON log line written inside a request holds: the request id
    /// and the caller's trace id, from the request's span.
    #[tokio::test]
    async fn a_log_line_inside_a_request_names_its_request_and_trace() {
        #[derive(Clone, Default)]
        struct Lines(std::sync::Arc<std::sync::Mutex<Vec<u8>>>);
        impl std::io::Write for Lines {
            fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
                self.0.lock().unwrap().extend_from_slice(buf);
                Ok(buf.len())
            }
            fn flush(&mut self) -> std::io::Result<()> {
                Ok(())
            }
        }
        let lines = Lines::default();
        let writer = lines.clone();
        let subscriber = tracing_subscriber::fmt().json().flatten_event(true).with_writer(move || writer.clone()).finish();
        let _guard = tracing::subscriber::set_default(subscriber);
        // Another test's thread may have had the span's callsite cached as
        // of no interest before this subscriber existed: look again.
        tracing::callsite::rebuild_interest_cache();
        let app = axum::Router::new()
            .route(
                "/v1/things/{id}",
                get(|| async {
                    tracing::info!("handled");
                    "ok"
                }),
            )
            .layer(axum::middleware::from_fn(super::observe));
        let req = axum::http::Request::get("/v1/things/7")
            .header("x-request-id", "req-7")
            .header("traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
            .body(Body::empty())
            .unwrap();
        app.oneshot(req).await.unwrap();
        let text = String::from_utf8(lines.0.lock().unwrap().clone()).unwrap();
        let line: serde_json::Value = serde_json::from_str(text.lines().find(|l| l.contains("handled")).expect("the handler's line")).unwrap();
        assert_eq!(line["span"]["request_id"], "req-7", "{line}");
        assert_eq!(line["span"]["trace_id"], "4bf92f3577b34da6a3ce929d0e0e4736", "{line}");
        assert_eq!(line["span"]["http.route"], "/v1/things/{id}", "{line}");
    }

    #[tokio::test]
    async fn a_request_id_is_kept_when_sane_and_minted_otherwise() {
        assert_eq!(answer(Some("req-42.a:b_c")).await, (200, "req-42.a:b_c".to_owned()));
        let (_, minted) = answer(None).await;
        assert_eq!(minted.len(), 26, "{minted}");
        let at_limit = "x".repeat(128);
        assert_eq!(answer(Some(&at_limit)).await, (200, at_limit.clone()));
        let (_, replaced) = answer(Some(&"x".repeat(129))).await;
        assert_eq!(replaced.len(), 26);
        let (_, replaced) = answer(Some("has space")).await;
        assert_ne!(replaced, "has space");
    }
}
