//! `lattice healthcheck`: asks this machine's service for `/readyz`, for a
//! container's health check in an image with no HTTP client in it.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

use anyhow::Context;

const PATIENCE: Duration = Duration::from_secs(3);

/// Succeeds when `path` on the service at `addr` (its LATTICE_HTTP_ADDR,
/// reached on loopback when it listens on every address) answers 200.
pub fn check(addr: SocketAddr, path: &str) -> anyhow::Result<()> {
    let target = match addr {
        SocketAddr::V4(a) if a.ip().is_unspecified() => SocketAddr::from(([127, 0, 0, 1], a.port())),
        SocketAddr::V6(a) if a.ip().is_unspecified() => SocketAddr::from((std::net::Ipv6Addr::LOCALHOST, a.port())),
        other => other,
    };
    let mut stream = TcpStream::connect_timeout(&target, PATIENCE).with_context(|| format!("connecting to {target}"))?;
    stream.set_read_timeout(Some(PATIENCE))?;
    stream.set_write_timeout(Some(PATIENCE))?;
    write!(stream, "GET {path} HTTP/1.1\r\nHost: {target}\r\nConnection: close\r\n\r\n")?;
    // The status line and the body's first words are all a person needs.
    let mut answer = Vec::new();
    stream.take(4096).read_to_end(&mut answer).with_context(|| format!("reading {path} from {target}"))?;
    let answer = String::from_utf8_lossy(&answer);
    let status = answer.split_whitespace().nth(1).unwrap_or_default();
    let body = answer.split("\r\n\r\n").nth(1).unwrap_or_default().trim();
    anyhow::ensure!(status == "200", "{path} on {target} answered {status}: {body}");
    Ok(())
}

#[cfg(test)]
mod tests {
    use axum::http::StatusCode;

    async fn serve(status: StatusCode, body: &'static str) -> std::net::SocketAddr {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let app = axum::Router::new().route("/readyz", axum::routing::get(move || async move { (status, body) }));
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        addr
    }

    #[tokio::test(flavor = "multi_thread")]
    async fn ready_passes_and_not_ready_fails_with_its_reason() {
        let ready = serve(StatusCode::OK, "ready").await;
        let waiting = serve(StatusCode::SERVICE_UNAVAILABLE, "run `lattice migrate`").await;
        tokio::task::spawn_blocking(move || {
            super::check(ready, "/readyz").unwrap();
            let err = super::check(waiting, "/readyz").unwrap_err().to_string();
            assert!(err.contains("503") && err.contains("lattice migrate"), "{err}");
            let nobody = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap();
            assert!(super::check(nobody, "/readyz").is_err());
        })
        .await
        .unwrap();
    }
}
