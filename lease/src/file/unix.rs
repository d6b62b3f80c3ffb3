//! The file store on Unix: see the parent module for the layout and
//! [`super::guard`] for what it refuses.

use std::collections::HashMap;
use std::fs::{self, File, OpenOptions};
use std::io;
use std::os::unix::fs::MetadataExt;
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use super::guard::{self, io_err};
use crate::slot::{new_token, slot_order, system_ms, SlotSeen, State};
use crate::space::SlotSpace;
use crate::store::listing;
use crate::store::{
    check_hwm_bound, check_space_key, is_space_key, Claim, ClaimRequest, Holder, ReleaseStep,
    Renewal, SlotRecord, SlotRelease, SlotState, SpaceRecord, Store, StoreError,
};
use crate::store::{RenewRequest, SlotReleaseRequest};

/// The embedded store (Unix): see the module documentation.
#[derive(Debug)]
pub struct FileStore {
    dir: PathBuf,
    /// The lock files of the slots this process holds, by token.
    held: Mutex<HashMap<String, File>>,
    /// Held for each read-modify-write of a state file. Across processes the
    /// slot's lock makes its holder the only writer; inside the process a
    /// renewal the driver gave up on (timeout) may still be running when the
    /// next one starts, and must not write an older, lower `hwm` after it.
    writing: Mutex<()>,
    /// The one filesystem name accepted although the guard would refuse it
    /// (the URL's `allow_fs`).
    allow_fs: Option<String>,
    /// This is the per-user default directory (plain `file`): created 0700
    /// and checked for owner and mode, refused on a volatile filesystem.
    default_dir: bool,
    /// How long a call waits for `space.lock`: the URL's `timeout_ms` (the
    /// driver gives up on the call then anyway).
    lock_wait: std::time::Duration,
}

impl FileStore {
    /// A store in `dir` (created on the first claim), with the checks of a
    /// directory the user named.
    pub fn new(dir: impl Into<PathBuf>) -> FileStore {
        FileStore {
            dir: dir.into(),
            held: Mutex::new(HashMap::new()),
            writing: Mutex::new(()),
            allow_fs: None,
            default_dir: false,
            lock_wait: std::time::Duration::from_millis(crate::url::Settings::default().timeout_ms),
        }
    }

    /// The store a `file:` URL names: the default directory's checks if `dir`
    /// is the per-user default, `allow_fs` from the URL.
    pub(crate) fn from_url(dir: &Path, settings: &crate::url::Settings) -> FileStore {
        let mut store = FileStore::new(dir);
        store.default_dir = crate::url::default_dir().is_ok_and(|d| d == dir);
        store.allow_fs = settings.allow_fs.clone();
        store.lock_wait = std::time::Duration::from_millis(settings.timeout_ms);
        store
    }

    /// Creates the store directory if it is missing (the default one 0700)
    /// and refuses it if it is unsafe (see the guard module).
    fn prepare_dir(&self) -> Result<fs::Metadata, StoreError> {
        if self.default_dir {
            guard::private_dir(&self.dir)?;
        } else {
            fs::create_dir_all(&self.dir).map_err(|e| io_err("cannot create", &self.dir, e))?;
        }
        guard::check_store_dir(&self.dir)
    }

    /// The directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn space_dir(&self, space: &SlotSpace) -> PathBuf {
        self.dir.join(space.key())
    }

    /// Creates the space's directory, checks it and its filesystem, and
    /// checks (or writes) its `space.txt`.
    fn open_space(&self, space: &SlotSpace) -> Result<PathBuf, StoreError> {
        let store = self.prepare_dir()?;
        let sdir = self.space_dir(space);
        match fs::create_dir(&sdir) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(io_err("cannot create", &sdir, e)),
        }
        guard::check_space_dir(&sdir, &store)?;
        guard::check_filesystem(&sdir, self.allow_fs.as_deref(), self.default_dir)?;
        let txt = sdir.join("space.txt");
        match guard::read(&txt)? {
            Some(t) if t == space.text() => {}
            Some(_) => {
                return Err(StoreError::BadRecord(format!(
                    "{} describes another slot space than its name says",
                    txt.display()
                )))
            }
            // Several claimers may get here at once: each writes its own
            // temporary file, all with the same text, and renames it.
            None => guard::write_durably(&sdir, &txt, space.text())?,
        }
        Ok(sdir)
    }

    fn read_state(sdir: &Path, slot: u64) -> Result<State, StoreError> {
        let path = sdir.join(format!("{slot}.state"));
        match guard::read(&path)? {
            Some(t) => State::parse(&t).ok_or_else(|| {
                StoreError::BadRecord(format!("{} is not a slot state file", path.display()))
            }),
            None => Ok(State::default()),
        }
    }

    fn write_state(sdir: &Path, slot: u64, state: &State) -> Result<(), StoreError> {
        guard::write_durably(sdir, &sdir.join(format!("{slot}.state")), &state.to_text())
    }

    /// The slot's lock file, locked, or `None` if another holder has it.
    fn try_lock(sdir: &Path, slot: u64) -> Result<Option<File>, StoreError> {
        let path = sdir.join(format!("{slot}.lock"));
        let file = guard::open(
            &path,
            OpenOptions::new()
                .read(true)
                .write(true)
                .create(true)
                .truncate(false),
        )?;
        // SAFETY: flock on a descriptor we own; no memory is involved.
        let r = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
        if r == 0 {
            return Ok(Some(file));
        }
        let e = io::Error::last_os_error();
        if e.raw_os_error() == Some(libc::EWOULDBLOCK) {
            Ok(None)
        } else {
            Err(io_err("cannot lock", &path, e))
        }
    }

    /// The space's `space.lock`, locked: held around every read-modify-write
    /// of a state file (claim, renew, release), so that a check of the holder
    /// and the write that follows are one step even if a slot's lock file was
    /// removed and the slot claimed again. Held for milliseconds (an fsync's
    /// time, seconds on a disk busy with other writes); waiting for it is
    /// bounded by `timeout_ms`, then the call fails as unreachable.
    fn lock_space(&self, sdir: &Path) -> Result<File, StoreError> {
        let path = sdir.join("space.lock");
        // Read-only when it exists (a store made read-only still answers);
        // created when it does not. The first claimers of a new space race
        // here: another may create the file between a failed open and the
        // next step, so the creating open (which never truncates) is what
        // follows any failure, and its own failure is the one said unless
        // the file exists by then.
        let file = match guard::open(&path, OpenOptions::new().read(true)) {
            Ok(file) => file,
            Err(first) => match guard::open(
                &path,
                OpenOptions::new().write(true).create(true).truncate(false),
            ) {
                Ok(file) => file,
                Err(_) if path.exists() => return Err(first),
                Err(second) => return Err(second),
            },
        };
        let deadline = std::time::Instant::now() + self.lock_wait;
        loop {
            // SAFETY: flock on a descriptor we own.
            if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } == 0 {
                return Ok(file);
            }
            let e = io::Error::last_os_error();
            if e.raw_os_error() != Some(libc::EWOULDBLOCK) {
                return Err(io_err("cannot lock", &path, e));
            }
            if std::time::Instant::now() > deadline {
                return Err(StoreError::Unreachable(format!(
                    "{} stayed locked for {} ms (timeout_ms)",
                    path.display(),
                    self.lock_wait.as_millis()
                )));
            }
            std::thread::sleep(std::time::Duration::from_micros(200));
        }
    }

    /// Whether the slot's lock is held (by any process, this one included),
    /// without creating the lock file: tries a shared lock and lets it go at
    /// once. A claimer that tries the slot in that instant sees it held and
    /// takes another.
    fn lock_is_held(sdir: &Path, slot: u64) -> Result<bool, StoreError> {
        let path = sdir.join(format!("{slot}.lock"));
        if fs::symlink_metadata(&path).is_err_and(|e| e.kind() == io::ErrorKind::NotFound) {
            return Ok(false);
        }
        let file = guard::open(&path, OpenOptions::new().read(true))?;
        // SAFETY: flock on a descriptor we own; closing it unlocks.
        if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_SH | libc::LOCK_NB) } == 0 {
            return Ok(false);
        }
        let e = io::Error::last_os_error();
        if e.raw_os_error() == Some(libc::EWOULDBLOCK) {
            Ok(true)
        } else {
            Err(io_err("cannot lock", &path, e))
        }
    }

    /// The slots that have a state file in `sdir`, in order.
    fn state_slots(sdir: &Path) -> Result<Vec<u64>, StoreError> {
        let mut slots = Vec::new();
        for entry in fs::read_dir(sdir).map_err(|e| io_err("cannot read", sdir, e))? {
            let entry = entry.map_err(|e| io_err("cannot read", sdir, e))?;
            let name = entry.file_name();
            let Some(n) = name
                .to_str()
                .and_then(|n| n.strip_suffix(".state"))
                .and_then(|n| n.parse::<u64>().ok())
            else {
                continue;
            };
            slots.push(n);
        }
        slots.sort_unstable();
        Ok(slots)
    }

    fn record(sdir: &Path, slot: u64) -> Result<SlotRecord, StoreError> {
        let state = Self::read_state(sdir, slot)?;
        let held = Self::lock_is_held(sdir, slot)?;
        Ok(SlotRecord {
            slot,
            state: if held {
                SlotState::Held
            } else {
                SlotState::Free
            },
            token: state.token,
            counter: state.counter,
            expires_ms: None,
            hwm_ms: state.hwm_ms,
        })
    }

    /// Checks that `holder` still holds its slot: the lock file we hold is
    /// still the one at its path (nobody removed the directory), and the state
    /// file names our token and claim counter. Returns the state.
    fn check_holder(&self, sdir: &Path, holder: &Holder) -> Result<State, StoreError> {
        let held = self.held.lock().unwrap_or_else(|e| e.into_inner());
        let file = held
            .get(&holder.token)
            .ok_or_else(|| StoreError::Lost("this process holds no such claim".into()))?;
        let path = sdir.join(format!("{}.lock", holder.slot));
        let ours = file
            .metadata()
            .map_err(|e| io_err("cannot stat", &path, e))?;
        match fs::metadata(&path) {
            Ok(m) if m.ino() == ours.ino() && m.dev() == ours.dev() => {}
            Ok(_) => return Err(StoreError::Lost(format!("{} was replaced", path.display()))),
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                return Err(StoreError::Lost(format!("{} was removed", path.display())))
            }
            Err(e) => return Err(io_err("cannot stat", &path, e)),
        }
        drop(held);
        let state = Self::read_state(sdir, holder.slot)?;
        if state.token != holder.token || state.counter != holder.counter {
            return Err(StoreError::Lost(format!(
                "slot {} has another holder (claim counter {})",
                holder.slot, state.counter
            )));
        }
        Ok(state)
    }
}

impl Store for FileStore {
    fn describe(&self) -> String {
        format!("file:{}", self.dir.display())
    }

    /// The machine's clock (the store is local).
    fn now_ms(&self) -> Result<u64, StoreError> {
        Ok(system_ms())
    }

    /// The bound is checked against this host's clock as the store reads it
    /// (the holder's generator clock is the wall time read once and advanced
    /// by the monotonic clock, so a step of the host clock after the holder
    /// started shows here).
    fn claim(&self, space: &SlotSpace, req: &ClaimRequest) -> Result<Claim, StoreError> {
        let max_hwm_ms = req.max_hwm_ms;
        let sdir = self.open_space(space)?;
        guard::sweep_temporaries(&sdir);
        let _writing = self.writing.lock().unwrap_or_else(|e| e.into_inner());
        let now = system_ms();
        let slots = space.slots();
        // The slots in the order of the rule every store follows; which are
        // held only their locks tell, so each is tried in turn.
        let mut seen = Vec::new();
        for n in Self::state_slots(&sdir)? {
            let hwm_ms = Self::read_state(&sdir, n)?.hwm_ms;
            seen.push(SlotSeen {
                slot: n,
                free: true,
                hwm_ms,
            });
        }
        let mut got = None;
        for slot in slot_order(req.prefer, slots, &seen, now) {
            if let Some(file) = Self::try_lock(&sdir, slot)? {
                got = Some((slot, file, ()));
                break;
            }
        }
        let (slot, file, _) = got.ok_or(StoreError::NoFreeSlot)?;
        // Refused before anything is written; dropping `file` unlocks the slot.
        check_hwm_bound(now, req.window_ms, max_hwm_ms)?;
        let _space = self.lock_space(&sdir)?;
        let old = Self::read_state(&sdir, slot)?;
        let new = State {
            hwm_ms: old.hwm_ms.max(now.saturating_add(req.window_ms)),
            counter: old.counter + 1,
            token: new_token(),
        };
        Self::write_state(&sdir, slot, &new)?;
        self.held
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(new.token.clone(), file);
        Ok(Claim {
            holder: Holder::new(slot, new.token, new.counter),
            prev_hwm_ms: old.hwm_ms,
            hwm_ms: new.hwm_ms,
            expires_ms: None,
            fence: None,
        })
    }

    fn renew_within(&self, space: &SlotSpace, r: &RenewRequest<'_>) -> Result<Renewal, StoreError> {
        let (holder, _, window_ms, max_hwm_ms) = r.parts();
        let sdir = self.space_dir(space);
        let _writing = self.writing.lock().unwrap_or_else(|e| e.into_inner());
        let _space = self.lock_space(&sdir)?;
        let mut state = self.check_holder(&sdir, holder)?;
        let now = system_ms();
        // The store's clock is this host's. Behind the slot's hwm by more
        // than a window, this renewal could confirm nothing new (its hwm
        // would stay where it is): the clock stepped back, or the slot was
        // taken with an hwm far ahead. Say so instead of a renewal that looks
        // healthy; hwm stays, the holder keeps its confirmed reservation and
        // tries again, and renewals extend it once the clock has caught up.
        if now.saturating_add(window_ms) < state.hwm_ms {
            return Err(StoreError::Unreachable(format!(
                "the host clock ({now} ms) is {} ms behind slot {}'s hwm ({} ms) less the \
                 window (stepped back?): no renewal extends the reservation until it catches up",
                state.hwm_ms - window_ms - now,
                holder.slot,
                state.hwm_ms
            )));
        }
        check_hwm_bound(now, window_ms, max_hwm_ms)?;
        state.hwm_ms = state.hwm_ms.max(now.saturating_add(window_ms));
        Self::write_state(&sdir, holder.slot, &state)?;
        Ok(Renewal {
            hwm_ms: state.hwm_ms,
            expires_ms: None,
        })
    }

    fn release(&self, space: &SlotSpace, holder: &Holder, last_ms: u64) -> Result<(), StoreError> {
        let sdir = self.space_dir(space);
        let _writing = self.writing.lock().unwrap_or_else(|e| e.into_inner());
        let result = self.lock_space(&sdir).and_then(|_space| {
            let mut state = self.check_holder(&sdir, holder)?;
            state.hwm_ms = last_ms;
            state.token.clear();
            Self::write_state(&sdir, holder.slot, &state)
        });
        // Unlock whatever happened: a holder that could not write leaves the
        // last confirmed hwm, which is above everything it issued.
        self.held
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&holder.token);
        result
    }

    /// Creates the directory if it is missing (the default one 0700), and
    /// checks that it is safe (see the guard module) and can be read.
    fn init(&self) -> Result<(), StoreError> {
        self.prepare_dir()?;
        guard::check_filesystem(&self.dir, self.allow_fs.as_deref(), self.default_dir)?;
        fs::read_dir(&self.dir)
            .map(drop)
            .map_err(|e| io_err("cannot read", &self.dir, e))
    }

    /// Every `<space key>/` directory with a `space.txt`, and its state
    /// files. A slot is held while its lock is (no expiry). A missing
    /// directory holds nothing.
    fn list(&self) -> Result<(u64, Vec<SpaceRecord>), StoreError> {
        let now = system_ms();
        let entries = match fs::read_dir(&self.dir) {
            Ok(e) => e,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok((now, Vec::new())),
            Err(e) => return Err(io_err("cannot read", &self.dir, e)),
        };
        let mut spaces = Vec::new();
        for entry in entries {
            let entry = entry.map_err(|e| io_err("cannot read", &self.dir, e))?;
            let Some(key) = entry.file_name().to_str().map(str::to_string) else {
                continue;
            };
            let sdir = entry.path();
            if !is_space_key(&key) || !sdir.is_dir() {
                continue;
            }
            let txt = sdir.join("space.txt");
            let Some(text) = guard::read(&txt)? else {
                // Being created by a first claim: nothing to show yet.
                continue;
            };
            let slots = Self::state_slots(&sdir)?
                .into_iter()
                .map(|n| Self::record(&sdir, n))
                .collect::<Result<Vec<_>, _>>()?;
            spaces.push(SpaceRecord::unmarked(key, text, slots));
        }
        Ok(listing(now, spaces))
    }

    /// A slot whose lock nobody holds is free (its holder's process ended).
    /// With `force`, a held slot is freed by removing its lock file and
    /// clearing the token in its state file (`hwm` kept), under
    /// `space.lock`: the holder's next renewal finds its lock file gone and
    /// the slot lost, and the next claimer locks a new lock file.
    fn release_slot(&self, req: &SlotReleaseRequest<'_>) -> Result<SlotRelease, StoreError> {
        let (space_key, slot, force, reset_hwm_ms) = req.parts();
        check_space_key(space_key)?;
        let sdir = self.dir.join(space_key);
        if !sdir.join(format!("{slot}.state")).exists() {
            return Ok(SlotRelease::WasFree);
        }
        let _writing = self.writing.lock().unwrap_or_else(|e| e.into_inner());
        // Claims take the space lock too: the slot stays as read until written.
        let _space = self.lock_space(&sdir)?;
        let record = Self::record(&sdir, slot)?;
        let hwm_ms = match ReleaseStep::check(&record, force, reset_hwm_ms) {
            Ok(hwm_ms) => hwm_ms,
            Err(done) => return Ok(done),
        };
        let lock = sdir.join(format!("{slot}.lock"));
        match fs::remove_file(&lock) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => return Err(io_err("cannot remove", &lock, e)),
        }
        let state = State::freed(hwm_ms, record.counter);
        Self::write_state(&sdir, slot, &state)?;
        Ok(SlotRelease::Released(record))
    }
}
