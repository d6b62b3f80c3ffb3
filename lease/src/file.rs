//! The embedded store: a local directory.
//!
//! ```text
//! DIR/<space key>/space.txt     the space's canonical text (checked on every claim)
//! DIR/<space key>/space.lock    locked around every read-modify-write of a state file
//! DIR/<space key>/<slot>.lock   locked with flock(2) for the life of the holder
//! DIR/<space key>/<slot>.state  hwm_ms, counter, token (replaced atomically)
//! ```
//!
//! The lock is the claim: the OS frees it when the holder's process dies, so
//! the file store needs no TTL and its claims never expire while the holder
//! lives. `flock` locks belong to the open file, so two holders in one process
//! exclude each other too. The state file is written to a temporary file,
//! fsynced, renamed over the old one, and the directory fsynced, before a call
//! returns: a reservation counts only once it is on disk.

use std::collections::HashMap;
use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::MetadataExt;
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{SystemTime, UNIX_EPOCH};

use crate::space::SlotSpace;
use crate::store::{
    check_space_key, is_space_key, Claim, ClaimRequest, Holder, Renewal, SlotRecord, SlotRelease,
    SlotState, SpaceRecord, Store, StoreError,
};

/// The embedded store (Linux and macOS): see the module documentation.
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
}

/// A slot's state: the file store's state file, and the etcd store's state
/// key (the same text).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct State {
    pub(crate) hwm_ms: u64,
    pub(crate) counter: u64,
    pub(crate) token: String,
}

impl State {
    const HEADER: &'static str = "snowmint lease slot v1";

    pub(crate) fn to_text(&self) -> String {
        format!(
            "{}\nhwm_ms={}\ncounter={}\ntoken={}\n",
            Self::HEADER,
            self.hwm_ms,
            self.counter,
            self.token
        )
    }

    pub(crate) fn parse(text: &str) -> Option<State> {
        let mut lines = text.lines();
        if lines.next()? != Self::HEADER {
            return None;
        }
        let mut field = |name: &str| lines.next()?.strip_prefix(name)?.strip_prefix('=');
        let hwm_ms = field("hwm_ms")?.parse().ok()?;
        let counter = field("counter")?.parse().ok()?;
        let token = field("token")?.to_string();
        Some(State {
            hwm_ms,
            counter,
            token,
        })
    }
}

fn io_err(what: &str, path: &Path, e: io::Error) -> StoreError {
    StoreError::Unreachable(format!("{what} {}: {e}", path.display()))
}

/// A random token: std's OS-seeded hash keys over the time and a counter.
pub(crate) fn new_token() -> String {
    use std::collections::hash_map::RandomState;
    use std::hash::{BuildHasher, Hasher};
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let word = || {
        let mut h = RandomState::new().build_hasher();
        h.write_u64(COUNTER.fetch_add(1, Ordering::Relaxed));
        h.write_u128(
            SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos()),
        );
        h.write_u32(std::process::id());
        h.finish()
    };
    format!("{:016x}{:016x}", word(), word())
}

impl FileStore {
    /// A store in `dir` (created on the first claim).
    pub fn new(dir: impl Into<PathBuf>) -> FileStore {
        FileStore {
            dir: dir.into(),
            held: Mutex::new(HashMap::new()),
            writing: Mutex::new(()),
        }
    }

    /// The directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn space_dir(&self, space: &SlotSpace) -> PathBuf {
        self.dir.join(space.key())
    }

    /// Creates the space's directory and checks (or writes) its `space.txt`.
    fn open_space(&self, space: &SlotSpace) -> Result<PathBuf, StoreError> {
        let sdir = self.space_dir(space);
        fs::create_dir_all(&sdir).map_err(|e| io_err("cannot create", &sdir, e))?;
        let txt = sdir.join("space.txt");
        match fs::read_to_string(&txt) {
            Ok(t) if t == space.text() => {}
            Ok(_) => {
                return Err(StoreError::BadRecord(format!(
                    "{} describes another slot space than its name says",
                    txt.display()
                )))
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                // Several claimers may get here at once: each writes its own
                // temporary file, all with the same text, and renames it.
                let tmp = sdir.join(format!("space.txt.{}.tmp", new_token()));
                write_durably(&sdir, &tmp, &txt, space.text())?;
            }
            Err(e) => return Err(io_err("cannot read", &txt, e)),
        }
        Ok(sdir)
    }

    fn read_state(sdir: &Path, slot: u64) -> Result<State, StoreError> {
        let path = sdir.join(format!("{slot}.state"));
        match fs::read_to_string(&path) {
            Ok(t) => State::parse(&t).ok_or_else(|| {
                StoreError::BadRecord(format!("{} is not a slot state file", path.display()))
            }),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(State::default()),
            Err(e) => Err(io_err("cannot read", &path, e)),
        }
    }

    fn write_state(sdir: &Path, slot: u64, state: &State) -> Result<(), StoreError> {
        // Only the lock's holder writes a slot's state: one temporary name is enough.
        let tmp = sdir.join(format!("{slot}.state.tmp"));
        write_durably(
            sdir,
            &tmp,
            &sdir.join(format!("{slot}.state")),
            &state.to_text(),
        )
    }

    /// The slot's lock file, locked, or `None` if another holder has it.
    fn try_lock(sdir: &Path, slot: u64) -> Result<Option<File>, StoreError> {
        let path = sdir.join(format!("{slot}.lock"));
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .map_err(|e| io_err("cannot open", &path, e))?;
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
    /// removed and the slot claimed again. Held for milliseconds; waiting for
    /// it is bounded (1 s, then the call fails as unreachable).
    fn lock_space(sdir: &Path) -> Result<File, StoreError> {
        let path = sdir.join("space.lock");
        // Read-only when it exists (a store made read-only still answers).
        let file = match File::open(&path) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => OpenOptions::new()
                .write(true)
                .create(true)
                .truncate(false)
                .open(&path),
            r => r,
        }
        .map_err(|e| io_err("cannot open", &path, e))?;
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(1);
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
                    "{} stayed locked for 1 s",
                    path.display()
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
        let file = match File::open(&path) {
            Ok(f) => f,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(false),
            Err(e) => return Err(io_err("cannot open", &path, e)),
        };
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

/// Writes `text` to `tmp`, fsyncs it, renames it to `path` and fsyncs `dir`.
fn write_durably(dir: &Path, tmp: &Path, path: &Path, text: &str) -> Result<(), StoreError> {
    let mut f = File::create(tmp).map_err(|e| io_err("cannot create", tmp, e))?;
    f.write_all(text.as_bytes())
        .and_then(|()| f.sync_all())
        .map_err(|e| io_err("cannot write", tmp, e))?;
    drop(f);
    fs::rename(tmp, path).map_err(|e| io_err("cannot rename into", path, e))?;
    File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(|e| io_err("cannot sync", dir, e))
}

pub(crate) fn system_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

impl Store for FileStore {
    fn describe(&self) -> String {
        format!("file:{}", self.dir.display())
    }

    /// The machine's clock (the store is local).
    fn now_ms(&self) -> Result<u64, StoreError> {
        Ok(system_ms())
    }

    fn claim(&self, space: &SlotSpace, req: &ClaimRequest) -> Result<Claim, StoreError> {
        let sdir = self.open_space(space)?;
        let _writing = self.writing.lock().unwrap_or_else(|e| e.into_inner());
        let now = system_ms();
        let slots = space.slots();
        // First pass: the preferred slot, then every free slot whose hwm is
        // behind the clock, in order. Free slots with hwm ahead wait for the
        // second pass, lowest hwm first (its new holder waits the least).
        let mut ahead: Vec<(u64, u64)> = Vec::new();
        let mut got = None;
        let order = req
            .prefer
            .filter(|&p| p < slots)
            .into_iter()
            .chain((0..slots).filter(|&s| Some(s) != req.prefer));
        for slot in order {
            if let Some(file) = Self::try_lock(&sdir, slot)? {
                let state = Self::read_state(&sdir, slot)?;
                if state.hwm_ms <= now || Some(slot) == req.prefer {
                    got = Some((slot, file, state));
                    break;
                }
                ahead.push((state.hwm_ms, slot));
            }
        }
        if got.is_none() {
            ahead.sort_unstable();
            for (_, slot) in ahead {
                if let Some(file) = Self::try_lock(&sdir, slot)? {
                    got = Some((slot, file, Self::read_state(&sdir, slot)?));
                    break;
                }
            }
        }
        let (slot, file, _) = got.ok_or(StoreError::NoFreeSlot)?;
        let _space = Self::lock_space(&sdir)?;
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
            holder: Holder {
                slot,
                token: new.token,
                counter: new.counter,
            },
            prev_hwm_ms: old.hwm_ms,
            hwm_ms: new.hwm_ms,
            expires_ms: None,
        })
    }

    fn renew(
        &self,
        space: &SlotSpace,
        holder: &Holder,
        _ttl_ms: u64,
        window_ms: u64,
    ) -> Result<Renewal, StoreError> {
        let sdir = self.space_dir(space);
        let _writing = self.writing.lock().unwrap_or_else(|e| e.into_inner());
        let _space = Self::lock_space(&sdir)?;
        let mut state = self.check_holder(&sdir, holder)?;
        state.hwm_ms = state.hwm_ms.max(system_ms().saturating_add(window_ms));
        Self::write_state(&sdir, holder.slot, &state)?;
        Ok(Renewal {
            hwm_ms: state.hwm_ms,
            expires_ms: None,
        })
    }

    fn release(&self, space: &SlotSpace, holder: &Holder, last_ms: u64) -> Result<(), StoreError> {
        let sdir = self.space_dir(space);
        let _writing = self.writing.lock().unwrap_or_else(|e| e.into_inner());
        let result = Self::lock_space(&sdir).and_then(|_space| {
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

    /// Creates the directory if it is missing and checks that it can be read.
    fn init(&self) -> Result<(), StoreError> {
        fs::create_dir_all(&self.dir).map_err(|e| io_err("cannot create", &self.dir, e))?;
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
            let text = match fs::read_to_string(&txt) {
                Ok(t) => t,
                // Being created by a first claim: nothing to show yet.
                Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
                Err(e) => return Err(io_err("cannot read", &txt, e)),
            };
            let slots = Self::state_slots(&sdir)?
                .into_iter()
                .map(|n| Self::record(&sdir, n))
                .collect::<Result<Vec<_>, _>>()?;
            spaces.push(SpaceRecord { key, text, slots });
        }
        spaces.sort_by(|a, b| a.key.cmp(&b.key));
        Ok((now, spaces))
    }

    /// A slot whose lock nobody holds is free (its holder's process ended).
    /// With `force`, a held slot is freed by removing its lock file and
    /// clearing the token in its state file (`hwm` kept), under
    /// `space.lock`: the holder's next renewal finds its lock file gone and
    /// the slot lost, and the next claimer locks a new lock file.
    fn release_slot(
        &self,
        space_key: &str,
        slot: u64,
        force: bool,
    ) -> Result<SlotRelease, StoreError> {
        check_space_key(space_key)?;
        let sdir = self.dir.join(space_key);
        if !sdir.join(format!("{slot}.state")).exists() {
            return Ok(SlotRelease::WasFree);
        }
        let _writing = self.writing.lock().unwrap_or_else(|e| e.into_inner());
        let _space = Self::lock_space(&sdir)?;
        let record = Self::record(&sdir, slot)?;
        match record.state {
            SlotState::Free | SlotState::Expired => return Ok(SlotRelease::WasFree),
            SlotState::Held if !force => return Ok(SlotRelease::Refused(record)),
            SlotState::Held => {}
        }
        let lock = sdir.join(format!("{slot}.lock"));
        match fs::remove_file(&lock) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => return Err(io_err("cannot remove", &lock, e)),
        }
        let state = State {
            hwm_ms: record.hwm_ms,
            counter: record.counter,
            token: String::new(),
        };
        Self::write_state(&sdir, slot, &state)?;
        Ok(SlotRelease::Released(record))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn state_text_round_trips() {
        let s = State {
            hwm_ms: 1_700_000_000_123,
            counter: 7,
            token: "ab".into(),
        };
        assert_eq!(State::parse(&s.to_text()), Some(s));
        assert_eq!(State::parse("junk"), None);
        assert_eq!(State::parse("snowmint lease slot v1\nhwm_ms=x\n"), None);
    }
}
