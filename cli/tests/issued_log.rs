//! `generate --issued-log FILE`: every batch is appended to the record (one
//! line of decimal IDs) before it reaches stdout; a record that cannot be
//! written is an error, and those IDs are not written.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_snowmint");
const FIXED: [&str; 6] = [
    "--preset",
    "twitter",
    "--node",
    "datacenter=1",
    "--node",
    "worker=2",
];

fn temp(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("snowmint-cli-issued-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn generate(args: &[&str]) -> Output {
    Command::new(BIN)
        .arg("generate")
        .args(FIXED)
        .args(args)
        .output()
        .expect("run snowmint")
}

/// The record's lines, each a batch of IDs.
fn record(path: &Path) -> Vec<Vec<u64>> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| l.split(' ').map(|i| i.parse().unwrap()).collect())
        .collect()
}

fn stdout_ids(out: &Output) -> Vec<u64> {
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| l.parse().unwrap())
        .collect()
}

#[test]
fn the_record_holds_each_batch_and_is_appended_to() {
    let dir = temp("append");
    let path = dir.join("issued");
    let p = path.to_str().unwrap();
    let first = generate(&["-n", "5", "--issued-log", p]);
    assert!(first.status.success(), "{first:?}");
    let second = generate(&["-n", "3", "--issued-log", p]);
    assert!(second.status.success(), "{second:?}");
    assert_eq!(
        record(&path),
        vec![stdout_ids(&first), stdout_ids(&second)],
        "one line per batch, in order, appended"
    );
    // Another output form: the record stays decimal.
    let b = generate(&["-n", "2", "--format", "base62", "--issued-log", p]);
    assert!(b.status.success(), "{b:?}");
    assert_eq!(record(&path)[2].len(), 2);
    std::fs::remove_dir_all(&dir).ok();
}

/// With --on-demand on a lease: IDs read from stdout are in the record by
/// then (it was written first), and IDs a killed process never flushed
/// would be too.
#[test]
fn on_demand_ids_are_recorded_before_they_are_read() {
    let dir = temp("demand");
    let path = dir.join("issued");
    let url = format!("file:{}?namespace=issued", dir.join("leases").display());
    let mut child = Command::new(BIN)
        .args(["generate", "--preset", "twitter", "--node", "datacenter=1"])
        .args(["--lease", &url, "--on-demand", "--lease-lines"])
        .args(["--issued-log", path.to_str().unwrap()])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("run snowmint");
    let mut stdin = child.stdin.take().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut seen = Vec::new();
    for n in [4usize, 1, 7] {
        writeln!(stdin, "{n}").unwrap();
        let ids: Vec<u64> = (0..n)
            .map(|_| lines.next().unwrap().unwrap().parse().unwrap())
            .collect();
        assert!(lines.next().unwrap().unwrap().starts_with("{\"lease\""));
        seen.push(ids);
        // Read while the process still runs: the record already has them.
        assert_eq!(record(&path), seen);
    }
    child.kill().unwrap();
    child.wait().unwrap();
    std::fs::remove_dir_all(&dir).ok();
}

/// A record that cannot be written (a full disk: /dev/full) fails the
/// command before any ID reaches stdout; one that cannot be opened fails it
/// before a lease is taken.
#[test]
fn a_failed_record_hands_out_nothing() {
    let out = generate(&["-n", "5", "--issued-log", "/dev/full"]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(
        out.stdout.is_empty(),
        "IDs written without a record: {out:?}"
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--issued-log /dev/full"), "{err}");

    let dir = temp("fail");
    let url = format!("file:{}?namespace=issued", dir.join("leases").display());
    let out = Command::new(BIN)
        .args(["generate", "--preset", "twitter", "--node", "datacenter=1"])
        .args(["--lease", &url, "-n", "1"])
        .args(["--issued-log", dir.to_str().unwrap()]) // a directory
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(out.stdout.is_empty());
    assert!(!dir.join("leases").exists(), "a lease was taken");
    std::fs::remove_dir_all(&dir).ok();
}
