//! snowmint as a PostgreSQL extension: `snowmint.next_id('orders')` as a
//! column default, generators declared in SQL, and the core's ID reading
//! functions (decode, bounds, formats, masks) in SQL.
//!
//! Everything about IDs is the core's (`snowmint`): this crate converts
//! PostgreSQL values into the core's types and the core's errors into
//! PostgreSQL errors, and keeps each generator's state word in shared memory
//! so that every backend draws from one state (docs/POSTGRES.md).

use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use pgrx::pg_sys::panic::ErrorReport;
use pgrx::prelude::*;
use pgrx::{pg_shmem_init, JsonB, PGRXSharedMemory, PgAtomic, PgLwLock, PgSqlErrorCode};
use snowmint::{Clock, Config, Format, Id, IdMask, Layout, Next, StateKey, Value};

::pgrx::pg_module_magic!();

// ---------------------------------------------------------------------------
// Errors: every core error is an ERROR with a SQLSTATE and the code in DETAIL.
// ---------------------------------------------------------------------------

/// The core's codes that refuse to mint now (the configuration is fine):
/// they get the class "object not in prerequisite state" (55000).
const REFUSALS: &[&str] = &[
    "clock_moved_backwards",
    "process_forked",
    "lease_unavailable",
    "lease_expired",
    "lease_fenced",
    "clock_stalled",
];

fn sqlstate(e: &snowmint::Error) -> PgSqlErrorCode {
    if REFUSALS.contains(&e.code()) {
        return PgSqlErrorCode::ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE;
    }
    match e.class() {
        snowmint::ErrorClass::Range => PgSqlErrorCode::ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE,
        snowmint::ErrorClass::Type => PgSqlErrorCode::ERRCODE_INVALID_PARAMETER_VALUE,
        snowmint::ErrorClass::Value => match e {
            snowmint::Error::NodeOutOfRange { .. } | snowmint::Error::TimeOverflow { .. } => {
                PgSqlErrorCode::ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE
            }
            _ => PgSqlErrorCode::ERRCODE_INVALID_PARAMETER_VALUE,
        },
    }
}

/// Raises `message` with `sqlstate` and `code: <code>` in DETAIL.
fn raise(sqlstate: PgSqlErrorCode, message: String, code: &str) -> ! {
    ErrorReport::new(sqlstate, message, "snowmint")
        .set_detail(format!("code: {code}"))
        .report(PgLogLevel::ERROR);
    unreachable!("ERROR returns control to PostgreSQL")
}

fn fail(e: snowmint::Error) -> ! {
    raise(sqlstate(&e), e.to_string(), e.code())
}

trait OrRaise<T> {
    fn or_raise(self) -> T;
}

impl<T> OrRaise<T> for snowmint::Result<T> {
    fn or_raise(self) -> T {
        self.unwrap_or_else(|e| fail(e))
    }
}

// ---------------------------------------------------------------------------
// Conversions.
// ---------------------------------------------------------------------------

/// A jsonb value as the core's loosely typed argument.
fn value(j: &serde_json::Value) -> Value {
    use serde_json::Value as J;
    match j {
        J::Null => Value::Absent,
        J::Bool(b) => Value::Bool(*b),
        J::Number(n) => {
            if let Some(u) = n.as_u64() {
                Value::from(u)
            } else if let Some(i) = n.as_i64() {
                Value::from(i)
            } else {
                Value::Float(n.as_f64().unwrap_or(f64::NAN))
            }
        }
        J::String(s) => Value::Str(s.clone()),
        J::Array(_) => Value::Other("an array"),
        J::Object(m) => Value::Map(m.iter().map(|(k, v)| (k.clone(), value(v))).collect()),
    }
}

fn json_arg(j: Option<&JsonB>) -> Value {
    j.map_or(Value::Absent, |j| value(&j.0))
}

fn layout(text: &str) -> Layout {
    Value::from(text).to_layout().or_raise()
}

/// A bigint argument as an ID (a negative one is the core's `invalid_id`).
fn id_in(v: i64) -> Id {
    Value::from(v).to_id().or_raise()
}

/// An ID as a bigint; IDs of 64-bit layouts at or above 2^63 do not fit.
fn id_out(id: Id) -> i64 {
    i64::try_from(id.get()).unwrap_or_else(|_| {
        raise(
            PgSqlErrorCode::ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE,
            format!(
                "the ID {} does not fit a bigint (it is 2^63 or more)",
                id.get()
            ),
            "invalid_id",
        )
    })
}

/// PostgreSQL's timestamps count microseconds from 2000-01-01.
const PG_EPOCH_UNIX_MS: i64 = 946_684_800_000;

fn ms_of(ts: TimestampWithTimeZone) -> u64 {
    let us: i64 = ts.into();
    let ms = (us.div_euclid(1000)).checked_add(PG_EPOCH_UNIX_MS);
    match ms {
        Some(ms) if ms >= 0 && !ts.is_infinity() && !ts.is_neg_infinity() => ms as u64,
        _ => raise(
            PgSqlErrorCode::ERRCODE_DATETIME_FIELD_OVERFLOW,
            "the time must be a finite time after 1970-01-01".into(),
            "time_before_epoch",
        ),
    }
}

fn ts_of(ms: u64) -> TimestampWithTimeZone {
    let us = i64::try_from(ms)
        .ok()
        .and_then(|ms| (ms - PG_EPOCH_UNIX_MS).checked_mul(1000));
    us.and_then(|us| TimestampWithTimeZone::try_from(us).ok())
        .unwrap_or_else(|| {
            raise(
                PgSqlErrorCode::ERRCODE_DATETIME_FIELD_OVERFLOW,
                format!("{ms} ms after 1970 is not a PostgreSQL timestamp"),
                "time_overflow",
            )
        })
}

// ---------------------------------------------------------------------------
// Reading IDs.
// ---------------------------------------------------------------------------

/// Every field of `id` under `layout`: `timestamp` (RFC 3339, UTC),
/// `timestamp_ms`, `sequence`, `nodes` (field name -> value), and `id`.
#[pg_extern(immutable, parallel_safe, strict)]
fn decode(id: i64, layout: default!(&str, "'twitter'")) -> JsonB {
    let l = self::layout(layout);
    let p = l.decompose(id_in(id)).or_raise();
    let nodes: serde_json::Map<String, serde_json::Value> = l
        .nodes()
        .zip(p.nodes())
        .map(|(f, v)| (f.name().to_string(), (*v).into()))
        .collect();
    JsonB(serde_json::json!({
        "id": id,
        "timestamp": snowmint::Iso8601(p.timestamp_ms()).to_string(),
        "timestamp_ms": p.timestamp_ms(),
        "sequence": p.sequence(),
        "nodes": nodes,
    }))
}

/// The start of `id`'s time unit.
#[pg_extern(immutable, parallel_safe, strict)]
fn id_timestamp(id: i64, layout: default!(&str, "'twitter'")) -> TimestampWithTimeZone {
    let p = self::layout(layout).decompose(id_in(id)).or_raise();
    ts_of(p.timestamp_ms())
}

/// The ID of `ts`'s time unit with `sequence` and the node values `nodes`.
#[pg_extern(immutable, parallel_safe)]
fn compose(
    ts: TimestampWithTimeZone,
    sequence: i64,
    nodes: default!(Option<JsonB>, "NULL"),
    layout: default!(&str, "'twitter'"),
) -> i64 {
    let l = self::layout(layout);
    let nodes = json_arg(nodes.as_ref()).to_nodes(&l).or_raise();
    let seq = Value::from(sequence).to_sequence().or_raise();
    id_out(l.compose(ms_of(ts), seq, &nodes).or_raise())
}

/// The smallest ID of `ts`'s time unit: `WHERE id >= snowmint.min_id(...)`.
#[pg_extern(immutable, parallel_safe, strict)]
fn min_id(ts: TimestampWithTimeZone, layout: default!(&str, "'twitter'")) -> i64 {
    id_out(self::layout(layout).id_bounds(ms_of(ts)).or_raise().0)
}

/// The largest ID of `ts`'s time unit: `WHERE id <= snowmint.max_id(...)`.
#[pg_extern(immutable, parallel_safe, strict)]
fn max_id(ts: TimestampWithTimeZone, layout: default!(&str, "'twitter'")) -> i64 {
    id_out(self::layout(layout).id_bounds(ms_of(ts)).or_raise().1)
}

fn format(name: &str) -> Format {
    Value::from(name).to_format().or_raise()
}

/// `id` in `format` (`decimal`, `base32`, `base62`).
#[pg_extern(immutable, parallel_safe, strict)]
fn format_id(id: i64, format: &str) -> String {
    id_in(id).to_string_in(self::format(format))
}

/// The ID written `text` in `format`.
#[pg_extern(immutable, parallel_safe, strict)]
fn parse_id(text: &str, format: &str) -> i64 {
    id_out(Value::from(text).to_id_in(self::format(format)).or_raise())
}

fn id_mask(key: &[u8], layout: &str, tweak: &[u8]) -> IdMask {
    IdMask::new(self::layout(layout), key, tweak).or_raise()
}

/// The public ID of `id`: the core's IdMask (FF1 with AES-128 for a 16-byte
/// key, AES-256 for 32 bytes), equal to every other language's.
#[pg_extern(immutable, parallel_safe, strict)]
fn mask(
    id: i64,
    key: &[u8],
    layout: default!(&str, "'twitter'"),
    tweak: default!(&[u8], "'\\x'"),
) -> i64 {
    id_out(id_mask(key, layout, tweak).mask(id_in(id)).or_raise())
}

/// The ID whose public ID is `public`.
#[pg_extern(immutable, parallel_safe, strict)]
fn unmask(
    public: i64,
    key: &[u8],
    layout: default!(&str, "'twitter'"),
    tweak: default!(&[u8], "'\\x'"),
) -> i64 {
    id_out(id_mask(key, layout, tweak).unmask(id_in(public)).or_raise())
}

mod lease;
use lease::{Fence, LEASES};

// ---------------------------------------------------------------------------
// Generators: definitions in a table, one state word per node configuration
// in shared memory.
// ---------------------------------------------------------------------------

extension_sql!(
    r#"
-- The generators' definitions (dumped by pg_dump with the data).
CREATE TABLE snowmint.generator_defs (
    name text PRIMARY KEY,
    layout text NOT NULL,
    nodes jsonb,
    options jsonb,
    lease text
);
SELECT pg_catalog.pg_extension_config_dump('snowmint.generator_defs', '');
-- The view shows a lease URL's password as ***.
CREATE VIEW snowmint.generators AS
    SELECT name, layout, nodes, options,
           regexp_replace(lease, '^([a-z]+://[^:/@]*):[^@]*@', '\1:***@') AS lease
    FROM snowmint.generator_defs ORDER BY name;
"#,
    name = "generator_defs",
    bootstrap
);

/// How many distinct node configurations (layout, node values) the server
/// can hold states for; generators with the same configuration share one.
const SLOTS: usize = 64;

#[derive(Clone, Copy)]
struct Keys {
    keys: [Option<StateKey>; SLOTS],
}

impl Default for Keys {
    fn default() -> Self {
        Keys {
            keys: [None; SLOTS],
        }
    }
}

// SAFETY: plain data (no pointers), the same type in every backend of the
// server (one library), only touched under the lock.
unsafe impl PGRXSharedMemory for Keys {}

// SAFETY: the names are this extension's own.
static KEYS: PgLwLock<Keys> = unsafe { PgLwLock::new(c"snowmint_keys") };
// SAFETY: as above.
static STATES: PgAtomic<[AtomicU64; SLOTS]> = unsafe { PgAtomic::new(c"snowmint_states") };

/// The shared memory exists (the library was in shared_preload_libraries
/// when the server started; backends inherit the flag from the postmaster).
static PRELOADED: AtomicBool = AtomicBool::new(false);

#[pg_guard]
pub extern "C-unwind" fn _PG_init() {
    // SAFETY: a flag PostgreSQL sets while it loads shared_preload_libraries.
    if unsafe { pg_sys::process_shared_preload_libraries_in_progress } {
        pg_shmem_init!(KEYS);
        pg_shmem_init!(STATES = std::array::from_fn(|_| AtomicU64::new(0)));
        pg_shmem_init!(LEASES);
        PRELOADED.store(true, Ordering::Release);
        lease::register();
    }
    // SAFETY: a plain C callback, registered once per process.
    unsafe {
        pg_sys::CacheRegisterRelcacheCallback(Some(forget_generators), pg_sys::Datum::from(0));
    }
}

/// The wall clock, read on every call: every backend reads the same clock
/// (a per-process anchor could disagree between backends), and the core's
/// policies decide what a step back means.
pub(crate) struct WallClock;

impl Clock for WallClock {
    fn now_ms(&self) -> u64 {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as u64)
    }
}

struct Cached {
    config: Config,
    word: &'static AtomicU64,
    /// A leased generator: `config` and `word` are unused, the claim's are
    /// taken from the worker's table on every call.
    leased: Option<lease::Leased>,
}

thread_local! {
    /// This backend's generators by name, cleared whenever the definitions
    /// table changes (its relcache invalidation, sent at commit).
    static CACHE: RefCell<HashMap<String, std::rc::Rc<Cached>>> = RefCell::new(HashMap::new());
}

#[pg_guard]
unsafe extern "C-unwind" fn forget_generators(_arg: pg_sys::Datum, _relid: pg_sys::Oid) {
    CACHE.with(|c| c.borrow_mut().clear());
}

fn defs_oid() -> pg_sys::Oid {
    Spi::get_one::<pg_sys::Oid>("SELECT 'snowmint.generator_defs'::regclass::oid")
        .ok()
        .flatten()
        .unwrap_or(pg_sys::InvalidOid)
}

fn invalidate() {
    // SAFETY: queues an invalidation of our table's relcache entry, sent to
    // every backend when this transaction commits.
    unsafe { pg_sys::CacheInvalidateRelcacheByRelid(defs_oid()) };
}

fn unknown_generator(name: &str) -> ! {
    raise(
        PgSqlErrorCode::ERRCODE_UNDEFINED_OBJECT,
        format!("snowmint: no generator named '{name}' (snowmint.create_generator makes one)"),
        "unknown_generator",
    )
}

/// The configuration of a definition, checked by the core.
fn config_of(layout_text: &str, nodes: Option<&JsonB>, options: Option<&JsonB>) -> Config {
    let l = layout(layout_text);
    let nodes = json_arg(nodes).to_nodes(&l).or_raise();
    let options = json_arg(options).to_options().or_raise();
    Config::new(l, nodes, options).or_raise()
}

/// The shared word of `config`'s node configuration (a generator with
/// fixed node values), claimed if new.
///
/// A new word starts above the time unit it is claimed in (and the units
/// the options may borrow ahead of it): the shared memory is new after a
/// server start and after the crash restart that follows a backend killed
/// in the middle of `next_ids`, and the word it replaces may have issued
/// up to the clock of the crash (ahead of it, when borrowing), also IDs
/// that the killed call never returned. The first ID waits for the next
/// time unit.
fn word_of(config: &Config) -> &'static AtomicU64 {
    if !PRELOADED.load(Ordering::Acquire) {
        word_of_unpreloaded()
    }
    word_at(config, config.start_state_after(WallClock.now_ms()))
}

fn word_of_unpreloaded() -> ! {
    raise(
        PgSqlErrorCode::ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE,
        "snowmint: generators need the library preloaded: add snowmint to \
         shared_preload_libraries in postgresql.conf and restart the server"
            .into(),
        "not_preloaded",
    )
}

/// The shared word of `config`'s node configuration (preloaded), claimed if
/// new (starting at `start`) and raised to its `resume_after`.
fn word_at(config: &Config, start: u64) -> &'static AtomicU64 {
    let key = config.state_key();
    let states = STATES.get();
    let found = KEYS.share().keys.iter().position(|k| *k == Some(key));
    let index = found.or_else(|| {
        let mut keys = KEYS.exclusive();
        if let Some(i) = keys.keys.iter().position(|k| *k == Some(key)) {
            return Some(i);
        }
        let free = keys.keys.iter().position(|k| k.is_none())?;
        states[free].store(start, Ordering::Release);
        keys.keys[free] = Some(key);
        Some(free)
    });
    let Some(i) = index else {
        raise(
            PgSqlErrorCode::ERRCODE_PROGRAM_LIMIT_EXCEEDED,
            format!(
                "snowmint: the server holds states for {SLOTS} node configurations and all are \
                 in use (they are kept until the server restarts)"
            ),
            "slots_full",
        )
    };
    let word = &states[i];
    config.join_state(word);
    word
}

fn generator(name: &str) -> std::rc::Rc<Cached> {
    if let Some(c) = CACHE.with(|c| c.borrow().get(name).cloned()) {
        return c;
    }
    let row = Spi::connect(|client| {
        let rows = client.select(
            "SELECT layout, nodes, options, lease FROM snowmint.generator_defs WHERE name = $1",
            Some(1),
            &[name.into()],
        )?;
        let mut out = None;
        for row in rows {
            let layout: Option<String> = row.get(1)?;
            let nodes: Option<JsonB> = row.get(2)?;
            let options: Option<JsonB> = row.get(3)?;
            let lease: Option<String> = row.get(4)?;
            out = Some((layout.unwrap_or_default(), nodes, options, lease));
        }
        Ok::<_, pgrx::spi::Error>(out)
    });
    let Ok(Some((layout_text, nodes, options, lease_text))) = row else {
        unknown_generator(name)
    };
    let cached = if lease_text.is_some() {
        if !PRELOADED.load(Ordering::Acquire) {
            word_of_unpreloaded();
        }
        let leased = lease::Leased::new(&layout_text, nodes.as_ref(), options.as_ref());
        std::rc::Rc::new(Cached {
            config: leased.base,
            word: &STATES.get()[0],
            leased: Some(leased),
        })
    } else {
        let config = config_of(&layout_text, nodes.as_ref(), options.as_ref());
        std::rc::Rc::new(Cached {
            word: word_of(&config),
            config,
            leased: None,
        })
    };
    CACHE.with(|c| c.borrow_mut().insert(name.to_string(), cached.clone()));
    cached
}

/// Waits until Unix ms `at`, answering cancel requests.
fn wait_until(at: u64) {
    loop {
        pgrx::check_for_interrupts!();
        let now = WallClock.now_ms();
        if now >= at {
            return;
        }
        let us = ((at - now) * 1000).min(1000);
        // SAFETY: a plain sleep.
        unsafe { pg_sys::pg_usleep(us as _) };
    }
}

/// What `next_id` and `next_ids` mint with: the configuration, state word
/// and limit of a generator (a leased one's current claim), and the claim's
/// fence, by which its refusals are explained as an application's lease
/// explains them (`snowmint_lease::fenced_refusal`).
fn claim_of(g: &Cached, name: &str) -> (Config, &'static AtomicU64, u64, Fence) {
    match &g.leased {
        Some(l) => l.current(name),
        None => (g.config, g.word, u64::MAX, None),
    }
}

/// The next ID of the generator `name` (usable as a column default).
/// Parallel restricted, like `nextval`: minted by the leader only.
#[pg_extern(volatile, parallel_restricted, strict)]
fn next_id(name: default!(&str, "'default'")) -> i64 {
    let g = generator(name);
    loop {
        let (config, word, limit, fence) = claim_of(&g, name);
        match config
            .try_next_on_within(word, &WallClock, limit)
            .map_err(|e| snowmint_lease::fenced_refusal(e, fence, config.layout()))
            .or_raise()
        {
            Next::Id(id) => return id_out(id),
            Next::RetryAt(at) => wait_until(at),
        }
    }
}

/// `n` increasing IDs of the generator `name`.
#[pg_extern(volatile, parallel_restricted, strict)]
fn next_ids(name: &str, n: i32) -> SetOfIterator<'static, i64> {
    let g = generator(name);
    let n = Value::from(i64::from(n)).to_count().or_raise();
    let mut ids = vec![0u64; n];
    let mut done = 0;
    while done < n {
        let (config, word, limit, fence) = claim_of(&g, name);
        let (k, retry) = config
            .try_fill_on_within(word, &WallClock, limit, &mut ids[done..])
            .map_err(|e| snowmint_lease::fenced_refusal(e, fence, config.layout()))
            .or_raise();
        done += k;
        if let Some(at) = retry {
            wait_until(at);
        }
    }
    let ids: Vec<i64> = ids.into_iter().map(|id| id_out(Id::new(id))).collect();
    SetOfIterator::new(ids)
}

/// Declares the generator `name`. `layout` is a preset name or a JSON
/// descriptor, `nodes` its node values (`{"datacenter": 1, "worker": 3}`),
/// `options` the core's generator options (`clock_backwards`, ...).
#[pg_extern(volatile)]
fn create_generator(
    name: &str,
    layout: default!(&str, "'twitter'"),
    nodes: default!(Option<JsonB>, "NULL"),
    options: default!(Option<JsonB>, "NULL"),
    lease: default!(Option<&str>, "NULL"),
) {
    if name.is_empty() {
        raise(
            PgSqlErrorCode::ERRCODE_INVALID_PARAMETER_VALUE,
            "snowmint: a generator needs a name".into(),
            "invalid_option",
        )
    }
    match lease {
        Some(url) => lease::check(name, url, layout, nodes.as_ref(), options.as_ref()),
        None => {
            config_of(layout, nodes.as_ref(), options.as_ref());
        }
    }
    // ON CONFLICT: a concurrent create of the same name is the same error.
    let inserted = Spi::get_one_with_args::<String>(
        "INSERT INTO snowmint.generator_defs (name, layout, nodes, options, lease) \
         VALUES ($1, $2, $3, $4, $5) ON CONFLICT (name) DO NOTHING RETURNING name",
        &[
            name.into(),
            layout.into(),
            nodes.into(),
            options.into(),
            lease.into(),
        ],
    );
    if !matches!(inserted, Ok(Some(_))) {
        raise(
            PgSqlErrorCode::ERRCODE_DUPLICATE_OBJECT,
            format!("snowmint: a generator named '{name}' exists (drop_generator first)"),
            "duplicate_generator",
        )
    }
    if lease.is_some() && PRELOADED.load(Ordering::Acquire) {
        // This database's worker (started if it has none) claims once the
        // definition is committed. (Without the preload there is none, and
        // next_id says so.)
        lease::ask_for_worker();
    }
    invalidate();
}

/// Removes the generator `name` (its shared state stays, so a generator
/// declared again with the same node values continues above its IDs).
#[pg_extern(volatile, strict)]
fn drop_generator(name: &str) {
    let deleted = Spi::get_one_with_args::<String>(
        "DELETE FROM snowmint.generator_defs WHERE name = $1 RETURNING name",
        &[name.into()],
    );
    match deleted {
        Ok(Some(_)) => invalidate(),
        _ => unknown_generator(name),
    }
}

extension_sql!(
    r#"
-- Moves a serial or IDENTITY column to a generator: the column's default
-- becomes snowmint.next_id(generator) (an IDENTITY is dropped; a serial's
-- sequence stays, owned by the column), after checking that every new ID
-- sorts after every existing key.
CREATE FUNCTION snowmint.convert_sequence(tbl regclass, col name, generator text)
RETURNS void LANGUAGE plpgsql AS $body$
DECLARE
    def record;
    attr record;
    top bigint;
    first_new bigint;
BEGIN
    SELECT layout INTO def FROM snowmint.generator_defs WHERE name = generator;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'snowmint: no generator named ''%'' (snowmint.create_generator makes one)', generator
            USING ERRCODE = 'undefined_object', DETAIL = 'code: unknown_generator';
    END IF;
    SELECT a.attidentity, a.atttypid::regtype AS typ INTO attr
        FROM pg_catalog.pg_attribute a
        WHERE a.attrelid = tbl AND a.attname = col AND a.attnum > 0 AND NOT a.attisdropped;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'snowmint: % has no column %', tbl, col
            USING ERRCODE = 'undefined_column', DETAIL = 'code: invalid_option';
    END IF;
    IF attr.typ::text <> 'bigint' THEN
        RAISE EXCEPTION 'snowmint: %.% is %, IDs need bigint (ALTER COLUMN ... TYPE bigint first)', tbl, col, attr.typ
            USING ERRCODE = 'datatype_mismatch', DETAIL = 'code: invalid_option';
    END IF;
    -- The ALTERs lock the table: no key arrives between the check and the default.
    IF attr.attidentity <> '' THEN
        EXECUTE format('ALTER TABLE %s ALTER COLUMN %I DROP IDENTITY', tbl, col);
    END IF;
    EXECUTE format('ALTER TABLE %s ALTER COLUMN %I SET DEFAULT snowmint.next_id(%L)', tbl, col, generator);
    EXECUTE format('SELECT max(%I) FROM %s', col, tbl) INTO top;
    first_new := snowmint.min_id(now(), def.layout);
    IF top IS NOT NULL AND top >= first_new THEN
        RAISE EXCEPTION 'snowmint: %.% holds % and the generator''s next IDs start at %: they would not sort after the existing keys', tbl, col, top, first_new
            USING ERRCODE = 'object_not_in_prerequisite_state', DETAIL = 'code: keys_above_generator';
    END IF;
END
$body$;
"#,
    name = "convert_sequence",
    requires = [min_id, "generator_defs"]
);
