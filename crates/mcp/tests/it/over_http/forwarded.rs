//! The name and scheme `/mcp` writes into its protected-resource metadata
//! (RFC 9728) and its `WWW-Authenticate` challenge: a client's own
//! `X-Forwarded-Host`/`-Proto` are ignored; through the edge, which sets
//! them itself, the edge's are used, because its address is a trusted
//! proxy's.

use std::net::SocketAddr;

use axum::body::Body;
use axum::extract::ConnectInfo;
use axum::http::{Request, StatusCode};
use http_body_util::BodyExt;
use lattice_edge::TrustedProxies;
use lattice_http::guard::Limits;
use serde_json::Value;
use tower::ServiceExt;

use super::Replica;

const METADATA: &str = "/.well-known/oauth-protected-resource/mcp";

/// The resource the metadata names and the metadata URL the challenge of
/// a request without a token names, asked of `router` with `headers` (from
/// `peer`, when known).
async fn told(router: &axum::Router, headers: &[(&str, &str)], peer: Option<&str>) -> (String, String) {
    let ask = |method: &str, path: &str| {
        let mut req = Request::builder().method(method).uri(path);
        for (k, v) in headers {
            req = req.header(*k, *v);
        }
        let mut req = req.header("content-type", "application/json").body(Body::from("{}")).unwrap();
        if let Some(peer) = peer {
            req.extensions_mut().insert(ConnectInfo(peer.parse::<SocketAddr>().unwrap()));
        }
        router.clone().oneshot(req)
    };
    let metadata = ask("GET", METADATA).await.unwrap();
    assert_eq!(metadata.status(), StatusCode::OK);
    let metadata: Value = serde_json::from_slice(&metadata.into_body().collect().await.unwrap().to_bytes()).unwrap();
    let refused = ask("POST", "/mcp").await.unwrap();
    assert_eq!(refused.status(), StatusCode::UNAUTHORIZED);
    let challenge = refused.headers()["www-authenticate"].to_str().unwrap().to_owned();
    (metadata["resource"].as_str().unwrap().to_owned(), challenge)
}

fn challenge(origin: &str) -> String {
    format!("Bearer resource_metadata=\"{origin}{METADATA}\"")
}

lattice_testkit::both_backends! {
    async fn a_clients_forwarded_headers_are_ignored(backend: Backend) {
        let log = lattice_testkit::service(backend).await;
        let forged = [("host", "lattice.example:8091"), ("x-forwarded-host", "evil.example"), ("x-forwarded-proto", "https")];
        let expected = ("http://lattice.example:8091/mcp".to_owned(), challenge("http://lattice.example:8091"));
        // No proxy configured: nobody's word counts.
        let direct = Replica::unlimited(&log).router();
        assert_eq!(told(&direct, &forged, Some("203.0.113.7:5000")).await, expected);
        // A proxy configured: still not this client's.
        let behind = Replica::new(&log, Limits::default(), TrustedProxies::parse("10.0.0.0/8").unwrap()).router();
        assert_eq!(told(&behind, &forged, Some("203.0.113.7:5000")).await, expected);
        assert_eq!(told(&behind, &forged, None).await, expected, "a peer not known is nobody's proxy");
        // The proxy's own word counts.
        let from_proxy = ("https://evil.example/mcp".to_owned(), challenge("https://evil.example"));
        assert_eq!(told(&behind, &forged, Some("10.1.2.3:5000")).await, from_proxy);
    }
}

lattice_testkit::both_backends! {
    async fn through_the_edge_the_edges_word_is_used(backend: Backend) {
        let log = lattice_testkit::service(backend).await;
        // The exporter on a socket, believing the edge's address (loopback here).
        let mcp = Replica::new(&log, Limits::default(), TrustedProxies::parse("127.0.0.1, ::1").unwrap()).router();
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        tokio::spawn(async move { axum::serve(listener, mcp.into_make_service_with_connect_info::<SocketAddr>()).await });

        // The edge replaces what a client claims with the Host it used.
        let edge = lattice_edge::mcp_router(&base);
        let forged = [("host", "chat.example:8080"), ("x-forwarded-host", "evil.example"), ("x-forwarded-proto", "https")];
        let expected = ("http://chat.example:8080/mcp".to_owned(), challenge("http://chat.example:8080"));
        assert_eq!(told(&edge, &forged, Some("203.0.113.7:5000")).await, expected);

        // Behind a TLS-terminating ingress the edge trusts, the ingress's word passes on.
        let edge = lattice_edge::mcp_router_behind(&base, TrustedProxies::parse("10.0.0.2").unwrap());
        let from_ingress = [("host", "chat.example"), ("x-forwarded-host", "chat.example"), ("x-forwarded-proto", "https")];
        let expected = ("https://chat.example/mcp".to_owned(), challenge("https://chat.example"));
        assert_eq!(told(&edge, &from_ingress, Some("10.0.0.2:443")).await, expected);
        assert_eq!(told(&edge, &from_ingress, Some("203.0.113.7:5000")).await.0, "http://chat.example/mcp", "not from the ingress");
    }
}
