//! The SQL store: PostgreSQL, or MySQL/MariaDB (InnoDB), one schema for both.
//!
//! ```text
//! snowmint_lease_space(space_key PK, space_text)           the space's canonical text
//! snowmint_lease_slot(space_key, slot, token, counter, expires_ms, hwm_ms,
//!                     PRIMARY KEY (space_key, slot))      one row per slot ever used
//! ```
//!
//! Both tables are created on first use (`CREATE TABLE IF NOT EXISTS`, skipped
//! when they exist, so a user without CREATE works on tables made for it).
//! A free slot has `token = ''`; rows are never deleted.
//!
//! Every decision is made on a row this connection has locked (`SELECT ...
//! FOR UPDATE [SKIP LOCKED]` by primary key), in a transaction that changes
//! only that row, with the database's clock (`clock_timestamp()`, `NOW(6)`).
//! Plain reads only suggest candidates. So the store is correct under the
//! default isolation levels (READ COMMITTED on PostgreSQL, REPEATABLE READ on
//! InnoDB): a locking read returns the newest committed version of the row on
//! both (PostgreSQL re-checks the condition on it; InnoDB's locking reads
//! bypass the snapshot), and nobody else can change the row until the
//! transaction commits. A new slot's row is inserted in a transaction of its
//! own: the primary key lets one of two racing inserts through, and the
//! other's duplicate-key error sends it to the next candidate. Every write is
//! committed explicitly, whatever the session's autocommit. Requires `SKIP
//! LOCKED`: PostgreSQL 9.5, MySQL 8.0, MariaDB 10.6 or later.
//!
//! Connections are made on the first call (the constructor does no I/O), kept
//! in a small pool, and dropped after an error. Every call runs on a helper
//! thread and gives up after `timeout_ms`; below that, the clients' own
//! timeouts (connect, socket reads and writes for MySQL; connect, TCP user
//! timeout and server-side statement and lock timeouts for PostgreSQL) end a
//! stuck call, so an abandoned helper does not live on.

use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use crate::error::LeaseError;
use crate::file::new_token;
use crate::space::SlotSpace;
use crate::store::{
    Claim, ClaimRequest, Holder, Renewal, SlotRecord, SlotRelease, SlotState, SpaceRecord, Store,
    StoreError,
};
use crate::url::redact;

/// Which server (the SQL differs in a few places).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Dialect {
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
enum Target {
    #[cfg(feature = "postgres")]
    Postgres(Box<postgres::Config>),
    #[cfg(feature = "mysql")]
    Mysql(Box<mysql::Opts>),
}

/// An open connection.
enum Db {
    #[cfg(feature = "postgres")]
    Postgres(Box<postgres::Client>),
    #[cfg(feature = "mysql")]
    Mysql(Box<mysql::Conn>),
}

struct Conn {
    db: Db,
    dialect: Dialect,
    /// The tables are known to exist.
    ready: bool,
}

/// A value passed to or read from the database.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Val {
    I(i64),
    S(String),
}

/// What kind of failure a database error is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Failure {
    /// A primary key is taken (a racing insert won).
    Duplicate,
    /// Deadlock, serialization failure or lock timeout: try again.
    Contention,
    /// Anything else: the call fails as unreachable, the connection is dropped.
    Other,
}

#[derive(Debug)]
struct DbError {
    failure: Failure,
    message: String,
}

impl From<DbError> for StoreError {
    fn from(e: DbError) -> StoreError {
        StoreError::Unreachable(e.message)
    }
}

type DbResult<T> = Result<T, DbError>;

/// The lease store in a PostgreSQL or MySQL/MariaDB database.
pub struct SqlStore {
    target: Target,
    name: String,
    timeout: Duration,
    idle: Arc<Mutex<Vec<Conn>>>,
    opened: Arc<std::sync::atomic::AtomicU64>,
}

impl std::fmt::Debug for SqlStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SqlStore").field("url", &self.name).finish()
    }
}

const CONTENDED_ROUNDS: usize = 50;

impl SqlStore {
    /// A PostgreSQL store (`postgres://user:password@host:5432/db`). No I/O.
    #[cfg(feature = "postgres")]
    pub fn postgres(url: &str, timeout_ms: u64) -> Result<SqlStore, LeaseError> {
        let timeout = Duration::from_millis(timeout_ms.max(1));
        let mut config: postgres::Config = url
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
        Ok(SqlStore::new(
            Target::Postgres(Box::new(config)),
            url,
            timeout,
        ))
    }

    /// A MySQL or MariaDB store (`mysql://user:password@host:3306/db`). No I/O.
    #[cfg(feature = "mysql")]
    pub fn mysql(url: &str, timeout_ms: u64) -> Result<SqlStore, LeaseError> {
        let timeout = Duration::from_millis(timeout_ms.max(1));
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
        Ok(SqlStore::new(
            Target::Mysql(Box::new(opts.into())),
            url,
            timeout,
        ))
    }

    fn new(target: Target, url: &str, timeout: Duration) -> SqlStore {
        SqlStore {
            target,
            name: redact(url),
            timeout,
            idle: Arc::new(Mutex::new(Vec::new())),
            opened: Arc::default(),
        }
    }

    /// How many connections this store has opened so far (the tests check
    /// that calls one after another reuse one).
    #[doc(hidden)]
    pub fn connections_opened(&self) -> u64 {
        self.opened.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Runs `op` on a pooled (or new) connection on a helper thread, waiting
    /// at most the timeout. A connection whose call failed as unreachable is
    /// dropped. If the caller has given up when `op` succeeds, `undo` runs
    /// (a late claim is released, so it does not hold a slot until its TTL).
    fn call<T: Send + 'static>(
        &self,
        op: impl FnOnce(&mut Conn, Instant) -> Result<T, StoreError> + Send + 'static,
        undo: Option<fn(&mut Conn, T)>,
    ) -> Result<T, StoreError> {
        struct Slot<T> {
            result: Option<Result<T, StoreError>>,
            abandoned: bool,
        }
        let shared = Arc::new((
            Mutex::new(Slot {
                result: None,
                abandoned: false,
            }),
            Condvar::new(),
        ));
        let pooled = self.idle.lock().unwrap_or_else(|e| e.into_inner()).pop();
        let (target, idle, timeout) = (self.target.clone(), Arc::clone(&self.idle), self.timeout);
        if pooled.is_none() {
            self.opened
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
        let deadline = Instant::now() + timeout;
        let s = Arc::clone(&shared);
        std::thread::Builder::new()
            .name("snowmint-lease-sql".into())
            .spawn(move || {
                let mut conn = match pooled.map_or_else(|| connect(&target), Ok) {
                    Ok(c) => c,
                    Err(e) => {
                        let mut slot = s.0.lock().unwrap_or_else(|e| e.into_inner());
                        slot.result = Some(Err(e));
                        s.1.notify_all();
                        return;
                    }
                };
                let result = op(&mut conn, deadline);
                let keep = !matches!(result, Err(StoreError::Unreachable(_)));
                let mut slot = s.0.lock().unwrap_or_else(|e| e.into_inner());
                if slot.abandoned {
                    drop(slot);
                    if let (Ok(late), Some(undo)) = (result, undo) {
                        undo(&mut conn, late);
                    }
                    return;
                }
                // Back in the pool before the caller sees the result, so that
                // its next call reuses this connection instead of opening
                // another (a holder needs one; the pool stays small).
                if keep {
                    let mut idle = idle.lock().unwrap_or_else(|e| e.into_inner());
                    if idle.len() < MAX_IDLE {
                        idle.push(conn);
                    }
                }
                slot.result = Some(result);
                s.1.notify_all();
            })
            .map_err(|e| StoreError::Unreachable(format!("cannot start a thread: {e}")))?;
        let (lock, cvar) = &*shared;
        let slot = lock.lock().unwrap_or_else(|e| e.into_inner());
        let (mut slot, _) = cvar
            .wait_timeout_while(slot, timeout, |s| s.result.is_none())
            .unwrap_or_else(|e| e.into_inner());
        match slot.result.take() {
            Some(r) => r,
            None => {
                slot.abandoned = true;
                Err(StoreError::Unreachable(format!(
                    "no answer within {} ms",
                    timeout.as_millis()
                )))
            }
        }
    }
}

/// Opens a connection (under the client's connect timeout).
fn connect(target: &Target) -> Result<Conn, StoreError> {
    match target {
        #[cfg(feature = "postgres")]
        Target::Postgres(config) => match config.connect(postgres::NoTls) {
            Ok(client) => Ok(Conn {
                db: Db::Postgres(Box::new(client)),
                dialect: Dialect::Postgres,
                ready: false,
            }),
            Err(e) => Err(StoreError::Unreachable(pg_error(&e).message)),
        },
        #[cfg(feature = "mysql")]
        Target::Mysql(opts) => match mysql::Conn::new((**opts).clone()) {
            Ok(c) => Ok(Conn {
                db: Db::Mysql(Box::new(c)),
                dialect: Dialect::Mysql,
                ready: false,
            }),
            Err(e) => Err(StoreError::Unreachable(my_error(&e).message)),
        },
    }
}

#[cfg(feature = "postgres")]
fn pg_error(e: &postgres::Error) -> DbError {
    use postgres::error::SqlState;
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
        mysql::Error::IoError(io) => DbError {
            failure: Failure::Other,
            message: match io.kind() {
                std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut => {
                    format!("timed out: {io}")
                }
                _ => io.to_string(),
            },
        },
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
    fn now_sql(&self) -> &'static str {
        match self.dialect {
            #[cfg(feature = "postgres")]
            Dialect::Postgres => "(floor(extract(epoch FROM clock_timestamp()) * 1000))::bigint",
            #[cfg(feature = "mysql")]
            Dialect::Mysql => "CAST(FLOOR(UNIX_TIMESTAMP(NOW(6)) * 1000) AS SIGNED)",
        }
    }

    /// Runs `sql` (placeholders written `?`) and returns its rows.
    fn query(&mut self, sql: &str, params: &[Val]) -> DbResult<Vec<Vec<Val>>> {
        match &mut self.db {
            #[cfg(feature = "postgres")]
            Db::Postgres(client) => {
                use postgres::types::{ToSql, Type};
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
                let rows = client
                    .query(text.as_str(), &refs)
                    .map_err(|e| pg_error(&e))?;
                rows.iter()
                    .map(|row| {
                        (0..row.len())
                            .map(|i| {
                                let t = row.columns()[i].type_();
                                let v = if *t == Type::INT8 {
                                    row.try_get::<_, i64>(i).map(Val::I)
                                } else if *t == Type::INT4 {
                                    row.try_get::<_, i32>(i).map(|v| Val::I(v.into()))
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
    fn batch(&mut self, sql: &str) -> DbResult<()> {
        match &mut self.db {
            #[cfg(feature = "postgres")]
            Db::Postgres(client) => client.batch_execute(sql).map_err(|e| pg_error(&e)),
            #[cfg(feature = "mysql")]
            Db::Mysql(conn) => {
                use mysql::prelude::Queryable;
                conn.query_drop(sql).map_err(|e| my_error(&e))
            }
        }
    }

    fn rollback(&mut self) {
        // A failure here leaves the connection broken; the next statement says so.
        let _ = self.batch("ROLLBACK");
    }

    /// The database's clock, Unix ms.
    fn now(&mut self) -> DbResult<i64> {
        let sql = format!("SELECT {}", self.now_sql());
        let rows = self.query(&sql, &[])?;
        Ok(int(&rows[0][0]))
    }

    /// Creates the tables unless they exist (once per connection).
    fn ensure_schema(&mut self) -> DbResult<()> {
        if self.ready {
            return Ok(());
        }
        if !self.tables_exist()? {
            for sql in self.schema().1 {
                if let Err(e) = self.batch(sql) {
                    self.rollback();
                    return Err(e);
                }
            }
        }
        self.ready = true;
        Ok(())
    }

    /// Whether both tables exist.
    fn tables_exist(&mut self) -> DbResult<bool> {
        let rows = self.query(self.schema().0, &[])?;
        Ok(int(&rows[0][0]) >= 2)
    }

    /// The query counting the tables that exist, and the statements creating them.
    fn schema(&self) -> (&'static str, &'static [&'static str]) {
        match self.dialect {
            #[cfg(feature = "postgres")]
            Dialect::Postgres => (
                "SELECT count(*)::bigint FROM (VALUES (to_regclass('snowmint_lease_space')), \
                 (to_regclass('snowmint_lease_slot'))) AS t(r) WHERE r IS NOT NULL",
                // Concurrent CREATE TABLE IF NOT EXISTS can fail on PostgreSQL
                // (a duplicate in pg_type): one creator at a time.
                &["BEGIN; SELECT pg_advisory_xact_lock(7237599117005660531); \
                   CREATE TABLE IF NOT EXISTS snowmint_lease_space (\
                     space_key VARCHAR(64) PRIMARY KEY, \
                     space_text TEXT NOT NULL); \
                   CREATE TABLE IF NOT EXISTS snowmint_lease_slot (\
                     space_key VARCHAR(64) NOT NULL, \
                     slot BIGINT NOT NULL, \
                     token VARCHAR(32) NOT NULL, \
                     counter BIGINT NOT NULL, \
                     expires_ms BIGINT NOT NULL, \
                     hwm_ms BIGINT NOT NULL, \
                     PRIMARY KEY (space_key, slot)); \
                   COMMIT"],
            ),
            #[cfg(feature = "mysql")]
            Dialect::Mysql => (
                "SELECT CAST(COUNT(*) AS SIGNED) FROM information_schema.tables \
                 WHERE table_schema = DATABASE() \
                 AND table_name IN ('snowmint_lease_space', 'snowmint_lease_slot')",
                &[
                    "CREATE TABLE IF NOT EXISTS snowmint_lease_space (\
                       space_key VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL PRIMARY KEY, \
                       space_text TEXT NOT NULL) ENGINE=InnoDB",
                    "CREATE TABLE IF NOT EXISTS snowmint_lease_slot (\
                       space_key VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL, \
                       slot BIGINT NOT NULL, \
                       token VARCHAR(32) CHARACTER SET ascii COLLATE ascii_bin NOT NULL, \
                       counter BIGINT NOT NULL, \
                       expires_ms BIGINT NOT NULL, \
                       hwm_ms BIGINT NOT NULL, \
                       PRIMARY KEY (space_key, slot)) ENGINE=InnoDB",
                ],
            ),
        }
    }

    /// Checks (or records) the space's text.
    fn check_space(&mut self, key: &str, text: &str) -> Result<(), StoreError> {
        self.ensure_schema()?;
        let select = "SELECT space_text FROM snowmint_lease_space WHERE space_key = ?";
        let mut rows = self.query(select, &[Val::S(key.into())])?;
        if rows.is_empty() {
            let insert = match self.dialect {
                #[cfg(feature = "postgres")]
                Dialect::Postgres => {
                    "INSERT INTO snowmint_lease_space (space_key, space_text) VALUES (?, ?) \
                     ON CONFLICT (space_key) DO NOTHING"
                }
                #[cfg(feature = "mysql")]
                Dialect::Mysql => {
                    "INSERT INTO snowmint_lease_space (space_key, space_text) VALUES (?, ?)"
                }
            };
            let params = [Val::S(key.into()), Val::S(text.into())];
            match self.transaction(|c| c.query(insert, &params), |_| true) {
                // Another claimer recorded it first: compare with theirs.
                Ok(_) => {}
                Err(e) if e.failure == Failure::Duplicate => {}
                Err(e) => return Err(e.into()),
            }
            rows = self.query(select, &[Val::S(key.into())])?;
        }
        match rows.first().and_then(|r| r.first()) {
            Some(Val::S(stored)) if stored == text => Ok(()),
            Some(_) => Err(StoreError::BadRecord(format!(
                "snowmint_lease_space row {key} describes another slot space than its key says"
            ))),
            None => Err(StoreError::Unreachable(format!(
                "snowmint_lease_space row {key} vanished after it was written"
            ))),
        }
    }

    /// Runs `f` between `BEGIN` and `COMMIT`, or `ROLLBACK` when it fails or
    /// `keep` says its result changed nothing worth keeping. Every write goes
    /// through here (or `lock_holder` + `update_and_commit`): a write is
    /// confirmed to the caller only once its `COMMIT` succeeded, whatever the
    /// session's autocommit (a MySQL server started with `autocommit=0` would
    /// otherwise leave it in an open transaction that a dropped connection
    /// rolls back).
    fn transaction<T, E: From<DbError>>(
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

    /// One attempt at an existing slot row: locks it if it is still free or
    /// expired, and claims it. `None`: taken, or locked by another claimer.
    fn claim_row(&mut self, key: &str, slot: u64, req: &ClaimRequest) -> DbResult<Option<Claim>> {
        self.transaction(
            |c| c.claim_row_in_transaction(key, slot, req),
            Option::is_some,
        )
    }

    fn claim_row_in_transaction(
        &mut self,
        key: &str,
        slot: u64,
        req: &ClaimRequest,
    ) -> DbResult<Option<Claim>> {
        let now = self.now_sql();
        let sql = format!(
            "SELECT counter, hwm_ms, {now} FROM snowmint_lease_slot \
             WHERE space_key = ? AND slot = ? AND (token = '' OR expires_ms <= {now}) \
             FOR UPDATE SKIP LOCKED"
        );
        let rows = self.query(&sql, &[Val::S(key.into()), Val::I(as_i64(slot))])?;
        let Some(row) = rows.first() else {
            return Ok(None);
        };
        let (counter, old_hwm, now) = (int(&row[0]), int(&row[1]), int(&row[2]));
        let claim = new_claim(slot, counter, old_hwm, now, req);
        self.query(
            "UPDATE snowmint_lease_slot SET token = ?, counter = ?, expires_ms = ?, hwm_ms = ? \
             WHERE space_key = ? AND slot = ?",
            &[
                Val::S(claim.holder.token.clone()),
                Val::I(as_i64(claim.holder.counter)),
                Val::I(as_i64(claim.expires_ms.unwrap_or(0))),
                Val::I(as_i64(claim.hwm_ms)),
                Val::S(key.into()),
                Val::I(as_i64(slot)),
            ],
        )?;
        Ok(Some(claim))
    }

    /// One attempt at a slot never used: inserts its row. `None`: a racing
    /// claimer inserted it first.
    fn claim_new(&mut self, key: &str, slot: u64, req: &ClaimRequest) -> DbResult<Option<Claim>> {
        self.transaction(
            |c| c.claim_new_in_transaction(key, slot, req),
            Option::is_some,
        )
    }

    fn claim_new_in_transaction(
        &mut self,
        key: &str,
        slot: u64,
        req: &ClaimRequest,
    ) -> DbResult<Option<Claim>> {
        let now = self.now()?;
        let claim = new_claim(slot, 0, 0, now, req);
        let r = self.query(
            "INSERT INTO snowmint_lease_slot (space_key, slot, token, counter, expires_ms, hwm_ms) \
             VALUES (?, ?, ?, ?, ?, ?)",
            &[
                Val::S(key.into()),
                Val::I(as_i64(slot)),
                Val::S(claim.holder.token.clone()),
                Val::I(as_i64(claim.holder.counter)),
                Val::I(as_i64(claim.expires_ms.unwrap_or(0))),
                Val::I(as_i64(claim.hwm_ms)),
            ],
        );
        match r {
            Ok(_) => Ok(Some(claim)),
            Err(e) if e.failure == Failure::Duplicate => Ok(None),
            Err(e) => Err(e),
        }
    }

    fn claim(
        &mut self,
        space: &Space,
        req: &ClaimRequest,
        deadline: Instant,
    ) -> Result<Claim, StoreError> {
        self.check_space(&space.key, &space.text)?;
        for _ in 0..CONTENDED_ROUNDS {
            let sql = format!(
                "SELECT slot, token, expires_ms, hwm_ms, {} FROM snowmint_lease_slot \
                 WHERE space_key = ?",
                self.now_sql()
            );
            let rows = self.query(&sql, &[Val::S(space.key.clone())])?;
            let now = match rows.first() {
                Some(r) => int(&r[4]),
                None => self.now()?,
            };
            let mut existing = std::collections::BTreeMap::new();
            for r in &rows {
                let slot = u64::try_from(int(&r[0])).map_err(|_| bad_row(&space.key))?;
                let free = matches!(&r[1], Val::S(t) if t.is_empty()) || int(&r[2]) <= now;
                existing.insert(slot, (free, int(&r[3])));
            }
            let candidates = candidates(&existing, space.slots, req.prefer, now);
            let mut any = false;
            for (slot, is_new) in candidates {
                any = true;
                let got = if is_new {
                    self.claim_new(&space.key, slot, req)
                } else {
                    self.claim_row(&space.key, slot, req)
                };
                match got {
                    Ok(Some(claim)) => return Ok(claim),
                    Ok(None) => {}
                    Err(e) if e.failure == Failure::Contention => break,
                    Err(e) => return Err(e.into()),
                }
                if Instant::now() > deadline {
                    return Err(StoreError::Unreachable(
                        "the claim did not finish in time (many claimers at once)".into(),
                    ));
                }
            }
            if !any {
                return Err(StoreError::NoFreeSlot);
            }
        }
        Err(StoreError::Unreachable(format!(
            "no slot could be taken in {CONTENDED_ROUNDS} rounds (many claimers at once)"
        )))
    }

    /// Locks the holder's row if its token and counter are still the
    /// holder's, in a transaction left open on success; returns `hwm_ms`
    /// and the database's clock.
    fn lock_holder(&mut self, key: &str, holder: &Holder) -> Result<(i64, i64), StoreError> {
        self.batch("BEGIN")?;
        let sql = format!(
            "SELECT hwm_ms, {} FROM snowmint_lease_slot \
             WHERE space_key = ? AND slot = ? AND token = ? AND counter = ? FOR UPDATE",
            self.now_sql()
        );
        let rows = self.query(
            &sql,
            &[
                Val::S(key.into()),
                Val::I(as_i64(holder.slot)),
                Val::S(holder.token.clone()),
                Val::I(as_i64(holder.counter)),
            ],
        );
        let rows = match rows {
            Ok(r) => r,
            Err(e) => {
                self.rollback();
                return Err(e.into());
            }
        };
        if let Some(r) = rows.first() {
            return Ok((int(&r[0]), int(&r[1])));
        }
        self.rollback();
        let rows = self.query(
            "SELECT counter FROM snowmint_lease_slot WHERE space_key = ? AND slot = ?",
            &[Val::S(key.into()), Val::I(as_i64(holder.slot))],
        )?;
        Err(StoreError::Lost(match rows.first() {
            Some(r) if int(&r[0]) != as_i64(holder.counter) => format!(
                "slot {} has another holder (claim counter {})",
                holder.slot,
                int(&r[0])
            ),
            Some(_) => format!("slot {} was released or taken over", holder.slot),
            None => format!("slot {} has no record", holder.slot),
        }))
    }

    /// Runs `sql` in the open transaction and commits.
    fn update_and_commit(&mut self, sql: &str, params: &[Val]) -> Result<(), StoreError> {
        let r = self.query(sql, params).and_then(|_| self.batch("COMMIT"));
        if let Err(e) = r {
            self.rollback();
            return Err(e.into());
        }
        Ok(())
    }

    fn renew(
        &mut self,
        key: &str,
        holder: &Holder,
        ttl_ms: u64,
        window_ms: u64,
    ) -> Result<Renewal, StoreError> {
        self.ensure_schema()?;
        let (hwm, now) = self.lock_holder(key, holder)?;
        let expires = now.saturating_add(as_i64(ttl_ms));
        let hwm = hwm.max(now.saturating_add(as_i64(window_ms)));
        self.update_and_commit(
            "UPDATE snowmint_lease_slot SET expires_ms = ?, hwm_ms = ? WHERE space_key = ? AND slot = ?",
            &[Val::I(expires), Val::I(hwm), Val::S(key.into()), Val::I(as_i64(holder.slot))],
        )?;
        Ok(Renewal {
            hwm_ms: as_u64(hwm),
            expires_ms: Some(as_u64(expires)),
        })
    }

    fn release(&mut self, key: &str, holder: &Holder, last_ms: u64) -> Result<(), StoreError> {
        self.ensure_schema()?;
        self.lock_holder(key, holder)?;
        self.update_and_commit(
            "UPDATE snowmint_lease_slot SET token = '', expires_ms = 0, hwm_ms = ? \
             WHERE space_key = ? AND slot = ?",
            &[
                Val::I(as_i64(last_ms)),
                Val::S(key.into()),
                Val::I(as_i64(holder.slot)),
            ],
        )
    }

    /// Operations: the store's clock, every space and its slot rows.
    fn list(&mut self) -> Result<(u64, Vec<SpaceRecord>), StoreError> {
        let now = self.now()?;
        if !self.tables_exist()? {
            return Ok((as_u64(now), Vec::new()));
        }
        let spaces = self.query(
            "SELECT space_key, space_text FROM snowmint_lease_space ORDER BY space_key",
            &[],
        )?;
        let rows = self.query(
            "SELECT space_key, slot, token, counter, expires_ms, hwm_ms FROM snowmint_lease_slot \
             ORDER BY space_key, slot",
            &[],
        )?;
        let text = |v: &Val| match v {
            Val::S(s) => s.clone(),
            Val::I(i) => i.to_string(),
        };
        let mut out: Vec<SpaceRecord> = spaces
            .iter()
            .map(|r| SpaceRecord {
                key: text(&r[0]),
                text: text(&r[1]),
                slots: Vec::new(),
            })
            .collect();
        for r in &rows {
            let key = text(&r[0]);
            // Slot rows are written after their space's row: a row without
            // one is not shown.
            let Some(space) = out.iter_mut().find(|s| s.key == key) else {
                continue;
            };
            let slot = u64::try_from(int(&r[1])).map_err(|_| bad_row(&key))?;
            space.slots.push(slot_record(
                slot,
                &text(&r[2]),
                int(&r[3]),
                int(&r[4]),
                int(&r[5]),
                now,
            ));
        }
        Ok((as_u64(now), out))
    }

    /// Operations: frees the slot's row if it is expired (or held, with
    /// `force`), keeping `hwm`, in one transaction on the locked row.
    fn release_slot(
        &mut self,
        key: &str,
        slot: u64,
        force: bool,
    ) -> Result<SlotRelease, StoreError> {
        self.transaction(
            |c| c.release_slot_in_transaction(key, slot, force),
            |r| matches!(r, SlotRelease::Released(_)),
        )
    }

    fn release_slot_in_transaction(
        &mut self,
        key: &str,
        slot: u64,
        force: bool,
    ) -> Result<SlotRelease, StoreError> {
        let sql = format!(
            "SELECT token, counter, expires_ms, hwm_ms, {} FROM snowmint_lease_slot \
             WHERE space_key = ? AND slot = ? FOR UPDATE",
            self.now_sql()
        );
        let rows = self.query(&sql, &[Val::S(key.into()), Val::I(as_i64(slot))])?;
        let Some(r) = rows.first() else {
            return Ok(SlotRelease::WasFree);
        };
        let token = match &r[0] {
            Val::S(s) => s.clone(),
            Val::I(_) => return Err(bad_row(key)),
        };
        let record = slot_record(slot, &token, int(&r[1]), int(&r[2]), int(&r[3]), int(&r[4]));
        match record.state {
            SlotState::Free => return Ok(SlotRelease::WasFree),
            SlotState::Held if !force => return Ok(SlotRelease::Refused(record)),
            SlotState::Held | SlotState::Expired => {}
        }
        self.query(
            "UPDATE snowmint_lease_slot SET token = '', expires_ms = 0 \
             WHERE space_key = ? AND slot = ?",
            &[Val::S(key.into()), Val::I(as_i64(slot))],
        )?;
        Ok(SlotRelease::Released(record))
    }
}

/// A slot row as an operator sees it, by the database's clock `now`.
fn slot_record(
    slot: u64,
    token: &str,
    counter: i64,
    expires: i64,
    hwm: i64,
    now: i64,
) -> SlotRecord {
    let state = if token.is_empty() {
        SlotState::Free
    } else if expires <= now {
        SlotState::Expired
    } else {
        SlotState::Held
    };
    SlotRecord {
        slot,
        state,
        token: token.to_string(),
        counter: as_u64(counter),
        expires_ms: (state != SlotState::Free).then_some(as_u64(expires)),
        hwm_ms: as_u64(hwm),
    }
}

/// What a claim needs of a `SlotSpace` (owned: it goes to the helper thread).
struct Space {
    key: String,
    text: String,
    slots: u64,
}

fn bad_row(key: &str) -> StoreError {
    StoreError::BadRecord(format!("snowmint_lease_slot has a bad row for {key}"))
}

/// The claim written to a free slot whose row has `counter` and `old_hwm`.
fn new_claim(slot: u64, counter: i64, old_hwm: i64, now: i64, req: &ClaimRequest) -> Claim {
    let expires = now.saturating_add(as_i64(req.ttl_ms));
    let hwm = old_hwm.max(now.saturating_add(as_i64(req.window_ms)));
    Claim {
        holder: Holder {
            slot,
            token: new_token(),
            counter: as_u64(counter) + 1,
        },
        prev_hwm_ms: as_u64(old_hwm),
        hwm_ms: as_u64(hwm),
        expires_ms: Some(as_u64(expires)),
    }
}

/// The slots to try, best first, as `(slot, never used)`: `prefer` if free;
/// free rows whose `hwm` is behind the clock (lowest slot first); slots never
/// used (lowest first); free rows with `hwm` ahead (lowest `hwm` first).
fn candidates(
    existing: &std::collections::BTreeMap<u64, (bool, i64)>,
    slots: u64,
    prefer: Option<u64>,
    now: i64,
) -> impl Iterator<Item = (u64, bool)> + '_ {
    let prefer = prefer
        .filter(|&p| p < slots)
        .and_then(|p| match existing.get(&p) {
            None => Some((p, true)),
            Some((true, _)) => Some((p, false)),
            Some((false, _)) => None,
        });
    let p = prefer.map(|(s, _)| s);
    let behind = existing
        .iter()
        .filter(move |(s, (free, hwm))| *free && *hwm <= now && Some(**s) != p)
        .map(|(s, _)| (*s, false));
    let unused = (0..slots)
        .filter(move |s| !existing.contains_key(s) && Some(*s) != p)
        .map(|s| (s, true));
    let mut ahead: Vec<(i64, u64)> = existing
        .iter()
        .filter(|(s, (free, hwm))| *free && *hwm > now && Some(**s) != p)
        .map(|(s, (_, hwm))| (*hwm, *s))
        .collect();
    ahead.sort_unstable();
    prefer
        .into_iter()
        .chain(behind)
        .chain(unused)
        .chain(ahead.into_iter().map(|(_, s)| (s, false)))
}

fn int(v: &Val) -> i64 {
    match v {
        Val::I(i) => *i,
        Val::S(s) => s.parse().unwrap_or(-1),
    }
}

fn as_i64(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

fn as_u64(v: i64) -> u64 {
    u64::try_from(v).unwrap_or(0)
}

impl Store for SqlStore {
    fn describe(&self) -> String {
        self.name.clone()
    }

    fn now_ms(&self) -> Result<u64, StoreError> {
        self.call(|c, _| Ok(as_u64(c.now()?)), None)
    }

    fn claim(&self, space: &SlotSpace, req: &ClaimRequest) -> Result<Claim, StoreError> {
        let space = Space {
            key: space.key().to_string(),
            text: space.text().to_string(),
            slots: space.slots(),
        };
        let req = *req;
        // The undo of a late claim cannot capture: the key travels with the claim.
        self.call(
            move |c, deadline| {
                let r = c.claim(&space, &req, deadline);
                r.map(|claim| (claim, space.key))
            },
            Some(|c: &mut Conn, (late, key): (Claim, String)| {
                let _ = c.release(&key, &late.holder, late.hwm_ms);
            }),
        )
        .map(|(claim, _)| claim)
    }

    fn renew(
        &self,
        space: &SlotSpace,
        holder: &Holder,
        ttl_ms: u64,
        window_ms: u64,
    ) -> Result<Renewal, StoreError> {
        let (key, holder) = (space.key().to_string(), holder.clone());
        self.call(move |c, _| c.renew(&key, &holder, ttl_ms, window_ms), None)
    }

    fn release(&self, space: &SlotSpace, holder: &Holder, last_ms: u64) -> Result<(), StoreError> {
        let (key, holder) = (space.key().to_string(), holder.clone());
        self.call(move |c, _| c.release(&key, &holder, last_ms), None)
    }

    /// Creates the tables if they are missing (also when another connection
    /// of this store saw them).
    fn init(&self) -> Result<(), StoreError> {
        self.call(
            |c, _| {
                c.ready = false;
                c.ensure_schema()?;
                c.now().map(drop).map_err(StoreError::from)
            },
            None,
        )
    }

    fn list(&self) -> Result<(u64, Vec<SpaceRecord>), StoreError> {
        self.call(|c, _| c.list(), None)
    }

    fn release_slot(
        &self,
        space_key: &str,
        slot: u64,
        force: bool,
    ) -> Result<SlotRelease, StoreError> {
        let key = space_key.to_string();
        self.call(move |c, _| c.release_slot(&key, slot, force), None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    #[test]
    fn candidate_order() {
        // slot 0 held; 1 free, hwm behind; 2 free, hwm ahead; 4 free, behind; 3, 5.. unused.
        let mut m = BTreeMap::new();
        m.insert(0, (false, 10));
        m.insert(1, (true, 50));
        m.insert(2, (true, 500));
        m.insert(4, (true, 90));
        let all: Vec<_> = candidates(&m, 7, None, 100).collect();
        assert_eq!(
            all,
            [
                (1, false),
                (4, false),
                (3, true),
                (5, true),
                (6, true),
                (2, false)
            ]
        );
        let all: Vec<_> = candidates(&m, 7, Some(2), 100).collect();
        assert_eq!(all[0], (2, false));
        assert_eq!(all.len(), 6);
        let all: Vec<_> = candidates(&m, 7, Some(5), 100).collect();
        assert_eq!(all[0], (5, true));
        assert_eq!(all.len(), 6);
        // A held preference is not tried; one outside the space is ignored.
        assert_eq!(candidates(&m, 7, Some(0), 100).count(), 6);
        assert_eq!(candidates(&m, 7, Some(9), 100).count(), 6);
    }
}
