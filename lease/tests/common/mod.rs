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
