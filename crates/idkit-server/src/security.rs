//! The optional security of both front doors: bearer tokens (from a file, compared in
//! constant time, several at once so one can be rotated) and TLS (rustls, a certificate
//! chain and key from PEM files).

use std::fmt;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::AtomicU64;

use crate::ConfigError;

/// Paths that answer without a token on the HTTP door: probes and the metrics scrape,
/// which say nothing an id would and are called by the cluster itself.
pub(crate) const OPEN_PATHS: [&str; 3] = ["/healthz", "/readyz", "/metrics"];

/// The accepted bearer tokens and the refusals counted so far.
pub(crate) struct Tokens {
    tokens: Vec<Vec<u8>>,
    /// Requests refused on the HTTP door, and calls on the gRPC door.
    pub(crate) refused_http: AtomicU64,
    pub(crate) refused_grpc: AtomicU64,
}

impl fmt::Debug for Tokens {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Never the tokens themselves.
        f.debug_struct("Tokens")
            .field("count", &self.tokens.len())
            .finish_non_exhaustive()
    }
}

/// Shortest token accepted: a shorter one is guessable.
const MIN_TOKEN: usize = 16;

impl Tokens {
    /// Reads one token per line from `path`; blank lines and lines starting with `#` are
    /// skipped.
    ///
    /// # Errors
    ///
    /// [`ConfigError::Invalid`] (key `tokens_file`) when the file cannot be read, holds no
    /// token, or a token is shorter than 16 characters or holds a space.
    pub(crate) fn from_file(path: &Path) -> Result<Self, ConfigError> {
        let invalid = |message: String| ConfigError::Invalid {
            key: "tokens_file",
            message,
        };
        let text = std::fs::read_to_string(path)
            .map_err(|e| invalid(format!("cannot read {}: {e}", path.display())))?;
        let mut tokens = Vec::new();
        for (n, line) in text.lines().enumerate() {
            let token = line.trim();
            if token.is_empty() || token.starts_with('#') {
                continue;
            }
            if token.len() < MIN_TOKEN || token.contains(char::is_whitespace) {
                return Err(invalid(format!(
                    "{} line {}: a token is at least {MIN_TOKEN} characters with no spaces",
                    path.display(),
                    n + 1
                )));
            }
            tokens.push(token.as_bytes().to_vec());
        }
        if tokens.is_empty() {
            return Err(invalid(format!(
                "{} holds no token (one per line)",
                path.display()
            )));
        }
        Ok(Self {
            tokens,
            refused_http: AtomicU64::new(0),
            refused_grpc: AtomicU64::new(0),
        })
    }

    /// True when `authorization` (the header's value) is the `Bearer` scheme and one of the
    /// tokens. Every token is compared in full, in time that depends on the lengths only.
    pub(crate) fn accepts(&self, authorization: Option<&[u8]>) -> bool {
        let Some(given) = authorization.and_then(bearer_token) else {
            return false;
        };
        self.tokens
            .iter()
            .fold(false, |found, token| found | constant_time_eq(token, given))
    }
}

/// The token of an `Authorization` value in the `Bearer` scheme (RFC 6750 section 2.1): the
/// scheme's name in any case, as RFC 7235 section 2.1 makes auth-scheme names
/// case-insensitive, then one or more spaces, then the token.
fn bearer_token(value: &[u8]) -> Option<&[u8]> {
    let (scheme, rest) = value.split_at_checked(b"Bearer".len())?;
    if !scheme.eq_ignore_ascii_case(b"Bearer") || rest.first() != Some(&b' ') {
        return None;
    }
    let token = rest.trim_ascii();
    (!token.is_empty()).then_some(token)
}

/// `a == b` without an early exit on the first differing byte.
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |diff, (x, y)| diff | (x ^ y)) == 0
}

/// A certificate chain and its private key, read and checked at start-up, as each door's
/// rustls configuration.
#[derive(Clone)]
pub(crate) struct Tls {
    /// The HTTP door's: HTTP/1.1.
    config: Arc<tokio_rustls::rustls::ServerConfig>,
    /// The gRPC door's: HTTP/2.
    grpc: Arc<tokio_rustls::rustls::ServerConfig>,
}

impl fmt::Debug for Tls {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Tls").finish_non_exhaustive()
    }
}

impl Tls {
    /// Reads the PEM files and builds both doors' rustls configurations.
    ///
    /// # Errors
    ///
    /// [`ConfigError::Invalid`] (key `tls_cert` or `tls_key`) when a file cannot be read,
    /// holds no certificate or key, or the key does not match the certificate.
    pub(crate) fn from_files(cert: &Path, key: &Path) -> Result<Self, ConfigError> {
        use tokio_rustls::rustls;
        use tokio_rustls::rustls::pki_types::pem::PemObject;
        use tokio_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer};

        let read = |key_name: &'static str, path: &Path| {
            std::fs::read(path).map_err(|e| ConfigError::Invalid {
                key: key_name,
                message: format!("cannot read {}: {e}", path.display()),
            })
        };
        let cert_pem = read("tls_cert", cert)?;
        let key_pem = read("tls_key", key)?;
        let chain: Vec<CertificateDer<'static>> = CertificateDer::pem_slice_iter(&cert_pem)
            .collect::<Result<_, _>>()
            .map_err(|e| ConfigError::Invalid {
                key: "tls_cert",
                message: format!("{}: {e}", cert.display()),
            })?;
        if chain.is_empty() {
            return Err(ConfigError::Invalid {
                key: "tls_cert",
                message: format!("{} holds no PEM certificate", cert.display()),
            });
        }
        let private =
            PrivateKeyDer::from_pem_slice(&key_pem).map_err(|e| ConfigError::Invalid {
                key: "tls_key",
                message: format!("{}: no PEM private key ({e})", key.display()),
            })?;
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let mut config = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .and_then(|b| b.with_no_client_auth().with_single_cert(chain, private))
            .map_err(|e| ConfigError::Invalid {
                key: "tls_key",
                message: format!("{} does not fit {}: {e}", key.display(), cert.display()),
            })?;
        let mut grpc = config.clone();
        grpc.alpn_protocols = vec![b"h2".to_vec()];
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
        Ok(Self {
            config: Arc::new(config),
            grpc: Arc::new(grpc),
        })
    }

    /// The HTTP door's acceptor.
    pub(crate) fn acceptor(&self) -> tokio_rustls::TlsAcceptor {
        tokio_rustls::TlsAcceptor::from(Arc::clone(&self.config))
    }

    /// The gRPC door's acceptor (HTTP/2 by ALPN).
    pub(crate) fn grpc_acceptor(&self) -> tokio_rustls::TlsAcceptor {
        tokio_rustls::TlsAcceptor::from(Arc::clone(&self.grpc))
    }
}

/// The first byte of every TLS connection: a handshake record.
const TLS_HANDSHAKE: u8 = 0x16;
/// What a plain HTTP client on the TLS port is told (JSON, as every error).
const PLAIN_ON_TLS: &str = r#"{"error":"this port speaks TLS: ask for https:// instead"}"#;

/// The TLS handshake of one connection of the HTTP door. A client that speaks plain HTTP
/// here (its first byte is not that of a TLS handshake record) is answered 400 in plain
/// HTTP, rather than with the bytes of a TLS alert, and closed.
///
/// # Errors
///
/// `Err(())` for that plain HTTP client and for a failed handshake.
pub(crate) async fn handshake(
    acceptor: &tokio_rustls::TlsAcceptor,
    mut stream: tokio::net::TcpStream,
) -> Result<tokio_rustls::server::TlsStream<tokio::net::TcpStream>, ()> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    let mut first = [0; 1];
    if matches!(stream.peek(&mut first).await, Ok(1) if first[0] != TLS_HANDSHAKE) {
        // What was sent is read first: closing on unread bytes would reset the connection
        // under the answer.
        let mut request = [0; 2048];
        let _ = stream.read(&mut request).await;
        let reply = format!(
            "HTTP/1.1 400 Bad Request\r\ncontent-type: application/json\r\nconnection: close\r\n\
             content-length: {}\r\n\r\n{PLAIN_ON_TLS}",
            PLAIN_ON_TLS.len()
        );
        let _ = stream.write_all(reply.as_bytes()).await;
        let _ = stream.shutdown().await;
        return Err(());
    }
    acceptor.accept(stream).await.map_err(drop)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tokens(lines: &str) -> Result<Tokens, ConfigError> {
        let path = std::env::temp_dir().join(format!(
            "idkit-tokens-{}-{}",
            std::process::id(),
            lines.len()
        ));
        std::fs::write(&path, lines).unwrap();
        let t = Tokens::from_file(&path);
        std::fs::remove_file(&path).unwrap();
        t
    }

    #[test]
    fn tokens_are_read_one_per_line_and_compared_whole() {
        let t = tokens("# rotated on 2026-11-01\nold-token-0123456789\n\nnew-token-0123456789\n")
            .unwrap();
        assert!(t.accepts(Some(b"Bearer old-token-0123456789")));
        assert!(t.accepts(Some(b"Bearer new-token-0123456789")));
        assert!(!t.accepts(Some(b"Bearer new-token-012345678")));
        assert!(!t.accepts(Some(b"Bearer new-token-01234567890")));
        // The scheme's name in any case (RFC 7235 section 2.1), one or more spaces after it.
        assert!(t.accepts(Some(b"bearer new-token-0123456789")));
        assert!(t.accepts(Some(b"BEARER  new-token-0123456789")));
        assert!(!t.accepts(Some(b"Bearernew-token-0123456789")));
        assert!(!t.accepts(Some(b"Basic new-token-0123456789")));
        assert!(!t.accepts(Some(b"Bearer ")));
        assert!(!t.accepts(Some(b"new-token-0123456789")));
        assert!(!t.accepts(None));
    }

    #[test]
    fn weak_or_empty_token_files_are_refused() {
        assert!(tokens("# nothing\n\n").is_err());
        assert!(tokens("short\n").is_err());
        assert!(tokens("has a space in it 0123456789\n").is_err());
    }
}
