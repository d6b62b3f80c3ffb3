//! A database's lease worker: a dynamic background worker (the launcher
//! starts it, its argument the database's OID) that holds a lease for each
//! leased generator of its database and publishes them in its place of the
//! shared table.

use std::collections::HashMap;
use std::mem::ManuallyDrop;
use std::time::{Duration, Instant};

use pgrx::bgworkers::{BackgroundWorker, SignalWakeFlags};
use pgrx::prelude::*;
use pgrx::JsonB;
use snowmint::Value;
use snowmint_lease::{LeaseUrl, LeasedGenerator};

use super::{
    fixed_of, my_db_name, refs, resolve, Entry, Table, ENTRIES, LEASES, MSG_MAX, NAME_MAX, STARTED,
};
use crate::{value, WallClock};

/// A worker whose database has had no leased generator for this long
/// exits (one without the extension at once).
const IDLE_EXIT: Duration = Duration::from_secs(5);

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
    lg: Option<ManuallyDrop<LeasedGenerator<WallClock>>>,
    next_try: Instant,
    msg: String,
}

/// The file (in the data folder) of the slot each generator of database
/// `db` held last, tried first by its next claim (a restart then resumes on
/// the same node value when it is free).
fn prefs_file(db: u32) -> String {
    format!("snowmint_lease_slots.{db}")
}

fn read_prefs(db: u32) -> HashMap<String, u64> {
    std::fs::read_to_string(prefs_file(db))
        .unwrap_or_default()
        .lines()
        .filter_map(|l| {
            let (slot, name) = l.split_once('\t')?;
            Some((name.to_string(), slot.parse().ok()?))
        })
        .collect()
}

fn write_prefs(db: u32, prefs: &HashMap<String, u64>) {
    let text: String = prefs
        .iter()
        .map(|(name, slot)| format!("{slot}\t{name}\n"))
        .collect();
    let file = prefs_file(db);
    let tmp = format!("{file}.tmp");
    if std::fs::write(&tmp, text).is_ok() {
        let _ = std::fs::rename(&tmp, file);
    }
}

/// The database's leased definitions (`None`: the extension is not
/// installed in it).
fn read_defs() -> Option<Vec<Def>> {
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
            return Ok(None);
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
        Ok::<_, pgrx::spi::Error>(Some(out))
    })
    .unwrap_or_else(|_| Some(Vec::new()))
}

fn open(
    def: &Def,
    db_name: &str,
    prefer: Option<u64>,
) -> Result<LeasedGenerator<WallClock>, String> {
    let url = LeaseUrl::parse(&resolve(&def.lease, db_name)).map_err(|e| e.to_string())?;
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
    // The backends' clock (the wall clock, read on every call): the
    // reservation's limit is counted on the clock the IDs are made by, so
    // after a wall-clock step the renewals (the store's clock stepped too)
    // confirm a reservation the backends can use.
    LeasedGenerator::open_with(&url, layout, &refs(&fixed), options, prefer, WallClock)
        .map_err(|e| e.to_string())
}

impl Held {
    fn step(&mut self, db: u32, db_name: &str, prefs: &mut HashMap<String, u64>) {
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
        match open(&self.def, db_name, prefs.get(&self.def.name).copied()) {
            Ok(lg) => {
                prefs.insert(self.def.name.clone(), lg.slot());
                write_prefs(db, prefs);
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
            e.fence = lg.fence();
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

/// Publishes the worker's leases in its place (taken again if the launcher
/// freed it meanwhile; when none is free, nothing is published).
fn publish(t: &mut Table, db: u32, held: &[Held]) {
    let Some(place) = t.place_or_new(db) else {
        return;
    };
    place.used = held.len();
    for (i, h) in held.iter().enumerate() {
        place.entries[i] = h.entry();
    }
}

extern "C" {
    #[link_name = "kill"]
    fn libc_kill(pid: i32, sig: i32) -> i32;
}

/// A process of this ID runs (signal 0: nothing is sent).
pub(super) fn alive(pid: i32) -> bool {
    // SAFETY: signal 0 only checks that the process exists.
    pid > 0 && unsafe { libc_kill(pid, 0) } == 0
}

/// Takes the database's place as its worker: false if another live worker
/// holds it (or no place is free).
fn take_place(db: u32, me: i32) -> bool {
    let mut t = LEASES.exclusive();
    let Some(place) = t.place_or_new(db) else {
        return false;
    };
    if place.pid != 0 && place.pid != me && alive(place.pid) {
        return false;
    }
    place.pid = me;
    place.state = STARTED;
    true
}

/// The requests made for the database's worker so far.
fn requests(db: u32) -> u64 {
    let t = LEASES.share();
    t.served
        .iter()
        .find(|s| s.db == db)
        .map_or(0, |s| s.requests)
}

/// Frees the database's place, unless a backend asked for the worker
/// since `seen` requests (its generator may not have been committed when
/// the worker read the definitions). True: the worker may exit.
fn retire(db: u32, seen: u64) -> bool {
    let mut t = LEASES.exclusive();
    match t.place(db) {
        Some(place) if place.requests != seen => false,
        Some(place) => {
            *place = Default::default();
            true
        }
        None => true,
    }
}

/// Marks the worker gone (its published claims stay usable up to their
/// reservations; the launcher starts another worker).
fn leave(db: u32, me: i32) {
    let mut t = LEASES.exclusive();
    if let Some(place) = t.place(db) {
        if place.pid == me {
            place.pid = 0;
        }
    }
}

/// A database's worker: reads the leased definitions every second, holds a
/// lease for each (the first `ENTRIES`), publishes every 100 ms; exits once
/// the database has had none for [`IDLE_EXIT`].
#[pg_guard]
#[no_mangle]
pub extern "C-unwind" fn snowmint_lease_worker(arg: pg_sys::Datum) {
    BackgroundWorker::attach_signal_handlers(SignalWakeFlags::SIGHUP | SignalWakeFlags::SIGTERM);
    let db = arg.value() as u32;
    BackgroundWorker::connect_worker_to_spi_by_oid(Some(pg_sys::Oid::from(db)), None);
    // SAFETY: a plain global of this process.
    let me = unsafe { pg_sys::MyProcPid };
    if !take_place(db, me) {
        // Another worker serves the database (or no place is free).
        // SAFETY: ends this process, as PostgreSQL's own workers do.
        unsafe { pg_sys::proc_exit(0) };
    }
    let db_name = BackgroundWorker::transaction(my_db_name);
    let mut prefs = read_prefs(db);
    let mut held: Vec<Held> = Vec::new();
    let mut last_read: Option<Instant> = None;
    let mut idle_since: Option<Instant> = None;
    let mut retired = false;
    loop {
        if last_read.is_none_or(|t| t.elapsed() >= Duration::from_secs(1)) {
            last_read = Some(Instant::now());
            let seen = requests(db);
            let defs = BackgroundWorker::transaction(read_defs);
            // Without the extension: no wait (a startup probe of a
            // database that does not use it).
            let idle = match &defs {
                None => Some(Duration::ZERO),
                Some(d) if d.is_empty() => Some(IDLE_EXIT),
                Some(_) => None,
            };
            let defs = defs.unwrap_or_default();
            if let Some(after) = idle {
                let since = *idle_since.get_or_insert_with(Instant::now);
                if since.elapsed() >= after && retire(db, seen) {
                    retired = true;
                    break;
                }
            } else {
                idle_since = None;
            }
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
        publish(&mut LEASES.exclusive(), db, &held);
        // Published after each step too: a claim waits up to its timeout,
        // and the others' reservations must not go stale meanwhile.
        for i in 0..held.len() {
            held[i].step(db, &db_name, &mut prefs);
            publish(&mut LEASES.exclusive(), db, &held);
        }
        if !BackgroundWorker::wait_latch(Some(Duration::from_millis(100))) {
            break;
        }
    }
    // Stopping: nothing is released (the slots keep their reservation).
    std::mem::forget(held);
    if !retired {
        leave(db, me);
    }
    // SAFETY: ends this process, as PostgreSQL's own workers do.
    unsafe { pg_sys::proc_exit(0) };
}
