//! The listener's settings: the flags (and configuration keys) of its
//! limits, TLS and the fast path, checked into [`Net`] before anything
//! listens. `listen.rs` serves with them.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use crate::config::ConfigError;

/// The default largest number of open connections.
pub const DEFAULT_MAX_CONNECTIONS: usize = 10_000;
/// The default largest request line plus headers, in bytes.
pub const DEFAULT_MAX_HEADER_BYTES: usize = 16 * 1024;
/// The default header timeout, in seconds.
pub const DEFAULT_HEADER_TIMEOUT: u64 = 10;
/// The default idle timeout, in seconds.
pub const DEFAULT_IDLE_TIMEOUT: u64 = 60;
/// The longest `drain_delay`, in seconds.
pub const MAX_DRAIN_DELAY: u64 = 300;
/// The default largest number of concurrent HTTP/2 streams per connection.
pub const DEFAULT_HTTP2_MAX_STREAMS: u32 = 100;
/// HTTP/2 streams a client may reset before the server accepts them, at
/// once (the "rapid reset" attack, CVE-2023-44487); past it, GOAWAY.
pub const HTTP2_MAX_PENDING_RESETS: usize = 20;
/// HTTP/2 streams the server may reset for a client's protocol errors on
/// one connection (CVE-2024-27316-style floods); past it, GOAWAY.
pub const HTTP2_MAX_LOCAL_RESETS: usize = 1024;
/// The default largest number of open Thrift connections.
pub const DEFAULT_THRIFT_MAX_CONNECTIONS: usize = 1024;
/// Refusals (503 answers past `max_connections`) in progress at once.
pub const MAX_REFUSING: usize = 64;

/// The listener's flags (flattened into [`crate::config::Flags`]).
#[derive(Clone, Debug, Default, clap::Args)]
pub struct NetFlags {
    /// Serve HTTPS with this PEM certificate chain (and --tls-key); HTTP/2 by ALPN.
    #[arg(long, env = "SNOWMINT_TLS_CERT", value_name = "PEM")]
    pub tls_cert: Option<PathBuf>,
    /// The PEM private key of --tls-cert (its content is never printed).
    #[arg(long, env = "SNOWMINT_TLS_KEY", value_name = "PEM")]
    pub tls_key: Option<PathBuf>,
    /// PEM CA certificates: every client must present a certificate one of
    /// them signed (this authenticates clients: a non-loopback --listen is
    /// then allowed without tokens).
    #[arg(long, env = "SNOWMINT_TLS_CLIENT_CA", value_name = "PEM")]
    pub tls_client_ca: Option<PathBuf>,
    /// Open connections at most; past it a new connection gets 503 and is
    /// closed (over TLS: closed) [default: 10000].
    #[arg(long, env = "SNOWMINT_MAX_CONNECTIONS", value_name = "N")]
    pub max_connections: Option<usize>,
    /// Open connections from one client IP address at most; past it a new
    /// one is refused as past --max-connections [default: no limit: behind
    /// a proxy every client has its address].
    #[arg(long, env = "SNOWMINT_MAX_CONNECTIONS_PER_IP", value_name = "N")]
    pub max_connections_per_ip: Option<usize>,
    /// Concurrent HTTP/2 streams (requests, gRPC calls) per connection
    /// [default: 100].
    #[arg(long, env = "SNOWMINT_HTTP2_MAX_STREAMS", value_name = "N")]
    pub http2_max_streams: Option<u32>,
    /// Open --thrift connections at most; more are closed as soon as
    /// accepted [default: 1024].
    #[arg(long, env = "SNOWMINT_THRIFT_MAX_CONNECTIONS", value_name = "N")]
    pub thrift_max_connections: Option<usize>,
    /// The largest request line plus headers, in bytes (8192 at least); a
    /// larger request gets 431 [default: 16384].
    #[arg(long, env = "SNOWMINT_MAX_HEADER_BYTES", value_name = "BYTES")]
    pub max_header_bytes: Option<usize>,
    /// Seconds a connection has for its first request (TLS handshake
    /// included) and a request for its headers; HTTP/2: a PING's answer;
    /// on --thrift, a frame's rest and an answer's write [default: 10].
    #[arg(long, env = "SNOWMINT_HEADER_TIMEOUT", value_name = "SECONDS")]
    pub header_timeout: Option<u64>,
    /// Seconds a connection may stay open with no request in progress
    /// (HTTP/2: without a frame from the client before a PING; on --thrift:
    /// between calls) [default: 60].
    #[arg(long, env = "SNOWMINT_IDLE_TIMEOUT", value_name = "SECONDS")]
    pub idle_timeout: Option<u64>,
    /// Seconds to keep serving after SIGTERM/SIGINT with /readyz at 503, so
    /// that load balancers notice, before the listener closes [default: 0].
    #[arg(long, env = "SNOWMINT_DRAIN_DELAY", value_name = "SECONDS")]
    pub drain_delay: Option<u64>,
    /// Requests a second per bearer token (bursts of as many); past it 429
    /// with Retry-After (gRPC: RESOURCE_EXHAUSTED). Needs --token-file
    /// [default: no limit].
    #[arg(long, env = "SNOWMINT_RATE_LIMIT", value_name = "N")]
    pub rate_limit: Option<u32>,
    /// IDs a second per bearer token (bursts of as many; a larger count is
    /// refused); past it 429 (gRPC: RESOURCE_EXHAUSTED). Needs --token-file
    /// [default: no limit].
    #[arg(long, env = "SNOWMINT_RATE_LIMIT_IDS", value_name = "N")]
    pub rate_limit_ids: Option<u32>,
    /// Answer plain HTTP/1.1 Leaf ID requests and /healthz without the
    /// general HTTP stack: the same answers, faster (off with --rate-limit or --rate-limit-ids)
    /// [default: true].
    #[arg(long, env = "SNOWMINT_FAST_PATH", value_name = "BOOL", action = clap::ArgAction::Set)]
    pub fast_path: Option<bool>,
}

impl NetFlags {
    /// Each flag given, else the file's value.
    pub fn or(self, file: NetFlags) -> NetFlags {
        NetFlags {
            tls_cert: self.tls_cert.or(file.tls_cert),
            tls_key: self.tls_key.or(file.tls_key),
            tls_client_ca: self.tls_client_ca.or(file.tls_client_ca),
            max_connections: self.max_connections.or(file.max_connections),
            thrift_max_connections: self.thrift_max_connections.or(file.thrift_max_connections),
            max_connections_per_ip: self.max_connections_per_ip.or(file.max_connections_per_ip),
            http2_max_streams: self.http2_max_streams.or(file.http2_max_streams),
            max_header_bytes: self.max_header_bytes.or(file.max_header_bytes),
            header_timeout: self.header_timeout.or(file.header_timeout),
            idle_timeout: self.idle_timeout.or(file.idle_timeout),
            drain_delay: self.drain_delay.or(file.drain_delay),
            rate_limit: self.rate_limit.or(file.rate_limit),
            rate_limit_ids: self.rate_limit_ids.or(file.rate_limit_ids),
            fast_path: self.fast_path.or(file.fast_path),
        }
    }
}

/// The limits of every connection.
#[derive(Clone, Debug)]
pub struct Limits {
    /// Open connections at most.
    pub max_connections: usize,
    /// Open Thrift connections at most.
    pub thrift_max_connections: usize,
    /// Open connections from one IP address at most.
    pub max_connections_per_ip: Option<usize>,
    /// Concurrent HTTP/2 streams per connection.
    pub http2_max_streams: u32,
    /// The largest request line plus headers.
    pub max_header_bytes: usize,
    /// For the first request, and for a request's headers.
    pub header_timeout: Duration,
    /// With no request in progress.
    pub idle_timeout: Duration,
}

/// The listener's checked settings.
#[derive(Debug)]
pub struct Net {
    /// TLS, if served.
    pub tls: Option<Arc<rustls::ServerConfig>>,
    /// Its certificate and key, which SIGHUP reloads.
    pub certs: Option<Arc<crate::tls::Certs>>,
    /// TLS requires a client certificate signed by the configured CA.
    pub client_certs: bool,
    /// The limits.
    pub limits: Limits,
    /// How long to serve after the signal before closing the listener.
    pub drain_delay: Duration,
    /// Requests and IDs a second per bearer token.
    pub rates: crate::limit::Rates,
    /// The HTTP/1.1 fast path (`fast.rs`) serves its routes.
    pub fast_path: bool,
}

fn within<T: PartialOrd + std::fmt::Display + Copy>(
    key: &str,
    value: Option<T>,
    default: T,
    min: T,
    max: T,
) -> Result<T, ConfigError> {
    let v = value.unwrap_or(default);
    if v < min || v > max {
        return Err(ConfigError::new(
            key,
            format!("must be between {min} and {max}"),
        ));
    }
    Ok(v)
}

impl Net {
    /// Checks the flags (TLS files read and parsed here, before listening).
    pub fn load(f: NetFlags) -> Result<Net, ConfigError> {
        let limits = Limits {
            max_connections: within(
                "max_connections",
                f.max_connections,
                DEFAULT_MAX_CONNECTIONS,
                1,
                1_000_000,
            )?,
            max_connections_per_ip: match f.max_connections_per_ip {
                Some(n) => Some(within("max_connections_per_ip", Some(n), 1, 1, 1_000_000)?),
                None => None,
            },
            http2_max_streams: within(
                "http2_max_streams",
                f.http2_max_streams,
                DEFAULT_HTTP2_MAX_STREAMS,
                1,
                10_000,
            )?,
            thrift_max_connections: within(
                "thrift_max_connections",
                f.thrift_max_connections,
                DEFAULT_THRIFT_MAX_CONNECTIONS,
                1,
                1_000_000,
            )?,
            // hyper refuses a read buffer under 8192 bytes.
            max_header_bytes: within(
                "max_header_bytes",
                f.max_header_bytes,
                DEFAULT_MAX_HEADER_BYTES,
                8192,
                1 << 20,
            )?,
            header_timeout: Duration::from_secs(within(
                "header_timeout",
                f.header_timeout,
                DEFAULT_HEADER_TIMEOUT,
                1,
                300,
            )?),
            idle_timeout: Duration::from_secs(within(
                "idle_timeout",
                f.idle_timeout,
                DEFAULT_IDLE_TIMEOUT,
                1,
                3600,
            )?),
        };
        let drain_delay =
            Duration::from_secs(within("drain_delay", f.drain_delay, 0, 0, MAX_DRAIN_DELAY)?);
        let tls = match (&f.tls_cert, &f.tls_key) {
            (Some(cert), Some(key)) => Some(crate::tls::server_config(
                cert,
                key,
                f.tls_client_ca.as_deref(),
            )?),
            (Some(_), None) => {
                return Err(ConfigError::new("tls_key", "missing: --tls-cert needs it"))
            }
            (None, Some(_)) => {
                return Err(ConfigError::new("tls_cert", "missing: --tls-key needs it"))
            }
            (None, None) if f.tls_client_ca.is_some() => {
                return Err(ConfigError::new(
                    "tls_client_ca",
                    "needs --tls-cert and --tls-key",
                ))
            }
            (None, None) => None,
        };
        let (tls, certs) = tls.map_or((None, None), |(t, c)| (Some(t), Some(c)));
        if let Some(n) = f.rate_limit {
            within("rate_limit", Some(n), 1, 1, 1_000_000)?;
        }
        if let Some(n) = f.rate_limit_ids {
            within("rate_limit_ids", Some(n), 1, 1, 100_000_000)?;
        }
        let limited = f.rate_limit.is_some() || f.rate_limit_ids.is_some();
        Ok(Net {
            rates: crate::limit::Rates {
                requests: f.rate_limit,
                ids: f.rate_limit_ids,
            },
            fast_path: f.fast_path.unwrap_or(true) && !limited,
            tls,
            certs,
            client_certs: f.tls_client_ca.is_some(),
            limits,
            drain_delay,
        })
    }
}
