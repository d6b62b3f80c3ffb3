//! The lease protocol with real processes on a real directory: many
//! claimers, a holder killed and replaced (clock on time and behind), a store
//! that stops accepting writes, a skewed clock. Every wait is bounded.

use std::path::{Path, PathBuf};

use std::process::Command;

use snowmint_lease_test_support::scenarios;
use snowmint_lease_test_support::*;

const PROBE: &str = env!("CARGO_BIN_EXE_snowmint-lease-probe");

/// The one space directory (`v1-...`) of a store directory.
fn space_dir(store: &Path) -> PathBuf {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(store)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.file_name().unwrap().to_str().unwrap().starts_with("v1-"))
        .collect();
    assert_eq!(dirs.len(), 1, "{dirs:?}");
    dirs.pop().unwrap()
}

/// `hwm_ms` of a slot's state file.
fn stored_hwm(store: &Path, slot: u64) -> u64 {
    let text = std::fs::read_to_string(space_dir(store).join(format!("{slot}.state"))).unwrap();
    text.lines()
        .find_map(|l| l.strip_prefix("hwm_ms="))
        .unwrap()
        .parse()
        .unwrap()
}

#[test]
fn forty_processes_thirty_two_slots() {
    use_probe(PROBE);
    let dir = temp_dir("forty");
    let url = format!("file:{}?namespace=forty", dir.join("store").display());
    scenarios::forty_processes_thirty_two_slots(&url, "forty-run");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A holder killed with SIGKILL mid-stream, replaced by one on the same slot
/// whose clock is `offset_ms` off: it issues only IDs above every ID the
/// killed one issued (and above the stored hwm).
fn kill_and_replace(name: &str, offset_ms: i64) {
    let dir = temp_dir(name);
    let store = dir.join("store");
    let url = format!(
        "file:{}?namespace={name}&renew_ms=200&window_ms=1000&max_skew_ms=3000",
        store.display()
    );
    let mut a = Probe::holder(&url);
    a.wait_for(20, |l| ids(l).len() >= 300);
    let a_out = a.kill();
    let slot = value(&a_out, "slot").unwrap();
    let a_ids = ids(&a_out);
    assert!(a_ids.len() >= 300, "{a_out:?}");
    assert!(errors(&a_out).is_empty(), "{a_out:?}");
    let a_max = *a_ids.iter().max().unwrap();
    // What the store confirmed covers everything A issued.
    let hwm = stored_hwm(&store, slot);
    assert!(time_of(a_max) <= hwm);

    let offset = offset_ms.to_string();
    let prefer = slot.to_string();
    let b_out = Probe::spawn(
        &url,
        &[
            "--fixed",
            "datacenter=1",
            "--prefer",
            &prefer,
            "--count",
            "200",
            "--clock-offset-ms",
            &offset,
            "--clock-backwards",
            "wait:10000",
        ],
    )
    .finish(20);
    assert_eq!(value(&b_out, "slot"), Some(slot), "{b_out:?}");
    assert!(errors(&b_out).is_empty(), "{b_out:?}");
    let b_ids = ids(&b_out);
    assert_eq!(b_ids.len(), 200);
    let b_min = *b_ids.iter().min().unwrap();
    assert!(b_min > a_max, "replacement issued {b_min} <= {a_max}");
    assert!(
        time_of(b_min) > hwm,
        "replacement started inside the old hwm"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn killed_holder_replaced() {
    use_probe(PROBE);
    kill_and_replace("kill", 0);
}

#[test]
fn killed_holder_replaced_by_a_clock_behind() {
    use_probe(PROBE);
    kill_and_replace("kill-behind", -1500);
}

/// A holder whose slot another holder takes (its lock file removed, then the
/// slot claimed again) stops at once, long before its reservation ends, and
/// the new holder issues only above it.
#[test]
fn holder_that_lost_its_slot_stops_at_once() {
    use_probe(PROBE);
    let dir = temp_dir("lost");
    let store = dir.join("store");
    let url = format!(
        "file:{}?namespace=lost&renew_ms=50&window_ms=3000",
        store.display()
    );
    let mut a = Probe::holder(&url);
    a.wait_for(20, |l| ids(l).len() >= 50);
    let slot = value(&a.lines(), "slot").unwrap();
    std::fs::remove_file(space_dir(&store).join(format!("{slot}.lock"))).unwrap();
    let prefer = slot.to_string();
    let b = Probe::spawn(
        &url,
        &[
            "--fixed",
            "datacenter=1",
            "--prefer",
            &prefer,
            "--count",
            "20",
            "--clock-backwards",
            "wait:10000",
        ],
    );
    let a_out = a.finish(20);
    let b_out = b.finish(20);
    let e = errors(&a_out);
    assert!(
        e.len() == 1 && e[0].starts_with("lease_expired "),
        "{a_out:?}"
    );
    let a_last = time_of(*ids(&a_out).iter().max().unwrap());
    let end = value(&a_out, "reserved_end").unwrap();
    assert_eq!(end, twitter().epoch_ms(), "stopped, not just expired");
    // It stopped within a few renewals, seconds before its last confirmed hwm.
    let hwm = value(&a_out, "hwm").unwrap();
    assert!(a_last + 1500 < hwm, "A issued until {a_last}, hwm {hwm}");
    assert_eq!(value(&b_out, "slot"), Some(slot), "{b_out:?}");
    assert!(errors(&b_out).is_empty(), "{b_out:?}");
    let a_max = *ids(&a_out).iter().max().unwrap();
    assert!(ids(&b_out).iter().all(|&id| id > a_max));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn clock_skew_refused_at_claim() {
    use_probe(PROBE);
    let dir = temp_dir("skew");
    scenarios::clock_skew(&format!("file:{}", dir.display()), "skew");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The crash test every store runs (`scenarios::crash`): here the slot is free
/// at once, the `hwm` still holds the next holder back.
#[test]
fn killed_holder_common_scenario() {
    use_probe(PROBE);
    let dir = temp_dir("crash");
    scenarios::crash(&format!("file:{}", dir.display()), "crash", false, &|| {});
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The store stops accepting writes (its directory made read-only) while a
/// holder issues IDs: the holder goes on up to its confirmed reservation,
/// then fails with lease_expired, and never issues above it.
#[test]
fn unwritable_store_expires_the_reservation() {
    use_probe(PROBE);
    let dir = temp_dir("readonly");
    let store = dir.join("store");
    std::fs::create_dir_all(&store).unwrap();
    let url = format!(
        "file:{}?namespace=ro&renew_ms=100&window_ms=800",
        store.display()
    );
    let args = [
        "--fixed",
        "datacenter=1",
        "--until-error",
        "--interval-ms",
        "1",
    ];
    // Root ignores permissions: run the probe as nobody (65534) then.
    // SAFETY: geteuid(2) has no preconditions and cannot fail.
    let root = unsafe { libc::geteuid() } == 0;
    let mut p = if root {
        let c = std::ffi::CString::new(store.display().to_string()).unwrap();
        // SAFETY: c is a NUL-terminated path; chown(2) reads it only.
        assert_eq!(unsafe { libc::chown(c.as_ptr(), 65534, 65534) }, 0);
        let mut cmd = Command::new("setpriv");
        cmd.args(["--reuid=65534", "--regid=65534", "--clear-groups", PROBE]);
        Probe::spawn_cmd(cmd, &url, &args)
    } else {
        Probe::spawn(&url, &args)
    };
    p.wait_for(20, |l| ids(l).len() >= 100);
    let sdir = space_dir(&store);
    set_mode(&sdir, 0o555);
    let readonly_at = snowmint::SystemClock.precise_ms();
    let out = p.finish(20);
    set_mode(&sdir, 0o755);

    let slot = value(&out, "slot").unwrap();
    let e = errors(&out);
    assert!(e[0].starts_with("lease_expired "), "{out:?}");
    // The release could not be written either.
    assert!(
        e.len() == 2 && e[1].starts_with("lease_unavailable "),
        "{e:?}"
    );
    let end = value(&out, "reserved_end").unwrap();
    let hwm = stored_hwm(&store, slot);
    assert_eq!(end, hwm + 1, "the reservation is the stored hwm's unit");
    let times: Vec<u64> = ids(&out).into_iter().map(time_of).collect();
    let last = *times.iter().max().unwrap();
    assert!(last <= hwm, "issued {last} above the confirmed hwm {hwm}");
    // It kept issuing after the store stopped accepting writes, up to the end.
    assert!(last + 300 >= hwm, "stopped early: last {last}, hwm {hwm}");
    assert!(
        hwm > readonly_at,
        "the test made the store read-only too late"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A store directory that cannot be made is refused with the OS error and
/// the path ("the store cannot keep leases safe as configured"), never "the
/// store did not answer in time": permission denied (as root: the probe
/// runs as nobody), a path through a file, and (as root) a read-only mount.
#[test]
fn an_unusable_store_directory_names_the_os_error_and_path() {
    use_probe(PROBE);
    let dir = temp_dir("oserror");
    let check = |out: (Option<i32>, Vec<String>), path: &Path, os: &str| {
        let e = refusal(&out);
        assert!(
            e.contains(&format!("cannot create {}: {os}", path.display())),
            "{e}"
        );
        assert!(
            e.contains("the store cannot keep leases safe as configured"),
            "{e}"
        );
        assert!(!e.contains("did not answer in time"), "{e}");
    };
    let args = ["--fixed", "datacenter=1", "--count", "3"];
    let url = |p: &Path| format!("file:{}?namespace=oserror", p.display());

    // EACCES: a directory this user may not write.
    let locked = dir.join("locked");
    std::fs::create_dir_all(&locked).unwrap();
    set_mode(&locked, 0o555);
    let store = locked.join("store");
    let out = if euid() == 0 {
        let mut cmd = Command::new("setpriv");
        cmd.args(["--reuid=65534", "--regid=65534", "--clear-groups", PROBE]);
        Probe::spawn_cmd(cmd, &url(&store), &args).finish_status(20)
    } else {
        Probe::spawn(&url(&store), &args).finish_status(20)
    };
    check(out, &store, "Permission denied (os error 13)");
    set_mode(&locked, 0o755);

    // ENOTDIR: a path through a regular file.
    let file = dir.join("a-file");
    std::fs::write(&file, "not a directory").unwrap();
    let store = file.join("store");
    let out = Probe::spawn(&url(&store), &args).finish_status(20);
    check(out, &store, "Not a directory (os error 20)");

    // EROFS: a read-only tmpfs (root only).
    let ro = dir.join("ro");
    std::fs::create_dir_all(&ro).unwrap();
    let mounted = euid() == 0
        && Command::new("mount")
            .args(["-t", "tmpfs", "-o", "ro,size=1m", "tmpfs"])
            .arg(&ro)
            .status()
            .is_ok_and(|s| s.success());
    if mounted {
        let store = ro.join("store");
        let out = Probe::spawn(&url(&store), &args).finish_status(20);
        let _ = Command::new("umount").arg(&ro).status();
        check(out, &store, "Read-only file system (os error 30)");
    } else {
        eprintln!("no read-only mount here (needs root): EROFS not tried");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

fn set_mode(path: &Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

/// A probe with no `HOME` and `XDG_STATE_HOME` set to `state`: plain `file`
/// leases from `<state>/snowmint/leases`. Its exit code and output.
fn default_dir_probe(state: &Path, query: &str) -> (Option<i32>, Vec<String>) {
    let mut cmd = Command::new(PROBE);
    cmd.env_remove("HOME").env("XDG_STATE_HOME", state);
    Probe::spawn_cmd(
        cmd,
        &format!("file?namespace=dflt{query}"),
        &["--fixed", "datacenter=1", "--count", "3"],
    )
    .finish_status(20)
}

/// A probe leasing from `url` with no `HOME` and no `XDG_STATE_HOME`, whose
/// temporary directory is `tmp`.
fn homeless_probe(tmp: &Path, url: &str) -> (Option<i32>, Vec<String>) {
    let mut cmd = Command::new(PROBE);
    cmd.env_remove("HOME")
        .env_remove("XDG_STATE_HOME")
        .env("TMPDIR", tmp);
    Probe::spawn_cmd(cmd, url, &["--fixed", "datacenter=1", "--count", "3"]).finish_status(20)
}

/// Without `HOME` and `XDG_STATE_HOME`, plain `file` has no default: the
/// temporary directory it fell back to may be private to the process
/// (systemd's PrivateTmp, a container's /tmp), where every instance takes
/// slot 0. Refused, nothing created there; a directory the URL names works.
#[test]
fn without_home_the_default_directory_is_refused() {
    use_probe(PROBE);
    let dir = temp_dir("homeless");
    std::fs::create_dir_all(&dir).unwrap();
    let e = refusal(&homeless_probe(&dir, "file?namespace=dflt"));
    assert!(
        e.contains("no default directory without XDG_STATE_HOME or HOME"),
        "{e}"
    );
    assert!(e.contains("file:/path"), "{e}");
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0);
    // Named in the URL: the user's choice, accepted.
    let named = format!("file:{}?namespace=named", dir.join("named").display());
    let out = homeless_probe(&dir, &named);
    assert_eq!(out.0, Some(0), "{out:?}");
    assert_eq!(ids(&out.1).len(), 3);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// On overlayfs (a container's own layer) the default directory is refused
/// unless the URL says `allow_fs=overlay`; a directory the URL names is
/// accepted there. Needs root to mount an overlay: not tried otherwise.
#[test]
fn the_default_directory_on_overlayfs_is_refused() {
    use_probe(PROBE);
    let dir = temp_dir("overlay");
    let (lower, upper, work, merged) = (
        dir.join("lower"),
        dir.join("upper"),
        dir.join("work"),
        dir.join("merged"),
    );
    for d in [&lower, &upper, &work, &merged] {
        std::fs::create_dir_all(d).unwrap();
    }
    let mounted = euid() == 0
        && Command::new("mount")
            .args(["-t", "overlay", "overlay", "-o"])
            .arg(format!(
                "lowerdir={},upperdir={},workdir={}",
                lower.display(),
                upper.display(),
                work.display()
            ))
            .arg(&merged)
            .status()
            .is_ok_and(|s| s.success());
    if !mounted {
        eprintln!("no overlay mount here (needs root): not tried");
        std::fs::remove_dir_all(&dir).unwrap();
        return;
    }
    struct Unmount(PathBuf);
    impl Drop for Unmount {
        fn drop(&mut self) {
            let _ = Command::new("umount").arg(&self.0).status();
        }
    }
    let guard = Unmount(merged.clone());
    let e = refusal(&default_dir_probe(&merged, ""));
    assert!(e.contains("is on overlay, a container's own layer"), "{e}");
    assert!(e.contains("file:/path"), "{e}");
    let out = default_dir_probe(&merged, "&allow_fs=overlay");
    assert_eq!(out.0, Some(0), "{out:?}");
    let named = format!("file:{}?namespace=named", merged.join("named").display());
    let out = Probe::spawn(&named, &["--fixed", "datacenter=1", "--count", "3"]).finish_status(20);
    assert_eq!(out.0, Some(0), "{out:?}");
    drop(guard);
    std::fs::remove_dir_all(&dir).unwrap();
}

fn euid() -> u32 {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() }
}

/// The refusal a probe printed (`error lease_unavailable ...`).
fn refusal(out: &(Option<i32>, Vec<String>)) -> String {
    assert_eq!(out.0, Some(2), "{out:?}");
    let e = errors(&out.1);
    assert!(
        e.len() == 1 && e[0].starts_with("lease_unavailable "),
        "{out:?}"
    );
    e[0].to_string()
}

/// The default directory is created 0700, and refused when another user
/// could have prepared it: a link in its place, owned by another user (as
/// root: chowned to nobody), or writable by others (0777) or its group.
#[test]
fn the_default_directory_is_private() {
    use_probe(PROBE);
    use std::os::unix::fs::MetadataExt;
    let dir = temp_dir("fallback");
    let fallback = dir.join("snowmint").join("leases");
    let out = default_dir_probe(&dir, "");
    assert_eq!(out.0, Some(0), "{out:?}");
    assert_eq!(ids(&out.1).len(), 3);
    let m = std::fs::symlink_metadata(&fallback).unwrap();
    assert!(m.is_dir());
    assert_eq!(m.mode() & 0o7777, 0o700);

    // 0770 or 0777: another user could replace its state files.
    for mode in [0o770, 0o777] {
        set_mode(&fallback, mode);
        let e = refusal(&default_dir_probe(&dir, ""));
        assert!(
            e.contains(&format!(
                "the default directory {} may be written by its group or others (mode {mode:o}): refused",
                fallback.display()
            )),
            "{e}"
        );
    }
    set_mode(&fallback, 0o700);

    // A link planted in its place, to a directory of the planter's.
    let real = dir.join("real");
    std::fs::rename(&fallback, &real).unwrap();
    std::os::unix::fs::symlink(&real, &fallback).unwrap();
    let e = refusal(&default_dir_probe(&dir, ""));
    assert!(e.contains("is a symbolic link: refused"), "{e}");
    std::fs::remove_file(&fallback).unwrap();
    std::fs::rename(&real, &fallback).unwrap();

    // Owned by another user.
    if euid() == 0 {
        let c = std::ffi::CString::new(fallback.display().to_string()).unwrap();
        // SAFETY: a valid C string.
        assert_eq!(unsafe { libc::chown(c.as_ptr(), 65534, 65534) }, 0);
        let e = refusal(&default_dir_probe(&dir, ""));
        assert!(
            e.contains("belongs to uid 65534, not to this user (0): refused"),
            "{e}"
        );
        // SAFETY: c is a NUL-terminated path; chown(2) reads it only.
        assert_eq!(unsafe { libc::chown(c.as_ptr(), 0, 0) }, 0);
    } else {
        eprintln!("not root: a fallback directory of another user is not tried");
    }
    // Private again: accepted.
    assert_eq!(default_dir_probe(&dir, "").0, Some(0));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// On tmpfs (wiped at reboot) the default directory is refused unless the
/// URL says `allow_fs=tmpfs`; a directory the URL names is accepted there.
#[test]
fn the_default_directory_on_tmpfs_is_refused() {
    use_probe(PROBE);
    let shm = Path::new("/dev/shm");
    let tmpfs = std::process::Command::new("stat")
        .args(["-f", "-c", "%T", "/dev/shm"])
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "tmpfs");
    if !tmpfs {
        eprintln!("/dev/shm is not tmpfs here: not tried");
        return;
    }
    let dir = shm.join(format!("snowmint-lease-tmpfs-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let e = refusal(&default_dir_probe(&dir, ""));
    assert!(
        e.contains("is on tmpfs, which forgets every hwm at reboot"),
        "{e}"
    );
    assert!(e.contains("add allow_fs=tmpfs to the URL"), "{e}");
    let out = default_dir_probe(&dir, "&allow_fs=tmpfs");
    assert_eq!(out.0, Some(0), "{out:?}");
    // Another filesystem's opt-out does not accept tmpfs.
    refusal(&default_dir_probe(&dir, "&allow_fs=nfs"));
    // Named in the URL: the user's choice, accepted.
    let named = format!("file:{}?namespace=named", dir.join("named").display());
    let out = Probe::spawn(&named, &["--fixed", "datacenter=1", "--count", "3"]).finish_status(20);
    assert_eq!(out.0, Some(0), "{out:?}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A FUSE mount (bindfs of a local directory) unmounted when dropped.
struct FuseMount(PathBuf);

impl FuseMount {
    /// `src` mounted on `mnt`, or `None` if bindfs or FUSE is missing here.
    fn bind(src: &Path, mnt: &Path) -> Option<FuseMount> {
        let ok = Command::new("timeout")
            .args(["10", "bindfs", "--no-allow-other"])
            .arg(src)
            .arg(mnt)
            .status()
            .is_ok_and(|s| s.success());
        ok.then(|| FuseMount(mnt.to_path_buf()))
    }
}

impl Drop for FuseMount {
    fn drop(&mut self) {
        let _ = Command::new("timeout")
            .args(["10", "umount"])
            .arg(&self.0)
            .status();
    }
}

/// A store directory on FUSE (here bindfs; sshfs, GlusterFS, s3fs report the
/// same type) is refused, naming the filesystem, unless the URL accepts it
/// with `allow_fs=fuse`.
#[test]
fn a_fuse_directory_is_refused_by_name() {
    use_probe(PROBE);
    let dir = temp_dir("fuse");
    let (src, mnt) = (dir.join("src"), dir.join("mnt"));
    std::fs::create_dir_all(&src).unwrap();
    std::fs::create_dir_all(&mnt).unwrap();
    let Some(mount) = FuseMount::bind(&src, &mnt) else {
        eprintln!("bindfs or FUSE is not available here: not tried (apt-get install bindfs)");
        return;
    };
    let args = ["--fixed", "datacenter=1", "--count", "3"];
    let url = format!("file:{}?namespace=fuse", mnt.display());
    let e = refusal(&Probe::spawn(&url, &args).finish_status(20));
    assert!(
        e.contains("is on fuse, a network, cluster or FUSE filesystem"),
        "{e}"
    );
    assert!(e.contains("allow_fs=fuse in the URL accepts it"), "{e}");
    let out = Probe::spawn(&format!("{url}&allow_fs=fuse"), &args).finish_status(20);
    assert_eq!(out.0, Some(0), "{out:?}");
    assert_eq!(ids(&out.1).len(), 3);
    drop(mount);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn hwm_too_far_is_refused() {
    use_probe(PROBE);
    let dir = temp_dir("toofar");
    scenarios::hwm_too_far_is_refused(&format!("file:{}", dir.display()), "toofar");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The first claimers of a new store directory, as processes started at
/// once: every one gets its lease. (Between a claimer's failed open of the
/// new space's `space.lock` and its creating open, another could create the
/// file; the claim then failed with "cannot open .../space.lock: No such file
/// or directory".)
#[test]
fn first_claims_of_a_new_directory_all_succeed() {
    use_probe(PROBE);
    const PROCESSES: usize = 12;
    let dir = temp_dir("first-claims");
    for trial in 0..60 {
        let url = format!("file:{}", dir.join(format!("store-{trial}")).display());
        // Each probe waits for the same moment to claim.
        let start = (std::time::SystemTime::now() + std::time::Duration::from_millis(60))
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_millis()
            .to_string();
        let probes: Vec<_> = (0..PROCESSES)
            .map(|_| {
                Command::new(PROBE)
                    .args([url.as_str(), "--fixed", "datacenter=3", "--count", "1"])
                    .args(["--start-at-ms", start.as_str()])
                    .stdout(std::process::Stdio::piped())
                    .stderr(std::process::Stdio::piped())
                    .spawn()
                    .unwrap()
            })
            .collect();
        for p in probes {
            let out = p.wait_with_output().unwrap();
            assert!(
                out.status.success(),
                "trial {trial}: a first claim failed: {}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
