//! The configuration: flags, `SNOWMINT_*` environment variables (clap reads
//! both) and an optional TOML file with several generators. Every problem is
//! reported before the server listens, naming the flag or key.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use clap::Parser;
use serde::Deserialize;
use snowmint::Layout;

/// The default address: loopback, so a server started without tokens is
/// never reachable from another machine; 7610 is next to Snowflake's 7609.
pub const DEFAULT_LISTEN: &str = "127.0.0.1:7610";

/// The default largest `count` of one `/v1/ids` request.
pub const DEFAULT_MAX_COUNT: u64 = 10_000;

/// The largest `max_count`: 100,000 IDs are at most 1.1 MB in a gRPC answer
/// (gRPC's default limit is 4 MiB) and 2.4 MB of JSON.
pub const MAX_MAX_COUNT: u64 = 100_000;

/// `snowmint-server`'s flags; each can also come from its environment variable.
#[derive(Debug, Parser)]
#[command(
    name = "snowmint-server",
    version,
    about = "The snowmint ID service: Snowflake IDs over HTTP, compatible with Leaf's API."
)]
pub struct Flags {
    /// A TOML file with `listen`, `max_count`, `token_file`, `insecure`,
    /// `log_format`, `access_log`, `issued_log`, `thrift`, `thrift_generator`, the keys of the flags
    /// below (`tls_cert`, `max_connections`, ...) and one `[generators.NAME]`
    /// table per generator (`layout`, `nodes`, and `lease`, `lease_env` or
    /// `lease_file`). Flags given as well
    /// override its top-level keys.
    #[arg(long, env = "SNOWMINT_CONFIG", value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// The generator's layout preset (leaf, twitter, sonyflake, ...). Else
    /// SNOWMINT_PRESET, read only when neither --preset nor --layout is given.
    #[arg(long, conflicts_with = "layout")]
    pub preset: Option<String>,
    /// A JSON layout descriptor (or @FILE to read one). Else SNOWMINT_LAYOUT,
    /// read only when neither --preset nor --layout is given.
    #[arg(long, value_name = "JSON")]
    pub layout: Option<String>,
    /// A node value, NAME=VALUE (repeat; in the environment, comma-separated).
    #[arg(
        long = "node",
        env = "SNOWMINT_NODE",
        value_name = "NAME=VALUE",
        value_delimiter = ','
    )]
    pub nodes: Vec<String>,
    /// Lease the one node field not given with --node from a store
    /// (file:DIR, postgres://, mysql://, redis://, etcd://).
    #[arg(
        long,
        env = "SNOWMINT_LEASE",
        value_name = "URL",
        hide_env_values = true
    )]
    pub lease: Option<String>,
    /// Read --lease's URL from this file (its first line), so that a
    /// password stays out of the command line and the environment.
    #[arg(
        long,
        env = "SNOWMINT_LEASE_FILE",
        value_name = "FILE",
        conflicts_with = "lease"
    )]
    pub lease_file: Option<PathBuf>,
    /// The generator's name (the flags configure one generator): 1 to 64
    /// letters, digits, '-' or '_'.
    #[arg(long, env = "SNOWMINT_NAME", default_value = "default")]
    pub name: String,
    /// The address to listen on [default: 127.0.0.1:7610].
    #[arg(long, env = "SNOWMINT_LISTEN", value_name = "ADDR")]
    pub listen: Option<String>,
    /// The largest `count` of one request, 100000 at most [default: 10000].
    #[arg(long, env = "SNOWMINT_MAX_COUNT", value_name = "N")]
    pub max_count: Option<u64>,
    /// A file of bearer tokens, one per line; every route but /healthz and
    /// /readyz then needs one.
    #[arg(long, env = "SNOWMINT_TOKEN_FILE", value_name = "FILE")]
    pub token_file: Option<PathBuf>,
    /// Allow a non-loopback address without tokens.
    #[arg(long, env = "SNOWMINT_INSECURE")]
    pub insecure: bool,
    /// Log lines as text or JSON.
    #[arg(long, env = "SNOWMINT_LOG_FORMAT", value_parser = ["text", "json"])]
    pub log_format: Option<String>,
    /// Log one line per HTTP request and gRPC call (route, status, IDs,
    /// duration, client address; never a header or token).
    #[arg(long, env = "SNOWMINT_ACCESS_LOG")]
    pub access_log: bool,
    /// An audit record of issued IDs: append one line per batch,
    /// `GENERATOR ID ID ...` (decimal), to FILE before the IDs are sent, so
    /// that it holds every ID handed out (some a client never received), even
    /// if the server is killed. A failed write fails the request. Off by default.
    #[arg(long, env = "SNOWMINT_ISSUED_LOG", value_name = "FILE")]
    pub issued_log: Option<PathBuf>,
    /// Also serve Twitter Snowflake's Thrift service (framed transport,
    /// binary protocol) on this address; loopback only unless --insecure.
    #[arg(long, env = "SNOWMINT_THRIFT", value_name = "ADDR")]
    pub thrift: Option<String>,
    /// The generator the Thrift service issues from (needed when several
    /// are configured).
    #[arg(long, env = "SNOWMINT_THRIFT_GENERATOR", value_name = "NAME")]
    pub thrift_generator: Option<String>,
    /// TLS, connection limits and timeouts, the drain delay.
    #[command(flatten)]
    pub net: crate::net::NetFlags,
}

/// The TOML file.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    listen: Option<String>,
    max_count: Option<u64>,
    token_file: Option<PathBuf>,
    insecure: Option<bool>,
    log_format: Option<String>,
    access_log: Option<bool>,
    issued_log: Option<PathBuf>,
    thrift: Option<String>,
    thrift_generator: Option<String>,
    tls_cert: Option<PathBuf>,
    tls_key: Option<PathBuf>,
    tls_client_ca: Option<PathBuf>,
    max_connections: Option<usize>,
    thrift_max_connections: Option<usize>,
    max_connections_per_ip: Option<usize>,
    http2_max_streams: Option<u32>,
    max_header_bytes: Option<usize>,
    header_timeout: Option<u64>,
    idle_timeout: Option<u64>,
    drain_delay: Option<u64>,
    rate_limit: Option<u32>,
    rate_limit_ids: Option<u32>,
    fast_path: Option<bool>,
    #[serde(default)]
    generators: BTreeMap<String, FileGenerator>,
}

/// One `[generators.NAME]` table.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileGenerator {
    /// A preset name or a JSON descriptor.
    layout: Option<String>,
    #[serde(default)]
    nodes: BTreeMap<String, u64>,
    lease: Option<String>,
    /// The lease URL from this environment variable.
    lease_env: Option<String>,
    /// The lease URL from this file (its first line).
    lease_file: Option<PathBuf>,
}

/// One generator to open.
#[derive(Debug)]
pub struct GeneratorSpec {
    /// Its name in URLs.
    pub name: String,
    /// Its layout.
    pub layout: Layout,
    /// The node values given (all of them, or all but the leased one).
    pub nodes: Vec<(String, u64)>,
    /// The lease URL (secret: never printed as is).
    pub lease: Option<String>,
}

/// The whole, checked configuration.
#[derive(Debug)]
pub struct Config {
    /// Where to listen.
    pub listen: SocketAddr,
    /// The largest `count`.
    pub max_count: u64,
    /// The accepted bearer tokens (empty: no authentication).
    pub tokens: Vec<crate::auth::TokenSpec>,
    /// Their file, which SIGHUP reads again.
    pub token_file: Option<PathBuf>,
    /// JSON log lines.
    pub json_logs: bool,
    /// One log line per request.
    pub access_log: bool,
    /// The record of issued IDs (`--issued-log`; None: off).
    pub issued_log: Option<PathBuf>,
    /// The generators, in name order.
    pub generators: Vec<GeneratorSpec>,
    /// The Thrift listener and the name of the generator it serves.
    pub thrift: Option<(SocketAddr, String)>,
    /// TLS, connection limits and timeouts, the drain delay.
    pub net: crate::net::Net,
}

/// A configuration error: the flag or key, and what is wrong with it.
#[derive(Debug)]
pub struct ConfigError {
    /// The flag (`--listen`) or key (`generators.orders.layout`).
    pub key: String,
    /// What is wrong.
    pub message: String,
}

impl ConfigError {
    /// Every message goes through here: a value it quotes may be a URL with
    /// a password (a lease URL under a wrong key or flag), and so may a key
    /// (a URL written as a generator's name), so each URL's user and
    /// password become `***` in both.
    pub(crate) fn new(key: impl Into<String>, message: impl Into<String>) -> ConfigError {
        ConfigError {
            key: mask_urls(&key.into()),
            message: mask_urls(&message.into()),
        }
    }
}

impl std::fmt::Display for ConfigError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "configuration error in {}: {}", self.key, self.message)
    }
}

/// Checks the flags (and the file they name) into a [`Config`].
pub fn load(flags: Flags) -> Result<Config, ConfigError> {
    let file = match &flags.config {
        Some(path) => read_file(path)?,
        None => File::default(),
    };
    resolve(flags, file)
}

/// [`load`] with `text` as the TOML file's contents, read from nowhere
/// (`flags.config` only names the file in messages). Token files and
/// `@FILE` descriptors the configuration names are still read.
pub fn from_toml_str(flags: Flags, text: &str) -> Result<Config, ConfigError> {
    let label = flags
        .config
        .as_deref()
        .unwrap_or(Path::new("the configuration file"))
        .to_path_buf();
    let file = parse_file(text, &label)?;
    resolve(flags, file)
}

/// The flags over the file's keys, checked.
fn resolve(flags: Flags, file: File) -> Result<Config, ConfigError> {
    let listen_text = flags
        .listen
        .or(file.listen)
        .unwrap_or_else(|| DEFAULT_LISTEN.to_string());
    let listen: SocketAddr = listen_text.parse().map_err(|_| {
        ConfigError::new(
            "listen",
            format!("'{listen_text}' is not an IP address and port"),
        )
    })?;
    let max_count = flags
        .max_count
        .or(file.max_count)
        .unwrap_or(DEFAULT_MAX_COUNT);
    if max_count == 0 || max_count > MAX_MAX_COUNT {
        return Err(ConfigError::new(
            "max_count",
            format!("must be between 1 and {MAX_MAX_COUNT}"),
        ));
    }
    let token_file = flags.token_file.or(file.token_file);
    let tokens = match &token_file {
        Some(path) => crate::auth::read_tokens(path)?,
        None => Vec::new(),
    };
    let insecure = flags.insecure || file.insecure.unwrap_or(false);
    let net = crate::net::Net::load(flags.net.or(crate::net::NetFlags {
        tls_cert: file.tls_cert,
        tls_key: file.tls_key,
        tls_client_ca: file.tls_client_ca,
        max_connections: file.max_connections,
        thrift_max_connections: file.thrift_max_connections,
        max_connections_per_ip: file.max_connections_per_ip,
        http2_max_streams: file.http2_max_streams,
        max_header_bytes: file.max_header_bytes,
        header_timeout: file.header_timeout,
        idle_timeout: file.idle_timeout,
        drain_delay: file.drain_delay,
        rate_limit: file.rate_limit,
        rate_limit_ids: file.rate_limit_ids,
        fast_path: file.fast_path,
    }))?;
    for (key, set) in [
        ("rate_limit", net.rates.requests.is_some()),
        ("rate_limit_ids", net.rates.ids.is_some()),
    ] {
        if set && tokens.is_empty() {
            return Err(ConfigError::new(
                key,
                "the limit is per bearer token: give --token-file",
            ));
        }
    }
    // Client certificates checked against a CA authenticate as tokens do.
    if !listen.ip().is_loopback() && tokens.is_empty() && !net.client_certs && !insecure {
        return Err(ConfigError::new(
            "listen",
            format!("{listen} is not a loopback address: give --token-file or --tls-client-ca, or --insecure to serve it without authentication"),
        ));
    }
    // A bearer token sent in clear text over a network is as good as public.
    if !listen.ip().is_loopback() && !tokens.is_empty() && net.tls.is_none() && !insecure {
        return Err(ConfigError::new(
            "listen",
            format!("{listen} is not a loopback address and serves plain HTTP: bearer tokens would cross the network in clear text; give --tls-cert and --tls-key, or --insecure (TLS ends in front of the server)"),
        ));
    }
    let access_log = flags.access_log || file.access_log.unwrap_or(false);
    let issued_log = flags.issued_log.or(file.issued_log);
    let json_logs = match flags.log_format.or(file.log_format).as_deref() {
        None | Some("text") => false,
        Some("json") => true,
        Some(other) => {
            return Err(ConfigError::new(
                "log_format",
                format!("'{other}' is neither text nor json"),
            ))
        }
    };

    // Command line, then environment, then file. The layout's variables are
    // read here, not by clap, so that a --layout on the command line wins
    // over the container image's SNOWMINT_PRESET instead of conflicting with
    // it; and a layout alone (the image's default) adds no generator beside
    // a file's: a lease or a node value (flag or variable) or a layout flag does.
    let env_layout = match (&flags.preset, &flags.layout) {
        (None, None) => env_layout(
            std::env::var("SNOWMINT_PRESET").ok(),
            std::env::var("SNOWMINT_LAYOUT").ok(),
        )?,
        _ => None,
    };
    let flag_generator = flags.preset.is_some()
        || flags.layout.is_some()
        || flags.lease.is_some()
        || flags.lease_file.is_some()
        || !flags.nodes.is_empty();
    let mut generators = Vec::new();
    if flag_generator || file.generators.is_empty() {
        let layout = match (&flags.preset, &flags.layout, env_layout) {
            (Some(p), _, _) => preset(p, "--preset")?,
            (None, Some(l), _) => descriptor(l, "--layout")?,
            (None, None, Some(l)) => l,
            (None, None, None) => preset("twitter", "--preset")?,
        };
        let mut nodes = Vec::new();
        for n in &flags.nodes {
            let (name, value) = n.split_once('=').ok_or_else(|| {
                ConfigError::new("--node", format!("expected NAME=VALUE, got '{n}'"))
            })?;
            let value = value.parse().map_err(|_| {
                ConfigError::new("--node", format!("'{value}' is not a non-negative integer"))
            })?;
            nodes.push((name.to_string(), value));
        }
        if !valid_name(&flags.name) {
            return Err(ConfigError::new(
                "name",
                "a generator's name is 1 to 64 letters, digits, '-' or '_'",
            ));
        }
        let lease = match (&flags.lease, &flags.lease_file) {
            (_, Some(path)) => Some(lease_from_file(path, "lease_file")?),
            (lease, None) => lease.clone(),
        };
        generators.push(GeneratorSpec {
            name: flags.name.clone(),
            layout,
            nodes,
            lease,
        });
    }
    for (name, g) in file.generators {
        let key = format!("generators.{name}");
        if !valid_name(&name) {
            return Err(ConfigError::new(
                key,
                "a generator's name is 1 to 64 letters, digits, '-' or '_'",
            ));
        }
        if generators.iter().any(|s| s.name == name) {
            return Err(ConfigError::new(key, "this name is also given by --name"));
        }
        let layout = match &g.layout {
            Some(l) if l.trim_start().starts_with('{') => descriptor(l, &format!("{key}.layout"))?,
            Some(p) => preset(p, &format!("{key}.layout"))?,
            None => {
                return Err(ConfigError::new(
                    format!("{key}.layout"),
                    "missing (a preset name or a JSON descriptor)",
                ))
            }
        };
        generators.push(GeneratorSpec {
            name,
            layout,
            lease: match (g.lease, g.lease_env, g.lease_file) {
                (l, None, None) => l,
                (None, Some(var), None) => Some(lease_from_env(&var, &format!("{key}.lease_env"))?),
                (None, None, Some(path)) => {
                    Some(lease_from_file(&path, &format!("{key}.lease_file"))?)
                }
                _ => {
                    return Err(ConfigError::new(
                        key,
                        "give one of lease, lease_env and lease_file",
                    ))
                }
            },
            nodes: g.nodes.into_iter().collect(),
        });
    }
    let thrift = thrift_config(
        flags.thrift.or(file.thrift),
        flags.thrift_generator.or(file.thrift_generator),
        insecure,
        &generators,
    )?;
    Ok(Config {
        listen,
        max_count,
        tokens,
        token_file,
        json_logs,
        access_log,
        issued_log,
        generators,
        thrift,
        net,
    })
}

/// The Thrift listener: an address (loopback unless `insecure`: Thrift
/// carries no token) and the generator it serves.
fn thrift_config(
    addr: Option<String>,
    generator: Option<String>,
    insecure: bool,
    generators: &[GeneratorSpec],
) -> Result<Option<(SocketAddr, String)>, ConfigError> {
    let Some(text) = addr else {
        return match generator {
            Some(_) => Err(ConfigError::new(
                "thrift_generator",
                "given without --thrift (the Thrift listener's address)",
            )),
            None => Ok(None),
        };
    };
    let addr: SocketAddr = text.parse().map_err(|_| {
        ConfigError::new("thrift", format!("'{text}' is not an IP address and port"))
    })?;
    if !addr.ip().is_loopback() && !insecure {
        return Err(ConfigError::new(
            "thrift",
            format!("{addr} is not a loopback address: Thrift carries no token, give --insecure to serve it anyway"),
        ));
    }
    let name =
        match generator {
            Some(n) if generators.iter().any(|g| g.name == n) => n,
            Some(n) => {
                return Err(ConfigError::new(
                    "thrift_generator",
                    format!("no generator is named '{n}'"),
                ))
            }
            None if generators.len() == 1 => generators[0].name.clone(),
            None => return Err(ConfigError::new(
                "thrift_generator",
                "several generators are configured: name the one the Thrift service issues from",
            )),
        };
    Ok(Some((addr, name)))
}

/// A lease URL from the file at `path`: its first line, trimmed. The
/// content is never shown (it holds a password).
fn lease_from_file(path: &Path, key: &str) -> Result<String, ConfigError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| ConfigError::new(key, format!("{}: {e}", path.display())))?;
    let url = text.lines().next().unwrap_or_default().trim();
    if url.is_empty() {
        return Err(ConfigError::new(
            key,
            format!("{}: the first line holds no lease URL", path.display()),
        ));
    }
    Ok(url.to_string())
}

/// A lease URL from the environment variable `var` (set and not empty).
fn lease_from_env(var: &str, key: &str) -> Result<String, ConfigError> {
    match std::env::var(var) {
        Ok(v) if !v.trim().is_empty() => Ok(v.trim().to_string()),
        Ok(_) => Err(ConfigError::new(
            key,
            format!("the variable {} is empty", cut(var)),
        )),
        Err(std::env::VarError::NotPresent) => Err(ConfigError::new(
            key,
            format!("the variable {} is not set", cut(var)),
        )),
        Err(std::env::VarError::NotUnicode(_)) => Err(ConfigError::new(
            key,
            format!("the variable {} is not UTF-8", cut(var)),
        )),
    }
}

fn cut(s: &str) -> String {
    s.chars().take(64).collect()
}

/// Names that need no escaping in a URL path.
fn valid_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

/// The layout SNOWMINT_PRESET or SNOWMINT_LAYOUT names (both: an error; an
/// empty variable counts as unset).
fn env_layout(
    preset_var: Option<String>,
    layout_var: Option<String>,
) -> Result<Option<Layout>, ConfigError> {
    let set = |v: Option<String>| v.filter(|s| !s.is_empty());
    match (set(preset_var), set(layout_var)) {
        (Some(_), Some(_)) => Err(ConfigError::new(
            "SNOWMINT_LAYOUT",
            "SNOWMINT_PRESET is set too: unset one (or give --preset or --layout)",
        )),
        (Some(p), None) => preset(&p, "SNOWMINT_PRESET").map(Some),
        (None, Some(l)) => descriptor(&l, "SNOWMINT_LAYOUT").map(Some),
        (None, None) => Ok(None),
    }
}

fn preset(name: &str, key: &str) -> Result<Layout, ConfigError> {
    Layout::preset(name).map_err(|e| ConfigError::new(key, format!("'{name}': {e}")))
}

fn descriptor(text: &str, key: &str) -> Result<Layout, ConfigError> {
    let owned;
    let json = match text.strip_prefix('@') {
        Some(path) => {
            owned = std::fs::read_to_string(path)
                .map_err(|e| ConfigError::new(key, format!("{path}: {e}")))?;
            owned.as_str()
        }
        None => text,
    };
    Layout::parse(json).map_err(|e| ConfigError::new(key, e.to_string()))
}

fn read_file(path: &Path) -> Result<File, ConfigError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| ConfigError::new("--config", format!("{}: {e}", path.display())))?;
    parse_file(&text, path)
}

fn parse_file(text: &str, path: &Path) -> Result<File, ConfigError> {
    // toml's message names the key and the line; it quotes the file, which
    // may hold a lease URL with a password, so only its first line is kept.
    toml::from_str(text).map_err(|e| {
        let message = e.to_string();
        let first = message.lines().next().unwrap_or_default();
        // The detail may quote a value (a lease URL under a wrong key):
        // ConfigError::new masks it.
        ConfigError::new(
            path.display().to_string(),
            format!("{first}: {}", e.message()),
        )
    })
}

/// `text` with everything between each `://` and the last `@` before the
/// next `://` (a URL's user and password) replaced by `***`.
fn mask_urls(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find("://") {
        out.push_str(&rest[..i + 3]);
        rest = &rest[i + 3..];
        let next = rest.find("://").unwrap_or(rest.len());
        if let Some(at) = rest[..next].rfind('@') {
            out.push_str("***");
            rest = &rest[at..];
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    /// The error a TOML file with `text` gets, as shown.
    fn refused(text: &str) -> String {
        match from_toml_str(Flags::parse_from(["snowmint-server"]), text) {
            Ok(_) => panic!("accepted: {text}"),
            Err(e) => e.to_string(),
        }
    }

    /// A lease URL where a name or another value belongs is quoted without
    /// its password, in the key as in the message (the fuzz target
    /// server_config found the key: fuzz/regressions/server_config/).
    #[test]
    fn a_url_password_in_a_key_or_a_value_is_masked() {
        for text in [
            "[generators.\"redis://app:s3cret-pw@10.0.0.1/ids\"]\nlayout = \"leaf\"\n",
            "max_count = \"redis://:s3cret-pw@127.0.0.1/\"\n",
            "listen = \"postgres://app:s3cret-pw@db/ids\"\n",
        ] {
            let shown = refused(text);
            assert!(!shown.contains("s3cret-pw"), "{shown}");
            assert!(shown.contains("://***@"), "{shown}");
        }
    }
}
