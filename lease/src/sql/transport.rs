//! The SQL store's client layer: connection options and their timeouts, a
//! small pool of connections, statements with `?` placeholders for both
//! servers, transactions, and the translation of the clients' errors. It
//! knows nothing of leases (`slots.rs` does).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::error::LeaseError;
use crate::store::StoreError;
use crate::url::redact;

/// Which server (the SQL differs in a few places).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Dialect {
    #[cfg(feature = "postgres")]
    Postgres,
    #[cfg(feature = "mysql")]
    Mysql,
}

/// At most this many idle connections are kept per store: one holder's calls
/// run one at a time (the renewal thread, a release), so more would only be
/// left over from calls that overlapped.
const MAX_IDLE: usize = 2;

/// How to connect.
#[derive(Clone)]
pub(super) enum Target {
    #[cfg(feature = "postgres")]
    /// With the bound on each wait (`Pg`).
    Postgres(Box<tokio_postgres::Config>, Duration),
    #[cfg(feature = "mysql")]
    Mysql(Box<mysql::Opts>),
}

/// An open connection.
enum Db {
    #[cfg(feature = "postgres")]
    Postgres(Box<Pg>),
    #[cfg(feature = "mysql")]
    Mysql(Box<mysql::Conn>),
}

pub(super) struct Conn {
    db: Db,
    pub(super) dialect: Dialect,
    /// The tables are known to exist.
    pub(super) ready: bool,
    /// Where the tables were found (PostgreSQL: the schema on the search
    /// path; MySQL: the database), once `ready`.
    pub(super) schema: String,
}

/// A value passed to or read from the database.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Val {
    I(i64),
    S(String),
}

/// What kind of failure a database error is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Failure {
    /// A primary key is taken (a racing insert won).
    Duplicate,
    /// Deadlock, serialization failure or lock timeout: try again.
    Contention,
    /// Anything else: the call fails as unreachable, the connection is dropped.
    Other,
    /// Our own refusal inside a transaction (rolled back): the call fails as
    /// [`StoreError::Refused`] with the message.
    Refused,
    /// A row this version cannot read (rolled back): the call fails as
    /// [`StoreError::BadRecord`] with the message.
    BadRecord,
}

#[derive(Debug)]
pub(super) struct DbError {
    pub(super) failure: Failure,
    pub(super) message: String,
}

impl From<DbError> for StoreError {
    fn from(e: DbError) -> StoreError {
        match e.failure {
            Failure::Refused => StoreError::Refused(e.message),
            Failure::BadRecord => StoreError::BadRecord(e.message),
            _ => StoreError::Unreachable(e.message),
        }
    }
}

pub(super) type DbResult<T> = Result<T, DbError>;

impl Target {
    /// PostgreSQL options from `url`, with the timeouts of `timeout`.
    #[cfg(feature = "postgres")]
    pub(super) fn postgres(url: &str, timeout: Duration) -> Result<Target, LeaseError> {
        let mut config: tokio_postgres::Config = url
            .parse()
            .map_err(|e| LeaseError::url(format!("{}: not a PostgreSQL URL: {e}", redact(url))))?;
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(timeout);
        }
        // A server that stops acknowledging what we send kills the connection
        // (Linux); keepalives find a server that went away while idle.
        config.tcp_user_timeout(timeout);
        config.keepalives_idle(timeout.max(Duration::from_secs(1)));
        // Server-side bounds: no statement or lock wait outlives the call.
        let ms = timeout.as_millis();
        let bounds = format!("-c statement_timeout={ms} -c lock_timeout={ms}");
        let options = match config.get_options() {
            Some(o) if !o.is_empty() => format!("{o} {bounds}"),
            _ => bounds,
        };
        config.options(&options);
        if config.get_application_name().is_none() {
            config.application_name("snowmint-lease");
        }
        Ok(Target::Postgres(Box::new(config), timeout))
    }

    /// MySQL/MariaDB options from `url`, with the timeouts of `timeout`.
    #[cfg(feature = "mysql")]
    pub(super) fn mysql(url: &str, timeout: Duration) -> Result<Target, LeaseError> {
        let opts = mysql::Opts::from_url(url)
            .map_err(|e| LeaseError::url(format!("{}: not a MySQL URL: {e}", redact(url))))?;
        let lock_wait_s = timeout.as_millis().div_ceil(1000).max(1);
        // The read and write timeouts bound every statement on every system;
        // Linux also drops a connection whose sent data goes unacknowledged
        // (the option exists only there).
        let opts = mysql::OptsBuilder::from_opts(opts)
            // TCP as the URL says, not the server's socket file.
            .prefer_socket(false)
            .tcp_connect_timeout(Some(timeout))
            .read_timeout(Some(timeout))
            .write_timeout(Some(timeout));
        #[cfg(target_os = "linux")]
        let opts =
            opts.tcp_user_timeout_ms(Some(u32::try_from(timeout.as_millis()).unwrap_or(u32::MAX)));
        let opts = opts.init(vec![
            // Every write is committed explicitly (`Conn::transaction`);
            // this also keeps plain reads (`list`, a claim's candidates)
            // out of a snapshot that a server started with
            // `autocommit=0` would hold open across calls.
            "SET autocommit = 1".to_string(),
            // UNIX_TIMESTAMP(NOW(6)) without daylight-saving ambiguity.
            "SET time_zone = '+00:00'".to_string(),
            format!("SET SESSION innodb_lock_wait_timeout = {lock_wait_s}"),
        ]);
        Ok(Target::Mysql(Box::new(opts.into())))
    }
}

/// The connections of one store: opened on demand, at most `MAX_IDLE` kept.
pub(super) struct Pool {
    target: Target,
    timeout: Duration,
    idle: Mutex<Vec<Conn>>,
    opened: AtomicU64,
}

impl Pool {
    /// A pool for `target` (no I/O).
    pub(super) fn new(target: Target, timeout: Duration) -> Pool {
        Pool {
            target,
            timeout,
            idle: Mutex::new(Vec::new()),
            opened: AtomicU64::new(0),
        }
    }

    /// How many connections this pool has opened so far.
    pub(super) fn opened(&self) -> u64 {
        self.opened.load(Ordering::Relaxed)
    }

    /// Runs `op` on a pooled (or new) connection, on the caller's thread.
    /// No thread of its own: every statement is bounded by the clients'
    /// timeouts (see `Target`), and the driver bounds how long its caller
    /// waits. A connection whose call failed as unreachable (a timeout
    /// included) is dropped, which also rolls back whatever it had not
    /// committed. `op` gets the call's deadline, for loops of statements.
    pub(super) fn call<T>(
        &self,
        op: impl FnOnce(&mut Conn, Instant) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        let deadline = Instant::now() + self.timeout;
        let pooled = self.idle.lock().unwrap_or_else(|e| e.into_inner()).pop();
        let mut conn = match pooled {
            Some(c) => c,
            None => {
                self.opened.fetch_add(1, Ordering::Relaxed);
                connect(&self.target)?
            }
        };
        let result = op(&mut conn, deadline);
        if !matches!(result, Err(StoreError::Unreachable(_))) {
            let mut idle = self.idle.lock().unwrap_or_else(|e| e.into_inner());
            if idle.len() < MAX_IDLE {
                idle.push(conn);
            }
        }
        result
    }
}

/// Opens a connection, each step bounded by the timeout.
fn connect(target: &Target) -> Result<Conn, StoreError> {
    match target {
        #[cfg(feature = "postgres")]
        Target::Postgres(config, timeout) => match Pg::connect(config, *timeout) {
            Ok(pg) => Ok(Conn {
                db: Db::Postgres(Box::new(pg)),
                dialect: Dialect::Postgres,
                ready: false,
                schema: String::new(),
            }),
            Err(e) => Err(StoreError::Unreachable(e.message)),
        },
        #[cfg(feature = "mysql")]
        Target::Mysql(opts) => match mysql::Conn::new((**opts).clone()) {
            Ok(c) => Ok(Conn {
                db: Db::Mysql(Box::new(c)),
                dialect: Dialect::Mysql,
                ready: false,
                schema: String::new(),
            }),
            Err(e) => Err(StoreError::Unreachable(my_error(&e).message)),
        },
    }
}

/// A PostgreSQL connection with a client-side bound on every wait, which the
/// blocking `postgres` crate lacks (it has a connect timeout for the TCP
/// connection only, and no read timeout: a stopped server, or a proxy that
/// holds the connection open without answering, would block a call for
/// ever). The asynchronous client runs on a single-threaded runtime of its
/// own, driven on the caller's thread only while a statement is awaited, and
/// each wait (the whole connection handshake, each statement) is given up
/// after `timeout`; the connection is then dropped.
#[cfg(feature = "postgres")]
struct Pg {
    client: tokio_postgres::Client,
    /// Runs the connection's I/O task (spawned on it) inside `block_on`.
    runtime: tokio::runtime::Runtime,
    timeout: Duration,
}

#[cfg(feature = "postgres")]
impl Pg {
    fn connect(config: &tokio_postgres::Config, timeout: Duration) -> DbResult<Pg> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| DbError {
                failure: Failure::Other,
                message: format!("cannot start the PostgreSQL client: {e}"),
            })?;
        let (client, connection) =
            bounded(&runtime, timeout, config.connect(tokio_postgres::NoTls))?;
        // The task ends when the connection closes, or with the runtime.
        runtime.spawn(connection);
        Ok(Pg {
            client,
            runtime,
            timeout,
        })
    }

    fn run<T>(
        &self,
        f: impl std::future::Future<Output = Result<T, tokio_postgres::Error>>,
    ) -> DbResult<T> {
        bounded(&self.runtime, self.timeout, f)
    }
}

/// Runs `f` on `runtime`, giving up after `timeout`.
#[cfg(feature = "postgres")]
fn bounded<T>(
    runtime: &tokio::runtime::Runtime,
    timeout: Duration,
    f: impl std::future::Future<Output = Result<T, tokio_postgres::Error>>,
) -> DbResult<T> {
    // The timer is made inside the runtime (it needs the runtime's clock).
    match runtime.block_on(async { tokio::time::timeout(timeout, f).await }) {
        Ok(r) => r.map_err(|e| pg_error(&e)),
        Err(_) => Err(DbError {
            failure: Failure::Other,
            message: format!("timed out: no answer within {} ms", timeout.as_millis()),
        }),
    }
}

#[cfg(feature = "postgres")]
fn pg_error(e: &tokio_postgres::Error) -> DbError {
    use tokio_postgres::error::SqlState;
    let Some(db) = e.as_db_error() else {
        // The client's text, then its causes ("Connection refused (os error 111)").
        let mut message = e.to_string();
        let mut source = std::error::Error::source(e);
        while let Some(cause) = source {
            let c = cause.to_string();
            if !message.contains(&c) {
                message = format!("{message}: {c}");
            }
            source = cause.source();
        }
        // The server asked for a password the URL does not have.
        let message = if message.contains("password missing") {
            format!("authentication failed: {message}")
        } else {
            message
        };
        return DbError {
            failure: Failure::Other,
            message,
        };
    };
    let code = db.code();
    let failure = if *code == SqlState::UNIQUE_VIOLATION {
        Failure::Duplicate
    } else if *code == SqlState::T_R_SERIALIZATION_FAILURE
        || *code == SqlState::T_R_DEADLOCK_DETECTED
        || *code == SqlState::LOCK_NOT_AVAILABLE
    {
        Failure::Contention
    } else {
        Failure::Other
    };
    let auth = code.code().starts_with("28");
    DbError {
        failure,
        message: format!(
            "{}{} {}: {}",
            if auth { "authentication failed: " } else { "" },
            db.severity(),
            code.code(),
            db.message()
        ),
    }
}

#[cfg(feature = "mysql")]
fn my_error(e: &mysql::Error) -> DbError {
    match e {
        mysql::Error::MySqlError(m) => {
            let failure = match m.code {
                1062 => Failure::Duplicate,
                1205 | 1213 => Failure::Contention,
                _ => Failure::Other,
            };
            // 1044/1045: access denied (database, user or password);
            // 1698: access denied to a user with socket authentication.
            let auth = matches!(m.code, 1044 | 1045 | 1698);
            DbError {
                failure,
                message: format!(
                    "{}ERROR {} ({}): {}",
                    if auth { "authentication failed: " } else { "" },
                    m.code,
                    m.state,
                    m.message
                ),
            }
        }
        // A socket read or write timeout is WouldBlock (Unix) or TimedOut
        // (Windows), reported directly or from the packet decoder.
        mysql::Error::IoError(io)
        | mysql::Error::CodecError(mysql_common::proto::codec::error::PacketCodecError::Io(io)) => {
            DbError {
                failure: Failure::Other,
                message: match io.kind() {
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut => {
                        format!("timed out: {io}")
                    }
                    _ => io.to_string(),
                },
            }
        }
        mysql::Error::DriverError(d) => DbError {
            failure: Failure::Other,
            message: d.to_string(),
        },
        other => DbError {
            failure: Failure::Other,
            message: other.to_string(),
        },
    }
}
impl Conn {
    /// The database's clock in Unix ms, as an SQL expression.
    pub(super) fn now_sql(&self) -> &'static str {
        match self.dialect {
            #[cfg(feature = "postgres")]
            Dialect::Postgres => "(floor(extract(epoch FROM clock_timestamp()) * 1000))::bigint",
            #[cfg(feature = "mysql")]
            Dialect::Mysql => "CAST(FLOOR(UNIX_TIMESTAMP(NOW(6)) * 1000) AS SIGNED)",
        }
    }

    /// Runs `sql` (placeholders written `?`) and returns its rows.
    pub(super) fn query(&mut self, sql: &str, params: &[Val]) -> DbResult<Vec<Vec<Val>>> {
        match &mut self.db {
            #[cfg(feature = "postgres")]
            Db::Postgres(pg) => {
                use tokio_postgres::types::{ToSql, Type};
                let mut text = String::with_capacity(sql.len() + 8);
                let mut n = 0;
                for c in sql.chars() {
                    if c == '?' {
                        n += 1;
                        text.push_str(&format!("${n}"));
                    } else {
                        text.push(c);
                    }
                }
                let refs: Vec<&(dyn ToSql + Sync)> = params
                    .iter()
                    .map(|p| match p {
                        Val::I(i) => i as &(dyn ToSql + Sync),
                        Val::S(s) => s as &(dyn ToSql + Sync),
                    })
                    .collect();
                let rows = pg.run(pg.client.query(text.as_str(), &refs))?;
                rows.iter()
                    .map(|row| {
                        (0..row.len())
                            .map(|i| {
                                let t = row.columns()[i].type_();
                                let v = if *t == Type::INT8 {
                                    row.try_get::<_, i64>(i).map(Val::I)
                                } else if *t == Type::INT4 {
                                    row.try_get::<_, i32>(i).map(|v| Val::I(v.into()))
                                } else if *t == Type::NUMERIC {
                                    // As text, so that a hand-made DECIMAL
                                    // column is checked (and named) like
                                    // MySQL's, which sends it as text.
                                    row.try_get::<_, Numeric>(i).map(|n| Val::S(n.0))
                                } else {
                                    row.try_get::<_, String>(i).map(Val::S)
                                };
                                v.map_err(|e| pg_error(&e))
                            })
                            .collect()
                    })
                    .collect()
            }
            #[cfg(feature = "mysql")]
            Db::Mysql(conn) => {
                use mysql::prelude::Queryable;
                use mysql::Value;
                let params: Vec<Value> = params
                    .iter()
                    .map(|p| match p {
                        Val::I(i) => Value::Int(*i),
                        Val::S(s) => Value::Bytes(s.clone().into_bytes()),
                    })
                    .collect();
                let params = if params.is_empty() {
                    mysql::Params::Empty
                } else {
                    mysql::Params::Positional(params)
                };
                let rows: Vec<mysql::Row> = conn.exec(sql, params).map_err(|e| my_error(&e))?;
                rows.into_iter()
                    .map(|row| {
                        row.unwrap()
                            .into_iter()
                            .map(|v| match v {
                                Value::Int(i) => Ok(Val::I(i)),
                                Value::UInt(u) => {
                                    i64::try_from(u).map(Val::I).map_err(|_| DbError {
                                        failure: Failure::Other,
                                        message: format!("value {u} out of range"),
                                    })
                                }
                                Value::Bytes(b) => Ok(Val::S(String::from_utf8_lossy(&b).into())),
                                other => Err(DbError {
                                    failure: Failure::Other,
                                    message: format!("unexpected value {other:?}"),
                                }),
                            })
                            .collect()
                    })
                    .collect()
            }
        }
    }

    /// Runs statements without parameters (`BEGIN`, `COMMIT`, DDL).
    pub(super) fn batch(&mut self, sql: &str) -> DbResult<()> {
        match &mut self.db {
            #[cfg(feature = "postgres")]
            Db::Postgres(pg) => pg.run(pg.client.batch_execute(sql)),
            #[cfg(feature = "mysql")]
            Db::Mysql(conn) => {
                use mysql::prelude::Queryable;
                conn.query_drop(sql).map_err(|e| my_error(&e))
            }
        }
    }

    /// Whether a statement sent as text (MySQL's `SHOW ...`, which the
    /// binary protocol may not prepare) returns any row.
    #[cfg(feature = "mysql")]
    pub(super) fn has_rows_text(&mut self, sql: &str) -> DbResult<bool> {
        match &mut self.db {
            #[cfg(feature = "postgres")]
            Db::Postgres(pg) => pg.run(pg.client.simple_query(sql)).map(|m| {
                m.iter()
                    .any(|r| matches!(r, tokio_postgres::SimpleQueryMessage::Row(_)))
            }),
            Db::Mysql(conn) => {
                use mysql::prelude::Queryable;
                let rows: Vec<mysql::Row> = conn.query(sql).map_err(|e| my_error(&e))?;
                Ok(!rows.is_empty())
            }
        }
    }

    pub(super) fn rollback(&mut self) {
        // A failure here leaves the connection broken; the next statement says so.
        let _ = self.batch("ROLLBACK");
    }

    /// The database's clock, Unix ms.
    pub(super) fn now(&mut self) -> DbResult<i64> {
        let sql = format!("SELECT {}", self.now_sql());
        let rows = self.query(&sql, &[])?;
        Ok(int(&rows[0][0]))
    }

    /// Runs `f` between `BEGIN` and `COMMIT`, or `ROLLBACK` when it fails or
    /// `keep` says its result changed nothing worth keeping. Every write goes
    /// through here (or `lock_holder` + `update_and_commit`): a write is
    /// confirmed to the caller only once its `COMMIT` succeeded, whatever the
    /// session's autocommit (a MySQL server started with `autocommit=0` would
    /// otherwise leave it in an open transaction that a dropped connection
    /// rolls back).
    pub(super) fn transaction<T, E: From<DbError>>(
        &mut self,
        f: impl FnOnce(&mut Conn) -> Result<T, E>,
        keep: impl FnOnce(&T) -> bool,
    ) -> Result<T, E> {
        self.batch("BEGIN")?;
        let result = f(self);
        match &result {
            Ok(r) if keep(r) => {
                if let Err(e) = self.batch("COMMIT") {
                    self.rollback();
                    return Err(e.into());
                }
            }
            _ => self.rollback(),
        }
        result
    }
}

pub(super) fn int(v: &Val) -> i64 {
    match v {
        Val::I(i) => *i,
        Val::S(s) => s.parse().unwrap_or(-1),
    }
}

/// A column of a slot row that must hold a whole number >= 0 (`counter`,
/// `expires_ms`, `hwm_ms`): anything else (a fraction, a negative number,
/// text, a value too large) is a bad record naming the column and value,
/// never a guess (an `hwm` read as 0 would let a claim start below IDs
/// already issued).
pub(super) fn whole(v: &Val, column: &str, slot: &Val, key: &str) -> DbResult<i64> {
    let n = match v {
        Val::I(i) => Some(*i),
        Val::S(s) => s.parse::<i64>().ok(),
    };
    match n {
        Some(n) if n >= 0 => Ok(n),
        _ => {
            let shown = match v {
                Val::I(i) => i.to_string(),
                Val::S(s) => format!("{s:?}"),
            };
            let slot = match slot {
                Val::I(i) => i.to_string(),
                Val::S(s) => format!("{s:?}"),
            };
            Err(DbError {
                failure: Failure::BadRecord,
                message: format!(
                    "snowmint_lease_slot has {column} = {shown} in slot {slot} of {key}, not a \
                     whole number >= 0 (the column must be BIGINT)"
                ),
            })
        }
    }
}

/// A PostgreSQL NUMERIC as decimal text (its binary form: digit count,
/// weight, sign and display scale, then base-10000 digits).
#[cfg(feature = "postgres")]
struct Numeric(String);

#[cfg(feature = "postgres")]
impl<'a> tokio_postgres::types::FromSql<'a> for Numeric {
    fn from_sql(
        _: &tokio_postgres::types::Type,
        raw: &'a [u8],
    ) -> Result<Numeric, Box<dyn std::error::Error + Sync + Send>> {
        let word = |i: usize| -> Result<u16, Box<dyn std::error::Error + Sync + Send>> {
            raw.get(2 * i..2 * i + 2)
                .map(|b| u16::from_be_bytes([b[0], b[1]]))
                .ok_or_else(|| "a NUMERIC value too short".into())
        };
        let (ndigits, weight, sign, dscale) = (
            usize::from(word(0)?),
            i64::from(word(1)? as i16),
            word(2)?,
            usize::from(word(3)?),
        );
        if sign == 0xC000 {
            return Ok(Numeric("NaN".into()));
        }
        let digit = |i: i64| -> Result<u16, Box<dyn std::error::Error + Sync + Send>> {
            match usize::try_from(i) {
                Ok(i) if i < ndigits => word(4 + i),
                _ => Ok(0),
            }
        };
        let mut text = String::new();
        if sign == 0x4000 {
            text.push('-');
        }
        if weight < 0 {
            text.push('0');
        }
        for i in 0..=weight {
            let d = digit(i)?;
            if i == 0 {
                text.push_str(&d.to_string());
            } else {
                text.push_str(&format!("{d:04}"));
            }
        }
        if dscale > 0 {
            let mut frac = String::new();
            let mut i = weight + 1;
            while frac.len() < dscale {
                frac.push_str(&format!("{:04}", digit(i)?));
                i += 1;
            }
            frac.truncate(dscale);
            text.push('.');
            text.push_str(&frac);
        }
        Ok(Numeric(text))
    }

    fn accepts(t: &tokio_postgres::types::Type) -> bool {
        *t == tokio_postgres::types::Type::NUMERIC
    }
}

pub(super) fn as_i64(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

pub(super) fn as_u64(v: i64) -> u64 {
    u64::try_from(v).unwrap_or(0)
}
