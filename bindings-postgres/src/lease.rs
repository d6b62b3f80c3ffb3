//! Leased generators (`lease => 'database'` or a lease URL): a background
//! worker holds one lease per generator with the lease crate's own driver
//! (`snowmint_lease::LeasedGenerator`: claim, renewals, the decisions on the
//! store's answers) and publishes in shared memory what the backends need:
//! the slot (the leased node value), the claim's `resume_after` (strictly
//! above the slot's previous `hwm`) and the end of the confirmed reservation.
//! Backends mint on the shared state word of that node configuration with
//! the reservation as the core's limit: past it the core refuses with
//! `lease_expired`. The worker never releases a slot: a release would write
//! the last unit the worker's own (unused) generator issued, below the IDs
//! the backends issued; an abandoned slot expires after its TTL instead,
//! with its `hwm` at the last confirmed reservation.

use std::collections::HashMap;
use std::ffi::CString;
use std::mem::ManuallyDrop;
use std::sync::atomic::AtomicU64;
use std::time::{Duration, Instant};

use pgrx::bgworkers::SignalWakeFlags;
use pgrx::bgworkers::{BackgroundWorker, BackgroundWorkerBuilder, BgWorkerStartTime};
use pgrx::guc::{GucContext, GucFlags, GucRegistry, GucSetting};
use pgrx::prelude::*;
use pgrx::{JsonB, PGRXSharedMemory, PgLwLock, PgSqlErrorCode};
use snowmint::{Config, Id, Options, SystemClock, Value};
use snowmint_lease::{LeaseUrl, LeasedGenerator, SlotSpace};

use crate::{json_arg, raise, value, word_at, OrRaise};

/// The database whose leased generators the worker holds (and whose lease
/// tables `lease => 'database'` means).
static DATABASE: GucSetting<Option<CString>> =
    GucSetting::<Option<CString>>::new(Some(c"postgres"));
/// The host the worker connects to for `lease => 'database'`.
static HOST: GucSetting<Option<CString>> = GucSetting::<Option<CString>>::new(Some(c"127.0.0.1"));
/// The user it connects as.
static USER: GucSetting<Option<CString>> = GucSetting::<Option<CString>>::new(Some(c"postgres"));

/// How many leased generators the worker holds.
const ENTRIES: usize = 32;
/// The longest name of a leased generator, bytes.
const NAME_MAX: usize = 63;
const MSG_MAX: usize = 320;

#[derive(Clone, Copy)]
pub(crate) struct Entry {
    name_len: usize,
    name: [u8; NAME_MAX],
    /// A claim is held: `slot`, `resume_after`, `end_ms` are its.
    held: bool,
    slot: u64,
    /// The claim's `resume_after` ID (0: none, a slot never used).
    resume_after: u64,
    /// The first Unix ms the reservation does not cover (0: nothing).
    end_ms: u64,
    /// Why no claim is held (or the last renewal's failure).
    msg_len: usize,
    msg: [u8; MSG_MAX],
}

impl Default for Entry {
    fn default() -> Self {
        Entry {
            name_len: 0,
            name: [0; NAME_MAX],
            held: false,
            slot: 0,
            resume_after: 0,
            end_ms: 0,
            msg_len: 0,
            msg: [0; MSG_MAX],
        }
    }
}

#[derive(Clone, Copy)]
pub(crate) struct Table {
    /// The worker's database (0: the worker has not started).
    db: u32,
    used: usize,
    entries: [Entry; ENTRIES],
}

impl Default for Table {
    fn default() -> Self {
        Table {
            db: 0,
            used: 0,
            entries: [Entry::default(); ENTRIES],
        }
    }
}

// SAFETY: plain data (no pointers), one library in every process of the
// server, only touched under the lock.
unsafe impl PGRXSharedMemory for Table {}

// SAFETY: the name is this extension's own.
pub(crate) static LEASES: PgLwLock<Table> = unsafe { PgLwLock::new(c"snowmint_leases") };

fn text_of(setting: &GucSetting<Option<CString>>, default: &str) -> String {
    setting
        .get()
        .and_then(|c| c.to_str().ok().map(str::to_string))
        .unwrap_or_else(|| default.to_string())
}

/// The GUCs and the worker (while the library is preloaded).
pub(crate) fn register() {
    GucRegistry::define_string_guc(
        c"snowmint.database",
        c"The database whose leased generators snowmint's background worker holds.",
        c"Its lease tables are the ones lease => 'database' claims from.",
        &DATABASE,
        GucContext::Postmaster,
        GucFlags::default(),
    );
    GucRegistry::define_string_guc(
        c"snowmint.lease_host",
        c"The host snowmint's worker connects to for lease => 'database'.",
        c"The server's own port is used.",
        &HOST,
        GucContext::Postmaster,
        GucFlags::default(),
    );
    GucRegistry::define_string_guc(
        c"snowmint.lease_user",
        c"The user snowmint's worker connects as for lease => 'database'.",
        c"It needs trust (or another password-less) authentication on that host.",
        &USER,
        GucContext::Postmaster,
        GucFlags::default(),
    );
    BackgroundWorkerBuilder::new("snowmint lease worker")
        .set_type("snowmint lease worker")
        .set_function("snowmint_lease_worker")
        .set_library("snowmint")
        .enable_spi_access()
        .set_start_time(BgWorkerStartTime::RecoveryFinished)
        .set_restart_time(Some(Duration::from_secs(1)))
        .load();
}

/// The lease URL of a definition: `database` (with an optional `?query`)
/// is this server's database `snowmint.database`; anything else is a lease
/// URL as every language takes it.
fn resolve(lease: &str) -> String {
    match lease.strip_prefix("database") {
        Some(query) if query.is_empty() || query.starts_with('?') => {
            // SAFETY: a plain integer PostgreSQL set at start.
            let port = unsafe { pg_sys::PostPortNumber };
            format!(
                "postgres://{}@{}:{port}/{}{query}",
                text_of(&USER, "postgres"),
                text_of(&HOST, "127.0.0.1"),
                text_of(&DATABASE, "postgres"),
            )
        }
        _ => lease.to_string(),
    }
}

/// The fixed node values (every node field but the leased one).
fn fixed_of(nodes: Option<&serde_json::Value>) -> Result<Vec<(String, u64)>, snowmint::Error> {
    nodes.map_or(Value::Absent, value).to_node_pairs()
}

fn refs(fixed: &[(String, u64)]) -> Vec<(&str, u64)> {
    fixed.iter().map(|(k, v)| (k.as_str(), *v)).collect()
}

fn lease_error(e: &snowmint_lease::LeaseError) -> ! {
    let state = if e.code() == "lease_unavailable" {
        PgSqlErrorCode::ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE
    } else {
        PgSqlErrorCode::ERRCODE_INVALID_PARAMETER_VALUE
    };
    raise(state, format!("snowmint: {e}"), e.code())
}

/// `create_generator`'s check of a leased definition: the URL, the slot
/// space (exactly one node field left to lease) and the options.
pub(crate) fn check(
    name: &str,
    lease: &str,
    layout_text: &str,
    nodes: Option<&JsonB>,
    options: Option<&JsonB>,
) {
    if name.len() > NAME_MAX {
        raise(
            PgSqlErrorCode::ERRCODE_INVALID_PARAMETER_VALUE,
            format!("snowmint: a leased generator's name has at most {NAME_MAX} bytes"),
            "invalid_option",
        )
    }
    let layout = crate::layout(layout_text);
    let fixed = fixed_of(nodes.map(|j| &j.0)).or_raise();
    let options = json_arg(options).to_options().or_raise();
    let url = LeaseUrl::parse(&resolve(lease)).unwrap_or_else(|e| lease_error(&e));
    let space = SlotSpace::new(layout, &refs(&fixed), url.settings.namespace.as_deref())
        .unwrap_or_else(|e| lease_error(&e));
    Config::new(layout, space.nodes(0).or_raise(), options).or_raise();
}

// ---------------------------------------------------------------------------
// Backends.
// ---------------------------------------------------------------------------

/// A backend's leased generator: the definition, and the configuration of
/// the claim it last saw.
pub(crate) struct Leased {
    space: SlotSpace,
    options: Options,
    pub(crate) base: Config,
    current: std::cell::Cell<Option<(u64, u64, Config, &'static AtomicU64)>>,
}

impl Leased {
    pub(crate) fn new(layout_text: &str, nodes: Option<&JsonB>, options: Option<&JsonB>) -> Leased {
        let layout = crate::layout(layout_text);
        let fixed = fixed_of(nodes.map(|j| &j.0)).or_raise();
        let options = json_arg(options).to_options().or_raise();
        let space = SlotSpace::new(layout, &refs(&fixed), None).unwrap_or_else(|e| lease_error(&e));
        let base = Config::new(layout, space.nodes(0).or_raise(), options).or_raise();
        Leased {
            space,
            options,
            base,
            current: std::cell::Cell::new(None),
        }
    }

    /// The configuration, state word and limit of the claim the worker
    /// holds for `name` now; `lease_unavailable` without one.
    pub(crate) fn current(&self, name: &str) -> (Config, &'static AtomicU64, u64) {
        let (slot, resume_after, end_ms) = snapshot(name);
        let (config, word) = match self.current.get() {
            Some((s, r, config, word)) if s == slot && r == resume_after => (config, word),
            _ => {
                let mut options = self.options;
                options.resume_after = (resume_after != 0).then(|| Id::new(resume_after));
                let nodes = self.space.nodes(slot).or_raise();
                let config = Config::new(*self.space.layout(), nodes, options).or_raise();
                // A leased word starts at the claim's resume point, above
                // the slot's hwm (the lease's guarantee across restarts).
                let word = word_at(&config, config.start_state());
                self.current.set(Some((slot, resume_after, config, word)));
                (config, word)
            }
        };
        (config, word, config.limit_before(Some(end_ms)))
    }
}

fn unavailable(message: String) -> ! {
    raise(
        PgSqlErrorCode::ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE,
        message,
        "lease_unavailable",
    )
}

/// `(slot, resume_after, end_ms)` of the claim held for `name`.
fn snapshot(name: &str) -> (u64, u64, u64) {
    let found = {
        let t = LEASES.share();
        // SAFETY: a plain global of this backend.
        let db = unsafe { pg_sys::MyDatabaseId }.to_u32();
        if t.db == 0 {
            unavailable(format!(
                "snowmint: the lease worker has not started (it connects to the database \
                 snowmint.database = '{}'; the server log says why it stopped)",
                text_of(&DATABASE, "postgres")
            ))
        } else if t.db != db {
            Some(Err(()))
        } else {
            t.entries[..t.used]
                .iter()
                .find(|e| &e.name[..e.name_len] == name.as_bytes())
                .map(|e| Ok(*e))
        }
    };
    match found {
        None => unavailable(format!(
            "snowmint: the background worker holds no lease for generator '{name}' yet \
             (it reads the definitions every second)"
        )),
        Some(Err(())) => unavailable(format!(
            "snowmint: leased generators work in the database named by snowmint.database \
             only ('{}'), not in this one",
            text_of(&DATABASE, "postgres")
        )),
        Some(Ok(e)) if e.held => (e.slot, e.resume_after, e.end_ms),
        Some(Ok(e)) => unavailable(format!(
            "snowmint: no slot for generator '{name}' now: {}",
            String::from_utf8_lossy(&e.msg[..e.msg_len])
        )),
    }
}

// ---------------------------------------------------------------------------
// The worker.
// ---------------------------------------------------------------------------

#[derive(Clone, PartialEq)]
struct Def {
    name: String,
    layout: String,
    nodes: Option<serde_json::Value>,
    options: Option<serde_json::Value>,
    lease: String,
}

struct Held {
    def: Def,
    /// Never dropped while held: dropping closes, and closing releases the
    /// slot at the worker generator's last unit (none), below the IDs the
    /// backends issued. Dropped only once the slot is lost (no release).
    lg: Option<ManuallyDrop<LeasedGenerator>>,
    next_try: Instant,
    msg: String,
}

/// The slot each generator held last, tried first by its next claim (a
/// restart then resumes on the same node value when it is free).
const PREFS: &str = "snowmint_lease_slots";

fn read_prefs() -> HashMap<String, u64> {
    std::fs::read_to_string(PREFS)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| {
            let (slot, name) = l.split_once('\t')?;
            Some((name.to_string(), slot.parse().ok()?))
        })
        .collect()
}

fn write_prefs(prefs: &HashMap<String, u64>) {
    let text: String = prefs
        .iter()
        .map(|(name, slot)| format!("{slot}\t{name}\n"))
        .collect();
    let tmp = format!("{PREFS}.tmp");
    if std::fs::write(&tmp, text).is_ok() {
        let _ = std::fs::rename(&tmp, PREFS);
    }
}

fn read_defs() -> Vec<Def> {
    Spi::connect(|c| {
        let mut exists = false;
        for row in c.select(
            "SELECT to_regclass('snowmint.generator_defs') IS NOT NULL",
            None,
            &[],
        )? {
            exists = row.get::<bool>(1)?.unwrap_or(false);
        }
        let mut out = Vec::new();
        if !exists {
            return Ok(out);
        }
        let rows = c.select(
            "SELECT name, layout, nodes, options, lease FROM snowmint.generator_defs \
             WHERE lease IS NOT NULL ORDER BY name",
            None,
            &[],
        )?;
        for row in rows {
            out.push(Def {
                name: row.get::<String>(1)?.unwrap_or_default(),
                layout: row.get::<String>(2)?.unwrap_or_default(),
                nodes: row.get::<JsonB>(3)?.map(|j| j.0),
                options: row.get::<JsonB>(4)?.map(|j| j.0),
                lease: row.get::<String>(5)?.unwrap_or_default(),
            });
        }
        Ok::<_, pgrx::spi::Error>(out)
    })
    .unwrap_or_default()
}

fn open(def: &Def, prefer: Option<u64>) -> Result<LeasedGenerator, String> {
    let url = LeaseUrl::parse(&resolve(&def.lease)).map_err(|e| e.to_string())?;
    let layout = Value::from(def.layout.as_str())
        .to_layout()
        .map_err(|e| e.to_string())?;
    let fixed = fixed_of(def.nodes.as_ref()).map_err(|e| e.to_string())?;
    let options = def
        .options
        .as_ref()
        .map_or(Value::Absent, value)
        .to_options()
        .map_err(|e| e.to_string())?;
    LeasedGenerator::open_with(&url, layout, &refs(&fixed), options, prefer, SystemClock)
        .map_err(|e| e.to_string())
}

impl Held {
    fn step(&mut self, prefs: &mut HashMap<String, u64>) {
        if let Some(lg) = &self.lg {
            let info = lg.info();
            if let Some(why) = info.lost {
                self.msg = format!("the lease of slot {} was lost: {why}", info.slot);
                // Lost: closing releases nothing.
                if let Some(lg) = self.lg.take() {
                    drop(ManuallyDrop::into_inner(lg));
                }
                self.next_try = Instant::now();
            } else {
                self.msg = info.last_error.unwrap_or_default();
            }
            return;
        }
        if Instant::now() < self.next_try {
            return;
        }
        match open(&self.def, prefs.get(&self.def.name).copied()) {
            Ok(lg) => {
                prefs.insert(self.def.name.clone(), lg.slot());
                write_prefs(prefs);
                self.lg = Some(ManuallyDrop::new(lg));
                self.msg.clear();
            }
            Err(e) => {
                self.msg = e;
                self.next_try = Instant::now() + Duration::from_secs(1);
            }
        }
    }

    fn entry(&self) -> Entry {
        let mut e = Entry::default();
        let name = self.def.name.as_bytes();
        e.name_len = name.len().min(NAME_MAX);
        e.name[..e.name_len].copy_from_slice(&name[..e.name_len]);
        if let Some(lg) = &self.lg {
            let info = lg.info();
            e.held = true;
            e.slot = lg.slot();
            e.resume_after = lg.config().options().resume_after.map_or(0, |id| id.get());
            e.end_ms = if info.lost.is_some() {
                0
            } else {
                info.reserved_end_ms.unwrap_or(0)
            };
        }
        let msg = self.msg.as_bytes();
        let mut n = msg.len().min(MSG_MAX);
        while !self.msg.is_char_boundary(n) {
            n -= 1;
        }
        e.msg_len = n;
        e.msg[..n].copy_from_slice(&msg[..n]);
        e
    }
}

fn publish(db_oid: u32, held: &[Held]) {
    let mut t = LEASES.exclusive();
    t.db = db_oid;
    t.used = held.len();
    for (i, h) in held.iter().enumerate() {
        t.entries[i] = h.entry();
    }
}

/// The worker: reads the leased definitions every second, holds a lease for
/// each (the first `ENTRIES`), publishes every 100 ms.
#[pg_guard]
#[no_mangle]
pub extern "C-unwind" fn snowmint_lease_worker(_arg: pg_sys::Datum) {
    BackgroundWorker::attach_signal_handlers(SignalWakeFlags::SIGHUP | SignalWakeFlags::SIGTERM);
    let db = text_of(&DATABASE, "postgres");
    BackgroundWorker::connect_worker_to_spi(Some(&db), None);
    // SAFETY: a plain global, set by the connection above.
    let db_oid = unsafe { pg_sys::MyDatabaseId }.to_u32();
    let mut prefs = read_prefs();
    let mut held: Vec<Held> = Vec::new();
    let mut last_read: Option<Instant> = None;
    loop {
        if last_read.is_none_or(|t| t.elapsed() >= Duration::from_secs(1)) {
            last_read = Some(Instant::now());
            let defs = BackgroundWorker::transaction(read_defs);
            let mut next = Vec::new();
            for def in defs.into_iter().take(ENTRIES) {
                match held.iter().position(|h| h.def == def) {
                    Some(i) => next.push(held.swap_remove(i)),
                    None => next.push(Held {
                        def,
                        lg: None,
                        next_try: Instant::now(),
                        msg: "not claimed yet".into(),
                    }),
                }
            }
            // Definitions dropped or changed: their leases are abandoned,
            // never released (see `Held::lg`); they keep renewing until the
            // worker stops, then expire after their TTL.
            held = next;
        }
        publish(db_oid, &held);
        // Published after each step too: a claim waits up to its timeout,
        // and the others' reservations must not go stale meanwhile.
        for i in 0..held.len() {
            held[i].step(&mut prefs);
            publish(db_oid, &held);
        }
        if !BackgroundWorker::wait_latch(Some(Duration::from_millis(100))) {
            break;
        }
    }
    // Stopping: nothing is released (the slots keep their reservation).
    std::mem::forget(held);
    // Exit code 1: the postmaster starts the worker again after a
    // terminate outside a shutdown (exit code 0 would unregister it).
    // SAFETY: ends this process, as PostgreSQL's own workers do.
    unsafe { pg_sys::proc_exit(1) };
}

/// The leases the worker holds, as it last published them: per leased
/// generator of this database, the slot (NULL before a claim), the last
/// Unix ms the reservation covers, and why no slot is held (or the last
/// renewal's failure).
// The row type is spelled out in the signature: pgrx reads the column
// names from it.
#[allow(clippy::type_complexity)]
#[pg_extern(volatile, parallel_restricted)]
fn leases() -> TableIterator<
    'static,
    (
        name!(generator, String),
        name!(slot, Option<i64>),
        name!(reserved_until_ms, Option<i64>),
        name!(message, Option<String>),
    ),
> {
    if !crate::PRELOADED.load(std::sync::atomic::Ordering::Acquire) {
        crate::word_of_unpreloaded();
    }
    let rows: Vec<_> = {
        let t = LEASES.share();
        // SAFETY: a plain global of this backend.
        let db = unsafe { pg_sys::MyDatabaseId }.to_u32();
        if t.db != db {
            Vec::new()
        } else {
            t.entries[..t.used]
                .iter()
                .map(|e| {
                    let msg = String::from_utf8_lossy(&e.msg[..e.msg_len]).into_owned();
                    (
                        String::from_utf8_lossy(&e.name[..e.name_len]).into_owned(),
                        e.held.then_some(e.slot as i64),
                        (e.held && e.end_ms > 0).then(|| e.end_ms as i64 - 1),
                        (!msg.is_empty()).then_some(msg),
                    )
                })
                .collect()
        }
    };
    TableIterator::new(rows)
}
