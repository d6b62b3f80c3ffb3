//! Leased generators (`lease => 'database'` or a lease URL): a background
//! worker per database that has leased generators holds one lease per
//! generator with the lease crate's own driver
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
//!
//! The workers are dynamic background workers started by a launcher (a
//! static worker, as autovacuum's launcher starts its workers): at the
//! launcher's start it starts one for every database that accepts
//! connections (one that finds no leased generator exits after a few
//! seconds), and later one for every database a backend asks for
//! (`create_generator` with a lease, or `next_id` of a leased generator
//! that no worker holds). A worker that stops is started again.

use std::ffi::CString;
use std::sync::atomic::AtomicU64;
use std::time::Duration;

use pgrx::bgworkers::{BackgroundWorkerBuilder, BgWorkerStartTime};
use pgrx::guc::{GucContext, GucFlags, GucRegistry, GucSetting};
use pgrx::pg_sys::panic::ErrorReport;
use pgrx::prelude::*;
use pgrx::{JsonB, PGRXSharedMemory, PgLwLock, PgSqlErrorCode};
use snowmint::{Config, FenceCause, Id, Options, Value};
use snowmint_lease::{LeaseUrl, SlotSpace};

use crate::{json_arg, raise, value, word_at, OrRaise};

mod launcher;
mod worker;

/// The database snowmint's launcher connects to, to list the databases.
static DATABASE: GucSetting<Option<CString>> =
    GucSetting::<Option<CString>>::new(Some(c"postgres"));
/// The host the workers connect to for `lease => 'database'`.
static HOST: GucSetting<Option<CString>> = GucSetting::<Option<CString>>::new(Some(c"127.0.0.1"));
/// The user they connect as.
static USER: GucSetting<Option<CString>> = GucSetting::<Option<CString>>::new(Some(c"postgres"));

/// How many databases leased generators are served in at once (a worker
/// each).
pub(crate) const DATABASES: usize = 8;
/// How many leased generators a database's worker holds.
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
    /// The claim's fence (`LeasedGenerator::fence`): a refusal behind it
    /// is `lease_fenced`, as an application's.
    fence: Fence,
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
            fence: None,
            msg_len: 0,
            msg: [0; MSG_MAX],
        }
    }
}

impl Entry {
    fn name(&self) -> &[u8] {
        &self.name[..self.name_len]
    }
}

/// A claim's fence: why it starts above the slot's previous `hwm`, and
/// that `hwm` (`LeasedGenerator::fence`).
pub(crate) type Fence = Option<(FenceCause, u64)>;

/// A place nobody uses.
const FREE: u8 = 0;
/// A database that needs a worker: the launcher starts one.
const WANTED: u8 = 1;
/// The launcher has started its worker (`pid` is set once it runs).
const STARTED: u8 = 2;

/// One database's place: its worker and the leases it holds.
#[derive(Clone, Copy)]
pub(crate) struct Served {
    /// The database's OID (0: a free place).
    db: u32,
    state: u8,
    /// Bumped by every backend that asks for the worker: a worker that
    /// found no leased generator exits only if nobody asked meanwhile.
    requests: u64,
    /// The worker's process ID (0: none runs).
    pid: i32,
    used: usize,
    entries: [Entry; ENTRIES],
}

impl Default for Served {
    fn default() -> Self {
        Served {
            db: 0,
            state: FREE,
            requests: 0,
            pid: 0,
            used: 0,
            entries: [Entry::default(); ENTRIES],
        }
    }
}

#[derive(Clone, Copy)]
pub(crate) struct Table {
    served: [Served; DATABASES],
}

impl Default for Table {
    fn default() -> Self {
        Table {
            served: [Served::default(); DATABASES],
        }
    }
}

impl Table {
    fn place(&mut self, db: u32) -> Option<&mut Served> {
        self.served.iter_mut().find(|s| s.db == db)
    }

    /// `db`'s place, taken from the free ones if it has none (`None`: all
    /// are taken).
    fn place_or_new(&mut self, db: u32) -> Option<&mut Served> {
        let i = match self.served.iter().position(|s| s.db == db) {
            Some(i) => i,
            None => {
                let i = self.served.iter().position(|s| s.db == 0)?;
                self.served[i] = Served {
                    db,
                    state: WANTED,
                    ..Served::default()
                };
                i
            }
        };
        Some(&mut self.served[i])
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

/// This process's database.
fn my_db() -> u32 {
    // SAFETY: a plain global of this process.
    unsafe { pg_sys::MyDatabaseId }.to_u32()
}

/// Asks for a worker serving this database (the launcher starts one within
/// a quarter of a second if none runs). False when every place is taken.
pub(crate) fn request() -> bool {
    let mut t = LEASES.exclusive();
    match t.place_or_new(my_db()) {
        Some(place) => {
            place.requests += 1;
            true
        }
        None => false,
    }
}

/// The refusal in a database beyond the [`DATABASES`] served: the limit in
/// the message, what to do in the hint.
fn no_place() -> ! {
    ErrorReport::new(
        PgSqlErrorCode::ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE,
        format!(
            "snowmint: leased generators are served in at most {DATABASES} databases of a \
             server at once, and {DATABASES} other databases hold those places"
        ),
        "snowmint",
    )
    .set_detail("code: lease_unavailable")
    .set_hint(
        "Drop the leased generators of a database that no longer needs them (its lease \
         worker frees its place 5 s later), or give this database's generators fixed node \
         values (nodes => ..., lease => NULL).",
    )
    .report(PgLogLevel::ERROR);
    unreachable!("ERROR returns control to PostgreSQL")
}

/// [`request`], refusing when every place is taken (`create_generator`).
pub(crate) fn ask_for_worker() {
    if !request() {
        no_place()
    }
}

/// The GUCs and the launcher (while the library is preloaded).
pub(crate) fn register() {
    GucRegistry::define_string_guc(
        c"snowmint.database",
        c"The database snowmint's lease launcher connects to, to list the databases.",
        c"Each database's leased generators are held by a worker of its own.",
        &DATABASE,
        GucContext::Postmaster,
        GucFlags::default(),
    );
    GucRegistry::define_string_guc(
        c"snowmint.lease_host",
        c"The host snowmint's workers connect to for lease => 'database'.",
        c"The server's own port is used.",
        &HOST,
        GucContext::Postmaster,
        GucFlags::default(),
    );
    GucRegistry::define_string_guc(
        c"snowmint.lease_user",
        c"The user snowmint's workers connect as for lease => 'database'.",
        c"It needs trust (or another password-less) authentication on that host.",
        &USER,
        GucContext::Postmaster,
        GucFlags::default(),
    );
    BackgroundWorkerBuilder::new("snowmint lease launcher")
        .set_type("snowmint lease launcher")
        .set_function("snowmint_lease_launcher")
        .set_library("snowmint")
        .enable_spi_access()
        .set_start_time(BgWorkerStartTime::RecoveryFinished)
        .set_restart_time(Some(Duration::from_secs(1)))
        .load();
}

/// A database name in a URL's path (percent-encoded but for unreserved
/// characters).
fn path_segment(name: &str) -> String {
    name.bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
                (b as char).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}

/// The name of this process's database (inside a transaction).
fn my_db_name() -> String {
    // SAFETY: a palloc'd copy of the name (NULL for a database that does
    // not exist, which a connected process's cannot be).
    let name = unsafe { pg_sys::get_database_name(pg_sys::MyDatabaseId) };
    if name.is_null() {
        return String::new();
    }
    // SAFETY: a NUL-terminated string PostgreSQL made.
    unsafe { std::ffi::CStr::from_ptr(name) }
        .to_string_lossy()
        .into_owned()
}

/// The lease URL of a definition: `database` (with an optional `?query`)
/// is this server's database `db_name`, the one the definition is in;
/// anything else is a lease URL as every language takes it.
fn resolve(lease: &str, db_name: &str) -> String {
    match lease.strip_prefix("database") {
        Some(query) if query.is_empty() || query.starts_with('?') => {
            // SAFETY: a plain integer PostgreSQL set at start.
            let port = unsafe { pg_sys::PostPortNumber };
            format!(
                "postgres://{}@{}:{port}/{}{query}",
                text_of(&USER, "postgres"),
                text_of(&HOST, "127.0.0.1"),
                path_segment(db_name),
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
    let url = LeaseUrl::parse(&resolve(lease, &my_db_name())).unwrap_or_else(|e| lease_error(&e));
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
    /// holds for `name` now, and the claim's fence (a refusal behind it is
    /// `lease_fenced`, as an application's); `lease_unavailable` without a
    /// claim.
    pub(crate) fn current(&self, name: &str) -> (Config, &'static AtomicU64, u64, Fence) {
        let (slot, resume_after, end_ms, fence) = snapshot(name);
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
        (config, word, config.limit_before(Some(end_ms)), fence)
    }
}

fn unavailable(message: String) -> ! {
    raise(
        PgSqlErrorCode::ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE,
        message,
        "lease_unavailable",
    )
}

/// `(slot, resume_after, end_ms, fence)` of the claim held for `name` by
/// this database's worker. Without one, asks for the worker (it may have
/// stopped, or never started: a database restored from a dump) and refuses.
fn snapshot(name: &str) -> (u64, u64, u64, Fence) {
    let db = my_db();
    let (running, found) = {
        let t = LEASES.share();
        match t.served.iter().find(|s| s.db == db) {
            None => (false, None),
            Some(s) => (
                s.pid != 0,
                s.entries[..s.used]
                    .iter()
                    .find(|e| e.name() == name.as_bytes())
                    .copied(),
            ),
        }
    };
    match found {
        Some(e) if e.held => (e.slot, e.resume_after, e.end_ms, e.fence),
        Some(e) => unavailable(format!(
            "snowmint: no slot for generator '{name}' now: {}",
            String::from_utf8_lossy(&e.msg[..e.msg_len])
        )),
        None if !request() => no_place(),
        None if running => unavailable(format!(
            "snowmint: this database's lease worker holds no lease for generator '{name}' \
             yet (it reads the definitions every second)"
        )),
        None => unavailable(
            "snowmint: no lease worker serves this database yet: the launcher starts one \
             (the server log says why, if none comes)"
                .into(),
        ),
    }
}

/// The leases this database's worker holds, as it last published them: per
/// leased generator, the slot (NULL before a claim), the last
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
    let db = my_db();
    let rows: Vec<_> = {
        let t = LEASES.share();
        match t.served.iter().find(|s| s.db == db) {
            None => Vec::new(),
            Some(s) => s.entries[..s.used]
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
                .collect(),
        }
    };
    TableIterator::new(rows)
}
