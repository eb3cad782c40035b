//! Certificates a test makes for itself: a CA and a server certificate it
//! signs for `127.0.0.1` and `localhost`, as PEM files in a folder of their own.

use std::path::PathBuf;

use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, KeyPair, KeyUsagePurpose};

pub struct Certs {
    pub dir: PathBuf,
    /// The CA's certificate: what a client trusts.
    pub ca: PathBuf,
    /// The server's certificate and key.
    pub cert: PathBuf,
    pub key: PathBuf,
}

impl Certs {
    /// A fresh CA and a server certificate signed by it.
    pub fn make() -> Self {
        let dir = std::env::temp_dir().join(format!("lattice-tls-{}", ulid::Ulid::generate().to_string().to_lowercase()));
        std::fs::create_dir_all(&dir).unwrap();

        let ca_key = KeyPair::generate().unwrap();
        let mut ca_params = CertificateParams::new(Vec::<String>::new()).unwrap();
        ca_params.distinguished_name.push(DnType::CommonName, "lattice test CA");
        ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        ca_params.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
        let ca_cert = ca_params.self_signed(&ca_key).unwrap();
        let issuer = rcgen::Issuer::new(ca_params, ca_key);

        let key = KeyPair::generate().unwrap();
        let mut params = CertificateParams::new(vec!["localhost".to_owned(), "127.0.0.1".to_owned()]).unwrap();
        params.distinguished_name.push(DnType::CommonName, "127.0.0.1");
        let cert = params.signed_by(&key, &issuer).unwrap();

        let certs = Self { ca: dir.join("ca.pem"), cert: dir.join("server.pem"), key: dir.join("server.key"), dir };
        std::fs::write(&certs.ca, ca_cert.pem()).unwrap();
        std::fs::write(&certs.cert, cert.pem()).unwrap();
        std::fs::write(&certs.key, key.serialize_pem()).unwrap();
        certs
    }
}

impl Drop for Certs {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
