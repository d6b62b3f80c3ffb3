//! Waiting for a child process, at most `LIMIT`: a test fails, never hangs.

use std::process::{Child, Command, Output, Stdio};
use std::sync::mpsc;
use std::time::Duration;

pub const LIMIT: Duration = Duration::from_secs(20);

/// Waits for `child` (its stdout and stderr piped) and collects its output;
/// kills it and panics after `LIMIT`.
pub fn finish(child: Child) -> Output {
    let pid = child.id();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || tx.send(child.wait_with_output()));
    match rx.recv_timeout(LIMIT) {
        Ok(out) => out.expect("wait for snowmint"),
        Err(_) => {
            // SAFETY: kill(2) on the child's pid; it has not been reaped (the
            // thread still waits for it).
            unsafe { libc::kill(pid as libc::pid_t, libc::SIGKILL) };
            panic!("snowmint (pid {pid}) still running after {LIMIT:?}: killed");
        }
    }
}

// Not every test file that includes this module uses it.
#[allow(dead_code)]
pub trait Bounded {
    /// Like `Command::output`, bounded by `LIMIT` (stdin as set, else inherited).
    fn bounded_output(&mut self) -> Output;
}

impl Bounded for Command {
    fn bounded_output(&mut self) -> Output {
        let child = self
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("run snowmint");
        finish(child)
    }
}
