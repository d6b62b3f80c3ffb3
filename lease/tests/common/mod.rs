//! What the process-level lease tests share: the probe binary driven as a
//! child process, and reading its output. Every wait is bounded.
#![allow(dead_code)] // each test file uses some of it

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use snowmint::Layout;

pub const PROBE: &str = env!("CARGO_BIN_EXE_snowmint-lease-probe");

pub fn twitter() -> Layout {
    Layout::preset("twitter").unwrap()
}

/// A fresh directory under the system's temporary directory.
pub fn temp_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("snowmint-lease-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// A running probe whose output lines are collected as they come.
pub struct Probe {
    pub child: Child,
    lines: Arc<Mutex<Vec<String>>>,
    reader: Option<JoinHandle<()>>,
}

impl Probe {
    pub fn spawn(url: &str, args: &[&str]) -> Probe {
        Self::spawn_cmd(Command::new(PROBE), url, args)
    }

    pub fn spawn_cmd(mut cmd: Command, url: &str, args: &[&str]) -> Probe {
        let mut child = cmd
            .arg(url)
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("spawn the probe");
        let out = child.stdout.take().unwrap();
        let lines = Arc::new(Mutex::new(Vec::new()));
        let l = Arc::clone(&lines);
        let reader = std::thread::spawn(move || {
            for line in BufReader::new(out).lines() {
                l.lock().unwrap().push(line.unwrap());
            }
        });
        Probe {
            child,
            lines,
            reader: Some(reader),
        }
    }

    pub fn lines(&self) -> Vec<String> {
        self.lines.lock().unwrap().clone()
    }

    /// Waits (at most `secs`) until `cond` holds for the output so far or the
    /// process has ended.
    pub fn wait_for(&mut self, secs: u64, cond: impl Fn(&[String]) -> bool) {
        let deadline = Instant::now() + Duration::from_secs(secs);
        while !cond(&self.lines()) {
            if self.child.try_wait().unwrap().is_some() {
                // Let the reader drain the pipe.
                self.reader.take().map(|r| r.join());
                return;
            }
            assert!(
                Instant::now() < deadline,
                "probe timed out: {:?}",
                self.tail()
            );
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    /// Waits (at most `secs`) for the process to exit; returns its output.
    pub fn finish(mut self, secs: u64) -> Vec<String> {
        let deadline = Instant::now() + Duration::from_secs(secs);
        while self.child.try_wait().unwrap().is_none() {
            if Instant::now() > deadline {
                let _ = self.child.kill();
                panic!("probe did not exit in {secs} s: {:?}", self.tail());
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        self.reader.take().map(|r| r.join());
        self.lines()
    }

    /// As [`finish`](Self::finish), with the exit code.
    pub fn finish_status(mut self, secs: u64) -> (Option<i32>, Vec<String>) {
        self.wait_for(secs, |_| false);
        let code = self.child.wait().unwrap().code();
        (code, self.lines())
    }

    /// SIGKILL, then the output it had written.
    pub fn kill(mut self) -> Vec<String> {
        self.child.kill().unwrap();
        self.child.wait().unwrap();
        self.reader.take().map(|r| r.join());
        self.lines()
    }

    pub fn tail(&self) -> Vec<String> {
        let l = self.lines();
        l[l.len().saturating_sub(5)..].to_vec()
    }
}

pub fn ids(lines: &[String]) -> Vec<u64> {
    lines
        .iter()
        .filter_map(|l| l.strip_prefix("id "))
        .map(|v| v.parse().unwrap())
        .collect()
}

pub fn value(lines: &[String], key: &str) -> Option<u64> {
    lines
        .iter()
        .find_map(|l| l.strip_prefix(key)?.strip_prefix(' ')?.parse().ok())
}

pub fn errors(lines: &[String]) -> Vec<&str> {
    lines
        .iter()
        .filter_map(|l| l.strip_prefix("error "))
        .collect()
}

pub fn time_of(id: u64) -> u64 {
    twitter().decompose(id).unwrap().timestamp_ms()
}

/// Every store's many-holders test: 40 probes claim from one 5-bit field of
/// `url` at once and hold until all have answered. Exactly 32 hold distinct
/// slots (exit 0, 50 IDs each with their node values, released); the other
/// 8 exit with status 2 and `lease_unavailable` ("all 32 slots are held");
/// every ID is distinct. `name` names the scratch directory.
pub fn forty_processes_thirty_two_slots(url: &str, name: &str) {
    use std::collections::HashSet;
    let dir = temp_dir(name);
    let go = dir.join("go");
    let go_arg = go.display().to_string();
    let mut probes: Vec<Probe> = (0..40)
        .map(|_| {
            Probe::spawn(
                url,
                &[
                    "--fixed",
                    "datacenter=1",
                    "--count",
                    "50",
                    "--hold-until-file",
                    &go_arg,
                ],
            )
        })
        .collect();
    // Every probe either holds a slot with its IDs issued, or has given up.
    for p in &mut probes {
        p.wait_for(40, |l| l.iter().any(|x| x.starts_with("hwm ")));
    }
    std::fs::write(&go, "").unwrap();
    let outputs: Vec<(Option<i32>, Vec<String>)> =
        probes.into_iter().map(|p| p.finish_status(30)).collect();
    let mut slots = HashSet::new();
    let mut all = HashSet::new();
    let mut refused = 0;
    for (code, out) in &outputs {
        match value(out, "slot") {
            Some(slot) => {
                assert_eq!(*code, Some(0), "{out:?}");
                assert!(slots.insert(slot), "slot {slot} given twice");
                let got = ids(out);
                assert_eq!(got.len(), 50, "{out:?}");
                for id in got {
                    assert_eq!(twitter().decompose(id).unwrap().nodes(), &[1, slot]);
                    assert!(all.insert(id), "duplicate ID {id}");
                }
                assert!(out.iter().any(|l| l == "closed"), "{out:?}");
            }
            None => {
                assert_eq!(*code, Some(2), "{out:?}");
                let e = errors(out);
                assert_eq!(e.len(), 1, "{out:?}");
                assert!(e[0].starts_with("lease_unavailable "), "{e:?}");
                assert!(e[0].contains("all 32 slots are held"), "{e:?}");
                refused += 1;
            }
        }
    }
    assert_eq!(slots, (0..32).collect::<HashSet<u64>>());
    assert_eq!(refused, 8);
    assert_eq!(all.len(), 32 * 50);
    std::fs::remove_dir_all(&dir).unwrap();
}
