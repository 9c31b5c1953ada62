//! Reading what `idkit serve` answered, for the tests that talk to it over a raw socket, and
//! (feature `tls`) a TLS client that trusts only a test's own certificate authority.

/// The status code and body of the HTTP/1.1 response `response`: status 0 when there is no
/// status line (the connection closed before an answer), the body empty when there is none.
///
/// # Examples
///
/// ```
/// use idkit_testkit::http::status_and_body;
/// let reply = "HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\n42";
/// assert_eq!(status_and_body(reply), (200, "42".to_owned()));
/// assert_eq!(status_and_body(""), (0, String::new()));
/// ```
pub fn status_and_body(response: &str) -> (u16, String) {
    let status = response
        .split_whitespace()
        .nth(1)
        .and_then(|code| code.parse().ok())
        .unwrap_or(0);
    let body = response.split("\r\n\r\n").nth(1).unwrap_or("").to_owned();
    (status, body)
}

/// A TLS client configuration that trusts only the certificate authority `ca_pem` (PEM),
/// with ring as its cryptography and the safe default protocol versions.
///
/// # Panics
///
/// When `ca_pem` is not one PEM certificate: a test's own setup is wrong.
#[cfg(feature = "tls")]
pub fn client_config(ca_pem: &str) -> std::sync::Arc<tokio_rustls::rustls::ClientConfig> {
    use std::sync::Arc;
    use tokio_rustls::rustls;
    use tokio_rustls::rustls::pki_types::CertificateDer;
    use tokio_rustls::rustls::pki_types::pem::PemObject;

    let mut roots = rustls::RootCertStore::empty();
    roots
        .add(CertificateDer::from_pem_slice(ca_pem.as_bytes()).expect("a PEM certificate"))
        .expect("a certificate authority");
    let config = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .expect("ring supports the default versions")
    .with_root_certificates(roots)
    .with_no_client_auth();
    Arc::new(config)
}
