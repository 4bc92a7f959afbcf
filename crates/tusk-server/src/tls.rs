//! TLS: the server's certificate and key, and the handshake that follows
//! an accepted SSLRequest.
//!
//! The files are PEM (`ssl_cert_file` with the certificate chain,
//! `ssl_key_file` with a PKCS#8, PKCS#1 or SEC1 key). As PostgreSQL does,
//! tusk refuses a key file that others can read: mode 0600 or stricter
//! (0640 when the file belongs to root, for a group-managed key).

use crate::config::TlsFiles;
use pgwire::tokio::tokio_rustls::rustls;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use std::os::unix::fs::MetadataExt;
use std::sync::Arc;

/// Loads the certificate and key into a rustls server configuration.
pub fn load(files: &TlsFiles) -> Result<Arc<rustls::ServerConfig>, String> {
    let read = |p: &std::path::Path, what: &str| {
        std::fs::read(p).map_err(|e| format!("could not load {what} file \"{}\": {e}", p.display()))
    };
    let cert_pem = read(&files.cert, "server certificate")?;
    let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_slice_iter(&cert_pem)
        .collect::<Result<_, _>>()
        .map_err(|e| {
            format!(
                "could not load server certificate file \"{}\": {e}",
                files.cert.display()
            )
        })?;
    if certs.is_empty() {
        return Err(format!(
            "could not load server certificate file \"{}\": no certificate found",
            files.cert.display()
        ));
    }
    let meta = std::fs::metadata(&files.key).map_err(|e| {
        format!(
            "could not access private key file \"{}\": {e}",
            files.key.display()
        )
    })?;
    let mode = meta.mode() & 0o777;
    let loose = if meta.uid() == 0 {
        mode & 0o037 != 0
    } else {
        mode & 0o077 != 0
    };
    if loose {
        return Err(format!(
            "private key file \"{}\" has group or world access\nDETAIL: File must have permissions u=rw (0600) or less if owned by the tusk user, or permissions u=rw,g=r (0640) or less if owned by root.",
            files.key.display()
        ));
    }
    let key_pem = read(&files.key, "private key")?;
    let key = PrivateKeyDer::from_pem_slice(&key_pem).map_err(|e| {
        format!(
            "could not load private key file \"{}\": {e}",
            files.key.display()
        )
    })?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("could not set up TLS: {e}"))?
        .with_no_client_auth()
        .with_single_cert(certs, key)
        .map_err(|e| format!("could not use the server certificate and key: {e}"))?;
    Ok(Arc::new(config))
}
