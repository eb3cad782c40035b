//! An axum app served over TLS with a certificate the test made
//! (`lattice_testkit::tls::Certs`): a model behind https, or an origin an
//! app is allowed to reach (Chromium told to map a public name to it).

use std::sync::Arc;

use lattice_testkit::tls::Certs;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};

/// Serves `app` on a loopback port with `certs`' server certificate: the port.
pub async fn serve_tls(certs: &Certs, app: axum::Router) -> u16 {
    let chain: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(&certs.cert).unwrap().map(Result::unwrap).collect();
    let key = PrivateKeyDer::from_pem_file(&certs.key).unwrap();
    let config = rustls::ServerConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(chain, key)
        .unwrap();
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        loop {
            let Ok((tcp, _)) = listener.accept().await else { continue };
            let (acceptor, app) = (acceptor.clone(), app.clone());
            tokio::spawn(async move {
                // A client that refuses the certificate ends its handshake here.
                let Ok(tls) = acceptor.accept(tcp).await else { return };
                let service = hyper_util::service::TowerToHyperService::new(app);
                let _ = hyper_util::server::conn::auto::Builder::new(hyper_util::rt::TokioExecutor::new())
                    .serve_connection(hyper_util::rt::TokioIo::new(tls), service)
                    .await;
            });
        }
    });
    port
}
