//! TLS with rustls and its ring provider: the certificate chain and key
//! from PEM files, ALPN `h2` and `http/1.1`, and optionally client
//! certificates required and checked against a CA.
//!
//! The certificate and key are served through [`Certs`], which SIGHUP
//! loads again from the same files ([`Certs::reload`]): new connections get
//! the new pair, a bad new pair keeps the old one.
//!
//! Errors name the configuration key and the file, never the key's content.

use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};

use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::server::{ClientHello, ResolvesServerCert, WebPkiClientVerifier};
use rustls::sign::CertifiedKey;
use rustls::{RootCertStore, ServerConfig};

use crate::config::ConfigError;

/// The certificate chain and key every handshake gets, and their files.
#[derive(Debug)]
pub struct Certs {
    cert: PathBuf,
    key: PathBuf,
    provider: Arc<CryptoProvider>,
    current: RwLock<Arc<CertifiedKey>>,
}

impl Certs {
    fn load(
        cert: &Path,
        key: &Path,
        provider: &CryptoProvider,
    ) -> Result<Arc<CertifiedKey>, ConfigError> {
        let chain = certificates(cert, "tls_cert")?;
        let key_der = private_key(key)?;
        // rustls says what does not fit (a key that does not match the
        // certificate, an unsupported key type), not the key itself.
        let pair = CertifiedKey::from_der(chain, key_der, provider).map_err(|e| {
            ConfigError::new(
                "tls_key",
                format!("{} with {}: {e}", key.display(), cert.display()),
            )
        })?;
        Ok(Arc::new(pair))
    }

    /// Reads the certificate and key files again; on an error the pair in
    /// use stays.
    pub fn reload(&self) -> Result<(), ConfigError> {
        let pair = Certs::load(&self.cert, &self.key, &self.provider)?;
        *self.current.write().unwrap_or_else(|e| e.into_inner()) = pair;
        Ok(())
    }
}

impl ResolvesServerCert for Certs {
    fn resolve(&self, _hello: ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
        Some(Arc::clone(
            &self.current.read().unwrap_or_else(|e| e.into_inner()),
        ))
    }
}

/// The server's TLS configuration from its files, and the handle that
/// reloads its certificate and key.
pub fn server_config(
    cert: &Path,
    key: &Path,
    client_ca: Option<&Path>,
) -> Result<(Arc<ServerConfig>, Arc<Certs>), ConfigError> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let certs = Arc::new(Certs {
        current: RwLock::new(Certs::load(cert, key, &provider)?),
        cert: cert.to_path_buf(),
        key: key.to_path_buf(),
        provider: Arc::clone(&provider),
    });
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
    let mut config = builder.with_cert_resolver(certs.clone());
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Ok((Arc::new(config), certs))
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
