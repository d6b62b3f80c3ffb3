//! TLS with rustls and its ring provider: the certificate chain and key
//! from PEM files, ALPN `h2` and `http/1.1`, and optionally client
//! certificates required and checked against a CA.
//!
//! Errors name the configuration key and the file, never the key's content.

use std::path::Path;
use std::sync::Arc;

use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::server::WebPkiClientVerifier;
use rustls::{RootCertStore, ServerConfig};

use crate::config::ConfigError;

/// The server's TLS configuration from its files.
pub fn server_config(
    cert: &Path,
    key: &Path,
    client_ca: Option<&Path>,
) -> Result<Arc<ServerConfig>, ConfigError> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let chain = certificates(cert, "tls_cert")?;
    let key_der = private_key(key)?;
    let builder = ServerConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .map_err(|e| ConfigError::new("tls_cert", e.to_string()))?;
    let builder = match client_ca {
        Some(ca) => {
            let mut roots = RootCertStore::empty();
            for c in certificates(ca, "tls_client_ca")? {
                roots.add(c).map_err(|e| {
                    ConfigError::new("tls_client_ca", format!("{}: {e}", ca.display()))
                })?;
            }
            let verifier = client_verifier(roots, provider)
                .map_err(|e| ConfigError::new("tls_client_ca", format!("{}: {e}", ca.display())))?;
            builder.with_client_cert_verifier(verifier)
        }
        None => builder.with_no_client_auth(),
    };
    let mut config = builder.with_single_cert(chain, key_der).map_err(|e| {
        // rustls says what does not fit (a key that does not match the
        // certificate, an unsupported key type), not the key itself.
        ConfigError::new(
            "tls_key",
            format!("{} with {}: {e}", key.display(), cert.display()),
        )
    })?;
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Ok(Arc::new(config))
}

fn client_verifier(
    roots: RootCertStore,
    provider: Arc<CryptoProvider>,
) -> Result<Arc<dyn rustls::server::danger::ClientCertVerifier>, rustls::server::VerifierBuilderError>
{
    WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider).build()
}

/// Every certificate of a PEM file (at least one).
fn certificates(path: &Path, key: &str) -> Result<Vec<CertificateDer<'static>>, ConfigError> {
    let text = std::fs::read(path)
        .map_err(|e| ConfigError::new(key, format!("{}: {e}", path.display())))?;
    let certs = CertificateDer::pem_slice_iter(&text)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| ConfigError::new(key, format!("{}: {e}", path.display())))?;
    if certs.is_empty() {
        return Err(ConfigError::new(
            key,
            format!("{}: no PEM certificate in it", path.display()),
        ));
    }
    Ok(certs)
}

/// The private key of a PEM file. Its parse errors are not passed on: they
/// may quote a line of the file.
fn private_key(path: &Path) -> Result<PrivateKeyDer<'static>, ConfigError> {
    let text = std::fs::read(path)
        .map_err(|e| ConfigError::new("tls_key", format!("{}: {e}", path.display())))?;
    PrivateKeyDer::from_pem_slice(&text).map_err(|_| {
        ConfigError::new(
            "tls_key",
            format!(
                "{}: no PEM private key (PKCS#8, PKCS#1 or SEC1) in it",
                path.display()
            ),
        )
    })
}
