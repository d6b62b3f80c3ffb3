//! What the lease crate's store and process tests share (the crate
//! `snowmint-lease-test-support`, a dev-dependency of `snowmint-lease`): the
//! probe binary driven as a child process and reading its output, the
//! scenarios every store runs, and the suites a store's test file
//! instantiates with one macro line each ([`contract_suite!`],
//! [`fault_suite!`], [`sql_suite!`]) for its [`Subject`]. Every wait is
//! bounded.
// Test support: its types are never printed by a user.
#![allow(missing_debug_implementations)]

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex, OnceLock};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use snowmint::Layout;

pub mod contract;
pub mod faults;
pub mod ops;
pub mod proxy;
pub mod rate;
pub mod restore;
pub mod scenarios;
#[cfg(any(feature = "postgres", feature = "mysql"))]
pub mod sql;
mod subject;
pub mod suite;
mod suites;

pub use proxy::{Dir, Flow, Proxy};
pub use scenarios::now_ms;
pub use subject::{record, unique_ns, Subject};

/// The probe binary (`snowmint-lease-probe`): only the lease crate's own
/// tests know its path (`env!("CARGO_BIN_EXE_snowmint-lease-probe")`), so
/// each test names it with [`use_probe`] before a [`Probe`] is spawned (the
/// suites' macros do it for theirs).
static PROBE: OnceLock<&'static str> = OnceLock::new();

/// Names the probe binary for this test process (see [`PROBE`]); the same
/// path again is fine.
pub fn use_probe(path: &'static str) {
    let set = PROBE.get_or_init(|| path);
    assert_eq!(*set, path, "another probe binary named before");
}

/// The probe binary named by [`use_probe`].
pub fn probe() -> &'static str {
    PROBE.get().expect(
        "no probe binary named: call use_probe(env!(\"CARGO_BIN_EXE_snowmint-lease-probe\")) first",
    )
}

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
        Self::spawn_cmd(Command::new(probe()), url, args)
    }

    /// A holder on `url` with datacenter 1, issuing an ID every millisecond
    /// until its first error.
    pub fn holder(url: &str) -> Probe {
        let args = "--fixed datacenter=1 --until-error --interval-ms 1";
        Self::spawn(url, &args.split(' ').collect::<Vec<_>>())
    }

    pub fn spawn_cmd(mut cmd: Command, url: &str, args: &[&str]) -> Probe {
        cmd.arg(url).args(args);
        Self::spawn_command(cmd)
    }

    /// Any command whose output is read as a probe's.
    pub fn spawn_command(mut cmd: Command) -> Probe {
        let mut child = cmd
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
