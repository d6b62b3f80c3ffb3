//! The launcher: a static background worker (connected to the database
//! `snowmint.database`, to read `pg_database`) that starts a dynamic lease
//! worker for every database that needs one, as autovacuum's launcher and
//! TimescaleDB's start theirs:
//! - at its start, one for every database that accepts connections (a
//!   worker that finds no leased generator in its database exits after a
//!   few seconds), a few at a time as places free up;
//! - then one for every database a backend asked for (its place in the
//!   shared table is `WANTED`);
//! - again for a database whose worker stopped (terminated, or failed to
//!   start), a second later; a database dropped meanwhile loses its place.
//!
//! The launcher polls the table every 250 ms.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use pgrx::bgworkers::{
    BackgroundWorker, BackgroundWorkerBuilder, BackgroundWorkerStatus, BgWorkerStartTime,
    DynamicBackgroundWorker, SignalWakeFlags,
};
use pgrx::prelude::*;

use super::worker::alive;
use super::{text_of, DATABASE, LEASES, STARTED, WANTED};

/// A worker the launcher started, or found running when it started.
enum Worker {
    Handle(DynamicBackgroundWorker),
    Pid(i32),
}

impl Worker {
    fn stopped(&self) -> bool {
        match self {
            Worker::Handle(h) => matches!(
                h.pid(),
                Err(BackgroundWorkerStatus::Stopped | BackgroundWorkerStatus::PostmasterDied)
            ),
            Worker::Pid(pid) => !alive(*pid),
        }
    }
}

/// The databases that accept connections (OIDs).
fn databases() -> Vec<u32> {
    Spi::connect(|c| {
        let rows = c.select(
            "SELECT oid::int8 FROM pg_catalog.pg_database \
             WHERE datallowconn AND NOT datistemplate ORDER BY oid",
            None,
            &[],
        )?;
        let mut out = Vec::new();
        for row in rows {
            if let Some(oid) = row.get::<i64>(1)? {
                out.push(oid as u32);
            }
        }
        Ok::<_, pgrx::spi::Error>(out)
    })
    .unwrap_or_default()
}

fn start(db: u32) -> Option<DynamicBackgroundWorker> {
    // SAFETY: a plain global of this process.
    let me = unsafe { pg_sys::MyProcPid };
    BackgroundWorkerBuilder::new(&format!("snowmint lease worker (database {db})"))
        .set_type("snowmint lease worker")
        .set_function("snowmint_lease_worker")
        .set_library("snowmint")
        .set_argument(Some(pg_sys::Datum::from(db)))
        .enable_spi_access()
        .set_start_time(BgWorkerStartTime::RecoveryFinished)
        .set_restart_time(None)
        .set_notify_pid(me)
        .load_dynamic()
        .ok()
}

/// The launcher's loop.
#[pg_guard]
#[no_mangle]
pub extern "C-unwind" fn snowmint_lease_launcher(_arg: pg_sys::Datum) {
    BackgroundWorker::attach_signal_handlers(SignalWakeFlags::SIGHUP | SignalWakeFlags::SIGTERM);
    let db = text_of(&DATABASE, "postgres");
    BackgroundWorker::connect_worker_to_spi(Some(&db), None);
    let mut workers: HashMap<u32, Worker> = HashMap::new();
    // Workers a previous launcher started: followed by their process ID;
    // places whose worker is gone are wanted again.
    {
        let mut t = LEASES.exclusive();
        for place in t.served.iter_mut().filter(|s| s.db != 0) {
            if place.pid != 0 && alive(place.pid) {
                workers.insert(place.db, Worker::Pid(place.pid));
            } else {
                place.pid = 0;
                place.state = WANTED;
            }
        }
    }
    // Every database once: those with leased generators keep their worker.
    let mut probe: Vec<u32> = BackgroundWorker::transaction(databases);
    let mut retry_at: HashMap<u32, Instant> = HashMap::new();
    let mut full_logged = false;
    loop {
        let now = Instant::now();
        let stopped: Vec<u32> = workers
            .iter()
            .filter(|(_, w)| w.stopped())
            .map(|(db, _)| *db)
            .collect();
        let wanted: Vec<u32> = {
            let mut t = LEASES.exclusive();
            for db in &stopped {
                workers.remove(db);
                // A worker that stopped without freeing its place (killed,
                // terminated, or its start failed): wanted again.
                if let Some(place) = t.place(*db) {
                    place.pid = 0;
                    place.state = WANTED;
                    retry_at.insert(*db, now + Duration::from_secs(1));
                }
            }
            probe.retain(|db| t.place_or_new(*db).is_none());
            t.served
                .iter()
                .filter(|s| s.db != 0 && s.state == WANTED && !workers.contains_key(&s.db))
                .filter(|s| retry_at.get(&s.db).is_none_or(|at| *at <= now))
                .map(|s| s.db)
                .collect()
        };
        if !wanted.is_empty() {
            let exist = BackgroundWorker::transaction(databases);
            for db in wanted {
                if !exist.contains(&db) {
                    // Dropped (or no longer accepting connections).
                    let mut t = LEASES.exclusive();
                    if let Some(place) = t.place(db) {
                        *place = Default::default();
                    }
                    continue;
                }
                match start(db) {
                    Some(h) => {
                        workers.insert(db, Worker::Handle(h));
                        if let Some(place) = LEASES.exclusive().place(db) {
                            place.state = STARTED;
                        }
                        full_logged = false;
                    }
                    None => {
                        if !full_logged {
                            warning!(
                                "snowmint: cannot start a lease worker for database {db}: no free \
                                 background worker slot (max_worker_processes); trying again"
                            );
                            full_logged = true;
                        }
                        retry_at.insert(db, now + Duration::from_secs(1));
                    }
                }
            }
        }
        if !BackgroundWorker::wait_latch(Some(Duration::from_millis(250))) {
            break;
        }
    }
    // SAFETY: ends this process, as PostgreSQL's own workers do (exit code
    // 1: the postmaster starts the launcher again after a terminate).
    unsafe { pg_sys::proc_exit(1) };
}
