//! Keeps the shared build folders from serving one checkout another's build.
//!
//! Cargo decides that a unit is fresh from modification times: when no
//! source file it read is newer than its last build. The build folders under
//! `~/.cache/snowmint` are shared by every checkout on the machine, and the
//! builds that do not go through the test command's per-checkout compiler
//! wrapper (the release check's, the WebAssembly packages', the fuzz
//! targets', the PostgreSQL extension's, the sdist's) name the workspace's
//! crates by their paths inside the checkout. So a checkout whose files are
//! older than another checkout's last build of other sources took that
//! build for its own: its tests passed or failed on code it does not hold.
//!
//! Before a run builds anything, [`hold`] compares every file of the checkout
//! (git's tracked and untracked files, not the ignored ones) with a record of
//! the sources those folders build from (`<build folder>.sources`), each file
//! with its content's hash and the time the record last took a new content
//! of it (`since`):
//! - a file whose content differs from the record's, or that the record
//!   does not have: the record takes its content, `since` now;
//! - then every file older than its `since` is set to it (touched): a unit
//!   built before then may hold another content of the file, so cargo
//!   builds it again; one built after holds this content.
//!
//! Runs whose sources agree with the record share the folders; a run that
//! changes the record waits until the runs of other sources have ended
//! (a `flock` held shared for the whole run, taken exclusively to change
//! the record), and they wait for it. A file that changes during a run may
//! have been built in either content: when the run ends its entry is marked
//! unknown and the file touched, so the next run builds it again.

use std::collections::BTreeMap;
use std::fs::{self, File, FileTimes, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::step::with_suffix;
use crate::tools::{flock, lock_file};

/// Set in the environment of what a holding run starts, so that nested
/// runner processes (its parts) do not take the record again.
const HELD: &str = "SNOWMINT_SOURCES_HELD";

/// A file's content hash in the record: FNV-1a (64 bits) of its bytes, and
/// its length.
type Hash = (u64, u64);

/// The record's entry for a file whose content is not known (it changed
/// during a run): no file hashes to it with length `u64::MAX`.
const UNKNOWN: Hash = (0, u64::MAX);

/// The sources the shared build folders build from: each file (its path in
/// the checkout) with its content's hash and when the record took it.
#[derive(Debug, Default)]
struct Record {
    files: BTreeMap<String, (Hash, SystemTime)>,
    /// The checkout that last changed the record (for the waiting message).
    checkout: String,
}

/// A run's hold on the shared build folders: the record's lock, held
/// shared until it is dropped; then files changed during the run are marked.
#[derive(Debug)]
pub struct Hold {
    root: PathBuf,
    base: PathBuf,
    at_start: BTreeMap<String, Hash>,
    tenancy: Option<File>,
}

/// The record's folder and name: `<build folder>.sources` beside the
/// shared build folder the runner uses, which every folder of the family
/// (`-fuzz`, `-sdist`, `-postgres`) is named after; `SNOWMINT_BUILD_DIR=DIR`
/// is a family (and a record) of its own.
pub fn record_base() -> PathBuf {
    match std::env::var("SNOWMINT_BUILD_DIR").as_deref() {
        Ok(dir) if !dir.is_empty() && dir != "target" => PathBuf::from(dir),
        _ => crate::tools::cache_dir().join("snowmint/build"),
    }
}

/// Takes the hold for this process and what it starts, unless a runner
/// above it holds it already (`SNOWMINT_SOURCES_HELD`). Without git (a
/// source tarball) nothing is checked, and a line says so.
pub fn hold_for_run(root: &Path) -> Result<Option<Hold>, String> {
    if std::env::var_os(HELD).is_some() {
        return Ok(None);
    }
    if !root.join(".git").exists() {
        eprintln!(
            "xtask: not a git checkout: the shared build folders' record of sources is not checked \
             (SNOWMINT_BUILD_DIR=DIR gives this tree folders of its own)"
        );
        return Ok(None);
    }
    let hold = hold(root, &record_base())?;
    std::env::set_var(HELD, "1");
    Ok(Some(hold))
}

/// Brings the checkout at `root` and the record at `base.sources` into
/// agreement (see the module's comment) and returns the hold.
fn hold(root: &Path, base: &Path) -> Result<Hold, String> {
    if let Some(dir) = base.parent() {
        fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    let gate = lock_file(&with_suffix(base, ".sources.lock"))?;
    lock(&gate, libc::LOCK_EX, "another run's check of its sources")?;
    let tenancy = lock_file(&with_suffix(base, ".sources.tenants"))?;
    let ours = scan(root)?;
    let mut record = read_record(&with_suffix(base, ".sources"));
    let differs: Vec<&String> = ours
        .iter()
        .filter(|(path, hash)| record.files.get(*path).is_none_or(|(h, _)| h != *hash))
        .map(|(path, _)| path)
        .collect();
    if differs.is_empty() {
        lock(&tenancy, libc::LOCK_SH, "")?;
    } else {
        let waiting = format!(
            "the runs of other sources to end (the last from {}): they share the build folders \
             (SNOWMINT_BUILD_DIR=DIR gives this checkout folders of its own)",
            if record.checkout.is_empty() {
                "another checkout"
            } else {
                &record.checkout
            }
        );
        lock(&tenancy, libc::LOCK_EX, &waiting)?;
        let now = SystemTime::now();
        for path in differs {
            record.files.insert(path.clone(), (ours[path], now));
        }
        record.checkout = root.display().to_string();
        write_record(&with_suffix(base, ".sources"), &record)?;
        lock(&tenancy, libc::LOCK_SH, "")?;
    }
    // Older than the record's `since` (now, for the contents it just took):
    // raised to it.
    for path in ours.keys() {
        let (file, since) = (root.join(path), record.files[path].1);
        if modified(&file).is_some_and(|m| m < since) {
            touch(&file, since)?;
        }
    }
    drop(gate);
    Ok(Hold {
        root: root.to_path_buf(),
        base: base.to_path_buf(),
        at_start: ours,
        tenancy: Some(tenancy),
    })
}

impl Drop for Hold {
    /// Files whose content changed during the run: the record's entry
    /// becomes unknown and the file is touched (the run may have built it in
    /// either content).
    fn drop(&mut self) {
        let Ok(now_ours) = scan(&self.root) else {
            return;
        };
        let changed: Vec<&String> = now_ours
            .iter()
            .filter(|(path, hash)| self.at_start.get(*path) != Some(*hash))
            .map(|(path, _)| path)
            .collect();
        if changed.is_empty() {
            return;
        }
        let Ok(gate) = lock_file(&with_suffix(&self.base, ".sources.lock")) else {
            return;
        };
        // A run that holds the gate may be waiting for this one's tenancy to
        // end: then the tenancy goes first.
        if !flock(&gate, libc::LOCK_EX | libc::LOCK_NB).unwrap_or(false) {
            self.tenancy = None;
            if lock(&gate, libc::LOCK_EX, "").is_err() {
                return;
            }
        }
        let name = with_suffix(&self.base, ".sources");
        let mut record = read_record(&name);
        let now = SystemTime::now();
        for path in changed {
            let _ = touch(&self.root.join(path), now);
            record.files.insert(path.clone(), (UNKNOWN, now));
        }
        if let Err(e) = write_record(&name, &record) {
            eprintln!("xtask: {e}");
        }
    }
}

/// `flock(file, op)`; when it has to wait, `waiting` (if any) is printed
/// first.
fn lock(file: &File, op: libc::c_int, waiting: &str) -> Result<(), String> {
    if !flock(file, op | libc::LOCK_NB)? {
        if !waiting.is_empty() {
            eprintln!("xtask: waiting for {waiting}");
        }
        flock(file, op)?;
    }
    Ok(())
}

/// Every file of the checkout that git does not ignore, with its content's
/// hash (a file git tracks but that is gone is left out).
fn scan(root: &Path) -> Result<BTreeMap<String, Hash>, String> {
    let out = Command::new("git")
        .args([
            "ls-files",
            "-z",
            "--cached",
            "--others",
            "--exclude-standard",
        ])
        .current_dir(root)
        .output()
        .map_err(|e| format!("git ls-files: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "git ls-files in {} failed ({}): {}",
            root.display(),
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    let mut files = BTreeMap::new();
    for name in out.stdout.split(|b| *b == 0).filter(|n| !n.is_empty()) {
        let name = String::from_utf8_lossy(name).into_owned();
        if name.contains(['\t', '\n']) {
            return Err(format!("a file name with a tab or a line break: {name:?}"));
        }
        match fs::read(root.join(&name)) {
            Ok(bytes) => {
                files.insert(name, fnv1a(&bytes));
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            // A folder (a submodule): nothing cargo reads as a file.
            Err(e) if e.kind() == std::io::ErrorKind::IsADirectory => {}
            Err(e) => return Err(format!("{name}: {e}")),
        }
    }
    Ok(files)
}

fn fnv1a(bytes: &[u8]) -> Hash {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in bytes {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    (h, bytes.len() as u64)
}

fn modified(path: &Path) -> Option<SystemTime> {
    fs::metadata(path).and_then(|m| m.modified()).ok()
}

fn touch(path: &Path, at: SystemTime) -> Result<(), String> {
    OpenOptions::new()
        .write(true)
        .open(path)
        .and_then(|f| f.set_times(FileTimes::new().set_modified(at)))
        .map_err(|e| format!("setting the modification time of {}: {e}", path.display()))
}

/// The record: `# checkout PATH`, then one line per file, `HASH LENGTH
/// SINCE_NS PATH` separated by tabs. A missing or unreadable record is an
/// empty one (every file then differs).
fn read_record(path: &Path) -> Record {
    let mut record = Record::default();
    let Ok(text) = fs::read_to_string(path) else {
        return record;
    };
    for line in text.lines() {
        if let Some(c) = line.strip_prefix("# checkout ") {
            record.checkout = c.to_string();
            continue;
        }
        let f: Vec<&str> = line.splitn(4, '\t').collect();
        let [hash, len, since, name] = f[..] else {
            return Record::default();
        };
        let (Ok(hash), Ok(len), Ok(since)) = (
            u64::from_str_radix(hash, 16),
            len.parse::<u64>(),
            since.parse::<u64>(),
        ) else {
            return Record::default();
        };
        let since = UNIX_EPOCH + Duration::from_nanos(since);
        record.files.insert(name.to_string(), ((hash, len), since));
    }
    record
}

/// Writes the record whole (a new file renamed over the old one).
fn write_record(path: &Path, record: &Record) -> Result<(), String> {
    let mut text = format!("# checkout {}\n", record.checkout);
    for (name, ((hash, len), since)) in &record.files {
        let ns = since
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default()
            .as_nanos();
        text.push_str(&format!("{hash:016x}\t{len}\t{ns}\t{name}\n"));
    }
    let tmp = with_suffix(path, ".new");
    File::create(&tmp)
        .and_then(|mut f| f.write_all(text.as_bytes()))
        .and_then(|()| fs::rename(&tmp, path))
        .map_err(|e| format!("the record of sources {}: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::hold;
    use std::fs;
    use std::path::{Path, PathBuf};
    use std::process::Command;
    use std::time::{Duration, SystemTime};

    const DAY: Duration = Duration::from_secs(86_400);

    /// An empty folder of this test's own under the temporary folder.
    fn scratch(name: &str) -> PathBuf {
        let top = std::env::temp_dir().join(format!("snowmint-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&top);
        top
    }

    /// The crate's source, which prints `value`.
    fn write_main(dir: &Path, value: u32) -> PathBuf {
        let main = dir.join("src/main.rs");
        let text = format!("fn main() {{\n    println!(\"{value}\");\n}}\n");
        fs::write(&main, text).unwrap();
        main
    }

    /// A crate that prints `value`, in a git checkout of its own, its
    /// source's modification time `age` ago.
    fn checkout(dir: &Path, value: u32, age: Duration) {
        fs::create_dir_all(dir.join("src")).unwrap();
        fs::write(
            dir.join("Cargo.toml"),
            "[package]\nname = \"which\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[workspace]\n",
        )
        .unwrap();
        fs::write(dir.join(".gitignore"), "/target\n").unwrap();
        let main = write_main(dir, value);
        super::touch(&main, SystemTime::now() - age).unwrap();
        let init = Command::new("git")
            .args(["init", "-q"])
            .current_dir(dir)
            .status();
        assert!(init.unwrap().success());
    }

    /// Builds the checkout's crate into the build folder all share (as the
    /// release check does: rustc, no wrapper) and runs it.
    fn built_prints(dir: &Path, shared: &Path) -> String {
        let build = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
            .args(["build", "--quiet"])
            .current_dir(dir)
            .env("CARGO_BUILD_BUILD_DIR", shared)
            .env("CARGO_TARGET_DIR", dir.join("target"))
            .env("RUSTC_WORKSPACE_WRAPPER", "")
            .env_remove("RUSTFLAGS")
            .status()
            .unwrap();
        assert!(build.success());
        let out = Command::new(dir.join("target/debug/which"))
            .output()
            .unwrap();
        String::from_utf8(out.stdout).unwrap().trim().to_string()
    }

    /// A run in the checkout `dir`: the hold, the build, what it prints.
    fn run(dir: &Path, build: &Path) -> String {
        let held = hold(dir, build).unwrap();
        let printed = built_prints(dir, build);
        drop(held);
        printed
    }

    /// Three checkouts share a build folder: `a` holds one content, `b` and
    /// `e` another; `a` and `e` are older than every build. Without the
    /// record, cargo gives `a` b's build and `e` a's.
    #[test]
    fn a_checkout_never_runs_another_checkouts_build() {
        let top = scratch("sources");
        let (a, b, e) = (top.join("a"), top.join("b"), top.join("e"));
        checkout(&a, 1, 2 * DAY);
        checkout(&b, 2, Duration::ZERO);
        checkout(&e, 2, 3 * DAY);
        let build = top.join("build");

        assert_eq!(run(&b, &build), "2");
        // Another content: a's file is touched, so its build is new.
        assert_eq!(run(&a, &build), "1");
        // b's content again, not built: the record's `since` moves on.
        drop(hold(&b, &build).unwrap());
        // e has b's content, older than a's build: raised to `since`.
        assert_eq!(run(&e, &build), "2");
        let _ = fs::remove_dir_all(&top);
    }

    /// A file edited while its run builds: that run's build of it may hold
    /// either content, so a checkout of the content the run began with
    /// builds it again.
    #[test]
    fn a_file_changed_during_a_run_is_built_again() {
        let top = scratch("edited");
        let (b, e) = (top.join("b"), top.join("e"));
        checkout(&b, 2, Duration::ZERO);
        checkout(&e, 2, 3 * DAY);
        let build = top.join("build");
        let held = hold(&b, &build).unwrap();
        assert_eq!(built_prints(&b, &build), "2");
        write_main(&b, 3);
        assert_eq!(built_prints(&b, &build), "3");
        drop(held);
        assert_eq!(run(&e, &build), "2");
        let _ = fs::remove_dir_all(&top);
    }

    /// Checkouts of the same sources hold the record together; one of other
    /// sources waits until they have ended.
    #[test]
    fn runs_of_other_sources_take_turns() {
        let top = scratch("turns");
        let (a, b, c) = (top.join("a"), top.join("b"), top.join("c"));
        checkout(&a, 1, Duration::ZERO);
        checkout(&b, 2, Duration::ZERO);
        checkout(&c, 2, Duration::ZERO);
        let base = top.join("build");
        let first = hold(&b, &base).unwrap();
        let same = hold(&c, &base).unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        let waiter = {
            let (a, base) = (a.clone(), base.clone());
            std::thread::spawn(move || {
                let held = hold(&a, &base).unwrap();
                tx.send(()).unwrap();
                drop(held);
            })
        };
        assert!(rx.recv_timeout(Duration::from_millis(500)).is_err());
        drop(first);
        assert!(rx.recv_timeout(Duration::from_millis(300)).is_err());
        drop(same);
        rx.recv_timeout(Duration::from_secs(10)).unwrap();
        waiter.join().unwrap();
        let _ = fs::remove_dir_all(&top);
    }
}
