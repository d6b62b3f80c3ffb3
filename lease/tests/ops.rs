//! The operations (`snowmint_lease::ops`: init, list, release) on the file
//! store, in a fresh directory. Every wait is bounded.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use snowmint_lease::ops;
use snowmint_lease::SlotState;

use snowmint_lease_test_support::ops::*;

fn temp_dir(name: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("snowmint-ops-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

#[test]
fn file_store_operations() {
    let dir = temp_dir("scenario");
    let url = format!(
        "file:{}?namespace=ops&renew_ms=200&window_ms=1500",
        dir.display()
    );
    operations(&url, false);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn poisoned_slot_repaired() {
    let dir = temp_dir("repair");
    let url = format!(
        "file:{}?namespace=repair&renew_ms=200&window_ms=1500",
        dir.display()
    );
    repair(&url, false);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn missing_directory_lists_nothing_and_init_creates_it() {
    let dir = temp_dir("init");
    let url = format!("file:{}", dir.display());
    assert!(ops::list(&url).unwrap().spaces.is_empty());
    assert!(!dir.exists(), "list does not create the directory");
    assert_eq!(ops::init(&url).unwrap(), format!("file:{}", dir.display()));
    assert!(dir.is_dir());
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A child process killed when the test ends, even by a failed assertion.
struct KillOnDrop(std::process::Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn a_killed_holders_slot_is_free_and_left_alone() {
    // A holder in another process, killed: the kernel frees its lock, so the
    // slot is free at once (hwm kept) and release has nothing to do.
    let dir = temp_dir("crash");
    let url = format!("file:{}?namespace=crash", dir.display());
    let mut child = KillOnDrop(
        Command::new(env!("CARGO_BIN_EXE_snowmint-lease-probe"))
            .args([
                &url,
                "--fixed",
                "datacenter=1",
                "--until-error",
                "--interval-ms",
                "20",
            ])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let stdout = child.0.stdout.take().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let mut slot = None;
    let mut ids = 0;
    let deadline = Instant::now() + Duration::from_secs(10);
    while ids < 3 {
        let line = rx
            .recv_timeout(deadline.saturating_duration_since(Instant::now()))
            .expect("the probe prints its slot and IDs");
        if let Some(n) = line.strip_prefix("slot ") {
            slot = Some(n.parse::<u64>().unwrap());
        } else if line.starts_with("id ") {
            ids += 1;
        }
    }
    let slot = slot.unwrap();
    let l = ops::list(&url).unwrap();
    let rec = l.spaces[0].records.iter().find(|r| r.slot == slot).unwrap();
    assert_eq!(rec.state, SlotState::Held);
    assert_eq!(rec.expires_ms, None);
    let held_hwm = rec.hwm_ms;
    child.0.kill().unwrap();
    child.0.wait().unwrap();
    let l = ops::list(&url).unwrap();
    let rec = l.spaces[0].records.iter().find(|r| r.slot == slot).unwrap();
    assert_eq!(rec.state, SlotState::Free);
    assert!(rec.hwm_ms >= held_hwm);
    assert_eq!(ops::release(&url, None, slot, false).unwrap().before, None);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn unknown_store_and_bad_url_are_errors_with_codes() {
    let e = ops::list("consul://h:8500").unwrap_err();
    assert_eq!(e.code(), "invalid_option");
    // An unreadable directory is lease_unavailable (a file, not a directory).
    let file = temp_dir("notadir");
    std::fs::write(&file, "x").unwrap();
    let started = Instant::now();
    let e = ops::list(&format!("file:{}", file.display())).unwrap_err();
    assert_eq!(e.code(), "lease_unavailable", "{e}");
    assert!(started.elapsed() < Duration::from_secs(5));
    let e = ops::init(&format!("file:{}", file.display())).unwrap_err();
    assert_eq!(e.code(), "lease_unavailable", "{e}");
    std::fs::remove_file(&file).unwrap();
}
