//! The lease URL: the one string every language passes, parsed only here.
//!
//! `file:/var/lib/myapp/ids`, `file:///var/lib/myapp/ids` or plain `file`
//! (the per-user default directory), with options in the query:
//! `file:/tmp/ids?namespace=orders&ttl_ms=3000`.

use std::path::PathBuf;

use snowmint::LeaseProblem;

use crate::error::LeaseError;

/// Where the slots live.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum StoreUrl {
    /// The embedded store: a local directory ([`crate::FileStore`]).
    File(PathBuf),
    /// PostgreSQL: the connection URL without the lease options
    /// (`postgres://user@host:5432/db`; `postgresql://` is the same).
    Postgres(String),
    /// MySQL or MariaDB: the connection URL without the lease options
    /// (`mysql://user@host:3306/db`).
    Mysql(String),
    /// Redis: the connection URL without the lease options
    /// (`redis://host:6379/0`; `rediss://` for TLS).
    Redis(String),
    /// etcd v3: its client endpoint as `http://host:port` (`etcd://host:port`
    /// in the lease URL), or a cluster's members as `http://host:port,host:port`.
    Etcd(String),
    /// ZooKeeper: the ensemble and an optional chroot as
    /// `host:port[,host:port...][/chroot]` (`zookeeper://` removed).
    Zookeeper(String),
}

impl StoreUrl {
    /// The scheme's store name (`file`, `postgres`, `mysql`, `redis`, `etcd`,
    /// `zookeeper`).
    pub fn kind(&self) -> &'static str {
        match self {
            StoreUrl::File(_) => "file",
            StoreUrl::Postgres(_) => "postgres",
            StoreUrl::Mysql(_) => "mysql",
            StoreUrl::Redis(_) => "redis",
            StoreUrl::Etcd(_) => "etcd",
            StoreUrl::Zookeeper(_) => "zookeeper",
        }
    }

    /// How messages name the store: the URL without a password
    /// (`redis://:***@host:6379`).
    pub fn describe(&self) -> String {
        match self {
            StoreUrl::File(dir) => format!("file:{}", dir.display()),
            StoreUrl::Postgres(u) | StoreUrl::Mysql(u) | StoreUrl::Redis(u) => redact(u),
            StoreUrl::Etcd(u) => redact(&u.replacen("http://", "etcd://", 1)),
            StoreUrl::Zookeeper(u) => format!("zookeeper://{u}"),
        }
    }
}

#[cfg(test)]
impl StoreUrl {
    /// The store part of a URL, whether or not this build has the store.
    fn parse_for_test(url: &str) -> StoreUrl {
        parse_store(url.split_once('?').map_or(url, |(h, _)| h)).unwrap()
    }
}

/// `scheme://user:password@host...` without the password.
pub(crate) fn redact(url: &str) -> String {
    match Authority::of_url(url) {
        Some((
            scheme,
            Authority {
                user: Some(user),
                password,
                host,
            },
            tail,
        )) => {
            let masked = if password.is_some() { ":***" } else { "" };
            format!("{scheme}://{user}{masked}@{host}{tail}")
        }
        _ => url.to_string(),
    }
}

/// The authority of a URL (`[user[:password]@]host[:port]`), split as
/// written: user and password are still percent-encoded (decode them with
/// [`percent_decode`]). The one place that reads user information.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Authority<'a> {
    /// Before the `@` (and the first `:` in it); `None` without an `@`.
    pub(crate) user: Option<&'a str>,
    /// After the first `:` before the `@`; `None` without one.
    pub(crate) password: Option<&'a str>,
    /// After the last `@`: `host[:port]`.
    pub(crate) host: &'a str,
}

impl<'a> Authority<'a> {
    /// Splits an authority at its last `@` (a password may hold an
    /// unencoded `@`) and the user information at its first `:` (a user
    /// name may not hold one, a password may).
    pub(crate) fn parse(authority: &'a str) -> Authority<'a> {
        match authority.rsplit_once('@') {
            Some((userinfo, host)) => {
                let (user, password) = match userinfo.split_once(':') {
                    Some((u, p)) => (u, Some(p)),
                    None => (userinfo, None),
                };
                Authority {
                    user: Some(user),
                    password,
                    host,
                }
            }
            None => Authority {
                user: None,
                password: None,
                host: authority,
            },
        }
    }

    /// `scheme://authority...` as its scheme, its authority (up to the first
    /// `/` or `?`) and the rest; `None` without `://`.
    pub(crate) fn of_url(url: &'a str) -> Option<(&'a str, Authority<'a>, &'a str)> {
        let (scheme, rest) = url.split_once("://")?;
        let (authority, tail) = rest.split_at(rest.find(['/', '?']).unwrap_or(rest.len()));
        Some((scheme, Authority::parse(authority), tail))
    }
}

/// The stores this build has (`file` always; the others by Cargo feature).
pub const BUILT_STORES: &[&str] = &[
    "file",
    #[cfg(feature = "postgres")]
    "postgres",
    #[cfg(feature = "mysql")]
    "mysql",
    #[cfg(feature = "redis")]
    "redis",
    #[cfg(feature = "etcd")]
    "etcd",
    #[cfg(feature = "zookeeper")]
    "zookeeper",
];

/// The lease's timing and naming options (the URL's query).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Settings {
    /// Separates applications that share a store and an ID space
    /// (`[A-Za-z0-9_.-]`, 1 to 64 characters). Default: none.
    pub namespace: Option<String>,
    /// How long a claim or renewal holds the slot without another renewal
    /// (stores with expiry; the file store holds its lock for the life of the
    /// process). Default 30,000.
    pub ttl_ms: u64,
    /// How often the background thread renews. Default 10,000.
    pub renew_ms: u64,
    /// How far ahead of the store's clock each renewal reserves: `hwm` becomes
    /// store time + `window_ms`. Default 20,000.
    pub window_ms: u64,
    /// The largest difference between the local clock and the store's clock
    /// accepted at claim. Default 5,000.
    pub max_skew_ms: u64,
    /// The file store only: the one filesystem it accepts although it would
    /// refuse it (`allow_fs=nfs`, `allow_fs=tmpfs`: the name its refusal
    /// gives). A network filesystem's locks may not exclude other holders;
    /// use it only for one whose locks you know do. Default: none.
    pub allow_fs: Option<String>,
    /// The longest any one store call may take before it counts as failed
    /// (`lease_unavailable` at claim, a failed renewal later). Default 5,000.
    pub timeout_ms: u64,
    /// Redis only: the largest `window_ms` any holder of a space may use; the
    /// store refuses a larger one, and fences claims after a data loss by it
    /// (docs/STORES.md, "Redis"). Every holder of a space must use the same
    /// value, and the same `max_skew_ms` (the space's marker records both).
    /// Default 30,000.
    pub redis_max_window_ms: u64,
    /// Redis only: claim even when the server may evict keys without a TTL
    /// (`maxmemory-policy allkeys-*`), paying the fence on every slot whose
    /// record is missing. Default false: such a server is refused.
    pub redis_allow_eviction: bool,
    /// PostgreSQL and MySQL/MariaDB only: the server settings that lose
    /// acknowledged writes which the store serves anyway, by name
    /// (`sql_allow_unsafe=synchronous_commit,fsync`; also
    /// `innodb_flush_log_at_trx_commit` and `replica`). Default: none, and
    /// such a server is refused at claim (docs/STORES.md, "SQL").
    pub sql_allow_unsafe: Vec<String>,
}

/// The names `sql_allow_unsafe` takes: PostgreSQL's, then MySQL/MariaDB's.
pub const SQL_UNSAFE: [&str; 4] = [
    "synchronous_commit",
    "fsync",
    "innodb_flush_log_at_trx_commit",
    "replica",
];

impl Default for Settings {
    fn default() -> Self {
        Settings {
            namespace: None,
            ttl_ms: 30_000,
            renew_ms: 10_000,
            window_ms: 20_000,
            max_skew_ms: 5_000,
            timeout_ms: 5_000,
            allow_fs: None,
            redis_max_window_ms: 30_000,
            redis_allow_eviction: false,
            sql_allow_unsafe: Vec::new(),
        }
    }
}

impl Settings {
    /// The defaults with another `timeout_ms`.
    pub fn with_timeout(timeout_ms: u64) -> Settings {
        Settings {
            timeout_ms,
            ..Settings::default()
        }
    }

    /// The keys the query accepts.
    pub const KEYS: [&'static str; 10] = [
        "namespace",
        "ttl_ms",
        "renew_ms",
        "window_ms",
        "max_skew_ms",
        "timeout_ms",
        "allow_fs",
        "redis_max_window_ms",
        "redis_allow_eviction",
        "sql_allow_unsafe",
    ];

    /// Checks the relations between the durations: every one at least 1 ms,
    /// a renewal before the TTL runs out (`renew_ms < ttl_ms`) and before the
    /// reservation does (`renew_ms < window_ms`).
    pub fn check(&self) -> Result<(), LeaseError> {
        for (k, v) in [
            ("ttl_ms", self.ttl_ms),
            ("renew_ms", self.renew_ms),
            ("window_ms", self.window_ms),
            ("timeout_ms", self.timeout_ms),
        ] {
            if v == 0 {
                return Err(LeaseError::url(format!("{k} must be at least 1")));
            }
        }
        if self.renew_ms >= self.ttl_ms {
            return Err(LeaseError::url(format!(
                "renew_ms ({}) must be less than ttl_ms ({})",
                self.renew_ms, self.ttl_ms
            )));
        }
        if self.renew_ms >= self.window_ms {
            return Err(LeaseError::url(format!(
                "renew_ms ({}) must be less than window_ms ({}), or the reservation runs out between renewals",
                self.renew_ms, self.window_ms
            )));
        }
        if let Some(ns) = &self.namespace {
            check_namespace(ns)?;
        }
        Ok(())
    }
}

fn check_namespace(ns: &str) -> Result<(), LeaseError> {
    let ok = !ns.is_empty()
        && ns.len() <= 64
        && ns
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-'));
    if ok {
        Ok(())
    } else {
        Err(LeaseError::url(format!(
            "namespace '{ns}' must be 1 to 64 characters of [A-Za-z0-9_.-]"
        )))
    }
}

/// A parsed lease URL.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LeaseUrl {
    /// The store.
    pub store: StoreUrl,
    /// The options.
    pub settings: Settings,
}

impl LeaseUrl {
    /// Parses a lease URL. Every problem is `invalid_option` naming the part.
    ///
    /// ```
    /// use snowmint_lease::{LeaseUrl, StoreUrl};
    /// let u = LeaseUrl::parse("file:/tmp/ids?namespace=orders&ttl_ms=3000&renew_ms=1000").unwrap();
    /// assert_eq!(u.store, StoreUrl::File("/tmp/ids".into()));
    /// assert_eq!(u.settings.namespace.as_deref(), Some("orders"));
    /// assert_eq!(u.settings.ttl_ms, 3000);
    /// assert_eq!(LeaseUrl::parse("zookeeper://h:2181").unwrap_err().code(), "invalid_option");
    /// ```
    pub fn parse(url: &str) -> Result<LeaseUrl, LeaseError> {
        let (head, query) = match url.split_once('?') {
            Some((h, q)) => (h, Some(q)),
            None => (url, None),
        };
        let store = parse_store(head)?;
        if !BUILT_STORES.contains(&store.kind()) {
            return Err(LeaseError::url(format!(
                "the '{}' store is not built into this package (built: {})",
                store.kind(),
                BUILT_STORES.join(", ")
            )));
        }
        let mut settings = Settings::default();
        let mut seen: Vec<&str> = Vec::new();
        for pair in query.unwrap_or("").split('&').filter(|p| !p.is_empty()) {
            let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
            if seen.contains(&k) {
                return Err(LeaseError::url(format!("option '{k}' given twice")));
            }
            seen.push(k);
            let number = || -> Result<u64, LeaseError> {
                v.parse::<u64>().map_err(|_| {
                    LeaseError::url(format!(
                        "{k} must be a whole number of milliseconds, not '{v}'"
                    ))
                })
            };
            match k {
                "namespace" => settings.namespace = Some(percent_decode(v, "namespace")?),
                "ttl_ms" => settings.ttl_ms = number()?,
                "renew_ms" => settings.renew_ms = number()?,
                "window_ms" => settings.window_ms = number()?,
                "max_skew_ms" => settings.max_skew_ms = number()?,
                "timeout_ms" => settings.timeout_ms = number()?,
                "allow_fs" if store.kind() == "file" && !v.is_empty() => {
                    settings.allow_fs = Some(percent_decode(v, "allow_fs value")?)
                }
                "allow_fs" => {
                    return Err(LeaseError::url(
                        "allow_fs names a filesystem, and only a file: URL takes it",
                    ))
                }
                "redis_max_window_ms" => settings.redis_max_window_ms = number()?,
                "redis_allow_eviction" => {
                    settings.redis_allow_eviction = match v {
                        "true" | "1" => true,
                        "false" | "0" => false,
                        _ => {
                            return Err(LeaseError::url(format!(
                                "redis_allow_eviction must be true or false, not '{v}'"
                            )))
                        }
                    }
                }
                "sql_allow_unsafe" if matches!(store.kind(), "postgres" | "mysql") => {
                    for name in v.split(',') {
                        if !SQL_UNSAFE.contains(&name) {
                            return Err(LeaseError::url(format!(
                                "sql_allow_unsafe names server settings ({}), not '{}'",
                                SQL_UNSAFE.join(", "),
                                name.chars().take(40).collect::<String>()
                            )));
                        }
                        settings.sql_allow_unsafe.push(name.to_string());
                    }
                }
                "sql_allow_unsafe" => {
                    return Err(LeaseError::url(
                        "sql_allow_unsafe names server settings, and only a postgres: or mysql: \
                         URL takes it",
                    ))
                }
                _ => {
                    return Err(LeaseError::url(format!(
                        "unknown option '{}' (known: {})",
                        k.chars().take(32).collect::<String>(),
                        Settings::KEYS.join(", ")
                    )))
                }
            }
        }
        settings.check()?;
        Ok(LeaseUrl { store, settings })
    }
}

/// The store part (before the query) of a lease URL.
fn parse_store(head: &str) -> Result<StoreUrl, LeaseError> {
    let (scheme, rest) = match head.split_once(':') {
        Some((s, r)) => (s, r),
        None => (head, ""),
    };
    let network = |what: &str| -> Result<String, LeaseError> {
        if !rest.starts_with("//") || rest.len() <= 2 {
            return Err(LeaseError::url(format!(
                "a {what} URL is '{scheme}://host[:port]...'"
            )));
        }
        Ok(format!("{scheme}:{rest}"))
    };
    Ok(match scheme {
        "file" => StoreUrl::File(file_path(rest)?),
        "postgres" | "postgresql" => StoreUrl::Postgres(network("PostgreSQL")?),
        "mysql" | "mariadb" => {
            StoreUrl::Mysql(format!("mysql:{}", &network("MySQL")?[scheme.len() + 1..]))
        }
        "redis" | "rediss" => StoreUrl::Redis(network("Redis")?),
        "etcd" => StoreUrl::Etcd(format!("http:{}", &network("etcd")?[5..])),
        "zookeeper" => {
            let inner = network("ZooKeeper")?["zookeeper://".len()..].to_string();
            if inner.contains('@') {
                return Err(LeaseError::url(
                    "a ZooKeeper URL has no user or password (the store uses no ZooKeeper \
                     authentication)",
                ));
            }
            StoreUrl::Zookeeper(inner)
        }
        "" => {
            return Err(LeaseError::url(
                "empty URL (expected e.g. 'file:/var/lib/myapp/ids' or 'file')",
            ))
        }
        s => {
            return Err(LeaseError::url(format!(
                "unknown scheme '{}' (known: file, postgres, mysql, redis, etcd, zookeeper)",
                s.chars().take(32).collect::<String>()
            )))
        }
    })
}

/// The directory of a `file` URL: `file:/abs`, `file:///abs`, `file:rel`,
/// or nothing for the default.
fn file_path(rest: &str) -> Result<PathBuf, LeaseError> {
    let path = if let Some(p) = rest.strip_prefix("//") {
        // file://HOST/path: only an empty host or localhost.
        match p.find('/') {
            Some(0) => p,
            Some(i) if &p[..i] == "localhost" => &p[i..],
            _ => {
                return Err(LeaseError::url(
                    "a file URL names a local directory: 'file:/path' or 'file:///path'",
                ))
            }
        }
    } else {
        rest
    };
    if path.is_empty() {
        return default_dir();
    }
    Ok(PathBuf::from(percent_decode(path, "file path")?))
}

/// The per-user default directory of plain `file`: `$XDG_STATE_HOME/snowmint/leases`,
/// else `~/.local/state/snowmint/leases`. A state directory, not
/// `$XDG_RUNTIME_DIR`: the high-water marks must survive a reboot (a clock set
/// back at boot is exactly what they protect against). The file store creates
/// it 0700 and refuses it unless this user owns it, neither group nor others
/// may write it, and it is not on tmpfs (`allow_fs=tmpfs` overrides) or
/// overlayfs (`allow_fs=overlay`).
///
/// With neither variable set there is no default (`lease_unavailable`): the
/// temporary directory a default would fall back to may be private to the
/// process (systemd's `PrivateTmp`, a container's own `/tmp`), where every
/// instance would find an empty store and take the same slot.
pub(crate) fn default_dir() -> Result<PathBuf, LeaseError> {
    let nonempty = |k: &str| {
        std::env::var_os(k)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    if let Some(d) = nonempty("XDG_STATE_HOME") {
        return Ok(d.join("snowmint").join("leases"));
    }
    if let Some(h) = nonempty("HOME") {
        return Ok(h.join(".local/state/snowmint/leases"));
    }
    Err(LeaseError::unavailable(
        LeaseProblem::Refused,
        "plain 'file' has no default directory without XDG_STATE_HOME or HOME (a temporary \
         directory may be private to this process, as under systemd's PrivateTmp or in a \
         container, and then every instance takes the same slot): give the directory, \
         file:/path, on a local filesystem every process leasing these node values sees (for \
         containers: a directory of the host mounted into each)",
    ))
}

/// Percent-decoding (`%2F`) of a URL's `part` (named in errors, which never
/// quote the text: it may be a password); anything else is kept as is.
pub(crate) fn percent_decode(s: &str, part: &str) -> Result<String, LeaseError> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let hex = s
                .get(i + 1..i + 3)
                .and_then(|h| u8::from_str_radix(h, 16).ok())
                .ok_or_else(|| {
                    LeaseError::url(format!("bad percent escape at byte {i} of the {part}"))
                })?;
            out.push(hex);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8(out)
        .map_err(|_| LeaseError::url(format!("the {part} decodes to invalid UTF-8")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(url: &str) -> String {
        let e = LeaseUrl::parse(url).unwrap_err();
        assert_eq!(e.code(), "invalid_option", "{url}");
        e.to_string()
    }

    #[test]
    fn file_forms() {
        let p = |u: &str| match LeaseUrl::parse(u).unwrap().store {
            StoreUrl::File(p) => p,
            other => panic!("{other:?}"),
        };
        assert_eq!(
            p("file:/var/lib/myapp/ids"),
            PathBuf::from("/var/lib/myapp/ids")
        );
        assert_eq!(p("file:///var/lib/x"), PathBuf::from("/var/lib/x"));
        assert_eq!(p("file://localhost/var/lib/x"), PathBuf::from("/var/lib/x"));
        assert_eq!(p("file:rel/dir"), PathBuf::from("rel/dir"));
        assert_eq!(p("file:/a%20b"), PathBuf::from("/a b"));
        // Without XDG_STATE_HOME and HOME (tests/processes.rs) there is none.
        if let Ok(d) = default_dir() {
            assert_eq!(p("file"), d);
            assert_eq!(p("file:"), d);
            assert_eq!(p("file?namespace=x"), d);
            assert!(d.ends_with("snowmint/leases"));
        }
    }

    #[test]
    fn network_stores_and_their_names() {
        let store = |u: &str| StoreUrl::parse_for_test(u);
        assert_eq!(
            store("postgresql://app:secret@db:5432/ids?namespace=x"),
            StoreUrl::Postgres("postgresql://app:secret@db:5432/ids".into())
        );
        assert_eq!(
            store("mariadb://root@127.0.0.1:3306/test"),
            StoreUrl::Mysql("mysql://root@127.0.0.1:3306/test".into())
        );
        assert_eq!(
            store("etcd://127.0.0.1:2379"),
            StoreUrl::Etcd("http://127.0.0.1:2379".into())
        );
        assert_eq!(
            store("zookeeper://a:2181,b:2181/app?namespace=x"),
            StoreUrl::Zookeeper("a:2181,b:2181/app".into())
        );
        assert_eq!(
            StoreUrl::Zookeeper("a:2181,b:2181/app".into()).describe(),
            "zookeeper://a:2181,b:2181/app"
        );
        assert_eq!(
            StoreUrl::Postgres("postgres://app:secret@db:5432/ids".into()).describe(),
            "postgres://app:***@db:5432/ids"
        );
        assert_eq!(
            StoreUrl::Redis("redis://:pw@h:6379/0".into()).describe(),
            "redis://:***@h:6379/0"
        );
        assert_eq!(redact("redis://h:6379"), "redis://h:6379");
        assert_eq!(
            StoreUrl::Etcd("http://h:2379".into()).describe(),
            "etcd://h:2379"
        );
    }

    #[test]
    fn options() {
        let u = LeaseUrl::parse(
            "file:/x?namespace=orders.v2&ttl_ms=3000&renew_ms=500&window_ms=2000&max_skew_ms=100&timeout_ms=50",
        )
        .unwrap();
        assert_eq!(
            u.settings,
            Settings {
                namespace: Some("orders.v2".into()),
                ttl_ms: 3000,
                renew_ms: 500,
                window_ms: 2000,
                max_skew_ms: 100,
                timeout_ms: 50,
                ..Settings::default()
            }
        );
        assert_eq!(
            LeaseUrl::parse("file:/x").unwrap().settings,
            Settings::default()
        );
        assert_eq!(
            LeaseUrl::parse("file?allow_fs=tmpfs")
                .unwrap()
                .settings
                .allow_fs
                .as_deref(),
            Some("tmpfs")
        );
        // max_skew_ms 0: the clocks must agree to the millisecond; allowed.
        assert_eq!(
            LeaseUrl::parse("file:/x?max_skew_ms=0")
                .unwrap()
                .settings
                .max_skew_ms,
            0
        );
    }

    #[test]
    fn refusals_name_the_problem() {
        assert!(err("consul://h:8500/x").contains("unknown scheme 'consul'"));
        #[cfg(not(feature = "zookeeper"))]
        assert!(err("zookeeper://h:2181/x").contains("'zookeeper' store is not built"));
        assert!(err("zookeeper://u:p@h:2181").contains("no user or password"));
        #[cfg(not(feature = "postgres"))]
        assert!(err("postgres://u@h/db").contains("'postgres' store is not built"));
        assert!(err("redis:6379").contains("'redis://host[:port]...'"));
        #[cfg(not(feature = "redis"))]
        assert!(err("redis://h").contains("'redis'"));
        #[cfg(not(feature = "etcd"))]
        assert!(err("etcd://h:2379").contains("'etcd'"));
        assert!(err("").contains("empty URL"));
        assert!(err("file:/x?ttl=5").contains("unknown option 'ttl' (known: namespace, ttl_ms"));
        assert!(err("file:/x?ttl_ms=abc").contains("ttl_ms must be a whole number"));
        assert!(err("file:/x?ttl_ms=-1").contains("ttl_ms must be a whole number"));
        assert!(err("file:/x?ttl_ms=1&ttl_ms=2").contains("given twice"));
        assert!(err("file:/x?renew_ms=0").contains("renew_ms must be at least 1"));
        assert!(err("file:/x?ttl_ms=100&renew_ms=100").contains("less than ttl_ms"));
        assert!(err("file:/x?window_ms=5000").contains("less than window_ms"));
        assert!(err("file:/x?namespace=a/b").contains("namespace 'a/b'"));
        assert!(err("file:/x?namespace=").contains("namespace ''"));
        assert!(err("file://otherhost/x").contains("local directory"));
        assert!(err("file:/x%zz").contains("percent escape"));
        #[cfg(feature = "redis")]
        assert!(err("redis://h?allow_fs=nfs").contains("only a file: URL takes it"));
        assert!(err("file:/x?allow_fs=").contains("allow_fs names a filesystem"));
        assert!(err("file:/x?sql_allow_unsafe=fsync").contains("only a postgres: or mysql:"));
        #[cfg(feature = "postgres")]
        {
            assert!(err("postgres://h/d?sql_allow_unsafe=wal").contains("not 'wal'"));
            let u = LeaseUrl::parse("postgres://h/d?sql_allow_unsafe=fsync,synchronous_commit");
            assert_eq!(
                u.unwrap().settings.sql_allow_unsafe,
                ["fsync", "synchronous_commit"]
            );
        }
        let e = LeaseUrl::parse("nope:x").unwrap_err();
        assert_eq!(e.kind.class(), snowmint::ErrorClass::Value);
        assert!(
            e.to_string()
                .starts_with("invalid option 'lease': unknown scheme"),
            "{e}"
        );
        assert!(e.to_string().ends_with("[invalid_option]"), "{e}");
    }

    #[test]
    fn authorities() {
        let a = Authority::parse;
        let parts = |x: Authority<'static>| (x.user, x.password, x.host);
        assert_eq!(parts(a("h:1")), (None, None, "h:1"));
        assert_eq!(parts(a("u@h")), (Some("u"), None, "h"));
        // The last '@' ends the user information; the first ':' ends the user.
        assert_eq!(parts(a("u:p@ss:w@h:2")), (Some("u"), Some("p@ss:w"), "h:2"));
        assert_eq!(parts(a(":@h")), (Some(""), Some(""), "h"));
        let (scheme, auth, tail) = Authority::of_url("redis://u:pw@h:6379/2?x=1").unwrap();
        assert_eq!(
            (scheme, auth.password, auth.host, tail),
            ("redis", Some("pw"), "h:6379", "/2?x=1")
        );
        assert_eq!(Authority::of_url("file:/x"), None);
    }

    #[test]
    fn redaction() {
        assert_eq!(redact("etcd://u:s%40c@h:1/x?y"), "etcd://u:***@h:1/x?y");
        assert_eq!(redact("redis://u@h"), "redis://u@h");
        assert_eq!(redact("redis://:pw@h"), "redis://:***@h");
        assert_eq!(redact("postgres://h/db?x=1"), "postgres://h/db?x=1");
        assert_eq!(redact("file:/a@b:c"), "file:/a@b:c");
    }

    #[test]
    fn percent_decoding() {
        assert_eq!(
            percent_decode("s%40cret%2f", "password").unwrap(),
            "s@cret/"
        );
        assert_eq!(percent_decode("plain", "user").unwrap(), "plain");
        let e = percent_decode("se%zzcret", "password")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("bad percent escape at byte 2 of the password"),
            "{e}"
        );
        assert!(!e.contains("cret"), "{e}");
        let e = percent_decode("%ff", "password").unwrap_err().to_string();
        assert!(e.contains("invalid UTF-8") && !e.contains("ff"), "{e}");
        let e = percent_decode("x%4", "user").unwrap_err().to_string();
        assert!(e.contains("byte 1"), "{e}");
    }
}
