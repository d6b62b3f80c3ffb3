//! A simulated suspend: a running process's generator after the machine (or
//! its virtual machine) was suspended for 30 s.
//!
//! A suspend moves the wall clock and `CLOCK_BOOTTIME` on by the time
//! suspended and leaves `CLOCK_MONOTONIC` where it stopped. This test runs
//! itself as a child under `tests/data/clockshift.c` (an `LD_PRELOAD` shim
//! built with the C compiler, `cc` or `$CC`), which adds an offset read from
//! a file to exactly those two clocks. The child makes an ID before and after
//! the offset moves 30 s: the second ID's time must follow the wall clock.
//! With the monotonic clock under the system clock (as before snowmint used
//! `CLOCK_BOOTTIME`), it lags by the 30 s: old timestamps in new IDs, and a
//! lease's renewals refused as `hwm_too_far` until the process restarts.
#![cfg(any(target_os = "linux", target_os = "android"))]

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use snowmint::{Generator, Layout, Options};

const SUSPEND_S: u64 = 30;
const CHILD: &str = "SNOWMINT_SUSPEND_CHILD";

fn wall_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64
}

/// The child: one ID per line read from standard input, its time printed.
#[test]
fn suspend_child() {
    if std::env::var_os(CHILD).is_none() {
        return;
    }
    let layout = Layout::preset("twitter").unwrap();
    let nodes = layout
        .nodes_from_pairs([("datacenter", 3), ("worker", 5)])
        .unwrap();
    let g = Generator::new(layout, nodes, Options::default()).unwrap();
    let mut out = std::io::stdout();
    for line in std::io::stdin().lock().lines() {
        if line.unwrap().is_empty() {
            return;
        }
        let id = g.next_id().unwrap();
        let ms = layout.decompose(id).unwrap().timestamp_ms();
        writeln!(out, "id-ms {ms} wall-ms {}", wall_ms()).unwrap();
        out.flush().unwrap();
    }
}

/// Builds the shim into `dir`.
fn build_shim(dir: &Path) -> PathBuf {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/clockshift.c");
    let so = dir.join("clockshift.so");
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".to_string());
    let status = Command::new(&cc)
        .args(["-shared", "-fPIC", "-O2", "-Wall", "-Werror", "-o"])
        .arg(&so)
        .arg(&src)
        .status()
        .unwrap_or_else(|e| panic!("cannot run the C compiler {cc} (set CC): {e}"));
    assert!(status.success(), "{cc} could not build {}", src.display());
    so
}

#[test]
fn ids_follow_the_wall_clock_after_a_suspend() {
    if std::env::var_os(CHILD).is_some() {
        return;
    }
    let dir = std::env::temp_dir().join(format!("snowmint-suspend-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let so = build_shim(&dir);
    let offset = dir.join("offset");
    std::fs::write(&offset, "+0").unwrap();
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "suspend_child",
            "--nocapture",
            "--test-threads",
            "1",
        ])
        .env(CHILD, "1")
        .env("LD_PRELOAD", &so)
        .env("SNOWMINT_CLOCKSHIFT_FILE", &offset)
        .env("SNOWMINT_CLOCKSHIFT_SUSPEND", "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    // One ID: returns (the ID's time, the child's wall clock then).
    let mut ask = || -> (u64, u64) {
        writeln!(stdin, "id").unwrap();
        loop {
            let line = lines.next().expect("the child ended").unwrap();
            // (libtest may print "test suspend_child ... " before it.)
            if let Some((_, rest)) = line.split_once("id-ms ") {
                let (id, wall) = rest.split_once(" wall-ms ").unwrap();
                return (id.parse().unwrap(), wall.parse().unwrap());
            }
        }
    };
    let (before, wall_before) = ask();
    assert!(
        wall_before.abs_diff(before) < 1000,
        "{before} vs {wall_before}"
    );
    // The suspend: the child's wall and boot-time clocks jump 30 s; its
    // monotonic clock does not.
    // The parent asks until the child's wall clock has moved (every 20 ms,
    // for 10 s at most: a fixed wait would be a guess on a loaded machine),
    // then once more for the ID it checks (the ID that saw the move may have
    // been made just before it).
    std::fs::write(&offset, format!("+{SUSPEND_S}")).unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    while ask().1 < wall_before + SUSPEND_S * 1000 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_millis(20));
    let (after, wall_after) = ask();
    std::fs::write(&offset, "+0").ok();
    assert!(
        wall_after >= wall_before + SUSPEND_S * 1000,
        "the shim did not move the child's wall clock within 10 s: {wall_before} then {wall_after}"
    );
    assert!(
        after + 1000 >= wall_after,
        "after a {SUSPEND_S} s suspend the ID's time lags the wall clock by {} ms \
         (the system clock does not count the time suspended)",
        wall_after - after
    );
    assert!(after > before);
    drop(stdin);
    assert!(child.wait().unwrap().success());
    std::fs::remove_dir_all(&dir).ok();
}
